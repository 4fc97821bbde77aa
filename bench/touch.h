// SPDX-License-Identifier: Apache-2.0
// What the read benches do with each example: read one byte per 4 KiB of
// every value (so that no pass can skip the work) and count its bytes.
#pragma once

#include <cstddef>
#include <cstdint>

#include "sedpack/dataset/reader.h"

namespace sedpack_bench {

/// Bytes of the example's values; one byte per 4 KiB of each added to `*sink`.
inline std::uint64_t Touch(const sedpack::Example& ex, std::uint64_t* sink) {
  std::uint64_t bytes = 0;
  for (std::size_t j = 0; j < ex.shard->num_attributes(); ++j) {
    const auto data = ex.Get(j).data;
    for (std::size_t k = 0; k < data.size(); k += 4096) *sink += std::to_integer<unsigned>(data[k]);
    bytes += data.size();
  }
  return bytes;
}

}  // namespace sedpack_bench
