// SPDX-License-Identifier: Apache-2.0
// The steps CheckDataset is made of, for code that runs them separately: a
// verifier that spreads the shard files over processes itself, maintenance
// passes that need the metadata walked and checked first, and `fix`.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "sedpack/check/check.h"
#include "sedpack/dataset/dataset.h"
#include "sedpack/status.h"

namespace sedpack {

/// One shard file to verify: what the metadata says about it.
struct ShardCheckTask {
  std::string path;                      ///< dataset-relative file path
  std::vector<std::string> expected;     ///< recorded hashes (algorithm order)
  std::int64_t number_of_examples = 0;   ///< recorded count
  std::string list_path;                 ///< the shards_list.json that lists it
  std::uint64_t size = 0;                ///< bytes on disk (0 if missing)
};

/// The metadata half of a check: dataset_info.json (against the expected root),
/// every shards_list.json (hashes, parse, counts, relative_path_self, cycles,
/// depth), and the list of shard files to verify. Cheap: shard files are only
/// stat()ed. Building block of CheckDataset and of the parallel verifier.
struct MetadataWalk {
  CheckReport report;
  std::vector<ShardCheckTask> shards;
  std::vector<std::string> listed;  ///< every file the metadata lists (for orphans)
};
Result<MetadataWalk> WalkMetadata(const Dataset& dataset, const CheckOptions& options);

/// Verify shard files (hash with every algorithm; with options.deep also decode
/// and count), appending problems and totals to `report`.
void CheckShardFiles(const Dataset& dataset, const std::vector<ShardCheckTask>& shards,
                     const CheckOptions& options, CheckReport* report);

/// Add an orphan warning for every file under the checked splits not in `listed`.
/// A split folder that is a symbolic link out of the root is not scanned; it
/// gets a path_escape problem instead.
void FindOrphans(const Dataset& dataset, const CheckOptions& options,
                 const std::vector<std::string>& listed, CheckReport* report);
/// The same with a membership test: `is_listed(relative path)`.
void FindOrphans(const Dataset& dataset, const CheckOptions& options,
                 const std::function<bool(const std::string&)>& is_listed, CheckReport* report);

/// Cut shard tasks into `parts` sets balanced by bytes (largest file to the
/// least-loaded set, so every set is within one file of the mean); each set in
/// path order. For spreading work over ranks.
std::vector<std::vector<ShardCheckTask>> PartitionShardTasks(std::vector<ShardCheckTask> tasks, int parts);

}  // namespace sedpack
