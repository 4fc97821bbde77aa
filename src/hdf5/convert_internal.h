// SPDX-License-Identifier: Apache-2.0
// Exact value conversion for the importer: a value changes dtype only if it
// survives the trip unchanged (43.0 -> uint8 43 is fine; 3.5 or 300 is not).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "hdf5/h5_internal.h"
#include "sedpack/types.h"

namespace sedpack::h5 {

/// The first element that could not be converted.
struct InexactValue {
  std::uint64_t index = 0;  ///< element index within the converted run
  std::string value;        ///< the source value as text
};

/// Convert `n` elements read as `from` (kInt64, kUInt64 or kFloat64; 8 bytes
/// each) at `in` to `dest` at `out` (DTypeItemSize(dest) bytes each). Returns
/// false and fills `bad` at the first value that `dest` cannot hold exactly.
/// NaN and infinities convert between float dtypes; to integers they are inexact.
bool ConvertExact(ReadAs from, const std::byte* in, std::size_t n, DType dest, std::byte* out,
                  InexactValue* bad);

/// Append the JSON form of element `i` read as `from` (shortest round-trip for
/// floats, always with a '.' or exponent so it stays a float; NaN/inf: false).
bool AppendJsonNumber(ReadAs from, const std::byte* in, std::size_t i, std::string* out);

}  // namespace sedpack::h5
