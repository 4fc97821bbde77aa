// SPDX-License-Identifier: Apache-2.0
// Compression levels, the fast DEFLATE path (ISA-L where built) and its
// interoperability with plain zlib in both directions.
#include <lz4frame.h>
#include <zlib.h>
#include <zstd.h>

#include <algorithm>
#include <cstring>
#include <ctime>
#include <string>
#include <vector>

#include "codecs/byte_buffer.h"
#include "codecs_test_util.h"
#include "sedpack/codecs/compress.h"
#include "support/test_support.h"

namespace sedpack {
namespace {

using ::sedpack::testing::AllocPeak;
using ::sedpack::testing::CompressibleBytes;
using ::sedpack::testing::RandomBytes;
using ::sedpack::testing::ResetAllocPeak;
using ::sedpack::testing::U8;
using Bytes = std::vector<std::byte>;

constexpr std::size_t kMiB = std::size_t{1} << 20;

std::string Label(Compression c) {
  const std::string_view name = CompressionName(c);
  return name.empty() ? "NONE" : std::string(name);
}

Bytes Compress(Compression c, int level, std::span<const std::byte> data, int threads = 1) {
  auto codec = MakeCodec(c, CodecOptions{level, threads});
  EXPECT_TRUE(codec.ok()) << codec.status().ToString();
  Bytes out;
  if (!codec.ok()) return out;
  const Status st = (*codec)->Compress(data, &out);
  EXPECT_TRUE(st.ok()) << st.ToString();
  return out;
}

// Half compressible pages, half random bytes (stored blocks for DEFLATE).
Bytes Mixed(std::size_t n) {
  Bytes data = CompressibleBytes(n, 11);
  const Bytes noise = RandomBytes(n / 2, 12);
  std::copy(noise.begin(), noise.end(), data.end() - static_cast<std::ptrdiff_t>(noise.size()));
  return data;
}

// Plain zlib's gunzip of one member (the reader every other tool uses).
Bytes ZlibGunzip(const Bytes& gz, std::size_t expected, int* ret_out, std::size_t* left) {
  z_stream zs{};
  EXPECT_EQ(inflateInit2(&zs, 15 + 16), Z_OK);
  Bytes out(expected + 1);
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<std::byte*>(gz.data()));
  zs.avail_in = static_cast<uInt>(gz.size());
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = static_cast<uInt>(out.size());
  *ret_out = inflate(&zs, Z_FINISH);
  *left = zs.avail_in;
  out.resize(zs.total_out);
  inflateEnd(&zs);
  return out;
}

// zlib's gzip at `level`, optionally with a file name in the header (FNAME).
Bytes ZlibGzip(const Bytes& data, int level, const char* name) {
  z_stream zs{};
  EXPECT_EQ(deflateInit2(&zs, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY), Z_OK);
  gz_header h{};
  if (name != nullptr) {
    h.name = reinterpret_cast<Bytef*>(const_cast<char*>(name));
    EXPECT_EQ(deflateSetHeader(&zs, &h), Z_OK);
  }
  Bytes out(deflateBound(&zs, data.size()) + 64);
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<std::byte*>(data.data()));
  zs.avail_in = static_cast<uInt>(data.size());
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(deflate(&zs, Z_FINISH), Z_STREAM_END);
  out.resize(zs.total_out);
  deflateEnd(&zs);
  return out;
}

// ---- Level ranges and validation ------------------------------------------------

TEST(CodecLevelsTest, RangesAndDefaults) {
  struct Want {
    Compression c;
    int min, max, def;
  };
  for (const Want& w : {Want{Compression::kNone, 0, 0, 0}, Want{Compression::kGzip, 1, 9, 1},
                        Want{Compression::kZlib, 1, 9, 1}, Want{Compression::kBz2, 1, 9, 9},
                        Want{Compression::kLzma, 0, 9, 6}, Want{Compression::kLz4, 0, 12, 0},
                        Want{Compression::kZstd, ZSTD_minCLevel(), ZSTD_maxCLevel(), 3},
                        Want{Compression::kZip, 1, 9, 6}}) {
    SCOPED_TRACE(Label(w.c));
    ASSERT_OK_AND_ASSIGN(const CodecLevelRange r, CodecLevels(w.c));
    EXPECT_EQ(r.min, w.min);
    EXPECT_EQ(r.max, w.max);
    EXPECT_EQ(r.default_level, w.def);
    EXPECT_FALSE(r.note.empty());
    ASSERT_OK_AND_ASSIGN(const int resolved, ResolveCodecLevel(w.c, kDefaultCodecLevel));
    EXPECT_EQ(resolved, w.def);
  }
}

TEST(CodecLevelsTest, OutOfRangeNamesCodecAndRange) {
  EXPECT_STATUS(StatusCode::kInvalidArgument, "GZIP: valid levels are 1..9",
                MakeCodec(Compression::kGzip, CodecOptions{10, 1}).status());
  EXPECT_STATUS(StatusCode::kInvalidArgument, "ZLIB: valid levels are 1..9",
                MakeCodec(Compression::kZlib, CodecOptions{0, 1}).status());
  EXPECT_STATUS(StatusCode::kInvalidArgument, "LZ4: valid levels are 0..12",
                MakeCodec(Compression::kLz4, CodecOptions{13, 1}).status());
  EXPECT_STATUS(StatusCode::kInvalidArgument, "ZSTD: valid levels are",
                MakeCodec(Compression::kZstd, CodecOptions{ZSTD_maxCLevel() + 1, 1}).status());
  EXPECT_STATUS(StatusCode::kInvalidArgument, "LZMA: valid levels are 0..9",
                MakeCodec(Compression::kLzma, CodecOptions{-1, 1}).status());
  EXPECT_STATUS(StatusCode::kInvalidArgument, "BZ2",
                MakeCodec(Compression::kBz2, CodecOptions{0, 1}).status());
  EXPECT_STATUS(StatusCode::kInvalidArgument, "NONE has no levels",
                MakeCodec(Compression::kNone, CodecOptions{1, 1}).status());
  EXPECT_STATUS(StatusCode::kInvalidArgument, "threads",
                MakeCodec(Compression::kZstd, CodecOptions{3, 0}).status());
  EXPECT_OK(ValidateCodecLevel(Compression::kZstd, -5));
  EXPECT_OK(ValidateCodecLevel(Compression::kGzip, kDefaultCodecLevel));
}

// Every level of every codec writes the codec's standard format: the default
// reader (no options) decodes it.
TEST(CodecLevelsTest, EveryLevelRoundTrips) {
  const Bytes data = Mixed(48'000);
  for (Compression c : {Compression::kGzip, Compression::kZlib, Compression::kBz2, Compression::kLzma,
                        Compression::kLz4, Compression::kZstd}) {
    ASSERT_OK_AND_ASSIGN(const CodecLevelRange r, CodecLevels(c));
    // xz presets 7..9 need 100s of MiB of encoder memory; zstd's top levels
    // are slow under the sanitizers: a few levels stand for the rest there.
    const int top = c == Compression::kLzma ? 6 : c == Compression::kZstd ? 19 : r.max;
    const int step = c == Compression::kZstd ? 3 : 1;
    for (int level = std::max(r.min, -5); level <= top; level += step) {
      SCOPED_TRACE(Label(c) + " level " + std::to_string(level));
      const Bytes z = Compress(c, level, data);
      ASSERT_FALSE(z.empty());
      ASSERT_OK_AND_ASSIGN(auto reader, MakeCodec(c));
      Bytes back;
      ASSERT_OK(reader->Decompress(z, data.size(), &back));
      EXPECT_TRUE(back == data);
    }
  }
}

TEST(CodecLevelsTest, HigherLevelsAreSmaller) {
  const Bytes data = CompressibleBytes(256 << 10, 3);
  EXPECT_LT(Compress(Compression::kLz4, 9, data).size(), Compress(Compression::kLz4, 0, data).size());
  EXPECT_LT(Compress(Compression::kZstd, 19, data).size(), Compress(Compression::kZstd, 1, data).size());
  EXPECT_LE(Compress(Compression::kGzip, 9, data).size(), Compress(Compression::kGzip, 1, data).size());
}

TEST(CodecLevelsTest, Lz4HcIsOneFrameWithContentSize) {
  const Bytes data = CompressibleBytes(300'000, 5);
  const Bytes f = Compress(Compression::kLz4, 12, data);
  ASSERT_GE(f.size(), 15u);
  EXPECT_EQ(U8(f, 0), 0x04);  // LZ4 frame magic 0x184D2204, little-endian.
  EXPECT_EQ(U8(f, 3), 0x18);
  EXPECT_NE(U8(f, 4) & 0x08, 0);  // Content size present.
  std::uint64_t size = 0;
  for (int i = 0; i < 8; ++i) size |= std::uint64_t{U8(f, 6 + i)} << (8 * i);
  EXPECT_EQ(size, data.size());
}

// ZSTD with workers: still one frame, with its content size, readable by the
// plain single-threaded decoder.
TEST(CodecLevelsTest, ZstdWorkersWriteOneFrameWithContentSize) {
  const Bytes data = CompressibleBytes(kZstdThreadedMinBytes + kMiB, 9);
  const Bytes one = Compress(Compression::kZstd, 3, data, 1);
  const Bytes many = Compress(Compression::kZstd, 3, data, 2);
  ASSERT_FALSE(many.empty());
  EXPECT_EQ(ZSTD_getFrameContentSize(many.data(), many.size()), data.size());
  EXPECT_EQ(ZSTD_findFrameCompressedSize(many.data(), many.size()), many.size());
  Bytes back(data.size());
  EXPECT_EQ(ZSTD_decompress(back.data(), back.size(), many.data(), many.size()), data.size());
  EXPECT_TRUE(back == data);
  EXPECT_FALSE(one.empty());
}

// ---- GZIP/ZLIB: the fast path stays standard ---------------------------------

TEST(FastDeflateTest, LibraryNames) {
  EXPECT_TRUE(DeflateLibrary(1) == "ISA-L" || DeflateLibrary(1) == "zlib");
  EXPECT_EQ(DeflateLibrary(9), "zlib");
  EXPECT_EQ(InflateLibrary(), DeflateLibrary(1));
}

// Our output at every level is one gzip member in CPython's header layout that
// plain zlib decodes, ending exactly at the end of the file.
TEST(FastDeflateTest, ZlibReadsOurOutputAtEveryLevel) {
  const Bytes data = Mixed(kMiB + 12345);  // Several DEFLATE blocks, stored ones too.
  for (Compression c : {Compression::kGzip, Compression::kZlib}) {
    for (int level : {kDefaultCodecLevel, 1, 2, 3, 4, 6, 9}) {
      SCOPED_TRACE(Label(c) + " level " + std::to_string(level));
      const auto before = static_cast<std::uint32_t>(std::time(nullptr));
      const Bytes gz = Compress(c, level, data);
      const auto after = static_cast<std::uint32_t>(std::time(nullptr));
      ASSERT_GE(gz.size(), 18u);
      EXPECT_EQ(U8(gz, 0), 0x1f);
      EXPECT_EQ(U8(gz, 1), 0x8b);
      EXPECT_EQ(U8(gz, 2), 0x08);
      EXPECT_EQ(U8(gz, 3), 0x00);
      const std::uint32_t mtime = U8(gz, 4) | (U8(gz, 5) << 8) | (U8(gz, 6) << 16) |
                                  (static_cast<std::uint32_t>(U8(gz, 7)) << 24);
      EXPECT_GE(mtime, before);
      EXPECT_LE(mtime, after);
      const int effective = level == kDefaultCodecLevel ? 1 : level;
      EXPECT_EQ(U8(gz, 8), effective == 9 ? 2 : effective == 1 ? 4 : 0);  // XFL as CPython.
      EXPECT_EQ(U8(gz, 9), 0xff);
      int ret = 0;
      std::size_t left = 0;
      const Bytes back = ZlibGunzip(gz, data.size(), &ret, &left);
      EXPECT_EQ(ret, Z_STREAM_END);
      EXPECT_EQ(left, 0u);
      EXPECT_TRUE(back == data);
    }
  }
}

// What zlib writes (any level, with or without FNAME, several members) we read.
TEST(FastDeflateTest, WeReadZlibOutput) {
  const Bytes a = Mixed(500'000);
  const Bytes b = CompressibleBytes(70'000, 21);
  for (int level : {1, 6, 9}) {
    SCOPED_TRACE(level);
    Bytes gz = ZlibGzip(a, level, level == 6 ? "shard.fb" : nullptr);
    const Bytes second = ZlibGzip(b, level, nullptr);
    gz.insert(gz.end(), second.begin(), second.end());
    gz.insert(gz.end(), 7, std::byte{0});  // Zero padding after the last member.
    for (Compression c : {Compression::kGzip, Compression::kZlib}) {
      ASSERT_OK_AND_ASSIGN(auto codec, MakeCodec(c));
      Bytes out;
      ASSERT_OK(codec->Decompress(gz, kMiB, &out));
      Bytes want = a;
      want.insert(want.end(), b.begin(), b.end());
      EXPECT_TRUE(out == want);
      // The cap counts every member.
      EXPECT_STATUS(StatusCode::kResourceExhausted, "limit",
                    codec->Decompress(gz, want.size() - 1, &out));
      ASSERT_OK(codec->Decompress(gz, want.size(), &out));
    }
  }
}

TEST(FastDeflateTest, CorruptChecksumAndLengthAreCorruption) {
  const Bytes data = Mixed(100'000);
  const Bytes gz = Compress(Compression::kGzip, kDefaultCodecLevel, data);
  ASSERT_OK_AND_ASSIGN(auto codec, MakeCodec(Compression::kGzip));
  Bytes out;
  Bytes bad_crc = gz;
  bad_crc[gz.size() - 8] ^= std::byte{1};
  EXPECT_STATUS(StatusCode::kCorruption, "GZIP", codec->Decompress(bad_crc, kMiB, &out));
  Bytes bad_len = gz;
  bad_len[gz.size() - 4] ^= std::byte{1};
  EXPECT_STATUS(StatusCode::kCorruption, "GZIP", codec->Decompress(bad_len, kMiB, &out));
  const Bytes cut(gz.begin(), gz.end() - 5);
  EXPECT_STATUS(StatusCode::kCorruption, "GZIP", codec->Decompress(cut, kMiB, &out));
  ASSERT_OK(codec->Decompress(gz, kMiB, &out));
  EXPECT_TRUE(out == data);
}

// A small crafted member that inflates far past the cap, with a trailer
// claiming 4 GiB - 1: refused before more than the cap is allocated.
TEST(FastDeflateTest, BombWithForgedSizeRefusedBeforeAllocation) {
  const Bytes zeros(24 * kMiB);
  Bytes gz = ZlibGzip(zeros, 6, nullptr);
  ASSERT_LT(gz.size(), 64u * 1024);
  for (std::size_t i = gz.size() - 4; i < gz.size(); ++i) gz[i] = std::byte{0xff};
  for (Compression c : {Compression::kGzip, Compression::kZlib}) {
    ASSERT_OK_AND_ASSIGN(auto codec, MakeCodec(c));
    Bytes out;
    ResetAllocPeak();
    const Status st = codec->Decompress(gz, kMiB, &out);
    const std::size_t peak = AllocPeak();
    EXPECT_STATUS(StatusCode::kResourceExhausted, Label(c), st);
    EXPECT_LE(peak, kMiB + 64 * 1024) << "largest allocation " << peak;
  }
}

// The pooled path the fb reader uses decodes the same bytes, with the same cap.
TEST(FastDeflateTest, PooledPathMatchesTheCodec) {
  const Bytes data = Mixed(700'000);
  const Bytes gz = Compress(Compression::kGzip, kDefaultCodecLevel, data);
  const Bytes z9 = ZlibGzip(data, 9, "x");
  for (const Bytes* in : {&gz, &z9}) {
    codecs_internal::ByteBuffer out;
    ASSERT_OK(codecs_internal::DecompressTo(Compression::kGzip, *in, data.size(), &out));
    ASSERT_EQ(out.size(), data.size());
    EXPECT_EQ(std::memcmp(out.data(), data.data(), data.size()), 0);
    EXPECT_STATUS(StatusCode::kResourceExhausted, "GZIP",
                  codecs_internal::DecompressTo(Compression::kGzip, *in, data.size() - 1, &out));
  }
  Bytes bomb = ZlibGzip(Bytes(16 * kMiB), 6, nullptr);
  codecs_internal::ByteBuffer out;
  EXPECT_STATUS(StatusCode::kResourceExhausted, "ZLIB",
                codecs_internal::DecompressTo(Compression::kZlib, bomb, kMiB, &out));
  EXPECT_LE(out.size(), kMiB + 1);  // The output window never passed the cap (+1).
  bomb[bomb.size() - 8] ^= std::byte{0x10};  // The CRC-32.
  EXPECT_STATUS(StatusCode::kCorruption, "ZLIB",
                codecs_internal::DecompressTo(Compression::kZlib, bomb, 32 * kMiB, &out));
}

// The member with its mtime (bytes 4..7) zeroed, to compare two compressions.
Bytes WithoutMtime(Bytes gz) {
  for (std::size_t i = 4; i < 8 && i < gz.size(); ++i) gz[i] = std::byte{0};
  return gz;
}

// Streamed output (CompressTo) is the bytes of the one-buffer path whatever the
// number of threads (ISA-L cuts segments the same way for any count), arrives
// in pieces well below the whole output, and plain zlib reads it. Sizes at and
// around the 4 MiB segment boundary, and the empty input.
TEST(FastDeflateTest, StreamedOutputMatchesAtAnyThreadCount) {
  constexpr std::size_t kSeg = 4 * kMiB;
  const Bytes large = Mixed(2 * kSeg + 12345);
  for (std::size_t n : {std::size_t{0}, std::size_t{1}, kSeg - 1, kSeg, kSeg + 1, large.size()}) {
    const Bytes data(large.begin(), large.begin() + static_cast<std::ptrdiff_t>(n));
    for (Compression c : {Compression::kGzip, Compression::kZlib}) {
      for (int level : {kDefaultCodecLevel, 2, 3, 6}) {
        // One codec name and one ISA-L level are enough below the largest size.
        if (n != large.size() && (c == Compression::kZlib || level == 2)) continue;
        codecs_internal::ByteBuffer whole;
        ASSERT_OK(codecs_internal::CompressToBuffer(c, CodecOptions{level, 1}, data, &whole));
        const Bytes want = WithoutMtime(Bytes(whole.data(), whole.data() + whole.size()));
        EXPECT_TRUE(WithoutMtime(Compress(c, level, data)) == want);
        for (int threads : {1, 2, 3, 8}) {
          if (level == 6 && threads > 1) continue;  // zlib levels take one thread.
          SCOPED_TRACE(Label(c) + " level " + std::to_string(level) + ", " + std::to_string(n) +
                       " bytes, " + std::to_string(threads) + " threads");
          Bytes got;
          std::size_t pieces = 0, largest = 0;
          ASSERT_OK(codecs_internal::CompressTo(c, CodecOptions{level, threads}, data,
                                                [&](std::span<const std::byte> piece) {
                                                  got.insert(got.end(), piece.begin(), piece.end());
                                                  ++pieces;
                                                  largest = std::max(largest, piece.size());
                                                  return Status::OK();
                                                }));
          EXPECT_TRUE(WithoutMtime(got) == want) << got.size() << " bytes against " << want.size();
          if (n == large.size()) {
            EXPECT_GE(pieces, 3u);
            EXPECT_LE(largest, kSeg + kSeg / 64);  // Never the whole output at once.
          }
          int ret = 0;
          std::size_t left = 0;
          EXPECT_TRUE(ZlibGunzip(got, n, &ret, &left) == data);
          EXPECT_EQ(ret, Z_STREAM_END);
          EXPECT_EQ(left, 0u);
        }
      }
    }
  }
}

// A sink that fails stops the compression with its status, on every path (the
// threads stop and are joined; nothing more reaches the sink).
TEST(FastDeflateTest, StreamedSinkErrorStopsCompression) {
  const Bytes data = Mixed(5 * 4 * kMiB + 999);
  for (int level : {1, 6}) {
    for (int threads : {1, 2, 4}) {
      for (int fail_at : {0, 1, 3}) {
        SCOPED_TRACE("level " + std::to_string(level) + ", " + std::to_string(threads) +
                     " threads, failing piece " + std::to_string(fail_at));
        int calls = 0;
        const Status st = codecs_internal::CompressTo(
            Compression::kGzip, CodecOptions{level, threads}, data, [&](std::span<const std::byte>) {
              return calls++ == fail_at ? Status::IOError("disk full at piece ", fail_at) : Status::OK();
            });
        EXPECT_STATUS(StatusCode::kIOError, "disk full at piece " + std::to_string(fail_at), st);
        EXPECT_EQ(calls, fail_at + 1);
      }
    }
  }
}

// TFRecord streams stay on zlib and take zlib's levels.
TEST(FastDeflateTest, TfRecordLevels) {
  const Bytes data = Mixed(100'000);
  for (int level : {kDefaultCodecLevel, 1, 9}) {
    ASSERT_OK_AND_ASSIGN(auto codec, MakeTfRecordCodec(Compression::kZlib, level));
    Bytes z, back;
    ASSERT_OK(codec->Compress(data, &z));
    EXPECT_EQ(U8(z, 0), 0x78);  // zlib (RFC 1950) header.
    ASSERT_OK(codec->Decompress(z, kMiB, &back));
    EXPECT_TRUE(back == data);
  }
  EXPECT_STATUS(StatusCode::kInvalidArgument, "1..9",
                MakeTfRecordCodec(Compression::kGzip, 12).status());
}

}  // namespace
}  // namespace sedpack
