// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <memory>
#include <array>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "sedpack/dataset/dataset.h"
#include "sedpack/dataset/filler.h"
#include "sedpack/comm/comm.h"
#include "sedpack/status.h"
#include "sedpack/value.h"

namespace sedpack {

class LockFile;  // project-private (src/io/lock_file.h)
namespace journal_internal {
class JournalWriter;  // project-private (src/journal/journal_internal.h)
}

/// The job id a SLURM task keeps across requeues, for a resumable writer
/// (docs/cli.md, "Jobs"): "slurm-<array job id>-<task id>" for an array task,
/// "slurm-<job id>" for a plain job; empty outside SLURM.
std::string SlurmJobId();

/// Options for a parallel write.
struct DistributedWriteOptions {
  /// Per-rank filler settings; relative_path_from_split and auto_update_dataset
  /// are set by the writer (`<job-id>-r<rank>`, false).
  FillerOptions filler;
  /// Identifies the job in folder names. Empty: rank 0 makes a fresh random one,
  /// so a rerun never writes into a dead job's folders.
  std::string job_id;
  /// If set and the dataset does not exist yet, rank 0 creates it with these.
  std::optional<Metadata> create_metadata;
  std::optional<DatasetStructure> create_structure;
  /// Waiting for the dataset's commit lock (and for a given job_id that a live
  /// job has reserved), and when a holder counts as dead (commit.h).
  CommitLockOptions commit_lock;
  /// The FileSystem of every rank's reads and writes (nullptr:
  /// commit_lock.file_system, and if that is nullptr too, CurrentFileSystem()).
  FileSystem* file_system = nullptr;
  /// A resumable job: every rank journals the shards it finishes
  /// (`.sedpack-hpc/jobs/<job-id>.r<rank>.journal`) and keeps them when the job
  /// stops (a signal, an error, a kill), so that the same job run again
  /// (the same job_id, which must be set) writes only the rest. The pairs identify
  /// the job's output (inputs, config digest, seed, ranks, codec options); a
  /// journal recorded with other ones is refused (InvalidArgument naming the
  /// first that differs). Empty: not resumable.
  std::vector<std::pair<std::string, std::string>> resume_parameters;
  /// With resume_parameters: throw away an earlier run's journals and shards.
  bool restart = false;
};

/// Writes one dataset from many ranks (DESIGN.md "MPI protocol (writing)"):
/// 1. Open (collective): rank 0 creates or opens the dataset, reserves the job id
///    (`.sedpack-hpc/jobs/<job-id>.lock`, so jobs writing at the same time never
///    share folders) and broadcasts it;
/// 2. every rank fills shards under `<split>/<job-id>-r<rank>/` and, on Finish,
///    writes its own subtree's shards_list.json files;
/// 3. all ranks agree on success; on any failure nothing is merged and
///    dataset_info.json and the split lists stay byte-identical;
/// 4. rank 0 gathers the subtree ShardListInfos (Gatherv), merges them into
///    `<split>/shards_list.json` and dataset_info.json under the commit lock
///    (Dataset::WriteConfig: into the metadata as it is then, so other jobs that
///    committed meanwhile are kept), and broadcasts the outcome.
/// A job that fails before its commit removes what it wrote: every rank its own
/// `<split>/<job-id>-r<rank>/` folders.
class DistributedWriter {
 public:
  /// Collective. Fails on every rank if any rank fails; a rank that did not
  /// fail itself gets a StatusDetail::kPeerAborted error.
  static Result<std::unique_ptr<DistributedWriter>> Open(Comm& comm, const std::string& root,
                                                         DistributedWriteOptions options);
  ~DistributedWriter();

  /// Write one example on this rank (local, not collective). Returns an error
  /// (and stops) as soon as any rank has failed.
  Status WriteExample(Split split, std::span<const ValueView> values,
                      const JsonValue* custom_metadata = nullptr);
  /// Record a failure of this rank's own code; the other ranks learn of it at once.
  /// An abort status (IsAbort) passed back is ignored: it is not this rank's failure.
  void Fail(const Status& status);
  /// True for the statuses the writer returns when another rank failed (their
  /// detail is StatusDetail::kPeerAborted; the message starts with "aborted: ").
  static bool IsAbort(const Status& status);
  /// True once this rank or any other rank has failed.
  bool failed();

  /// Collective: finish this rank's shards and subtree, agree on success, merge on
  /// rank 0, and broadcast the outcome. On this rank's own failure its own error is
  /// returned; other ranks get "aborted: rank N failed: <message>".
  Status Finish();

  const std::string& job_id() const { return job_id_; }
  const std::shared_ptr<Dataset>& dataset() const { return dataset_; }
  /// The folder under each split that this rank writes to.
  std::string RankFolder() const;

  /// A resumable job: the examples of `split` this rank kept from an earlier
  /// run; the caller writes the examples of its share that follow them.
  std::uint64_t kept_examples(Split split) const { return kept_examples_[static_cast<int>(split)]; }
  /// Shards kept from an earlier run and shards its journals named, over all ranks.
  std::uint64_t kept_shards() const { return kept_shards_; }
  std::uint64_t journal_shards() const { return journal_shards_; }

 private:
  explicit DistributedWriter(Comm& comm);
  // Finish without the clean-up; *may_be_committed tells whether the job's
  // metadata may have reached dataset_info.json (then nothing may be removed).
  Status FinishJob(bool* may_be_committed);
  // A resumable job's rank: its journal, what it keeps.
  Status StartJournal(const DistributedWriteOptions& options);
  // Remove this rank's folders, unless its journal keeps them for a rerun.
  void RemoveRankFolders();
  Comm& comm_;
  std::shared_ptr<Dataset> dataset_;
  std::unique_ptr<journal_internal::JournalWriter> journal_;  // outlives filler_, which reports to it
  std::array<std::uint64_t, 3> kept_examples_{};
  std::uint64_t kept_shards_ = 0;
  std::uint64_t journal_shards_ = 0;
  std::unique_ptr<Filler> filler_;
  std::unique_ptr<LockFile> reservation_;  // rank 0: the job id's reservation
  std::string job_id_;
  Status local_;
  bool finished_ = false;
};

}  // namespace sedpack
