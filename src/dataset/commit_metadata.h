// SPDX-License-Identifier: Apache-2.0
// Writing a commit (protocol: sedpack/dataset/commit.h), for the code that
// replaces metadata: Dataset::WriteConfig and the maintenance passes
// (sedpack_maintain). Project-private (src/ include directory), not installed.
#pragma once

#include <memory>
#include <optional>
#include <span>
#include <string>

#include "io/lock_file.h"

#include "sedpack/dataset/commit.h"
#include "sedpack/status.h"

namespace sedpack {

/// One metadata file a commit replaces (a shards_list.json, dataset-relative).
struct MetadataWrite {
  std::string relative;
  std::string text;
  /// Its bytes before the commit; nullopt if it did not exist.
  std::optional<std::string> previous;
};

/// Take the commit lock of `root` (waiting and breaking a stale one as
/// CommitLockOptions say) and finish any commit a dead process left half done,
/// so that what the caller reads next is the last completed commit.
Result<std::unique_ptr<LockFile>> TakeCommitLock(const std::string& root, const CommitLockOptions& options);

/// CommitMetadata with the commit lock already held (TakeCommitLock): for a
/// writer that reads the current metadata under the lock before it computes
/// `lists`. Checks that the lock is still held just before the commit point.
Status CommitMetadataLocked(const std::string& root, std::span<const MetadataWrite> lists,
                            const std::string& dataset_info_text, const LockFile& held);

/// Replace `lists` (children before parents) and then dataset_info.json with
/// `dataset_info_text`, as one commit that survives the process dying at any
/// instant (protocol: sedpack/dataset/commit.h). A write that fails in this process is undone at once.
/// With `dataset_info_text` null only lists that dataset_info.json does not reach
/// yet are written (a parallel writer's own subtree), so no journal is needed.
Status CommitMetadata(const std::string& root, std::span<const MetadataWrite> lists,
                      const std::string* dataset_info_text, const CommitLockOptions& lock = {});

}  // namespace sedpack
