// SPDX-License-Identifier: Apache-2.0
// The mapping config every importer reads (import_hdf5, import_trs,
// import_chipwhisperer): {"metadata", "dataset_structure", <key>: {"splits":
// {"<split>": {"rows", "attributes", ...}}, "memory_budget_mb", "threads",
// "progress", ...}}. One parser; a Dialect says which optional keys a format
// takes and how it words and checks a source. The formats turn the result
// into their public config types (sedpack/hdf5/mapping.h, capture/import.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sedpack/codecs/compress.h"
#include "sedpack/metadata/models.h"
#include "sedpack/status.h"
#include "sedpack/types.h"

namespace sedpack::import_internal {

/// A source as written: "text" (in `dataset`) or {"dataset", "field",
/// "columns", "dtype"}.
struct SourceSpec {
  std::string dataset;
  std::string field;
  std::optional<std::pair<std::int64_t, std::int64_t>> columns;
  std::optional<DType> dtype;
};

using SourceMap = std::vector<std::pair<std::string, SourceSpec>>;

struct SplitSpec {
  Split split = Split::kTrain;
  std::optional<std::pair<std::uint64_t, std::uint64_t>> rows;
  SourceMap attributes;
  SourceMap shard_custom_metadata;
};

struct MappingParams {
  std::vector<SplitSpec> splits;
  // Every format: "memory_budget_mb", "threads", "progress".
  std::uint64_t memory_budget_bytes = 256ULL << 20;
  int threads = 0;
  bool progress = false;
  // Dialect::job_keys only: "inputs", "output", "level".
  std::vector<std::string> inputs;
  std::string output;
  int level = kDefaultCodecLevel;
};

struct MappingConfig {
  Metadata metadata;
  DatasetStructure structure;
  MappingParams params;
};

/// What one format's mapping accepts and how its messages read.
struct Dialect {
  /// The mapping's top-level key, e.g. "import_hdf5".
  std::string key;
  /// Accept "inputs", "output" and "level" (a whole job in one file).
  bool job_keys = false;
  /// Accept per-split "shard_custom_metadata" (sources that may name a dtype).
  bool shard_custom_metadata = false;
  /// What a source may be, for the message when it is neither a string nor
  /// an object: "\"field\" or {...}".
  std::string_view source_forms;
  /// A split mapped twice, or none at all, is refused while parsing (else
  /// the format's own validation does it).
  bool check_split_count = false;
  /// A missing "dataset_structure" object has its own message.
  bool name_missing_structure = false;
  /// Checks and normalizes one parsed source, named `field` in messages.
  Status (*finish_source)(SourceSpec* spec, std::string_view source, const std::string& field) = nullptr;
};

/// Parse a mapping config; errors are InvalidArgument naming `source` and the key.
Result<MappingConfig> ParseMapping(std::string_view text, std::string_view source, const Dialect& dialect);
/// Read `path` (at most 64 MiB) and parse it; errors name the path.
Result<MappingConfig> LoadMapping(const std::string& path, const Dialect& dialect);

/// InvalidArgument "<source>: <field>: <what>".
Status MappingError(std::string_view source, std::string_view field, std::string_view what);

}  // namespace sedpack::import_internal
