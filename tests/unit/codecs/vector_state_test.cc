// SPDX-License-Identifier: Apache-2.0
// Calls that reach ISA-L's AVX2/AVX-512 assembly return with the upper halves
// of the vector registers clean (codecs/isal_internal.h): left dirty, every
// SSE instruction the caller runs next is slowed. Read from the processor's
// XINUSE bits (XGETBV with ECX = 1) right after each call.
#include <cpuid.h>

#include <cstdint>
#include <vector>

#include "codecs/compress_internal.h"
#include "codecs_test_util.h"
#include "sedpack/codecs/compress.h"
#include "sedpack/config.h"
#include "support/test_support.h"

namespace sedpack {
namespace {

// Whether the CPU reports XINUSE (CPUID.(EAX=0DH, ECX=1):EAX bit 2).
bool CanReadInUse() {
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (!__get_cpuid_count(0xD, 1, &a, &b, &c, &d)) return false;
  return (a & (1u << 2)) != 0;
}

// The state components VZEROUPPER clears, of those in use: bit 2 the upper
// halves of YMM0-15, bit 6 those of ZMM0-15. (Bit 7, ZMM16-31, is no
// penalty: glibc's memcpy uses those registers so as to need no VZEROUPPER.)
std::uint64_t UpperStateInUse() {
  std::uint32_t lo = 0, hi = 0;
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(1));
  return ((std::uint64_t{hi} << 32) | lo) & ((1u << 2) | (1u << 6));
}

TEST(VectorStateTest, IsalCallsReturnWithTheUpperVectorStateClean) {
#ifndef SEDPACK_HAVE_ISAL
  GTEST_SKIP() << "built without ISA-L";
#endif
  if (!CanReadInUse()) GTEST_SKIP() << "the CPU does not report XINUSE";
  const std::vector<std::byte> data = testing::RandomBytes(1 << 20, 3);
  const std::uint64_t crc = Crc64(data);
  EXPECT_EQ(UpperStateInUse(), 0u) << "after Crc64";
  EXPECT_NE(crc, 0u);
  for (Compression c : {Compression::kGzip, Compression::kZlib}) {
    ASSERT_OK_AND_ASSIGN(auto codec, MakeCodec(c));
    std::vector<std::byte> packed, unpacked;
    ASSERT_OK(codec->Compress(data, &packed));
    EXPECT_EQ(UpperStateInUse(), 0u) << "after compressing with " << CompressionName(c);
    ASSERT_OK(codec->Decompress(packed, data.size(), &unpacked));
    EXPECT_EQ(UpperStateInUse(), 0u) << "after decompressing with " << CompressionName(c);
    EXPECT_EQ(unpacked, data);
  }
}

}  // namespace
}  // namespace sedpack
