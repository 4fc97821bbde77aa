// SPDX-License-Identifier: Apache-2.0
// CRC-32C: both implementations against the RFC 3720 (iSCSI) vectors and
// against each other, and the TFRecord record-stream codecs (GZIP member,
// real zlib stream for ZLIB).
#include <zlib.h>

#include <array>
#include <cstring>
#include <vector>

#include "codecs/compress_internal.h"
#include "codecs/crc32c_internal.h"
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

using CrcFn = std::uint32_t (*)(std::uint32_t, const std::byte*, std::size_t);

std::uint32_t Public(std::uint32_t crc, const std::byte* p, std::size_t n) {
  return Crc32c({p, n}, crc);
}

struct Impl {
  const char* name;
  CrcFn fn;
};

class Crc32cTest : public ::testing::TestWithParam<Impl> {
 protected:
  void SetUp() override {
    if (GetParam().fn == &codecs_internal::Crc32cHardware &&
        !codecs_internal::Crc32cHardwareAvailable()) {
      GTEST_SKIP() << "no SSE4.2 on this CPU";
    }
  }
  std::uint32_t Crc(const Bytes& b, std::uint32_t crc = 0) const {
    return GetParam().fn(crc, b.data(), b.size());
  }
};

// RFC 3720, appendix B.4 (CRC values as they appear in the iSCSI PDU, i.e.
// the CRC-32C value itself).
TEST_P(Crc32cTest, Rfc3720Vectors) {
  Bytes b(32);
  EXPECT_EQ(Crc(b), 0x8a9136aau);  // 32 bytes of zeros
  std::fill(b.begin(), b.end(), std::byte{0xff});
  EXPECT_EQ(Crc(b), 0x62a8ab43u);  // 32 bytes of ones
  for (int i = 0; i < 32; ++i) b[i] = static_cast<std::byte>(i);
  EXPECT_EQ(Crc(b), 0x46dd794eu);  // incrementing
  for (int i = 0; i < 32; ++i) b[i] = static_cast<std::byte>(31 - i);
  EXPECT_EQ(Crc(b), 0x113fdb5cu);  // decrementing
  // An iSCSI SCSI Read (10) command PDU.
  const std::array<std::uint8_t, 48> pdu = {
      0x01, 0xc0, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
      0x00, 0x00, 0x00, 0x00, 0x14, 0x00, 0x00, 0x00, 0x00, 0x00, 0x04, 0x00,
      0x00, 0x00, 0x00, 0x14, 0x00, 0x00, 0x00, 0x18, 0x28, 0x00, 0x00, 0x00,
      0x00, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00};
  Bytes p(pdu.size());
  std::memcpy(p.data(), pdu.data(), pdu.size());
  EXPECT_EQ(Crc(p), 0xd9963a56u);
  // The common check value.
  const auto check = AsBytes("123456789");
  EXPECT_EQ(Crc(Bytes(check.begin(), check.end())), 0xe3069283u);
  EXPECT_EQ(Crc({}), 0u);
}

TEST_P(Crc32cTest, ContinuationAndEveryLengthAndAlignment) {
  const Bytes data = RandomBytes(300, 11);
  for (std::size_t start = 0; start < 9; ++start) {
    for (std::size_t len = 0; start + len <= data.size(); len += (len < 40 ? 1 : 37)) {
      const std::uint32_t whole = GetParam().fn(0, data.data() + start, len);
      // The bit-by-bit definition is the reference for every other result.
      std::uint32_t c = 0xffffffffu;
      for (std::size_t i = 0; i < len; ++i) {
        c ^= static_cast<std::uint8_t>(data[start + i]);
        for (int k = 0; k < 8; ++k) c = (c >> 1) ^ ((c & 1) ? 0x82f63b78u : 0);
      }
      ASSERT_EQ(whole, ~c) << "start " << start << " len " << len;
      const std::size_t cut = len / 3;
      const std::uint32_t first = GetParam().fn(0, data.data() + start, cut);
      ASSERT_EQ(GetParam().fn(first, data.data() + start + cut, len - cut), whole);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(All, Crc32cTest,
                         ::testing::Values(Impl{"portable", &codecs_internal::Crc32cPortable},
                                           Impl{"hardware", &codecs_internal::Crc32cHardware},
                                           Impl{"public", &Public}),
                         [](const auto& info) { return std::string(info.param.name); });

TEST(Crc32cAgreementTest, ImplementationsAgreeOnLargeInput) {
  const Bytes data = RandomBytes(1 << 20, 5);
  const std::uint32_t portable = codecs_internal::Crc32cPortable(0, data.data(), data.size());
  EXPECT_EQ(Crc32c(data), portable);
  if (codecs_internal::Crc32cHardwareAvailable()) {
    EXPECT_EQ(codecs_internal::Crc32cHardware(0, data.data(), data.size()), portable);
  }
}

// ---- TFRecord record-stream codecs ---------------------------------------------

std::unique_ptr<Codec> MustMakeTf(Compression c) {
  auto r = MakeTfRecordCodec(c);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? std::move(r).value() : nullptr;
}

TEST(TfRecordCodecTest, OnlyNoneGzipAndZlib) {
  for (Compression c : {Compression::kBz2, Compression::kLzma, Compression::kLz4,
                        Compression::kZstd, Compression::kZip}) {
    EXPECT_STATUS(StatusCode::kInvalidArgument, "not a TFRecord compression", MakeTfRecordCodec(c));
  }
  for (Compression c : {Compression::kNone, Compression::kGzip, Compression::kZlib}) {
    EXPECT_EQ(MustMakeTf(c)->type(), c);
  }
}

TEST(TfRecordCodecTest, ZlibWritesOneZlibStreamThatZlibReads) {
  const Bytes data = CompressibleBytes(200'000, 3);
  auto codec = MustMakeTf(Compression::kZlib);
  Bytes z;
  ASSERT_OK(codec->Compress(data, &z));
  ASSERT_GE(z.size(), 6u);
  EXPECT_EQ(U8(z, 0), 0x78);                        // deflate, 32 KiB window
  EXPECT_EQ(((U8(z, 0) << 8) | U8(z, 1)) % 31, 0);  // header check bits
  EXPECT_EQ(U8(z, 1) & 0x20, 0);                    // no preset dictionary
  Bytes out(data.size());
  uLongf n = out.size();
  ASSERT_EQ(uncompress(reinterpret_cast<Bytef*>(out.data()), &n,
                       reinterpret_cast<const Bytef*>(z.data()), z.size()),
            Z_OK);
  EXPECT_EQ(n, data.size());
  EXPECT_TRUE(out == data);
  // And it reads what zlib writes.
  Bytes theirs(compressBound(data.size()));
  uLongf m = theirs.size();
  ASSERT_EQ(compress2(reinterpret_cast<Bytef*>(theirs.data()), &m,
                      reinterpret_cast<const Bytef*>(data.data()), data.size(), 9),
            Z_OK);
  theirs.resize(m);
  Bytes back;
  ASSERT_OK(codec->Decompress(theirs, data.size(), &back));
  EXPECT_TRUE(back == data);
}

TEST(TfRecordCodecTest, GzipWritesOneGzipMember) {
  const Bytes data = CompressibleBytes(100'000, 4);
  auto codec = MustMakeTf(Compression::kGzip);
  Bytes gz;
  ASSERT_OK(codec->Compress(data, &gz));
  ASSERT_GE(gz.size(), 18u);
  EXPECT_EQ(U8(gz, 0), 0x1f);
  EXPECT_EQ(U8(gz, 1), 0x8b);
  Bytes back;
  ASSERT_OK(codec->Decompress(gz, data.size(), &back));
  EXPECT_TRUE(back == data);
}

TEST(TfRecordCodecTest, ZlibErrors) {
  auto codec = MustMakeTf(Compression::kZlib);
  const Bytes data = CompressibleBytes(50'000, 5);
  Bytes z, out;
  ASSERT_OK(codec->Compress(data, &z));
  EXPECT_STATUS(StatusCode::kCorruption, "empty input", codec->Decompress({}, 1 << 20, &out));
  Bytes cut(z.begin(), z.end() - 5);
  EXPECT_STATUS(StatusCode::kCorruption, "truncated", codec->Decompress(cut, 1 << 20, &out));
  Bytes trailing = z;
  trailing.push_back(std::byte{1});
  EXPECT_STATUS(StatusCode::kCorruption, "1 bytes of trailing data",
                codec->Decompress(trailing, 1 << 20, &out));
  Bytes bad_adler = z;
  bad_adler.back() ^= std::byte{1};
  EXPECT_STATUS(StatusCode::kCorruption, "ZLIB", codec->Decompress(bad_adler, 1 << 20, &out));
  EXPECT_STATUS(StatusCode::kResourceExhausted, "limit",
                codec->Decompress(z, data.size() - 1, &out));
  // Still usable, and the cap is inclusive.
  ASSERT_OK(codec->Decompress(z, data.size(), &out));
  EXPECT_TRUE(out == data);
}

TEST(TfRecordCodecTest, ZlibBombRefusedWithoutBigAllocation) {
  constexpr std::size_t kMiB = std::size_t{1} << 20;
  // 16 MiB of zeros in a small zlib stream.
  Bytes zeros(16 * kMiB);
  Bytes bomb(compressBound(zeros.size()));
  uLongf m = bomb.size();
  ASSERT_EQ(compress2(reinterpret_cast<Bytef*>(bomb.data()), &m,
                      reinterpret_cast<const Bytef*>(zeros.data()), zeros.size(), 9),
            Z_OK);
  bomb.resize(m);
  zeros = {};
  auto codec = MustMakeTf(Compression::kZlib);
  Bytes out;
  ResetAllocPeak();
  EXPECT_STATUS(StatusCode::kResourceExhausted, "ZLIB", codec->Decompress(bomb, kMiB, &out));
  EXPECT_LE(AllocPeak(), kMiB + 64 * 1024);
}

}  // namespace
}  // namespace sedpack
