// SPDX-License-Identifier: Apache-2.0
#include "index/recorded_shards.h"

#include <string>

#include "dataset/shards_tree_internal.h"
#include "dataset/verified_read.h"

namespace sedpack::index_internal {

Result<std::shared_ptr<const ShardsList>> RecordedShards::Load(const FileInfo& file) {
  for (std::size_t i = 0; i < cache_.size(); ++i) {
    const FileInfo& f = cache_[i].first;
    if (f.file_path == file.file_path && f.hash_checksums == file.hash_checksums) {
      auto hit = cache_[i];
      cache_.erase(cache_.begin() + static_cast<long>(i));
      cache_.push_back(hit);
      return hit.second;
    }
  }
  SEDPACK_ASSIGN_OR_RETURN(ShardsList list, dataset_internal::LoadShardsListVerified(*dataset_, file));
  auto shared = std::make_shared<const ShardsList>(std::move(list));
  if (cache_.size() >= kCachedLists) cache_.erase(cache_.begin());
  cache_.emplace_back(file, shared);
  return shared;
}

Result<ShardInfo> RecordedShards::Lookup(Split split, std::uint64_t shard, std::string_view index_path) {
  std::lock_guard<std::mutex> lock(mu_);
  const ShardListInfo* root = dataset_->info().FindSplit(split);
  if (!root) return Status::NotFound("there is no shard in ", SplitName(split));
  FileInfo file = root->shard_list_info_file;
  std::uint64_t k = shard;
  // One root-to-leaf descent: the walk's depth limit; a cycle ends there too.
  for (std::size_t depth = 0;; ++depth) {
    SEDPACK_RETURN_NOT_OK(dataset_internal::CheckShardsListDepth(file.file_path, depth));
    SEDPACK_ASSIGN_OR_RETURN(std::shared_ptr<const ShardsList> list, Load(file));
    if (k < list->shard_files.size()) {
      const ShardInfo& info = list->shard_files[k];
      if (info.file_infos.empty()) {
        return Status::Corruption(list->relative_path_self, ": shard_files[", k, "] has no file_infos");
      }
      if (info.file_infos[0].file_path != index_path) {
        return Status::Corruption("the index lists ", index_path, " as shard ", shard, " of split ",
                                  SplitName(split), ", the metadata ", info.file_infos[0].file_path);
      }
      return info;
    }
    k -= list->shard_files.size();
    const ShardListInfo* next = nullptr;
    for (const ShardListInfo& child : list->children_shard_lists) {
      if (child.number_of_shards < 0) {
        return Status::Corruption(list->relative_path_self, ": a child records ", child.number_of_shards,
                                  " shards");
      }
      const auto n = static_cast<std::uint64_t>(child.number_of_shards);
      if (k < n) {
        next = &child;
        break;
      }
      k -= n;
    }
    if (!next) {
      return Status::Corruption("the index lists shard ", shard, " of split ", SplitName(split), " (",
                                index_path, "), past the shards the metadata records");
    }
    file = next->shard_list_info_file;
  }
}

Result<std::shared_ptr<const DecodedShard>> ReadIndexedShard(const Dataset& dataset, const SampleIndex& index,
                                                             RecordedShards* recorded,
                                                             const sidecar_internal::ChecksSidecar* checks,
                                                             Split split, std::uint64_t shard,
                                                             const ShardReadLimits& limits) {
  const std::string_view path = index.shard_path(split, shard);
  if (checks && checks->Find(path)) {
    ShardInfo info;
    info.file_infos.push_back(FileInfo{std::string(path), {}});
    return dataset_internal::ReadShardChecked(dataset, info, limits, /*verify=*/true, checks);
  }
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
