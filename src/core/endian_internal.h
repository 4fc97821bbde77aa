// SPDX-License-Identifier: Apache-2.0
// Little-endian loads and stores that do not care about alignment, for the
// binary formats of several modules (shards, the zip container, ...).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace sedpack::core_internal {

inline std::uint16_t LoadLe16(const std::byte* p) {
  return static_cast<std::uint16_t>(static_cast<unsigned>(p[0]) |
                                    (static_cast<unsigned>(p[1]) << 8));
}
inline std::uint32_t LoadLe32(const std::byte* p) {
  return static_cast<std::uint32_t>(LoadLe16(p)) |
         (static_cast<std::uint32_t>(LoadLe16(p + 2)) << 16);
}
inline std::uint64_t LoadLe64(const std::byte* p) {
  return static_cast<std::uint64_t>(LoadLe32(p)) |
         (static_cast<std::uint64_t>(LoadLe32(p + 4)) << 32);
}
inline void AppendLe(std::uint64_t value, int bytes, std::vector<std::byte>* out) {
  for (int i = 0; i < bytes; ++i) {
    out->push_back(static_cast<std::byte>((value >> (8 * i)) & 0xff));
  }
}

}  // namespace sedpack::core_internal
