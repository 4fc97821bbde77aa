// SPDX-License-Identifier: Apache-2.0
// Diagnosis and clean-up of what dead jobs and interrupted maintenance leave
// behind in a dataset (the library half of `sedpack fix`). Nothing here
// repairs corrupt data: a damaged shard stays damaged (see CheckDataset).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sedpack/check/check.h"
#include "sedpack/dataset/dataset.h"
#include "sedpack/index/index.h"
#include "sedpack/maintain/restamp.h"
#include "sedpack/status.h"

namespace sedpack {

/// A file or folder that no metadata refers to and CollectGarbage removes.
struct Leftover {
  enum class Kind {
    kOrphan,      ///< a file under a split that no shards_list.json lists (a dead job's shard)
    kTemporary,   ///< a temporary file of an interrupted atomic write (update_*_of_*)
    kRecompress,  ///< the staging folder of an interrupted recompress, beside the dataset
    kLock,        ///< a provably stale lock (.sedpack-hpc/commit.lock, .sedpack-hpc/jobs/*.lock) of a
                  ///< dead job, or what breaking or taking a lock left (*.lock.pending-*, *.lock.broken-*)
  };
  Kind kind = Kind::kOrphan;
  /// Dataset-relative for orphans and temporary files; for kRecompress the
  /// folder's path (RecompressStagingPath of the root).
  std::string path;
  /// Size in bytes (files only; 0 for kRecompress).
  std::uint64_t bytes = 0;
};

/// "orphan", "temporary", "recompress", "lock".
std::string_view LeftoverKindName(Leftover::Kind kind);

/// A stopped resumable job: its journals keep its finished shards (unlisted
/// until the job's commit) for the rerun that finishes it.
struct ResumableJob {
  std::string job_id;
  std::uint64_t files = 0;  ///< files below its rank folders
  bool running = false;     ///< its job lock is held by a live process: left alone
  /// When it last recorded a finished unit: its newest journal's mtime, in ns
  /// since the epoch (0: unknown). What tells an abandoned job from one whose
  /// rerun is still to come.
  std::int64_t last_record_ns = 0;
};

/// State of the content digest sidecar (.sedpack-hpc/content.json).
enum class ContentSidecarState {
  kAbsent,   ///< no sidecar
  kCurrent,  ///< recorded for the current dataset_info.json
  kStale,    ///< recorded for another dataset_info.json
  kInvalid,  ///< present but unreadable (see content_message)
};

/// What DiagnoseDataset found. Only metadata is read; no shard is hashed.
struct DatasetDiagnosis {
  /// Orphans and temporary files under the splits (as the folders list them), then
  /// temporary files at the top and in the sidecar folder, then an interrupted
  /// recompress. Packed datasets have only orphans here (a pack has nothing else
  /// to leave behind).
  std::vector<Leftover> leftovers;
  /// Paths that lead outside the dataset root, through metadata (absolute, "..")
  /// or a symbolic link in the tree. While there are any, nothing is removed:
  /// what looks like an orphan could then be someone else's file.
  std::vector<CheckProblem> unsafe;
  /// shards_list.json files that could not be followed (missing, unreadable,
  /// malformed): the files they list look like orphans but are not.
  std::vector<CheckProblem> unreadable;
  /// The sample index sidecar (nullopt for a pack, or if it could not be checked).
  std::optional<IndexCheck> index;
  ContentSidecarState content = ContentSidecarState::kAbsent;
  std::string content_path;     ///< the content sidecar's path
  std::string content_message;  ///< why it is invalid
  bool packed = false;
  /// Locks held by a live (or presumed live) job, which fix leaves alone: one
  /// line each, "<dataset-relative path>: held by <owner>; <why it counts as live>".
  std::vector<std::string> held_locks;
  /// Resumable jobs (their files are neither orphans nor removed by CollectGarbage).
  std::vector<ResumableJob> resumable_jobs;

  /// The index exists but is stale or invalid (BuildIndexFile rewrites it).
  bool index_needs_rebuild() const;
  /// Number of leftovers of this kind.
  std::size_t count(Leftover::Kind kind) const;
  /// Total bytes of the orphans and temporary files.
  std::uint64_t leftover_bytes() const;
  /// OK if CollectGarbage may remove the leftovers. Otherwise InvalidArgument:
  /// with StatusDetail::kPathEscape if there are unsafe paths; without a detail
  /// if a list could not be followed while there are orphans under the splits
  /// (they may be that list's files).
  Status SafeToCollect() const;
};

/// Diagnose an open dataset: leftovers, unsafe and unreadable paths, stale or
/// invalid sidecars. The Status is non-OK only when the diagnosis could not
/// run (the metadata walk failed, e.g. dataset_info.json unreadable).
Result<DatasetDiagnosis> DiagnoseDataset(const Dataset& dataset);

/// What happened to one leftover in CollectGarbage.
struct GarbageOutcome {
  Leftover leftover;
  /// True if it was removed (only with apply).
  bool removed = false;
  /// Why it could not be removed (with apply); OK otherwise.
  Status error;
};

/// Result of CollectGarbage: one outcome per leftover, in diagnosis order.
struct GarbageReport {
  bool applied = false;
  std::vector<GarbageOutcome> outcomes;
  /// Leftovers that could not be removed.
  std::size_t failures() const;
};

/// Remove the leftovers of `diagnosis` (a DiagnoseDataset of `dataset`), or with
/// `apply` false only list them (a dry run: nothing on disk changes). Removal
/// also removes the folders it leaves empty, up to the split (or the root),
/// and re-checks that no folder on the way leads out of the root (the tree may
/// have changed since the diagnosis). Listed files and metadata are never
/// touched. Refused (diagnosis.SafeToCollect()'s error, nothing removed) when
/// the diagnosis found unsafe or unreadable paths; InvalidArgument for a
/// packed dataset with `apply` (a pack is read-only). A leftover that cannot be
/// removed is recorded in its outcome and the others are still tried.
Result<GarbageReport> CollectGarbage(const Dataset& dataset, const DatasetDiagnosis& diagnosis, bool apply);

/// Open `root`, diagnose it and CollectGarbage(apply).
Result<GarbageReport> CollectGarbage(const std::string& root, bool apply);

/// What FixDataset does beyond the diagnosis.
struct FixOptions {
  /// Not empty: first re-stamp every hash (RestampHashes) with this reason.
  std::string restamp_reason;
  /// Rewrite a stale or invalid sample index.
  bool rebuild_index = false;
  /// Remove the leftovers (CollectGarbage with apply); otherwise only list them.
  bool remove_leftovers = false;
  /// Remove the journals and shards of the resumable jobs that are not running.
  bool remove_abandoned_jobs = false;
};

/// The steps of FixDataset, in order: where one failed.
enum class FixStep { kNone, kRestamp, kReopen, kDiagnose, kRebuildIndex, kCollect };

/// What FixDataset did. The members of the steps before `failed_step` are filled.
struct FixResult {
  std::optional<RestampSummary> restamp;  ///< with FixOptions::restamp_reason
  std::optional<DatasetDiagnosis> diagnosis;
  /// The diagnosis found unsafe or unreadable paths: the sequence stopped after
  /// it (nothing rebuilt, listed or removed; see DatasetDiagnosis::SafeToCollect).
  bool refused = false;
  bool index_rebuilt = false;
  /// Resumable jobs removed (remove_abandoned_jobs).
  std::vector<std::string> jobs_removed;
  /// The leftovers, removed or listed (absent when refused or failed before).
  std::optional<GarbageReport> garbage;
  FixStep failed_step = FixStep::kNone;
  Status status;  ///< why `failed_step` failed; OK when the sequence ran through
};

/// The sequence of `sedpack fix` on an opened dataset (whose interrupted
/// commit, if any, has been rolled back by opening it): re-stamp (and reopen)
/// when asked, diagnose, stop there if anything is unsafe or unreadable, else
/// rebuild the index when asked and it needs it, and collect the leftovers
/// (removing them only with remove_leftovers). A packed dataset may only be
/// diagnosed and listed (the caller refuses the rest: it is read-only).
FixResult FixDataset(std::shared_ptr<Dataset> dataset, const FixOptions& options);

}  // namespace sedpack
