// SPDX-License-Identifier: Apache-2.0
// The full-disk resume check that the fault tests of every resumable writing
// job share: count a job's writes, fill the disk from a third and from two
// thirds of them, rerun on a healthy disk, compare with an uninterrupted run.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "sedpack/mpi/distributed_write.h"
#include "sedpack/status.h"

namespace sedpack::testing {

/// Every example of every split of the dataset at `root`, in read order, as
/// raw bytes prefixed by the split's name.
std::vector<std::string> ReadAll(const std::string& root);

/// What the check needs of one run of a resumable job into `out`.
struct RunResult {
  Status status;
  std::uint64_t kept_shards = 0, journal_shards = 0;
};
using Job = std::function<RunResult(const std::string& out)>;

/// A job's summary (anything with kept_shards and journal_shards) as a RunResult.
template <typename Summary>
RunResult ResultOf(const Result<Summary>& r) {
  RunResult out{r.status()};
  if (r.ok()) {
    out.kept_shards = r->kept_shards;
    out.journal_shards = r->journal_shards;
  }
  return out;
}

/// A dataset of one-example shards in folders of two, two folders a parent
/// (96 shards, every fourth in the test split, six levels deep), so that an
/// index build walks many subtrees.
void MakeDeepDataset(const std::string& root);

/// What `index` reads back from the dataset's index file: every shard of
/// every split as "split:path:first row:examples", in read order. Expects the
/// index fresh and the finished build's journals gone.
std::vector<std::string> IndexRows(const std::string& root);

/// The caller's side of a resumable parallel job on one rank: writes examples
/// k = first, first + step, ... below last (the value {k, -k}, in split
/// `split_of(k)`) through `writer`, skipping in each split the examples the
/// writer kept from a stopped run, then finishes it.
RunResult WriteShareAndFinish(DistributedWriter& writer, std::int64_t first, std::int64_t last, std::int64_t step,
                              const std::function<Split(std::int64_t)>& split_of);

/// What a stopped resumable job leaves: `check` of the dataset at `root` finds
/// nothing but the job `job_id` noted as resumable.
void ExpectOnlyStoppedJob(const std::string& root, const std::string& job_id);

/// The rerun after a stop succeeded, kept shards (none if those left were
/// `damaged`), and kept no more than its journals named.
void ExpectResumed(const RunResult& resumed, bool damaged);

/// Flips the last byte of every shard file below `dir` (the metadata's .json
/// files and the .sedpack-hpc sidecar folder left alone), so that a rerun
/// checking its kept shards' hashes must keep none of them.
void DamageShardFiles(const std::string& dir);

/// How FullDiskThenResume reads and disturbs a job's output.
struct FullDiskCheck {
  /// What a finished run's output at `out` holds, compared with `want`.
  std::function<std::vector<std::string>(const std::string& out)> read = ReadAll;
  /// Whether the second stopped run's shards are damaged first (the rerun then
  /// keeps none). False for a job whose units are not shard files of its own
  /// (an index build journals the lists it walked): both reruns keep units.
  bool damage_shards = true;
  /// Called on what each stopped run left, before the rerun (e.g. to check
  /// that nothing half-written is visible).
  std::function<void(const std::string& out)> stopped;
  /// Also fill the disk at the uninterrupted run's last write (a job whose
  /// output is one file written last, as the index file): nothing of it may
  /// be visible after the stop, and the rerun keeps every unit.
  bool at_last_write = false;
  /// Writes an uninterrupted run must make at least, so that a third and two
  /// thirds of them fall among its units.
  std::int64_t min_writes = 20;
};

/// Runs `job` with every write of the process counted, then twice more with the
/// disk full from a third and from two thirds of those writes (and
/// check.at_last_write, from the last); each stopped job
/// is run again on a healthy disk and must end with `want`, keeping shards the
/// first time and (check.damage_shards) none the second, when every shard left
/// on disk was damaged.
void FullDiskThenResume(const std::string& dir, const Job& job, const std::vector<std::string>& want,
                        const FullDiskCheck& check = {});

}  // namespace sedpack::testing
