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
#include <string_view>
#include <vector>

#include "sedpack/dataset/dataset.h"
#include "sedpack/dataset/reader.h"
#include "sedpack/index/index.h"
#include "sedpack/status.h"

namespace sedpack::index_internal {

/// Walks each split's shards_list.json tree (each list checked against the hash
/// its parent records) only as far as the shards asked for: shard k of the
/// index is the k-th shard of the walk. Thread-safe.
class RecordedShards {
 public:
  explicit RecordedShards(std::shared_ptr<const Dataset> dataset) : dataset_(std::move(dataset)) {}

  /// The entry the metadata records for shard `shard` of `split`, whose path
  /// must be `index_path` (else the index does not describe these lists:
  /// Corruption).
  Result<ShardInfo> Lookup(Split split, std::uint64_t shard, std::string_view index_path);

 private:
  struct Walk {
    std::unique_ptr<ShardInfoIterator> it;
    std::vector<ShardInfo> seen;
    bool done = false;
    Status failed;  // a walk that failed stays failed (the lists do not heal)
  };
  std::shared_ptr<const Dataset> dataset_;
  std::mutex mu_;
  std::array<Walk, 3> walks_;
};

/// Read shard `shard` of `split` through `index`: with `recorded`, its bytes are
/// checked against the metadata's hash first; null `recorded` reads unchecked.
Result<std::shared_ptr<const DecodedShard>> ReadIndexedShard(const Dataset& dataset, const SampleIndex& index,
                                                             RecordedShards* recorded, Split split,
                                                             std::uint64_t shard,
                                                             const ShardReadLimits& limits);

/// A RecordedShards for `dataset` when reads are to be verified and the dataset
/// records hash algorithms; null otherwise.
std::shared_ptr<RecordedShards> MakeRecordedShards(const std::shared_ptr<const Dataset>& dataset,
                                                   bool verify_hashes);

}  // namespace sedpack::index_internal
