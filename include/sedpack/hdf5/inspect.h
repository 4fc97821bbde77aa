// SPDX-License-Identifier: Apache-2.0
// What is inside an HDF5 capture, and a starting mapping config for it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sedpack/status.h"

namespace sedpack {

/// One member of a compound dataset.
struct Hdf5FieldInfo {
  std::string name;
  std::string type;                  ///< "uint8", "float64", ... or a description
  std::vector<std::uint64_t> dims;   ///< array dims of the member ({} for a scalar)
  bool numeric = false;              ///< a number
  /// The sedpack dtype a mapping proposes ("uint8", "str", "bytes"); empty:
  /// not importable.
  std::string dtype;
  /// bytes: the size of a fixed-size element (opaque data); 0: any length.
  std::uint64_t value_bytes = 0;
};

/// One group or dataset of a file.
struct Hdf5ObjectInfo {
  std::string path;                  ///< "/Profiling_traces/traces"
  bool is_group = false;
  std::vector<std::uint64_t> dims;   ///< dataset dimensions
  std::string type;                  ///< "int8", "compound", "string", ...
  bool numeric = false;              ///< a numeric plain dataset
  std::string dtype;                 ///< proposed sedpack dtype (see Hdf5FieldInfo); empty: none
  std::uint64_t value_bytes = 0;     ///< as in Hdf5FieldInfo
  /// The `sedpack_dtype` attribute export-hdf5 puts on each dataset ("bool",
  /// "int", "str", ...); empty if absent.
  std::string sedpack_dtype;
  std::string layout;                ///< "contiguous", "chunked", "compact"
  std::vector<std::uint64_t> chunk;  ///< chunk dims if chunked
  std::vector<std::string> filters;  ///< "deflate", "shuffle", ...
  std::uint64_t storage_bytes = 0;   ///< bytes allocated in the file
  std::vector<Hdf5FieldInfo> fields; ///< compound members
};

/// Every group and dataset of `path`, sorted by path. Errors name the file.
Result<std::vector<Hdf5ObjectInfo>> InspectHdf5(const std::string& path);

/// A mapping config (JSON text) to start from: each group holding datasets
/// with a common row count becomes a split (names with "profil"/"train" ->
/// train, "attack"/"test" -> test, else in order), each numeric dataset or
/// compound field an attribute with its natural dtype and per-row shape
/// (scalars get shape [1]); strings (one a row) become str, opaque data
/// bytes of its size, byte sequences bytes of any length. A file written by
/// export-hdf5 (its `sedpack_dataset_info` and `sedpack_dtype` attributes)
/// gets back its metadata, structure and dtypes. Things that cannot be
/// imported are left out and listed in `notes`.
Result<std::string> SuggestHdf5Mapping(const std::string& path,
                                       const std::vector<Hdf5ObjectInfo>& objects,
                                       std::vector<std::string>* notes);

}  // namespace sedpack
