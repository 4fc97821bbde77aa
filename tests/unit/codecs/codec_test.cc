// SPDX-License-Identifier: Apache-2.0
#include <bzlib.h>
#include <lz4frame.h>
#include <lzma.h>
#include <zlib.h>
#include <zstd.h>

#include <cstring>
#include <ctime>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "codecs/compress_internal.h"
#include "codecs_test_util.h"
#include "sedpack/codecs/compress.h"
#include "support/test_support.h"

namespace sedpack {
namespace {

using ::sedpack::testing::AllocPeak;
using ::sedpack::testing::AsBytes;
using ::sedpack::testing::CompressibleBytes;
using ::sedpack::testing::RandomBytes;
using ::sedpack::testing::ResetAllocPeak;
using ::sedpack::testing::U8;
using Bytes = std::vector<std::byte>;

constexpr std::size_t kMiB = std::size_t{1} << 20;

constexpr Compression kAllCodecs[] = {Compression::kNone, Compression::kGzip, Compression::kZlib,
                                      Compression::kBz2,  Compression::kLzma, Compression::kLz4,
                                      Compression::kZstd};
constexpr Compression kRealCodecs[] = {Compression::kGzip, Compression::kZlib, Compression::kBz2,
                                       Compression::kLzma, Compression::kLz4,  Compression::kZstd};

std::string Label(Compression c) {
  const std::string_view name = CompressionName(c);
  return name.empty() ? "NONE" : std::string(name);
}
std::string ParamName(const ::testing::TestParamInfo<Compression>& info) {
  return Label(info.param);
}

std::unique_ptr<Codec> MustMake(Compression c) {
  auto r = MakeCodec(c);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? std::move(r).value() : nullptr;
}

Bytes MustCompress(Compression c, std::span<const std::byte> data) {
  auto codec = MustMake(c);
  Bytes out;
  const Status st = codec->Compress(data, &out);
  EXPECT_TRUE(st.ok()) << st.ToString();
  return out;
}

// Compressible but not degenerate: text with a random tail.
Bytes MixedBytes(std::size_t n) {
  Bytes data = CompressibleBytes(n, 7);
  const Bytes noise = RandomBytes(n / 8, 8);
  std::copy(noise.begin(), noise.end(), data.end() - static_cast<std::ptrdiff_t>(noise.size()));
  return data;
}

Bytes Concat(std::initializer_list<std::span<const std::byte>> parts) {
  Bytes out;
  for (auto p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}

// ---- Basic factory behaviour ---------------------------------------------------

TEST(CodecFactoryTest, TypesMatch) {
  for (Compression c : kAllCodecs) {
    ASSERT_OK_AND_ASSIGN(auto codec, MakeCodec(c));
    EXPECT_EQ(codec->type(), c) << Label(c);
  }
}

TEST(CodecFactoryTest, ZipIsNotAWholeFileCodec) {
  EXPECT_STATUS(StatusCode::kInvalidArgument, "ZIP", MakeCodec(Compression::kZip));
}

TEST(CodecFactoryTest, IdentityCodec) {
  ASSERT_OK_AND_ASSIGN(auto codec, MakeCodec(Compression::kNone));
  const Bytes data = RandomBytes(1000, 1);
  Bytes out;
  ASSERT_OK(codec->Compress(data, &out));
  EXPECT_EQ(out, data);
  ASSERT_OK(codec->Decompress(data, 1000, &out));
  EXPECT_EQ(out, data);
  EXPECT_STATUS(StatusCode::kResourceExhausted, "limit", codec->Decompress(data, 999, &out));
}

// ---- Every codec ---------------------------------------------------------------

class CodecTest : public ::testing::TestWithParam<Compression> {};
INSTANTIATE_TEST_SUITE_P(All, CodecTest, ::testing::ValuesIn(kAllCodecs), ParamName);

TEST_P(CodecTest, RoundTripSizes) {
  // Without decode points: ISA-L's levels 1-2 find next to none of this
  // data's 16 KiB repeats in a segment that starts without history (every
  // block of a file with points), though they do on noise-like traces
  // (decode_points_test.cc, bench/codec_bench).
  ASSERT_OK_AND_ASSIGN(auto codec, MakeCodec(GetParam(), CodecOptions{kDefaultCodecLevel, 1, 0}));
  // One instance for all sizes: contexts are reused between calls.
  const std::vector<Bytes> inputs = {Bytes{}, Bytes{std::byte{0x5a}}, RandomBytes(kMiB, 42),
                                     CompressibleBytes(10 * kMiB, 43)};
  for (const Bytes& data : inputs) {
    SCOPED_TRACE(::testing::Message() << "size " << data.size());
    Bytes compressed;
    ASSERT_OK(codec->Compress(data, &compressed));
    if (data.size() == 10 * kMiB && GetParam() != Compression::kNone) {
      EXPECT_LT(compressed.size(), data.size() / 2);
    }
    Bytes restored{std::byte{1}, std::byte{2}};  // Must be replaced, not appended to.
    ASSERT_OK(codec->Decompress(compressed, kDefaultMaxDecompressedBytes, &restored));
    EXPECT_TRUE(restored == data) << "round trip differs, got " << restored.size() << " bytes";
  }
}

TEST_P(CodecTest, CapIsInclusive) {
  ASSERT_OK_AND_ASSIGN(auto codec, MakeCodec(GetParam()));
  const Bytes data = MixedBytes(300'000);
  Bytes compressed, out;
  ASSERT_OK(codec->Compress(data, &compressed));
  ASSERT_OK(codec->Decompress(compressed, data.size(), &out));
  EXPECT_TRUE(out == data);
  EXPECT_STATUS(StatusCode::kResourceExhausted, Label(GetParam()),
                codec->Decompress(compressed, data.size() - 1, &out));
  EXPECT_STATUS(StatusCode::kResourceExhausted, "limit", codec->Decompress(compressed, 0, &out));
}

class RealCodecTest : public ::testing::TestWithParam<Compression> {};
INSTANTIATE_TEST_SUITE_P(All, RealCodecTest, ::testing::ValuesIn(kRealCodecs), ParamName);

TEST_P(RealCodecTest, EmptyInputIsCorruption) {
  ASSERT_OK_AND_ASSIGN(auto codec, MakeCodec(GetParam()));
  Bytes out;
  EXPECT_STATUS(StatusCode::kCorruption, Label(GetParam()), codec->Decompress({}, kMiB, &out));
}

TEST_P(RealCodecTest, GarbageIsCorruptionAndCodecIsReusable) {
  ASSERT_OK_AND_ASSIGN(auto codec, MakeCodec(GetParam()));
  const Bytes data = MixedBytes(200'000);
  Bytes compressed, out;
  ASSERT_OK(codec->Compress(data, &compressed));
  // A failure midway must not poison the reused decoder context.
  Bytes half(compressed.begin(), compressed.begin() + compressed.size() / 2);
  EXPECT_EQ(codec->Decompress(half, kMiB, &out).code(), StatusCode::kCorruption);
  EXPECT_STATUS(StatusCode::kCorruption, Label(GetParam()),
                codec->Decompress(RandomBytes(1000, 9), kMiB, &out));
  ASSERT_OK(codec->Decompress(compressed, kMiB, &out));
  EXPECT_TRUE(out == data);
}

TEST_P(RealCodecTest, TruncatedInputIsCorruption) {
  ASSERT_OK_AND_ASSIGN(auto codec, MakeCodec(GetParam()));
  const Bytes data = MixedBytes(100'000);
  Bytes compressed, out;
  ASSERT_OK(codec->Compress(data, &compressed));
  const std::size_t n = compressed.size();
  for (std::size_t cut :
       {std::size_t{1}, std::size_t{2}, std::size_t{4}, std::size_t{6}, std::size_t{10},
        std::size_t{13}, n / 3, n / 2, n - 9, n - 5, n - 4, n - 2, n - 1}) {
    SCOPED_TRACE(::testing::Message() << "cut to " << cut << " of " << n);
    std::span<const std::byte> prefix(compressed.data(), cut);
    EXPECT_STATUS(StatusCode::kCorruption, Label(GetParam()),
                  codec->Decompress(prefix, kDefaultMaxDecompressedBytes, &out));
  }
}

bool HasChecksum(Compression c) {
  return c == Compression::kGzip || c == Compression::kZlib || c == Compression::kBz2 ||
         c == Compression::kLzma;
}

TEST_P(RealCodecTest, BitFlipsNeverCrash) {
  ASSERT_OK_AND_ASSIGN(auto codec, MakeCodec(GetParam()));
  const Bytes data = MixedBytes(64 * 1024);
  Bytes compressed, out;
  ASSERT_OK(codec->Compress(data, &compressed));
  const std::size_t n = compressed.size();
  std::vector<std::size_t> positions;
  for (std::size_t i = 0; i < std::min<std::size_t>(n, 32); ++i) positions.push_back(i);
  for (std::size_t i = 0; i < 160; ++i) positions.push_back(n * i / 160);
  for (std::size_t i = n - std::min<std::size_t>(n, 32); i < n; ++i) positions.push_back(i);
  int corrupt = 0;
  for (std::size_t pos : positions) {
    Bytes flipped = compressed;
    flipped[pos] ^= static_cast<std::byte>(1u << (pos % 8));
    const Status st = codec->Decompress(flipped, kMiB, &out);
    SCOPED_TRACE(::testing::Message() << "flip at " << pos << " of " << n << ": " << st.ToString());
    if (st.code() == StatusCode::kCorruption) {
      ++corrupt;
      EXPECT_NE(st.message().find(Label(GetParam())), std::string::npos);
    } else if (st.ok()) {
      // Only fields no check covers (e.g. the gzip mtime) may flip silently;
      // LZ4 and ZSTD frames as the reference writes them carry no checksum.
      if (HasChecksum(GetParam())) {
        EXPECT_TRUE(out == data);
      }
    } else {
      EXPECT_EQ(st.code(), StatusCode::kResourceExhausted);
    }
  }
  // The first byte is always part of the magic.
  Bytes bad_magic = compressed;
  bad_magic[0] ^= std::byte{0x01};
  EXPECT_STATUS(StatusCode::kCorruption, Label(GetParam()),
                codec->Decompress(bad_magic, kMiB, &out));
  if (HasChecksum(GetParam())) {
    EXPECT_GE(corrupt * 10, static_cast<int>(positions.size()) * 9)
        << corrupt << " of " << positions.size() << " flips detected";
  }
}

// ---- Format properties (what the reference writes) ---------------------------

TEST(GzipFormatTest, OneMemberWithReferenceHeader) {
  for (Compression c : {Compression::kGzip, Compression::kZlib}) {
    SCOPED_TRACE(Label(c));
    const Bytes data = MixedBytes(100'000);
    const auto before = static_cast<std::uint32_t>(std::time(nullptr));
    const Bytes gz = MustCompress(c, data);
    const auto after = static_cast<std::uint32_t>(std::time(nullptr));
    ASSERT_GE(gz.size(), 18u);
    EXPECT_EQ(U8(gz, 0), 0x1f);
    EXPECT_EQ(U8(gz, 1), 0x8b);
    EXPECT_EQ(U8(gz, 2), 0x08);  // DEFLATE.
    EXPECT_EQ(U8(gz, 3), 0x00);  // No FNAME/FEXTRA/FCOMMENT/FHCRC.
    const std::uint32_t mtime = U8(gz, 4) | (U8(gz, 5) << 8) | (U8(gz, 6) << 16) |
                                (static_cast<std::uint32_t>(U8(gz, 7)) << 24);
    EXPECT_GE(mtime, before);
    EXPECT_LE(mtime, after);
    EXPECT_EQ(U8(gz, 8), 0x04);  // XFL: fastest (the default level is 1).
    EXPECT_EQ(U8(gz, 9), 0xff);  // OS: unknown.
    const std::size_t n = gz.size();
    const std::uint32_t crc = U8(gz, n - 8) | (U8(gz, n - 7) << 8) | (U8(gz, n - 6) << 16) |
                              (static_cast<std::uint32_t>(U8(gz, n - 5)) << 24);
    const std::uint32_t isize = U8(gz, n - 4) | (U8(gz, n - 3) << 8) | (U8(gz, n - 2) << 16) |
                                (static_cast<std::uint32_t>(U8(gz, n - 1)) << 24);
    EXPECT_EQ(crc, Crc32(data));
    EXPECT_EQ(isize, data.size());
    // Exactly one member: a single-member zlib decoder ends exactly at the end.
    z_stream zs{};
    ASSERT_EQ(inflateInit2(&zs, 15 + 16), Z_OK);
    Bytes out(data.size() + 1);
    zs.next_in = reinterpret_cast<Bytef*>(const_cast<std::byte*>(gz.data()));
    zs.avail_in = static_cast<uInt>(gz.size());
    zs.next_out = reinterpret_cast<Bytef*>(out.data());
    zs.avail_out = static_cast<uInt>(out.size());
    EXPECT_EQ(inflate(&zs, Z_FINISH), Z_STREAM_END);
    EXPECT_EQ(zs.avail_in, 0u);
    EXPECT_EQ(zs.total_out, data.size());
    inflateEnd(&zs);
  }
}

// Walk an LZ4 frame as python-lz4 writes it; return the byte count it spans.
std::size_t Lz4FrameSpan(const Bytes& f, bool* has_size, std::uint64_t* content_size) {
  std::size_t pos = 6;
  const std::uint8_t flg = U8(f, 4);
  *has_size = (flg & 0x08) != 0;
  *content_size = 0;
  if (*has_size) {
    for (int i = 0; i < 8; ++i) *content_size |= std::uint64_t{U8(f, 6 + i)} << (8 * i);
    pos += 8;
  }
  pos += 1;  // Header checksum.
  for (;;) {
    const std::uint32_t block = U8(f, pos) | (U8(f, pos + 1) << 8) | (U8(f, pos + 2) << 16) |
                                (static_cast<std::uint32_t>(U8(f, pos + 3)) << 24);
    pos += 4;
    if (block == 0) break;  // EndMark.
    pos += block & 0x7fffffffu;
  }
  return pos;
}

TEST(Lz4FormatTest, OneFrameWithContentSize) {
  for (std::size_t size : {std::size_t{1}, std::size_t{1000}, std::size_t{300'000}}) {
    SCOPED_TRACE(size);
    const Bytes data = MixedBytes(size);
    // The reference's frame: without decode points (block_bytes 0).
    ASSERT_OK_AND_ASSIGN(auto codec, MakeCodec(Compression::kLz4, CodecOptions{kDefaultCodecLevel, 1, 0}));
    Bytes f;
    ASSERT_OK(codec->Compress(data, &f));
    ASSERT_GE(f.size(), 19u);
    EXPECT_EQ(U8(f, 0), 0x04);
    EXPECT_EQ(U8(f, 1), 0x22);
    EXPECT_EQ(U8(f, 2), 0x4d);
    EXPECT_EQ(U8(f, 3), 0x18);
    const std::uint8_t flg = U8(f, 4);
    EXPECT_EQ(flg >> 6, 1);    // Version 01.
    EXPECT_NE(flg & 0x08, 0);  // Content size present.
    EXPECT_EQ(flg & 0x14, 0);  // No block or content checksum.
    EXPECT_EQ(flg & 0x01, 0);  // No dictionary id.
    // Single-block frames get independent blocks (LZ4F_compressFrame), as in the reference.
    EXPECT_EQ(flg, size <= 65536 ? 0x68 : 0x48);
    EXPECT_EQ(U8(f, 5), 0x40);  // 64 KiB max block.
    bool has_size = false;
    std::uint64_t content_size = 0;
    EXPECT_EQ(Lz4FrameSpan(f, &has_size, &content_size), f.size());  // Exactly one frame.
    EXPECT_TRUE(has_size);
    EXPECT_EQ(content_size, size);
  }
}

TEST(ZstdFormatTest, OneFrameWithContentSizeNoChecksum) {
  for (std::size_t size : {std::size_t{0}, std::size_t{1}, std::size_t{300'000}}) {
    SCOPED_TRACE(size);
    const Bytes data = MixedBytes(size);
    const Bytes f = MustCompress(Compression::kZstd, data);
    ASSERT_GE(f.size(), 6u);
    EXPECT_EQ(U8(f, 0), 0x28);
    EXPECT_EQ(U8(f, 1), 0xb5);
    EXPECT_EQ(U8(f, 2), 0x2f);
    EXPECT_EQ(U8(f, 3), 0xfd);
    const std::uint8_t fhd = U8(f, 4);
    EXPECT_EQ(fhd & 0x04, 0);                           // Content checksum flag.
    EXPECT_TRUE((fhd >> 6) != 0 || (fhd & 0x20) != 0);  // FCS field present.
    EXPECT_EQ(ZSTD_getFrameContentSize(f.data(), f.size()), size);
    EXPECT_EQ(ZSTD_findFrameCompressedSize(f.data(), f.size()), f.size());
  }
}

TEST(XzFormatTest, XzStreamPreset6Crc64) {
  const Bytes data = MixedBytes(100'000);
  const Bytes f = MustCompress(Compression::kLzma, data);
  const std::uint8_t magic[] = {0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00};
  ASSERT_GE(f.size(), 32u);
  for (std::size_t i = 0; i < 6; ++i) EXPECT_EQ(U8(f, i), magic[i]) << i;
  EXPECT_EQ(U8(f, 6), 0x00);  // Stream flags: check type CRC64.
  EXPECT_EQ(U8(f, 7), 0x04);
  const std::size_t n = f.size();
  EXPECT_EQ(U8(f, n - 4), 0x00);  // Footer repeats the flags, then "YZ".
  EXPECT_EQ(U8(f, n - 3), 0x04);
  EXPECT_EQ(U8(f, n - 2), 'Y');
  EXPECT_EQ(U8(f, n - 1), 'Z');
  // First block header: LZMA2 filter (0x21), one property byte, dictionary
  // 8 MiB (encoded 22) = preset 6.
  EXPECT_EQ(U8(f, 13), 0x00);  // Block flags: one filter, no sizes.
  EXPECT_EQ(U8(f, 14), 0x21);
  EXPECT_EQ(U8(f, 15), 0x01);
  EXPECT_EQ(U8(f, 16), 22);
}

TEST(Bz2FormatTest, Level9Magic) {
  const Bytes f = MustCompress(Compression::kBz2, MixedBytes(1000));
  ASSERT_GE(f.size(), 4u);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(f.data()), 4), "BZh9");
}

// ---- Concatenated members / frames -------------------------------------------

TEST(ConcatenationTest, GzipDecodesEveryMemberAndSkipsZeroPadding) {
  const Bytes a = MixedBytes(5000), b = RandomBytes(3000, 5);
  for (Compression c : {Compression::kGzip, Compression::kZlib}) {
    const Bytes ca = MustCompress(c, a), cb = MustCompress(c, b);
    const Bytes zeros(7);
    auto codec = MustMake(c);
    Bytes out;
    ASSERT_OK(codec->Decompress(Concat({ca, cb, zeros}), kMiB, &out));
    EXPECT_TRUE(out == Concat({a, b}));
    EXPECT_STATUS(StatusCode::kCorruption, "not a gzip member",
                  codec->Decompress(Concat({ca, AsBytes("garbage")}), kMiB, &out));
    // Both members count towards the cap.
    EXPECT_EQ(codec->Decompress(Concat({ca, cb}), a.size() + b.size() - 1, &out).code(),
              StatusCode::kResourceExhausted);
    // A cut-short second member is an error (CPython raises EOFError).
    const Bytes cut(cb.begin(), cb.end() - 3);
    EXPECT_EQ(codec->Decompress(Concat({ca, cut}), kMiB, &out).code(), StatusCode::kCorruption);
  }
}

TEST(ConcatenationTest, Bz2AndXzDecodeEveryStreamAndIgnoreTrailingGarbage) {
  const Bytes a = MixedBytes(5000), b = RandomBytes(3000, 5);
  for (Compression c : {Compression::kBz2, Compression::kLzma}) {
    SCOPED_TRACE(Label(c));
    const Bytes ca = MustCompress(c, a), cb = MustCompress(c, b);
    auto codec = MustMake(c);
    Bytes out;
    ASSERT_OK(codec->Decompress(Concat({ca, cb}), kMiB, &out));
    EXPECT_TRUE(out == Concat({a, b}));
    // Like CPython's bz2/lzma.decompress: data after the first stream that is
    // not a valid stream is dropped.
    ASSERT_OK(
        codec->Decompress(Concat({ca, cb, AsBytes("garbage after the streams")}), kMiB, &out));
    EXPECT_TRUE(out == Concat({a, b}));
    // ...but a stream that is cut short is an error.
    const Bytes cut(cb.begin(), cb.end() - 3);
    EXPECT_EQ(codec->Decompress(Concat({ca, cut}), kMiB, &out).code(), StatusCode::kCorruption);
  }
}

TEST(ConcatenationTest, Lz4AndZstdDecodeFirstFrameOnly) {
  const Bytes a = MixedBytes(5000), b = RandomBytes(3000, 5);
  for (Compression c : {Compression::kLz4, Compression::kZstd}) {
    SCOPED_TRACE(Label(c));
    const Bytes ca = MustCompress(c, a), cb = MustCompress(c, b);
    auto codec = MustMake(c);
    Bytes out;
    ASSERT_OK(codec->Decompress(Concat({ca, cb}), kMiB, &out));
    EXPECT_TRUE(out == a);
    ASSERT_OK(codec->Decompress(Concat({ca, AsBytes("trailing")}), kMiB, &out));
    EXPECT_TRUE(out == a);
  }
}

// ---- Frames without a content size (not written by the reference) -------------

Bytes Lz4FrameWithoutSize(std::span<const std::byte> data) {
  LZ4F_preferences_t prefs;
  std::memset(&prefs, 0, sizeof(prefs));
  prefs.frameInfo.blockSizeID = LZ4F_max64KB;
  Bytes out(LZ4F_compressFrameBound(data.size(), &prefs));
  const std::size_t r =
      LZ4F_compressFrame(out.data(), out.size(), data.data(), data.size(), &prefs);
  EXPECT_FALSE(LZ4F_isError(r));
  out.resize(r);
  return out;
}

Bytes ZstdFrameWithoutSize(std::span<const std::byte> data) {
  ZSTD_CCtx* cctx = ZSTD_createCCtx();
  ZSTD_CCtx_setParameter(cctx, ZSTD_c_contentSizeFlag, 0);
  Bytes out(ZSTD_compressBound(data.size()) + 64);
  ZSTD_inBuffer in{data.data(), data.size(), 0};
  ZSTD_outBuffer o{out.data(), out.size(), 0};
  std::size_t r;
  do {
    r = ZSTD_compressStream2(cctx, &o, &in, ZSTD_e_end);
  } while (r != 0 && !ZSTD_isError(r));
  EXPECT_FALSE(ZSTD_isError(r));
  ZSTD_freeCCtx(cctx);
  out.resize(o.pos);
  return out;
}

TEST(NoContentSizeTest, Lz4AndZstdStreamWithTheCap) {
  const Bytes data = MixedBytes(500'000);
  const Bytes lz4 = Lz4FrameWithoutSize(data);
  EXPECT_EQ(U8(lz4, 4) & 0x08, 0);
  const Bytes zst = ZstdFrameWithoutSize(data);
  EXPECT_EQ(ZSTD_getFrameContentSize(zst.data(), zst.size()), ZSTD_CONTENTSIZE_UNKNOWN);
  for (auto [c, frame] :
       {std::pair{Compression::kLz4, &lz4}, std::pair{Compression::kZstd, &zst}}) {
    SCOPED_TRACE(Label(c));
    auto codec = MustMake(c);
    Bytes out;
    ASSERT_OK(codec->Decompress(*frame, data.size(), &out));
    EXPECT_TRUE(out == data);
    EXPECT_STATUS(StatusCode::kResourceExhausted, "limit",
                  codec->Decompress(*frame, data.size() - 1, &out));
    const Bytes cut(frame->begin(), frame->end() - 2);
    EXPECT_STATUS(StatusCode::kCorruption, Label(c), codec->Decompress(cut, kMiB, &out));
  }
}

// ---- Decompression bombs -------------------------------------------------------

constexpr std::size_t kBombSize = 200 * kMiB;
constexpr std::size_t kBombChunk = kMiB;

// Each builder compresses kBombSize zero bytes in a streaming way, so the test
// itself never holds the bomb's decompressed size in memory.
Bytes GzipBomb() {
  z_stream zs{};
  EXPECT_EQ(deflateInit2(&zs, 9, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY), Z_OK);
  const Bytes zeros(kBombChunk);
  Bytes out, buf(64 * 1024);
  for (std::size_t done = 0; done < kBombSize; done += kBombChunk) {
    const int flush = done + kBombChunk == kBombSize ? Z_FINISH : Z_NO_FLUSH;
    zs.next_in = reinterpret_cast<Bytef*>(const_cast<std::byte*>(zeros.data()));
    zs.avail_in = static_cast<uInt>(zeros.size());
    int ret;
    do {
      zs.next_out = reinterpret_cast<Bytef*>(buf.data());
      zs.avail_out = static_cast<uInt>(buf.size());
      ret = deflate(&zs, flush);
      out.insert(out.end(), buf.begin(), buf.end() - zs.avail_out);
    } while (zs.avail_out == 0 || (flush == Z_FINISH && ret != Z_STREAM_END));
  }
  deflateEnd(&zs);
  return out;
}

Bytes Bz2Bomb() {
  bz_stream bs{};
  EXPECT_EQ(BZ2_bzCompressInit(&bs, 9, 0, 0), BZ_OK);
  const Bytes zeros(kBombChunk);
  Bytes out, buf(64 * 1024);
  for (std::size_t done = 0; done < kBombSize; done += kBombChunk) {
    const int action = done + kBombChunk == kBombSize ? BZ_FINISH : BZ_RUN;
    bs.next_in = reinterpret_cast<char*>(const_cast<std::byte*>(zeros.data()));
    bs.avail_in = static_cast<unsigned>(zeros.size());
    int ret;
    do {
      bs.next_out = reinterpret_cast<char*>(buf.data());
      bs.avail_out = static_cast<unsigned>(buf.size());
      ret = BZ2_bzCompress(&bs, action);
      out.insert(out.end(), buf.begin(), buf.end() - bs.avail_out);
    } while (action == BZ_FINISH ? ret != BZ_STREAM_END : bs.avail_in != 0);
  }
  BZ2_bzCompressEnd(&bs);
  return out;
}

Bytes XzBomb() {
  lzma_stream xs = LZMA_STREAM_INIT;
  EXPECT_EQ(lzma_easy_encoder(&xs, 1, LZMA_CHECK_CRC64), LZMA_OK);
  const Bytes zeros(kBombChunk);
  Bytes out, buf(64 * 1024);
  for (std::size_t done = 0; done < kBombSize; done += kBombChunk) {
    const lzma_action action = done + kBombChunk == kBombSize ? LZMA_FINISH : LZMA_RUN;
    xs.next_in = reinterpret_cast<const std::uint8_t*>(zeros.data());
    xs.avail_in = zeros.size();
    lzma_ret ret;
    do {
      xs.next_out = reinterpret_cast<std::uint8_t*>(buf.data());
      xs.avail_out = buf.size();
      ret = lzma_code(&xs, action);
      out.insert(out.end(), buf.begin(), buf.end() - xs.avail_out);
    } while (action == LZMA_FINISH ? ret == LZMA_OK : xs.avail_in != 0);
    EXPECT_TRUE(ret == LZMA_OK || ret == LZMA_STREAM_END);
  }
  lzma_end(&xs);
  return out;
}

Bytes Lz4Bomb(bool with_size) {
  LZ4F_cctx* cctx = nullptr;
  EXPECT_FALSE(LZ4F_isError(LZ4F_createCompressionContext(&cctx, LZ4F_VERSION)));
  LZ4F_preferences_t prefs;
  std::memset(&prefs, 0, sizeof(prefs));
  prefs.frameInfo.blockSizeID = LZ4F_max64KB;
  prefs.frameInfo.contentSize = with_size ? kBombSize : 0;
  const Bytes zeros(kBombChunk);
  Bytes buf(LZ4F_compressBound(kBombChunk, &prefs) + LZ4F_HEADER_SIZE_MAX);
  Bytes out;
  std::size_t r = LZ4F_compressBegin(cctx, buf.data(), buf.size(), &prefs);
  out.insert(out.end(), buf.begin(), buf.begin() + r);
  for (std::size_t done = 0; done < kBombSize; done += kBombChunk) {
    r = LZ4F_compressUpdate(cctx, buf.data(), buf.size(), zeros.data(), zeros.size(), nullptr);
    EXPECT_FALSE(LZ4F_isError(r));
    out.insert(out.end(), buf.begin(), buf.begin() + r);
  }
  r = LZ4F_compressEnd(cctx, buf.data(), buf.size(), nullptr);
  out.insert(out.end(), buf.begin(), buf.begin() + r);
  LZ4F_freeCompressionContext(cctx);
  return out;
}

Bytes ZstdBomb(bool with_size) {
  ZSTD_CCtx* cctx = ZSTD_createCCtx();
  if (with_size) ZSTD_CCtx_setPledgedSrcSize(cctx, kBombSize);
  const Bytes zeros(kBombChunk);
  Bytes out, buf(ZSTD_CStreamOutSize());
  for (std::size_t done = 0; done < kBombSize; done += kBombChunk) {
    const bool last = done + kBombChunk == kBombSize;
    ZSTD_inBuffer in{zeros.data(), zeros.size(), 0};
    std::size_t r;
    do {
      ZSTD_outBuffer o{buf.data(), buf.size(), 0};
      r = ZSTD_compressStream2(cctx, &o, &in, last ? ZSTD_e_end : ZSTD_e_continue);
      EXPECT_FALSE(ZSTD_isError(r));
      out.insert(out.end(), buf.begin(), buf.begin() + o.pos);
    } while (last ? r != 0 : in.pos != in.size);
  }
  ZSTD_freeCCtx(cctx);
  return out;
}

struct BombCase {
  const char* name;
  Compression codec;
  std::function<Bytes()> make;
};

// gtest would otherwise print the struct's raw bytes, padding included.
void PrintTo(const BombCase& c, std::ostream* os) { *os << c.name; }

class BombTest : public ::testing::TestWithParam<BombCase> {};
INSTANTIATE_TEST_SUITE_P(
    All, BombTest,
    ::testing::Values(BombCase{"GZIP", Compression::kGzip, GzipBomb},
                      BombCase{"ZLIB", Compression::kZlib, GzipBomb},
                      BombCase{"BZ2", Compression::kBz2, Bz2Bomb},
                      BombCase{"LZMA", Compression::kLzma, XzBomb},
                      BombCase{"LZ4_with_size", Compression::kLz4, [] { return Lz4Bomb(true); }},
                      BombCase{"LZ4_streamed", Compression::kLz4, [] { return Lz4Bomb(false); }},
                      BombCase{"ZSTD_with_size", Compression::kZstd, [] { return ZstdBomb(true); }},
                      BombCase{"ZSTD_streamed", Compression::kZstd,
                               [] { return ZstdBomb(false); }}),
    [](const ::testing::TestParamInfo<BombCase>& info) { return info.param.name; });

TEST_P(BombTest, RefusedWithoutBigAllocation) {
  const Bytes bomb = GetParam().make();
  ASSERT_LT(bomb.size(), 2 * kMiB);  // Small input, 200 MiB output.
  ASSERT_OK_AND_ASSIGN(auto codec, MakeCodec(GetParam().codec));
  Bytes out;
  ResetAllocPeak();
  const Status st = codec->Decompress(bomb, kMiB, &out);
  const std::size_t peak = AllocPeak();
  EXPECT_EQ(st.code(), StatusCode::kResourceExhausted) << st.ToString();
  EXPECT_NE(st.message().find(Label(GetParam().codec)), std::string::npos) << st.ToString();
  // Never more than the cap plus a small constant in any one buffer.
  EXPECT_LE(peak, kMiB + 64 * 1024) << "largest allocation " << peak;
  // The codec still works afterwards.
  const Bytes data = MixedBytes(1000);
  Bytes compressed;
  ASSERT_OK(codec->Compress(data, &compressed));
  ASSERT_OK(codec->Decompress(compressed, kMiB, &out));
  EXPECT_TRUE(out == data);
}

// ---- Raw DEFLATE and CRC-32 (zip members) ------------------------------------

TEST(DeflateRawTest, RoundTrip) {
  for (int level : {-1, 0, 1, 6, 9}) {
    SCOPED_TRACE(level);
    for (const Bytes& data : {Bytes{}, MixedBytes(200'000)}) {
      Bytes packed, unpacked;
      ASSERT_OK(DeflateRaw(data, level, &packed));
      ASSERT_FALSE(packed.empty());
      ASSERT_OK(InflateRaw(packed, data.size(), &unpacked));
      EXPECT_TRUE(unpacked == data);
    }
  }
}

TEST(DeflateRawTest, NoHeader) {
  // zlib wrapper bytes (78 xx) or a gzip magic must not appear: raw DEFLATE of
  // "abc" at level 6 is 4b 4c 4a 06 00.
  Bytes packed;
  ASSERT_OK(DeflateRaw(AsBytes("abc"), 6, &packed));
  EXPECT_EQ(sedpack::testing::ToHex(packed.data(), packed.size()), "4b4c4a0600");
}

TEST(DeflateRawTest, Errors) {
  Bytes packed, out;
  EXPECT_STATUS(StatusCode::kInvalidArgument, "level", DeflateRaw(AsBytes("x"), 10, &packed));
  EXPECT_STATUS(StatusCode::kInvalidArgument, "level", DeflateRaw(AsBytes("x"), -2, &packed));
  const Bytes data = MixedBytes(10'000);
  ASSERT_OK(DeflateRaw(data, 6, &packed));
  EXPECT_STATUS(StatusCode::kCorruption, "more than the expected",
                InflateRaw(packed, data.size() - 1, &out));
  EXPECT_STATUS(StatusCode::kCorruption, "expected", InflateRaw(packed, data.size() + 1, &out));
  const Bytes cut(packed.begin(), packed.end() - 3);
  EXPECT_STATUS(StatusCode::kCorruption, "truncated", InflateRaw(cut, data.size(), &out));
  EXPECT_STATUS(StatusCode::kCorruption, "DEFLATE", InflateRaw({}, 0, &out));
  EXPECT_STATUS(StatusCode::kCorruption, "DEFLATE",
                InflateRaw(RandomBytes(100, 3), data.size(), &out));
}

TEST(Crc32Test, KnownValuesAndContinuation) {
  EXPECT_EQ(Crc32({}), 0u);
  EXPECT_EQ(Crc32(AsBytes("123456789")), 0xcbf43926u);
  const std::uint32_t part = Crc32(AsBytes("12345"));
  EXPECT_EQ(Crc32(AsBytes("6789"), part), 0xcbf43926u);
  EXPECT_EQ(Crc32({}, part), part);
}

}  // namespace
}  // namespace sedpack
