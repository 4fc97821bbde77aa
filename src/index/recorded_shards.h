// SPDX-License-Identifier: Apache-2.0
// The hash checksums the metadata records for the shards an index points at,
// for readers that go through the index (which holds paths and counts only).
// Project-private (src/ include directory).
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <string_view>
#include <vector>

#include "sedpack/dataset/dataset.h"
#include "sedpack/dataset/reader.h"
#include "sedpack/index/index.h"
#include "sedpack/status.h"
#include "sidecar/checks_internal.h"

namespace sedpack::index_internal {

/// Finds shard k of a split's read order by descending its shards_list.json
/// tree: each list is checked against the hash its parent records (the split's
/// against dataset_info.json), and its children's recorded number_of_shards
/// say which child holds shard k (a list's own shards come before its
/// children's, as in the read order). A lookup costs one root-to-leaf path of
/// lists; the last few lists are kept, so that lookups in one leaf folder parse
/// it once. Thread-safe.
class RecordedShards {
 public:
  explicit RecordedShards(std::shared_ptr<const Dataset> dataset) : dataset_(std::move(dataset)) {}

  /// The entry the metadata records for shard `shard` of `split`, whose path
  /// must be `index_path` (else the index does not describe these lists:
  /// Corruption).
  Result<ShardInfo> Lookup(Split split, std::uint64_t shard, std::string_view index_path);

 private:
  static constexpr std::size_t kCachedLists = 8;
  Result<std::shared_ptr<const ShardsList>> Load(const FileInfo& file);

  std::shared_ptr<const Dataset> dataset_;
  std::mutex mu_;
  // Most recently used last; keyed by path and recorded hashes.
  std::vector<std::pair<FileInfo, std::shared_ptr<const ShardsList>>> cache_;
};

/// Read shard `shard` of `split` through `index`: when `checks` (a fresh
/// sidecar, may be null) records it, its bytes are checked against the
/// record's fast checksum; otherwise with `recorded`, against the metadata's
/// hash; null `recorded` reads unchecked.
Result<std::shared_ptr<const DecodedShard>> ReadIndexedShard(const Dataset& dataset, const SampleIndex& index,
                                                             RecordedShards* recorded,
                                                             const sidecar_internal::ChecksSidecar* checks,
                                                             Split split, std::uint64_t shard,
                                                             const ShardReadLimits& limits);

/// A RecordedShards for `dataset` when reads are to be verified and the dataset
/// records hash algorithms; null otherwise.
std::shared_ptr<RecordedShards> MakeRecordedShards(const std::shared_ptr<const Dataset>& dataset,
                                                   bool verify_hashes);

}  // namespace sedpack::index_internal
