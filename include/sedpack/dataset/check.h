// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sedpack/dataset/dataset.h"
#include "sedpack/shard/shard.h"
#include "sedpack/status.h"

namespace sedpack {

/// One problem found by a check.
struct CheckProblem {
  enum class Kind {
    kHashMismatch,     ///< file bytes do not match a recorded hash
    kMissingFile,      ///< a listed file does not exist
    kMalformed,        ///< metadata or shard cannot be parsed/decoded
    kCountMismatch,    ///< recorded counts do not add up
    kPathEscape,       ///< a path leaves the dataset root or is otherwise invalid
    kIOError,          ///< a file could not be read
    kOrphan,           ///< (warning) a file no metadata lists
  };
  Kind kind = Kind::kMalformed;
  std::string path;       ///< dataset-relative path of the file concerned
  std::string algorithm;  ///< for kHashMismatch
  std::string expected;   ///< recorded value
  std::string found;      ///< computed value
  std::string message;    ///< human-readable description
  bool warning() const { return kind == Kind::kOrphan; }
};
std::string_view CheckProblemKindName(CheckProblem::Kind kind);

/// Options for CheckDataset.
struct CheckOptions {
  /// If not empty: the trusted hashes of dataset_info.json (algorithm order).
  std::vector<std::string> expected_root_checksums;
  /// Also decode every shard and check example counts and value sizes.
  bool deep = false;
  /// Only these splits (empty = all).
  std::vector<Split> splits;
  ShardReadLimits limits;
  /// Only these parts (dataset-relative): a shards_list.json or a folder (its
  /// subtree) or a shard file. Every list from the split down is still hashed,
  /// so the chain from each part up to dataset_info.json is verified. Empty = all.
  std::vector<std::string> partial;
  /// Report files under the checked splits that no metadata lists (warnings).
  /// Ignored (off) when `partial` is set.
  bool find_orphans = true;
  /// Called after each file with the bytes just hashed (progress reporting).
  std::function<void(std::uint64_t bytes, std::uint64_t files)> progress;
};

/// Result of a check: every problem found, not only the first.
struct CheckReport {
  std::vector<CheckProblem> problems;
  std::uint64_t files_checked = 0;
  std::uint64_t bytes_checked = 0;
  std::uint64_t shards_checked = 0;
  std::uint64_t examples_checked = 0;
  /// No problem other than warnings.
  bool ok() const;
  std::size_t error_count() const;
};

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

/// Cut shard tasks into `parts` sets balanced by bytes (largest file to the
/// least-loaded set, so every set is within one file of the mean); each set in
/// path order. For spreading work over ranks.
std::vector<std::vector<ShardCheckTask>> PartitionShardTasks(std::vector<ShardCheckTask> tasks, int parts);

/// Serialize problems / tasks for sending between processes (length-prefixed fields).
std::string EncodeCheckReport(const CheckReport& report);
Result<CheckReport> DecodeCheckReport(std::string_view bytes);
std::string EncodeShardTasks(const std::vector<ShardCheckTask>& tasks);
Result<std::vector<ShardCheckTask>> DecodeShardTasks(std::string_view bytes);

/// Verify the whole Merkle tree: dataset_info.json (against the expected root if
/// given) -> every shards_list.json -> every shard file, with every configured
/// algorithm; counts are checked too. Returns a report; the Status is non-OK only
/// when the check could not run (dataset_info.json unreadable).
Result<CheckReport> CheckDataset(const std::string& root, const CheckOptions& options = {});

}  // namespace sedpack
