// SPDX-License-Identifier: Apache-2.0
// The steps CheckDataset is made of, for the code that runs them separately:
// the parallel verifier (sedpack_distributed), the maintenance passes
// (sedpack_maintain) and `sedpack fix`; plus the byte form in which shard
// tasks and reports travel between ranks. Project-private (src/ include
// directory), not installed: the public entry is CheckDataset (and
// VerifyDataset over a Comm).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "sedpack/comm/comm.h"
#include "sedpack/dataset/check.h"
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

/// Progress of RunCheck, summed over every rank.
struct CheckRunProgress {
  std::uint64_t bytes_done = 0;
  /// What the bytes to hash add up to: an estimate from the recorded shard
  /// counts and the mean shard size so far (exact, = bytes_done, at the end).
  std::uint64_t bytes_total = 0;
  /// Shard files the metadata records (split entries' number_of_shards).
  std::uint64_t files_total = 0;
  double seconds = 0;
};

struct CheckRunOptions {
  CheckOptions check;  ///< its `progress` member is ignored; `threads` per rank
  /// Rank 0: at most every `progress_interval_s` seconds, and once at the end.
  std::function<void(const CheckRunProgress&)> progress;
  double progress_interval_s = 0.5;
  /// Called on a worker thread before each unit of work (tests slow one rank down).
  std::function<void(int rank)> before_unit;
};

/// A whole check (not a partial one) over every rank of `comm`, each with
/// check.threads threads, streaming: rank 0 checks dataset_info.json and the top
/// of the list tree until it has cut it into enough units (subtrees, or ranges of
/// one list's shards); the ranks then take units one at a time from a shared
/// counter (Comm::FetchAdd) until none is left, so a slow rank or a big subtree
/// does not hold the others up. A worker holds one root-to-leaf path of lists.
/// Listed shard paths travel as 64-bit keys (orphan search). Rank 0 returns the
/// whole report, problems sorted; other ranks their own part. Collective; every
/// rank passes the same dataset (opened on each).
Result<CheckReport> RunCheck(Comm& comm, const Dataset& dataset, const CheckRunOptions& options);

/// Pieces of check.cc shared with the check engine (check_engine.cc).
namespace check_internal {

/// Lists nest one folder per level; anything deeper is hostile or broken.
inline constexpr std::size_t kMaxListDepth = 64;

void AddProblem(CheckReport* report, CheckProblem::Kind kind, std::string path, std::string message,
                std::string algorithm = "", std::string expected = "", std::string found = "");
void CompareHashes(const std::vector<HashAlgorithm>& algos, const std::string& path,
                   const std::vector<std::string>& expected, const std::vector<std::string>& found,
                   CheckReport* report);
/// What a failure to open or read a listed file is (missing, path escape, I/O).
CheckProblem::Kind ProblemKindOf(const Status& status);
/// Hash a listed file (streamed) and compare; false if it could not be read.
bool HashAndCompare(const Dataset& ds, const std::string& rel, const std::vector<std::string>& expected,
                    const CheckOptions& options, CheckReport* report, std::uint64_t* size_out = nullptr);
/// A kLargeList warning for a list above either bound of `options`.
void WarnIfLarge(const std::string& rel, std::uint64_t bytes, const ShardsList& list, const CheckOptions& options,
                 CheckReport* report);

/// The counts of a parsed list: its number_of_examples against its entries'
/// sum, and the parent's entry (`entry`) against the list (kCountMismatch).
void CheckListCounts(const ShardListInfo& entry, const ShardsList& list, const std::string& rel,
                     CheckReport* report);

/// Length-prefixed fields: "<decimal length>:<bytes>".
void PutField(std::string* out, std::string_view v);
class FieldReader {
 public:
  explicit FieldReader(std::string_view in) : in_(in) {}
  bool done() const { return in_.empty(); }
  Result<std::string> Next();
  Result<std::uint64_t> NextNumber();

 private:
  std::string_view in_;
};

}  // namespace check_internal

/// Cut shard tasks into `parts` sets balanced by bytes (largest file to the
/// least-loaded set, so every set is within one file of the mean); each set in
/// path order. For spreading work over ranks.
std::vector<std::vector<ShardCheckTask>> PartitionShardTasks(std::vector<ShardCheckTask> tasks, int parts);

/// Serialize problems / tasks for sending between processes (length-prefixed fields).
std::string EncodeCheckReport(const CheckReport& report);
Result<CheckReport> DecodeCheckReport(std::string_view bytes);
std::string EncodeShardTasks(const std::vector<ShardCheckTask>& tasks);
Result<std::vector<ShardCheckTask>> DecodeShardTasks(std::string_view bytes);

}  // namespace sedpack
