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
#include "sedpack/types.h"

namespace sedpack {

struct TrsExportOptions {
  /// The samples: empty = the largest 1-D numeric attribute (most elements;
  /// the first in schema order on a tie). TRS codes samples as int8, int16,
  /// int32 or float32; these four are stored as they are, the other numeric
  /// dtypes converted: bool -> int8 (0/1), uint8 -> int16, uint16 -> int32 and
  /// float16 -> float32 exactly; uint32, int64 (and int), uint64 -> int32 and
  /// float64 -> float32 checked value by value: a value that does not fit
  /// stops the export (InvalidArgument naming the attribute, example and
  /// value), float64 unless `round_float64`. str, bytes and attributes of
  /// another rank than 1 are refused (InvalidArgument).
  std::string trace_attribute;
  /// The trace titles: empty = the attribute "title" if it is a str.
  std::string title_attribute;
  bool round_float64 = false;
  /// Shards decoded ahead of the writer.
  int prefetch_shards = 2;
  /// The FileSystem the TRS file is written through (nullptr: the dataset's,
  /// and if it has none, CurrentFileSystem()).
  FileSystem* file_system = nullptr;
  /// Keep a journal beside `out` (`<out>.sedpack-journal`, the unfinished file
  /// as `.<name>.sedpack-partial`): each range of rows written is fsynced and
  /// recorded with its checksum, so that the same export run again after a
  /// stop (a signal, a kill, a full disk) checks and keeps those rows and
  /// writes only the rest. A journal of other parameters is refused
  /// (InvalidArgument naming the difference). Failures that a rerun would meet
  /// again (bad input) remove the journal and the unfinished file.
  bool journal = true;
  /// Throw away the journal and unfinished file of an earlier run first.
  bool restart = false;
};

struct TrsExportSummary {
  std::uint64_t traces = 0;
  std::string trace_attribute;  ///< where the samples came from
  bool trace_chosen = false;    ///< picked as the largest (no trace_attribute given)
  DType trace_dtype = DType::kFloat32;
  DType sample_dtype = DType::kFloat32;  ///< the TRS sample coding written
  std::uint64_t samples = 0;             ///< a trace
  std::uint64_t bytes = 0;
  std::vector<std::string> notes;  ///< attributes left out, and why
  double max_float32_error = 0;  ///< of the rows written by this run
  std::string job_id;             ///< the journaled job (empty without a journal)
  std::uint64_t units = 0;        ///< row ranges of the job
  std::uint64_t kept_units = 0;   ///< taken over from an earlier run
  bool resumed = false;           ///< an earlier run's journal was used
  std::string journal_note;       ///< why a journal found was not used
};

/// Write split `split` of `dataset` to `out` (written under a temporary name
/// and renamed into place; `out` must not exist: AlreadyExists, whatever it
/// is, so a link, FIFO or device is never replaced). Without a journal nothing
/// is left behind on failure; with one (options.journal) a stopped export
/// leaves its journal and unfinished file for the rerun. Every other
/// fixed-size attribute becomes a trace parameter (TRACE_PARAMETER_DEFINITIONS)
/// of the matching type (uint8 and fixed bytes: BYTE, int16: SHORT, int32:
/// INT, int64: LONG, float32: FLOAT, float64: DOUBLE, bool: BOOL; int8, uint16,
/// uint32, float16 widened exactly to the next type that holds them; uint64
/// and variable-size attributes are left out with a note); the trace data of a
/// record holds at most 65535 bytes (InvalidArgument naming the attribute that
/// passes it). The trace attribute's custom_metadata "scale_y" becomes SCALE_Y;
/// its name goes into the trace set parameter SEDPACK_TRACE (import-trs names
/// the samples so) and the split into SEDPACK_SPLIT.
Result<TrsExportSummary> ExportTrs(const std::shared_ptr<const Dataset>& dataset, Split split,
                                   const std::string& out, const TrsExportOptions& options = {});

}  // namespace sedpack
