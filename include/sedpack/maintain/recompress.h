// SPDX-License-Identifier: Apache-2.0
// Codec profiles and `sedpack recompress`: rewrite every shard of a dataset with
// another compression and re-stamp the whole hash tree, serially or on many ranks.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>

#include "sedpack/codecs/compress.h"
#include "sedpack/comm/comm.h"
#include "sedpack/status.h"
#include "sedpack/types.h"

namespace sedpack {

class FileSystem;  // sedpack/io/file_system.h

/// A named choice of shard compression, per shard file type (the format allows
/// different compressions for fb, npz and tfrec).
struct CodecProfile {
  std::string_view name;
  std::string_view purpose;
  Compression fb;
  Compression npz;
  Compression tfrec;
  /// Level of the fb codec (npz and tfrec use their codec's default).
  int fb_level = kDefaultCodecLevel;
  Compression For(ShardFileType t) const {
    return t == ShardFileType::kFb ? fb : t == ShardFileType::kNpz ? npz : tfrec;
  }
  int LevelFor(ShardFileType t) const { return t == ShardFileType::kFb ? fb_level : kDefaultCodecLevel; }
};

/// hot (LZ4: fastest to read, for the training path), hot-archive (LZ4HC
/// level 9: read as fast as hot, smaller, slow to write), general (ZSTD level
/// 3), archive (LZMA .xz: smallest, slow to write), portable (GZIP at its
/// default level: every reader, including the reference's Rust reader, which
/// lacks BZ2 and LZMA).
std::span<const CodecProfile> CodecProfiles();
/// The profile called `name`; InvalidArgument listing the names otherwise.
Result<CodecProfile> FindCodecProfile(std::string_view name);

struct RecompressProgress {
  std::uint64_t bytes_done = 0;   ///< old shard bytes processed, all ranks
  std::uint64_t bytes_total = 0;
  std::uint64_t files_done = 0;
  std::uint64_t files_total = 0;
  double seconds = 0;
  bool finished = false;
};

struct RecompressOptions {
  /// The new compression (must be allowed for the dataset's shard file type).
  Compression compression = Compression::kLz4;
  /// Its level (InvalidArgument if outside CodecLevels(compression)) and ZSTD
  /// threads per shard.
  CodecOptions codec;
  /// Empty: in place. Otherwise a new folder (must not exist, or be empty) that
  /// receives the recompressed copy; the source is not changed.
  std::string out;
  /// Threads per rank. 0 = hardware threads.
  int threads = 0;
  /// Rank 0 only, a few times a second.
  std::function<void(const RecompressProgress&)> progress;
  /// Test hook: called before each step ("shard <path>", "list <path>",
  /// "dataset_info", "exchange"); a non-OK status stops the job there, as a
  /// failure would (the staging folder is removed, see Recompress).
  std::function<Status(std::string_view step)> fault;
  /// The FileSystem the dataset is opened, read and rewritten through
  /// (nullptr: the default).
  FileSystem* file_system = nullptr;
  /// Journal each rewritten shard in the staging tree's .sedpack-hpc/jobs/, and
  /// keep a stopped run's staging tree, so that the same call again rewrites
  /// only the shards not yet journaled; `restart` throws a stopped run away.
  bool journal = false;
  bool restart = false;
};

struct RecompressSummary {
  std::uint64_t files = 0;
  std::uint64_t bytes_before = 0;  ///< shard bytes on disk
  std::uint64_t bytes_after = 0;
  std::uint64_t orphans_dropped = 0;  ///< unlisted files under the splits, not carried over
  double seconds = 0;
  std::string staging;  ///< where the new tree was built
  std::string resumed_job;  ///< the stopped run's job id when shards were kept from it
  std::uint64_t shards_kept = 0;  ///< shards of a stopped run kept (not rewritten)
};

/// Recompress every shard of the dataset at `root` (collective over `comm`).
///
/// Every shard's recorded hashes are checked before it is rewritten (corrupt
/// data is refused, never laundered into fresh hashes); shards are decoded and
/// re-encoded, so the content is unchanged and only the file bytes differ.
/// The new tree (same paths, new shard bytes, every shards_list.json and
/// dataset_info.json re-stamped) is built in a staging folder beside the
/// dataset; files outside the splits are carried over. In place, the staging
/// folder and the dataset are then swapped with one atomic rename
/// (renameat2 RENAME_EXCHANGE) and the old tree is deleted: at every moment the
/// path holds either the whole old dataset or the whole new one. A failure or a
/// cancellation (sedpack/cancel.h) before the swap leaves the dataset untouched
/// and removes the staging folder (a new --out folder entirely); a crash leaves
/// a staging folder that the next recompress (or `fix --gc`) removes.
Result<RecompressSummary> Recompress(Comm& comm, const std::string& root, const RecompressOptions& options);

/// The staging folder Recompress uses for `root`: `<parent>/.<name>.recompress`.
std::string RecompressStagingPath(const std::string& root);

}  // namespace sedpack
