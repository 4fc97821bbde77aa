// SPDX-License-Identifier: Apache-2.0
// Progress of a bulk import (import-hdf5, import-trs, import-chipwhisperer),
// as the importers report it to their caller.
#pragma once

#include <cstdint>

namespace sedpack {

/// Progress of a whole import (all ranks).
struct ImportProgress {
  std::uint64_t rows_done = 0;
  std::uint64_t rows_total = 0;
  std::uint64_t bytes_done = 0;  ///< source bytes read (estimated from rows)
  std::uint64_t bytes_total = 0;
  double seconds = 0;
  /// True on the last call, once every rank has read all its rows (or stopped).
  bool finished = false;
};

}  // namespace sedpack
