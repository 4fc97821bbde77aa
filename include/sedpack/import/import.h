// SPDX-License-Identifier: Apache-2.0
// What every bulk import (import-hdf5, import-trs, import-chipwhisperer)
// reports to its caller: progress while it runs, a summary at the end.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

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

/// What an import did (totals over all ranks).
struct ImportSummary {
  std::array<std::uint64_t, 3> examples{};  ///< per split, indexed by static_cast<int>(Split)
  std::uint64_t examples_total = 0;
  /// Bytes read from the inputs, all ranks (HDF5: the attributes' values;
  /// captures: whole records).
  std::uint64_t source_bytes = 0;
  double seconds = 0;
  std::string job_id;
  std::vector<std::string> root_checksums;  ///< of dataset_info.json, per hash algorithm
  /// Per-rank sizing chosen from the memory budget (rank 0's).
  std::uint64_t block_rows = 0;
  std::uint64_t shard_byte_budget = 0;
  int write_threads = 0;
  /// A resumable import: shards kept from an earlier run, and shards its journals named.
  std::uint64_t kept_shards = 0;
  std::uint64_t journal_shards = 0;
};

}  // namespace sedpack
