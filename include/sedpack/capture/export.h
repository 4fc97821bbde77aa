// SPDX-License-Identifier: Apache-2.0
// `sedpack export-trs`: one split of a dataset as a TRS v2 trace set, for
// Inspector, trsfile, Jlsca or Daredevil.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "sedpack/dataset/dataset.h"
#include "sedpack/status.h"

namespace sedpack {

struct TrsExportOptions {
  /// The samples: empty = the attribute named "trace", else the first 1-D
  /// numeric attribute. int8/int16/int32/float32 are stored as they are;
  /// uint8 -> int16 and uint16 -> int32 are widened exactly; float64 ->
  /// float32 only when exact, unless `round_float64`.
  std::string trace_attribute;
  /// The trace titles: empty = the attribute "title" if it is a str.
  std::string title_attribute;
  bool round_float64 = false;
  /// Shards decoded ahead of the writer.
  int prefetch_shards = 2;
  /// The FileSystem the TRS file is written through (nullptr: the dataset's,
  /// and if it has none, CurrentFileSystem()).
  FileSystem* file_system = nullptr;
};

struct TrsExportSummary {
  std::uint64_t traces = 0;
  std::uint64_t bytes = 0;
  std::vector<std::string> notes;  ///< attributes left out, and why
  double max_float32_error = 0;
};

/// Write split `split` of `dataset` to `out` (written under a temporary name
/// and renamed into place; nothing is left behind on failure). Every other
/// fixed-size attribute becomes a trace parameter (TRACE_PARAMETER_DEFINITIONS)
/// of the matching type (uint8 and fixed bytes: BYTE, int16: SHORT, int32:
/// INT, int64: LONG, float32: FLOAT, float64: DOUBLE, bool: BOOL; int8, uint16,
/// uint32, float16 widened exactly to the next type that holds them); the
/// trace attribute's custom_metadata "scale_y" becomes SCALE_Y.
Result<TrsExportSummary> ExportTrs(const std::shared_ptr<const Dataset>& dataset, Split split,
                                   const std::string& out, const TrsExportOptions& options = {});

}  // namespace sedpack
