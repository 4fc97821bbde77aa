// SPDX-License-Identifier: Apache-2.0
// Content digests: a SHA-256 of each shard's decoded content, and a content id
// of the whole dataset derived from them. File hashes change when a shard is
// recompressed; content digests do not, so they tell "same data" apart from
// "same bytes". Kept in the sidecar `.sedpack-hpc/content.json`.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "sedpack/dataset/dataset.h"
#include "sedpack/comm/comm.h"
#include "sedpack/maintain/shard_pass.h"
#include "sedpack/shard/shard.h"
#include "sedpack/status.h"

namespace sedpack {

/// Sidecar file name under `.sedpack-hpc/`.
inline constexpr std::string_view kContentSidecarName = "content.json";

/// SHA-256 (hex) of a decoded shard: first every attribute's name, dtype and
/// declared shape, then every value with its own shape and length, each field
/// length-prefixed (so equal bytes under another shape or dtype differ).
std::string ShardContentDigest(const std::vector<AttributeSpec>& schema, const DecodedShard& shard);

/// The digests of a dataset, by shard path, and the content id: SHA-256 over
/// each split (in the order train, test, holdout) and its shards' digests in
/// read order, with example counts.
struct ContentDigests {
  std::string dataset_info_sha256;  ///< of the dataset_info.json they were made for
  std::map<std::string, std::string> shards;
  std::string content_id;
};

/// Serialize / parse the sidecar (validated; errors name `source`).
std::string SerializeContentDigests(const ContentDigests& d);
Result<ContentDigests> ParseContentDigests(std::string_view text, std::string_view source);

/// Collective: decode every shard (hashes checked; shards spread over ranks by
/// bytes) and compute every digest and the content id. All ranks get the result.
Result<ContentDigests> ComputeContentDigests(Comm& comm, const std::string& root, int threads = 0);
/// The same with options: threads, and progress on rank 0 while the shards are decoded.
Result<ContentDigests> ComputeContentDigests(Comm& comm, const std::string& root, const ShardPassOptions& pass);

/// The content id from shard digests, following the dataset's lists.
Result<std::string> ContentIdOf(const Dataset& dataset, const std::map<std::string, std::string>& shards);

/// Write the sidecar for `root` (dataset_info_sha256 is set from the file on disk).
Status WriteContentDigests(const std::string& root, ContentDigests digests);

/// A `sedpack digest` job that survives a stop: each shard's digest is
/// journaled under the dataset's .sedpack-hpc/jobs/ (bound to its
/// dataset_info.json) as it is computed; a rerun keeps the digests journaled
/// for shards still of the recorded size and hashes and computes only the
/// rest. The sidecar is then written and the journals removed.
struct DigestJobOptions {
  bool journal = true;
  bool restart = false;  ///< throw a stopped run's journals away first
};
struct DigestJob {
  ContentDigests digests;  ///< as written
  std::string resumed_job;  ///< the stopped run's job id when digests were kept from it
  std::uint64_t shards_kept = 0;
};
/// Collective; rank 0 writes the sidecar. AlreadyExists (naming the
/// difference, suggesting --restart) if a stopped run's journal was made for
/// another dataset_info.json.
Result<DigestJob> DigestDataset(Comm& comm, const std::string& root, const ShardPassOptions& pass,
                                const DigestJobOptions& job);
/// Read the sidecar; NotFound if there is none.
Result<ContentDigests> ReadContentDigests(const std::string& root);

/// One shard whose content differs from the recorded digest (or has none).
struct ContentMismatch {
  std::string path;
  std::string expected;  ///< empty: no recorded digest
  std::string found;
};

struct ContentCheck {
  std::vector<ContentMismatch> mismatches;
  std::vector<std::string> unlisted;  ///< recorded shards the dataset no longer has
  std::string recorded_id, current_id;
  bool sidecar_stale = false;  ///< recorded for another dataset_info.json (e.g. before a recompress)
  bool ok() const { return mismatches.empty() && unlisted.empty() && recorded_id == current_id; }
};

/// Collective: recompute every shard's content digest and compare with the sidecar.
Result<ContentCheck> CheckContentDigests(Comm& comm, const std::string& root, int threads = 0);

}  // namespace sedpack
