// SPDX-License-Identifier: Apache-2.0
#include "index/recorded_shards.h"

#include <string>

namespace sedpack::index_internal {

Result<ShardInfo> RecordedShards::Lookup(Split split, std::uint64_t shard, std::string_view index_path) {
  std::lock_guard<std::mutex> lock(mu_);
  Walk& w = walks_[static_cast<std::size_t>(split)];
  if (!w.failed.ok()) return w.failed;
  if (!w.it && !w.done) {
    auto it = ShardInfoIterator::Make(dataset_, split, /*verify_hashes=*/true);
    if (!it.ok()) return w.failed = it.status();
    w.it = std::move(it).value();
  }
  while (!w.done && w.seen.size() <= shard) {
    auto next = w.it->Next();
    if (!next.ok()) return w.failed = next.status();
    if (!next->has_value()) {
      w.done = true;
      w.it.reset();
      break;
    }
    w.seen.push_back(std::move(**next));
  }
  if (shard >= w.seen.size()) {
    return Status::Corruption("the index lists shard ", shard, " of split ", SplitName(split), " (",
                              index_path, "), the metadata only ", w.seen.size(), " shards");
  }
  const ShardInfo& info = w.seen[shard];
  if (info.file_infos[0].file_path != index_path) {
    return Status::Corruption("the index lists ", index_path, " as shard ", shard, " of split ",
                              SplitName(split), ", the metadata ", info.file_infos[0].file_path);
  }
  return info;
}

Result<std::shared_ptr<const DecodedShard>> ReadIndexedShard(const Dataset& dataset, const SampleIndex& index,
                                                             RecordedShards* recorded, Split split,
                                                             std::uint64_t shard,
                                                             const ShardReadLimits& limits) {
  const std::string_view path = index.shard_path(split, shard);
  if (!recorded) {
    ShardInfo info;
    info.file_infos.push_back(FileInfo{std::string(path), {}});
    return ReadShard(dataset, info, limits, /*verify_hashes=*/false);
  }
  SEDPACK_ASSIGN_OR_RETURN(ShardInfo info, recorded->Lookup(split, shard, path));
  return ReadShard(dataset, info, limits, /*verify_hashes=*/true);
}

std::shared_ptr<RecordedShards> MakeRecordedShards(const std::shared_ptr<const Dataset>& dataset,
                                                   bool verify_hashes) {
  if (!verify_hashes || dataset->info().dataset_structure.hash_checksum_algorithms.empty()) return nullptr;
  return std::make_shared<RecordedShards>(dataset);
}

}  // namespace sedpack::index_internal
