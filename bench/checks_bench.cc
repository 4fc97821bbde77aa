// SPDX-License-Identifier: Apache-2.0
// The checks sidecar and decode points, every codec, one run: on the examples
// of `sedpack generate configs/generate_tinyaes.json` (float16[80000] traces
// plus key, plaintext, ciphertext; 256 per fb shard, sha256), each codec's
// dataset is written twice, with decode points (the default block_bytes) and
// without (block_bytes 0, the bytes of earlier versions), writes alternating;
// then, in the same run:
//   - the stored size of the shards with and without points (their cost),
//     and the checks sidecar's size per shard;
//   - write MB/s with and without points (median of R, the two alternating);
//   - sequential read MB/s (ExampleReader, prefetch 2) unverified and
//     verified (through the sidecar), on the shards with points, and
//     unverified on those without (median of R, modes rotating);
//   - the ratios of those medians: with points over without (write and
//     read, the cost of the points) and verified over unverified;
//   - random fetches/s (cache off, one thread, T seconds) unverified and
//     verified, and the share of them that read their example alone.
// MB are 10^6 bytes of example values.
//
//   sedpack_bench_checks --dir D [--examples N] [--slow-examples M] [--codecs LIST]
//                        [--seconds T] [--repeat R] [--threads W]
//
// D/<CODEC> keeps the dataset with points (bench/checks_bench.py reads them
// with the reference); D/<CODEC>-flat is removed. BZ2 and LZMA write M
// examples (default 256: one shard), being 10-50x slower to write.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "codecs/decode_points_internal.h"  // Internal: which codecs have decode points.
#include "sedpack/dataset/filler.h"
#include "sedpack/dataset/reader.h"
#include "sedpack/generate/generate.h"
#include "sedpack/index/fetch.h"
#include "sedpack/index/index.h"
#include "touch.h"

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using sedpack::Compression;

double Seconds(Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double>(b - a).count(); }

void Die(const sedpack::Status& s, const char* what) {
  if (!s.ok()) {
    std::fprintf(stderr, "bench: %s: %s\n", what, s.ToString().c_str());
    std::exit(1);
  }
}

template <typename T>
T Take(sedpack::Result<T> r, const char* what) {
  Die(r.status(), what);
  return std::move(r).value();
}

struct Examples {
  sedpack::GenerateConfig config;
  std::vector<sedpack::ExampleBuffers> buffers;
  double mb = 0;
};

Examples MakeExamples(std::uint64_t n) {
  Examples e;
  e.config = sedpack::DefaultGenerateConfig();
  auto generator = Take(sedpack::ExampleGenerator::Make(e.config), "generator");
  e.buffers.resize(n);
  for (std::uint64_t i = 0; i < n; ++i) Die(generator->Generate(sedpack::Split::kTrain, i, &e.buffers[i]), "generate");
  e.mb = static_cast<double>(generator->example_bytes() * n) / 1e6;
  return e;
}

// Seconds to write the first `n` examples into a new dataset at `root`.
double Write(const Examples& ex, std::uint64_t n, Compression c, std::uint64_t block_bytes, int threads,
             const std::string& root) {
  fs::remove_all(root);
  sedpack::DatasetStructure s = ex.config.structure;
  s.compression = c;
  auto ds = Take(sedpack::Dataset::Create(root, ex.config.metadata, s), "create");
  sedpack::FillerOptions o;
  o.concurrency = threads;
  o.codec.block_bytes = block_bytes;
  const auto t0 = Clock::now();
  auto filler = Take(sedpack::Filler::Make(ds, o), "filler");
  for (std::uint64_t i = 0; i < n; ++i) Die(filler->WriteExample(sedpack::Split::kTrain, ex.buffers[i].Views()), "write");
  Die(filler->Finish(), "finish");
  return Seconds(t0, Clock::now());
}

// Bytes of the shard files (everything under train/ but the lists) and their number.
std::pair<std::uint64_t, std::uint64_t> ShardBytes(const std::string& root) {
  std::uint64_t bytes = 0, files = 0;
  for (const auto& f : fs::recursive_directory_iterator(root + "/train")) {
    if (f.is_regular_file() && f.path().extension() != ".json") {
      bytes += f.file_size();
      ++files;
    }
  }
  return {bytes, files};
}

using sedpack_bench::Touch;

double ReadMbs(const std::string& root, bool verify) {
  const auto t0 = Clock::now();
  auto ds = Take(sedpack::Dataset::Open(root), "open");
  sedpack::ReadOptions o;
  o.prefetch_shards = 2;
  o.verify_hashes = verify;
  auto reader = Take(sedpack::ExampleReader::Make(ds, sedpack::Split::kTrain, o), "reader");
  std::uint64_t bytes = 0, sink = 0;
  for (;;) {
    auto e = Take(reader->Next(), "next");
    if (!e) break;
    bytes += Touch(*e, &sink);
  }
  const double s = Seconds(t0, Clock::now());
  if (sink == 42) std::fprintf(stderr, " ");
  return bytes / 1e6 / s;
}

struct Fetches {
  double per_second = 0;
  double alone = 0;  // share that read their example alone
};

Fetches FetchRate(const std::string& root, bool verify, double seconds) {
  auto ds = Take(sedpack::Dataset::Open(root), "open");
  auto index = Take(sedpack::SampleIndex::FromContents(Take(sedpack::BuildIndexContents(ds), "index")), "index");
  sedpack::FetchOptions o;
  o.cache_bytes = 0;
  o.verify_hashes = verify;
  auto fetcher = Take(sedpack::ExampleFetcher::Make(ds, index, o), "fetcher");
  const std::uint64_t n = index->num_examples(sedpack::Split::kTrain);
  std::mt19937_64 rng(7);
  std::uint64_t done = 0, sink = 0;
  const auto t0 = Clock::now();
  double elapsed = 0;
  // At least two fetches, however slow the codec.
  while ((elapsed = Seconds(t0, Clock::now())) < seconds || done < 2) {
    Touch(Take(fetcher->Get(sedpack::Split::kTrain, rng() % n), "fetch"), &sink);
    ++done;
  }
  if (sink == 42) std::fprintf(stderr, " ");
  return {done / elapsed, static_cast<double>(fetcher->stats().example_reads) / static_cast<double>(done)};
}

// The median of a pass's repetitions (the mean of the middle two for an even count).
double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

double Max(const std::vector<double>& v) { return v.empty() ? 0 : *std::max_element(v.begin(), v.end()); }

struct Row {
  std::string codec;
  std::uint64_t shards = 0, size_points = 0, size_flat = 0, sidecar = 0;
  // Medians (MB/s) of interleaved repetitions.
  double write_points = 0, write_flat = 0, read_u = 0, read_v = 0, read_flat = 0;
  // The best of each (the pass least disturbed by other processes).
  double best_write_points = 0, best_write_flat = 0, best_read_u = 0, best_read_flat = 0;
  Fetches fetch_u, fetch_v;
  bool points = false;
};

Row Measure(const Examples& ex, Compression c, std::uint64_t n, const std::string& dir, int repeat, int threads,
            double seconds) {
  Row r;
  r.codec = c == Compression::kNone ? "NONE" : std::string(sedpack::CompressionName(c));
  r.points = sedpack::codecs_internal::SupportsDecodePoints(c);
  const double mb = ex.mb * static_cast<double>(n) / static_cast<double>(ex.buffers.size());
  const std::string with = dir + "/" + r.codec, flat = with + "-flat";
  std::vector<double> w_points, w_flat;
  for (int i = 0; i < repeat; ++i) {
    // Alternating (which goes first too), so that both see the same machine.
    for (int k = 0; k < 2; ++k) {
      if ((i + k) % 2 == 0) {
        w_points.push_back(mb / Write(ex, n, c, sedpack::kDefaultBlockBytes, threads, with));
      } else if (r.points) {
        w_flat.push_back(mb / Write(ex, n, c, 0, threads, flat));
      }
    }
  }
  r.write_points = Median(w_points);
  r.best_write_points = Max(w_points);
  std::tie(r.size_points, r.shards) = ShardBytes(with);
  r.sidecar = fs::file_size(with + "/.sedpack-hpc/checks.bin");
  if (r.points) {
    r.write_flat = Median(w_flat);
    r.best_write_flat = Max(w_flat);
    r.size_flat = ShardBytes(flat).first;
  }
  std::vector<double> read_u, read_v, read_flat;
  for (int i = 0; i < repeat; ++i) {
    for (int k = 0; k < 3; ++k) {
      switch ((i + k) % 3) {
        case 0: read_u.push_back(ReadMbs(with, false)); break;
        case 1: read_v.push_back(ReadMbs(with, true)); break;
        default:
          if (r.points) read_flat.push_back(ReadMbs(flat, false));
      }
    }
  }
  r.read_u = Median(read_u);
  r.read_v = Median(read_v);
  r.read_flat = Median(read_flat);
  r.best_read_u = Max(read_u);
  r.best_read_flat = Max(read_flat);
  r.fetch_u = FetchRate(with, false, seconds);
  r.fetch_v = FetchRate(with, true, seconds);
  fs::remove_all(flat);
  return r;
}

void Print(const std::vector<Row>& rows) {
  std::printf("%-5s %6s %9s %9s %7s %10s %8s %8s %7s %8s %8s %7s %8s %10s %10s %5s %5s\n", "codec", "shards",
              "MB/shard", "points+%", "B/shard", "write MB/s", "no-pts", "ratio", "seq-u", "seq-v", "v/u",
              "no-pts", "ratio", "fetch-u/s", "fetch-v/s", "v/u", "alone");
  for (const Row& r : rows) {
    const double per_shard = static_cast<double>(r.size_points) / 1e6 / static_cast<double>(r.shards);
    const std::string cost =
        r.points ? std::to_string(100.0 * (static_cast<double>(r.size_points) / r.size_flat - 1.0)).substr(0, 6) : "-";
    char wflat[32] = "-", wratio[32] = "-", rflat[32] = "-", rratio[32] = "-";
    if (r.points) {
      std::snprintf(wflat, sizeof(wflat), "%.1f", r.write_flat);
      std::snprintf(wratio, sizeof(wratio), "%.3f", r.write_points / r.write_flat);
      std::snprintf(rflat, sizeof(rflat), "%.0f", r.read_flat);
      std::snprintf(rratio, sizeof(rratio), "%.3f", r.read_u / r.read_flat);
    }
    std::printf("%-5s %6llu %9.2f %9s %7llu %10.1f %8s %8s %7.0f %8.0f %7.3f %7s %8s %10.1f %10.1f %5.2f %5.2f\n",
                r.codec.c_str(), static_cast<unsigned long long>(r.shards), per_shard, cost.c_str(),
                static_cast<unsigned long long>(r.sidecar / std::max<std::uint64_t>(1, r.shards)), r.write_points,
                wflat, wratio, r.read_u, r.read_v, r.read_v / r.read_u, rflat, rratio, r.fetch_u.per_second,
                r.fetch_v.per_second, r.fetch_v.per_second / r.fetch_u.per_second, r.fetch_v.alone);
  }
  std::printf("points+%%: stored size with decode points over without; B/shard: checks sidecar bytes per shard;\n"
              "write MB/s, no-pts, ratio: with points, without, with/without; seq-u/-v: sequential read MB/s\n"
              "unverified/verified (with points); no-pts, ratio: unverified without points, with/without;\n"
              "MB/s are medians of interleaved repetitions, ratios are of medians; fetch: cache off, 1 thread;\n"
              "alone: share of verified fetches that read their example alone (no whole-shard decode)\n");
  std::printf("decode points on/off, the same examples (ratios of medians; of the best passes in brackets):\n");
  for (const Row& r : rows) {
    if (!r.points) continue;
    std::printf("  %-5s write %.3f (%.3f)   sequential read %.3f (%.3f)\n", r.codec.c_str(),
                r.write_points / r.write_flat, r.best_write_points / r.best_write_flat, r.read_u / r.read_flat,
                r.best_read_u / r.best_read_flat);
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::string dir, codecs = "NONE,LZ4,GZIP,ZLIB,ZSTD,BZ2,LZMA";
  std::uint64_t examples = 512, slow_examples = 256;
  double seconds = 2;
  int repeat = 3;
  int threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i], v = argv[i + 1];
    if (k == "--dir") dir = v;
    else if (k == "--examples") examples = std::strtoull(v.c_str(), nullptr, 10);
    else if (k == "--slow-examples") slow_examples = std::strtoull(v.c_str(), nullptr, 10);
    else if (k == "--codecs") codecs = v;
    else if (k == "--seconds") seconds = std::atof(v.c_str());
    else if (k == "--repeat") repeat = std::max(1, std::atoi(v.c_str()));
    else if (k == "--threads") threads = std::max(1, std::atoi(v.c_str()));
    else dir.clear(), i = argc;
  }
  if (dir.empty() || examples == 0 || slow_examples == 0) {
    std::fprintf(stderr,
                 "usage: sedpack_bench_checks --dir D [--examples N] [--slow-examples M] [--codecs LIST] "
                 "[--seconds T] [--repeat R] [--threads W]\n");
    return 2;
  }
  fs::create_directories(dir);
  const Examples ex = MakeExamples(std::max(examples, slow_examples));
  std::printf("TinyAES examples (sedpack generate), %.3f MB each, 256 per shard, sha256; median of %d; "
              "%d write threads; fetches %.1f s each\n",
              ex.mb / static_cast<double>(ex.buffers.size()), repeat, threads, seconds);
  std::vector<Row> rows;
  for (std::size_t pos = 0; pos < codecs.size();) {
    const std::size_t comma = std::min(codecs.find(',', pos), codecs.size());
    const std::string name = codecs.substr(pos, comma - pos);
    pos = comma + 1;
    const Compression c = Take(sedpack::ParseCompression(name == "NONE" ? "" : name), "--codecs");
    const bool slow = c == Compression::kBz2 || c == Compression::kLzma;
    rows.push_back(Measure(ex, c, slow ? slow_examples : examples, dir, slow ? 1 : repeat, threads, seconds));
    std::fflush(stdout);
    std::fprintf(stderr, "bench: %s done\n", name.c_str());
  }
  Print(rows);
  return 0;
}
