// SPDX-License-Identifier: Apache-2.0
// The check module's own plumbing: the streaming engine behind CheckDataset
// and VerifyDataset (check_engine.cc), and the pieces of check.cc it shares.
// Project-private (src/ include directory), not installed.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "dataset/shards_tree_internal.h"
#include "sedpack/check/check.h"
#include "sedpack/check/steps.h"
#include "sedpack/check/verify.h"
#include "sedpack/comm/comm.h"
#include "sedpack/dataset/dataset.h"
#include "sedpack/status.h"

namespace sedpack {

/// Progress of RunCheck, summed over every rank: VerifyDataset's (the whole
/// checks it runs are RunCheck's).
using CheckRunProgress = VerifyProgress;

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

/// The problem for a list the tree walk refuses (a bad path, too deep, a repeat).
void AddTreeRefusal(CheckReport* report, const std::string& path, dataset_internal::ShardsTreeRefusal why,
                    const Status& error);

/// The counts of a parsed list: its number_of_examples against its entries'
/// sum, and the parent's entry (`entry`) against the list (kCountMismatch).
void CheckListCounts(const ShardListInfo& entry, const ShardsList& list, const std::string& rel,
                     CheckReport* report);

/// A kResumableJob note for a stopped in-place recompress: its journals are in
/// its staging folder beside the dataset, not below it, so the orphan search
/// does not meet them. `fix` lists that job from the staging folder itself.
void NoteStoppedRecompress(const Dataset& dataset, CheckReport* report);

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

}  // namespace sedpack
