// SPDX-License-Identifier: Apache-2.0
// Bulk conversion of capture files (TRS trace sets, ChipWhisperer projects)
// into one sedpack dataset, serially or on many ranks. One mapping model for
// every capture kind, in the JSON shape of the HDF5 mapping
// (sedpack/hdf5/mapping.h): per split, attribute name -> source field.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sedpack/comm/comm.h"
#include "sedpack/import/import.h"
#include "sedpack/io/file_system.h"
#include "sedpack/metadata/models.h"
#include "sedpack/status.h"
#include "sedpack/types.h"

namespace sedpack {

/// One field of a capture input that can feed an attribute. Every row of a
/// field has the same size in the file.
struct CaptureField {
  /// Name used in mapping configs: "samples", "title", "data", "data.INPUT",
  /// "traces", "textin", ...
  std::string name;
  /// Element type in the file. kStr: UTF-8 text padded with NULs (stripped);
  /// kBytes: raw bytes, shape (row_bytes,).
  DType dtype = DType::kUInt8;
  /// Per-row shape ({} for kStr).
  Shape shape;
  std::uint64_t row_bytes = 0;
  /// Attribute name a starting mapping gives it; empty: left out of it.
  std::string suggested_attribute;
  /// JSON object for that attribute's custom_metadata ("{}" if none).
  std::string custom_metadata = "{}";
};

/// Rows of one field as read: row i starts at data + i * stride and holds the
/// field's row_bytes. Valid until the input's next Read.
struct CaptureRows {
  const std::byte* data = nullptr;
  std::uint64_t stride = 0;
};

/// One input of an import: a TRS file, one ChipWhisperer segment, ...
class CaptureInput {
 public:
  virtual ~CaptureInput();
  /// "capture.trs", "project.cwp segment 1", for messages.
  virtual std::string Describe() const = 0;
  virtual const std::vector<CaptureField>& fields() const = 0;
  virtual std::uint64_t rows() const = 0;
  /// Bytes one row costs to read (all fields, as read together).
  virtual std::uint64_t read_row_bytes() const = 0;
  /// Rows [first, first + n) of the fields `which` (indices into fields()):
  /// (*out)[k] locates the rows of field which[k] (a TRS file hands out views
  /// into its block of records: nothing is copied).
  virtual Status Read(std::uint64_t first, std::uint64_t n, std::span<const std::size_t> which,
                      std::vector<CaptureRows>* out) = 0;
  /// JSON object for the dataset's custom_metadata in a starting mapping.
  virtual std::string dataset_custom_metadata() const { return "{}"; }
};

/// Where one attribute's values come from: a field of the capture.
struct CaptureSource {
  std::string field;
  /// Half-open window [first, last) on the last dimension (a trace window).
  std::optional<std::pair<std::int64_t, std::int64_t>> columns;
  std::string Describe() const;
};

struct CaptureSplitMapping {
  Split split = Split::kTrain;
  /// Rows [first, last) of every input; unset: all rows.
  std::optional<std::pair<std::uint64_t, std::uint64_t>> rows;
  /// attribute name -> source, one per attribute of saved_data_description.
  std::vector<std::pair<std::string, CaptureSource>> attributes;
};

struct CaptureImportParams {
  std::vector<CaptureSplitMapping> splits;
  std::uint64_t memory_budget_bytes = 256ULL << 20;
  int threads = 0;
  bool progress = false;
};

struct CaptureImportConfig {
  Metadata metadata;
  DatasetStructure structure;
  CaptureImportParams params;
};

/// Parse a mapping config: {"metadata", "dataset_structure", `key`: {"splits":
/// {"<split>": {"rows": [a, b], "attributes": {"<name>": SOURCE}}},
/// "memory_budget_mb", "threads", "progress"}} where `key` is "import_trs" or
/// "import_chipwhisperer" and SOURCE is "field" or {"dataset": "field",
/// "field": "member", "columns": [a, b]} ("data" + "INPUT" = "data.INPUT"), as
/// in import_hdf5. Unknown keys are InvalidArgument naming `source` and the key.
Result<CaptureImportConfig> ParseCaptureImportConfig(std::string_view text, std::string_view source,
                                                     std::string_view key);
Result<CaptureImportConfig> LoadCaptureImportConfig(const std::string& path, std::string_view key);

/// A starting mapping config (JSON text) for `input`: every field with a
/// suggested attribute, in its own dtype and shape, into split train.
std::string SuggestCaptureMapping(const CaptureInput& input, std::string_view key);

/// Progress of an import (sedpack/import/import.h).
using CaptureImportProgress = ImportProgress;

struct CaptureImportSummary : ImportSummary {
  /// Largest |float64 - float32| of a float64 field stored as float32 (0: exact).
  double max_float32_error = 0;
};

struct CaptureImportOptions {
  /// Rank 0 only, a few times a second, totals of all ranks.
  std::function<void(const CaptureImportProgress&)> progress;
  std::string job_id;
  /// A float64 field may feed a float32 attribute only when every value
  /// converts exactly; with this set, inexact values are rounded instead and
  /// the largest error is reported in the summary.
  bool allow_inexact_float32 = false;
  /// The FileSystem the output is checked, written and cleaned up through
  /// (nullptr: CurrentFileSystem()); the inputs read through the one they were
  /// opened with (OpenTrsInput, OpenChipWhispererInputs).
  FileSystem* file_system = nullptr;
  /// Keep the finished shards of a stopped job and resume it when the same
  /// import is run again: `command` ("import-trs"), `config_digest` (what
  /// identifies the mapping), the `input_files` with their sizes and
  /// modification times, ranks and shard options must be the same. `restart`
  /// throws an earlier run's work away.
  bool resumable = false;
  bool restart = false;
  std::string command;  ///< also names the command in messages; empty: "an import"
  std::string config_digest;
  std::vector<std::string> input_files;
};

/// Import `inputs` (row order = their order) into the new dataset `out`.
/// Collective over `comm`: every rank passes the same config and equivalent
/// inputs (each rank opens the files itself). Rank r writes the r-th
/// contiguous range of each split's rows; the merge keeps the source order.
/// Inputs must agree on the layout of every mapped field. Every source and
/// shape is checked before anything is created; on failure `out` is left as
/// it was (removed if created).
Result<CaptureImportSummary> ImportCapture(Comm& comm, const CaptureImportConfig& config,
                                           std::span<const std::unique_ptr<CaptureInput>> inputs,
                                           const std::string& out, const CaptureImportOptions& options = {});

}  // namespace sedpack
