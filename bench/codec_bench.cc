// SPDX-License-Identifier: Apache-2.0
// Every codec at its levels, on TinyAES-shaped data (the `sedpack generate`
// examples: float16[80000] traces + key/plaintext/ciphertext) and on an
// ASCAD-shaped int8 trace set (int8[700] traces of noise plus a small
// Hamming-weight signal, plaintext, key): compress and decompress MB/s of
// the codec and the size ratio, measured on the uncompressed fb shards the
// writer makes; beside them the single-library limit measured on the same bytes
// in the same run (for GZIP: zlib, ISA-L and libdeflate called directly); and
// for the default levels (every level with --tool-levels all) the whole tool's
// write (Filler), read (ExampleReader, sha256 checked) and verify (CheckDataset
// --deep) throughput. Then, for the codecs with decode points (LZ4, GZIP at an
// ISA-L and a zlib level), the cost of the points at each block size of
// --blocks against none (B = 0) in the same run: size, compress and
// decompress MB/s (best of 3), and example-sized range fetches per second
// decoded from the points (B = 0: the whole shard decoded per fetch).
//
//   sedpack_bench_codecs [--tinyaes-examples N] [--ascad-examples N] [--codecs LIST]
//                        [--all-levels] [--tool-levels default|all|none] [--threads T] [--dir D]
//                        [--blocks LIST|none] [--block-codecs CODEC:LEVEL,...]
//
// MB/s are of uncompressed bytes (MB = 10^6), single runs. The codec and
// library columns are per core: MB per second of the measuring thread's CPU
// time (CLOCK_THREAD_CPUTIME_ID), so that other processes on a shared machine
// do not distort them. The tool columns are wall-clock MB/s of the whole job
// (write with T worker threads, default all cores), followed by MB per CPU
// second of the whole process (getrusage) in the "cpu" columns.
#include <zlib.h>

#include <sys/resource.h>
#include <time.h>

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

#include "codecs/byte_buffer.h"
#include "codecs/decode_points_internal.h"
#include "sedpack/codecs/compress.h"
#include "sedpack/config.h"
#include "sedpack/check/check.h"
#include "sedpack/dataset/filler.h"
#include "sedpack/dataset/reader.h"
#include "sedpack/generate/generate.h"
#include "sedpack/shard/shard.h"

#ifdef SEDPACK_HAVE_ISAL
#include <isa-l/igzip_lib.h>
#endif
#ifdef SEDPACK_BENCH_LIBDEFLATE
#include <libdeflate.h>
#endif

namespace {

using Clock = std::chrono::steady_clock;
using sedpack::Compression;
using Bytes = std::vector<std::byte>;

double Seconds(Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double>(b - a).count(); }

// CPU seconds of the calling thread.
double ThreadCpu() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + ts.tv_nsec * 1e-9;
}

// CPU seconds (user + system) of the whole process so far.
double ProcessCpu() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         (u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1e-6;
}

void Die(const sedpack::Status& s, const char* what) {
  if (!s.ok()) {
    std::fprintf(stderr, "bench: %s: %s\n", what, s.ToString().c_str());
    std::exit(1);
  }
}

// A workload: the schema, every example's values (owned), examples per shard.
struct Workload {
  std::string name;
  std::vector<sedpack::Attribute> attributes;
  std::vector<std::vector<std::vector<std::byte>>> values;  // [example][attribute]
  std::vector<sedpack::Shape> shapes;                         // [attribute]
  std::vector<sedpack::DType> dtypes;
  int examples_per_shard = 256;
  std::uint64_t raw_bytes = 0;

  std::vector<sedpack::ValueView> Views(std::size_t e) const {
    std::vector<sedpack::ValueView> v;
    for (std::size_t a = 0; a < attributes.size(); ++a) {
      sedpack::ValueView view;
      view.dtype = dtypes[a];
      view.shape = shapes[a];
      view.data = values[e][a];
      v.push_back(view);
    }
    return v;
  }
};

sedpack::Attribute Attr(std::string n, std::string d, sedpack::Shape s) {
  sedpack::Attribute a;
  a.name = std::move(n);
  a.dtype = std::move(d);
  a.shape = std::move(s);
  return a;
}

template <class T>
std::vector<std::byte> AsBytes(const T* p, std::size_t n) {
  const auto* b = reinterpret_cast<const std::byte*>(p);
  return std::vector<std::byte>(b, b + n * sizeof(T));
}

// The very examples `sedpack generate` writes with configs/generate_tinyaes.json.
Workload TinyAes(int examples) {
  Workload w;
  w.name = "TinyAES";
  sedpack::GenerateConfig config = sedpack::DefaultGenerateConfig();
  auto gen = sedpack::ExampleGenerator::Make(config);
  Die(gen.status(), "generator");
  w.attributes = config.structure.saved_data_description;
  sedpack::ExampleBuffers buf;
  for (int e = 0; e < examples; ++e) {
    Die((*gen)->Generate(sedpack::Split::kTrain, static_cast<std::uint64_t>(e), &buf), "generate");
    std::vector<std::vector<std::byte>> ex;
    for (const sedpack::ValueView& v : buf.Views()) {
      ex.emplace_back(v.data.begin(), v.data.end());
      if (e == 0) {
        w.dtypes.push_back(v.dtype);
        w.shapes.push_back(v.shape);
      }
      w.raw_bytes += v.data.size();
    }
    w.values.push_back(std::move(ex));
  }
  w.examples_per_shard = 256;
  return w;
}

// ASCAD-shaped: int8[700] traces = Gaussian noise (sd 12) + a Hamming-weight
// leak of Sbox(pt[2] ^ key[2]) around sample 400 (4 LSB per unit), a slow
// baseline wander; plaintext and key uint8[16] (fixed key, as ASCAD v1 fixed).
Workload Ascad(int examples) {
  static const std::uint8_t kSbox0[16] = {0x63, 0x7c, 0x77, 0x7b, 0xf2, 0x6b, 0x6f, 0xc5,
                                          0x30, 0x01, 0x67, 0x2b, 0xfe, 0xd7, 0xab, 0x76};
  Workload w;
  w.name = "ASCAD";
  w.attributes = {Attr("traces", "int8", {700}), Attr("plaintext", "uint8", {16}), Attr("key", "uint8", {16})};
  w.dtypes = {sedpack::DType::kInt8, sedpack::DType::kUInt8, sedpack::DType::kUInt8};
  w.shapes = {{700}, {16}, {16}};
  std::mt19937_64 rng(7);
  std::normal_distribution<float> noise(0.0f, 12.0f);
  std::uint8_t key[16];
  for (auto& k : key) k = static_cast<std::uint8_t>(rng());
  for (int e = 0; e < examples; ++e) {
    std::uint8_t pt[16];
    for (auto& p : pt) p = static_cast<std::uint8_t>(rng());
    const std::uint8_t x = pt[2] ^ key[2];
    const int hw = __builtin_popcount(kSbox0[x & 15] ^ (x >> 4));  // A cheap nonlinear stand-in.
    std::int8_t t[700];
    for (int i = 0; i < 700; ++i) {
      float v = 20.0f * std::sin(i * 0.02f) + noise(rng);
      if (i >= 395 && i < 405) v += 4.0f * static_cast<float>(hw);
      t[i] = static_cast<std::int8_t>(std::clamp(std::lround(v), -128L, 127L));
    }
    w.values.push_back({AsBytes(t, 700), AsBytes(pt, 16), AsBytes(key, 16)});
    w.raw_bytes += 700 + 32;
  }
  w.examples_per_shard = 10000;  // ~7 MB shards.
  return w;
}

sedpack::DatasetStructure Structure(const Workload& w, Compression c) {
  sedpack::DatasetStructure s;
  s.saved_data_description = w.attributes;
  s.compression = c;
  s.examples_per_shard = w.examples_per_shard;
  s.shard_file_type = sedpack::ShardFileType::kFb;
  s.hash_checksum_algorithms = {sedpack::HashAlgorithm::kSha256};
  return s;
}

// The uncompressed fb shards the writer would compress.
std::vector<Bytes> RawShards(const Workload& w) {
  std::vector<Bytes> shards;
  auto schema = Structure(w, Compression::kNone).Schema();
  Die(schema.status(), "schema");
  for (std::size_t first = 0; first < w.values.size(); first += w.examples_per_shard) {
    auto writer = sedpack::MakeShardWriter(sedpack::ShardFileType::kFb, Compression::kNone, *schema);
    Die(writer.status(), "writer");
    for (std::size_t e = first; e < std::min(w.values.size(), first + w.examples_per_shard); ++e) {
      auto v = w.Views(e);
      Die((*writer)->Add(v), "add");
    }
    auto bytes = (*writer)->Finish();
    Die(bytes.status(), "finish");
    shards.push_back(std::move(*bytes));
  }
  return shards;
}

std::uint64_t Total(const std::vector<Bytes>& v) {
  std::uint64_t n = 0;
  for (const Bytes& b : v) n += b.size();
  return n;
}

struct CodecResult {
  double ratio = 0, compress_mbs = 0, decompress_mbs = 0;
};

CodecResult MeasureCodec(const std::vector<Bytes>& shards, Compression c, int level) {
  const double mb = Total(shards) / 1e6;
  auto codec = sedpack::MakeCodec(c, sedpack::CodecOptions{level, 1, 0});
  Die(codec.status(), "codec");
  std::vector<Bytes> z(shards.size());
  const double t0 = ThreadCpu();
  for (std::size_t i = 0; i < shards.size(); ++i) Die((*codec)->Compress(shards[i], &z[i]), "compress");
  const double t1 = ThreadCpu();
  Bytes out;
  for (const Bytes& b : z) Die((*codec)->Decompress(b, sedpack::kDefaultMaxDecompressedBytes, &out), "decompress");
  const double t2 = ThreadCpu();
  CodecResult r;
  r.ratio = static_cast<double>(Total(z)) / static_cast<double>(Total(shards));
  r.compress_mbs = mb / (t1 - t0);
  r.decompress_mbs = mb / (t2 - t1);
  return r;
}

// ---- Decode points ------------------------------------------------------------

struct BlocksResult {
  double ratio = 0, compress_mbs = 0, decompress_mbs = 0, fetches = 0;
  std::size_t points = 0;  // Per shard, on average.
};

// The writer's and reader's paths (CompressToBuffer, DecompressTo) at block
// size `b`, best of 3; then `example_bytes` ranges at random offsets through
// DecodeRangeAt (b = 0: a whole-shard decode each).
BlocksResult MeasureBlocks(const std::vector<Bytes>& shards, Compression c, int level, std::uint64_t b,
                           std::uint64_t example_bytes) {
  namespace ci = sedpack::codecs_internal;
  const double mb = Total(shards) / 1e6;
  sedpack::CodecOptions o{level, 1, b};
  std::vector<ci::ByteBuffer> z(shards.size());
  std::vector<std::vector<ci::DecodePoint>> points(shards.size());
  BlocksResult r;
  double best_c = 1e30, best_d = 1e30;
  for (int rep = 0; rep < 3; ++rep) {
    const double t0 = ThreadCpu();
    for (std::size_t i = 0; i < shards.size(); ++i) {
      Die(ci::CompressToBuffer(c, o, shards[i], &z[i], &points[i]), "compress");
    }
    const double t1 = ThreadCpu();
    ci::ByteBuffer out;
    for (const auto& f : z) Die(ci::DecompressTo(c, f.span(), sedpack::kDefaultMaxDecompressedBytes, &out), "decompress");
    const double t2 = ThreadCpu();
    best_c = std::min(best_c, t1 - t0);
    best_d = std::min(best_d, t2 - t1);
  }
  std::uint64_t stored = 0;
  for (std::size_t i = 0; i < z.size(); ++i) {
    stored += z[i].size();
    r.points += points[i].size();
  }
  r.points /= shards.size();
  r.ratio = static_cast<double>(stored) / static_cast<double>(Total(shards));
  r.compress_mbs = mb / best_c;
  r.decompress_mbs = mb / best_d;
  std::mt19937_64 rng(1);
  const int fetches = b == 0 ? 10 : 400;
  std::uint64_t sum = 0;
  const double t0 = ThreadCpu();
  for (int k = 0; k < fetches; ++k) {
    const std::size_t i = rng() % z.size();
    const std::uint64_t size = std::min<std::uint64_t>(example_bytes, shards[i].size());
    const std::uint64_t offset = rng() % (shards[i].size() - size + 1);
    const ci::ByteBuffer& f = z[i];
    if (b == 0) {
      ci::ByteBuffer out;
      Die(ci::DecompressTo(c, f.span(), sedpack::kDefaultMaxDecompressedBytes, &out), "decompress");
      sum += static_cast<std::uint8_t>(out.data()[offset]);
      continue;
    }
    const ci::ReadStoredAt read_at = [&f](std::uint64_t at, std::span<std::byte> dst) {
      std::memcpy(dst.data(), f.data() + at, dst.size());
      return sedpack::Status::OK();
    };
    auto got = ci::DecodeRangeAt(c, points[i], f.size(), shards[i].size(), read_at, offset, size);
    Die(got.status(), "decode range");
    if (std::memcmp(got->data(), shards[i].data() + offset, size) != 0) {
      std::fprintf(stderr, "bench: a range decoded wrong!\n");
      std::exit(1);
    }
    sum += static_cast<std::uint8_t>(got->data()[0]);
  }
  r.fetches = fetches / (ThreadCpu() - t0);
  if (sum == 1) std::fprintf(stderr, " ");
  return r;
}

void MeasureAllBlocks(const Workload& w, const std::vector<Bytes>& shards, const std::vector<std::uint64_t>& blocks,
                      const std::vector<std::pair<Compression, int>>& codecs) {
  const std::uint64_t example_bytes = w.raw_bytes / std::max<std::size_t>(1, w.values.size());
  std::printf("# %s decode points: B = decoded bytes between points (0: none); per core; fetch = one "
              "%llu-byte range\n",
              w.name.c_str(), static_cast<unsigned long long>(example_bytes));
  std::printf("%-8s %-5s %5s %8s %6s %7s %8s %8s %8s %8s %8s %9s\n", "data", "codec", "level", "B", "points",
              "ratio", "size+%", "comp", "comp%", "decomp", "decomp%", "fetch/s");
  for (const auto& [c, level] : codecs) {
    BlocksResult base;
    for (std::uint64_t b : blocks) {
      const BlocksResult r = MeasureBlocks(shards, c, level, b, example_bytes);
      if (b == 0) base = r;
      const auto pct = [](double x, double y) { return y > 0 ? 100.0 * (x / y - 1.0) : 0.0; };
      std::printf("%-8s %-5s %5d %8llu %6zu %7.4f %+8.2f %8.1f %+8.1f %8.1f %+8.1f %9.1f\n", w.name.c_str(),
                  std::string(sedpack::CompressionName(c)).c_str(), level, static_cast<unsigned long long>(b),
                  r.points, r.ratio, pct(r.ratio, base.ratio), r.compress_mbs, pct(r.compress_mbs, base.compress_mbs),
                  r.decompress_mbs, pct(r.decompress_mbs, base.decompress_mbs), r.fetches);
      std::fflush(stdout);
    }
  }
}

// ---- Single-library limits for DEFLATE (one buffer in, one out, no framing work) ----

CodecResult ZlibLimit(const std::vector<Bytes>& shards, int level) {
  const double mb = Total(shards) / 1e6;
  std::vector<Bytes> z(shards.size());
  const double t0 = ThreadCpu();
  for (std::size_t i = 0; i < shards.size(); ++i) {
    uLongf n = compressBound(shards[i].size());
    z[i].resize(n);
    compress2(reinterpret_cast<Bytef*>(z[i].data()), &n, reinterpret_cast<const Bytef*>(shards[i].data()),
              shards[i].size(), level);
    z[i].resize(n);
  }
  const double t1 = ThreadCpu();
  for (std::size_t i = 0; i < shards.size(); ++i) {
    Bytes out(shards[i].size());
    uLongf n = out.size();
    uncompress(reinterpret_cast<Bytef*>(out.data()), &n, reinterpret_cast<const Bytef*>(z[i].data()), z[i].size());
  }
  const double t2 = ThreadCpu();
  return {static_cast<double>(Total(z)) / Total(shards), mb / (t1 - t0), mb / (t2 - t1)};
}

#ifdef SEDPACK_HAVE_ISAL
// `tokens`: the level buffer's room for DEFLATE tokens (ISA-L's default is
// 64 Ki; the library uses 512 Ki at levels 1 and 2).
CodecResult IsalLimit(const std::vector<Bytes>& shards, int level, std::size_t tokens) {
  const double mb = Total(shards) / 1e6;
  std::vector<Bytes> z(shards.size());
  std::vector<std::uint8_t> level_buf(ISAL_DEF_LVL3_REQ + ISAL_DEF_LVL3_TOKEN_SIZE * tokens);
  const double t0 = ThreadCpu();
  for (std::size_t i = 0; i < shards.size(); ++i) {
    z[i].resize(shards[i].size() + shards[i].size() / 64 + 65536);
    isal_zstream zs;
    isal_deflate_stateless_init(&zs);
    zs.level = static_cast<std::uint32_t>(level);
    zs.level_buf = level_buf.data();
    zs.level_buf_size = static_cast<std::uint32_t>(level_buf.size());
    zs.gzip_flag = IGZIP_GZIP;
    zs.end_of_stream = 1;
    zs.next_in = const_cast<std::uint8_t*>(reinterpret_cast<const std::uint8_t*>(shards[i].data()));
    zs.avail_in = static_cast<std::uint32_t>(shards[i].size());
    zs.next_out = reinterpret_cast<std::uint8_t*>(z[i].data());
    zs.avail_out = static_cast<std::uint32_t>(z[i].size());
    if (isal_deflate_stateless(&zs) != COMP_OK) std::fprintf(stderr, "bench: isal_deflate_stateless failed\n");
    z[i].resize(zs.total_out);
  }
  const double t1 = ThreadCpu();
  for (std::size_t i = 0; i < shards.size(); ++i) {
    Bytes out(shards[i].size());
    inflate_state st;
    isal_inflate_init(&st);
    st.crc_flag = ISAL_GZIP;
    st.next_in = reinterpret_cast<std::uint8_t*>(z[i].data());
    st.avail_in = static_cast<std::uint32_t>(z[i].size());
    st.next_out = reinterpret_cast<std::uint8_t*>(out.data());
    st.avail_out = static_cast<std::uint32_t>(out.size());
    isal_inflate_stateless(&st);
  }
  const double t2 = ThreadCpu();
  return {static_cast<double>(Total(z)) / Total(shards), mb / (t1 - t0), mb / (t2 - t1)};
}
#endif

#ifdef SEDPACK_BENCH_LIBDEFLATE
CodecResult LibdeflateLimit(const std::vector<Bytes>& shards, int level) {
  const double mb = Total(shards) / 1e6;
  std::vector<Bytes> z(shards.size());
  libdeflate_compressor* c = libdeflate_alloc_compressor(level);
  libdeflate_decompressor* d = libdeflate_alloc_decompressor();
  const double t0 = ThreadCpu();
  for (std::size_t i = 0; i < shards.size(); ++i) {
    z[i].resize(libdeflate_gzip_compress_bound(c, shards[i].size()));
    z[i].resize(libdeflate_gzip_compress(c, shards[i].data(), shards[i].size(), z[i].data(), z[i].size()));
  }
  const double t1 = ThreadCpu();
  for (std::size_t i = 0; i < shards.size(); ++i) {
    Bytes out(shards[i].size());
    libdeflate_gzip_decompress(d, z[i].data(), z[i].size(), out.data(), out.size(), nullptr);
  }
  const double t2 = ThreadCpu();
  libdeflate_free_compressor(c);
  libdeflate_free_decompressor(d);
  return {static_cast<double>(Total(z)) / Total(shards), mb / (t1 - t0), mb / (t2 - t1)};
}
#endif

// ---- The whole tool ---------------------------------------------------------------

struct ToolResult {
  double write_mbs = 0, read_mbs = 0, verify_mbs = 0;           // wall clock
  double write_cpu = 0, read_cpu = 0, verify_cpu = 0;           // per CPU second
};

ToolResult MeasureTool(const Workload& w, Compression c, int level, int threads, const std::string& root) {
  const double mb = w.raw_bytes / 1e6;
  ToolResult r;
  std::filesystem::remove_all(root);
  auto t0 = Clock::now();
  double c0 = ProcessCpu();
  {
    auto ds = sedpack::Dataset::Create(root, sedpack::Metadata{}, Structure(w, c));
    Die(ds.status(), "create");
    sedpack::FillerOptions o;
    o.concurrency = threads;
    o.codec.level = level;
    auto filler = sedpack::Filler::Make(*ds, o);
    Die(filler.status(), "filler");
    for (std::size_t e = 0; e < w.values.size(); ++e) {
      auto v = w.Views(e);
      Die((*filler)->WriteExample(sedpack::Split::kTrain, v), "write");
    }
    Die((*filler)->Finish(), "finish");
  }
  r.write_mbs = mb / Seconds(t0, Clock::now());
  r.write_cpu = mb / (ProcessCpu() - c0);
  t0 = Clock::now();
  c0 = ProcessCpu();
  {
    auto ds = sedpack::Dataset::Open(root);
    Die(ds.status(), "open");
    sedpack::ReadOptions o;
    o.prefetch_shards = 2;
    o.verify_hashes = true;
    auto reader = sedpack::ExampleReader::Make(*ds, sedpack::Split::kTrain, o);
    Die(reader.status(), "reader");
    std::uint64_t sum = 0;
    for (;;) {
      auto ex = (*reader)->Next();
      Die(ex.status(), "next");
      if (!*ex) break;
      const auto v = (*ex)->Get(0);
      sum += static_cast<std::uint8_t>(v.data[v.data.size() / 2]);
    }
    if (sum == 1) std::fprintf(stderr, " ");  // Keep the loop.
  }
  r.read_mbs = mb / Seconds(t0, Clock::now());
  r.read_cpu = mb / (ProcessCpu() - c0);
  t0 = Clock::now();
  c0 = ProcessCpu();
  sedpack::CheckOptions co;
  co.deep = true;
  auto report = sedpack::CheckDataset(root, co);
  Die(report.status(), "check");
  if (!report->ok()) std::fprintf(stderr, "bench: verify found problems!\n");
  r.verify_mbs = mb / Seconds(t0, Clock::now());
  r.verify_cpu = mb / (ProcessCpu() - c0);
  std::filesystem::remove_all(root);
  return r;
}

std::vector<int> Levels(Compression c, bool all) {
  auto r = sedpack::CodecLevels(c);
  Die(r.status(), "levels");
  std::vector<int> out;
  if (all) {
    for (int l = std::max(r->min, -7); l <= r->max; ++l) out.push_back(l);
    return out;
  }
  switch (c) {
    case Compression::kGzip:
      return {1, 2, 3, 4, 6, 9};
    case Compression::kBz2:
      return {1, 9};
    case Compression::kLzma:
      return {0, 1, 3, 6};
    case Compression::kLz4:
      return {0, 1, 3, 6, 9, 12};
    case Compression::kZstd:
      return {-5, -1, 1, 3, 6, 9, 12, 15, 19};
    default:
      return {r->default_level};
  }
}

}  // namespace

int main(int argc, char** argv) {
  int tinyaes_examples = 512, ascad_examples = 50000;
  std::string codecs = "NONE,GZIP,ZLIB,BZ2,LZMA,LZ4,ZSTD";
  std::string tool_levels = "default";
  std::string blocks_arg = "0,65536,262144,1048576,4194304";
  std::string block_codecs_arg = "LZ4:0,GZIP:1,GZIP:6";
  bool all_levels = false;
  int threads = 0;
  std::string dir = (std::filesystem::temp_directory_path() / "sedpack_codec_bench").string();
  for (int i = 1; i < argc; ++i) {
    std::string k = argv[i];
    const char* v = i + 1 < argc ? argv[i + 1] : "";
    if (k == "--all-levels") {
      all_levels = true;
      continue;
    }
    if (i + 1 >= argc) k.clear();
    if (k == "--tinyaes-examples") tinyaes_examples = std::atoi(v);
    else if (k == "--ascad-examples") ascad_examples = std::atoi(v);
    else if (k == "--codecs") codecs = v;
    else if (k == "--tool-levels") tool_levels = v;
    else if (k == "--threads") threads = std::atoi(v);
    else if (k == "--dir") dir = v;
    else if (k == "--blocks") blocks_arg = v;
    else if (k == "--block-codecs") block_codecs_arg = v;
    else {
      std::fprintf(stderr,
                   "usage: %s [--tinyaes-examples N] [--ascad-examples N] [--codecs LIST] [--all-levels]\n"
                   "          [--tool-levels default|all|none] [--threads T] [--dir D] [--blocks LIST|none]\n"
                   "          [--block-codecs CODEC:LEVEL,...]\n",
                   argv[0]);
      return 2;
    }
    ++i;
  }
  if (threads <= 0) threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  std::printf("DEFLATE: GZIP/ZLIB compress with %s at levels 1-3, zlib above; decompress with %s\n",
              std::string(sedpack::DeflateLibrary(1)).c_str(), std::string(sedpack::InflateLibrary()).c_str());
  std::printf("MB/s of uncompressed bytes; tool: write = Filler with %d threads, read = reader with sha256 "
              "check, verify = check --deep\n", threads);
  std::printf("%-8s %-5s %5s %-17s %7s %8s %8s | %8s %8s %8s | %8s %8s %8s\n", "data", "codec", "level", "by",
              "ratio", "comp", "decomp", "write", "read", "verify", "wr/cpu", "rd/cpu", "vf/cpu");
  std::vector<Workload> workloads;
  if (tinyaes_examples > 0) workloads.push_back(TinyAes(tinyaes_examples));
  if (ascad_examples > 0) workloads.push_back(Ascad(ascad_examples));
  std::vector<std::uint64_t> blocks;
  for (std::size_t pos = 0; blocks_arg != "none" && pos < blocks_arg.size();) {
    const std::size_t comma = std::min(blocks_arg.find(',', pos), blocks_arg.size());
    blocks.push_back(std::strtoull(blocks_arg.substr(pos, comma - pos).c_str(), nullptr, 10));
    pos = comma + 1;
  }
  std::vector<std::pair<Compression, int>> block_codecs;
  for (std::size_t pos = 0; pos < block_codecs_arg.size();) {
    const std::size_t comma = std::min(block_codecs_arg.find(',', pos), block_codecs_arg.size());
    const std::string item = block_codecs_arg.substr(pos, comma - pos);
    pos = comma + 1;
    const std::size_t colon = item.find(':');
    auto parsed = sedpack::ParseCompression(item.substr(0, colon));
    Die(parsed.status(), "--block-codecs");
    block_codecs.emplace_back(*parsed, colon == std::string::npos ? sedpack::kDefaultCodecLevel
                                                                  : std::atoi(item.c_str() + colon + 1));
  }
  for (const Workload& w : workloads) {
    const std::vector<Bytes> shards = RawShards(w);
    std::printf("# %s: %zu examples, %.1f MB raw, %zu fb shards of %.1f MB\n", w.name.c_str(), w.values.size(),
                w.raw_bytes / 1e6, shards.size(), Total(shards) / 1e6 / shards.size());
    if (!blocks.empty()) MeasureAllBlocks(w, shards, blocks, block_codecs);
    std::size_t pos = 0;
    while (pos <= codecs.size()) {
      const std::size_t comma = std::min(codecs.find(',', pos), codecs.size());
      const std::string name = codecs.substr(pos, comma - pos);
      pos = comma + 1;
      if (name.empty()) continue;
      auto parsed = sedpack::ParseCompression(name == "NONE" || name == "none" ? std::string() : name);
      Die(parsed.status(), "codec name");
      const Compression c = *parsed;
      auto range = sedpack::CodecLevels(c);
      Die(range.status(), "levels");
      // fb ZLIB writes the same gzip member as GZIP: its default level stands for the rest.
      const std::vector<int> levels =
          c == Compression::kZlib || c == Compression::kNone ? std::vector<int>{range->default_level}
                                                             : Levels(c, all_levels);
      for (int level : levels) {
        const CodecResult r = MeasureCodec(shards, c, level);
        const bool deflate = c == Compression::kGzip || c == Compression::kZlib;
        const std::string by = deflate ? std::string(sedpack::DeflateLibrary(level)) : "sedpack";
        const bool tool = tool_levels == "all" || (tool_levels == "default" &&
                                                   (level == range->default_level || (deflate && level == 9)));
        std::printf("%-8s %-5s %5d %-17s %7.4f %8.1f %8.1f", w.name.c_str(), name.c_str(), level, by.c_str(),
                    r.ratio, r.compress_mbs, r.decompress_mbs);
        if (tool) {
          const ToolResult t = MeasureTool(w, c, level, threads, dir + "/" + name);
          std::printf(" | %8.1f %8.1f %8.1f | %8.1f %8.1f %8.1f", t.write_mbs, t.read_mbs, t.verify_mbs,
                      t.write_cpu, t.read_cpu, t.verify_cpu);
        }
        std::printf("\n");
        std::fflush(stdout);
        if (c != Compression::kGzip) continue;
        // The libraries alone, on the same bytes.
        auto limit = [&](const char* lib, const CodecResult& l) {
          std::printf("%-8s %-5s %5d %-17s %7.4f %8.1f %8.1f\n", w.name.c_str(), "", level, lib, l.ratio,
                      l.compress_mbs, l.decompress_mbs);
        };
        limit("limit: zlib", ZlibLimit(shards, level));
#ifdef SEDPACK_HAVE_ISAL
        if (level <= 3) limit("limit: ISA-L", IsalLimit(shards, level, 64 * IGZIP_K));
        if (level <= 2) limit("limit: ISA-L 512K", IsalLimit(shards, level, 512 * IGZIP_K));
#endif
#ifdef SEDPACK_BENCH_LIBDEFLATE
        limit("limit: libdeflate", LibdeflateLimit(shards, level));
#endif
        std::fflush(stdout);
      }
    }
  }
  std::filesystem::remove_all(dir);
  return 0;
}
