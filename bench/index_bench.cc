// SPDX-License-Identifier: Apache-2.0
// Random access and shuffled reading on an existing dataset (e.g. one made by
// `sedpack generate configs/generate_tinyaes.json DIR`):
//   - random fetches per second by example number, 1 and 2 threads, with the
//     shard cache off and on;
//   - a full pass in sequential order (ExampleReader) and a full pass in the
//     elastic shuffled order (ElasticReader), same run, and their ratio.
//
//   sedpack_bench_index DATASET [--split S] [--seconds T] [--cache-mb M]
//                       [--shards-per-block K] [--prefetch P] [--repeat R]
//                       [--no-verify] [--whole-shard] [--fetch-only] [--verify-modes]
//
// --no-verify reads without checking hashes (fetches with the cache off then
// read one example by positioned reads from uncompressed fb shards);
// --whole-shard makes such fetches read and decode whole shards as verified
// ones do (FetchOptions::positioned_reads = false), for comparison;
// --fetch-only skips the full passes.
// --verify-modes compares, in one run, fetches (cache off, one thread) and
// sequential passes unverified, verified (through the checks sidecar when it
// is fresh) and strict (the recorded hashes), with the verified/unverified
// ratios.
//
// Fetch rates run for T seconds each (default 3). Pass throughputs are the best
// and the median of R passes (default 3), sequential and shuffled passes alternating so that
// both see the same machine. Every example's values are touched (one byte per
// 4 KiB and the sizes summed) so that no pass can skip work.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "sedpack/dataset/reader.h"
#include "sedpack/index/fetch.h"
#include "sedpack/index/index.h"
#include "touch.h"
#include "sedpack/index/order.h"

namespace {

using Clock = std::chrono::steady_clock;

double Seconds(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

template <typename T>
T Check(sedpack::Result<T> r, const char* what) {
  if (!r.ok()) {
    std::fprintf(stderr, "bench: %s: %s\n", what, r.status().ToString().c_str());
    std::exit(1);
  }
  return std::move(r).value();
}

using sedpack_bench::Touch;

struct FetchResult {
  double per_second = 0;
  double hit_rate = 0;
  double example_read_share = 0;  // fetches that read their example alone
};

FetchResult RandomFetches(const std::shared_ptr<const sedpack::Dataset>& ds,
                          const std::shared_ptr<const sedpack::SampleIndex>& index, sedpack::Split split,
                          int threads, std::uint64_t cache_bytes, double seconds, bool verify,
                          bool positioned, bool strict = false) {
  sedpack::FetchOptions o;
  o.cache_bytes = cache_bytes;
  o.verify_hashes = verify;
  o.strict_hashes = strict;
  o.positioned_reads = positioned;
  auto fetcher = Check(sedpack::ExampleFetcher::Make(ds, index, o), "fetcher");
  const std::uint64_t n = index->num_examples(split);
  std::atomic<std::uint64_t> total{0};
  std::atomic<std::uint64_t> sink{0};
  const auto start = Clock::now();
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      std::mt19937_64 rng(1000 + t);
      std::uint64_t done = 0, s = 0;
      while (Seconds(start, Clock::now()) < seconds) {
        auto ex = Check(fetcher->Get(split, rng() % n), "fetch");
        Touch(ex, &s);
        ++done;
      }
      total += done;
      sink += s;
    });
  }
  for (auto& th : pool) th.join();
  const double elapsed = Seconds(start, Clock::now());
  const auto st = fetcher->stats();
  FetchResult r;
  r.per_second = total.load() / elapsed;
  r.hit_rate = (st.hits + st.misses) ? static_cast<double>(st.hits) / (st.hits + st.misses) : 0;
  r.example_read_share = total.load() ? static_cast<double>(st.example_reads) / total.load() : 0;
  if (sink.load() == 42) std::fprintf(stderr, " ");
  return r;
}

struct Pass {
  double mb_per_s = 0;
  std::uint64_t examples = 0;
};

Pass Sequential(const std::shared_ptr<const sedpack::Dataset>& ds, sedpack::Split split, int prefetch,
                bool verify, bool strict = false) {
  sedpack::ReadOptions o;
  o.prefetch_shards = prefetch;
  o.verify_hashes = verify;
  o.strict_hashes = strict;
  const auto start = Clock::now();
  auto reader = Check(sedpack::ExampleReader::Make(ds, split, o), "reader");
  std::uint64_t bytes = 0, sink = 0, n = 0;
  for (;;) {
    auto ex = Check(reader->Next(), "next");
    if (!ex) break;
    bytes += Touch(*ex, &sink);
    ++n;
  }
  const double s = Seconds(start, Clock::now());
  if (sink == 42) std::fprintf(stderr, " ");
  return {bytes / 1e6 / s, n};
}

Pass Shuffled(const std::shared_ptr<const sedpack::Dataset>& ds,
              const std::shared_ptr<const sedpack::SampleIndex>& index, sedpack::Split split,
              std::uint64_t epoch, std::uint64_t shards_per_block, int prefetch, bool verify) {
  sedpack::ElasticReadOptions o;
  o.verify_hashes = verify;
  o.seed = 7;
  o.epoch = epoch;
  o.shards_per_block = shards_per_block;
  o.prefetch_shards = prefetch;
  const auto start = Clock::now();
  auto reader = Check(sedpack::ElasticReader::Make(ds, index, split, o), "elastic reader");
  std::uint64_t bytes = 0, sink = 0, n = 0;
  for (;;) {
    auto ex = Check(reader->Next(), "next");
    if (!ex) break;
    bytes += Touch(ex->example, &sink);
    ++n;
  }
  const double s = Seconds(start, Clock::now());
  if (sink == 42) std::fprintf(stderr, " ");
  return {bytes / 1e6 / s, n};
}

// Unverified, verified and strict in one run: fetches with the cache off on
// one thread, then (unless fetch_only) best-of-`repeat` sequential passes.
int CompareVerifyModes(const std::shared_ptr<const sedpack::Dataset>& ds,
                       const std::shared_ptr<const sedpack::SampleIndex>& index, sedpack::Split split,
                       double seconds, int prefetch, int repeat, bool fetch_only) {
  struct Mode {
    const char* name;
    bool verify, strict;
  };
  const Mode modes[] = {{"unverified", false, false}, {"verified", true, false}, {"strict", true, true}};
  double fetch[3] = {0, 0, 0}, pass[3] = {0, 0, 0};
  std::printf("\nverification modes (fetches: cache off, 1 thread, %.0f s each):\n", seconds);
  for (int m = 0; m < 3; ++m) {
    const FetchResult r = RandomFetches(ds, index, split, 1, 0, seconds, modes[m].verify, true, modes[m].strict);
    fetch[m] = r.per_second;
    std::printf("  %-10s %10.1f fetches/s  (example reads %.3f)\n", modes[m].name, r.per_second,
                r.example_read_share);
  }
  std::printf("  verified/unverified fetches = %.3f, strict/unverified = %.4f\n", fetch[1] / fetch[0],
              fetch[2] / fetch[0]);
  if (fetch_only) return 0;
  // The order rotates with each repeat: no mode always runs first (or last).
  for (int r = 0; r < repeat; ++r) {
    for (int k = 0; k < 3; ++k) {
      const int m = (r + k) % 3;
      pass[m] = std::max(pass[m], Sequential(ds, split, prefetch, modes[m].verify, modes[m].strict).mb_per_s);
    }
  }
  std::printf("  sequential (best of %d, prefetch %d): unverified %.1f MB/s, verified %.1f MB/s, strict %.1f MB/s\n",
              repeat, prefetch, pass[0], pass[1], pass[2]);
  std::printf("  verified/unverified sequential = %.3f, strict/unverified = %.3f\n", pass[1] / pass[0],
              pass[2] / pass[0]);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::string root, split_name = "train";
  double seconds = 3;
  std::uint64_t cache_mb = 512, shards_per_block = 4;
  int prefetch = 2, repeat = 3;
  bool verify = true, positioned = true, fetch_only = false, verify_modes = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "bench: %s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--split") split_name = next();
    else if (a == "--seconds") seconds = std::atof(next().c_str());
    else if (a == "--cache-mb") cache_mb = std::strtoull(next().c_str(), nullptr, 10);
    else if (a == "--shards-per-block") shards_per_block = std::strtoull(next().c_str(), nullptr, 10);
    else if (a == "--prefetch") prefetch = std::atoi(next().c_str());
    else if (a == "--repeat") repeat = std::max(1, std::atoi(next().c_str()));
    else if (a == "--no-verify") verify = false;
    else if (a == "--whole-shard") positioned = false;
    else if (a == "--fetch-only") fetch_only = true;
    else if (a == "--verify-modes") verify_modes = true;
    else if (root.empty() && a[0] != '-') root = a;
    else {
      std::fprintf(stderr, "usage: sedpack_bench_index DATASET [--split S] [--seconds T] [--cache-mb M] "
                           "[--shards-per-block K] [--prefetch P] [--repeat R] [--no-verify] [--whole-shard] "
                           "[--fetch-only] [--verify-modes]\n");
      return 2;
    }
  }
  if (root.empty()) {
    std::fprintf(stderr, "bench: missing DATASET (make one with `sedpack generate configs/generate_tinyaes.json DIR`)\n");
    return 2;
  }
  const sedpack::Split split = Check(sedpack::ParseSplit(split_name), "split");
  std::shared_ptr<const sedpack::Dataset> ds = Check(sedpack::Dataset::Open(root), "open");
  sedpack::IndexOpenOptions io;
  io.warn = [](const std::string& w) { std::fprintf(stderr, "bench: %s\n", w.c_str()); };
  auto index = Check(sedpack::OpenIndex(ds, io), "index");
  const std::uint64_t n = index->num_examples(split);
  std::printf("dataset %s split %s: %llu examples in %llu shards\n", root.c_str(), split_name.c_str(),
              static_cast<unsigned long long>(n),
              static_cast<unsigned long long>(index->num_shards(split)));
  if (verify_modes) return CompareVerifyModes(ds, index, split, seconds, prefetch, repeat, fetch_only);

  std::printf("\nrandom fetches (uniform example numbers, %.0f s each; %s; %s):\n", seconds,
              verify ? "hashes verified" : "hashes not verified",
              positioned ? "positioned reads allowed" : "whole shards only");
  for (std::uint64_t cache : {std::uint64_t{0}, cache_mb << 20}) {
    for (int threads : {1, 2}) {
      const FetchResult r = RandomFetches(ds, index, split, threads, cache, seconds, verify, positioned);
      std::printf("  cache %-8s %d thread%s  %10.1f fetches/s  (hit rate %.3f, example reads %.3f)\n",
                  cache ? (std::to_string(cache_mb) + "MiB").c_str() : "off", threads,
                  threads == 1 ? " " : "s", r.per_second, r.hit_rate, r.example_read_share);
    }
  }

  if (fetch_only) return 0;
  std::printf("\nfull passes (best of %d; prefetch %d shards; shuffled: %llu shards per block):\n",
              repeat, prefetch, static_cast<unsigned long long>(shards_per_block));
  Pass best_seq, best_shuf;
  std::vector<double> seq_rates, shuf_rates;
  for (int r = 0; r < repeat; ++r) {
    const Pass s = Sequential(ds, split, prefetch, verify);
    const Pass h = Shuffled(ds, index, split, static_cast<std::uint64_t>(r), shards_per_block, prefetch, verify);
    if (s.examples != n || h.examples != n) {
      std::fprintf(stderr, "bench: a pass read %llu / %llu examples, expected %llu\n",
                   static_cast<unsigned long long>(s.examples), static_cast<unsigned long long>(h.examples),
                   static_cast<unsigned long long>(n));
      return 1;
    }
    std::printf("  pass %d: sequential %8.1f MB/s   shuffled %8.1f MB/s\n", r + 1, s.mb_per_s, h.mb_per_s);
    seq_rates.push_back(s.mb_per_s);
    shuf_rates.push_back(h.mb_per_s);
    best_seq.mb_per_s = std::max(best_seq.mb_per_s, s.mb_per_s);
    best_shuf.mb_per_s = std::max(best_shuf.mb_per_s, h.mb_per_s);
  }
  std::printf("  best: sequential %.1f MB/s, shuffled %.1f MB/s, shuffled/sequential = %.2f\n",
              best_seq.mb_per_s, best_shuf.mb_per_s, best_shuf.mb_per_s / best_seq.mb_per_s);
  auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
  };
  std::printf("  median: sequential %.1f MB/s, shuffled %.1f MB/s, shuffled/sequential = %.2f\n",
              median(seq_rates), median(shuf_rates), median(shuf_rates) / median(seq_rates));
  return 0;
}
