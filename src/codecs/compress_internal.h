// SPDX-License-Identifier: Apache-2.0
// Raw DEFLATE and the CRCs, for the shard formats that frame their own data
// (npz zip members, TFRecord framing): building blocks of the codecs, not part
// of the public codec API (sedpack/codecs/compress.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "sedpack/status.h"

namespace sedpack {

/// Raw DEFLATE (no zlib/gzip header), as used inside zip members.
/// `level` as zlib's (-1 = default, 6).
Status DeflateRaw(std::span<const std::byte> input, int level, std::vector<std::byte>* out);
/// Inflate raw DEFLATE data whose decompressed size is known to be `expected_size`
/// (fails with Corruption if it differs; `expected_size` must be checked by the caller).
Status InflateRaw(std::span<const std::byte> input, std::uint64_t expected_size,
                  std::vector<std::byte>* out);

/// CRC-32 (zip/gzip polynomial) of `data`, continuing from `crc`.
std::uint32_t Crc32(std::span<const std::byte> data, std::uint32_t crc = 0);

/// CRC-32C (Castagnoli polynomial, as in iSCSI and TFRecord framing) of
/// `data`, continuing from `crc`. Uses the SSE4.2 instruction when the CPU has it.
std::uint32_t Crc32c(std::span<const std::byte> data, std::uint32_t crc = 0);

/// CRC-64/XZ (the ECMA-182 polynomial, reflected, as xz and ISA-L's
/// crc64_ecma_refl compute it) of `data`, continuing from `crc` (0 to start).
/// An export's journal checks every byte it keeps with it: ISA-L's runs at
/// about 70 GB/s on a core with AVX-512 (XXH3-64 there: about 43), so the
/// check costs an export under 2% of its CPU. liblzma's (about 10 GB/s) where
/// the build has no ISA-L; the same value either way.
std::uint64_t Crc64(std::span<const std::byte> data, std::uint64_t crc = 0);

}  // namespace sedpack
