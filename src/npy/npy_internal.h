// SPDX-License-Identifier: Apache-2.0
// Private to the library: the .npy format (numpy.lib.format), shared by the
// npz shards and the ChipWhisperer reader.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "sedpack/status.h"
#include "sedpack/types.h"

namespace sedpack::npz_internal {

/// What a .npy header says about its array.
struct NpyHeader {
  std::string descr;
  std::vector<std::uint64_t> shape;
  /// Offset of the array data from the start of the member.
  std::size_t data_offset = 0;
};

/// The element type a .npy descr names, restricted to what sedpack stores.
struct NpyDType {
  /// kStr for '<U{n}' (UTF-32LE, n code points per element), else numeric.
  DType dtype = DType::kUInt8;
  /// Bytes per element (4 * n for '<U{n}').
  std::uint64_t itemsize = 0;
};

/// Return the complete .npy header (magic, version, length, dict, padding) that
/// numpy.save writes for a C-order array of `descr` and `shape`: version 1.0
/// unless the header needs 2.0, the dict padded so that the data starts at a
/// multiple of 64, including numpy's spare room for growing the first axis.
std::string FormatNpyHeader(std::string_view descr, std::span<const std::uint64_t> shape);

/// Parse the header of the .npy `member` (versions 1.0 and 2.0). The dict must
/// have exactly the keys descr, fortran_order and shape. Corruption on a
/// malformed or truncated header; NotImplemented for fortran_order True.
Result<NpyHeader> ParseNpyHeader(std::span<const std::byte> member);

/// Map a descr to a dtype of types.h ('<f4', '|b1', '<U7', ...). NotImplemented
/// for other valid numpy dtypes (big-endian, complex, structured, ...).
Result<NpyDType> ParseNpyDescr(std::string_view descr);

/// The .npy descr numpy uses for `dtype` ('<i8' for kInt). REQUIRES: numeric dtype.
std::string_view NpyDescrOf(DType dtype);

}  // namespace sedpack::npz_internal
