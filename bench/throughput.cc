// SPDX-License-Identifier: Apache-2.0
// Write / read / check throughput on a TinyAES-shaped workload (float16 traces of
// 80,000 samples plus three uint8[16] attributes), printed beside the single-core
// limits of the codec and hash libraries measured on the same bytes in the same run.
//
//   sedpack_bench_throughput [--examples N] [--trace-length L] [--dir D] [--threads T] [--repeat R]
//
// Every number is the best of R runs (default 1); on a shared machine R = 3..5
// removes most of the noise from other processes. (Write repeats after the
// first can reuse the page cache freed by deleting the previous run's files,
// so on VMs where fresh memory is slow, best-of-R writes are optimistic.)
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "codecs/byte_buffer.h"  // Internal: the codecs' zero-copy paths (see MeasureLimits).
#include "sedpack/codecs/compress.h"
#include "sedpack/codecs/hash.h"
#include "sedpack/check/check.h"
#include "sedpack/dataset/filler.h"
#include "sedpack/dataset/reader.h"

namespace {

using Clock = std::chrono::steady_clock;
using sedpack::Compression;

double Seconds(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

void Die(const sedpack::Status& s, const char* what) {
  if (!s.ok()) {
    std::fprintf(stderr, "bench: %s: %s\n", what, s.ToString().c_str());
    std::exit(1);
  }
}

struct Workload {
  int examples = 1024;
  int trace_length = 80000;
  int examples_per_shard = 256;
  int repeat = 1;  // Every measure is the best of this many runs.
  std::vector<std::vector<sedpack::Float16>> traces;
  std::vector<std::vector<std::uint8_t>> keys, pts, cts;
  std::uint64_t RawBytesPerExample() const { return trace_length * 2ull + 48; }
  std::uint64_t RawBytes() const { return RawBytesPerExample() * examples; }
};

// Oscilloscope-like traces: a smooth periodic signal plus 8-bit quantised noise,
// so that they compress about as well as real captures (not all zeros, not random).
void MakeWorkload(Workload& w) {
  std::mt19937_64 rng(42);
  std::normal_distribution<float> noise(0.0f, 0.02f);
  w.traces.resize(w.examples);
  w.keys.resize(w.examples);
  w.pts.resize(w.examples);
  w.cts.resize(w.examples);
  for (int e = 0; e < w.examples; ++e) {
    auto& t = w.traces[e];
    t.resize(w.trace_length);
    for (int i = 0; i < w.trace_length; ++i) {
      float v = 0.3f * std::sin(i * 0.05f) + 0.1f * std::sin(i * 0.0031f + e) + noise(rng);
      v = std::round(v * 128.0f) / 128.0f;  // 8-bit ADC
      t[i] = sedpack::Float16::FromFloat(v);
    }
    for (auto* v : {&w.keys[e], &w.pts[e], &w.cts[e]}) {
      v->resize(16);
      for (auto& b : *v) b = static_cast<std::uint8_t>(rng());
    }
  }
}

sedpack::DatasetStructure Structure(const Workload& w, Compression c) {
  sedpack::DatasetStructure s;
  auto attr = [](std::string n, std::string d, sedpack::Shape sh) {
    sedpack::Attribute a;
    a.name = std::move(n);
    a.dtype = std::move(d);
    a.shape = std::move(sh);
    return a;
  };
  s.saved_data_description = {attr("trace1", "float16", {w.trace_length}), attr("key", "uint8", {16}),
                              attr("plaintext", "uint8", {16}), attr("ciphertext", "uint8", {16})};
  s.compression = c;
  s.examples_per_shard = w.examples_per_shard;
  s.shard_file_type = sedpack::ShardFileType::kFb;
  s.hash_checksum_algorithms = {sedpack::HashAlgorithm::kSha256};
  return s;
}

std::vector<sedpack::ValueView> Views(const Workload& w, int e) {
  return {sedpack::ValueView::Array(w.traces[e], {w.trace_length}),
          sedpack::ValueView::Array(w.keys[e], {16}), sedpack::ValueView::Array(w.pts[e], {16}),
          sedpack::ValueView::Array(w.cts[e], {16})};
}

struct Limits {
  double compress_hash_s = 0;  // single core: compress + sha256 of the compressed bytes
  double decompress_s = 0;     // single core: decompress
  double hash_s = 0;           // single core: sha256 of the compressed bytes
};

// The single-core limit, measured on the very bytes the writer produces: each
// shard's uncompressed FlatBuffer (built once here, outside the timing).
//
// The limit is the codec and the hash alone, at their best: the library's own
// zero-copy entry points (CompressTo / DecompressTo: no copy into a
// std::vector, reused contexts) on memory from the same pool the writer and
// reader use, after an untimed warm-up pass. Measuring through the public Codec
// API into fresh or 4 KiB-page std::vectors instead adds first-touch page faults
// and page-walk costs that are not codec work (on this kind of VM it made the
// "limit" up to 2x slower than the full reader, i.e. no limit at all).
Limits MeasureLimits(const Workload& w, Compression c) {
  namespace ci = sedpack::codecs_internal;
  std::vector<ci::ByteBuffer> shards;
  for (int first = 0; first < w.examples; first += w.examples_per_shard) {
    auto writer = sedpack::MakeShardWriter(sedpack::ShardFileType::kFb, Compression::kNone,
                                           *Structure(w, c).Schema());
    Die(writer.status(), "shard writer");
    for (int e = first; e < std::min(w.examples, first + w.examples_per_shard); ++e) {
      auto v = Views(w, e);
      Die((*writer)->Add(v), "add");
    }
    auto bytes = (*writer)->Finish();
    Die(bytes.status(), "finish");
    ci::ByteBuffer b;
    b.resize(bytes->size());
    std::memcpy(b.data(), bytes->data(), bytes->size());
    shards.push_back(std::move(b));
  }
  const std::vector<sedpack::HashAlgorithm> sha = {sedpack::HashAlgorithm::kSha256};
  std::vector<ci::ByteBuffer> compressed(shards.size());
  ci::ByteBuffer out;  // Reused decompression output.
  auto compress_and_hash = [&](std::size_t i, ci::ByteBuffer* keep) {
    Die(ci::CompressTo(c, shards[i].span(),
                       [&](std::span<const std::byte> z) {
                         if (keep != nullptr) {
                           keep->resize(z.size());
                           std::memcpy(keep->data(), z.data(), z.size());
                         }
                         return sedpack::HashBytes(sha, z).status();
                       }),
        "compress");
  };
  // Untimed warm-up pass; it also keeps the compressed shards for the
  // decompress limit.
  for (std::size_t i = 0; i < shards.size(); ++i) {
    compress_and_hash(i, &compressed[i]);
    Die(ci::DecompressTo(c, compressed[i].span(), sedpack::kDefaultMaxDecompressedBytes, &out),
        "decompress");
  }
  Limits l;
  l.compress_hash_s = l.decompress_s = l.hash_s = 1e300;
  for (int r = 0; r < w.repeat; ++r) {  // Best of `repeat`.
    auto t0 = Clock::now();
    for (std::size_t i = 0; i < shards.size(); ++i) compress_and_hash(i, nullptr);
    auto t1 = Clock::now();
    l.compress_hash_s = std::min(l.compress_hash_s, Seconds(t0, t1));
    t0 = Clock::now();
    for (const auto& z : compressed) {
      Die(ci::DecompressTo(c, z.span(), sedpack::kDefaultMaxDecompressedBytes, &out), "decompress");
    }
    t1 = Clock::now();
    l.decompress_s = std::min(l.decompress_s, Seconds(t0, t1));
    t0 = Clock::now();
    for (const auto& z : compressed) Die(sedpack::HashBytes(sha, z.span()).status(), "hash");
    l.hash_s = std::min(l.hash_s, Seconds(t0, Clock::now()));
  }
  return l;
}

double WriteDataset(const Workload& w, Compression c, const std::string& root, int threads) {
  std::filesystem::remove_all(root);
  auto ds = sedpack::Dataset::Create(root, sedpack::Metadata{}, Structure(w, c));
  Die(ds.status(), "create");
  sedpack::FillerOptions o;
  o.concurrency = threads;
  auto t0 = Clock::now();
  auto filler = sedpack::Filler::Make(*ds, o);
  Die(filler.status(), "filler");
  for (int e = 0; e < w.examples; ++e) {
    auto v = Views(w, e);
    Die((*filler)->WriteExample(sedpack::Split::kTrain, v), "write");
  }
  Die((*filler)->Finish(), "finish");
  return Seconds(t0, Clock::now());
}

// `verify`: ReadOptions::verify_hashes (each shard's bytes hashed before decoding).
double ReadDataset(const std::string& root, int prefetch, bool verify, std::uint64_t* checksum) {
  auto t0 = Clock::now();
  auto ds = sedpack::Dataset::Open(root);
  Die(ds.status(), "open");
  sedpack::ReadOptions o;
  o.prefetch_shards = prefetch;
  o.verify_hashes = verify;
  auto reader = sedpack::ExampleReader::Make(*ds, sedpack::Split::kTrain, o);
  Die(reader.status(), "reader");
  std::uint64_t sum = 0;
  for (;;) {
    auto ex = (*reader)->Next();
    Die(ex.status(), "next");
    if (!*ex) break;
    const auto v = (*ex)->Get(0);
    sum += static_cast<std::uint8_t>(v.data[v.data.size() / 2]);  // touch the view
  }
  *checksum = sum;
  return Seconds(t0, Clock::now());
}

}  // namespace

int main(int argc, char** argv) {
  Workload w;
  std::string dir = (std::filesystem::temp_directory_path() / "sedpack_bench").string();
  int threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i];
    if (k == "--examples") w.examples = std::atoi(argv[i + 1]);
    else if (k == "--trace-length") w.trace_length = std::atoi(argv[i + 1]);
    else if (k == "--dir") dir = argv[i + 1];
    else if (k == "--threads") threads = std::atoi(argv[i + 1]);
    else if (k == "--repeat") w.repeat = std::max(1, std::atoi(argv[i + 1]));
    else {
      std::fprintf(stderr, "usage: %s [--examples N] [--trace-length L] [--dir D] [--threads T] [--repeat R]\n", argv[0]);
      return 2;
    }
  }
  MakeWorkload(w);
  const double mb = w.RawBytes() / 1e6;
  std::printf("workload: %d examples x (float16[%d] + 3 x uint8[16]) = %.1f MB raw, %d per shard, sha256\n",
              w.examples, w.trace_length, mb, w.examples_per_shard);
  std::printf("%-5s %-34s %10s %10s %8s\n", "codec", "measure", "MB/s", "limit", "ratio");
  for (Compression c : {Compression::kLz4, Compression::kZstd}) {
    const std::string name(sedpack::CompressionName(c));
    const Limits l = MeasureLimits(w, c);
    const double lim_write = mb / l.compress_hash_s;
    const double lim_read = mb / l.decompress_s;
    const double lim_hash = mb / l.hash_s;
    auto row = [&](const char* what, double rate, double limit) {
      std::printf("%-5s %-34s %10.1f %10.1f %7.0f%%\n", name.c_str(), what, rate, limit,
                  100.0 * rate / limit);
    };
    std::printf("%-5s %-34s %10.1f\n", name.c_str(), "limit: compress+sha256, 1 core", lim_write);
    std::printf("%-5s %-34s %10.1f\n", name.c_str(), "limit: decompress, 1 core", lim_read);
    const std::string root = dir + "/" + name;
    auto best = [&](auto&& run) {  // Fastest of `repeat` runs, in seconds.
      double b = 1e300;
      for (int r = 0; r < w.repeat; ++r) b = std::min(b, run());
      return b;
    };
    row("write, 1 worker thread", mb / best([&] { return WriteDataset(w, c, root, 1); }), lim_write);
    char label[64];
    std::snprintf(label, sizeof(label), "write, %d worker threads", threads);
    row(label, mb / best([&] { return WriteDataset(w, c, root, threads); }), lim_write);
    std::uint64_t sum = 0;
    // Reads check the recorded sha256 of every shard by default; the
    // unverified rows show what that costs.
    row("read, decode inline (1 core)", mb / best([&] { return ReadDataset(root, 0, true, &sum); }),
        lim_read);
    row("read, inline, no hash check", mb / best([&] { return ReadDataset(root, 0, false, &sum); }),
        lim_read);
    row("read, 2 shards prefetched", mb / best([&] { return ReadDataset(root, 2, true, &sum); }),
        lim_read);
    row("read, 2 prefetched, no hash check",
        mb / best([&] { return ReadDataset(root, 2, false, &sum); }), lim_read);
    const double check_s = best([&] {
      auto t0 = Clock::now();
      auto report = sedpack::CheckDataset(root, {});
      Die(report.status(), "check");
      if (!report->ok()) std::fprintf(stderr, "bench: check found problems!\n");
      return Seconds(t0, Clock::now());
    });
    // check hashes compressed bytes; its limit is sha256 over those bytes.
    row("check (sha256 of files), 1 core", mb / check_s, lim_hash);
  }
  std::filesystem::remove_all(dir);
  return 0;
}
