// SPDX-License-Identifier: Apache-2.0
// Crash-safe metadata commits.
//
// The format names its metadata files (dataset_info.json, <split>/shards_list.json,
// ...), so adding shards means replacing several files, and no single rename can
// do that. dataset_info.json holds the hashes of the split lists, so it is the
// commit point: a commit writes an undo journal (the bytes of every list it will
// replace, and the digests of dataset_info.json before and after) to
// `.sedpack-hpc/commit-journal`, replaces the lists children first, replaces
// dataset_info.json, and removes the journal. If the process dies in between,
// the journal is "hot": the next Dataset::Open, writer or `sedpack fix` takes the
// commit lock and either restores the lists (dataset_info.json is still the old
// one, so the dataset is exactly its last completed commit again) or, if
// dataset_info.json is already the new one, only drops the journal. A live
// committer holds the lock (flock on `.sedpack-hpc/commit.lock`, released by the
// kernel when a process dies), so a reader never rolls back a commit in progress.
#pragma once

#include <chrono>
#include <string>

#include "sedpack/io/file_system.h"
#include "sedpack/status.h"

namespace sedpack {

/// How long a writer waits for the commit lock, and when a holder counts as dead.
struct CommitLockOptions {
  /// Total wait for a live holder; then an IOError naming the holder.
  std::chrono::milliseconds wait_timeout{std::chrono::minutes(10)};
  /// A holder on another host whose heartbeat (refreshed every sixth of this
  /// while it holds the lock) did not change for this long is dead. A holder on
  /// this host is dead as soon as its process is.
  std::chrono::milliseconds stale_timeout{std::chrono::seconds(60)};
  /// The FileSystem the lock, the journal and the metadata writes go through
  /// (nullptr: CurrentFileSystem()). A Dataset sets its own here.
  FileSystem* file_system = nullptr;
};

/// Finish a commit that a dead process left at `root` (roll back or drop the
/// journal, see above). Returns whether there was one. Errors name the journal.
Result<bool> RecoverInterruptedCommit(const std::string& root, const CommitLockOptions& lock = {});

}  // namespace sedpack
