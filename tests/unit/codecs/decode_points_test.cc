// SPDX-License-Identifier: Apache-2.0
// Decode points: files written with them decode whole as before, every range
// decoded from the points equals the same bytes of the whole decode, damaged
// points and blocks give Corruption (never a crash), and the plain Python
// readers (the reference's gzip / lz4.frame) read the files.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "codecs/byte_buffer.h"
#include "codecs/decode_points_internal.h"
#include "codecs_test_util.h"
#include "sedpack/codecs/compress.h"
#include "support/test_support.h"

namespace sedpack {
namespace {

using codecs_internal::ByteBuffer;
using codecs_internal::DecodePoint;
using codecs_internal::DecodeRangeAt;
using codecs_internal::FindDecodePoints;
using ::sedpack::testing::CompressibleBytes;
using ::sedpack::testing::RandomBytes;
using Bytes = std::vector<std::byte>;

constexpr std::uint64_t kKiB = 1024;

std::string Label(Compression c) { return std::string(CompressionName(c)); }

// Half compressible, half noise, so blocks differ in ratio (some LZ4 blocks
// are stored uncompressed).
Bytes Mixed(std::size_t n, std::uint64_t seed) {
  Bytes out = CompressibleBytes(n, seed);
  const Bytes noise = RandomBytes(n, seed + 7);
  for (std::size_t pos = 0; pos < n; pos += 96 * kKiB) {
    const std::size_t len = std::min<std::size_t>(40 * kKiB, n - pos);
    std::copy_n(noise.begin() + static_cast<std::ptrdiff_t>(pos), len, out.begin() + static_cast<std::ptrdiff_t>(pos));
  }
  return out;
}

struct Written {
  Bytes file;
  std::vector<DecodePoint> points;
};

Written Write(Compression c, int level, std::uint64_t block_bytes, const Bytes& data) {
  CodecOptions o;
  o.level = level;
  o.block_bytes = block_bytes;
  ByteBuffer out;
  Written w;
  const Status st = codecs_internal::CompressToBuffer(c, o, data, &out, &w.points);
  EXPECT_TRUE(st.ok()) << st.ToString();
  w.file.assign(out.data(), out.data() + out.size());
  return w;
}

// Reads through a counter, so a test can see how much of the file a range needed.
struct Reader {
  const Bytes* file;
  std::uint64_t bytes_read = 0;
  codecs_internal::ReadStoredAt Fn() {
    return [this](std::uint64_t offset, std::span<std::byte> out) -> Status {
      if (offset > file->size() || out.size() > file->size() - offset) {
        return Status::IOError("read past the end");
      }
      std::copy_n(file->begin() + static_cast<std::ptrdiff_t>(offset), out.size(), out.begin());
      bytes_read += out.size();
      return Status::OK();
    };
  }
};

Result<Bytes> Range(Compression c, const Written& w, std::span<const DecodePoint> points, std::uint64_t decoded,
                    std::uint64_t offset, std::uint64_t size, std::uint64_t* read = nullptr) {
  Reader r{&w.file};
  SEDPACK_ASSIGN_OR_RETURN(ByteBuffer b,
                           DecodeRangeAt(c, points, w.file.size(), decoded, r.Fn(), offset, size));
  if (read != nullptr) *read = r.bytes_read;
  return Bytes(b.data(), b.data() + b.size());
}

Bytes Slice(const Bytes& d, std::uint64_t offset, std::uint64_t size) {
  return Bytes(d.begin() + static_cast<std::ptrdiff_t>(offset),
               d.begin() + static_cast<std::ptrdiff_t>(offset + size));
}

// The levels that take each library: LZ4 fast and HC, ISA-L 1..3 and zlib.
struct CodecCase {
  Compression c;
  int level;
};
const CodecCase kCases[] = {{Compression::kLz4, 0},  {Compression::kLz4, 9}, {Compression::kGzip, 1},
                            {Compression::kGzip, 3}, {Compression::kGzip, 6}, {Compression::kZlib, 1},
                            {Compression::kZlib, 9}};

// The decoded stride of the points: LZ4 rounds to a frame block size.
std::uint64_t Stride(Compression c, std::uint64_t b) {
  if (c != Compression::kLz4) return b;
  for (std::uint64_t s : {4096 * kKiB, 1024 * kKiB, 256 * kKiB}) {
    if (b >= s) return s;
  }
  return 64 * kKiB;
}

TEST(DecodePointsTest, WhichCodecsHaveThem) {
  EXPECT_TRUE(codecs_internal::SupportsDecodePoints(Compression::kLz4));
  EXPECT_TRUE(codecs_internal::SupportsDecodePoints(Compression::kGzip));
  EXPECT_TRUE(codecs_internal::SupportsDecodePoints(Compression::kZlib));
  for (Compression c : {Compression::kNone, Compression::kZstd, Compression::kBz2, Compression::kLzma}) {
    EXPECT_FALSE(codecs_internal::SupportsDecodePoints(c)) << Label(c);
    const Written w = Write(c, kDefaultCodecLevel, 64 * kKiB, Mixed(300 * kKiB, 1));
    EXPECT_TRUE(w.points.empty()) << Label(c);
  }
}

// Round trips at many block sizes and input sizes; the points sit where the
// codec says, ascending from decoded 0; FindDecodePoints finds LZ4's again.
TEST(DecodePointsTest, RoundTripAndPointLayout) {
  for (const CodecCase& cc : kCases) {
    for (std::uint64_t b : {std::uint64_t{0}, 64 * kKiB, 100 * kKiB, 256 * kKiB, 1024 * kKiB, 4096 * kKiB}) {
      const std::uint64_t stride = Stride(cc.c, b);
      for (std::uint64_t n : {std::uint64_t{0}, std::uint64_t{1}, stride - 1, stride, stride + 1,
                              3 * stride + 17}) {
        if (b == 0 && n > 300 * kKiB) continue;
        if (n > 2 * 4096 * kKiB && cc.level > 3) continue;  // zlib's levels are slow; one size is enough.
        SCOPED_TRACE(Label(cc.c) + " level " + std::to_string(cc.level) + " B " + std::to_string(b) + " n " +
                     std::to_string(n));
        const Bytes data = Mixed(static_cast<std::size_t>(n), n + b);
        const Written w = Write(cc.c, cc.level, b, data);
        ASSERT_OK_AND_ASSIGN(auto codec, MakeCodec(cc.c));
        Bytes back;
        ASSERT_OK(codec->Decompress(w.file, n, &back));
        EXPECT_TRUE(back == data);
        if (b == 0 || n == 0) {
          EXPECT_TRUE(w.points.empty());
          continue;
        }
        ASSERT_EQ(w.points.size(), (n + stride - 1) / stride);
        for (std::size_t i = 0; i < w.points.size(); ++i) {
          EXPECT_EQ(w.points[i].decoded_offset, i * stride);
          if (i > 0) {
            EXPECT_GT(w.points[i].compressed_offset, w.points[i - 1].compressed_offset);
          }
        }
        if (cc.c == Compression::kLz4) {
          ASSERT_OK_AND_ASSIGN(const auto found, FindDecodePoints(cc.c, w.file));
          EXPECT_TRUE(found == w.points);
        } else {
          EXPECT_EQ(w.points.front().compressed_offset, 10u);  // After the gzip header.
        }
      }
    }
  }
}

// The default options write an LZ4 frame with independent 256 KiB blocks.
// GZIP/ZLIB a point every MiB.
TEST(DecodePointsTest, DefaultLz4FrameHasIndependentBlocks) {
  const Bytes data = Mixed(600 * kKiB, 3);
  const Written w = Write(Compression::kLz4, kDefaultCodecLevel, kDefaultBlockBytes, data);
  ASSERT_GE(w.file.size(), 7u);
  EXPECT_EQ(static_cast<unsigned>(w.file[4]), 0x68u);  // Version 01, independent blocks, content size.
  EXPECT_EQ(static_cast<unsigned>(w.file[5]), 0x50u);  // 256 KiB blocks.
  EXPECT_EQ(w.points.size(), 3u);
  EXPECT_EQ(CodecOptions{}.block_bytes, kDefaultBlockBytes);
  // GZIP/ZLIB: a point every MiB; no points for the others.
  const Bytes big = Mixed(2 * 1024 * kKiB + 5, 4);
  for (Compression c : {Compression::kGzip, Compression::kZlib}) {
    const Written g = Write(c, kDefaultCodecLevel, kDefaultBlockBytes, big);
    ASSERT_EQ(g.points.size(), 3u) << Label(c);
    EXPECT_EQ(g.points[1].decoded_offset, 1024 * kKiB);
  }
  EXPECT_EQ(DefaultBlockBytes(Compression::kLz4), 256 * kKiB);
  EXPECT_EQ(DefaultBlockBytes(Compression::kZstd), 0u);
}

// The streamed GZIP/ZLIB path (several threads at ISA-L levels) writes the
// bytes and points of the one-buffer path.
TEST(DecodePointsTest, StreamedDeflateSameBytesAndPoints) {
  const Bytes data = Mixed(5 * 256 * kKiB + 333, 5);
  for (Compression c : {Compression::kGzip, Compression::kZlib}) {
    for (int level : {1, 2, 6}) {
      const Written want = Write(c, level, 256 * kKiB, data);
      for (int threads : {1, 2, 3}) {
        SCOPED_TRACE(Label(c) + " level " + std::to_string(level) + " threads " + std::to_string(threads));
        CodecOptions o;
        o.level = level;
        o.threads = threads;
        o.block_bytes = 256 * kKiB;
        Bytes got;
        std::vector<DecodePoint> points;
        ASSERT_OK(codecs_internal::CompressTo(
            c, o, data,
            [&](std::span<const std::byte> piece) {
              got.insert(got.end(), piece.begin(), piece.end());
              return Status::OK();
            },
            &points));
        ASSERT_EQ(got.size(), want.file.size());
        EXPECT_TRUE(std::equal(got.begin() + 8, got.end(), want.file.begin() + 8));  // But the mtime.
        EXPECT_TRUE(points == want.points);
      }
    }
  }
}

// Every block whole, ranges across each boundary, the first and the last
// byte, random ranges, the whole file: the bytes of the whole decode. A range
// inside one block reads no more than that block (and the LZ4 header).
TEST(DecodePointsTest, RangesEqualWholeDecode) {
  for (const CodecCase& cc : kCases) {
    for (std::uint64_t b : {64 * kKiB, 256 * kKiB, 1024 * kKiB}) {
      const std::uint64_t stride = Stride(cc.c, b);
      const std::uint64_t n = 5 * stride + 1234;
      SCOPED_TRACE(Label(cc.c) + " level " + std::to_string(cc.level) + " B " + std::to_string(b));
      const Bytes data = Mixed(static_cast<std::size_t>(n), b + 3);
      const Written w = Write(cc.c, cc.level, b, data);
      auto check = [&](std::uint64_t offset, std::uint64_t size) {
        SCOPED_TRACE("range " + std::to_string(offset) + " +" + std::to_string(size));
        std::uint64_t read = 0;
        ASSERT_OK_AND_ASSIGN(const Bytes got, Range(cc.c, w, w.points, n, offset, size, &read));
        EXPECT_TRUE(got == Slice(data, offset, size));
        const std::size_t i = offset / stride;
        if (size > 0 && (offset + size - 1) / stride == i) {
          const std::uint64_t block_end =
              i + 1 < w.points.size() ? w.points[i + 1].compressed_offset : w.file.size();
          EXPECT_LE(read, block_end - w.points[i].compressed_offset + 19);
        }
      };
      for (std::size_t i = 0; i < w.points.size(); ++i) {
        const std::uint64_t begin = w.points[i].decoded_offset;
        const std::uint64_t end = i + 1 < w.points.size() ? w.points[i + 1].decoded_offset : n;
        check(begin, end - begin);
        if (i > 0) {
          check(begin - 1, 2);
          check(begin - 100, 1000);
        }
      }
      check(0, 1);
      check(n - 1, 1);
      check(0, n);
      check(17, 0);
      std::mt19937_64 rng(b);
      for (int k = 0; k < 40; ++k) {
        const std::uint64_t offset = rng() % n;
        check(offset, rng() % std::min<std::uint64_t>(n - offset, 3 * stride) + 1);
      }
    }
  }
}

TEST(DecodePointsTest, BadRequestsAndPoints) {
  const Bytes data = Mixed(4 * 64 * kKiB + 99, 9);
  for (const CodecCase& cc : kCases) {
    SCOPED_TRACE(Label(cc.c) + " level " + std::to_string(cc.level));
    const Written w = Write(cc.c, cc.level, 64 * kKiB, data);
    const std::uint64_t n = data.size();
    ASSERT_GE(w.points.size(), 4u);
    EXPECT_EQ(Range(cc.c, w, w.points, n, n - 5, 6).status().code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(Range(cc.c, w, {}, n, 0, 6).status().code(), StatusCode::kInvalidArgument);
    auto corrupt = [&](std::vector<DecodePoint> p, std::uint64_t decoded, const char* what) {
      SCOPED_TRACE(what);
      EXPECT_EQ(Range(cc.c, w, p, decoded, 0, decoded).status().code(), StatusCode::kCorruption);
    };
    std::vector<DecodePoint> p = w.points;
    p[0].decoded_offset = 1;
    corrupt(p, n, "first point not at decoded 0");
    p = w.points;
    std::swap(p[1], p[2]);
    corrupt(p, n, "not ascending");
    p = w.points;
    p[2].compressed_offset = p[1].compressed_offset;
    corrupt(p, n, "stored offsets repeat");
    p = w.points;
    p.back().compressed_offset = w.file.size();
    corrupt(p, n, "a point at the file's end");
    p = w.points;
    p.back().decoded_offset = n;
    corrupt(p, n, "a point at the decoded end");
    p = w.points;
    p[1].decoded_offset += 1;
    corrupt(p, n, "a point off by one decoded byte");
    p = w.points;
    p[1].compressed_offset += 1;
    corrupt(p, n, "a point off by one stored byte");
    corrupt(w.points, n + 5, "more decoded bytes than the file has");
    if (cc.c == Compression::kLz4) {
      p = w.points;
      p[0].compressed_offset = 3;
      corrupt(p, n, "a point inside the frame header");
    }
  }
}

// LZ4 frames with linked blocks (the reference's, and ours with block_bytes
// 0) have no points: FindDecodePoints says so, DecodeRangeAt refuses them.
TEST(DecodePointsTest, LinkedLz4FrameHasNoPoints) {
  const Bytes data = Mixed(300 * kKiB, 2);
  const Written linked = Write(Compression::kLz4, 0, 0, data);
  ASSERT_OK_AND_ASSIGN(const auto found, FindDecodePoints(Compression::kLz4, linked.file));
  EXPECT_TRUE(found.empty());
  const Written indep = Write(Compression::kLz4, 0, 64 * kKiB, data);
  EXPECT_STATUS(StatusCode::kCorruption, "linked",
                Range(Compression::kLz4, linked, std::span(indep.points).first(1), data.size(), 0, 10));
  for (Compression c : {Compression::kGzip, Compression::kZstd, Compression::kBz2}) {
    const Written w = Write(c, kDefaultCodecLevel, 64 * kKiB, data);
    ASSERT_OK_AND_ASSIGN(const auto none, FindDecodePoints(c, w.file));
    EXPECT_TRUE(none.empty()) << Label(c);
    // GZIP: the writer's points work, they just cannot be found afterwards.
    EXPECT_EQ(Range(c, w, w.points, data.size(), 0, 10).status().code(),
              c == Compression::kGzip ? StatusCode::kOk : StatusCode::kNotImplemented);
  }
  EXPECT_EQ(FindDecodePoints(Compression::kLz4, RandomBytes(100, 1)).status().code(), StatusCode::kCorruption);
}

// Every one-byte change of a small file, and of each point: the range decode
// and FindDecodePoints end in OK or Corruption, never a crash or a read
// outside the file (ASan checks the memory side). A changed byte inside a
// block's data is caught where the codec can tell (LZ4 with block checksums
// is not written; the sidecar's checksums catch the rest).
TEST(DecodePointsTest, MutationsNeverCrash) {
  const Bytes data = CompressibleBytes(3 * 64 * kKiB + 500, 4);
  for (Compression c : {Compression::kLz4, Compression::kGzip}) {
    const Written w = Write(c, kDefaultCodecLevel, 64 * kKiB, data);
    const std::uint64_t n = data.size();
    int corruption = 0;
    const std::size_t step = std::max<std::size_t>(1, w.file.size() / 2000);
    for (std::size_t i = 0; i < w.file.size(); i += (i < 64 ? 1 : step)) {
      Written m = w;
      m.file[i] ^= std::byte{0x5a};
      const auto r = Range(c, m, m.points, n, 0, n);
      ASSERT_TRUE(r.ok() || r.status().code() == StatusCode::kCorruption) << i << ": " << r.status().ToString();
      if (!r.ok()) ++corruption;
      const auto r2 = Range(c, m, m.points, n, n - 70000, 1000);
      ASSERT_TRUE(r2.ok() || r2.status().code() == StatusCode::kCorruption) << r2.status().ToString();
      if (c == Compression::kLz4) {
        const auto f = FindDecodePoints(c, m.file);
        ASSERT_TRUE(f.ok() || f.status().code() == StatusCode::kCorruption) << f.status().ToString();
      }
    }
    EXPECT_GT(corruption, 0) << Label(c);
    std::mt19937_64 rng(7);
    for (int k = 0; k < 2000; ++k) {
      std::vector<DecodePoint> p = w.points;
      DecodePoint& q = p[rng() % p.size()];
      const std::uint64_t delta = rng() % 64;
      if (rng() % 2 == 0) {
        q.compressed_offset = rng() % 2 ? q.compressed_offset + delta : q.compressed_offset - std::min(delta, q.compressed_offset);
      } else {
        q.decoded_offset = rng() % 2 ? q.decoded_offset + delta : q.decoded_offset - std::min(delta, q.decoded_offset);
      }
      const std::uint64_t offset = rng() % n;
      const auto r = Range(c, w, p, n, offset, std::min<std::uint64_t>(n - offset, 100000));
      ASSERT_TRUE(r.ok() || r.status().code() == StatusCode::kCorruption) << r.status().ToString();
    }
  }
}

// The files the reference reads with gzip.decompress and lz4.frame.decompress
// (src/sedpack/io/compress.py), read by those very functions: Python's gzip,
// zlib (a raw inflate from a decode point) and lz4.frame modules.
TEST(DecodePointsTest, PlainPythonReadersAcceptTheFiles) {
  // Debian's python3 has the modules (scripts/install-deps.sh); a python3
  // earlier on PATH (a virtualenv) may not.
  std::string python;
  for (const char* candidate : {"/usr/bin/python3", "python3"}) {
    if (std::system((std::string(candidate) + " -c 'import lz4.frame' > /dev/null 2>&1").c_str()) == 0) {
      python = candidate;
      break;
    }
  }
  if (python.empty()) {
    GTEST_SKIP() << "no python3 with the lz4 module (scripts/install-deps.sh: python3-lz4)";
  }
  ::sedpack::testing::TempDir dir;
  const Bytes data = Mixed(5 * 256 * kKiB + 777, 11);
  auto put = [](const std::string& path, const Bytes& b) {
    std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(b.data()),
                                                 static_cast<std::streamsize>(b.size()));
  };
  put(dir.path() + "/raw", data);
  std::string script =
      "import gzip, lz4.frame, sys, zlib\n"
      "d = sys.argv[1]\n"
      "raw = open(d + '/raw', 'rb').read()\n"
      "bad = 0\n";
  for (const CodecCase& cc : kCases) {
    const Written w = Write(cc.c, cc.level, 256 * kKiB, data);
    const std::string name = Label(cc.c) + std::to_string(cc.level);
    put(dir.path() + "/" + name, w.file);
    const bool lz4 = cc.c == Compression::kLz4;
    script += "b = open(d + '/" + name + "', 'rb').read()\n";
    script += std::string("ok = ") + (lz4 ? "lz4.frame.decompress(b)" : "gzip.decompress(b)") + " == raw\n";
    if (!lz4) {
      // From the third point on, with no bytes before it.
      const DecodePoint& p = w.points.at(2);
      script += "z = zlib.decompressobj(-15)\n";
      script += "ok = ok and z.decompress(b[" + std::to_string(p.compressed_offset) + ":])[:1000] == raw[" +
                std::to_string(p.decoded_offset) + ":" + std::to_string(p.decoded_offset + 1000) + "]\n";
    }
    script += "if not ok: print('" + name + " misread'); bad += 1\n";
  }
  script += "sys.exit(1 if bad else 0)\n";
  put(dir.path() + "/check.py", Bytes(reinterpret_cast<const std::byte*>(script.data()),
                                      reinterpret_cast<const std::byte*>(script.data() + script.size())));
  EXPECT_EQ(std::system((python + " " + dir.path() + "/check.py " + dir.path()).c_str()), 0);
}

}  // namespace
}  // namespace sedpack
