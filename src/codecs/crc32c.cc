// SPDX-License-Identifier: Apache-2.0
// CRC-32C (Castagnoli, reflected polynomial 0x82F63B78), the checksum of the
// TFRecord framing. Debian ships no C/C++ crc32c library, so it lives here:
// slicing-by-8 tables for any CPU, and the SSE4.2 crc32 instruction where the
// CPU has it (picked once at run time).
#include <array>
#include <cstring>
#include <span>

#include "codecs/crc32c_internal.h"
#include "codecs/compress_internal.h"

#if defined(__x86_64__) || defined(__i386__)
#include <nmmintrin.h>
#define SEDPACK_CRC32C_X86 1
#endif

namespace sedpack {
namespace codecs_internal {
namespace {

constexpr std::uint32_t kPolynomial = 0x82f63b78;  // 0x1EDC6F41 bit-reversed.

using Tables = std::array<std::array<std::uint32_t, 256>, 8>;

// tables[k][b]: the CRC contribution of byte b followed by k zero bytes, so
// eight input bytes fold into the CRC with eight independent lookups.
constexpr Tables MakeTables() {
  Tables t{};
  for (std::uint32_t b = 0; b < 256; ++b) {
    std::uint32_t c = b;
    for (int i = 0; i < 8; ++i) c = (c >> 1) ^ ((c & 1) ? kPolynomial : 0);
    t[0][b] = c;
  }
  for (std::size_t k = 1; k < 8; ++k) {
    for (std::size_t b = 0; b < 256; ++b) {
      t[k][b] = (t[k - 1][b] >> 8) ^ t[0][t[k - 1][b] & 0xff];
    }
  }
  return t;
}

constexpr Tables kTables = MakeTables();

// Little-endian load independent of the host's byte order and alignment.
std::uint64_t LoadLe64(const std::byte* p) {
  std::uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | static_cast<std::uint8_t>(p[i]);
  return v;
}

}  // namespace

std::uint32_t Crc32cPortable(std::uint32_t crc, const std::byte* data, std::size_t size) {
  std::uint32_t c = ~crc;
  while (size >= 8) {
    const std::uint64_t w = LoadLe64(data) ^ c;
    c = kTables[7][w & 0xff] ^ kTables[6][(w >> 8) & 0xff] ^ kTables[5][(w >> 16) & 0xff] ^
        kTables[4][(w >> 24) & 0xff] ^ kTables[3][(w >> 32) & 0xff] ^
        kTables[2][(w >> 40) & 0xff] ^ kTables[1][(w >> 48) & 0xff] ^ kTables[0][w >> 56];
    data += 8;
    size -= 8;
  }
  for (; size > 0; --size, ++data) {
    c = kTables[0][(c ^ static_cast<std::uint8_t>(*data)) & 0xff] ^ (c >> 8);
  }
  return ~c;
}

#ifdef SEDPACK_CRC32C_X86

bool Crc32cHardwareAvailable() { return __builtin_cpu_supports("sse4.2"); }

__attribute__((target("sse4.2"))) std::uint32_t Crc32cHardware(std::uint32_t crc,
                                                               const std::byte* data,
                                                               std::size_t size) {
  std::uint32_t c = ~crc;
#if defined(__x86_64__)
  std::uint64_t c64 = c;
  while (size >= 8) {
    std::uint64_t w;
    std::memcpy(&w, data, 8);  // x86 is little-endian, as the instruction expects.
    c64 = _mm_crc32_u64(c64, w);
    data += 8;
    size -= 8;
  }
  c = static_cast<std::uint32_t>(c64);
#endif
  for (; size > 0; --size, ++data) c = _mm_crc32_u8(c, static_cast<std::uint8_t>(*data));
  return ~c;
}

#else

bool Crc32cHardwareAvailable() { return false; }

std::uint32_t Crc32cHardware(std::uint32_t crc, const std::byte* data, std::size_t size) {
  return Crc32cPortable(crc, data, size);
}

#endif

}  // namespace codecs_internal

std::uint32_t Crc32c(std::span<const std::byte> data, std::uint32_t crc) {
  using codecs_internal::Crc32cHardware;
  using codecs_internal::Crc32cPortable;
  static const auto impl =
      codecs_internal::Crc32cHardwareAvailable() ? &Crc32cHardware : &Crc32cPortable;
  return impl(crc, data.data(), data.size());
}

}  // namespace sedpack
