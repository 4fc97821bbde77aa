// SPDX-License-Identifier: Apache-2.0
// Many threads fetching random examples through the sample index and one
// shared, byte-bounded shard cache (ExampleFetcher), each fetched value checked
// against a sequential read of the split. Run by tests/stress/load_test.sh and
// bench/load.sh under an address-space cap; prints one summary line with the
// peak resident memory (VmHWM) and exits non-zero on any error or wrong value.
//
// Usage: sedpack_fetch_load DATASET [THREADS] [FETCHES_PER_THREAD] [CACHE_MB] [SPLIT]
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <random>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "sedpack/dataset/reader.h"
#include "sedpack/index/fetch.h"
#include "sedpack/index/index.h"

namespace {

using namespace sedpack;

// FNV-1a over every value's bytes: a mismatch in any byte of any attribute of an
// example shows, and the expected side stays 8 bytes per example.
std::uint64_t ExampleDigest(const Example& e, std::size_t attributes) {
  std::uint64_t h = 1469598103934665603ULL;
  for (std::size_t j = 0; j < attributes; ++j) {
    for (std::byte b : e.Get(j).data) {
      h ^= std::to_integer<std::uint64_t>(b);
      h *= 1099511628211ULL;
    }
    h ^= 0xff;  // attribute boundary
    h *= 1099511628211ULL;
  }
  return h;
}

std::uint64_t ProcStatusKb(const char* key) {
  std::ifstream in("/proc/self/status");
  std::string line;
  const std::string prefix = std::string(key) + ":";
  while (std::getline(in, line)) {
    if (line.rfind(prefix, 0) == 0) return std::strtoull(line.c_str() + prefix.size(), nullptr, 10);
  }
  return 0;
}

int Fail(const Status& s) {
  std::fprintf(stderr, "fetch_load: %s\n", s.ToString().c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s DATASET [THREADS] [FETCHES_PER_THREAD] [CACHE_MB] [SPLIT]\n", argv[0]);
    return 2;
  }
  const std::string root = argv[1];
  const int threads = argc > 2 ? std::atoi(argv[2]) : 32;
  const std::uint64_t fetches = argc > 3 ? std::strtoull(argv[3], nullptr, 10) : 2000;
  const std::uint64_t cache_mb = argc > 4 ? std::strtoull(argv[4], nullptr, 10) : 64;
  auto split = ParseSplit(argc > 5 ? argv[5] : "train");
  if (!split.ok()) return Fail(split.status());

  auto ds = Dataset::Open(root);
  if (!ds.ok()) return Fail(ds.status());
  const std::shared_ptr<const Dataset> dataset = *ds;
  const std::size_t attributes = dataset->schema().size();

  // What every example must hold, read in order (bounded prefetch, one pass).
  std::vector<std::uint64_t> expected;
  {
    auto reader = ExampleReader::Make(dataset, *split);
    if (!reader.ok()) return Fail(reader.status());
    for (;;) {
      auto e = (*reader)->Next();
      if (!e.ok()) return Fail(e.status());
      if (!*e) break;
      expected.push_back(ExampleDigest(**e, attributes));
    }
  }
  if (expected.empty()) return Fail(Status::InvalidArgument(root, ": the split is empty"));

  auto index = OpenIndex(dataset);
  if (!index.ok()) return Fail(index.status());
  FetchOptions options;
  options.cache_bytes = cache_mb << 20;
  auto fetcher = ExampleFetcher::Make(dataset, *index, options);
  if (!fetcher.ok()) return Fail(fetcher.status());

  std::atomic<std::uint64_t> done{0}, wrong{0}, errors{0}, max_cached{0};
  std::atomic<bool> error_printed{false};
  auto work = [&](int t) {
    std::mt19937_64 rng(0x5eedULL * static_cast<std::uint64_t>(t + 1));
    std::uniform_int_distribution<std::uint64_t> pick(0, expected.size() - 1);
    for (std::uint64_t k = 0; k < fetches; ++k) {
      const std::uint64_t i = pick(rng);
      auto e = (*fetcher)->Get(*split, i);
      if (!e.ok()) {
        if (!error_printed.exchange(true)) std::fprintf(stderr, "fetch_load: %s\n", e.status().ToString().c_str());
        ++errors;
        continue;
      }
      if (ExampleDigest(*e, attributes) != expected[i]) ++wrong;
      ++done;
      if (k % 64 == 0) {
        const std::uint64_t cached = (*fetcher)->stats().cached_bytes;
        std::uint64_t seen = max_cached.load();
        while (cached > seen && !max_cached.compare_exchange_weak(seen, cached)) {
        }
      }
    }
  };
  const auto start = std::chrono::steady_clock::now();
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    try {
      pool.emplace_back(work, t);
    } catch (const std::system_error& e) {
      // The load is the point: fewer threads than asked for is a failure here.
      std::fprintf(stderr, "fetch_load: only %d of %d threads could start (%s)\n", t, threads, e.what());
      break;
    }
  }
  for (auto& t : pool) t.join();
  if (static_cast<int>(pool.size()) != threads) return 1;
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const ExampleFetcher::Stats s = (*fetcher)->stats();
  const bool bounded = max_cached.load() <= options.cache_bytes && s.cached_bytes <= options.cache_bytes;
  std::printf(
      "fetch_load: %d threads x %llu fetches of %zu examples: %llu ok, %llu wrong, %llu errors in %.2f s "
      "(%.0f fetches/s); cache %llu MB bound, at most %.1f MB held, %llu hits, %llu misses, %llu evictions; "
      "peak RSS %.1f MB, peak address space %.1f MB\n",
      threads, static_cast<unsigned long long>(fetches), expected.size(),
      static_cast<unsigned long long>(done.load()), static_cast<unsigned long long>(wrong.load()),
      static_cast<unsigned long long>(errors.load()), seconds, static_cast<double>(done.load()) / seconds,
      static_cast<unsigned long long>(cache_mb), static_cast<double>(max_cached.load()) / (1 << 20),
      static_cast<unsigned long long>(s.hits), static_cast<unsigned long long>(s.misses),
      static_cast<unsigned long long>(s.evictions), ProcStatusKb("VmHWM") / 1024.0,
      ProcStatusKb("VmPeak") / 1024.0);
  if (!bounded) std::fprintf(stderr, "fetch_load: the cache held more than its bound\n");
  return (wrong.load() == 0 && errors.load() == 0 && bounded) ? 0 : 1;
}
