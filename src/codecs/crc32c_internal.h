// SPDX-License-Identifier: Apache-2.0
// The two CRC-32C implementations behind sedpack::Crc32c, exposed so that the
// tests can check each against the same vectors whatever CPU they run on.
#pragma once

#include <cstddef>
#include <cstdint>

namespace sedpack::codecs_internal {

/// Table-driven CRC-32C (slicing-by-8), any CPU. Continues from `crc`.
std::uint32_t Crc32cPortable(std::uint32_t crc, const std::byte* data, std::size_t size);

/// Whether this CPU has the SSE4.2 crc32 instruction (false on non-x86 builds).
bool Crc32cHardwareAvailable();

/// CRC-32C with the SSE4.2 crc32 instruction. REQUIRES: Crc32cHardwareAvailable().
std::uint32_t Crc32cHardware(std::uint32_t crc, const std::byte* data, std::size_t size);

}  // namespace sedpack::codecs_internal
