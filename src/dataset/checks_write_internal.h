// SPDX-License-Identifier: Apache-2.0
// How writers fill the checks sidecar (sidecar/checks_internal.h): the record
// of each shard they write, and the file written after their commit.
// Project-private (src/ include directory), not installed.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "sedpack/dataset/filler.h"
#include "shard/shard_buffer.h"
#include "sidecar/checks_internal.h"
#include "sidecar/checks_spool_internal.h"

namespace sedpack {

/// A shard a Filler has written (and fsynced, with FillerOptions::sync), as a
/// job journal records it.
struct FilledShard {
  Split split = Split::kTrain;
  std::uint64_t seq = 0;    ///< close order among the filler's shards
  std::uint64_t first = 0;  ///< its first example, counted in its split from the filler's start
  std::uint64_t size = 0;   ///< stored bytes
  ShardInfo info;
  sidecar_internal::ShardChecks checks;
};

/// What a Filler recorded, for the parallel writers that commit for it.
struct FillerAccess {
  /// Journaled writing: every shard written is passed to `on_written` (on a
  /// writer thread; an error stops the filler), and a failed or dropped filler
  /// keeps the shards it wrote, since the journal names them. Call before the
  /// first example.
  static void KeepWrittenShards(Filler& filler, std::function<Status(const FilledShard&)> on_written);
  /// Before the first example: take over `kept`, shards of an earlier run of
  /// the same job (in close order), as if this filler had written them; the
  /// examples that follow continue each split after them.
  static Status ResumeFrom(Filler& filler, const std::vector<FilledShard>& kept);
  /// The records of the shards it wrote and kept, as spooled runs (after a
  /// successful Finish; valid while the filler lives). An error if they could
  /// not all be spooled.
  static Result<std::vector<sidecar_internal::ChecksRun>> ChecksRuns(Filler& filler);
  /// The sidecar that was fresh when it was made (null if none was).
  static const sidecar_internal::ChecksSidecar* Carried(const Filler& filler);
};

namespace dataset_internal {

/// The record of a shard written at `path`: `stored_size` bytes whose
/// FastChecksum is `stored_checksum`, and what its writer learned.
sidecar_internal::ShardChecks MakeShardChecks(std::string path, std::uint64_t stored_size,
                                              std::uint64_t stored_checksum, shard_internal::ShardWriteChecks written);

/// After a commit: checks.bin for the dataset_info.json on disk now, with the
/// `carried` records and the spooled `runs`. Best effort: the dataset is
/// committed, a sidecar that cannot be written only means reads check the
/// recorded hashes.
void CommitChecks(const std::string& root, const sidecar_internal::ChecksSidecar* carried,
                  const std::vector<sidecar_internal::ChecksRun>& runs, FileSystem* fs);

}  // namespace dataset_internal
}  // namespace sedpack
