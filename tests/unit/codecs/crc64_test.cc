// SPDX-License-Identifier: Apache-2.0
// CRC-64/XZ (the checksum of an export's journaled row ranges): the
// catalogued check value, a value liblzma computes (the fallback of a build
// without ISA-L must agree with ISA-L's), and pieces that continue one another.
#include <lzma.h>

#include <string_view>
#include <vector>

#include "codecs/compress_internal.h"
#include "codecs_test_util.h"
#include "support/test_support.h"

namespace sedpack {
namespace {

std::span<const std::byte> Bytes(std::string_view s) { return std::as_bytes(std::span<const char>(s.data(), s.size())); }

TEST(Crc64Test, TheCatalogueCheckValue) {
  // CRC-64/XZ of "123456789" (the CRC catalogue's check value).
  EXPECT_EQ(Crc64(Bytes("123456789")), 0x995DC9BBDF1939FAull);
  EXPECT_EQ(Crc64(Bytes("")), 0u);
  EXPECT_EQ(Crc64(Bytes(""), 1234), 1234u);
}

TEST(Crc64Test, AgreesWithLiblzmaAndContinuesAcrossPieces) {
  const std::vector<std::byte> data = testing::RandomBytes(1 << 20, 7);
  const std::uint64_t whole = Crc64(data);
  EXPECT_EQ(whole, lzma_crc64(reinterpret_cast<const std::uint8_t*>(data.data()), data.size(), 0));
  for (const std::size_t cut : {std::size_t{1}, std::size_t{63}, std::size_t{4096}, std::size_t{777777}}) {
    const std::span<const std::byte> all(data);
    EXPECT_EQ(Crc64(all.subspan(cut), Crc64(all.first(cut))), whole) << cut;
  }
  std::vector<std::byte> changed = data;
  changed[500000] ^= std::byte{1};
  EXPECT_NE(Crc64(changed), whole);
}

}  // namespace
}  // namespace sedpack
