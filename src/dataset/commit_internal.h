// SPDX-License-Identifier: Apache-2.0
// Where the commit protocol (sedpack/dataset/commit.h) keeps its files, for
// the code that takes the locks, replays the journal or lists a dataset's files.
#pragma once

#include <string_view>

namespace sedpack {

/// Dataset-relative path of the journal (for tools that list a dataset's files).
inline constexpr std::string_view kCommitJournalPath = ".sedpack-hpc/commit-journal";
/// Dataset-relative path of the commit lock.
inline constexpr std::string_view kCommitLockPath = ".sedpack-hpc/commit.lock";
/// Folder of the job reservations: `<job-id>.lock`, held by a parallel writer
/// (DistributedWriter) from Open to its end, so no two live jobs share a job id
/// and with it the shard folders `<split>/<job-id>-r<rank>/`.
inline constexpr std::string_view kJobLockDir = ".sedpack-hpc/jobs";

}  // namespace sedpack
