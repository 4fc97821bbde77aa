// SPDX-License-Identifier: Apache-2.0
// The mapping config of `sedpack import-hdf5`: which HDF5 dataset (or compound
// field of one) becomes which attribute of which split. Parsing needs no HDF5
// library; the files themselves are looked at by the importer (import.h).
#pragma once

#include <array>
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

namespace sedpack {

/// Where one attribute's values come from, in every input file.
struct Hdf5Source {
  /// Path of the HDF5 dataset inside the file, e.g. "Profiling_traces/traces"
  /// (a leading "/" is optional). Its first dimension is the row (example) axis.
  std::string dataset;
  /// Member of a compound dataset, e.g. "key"; empty for a plain dataset.
  std::string field;
  /// Half-open window [first, last) on the last dimension of a plain dataset of
  /// rank >= 2 (a trace window). Unset: the whole row.
  std::optional<std::pair<std::int64_t, std::int64_t>> columns;
  /// Only for shard custom_metadata sources: convert the values (exactly) to
  /// this dtype before they are written as JSON numbers. Unset: integers stay
  /// integers and floats stay floats.
  std::optional<DType> dtype;

  /// "Profiling_traces/metadata.key", for messages.
  std::string Describe() const;
};

/// How one split is filled.
struct Hdf5SplitMapping {
  Split split = Split::kTrain;
  /// Rows [first, last) of every input file; unset: all rows.
  std::optional<std::pair<std::uint64_t, std::uint64_t>> rows;
  /// One source per attribute of dataset_structure.saved_data_description, in
  /// schema order (attribute name, source).
  std::vector<std::pair<std::string, Hdf5Source>> attributes;
  /// Per-example shard custom_metadata: key -> source; the example's values
  /// become {"key": value, ...}. A change of value closes the shard (the
  /// reference's rule), so use it for slowly changing fields such as a key.
  std::vector<std::pair<std::string, Hdf5Source>> shard_custom_metadata;
};

/// Job parameters: the `import_hdf5` object of a mapping config.
struct Hdf5ImportParams {
  /// In the order the splits appear in the config.
  std::vector<Hdf5SplitMapping> splits;
  /// Input files, in row order (front-ends let command-line arguments win).
  std::vector<std::string> inputs;
  /// Dataset folder to create (front-ends let a command-line argument win).
  std::string output;
  /// Memory a rank may use for read blocks and shards waiting to be written.
  std::uint64_t memory_budget_bytes = 256ULL << 20;
  /// Threads compressing/hashing/writing shards per rank. 0 = hardware threads.
  int threads = 0;
  /// Compression level of the shards (not recorded in the dataset):
  /// kDefaultCodecLevel = the codec's default (CodecLevels).
  int level = kDefaultCodecLevel;
  /// Front-end hint: report progress even when stderr is not a terminal.
  bool progress = false;
};

/// A whole import job: the dataset description (same schema as
/// dataset_info.json) plus the mapping.
struct Hdf5ImportConfig {
  Metadata metadata;
  DatasetStructure structure;
  Hdf5ImportParams params;
};

/// Parse a mapping config: a JSON object with `metadata` and `dataset_structure`
/// (exactly the dataset_info.json schema; `saved_data_description` required)
/// and `import_hdf5`:
///   { "splits": { "<split>": { "rows": [first, last],
///                              "attributes": { "<name>": SOURCE, ... },
///                              "shard_custom_metadata": { "<key>": SOURCE } } },
///     "inputs": [...], "output": "...", "memory_budget_mb": N, "threads": N,
///     "progress": bool }
/// SOURCE is "path/in/file" or { "dataset": "...", "field": "...",
/// "columns": [first, last], "dtype": "..." }. Unknown keys anywhere are
/// InvalidArgument naming the key and `source`.
Result<Hdf5ImportConfig> ParseHdf5ImportConfig(std::string_view text, std::string_view source);
/// Read and parse a mapping config file (errors name the path).
Result<Hdf5ImportConfig> LoadHdf5ImportConfig(const std::string& path);

/// Check a config without opening any file: the structure is valid for
/// Dataset::Create, every split maps every attribute exactly once and nothing
/// else, windows and row ranges are well formed. Which HDF5 types fill which
/// dtypes is checked against the files (ImportHdf5).
Status ValidateHdf5ImportConfig(const Hdf5ImportConfig& config);

}  // namespace sedpack
