// SPDX-License-Identifier: Apache-2.0
// Dataset::WriteConfig: the reference's write_config / merge_shard_infos. Every
// ancestor folder of an updated list gets a shards_list.json pointing one level
// deeper, up to <split>/shards_list.json, and dataset_info.json is rewritten.
#include <map>
#include <string>
#include <vector>

#include "sedpack/codecs/hash.h"
#include "sedpack/dataset/dataset.h"
#include "sedpack/io/file.h"
#include "sedpack/metadata/paths.h"

namespace sedpack {
namespace {

constexpr std::string_view kListName = "shards_list.json";
// Deeper trees than this are not produced by any writer; refusing them bounds recursion.
constexpr std::size_t kMaxTreeDepth = 64;

struct Update {
  ShardListInfo info;
  std::vector<std::string> components;
};

class Merger {
 public:
  explicit Merger(const Dataset& ds) : ds_(ds) {}

  Result<ShardListInfo> Merge(std::vector<Update> updates, std::size_t common) {
    if (common > kMaxTreeDepth) {
      return Status::InvalidArgument("shards_list tree deeper than ", kMaxTreeDepth, " levels");
    }
    const std::vector<std::string>& first = updates.front().components;
    std::vector<std::string> dir(first.begin(), first.begin() + static_cast<long>(common));
    for (const Update& u : updates) {
      if (u.components.size() < common + 1 ||
          !std::equal(dir.begin(), dir.end(), u.components.begin())) {
        return Status::InvalidArgument("cannot merge ", u.info.shard_list_info_file.file_path,
                                       " under ", JoinPath(dir));
      }
    }
    std::vector<std::string> list_components = dir;
    list_components.push_back(std::string(kListName));
    const std::string list_path = JoinPath(list_components);

    ShardsList list;
    if (PathExists(ds_.PathOf(list_path))) {
      SEDPACK_ASSIGN_OR_RETURN(list, LoadShardsList(ds_, list_path));
    } else {
      list.relative_path_self = list_path;
    }

    // Existing children go first so that they keep their order; new subtrees follow.
    std::vector<Update> deeper;
    for (const ShardListInfo& child : list.children_shard_lists) {
      list.number_of_examples -= child.number_of_examples;
      Update u{child, PathComponents(child.shard_list_info_file.file_path)};
      deeper.push_back(std::move(u));
    }
    list.children_shard_lists.clear();
    for (Update& u : updates) {
      // An update pointing at this very list is already covered by loading it.
      if (u.components.size() > common + 1) deeper.push_back(std::move(u));
    }

    std::vector<std::string> order;
    std::map<std::string, std::vector<Update>> groups;
    for (Update& u : deeper) {
      if (u.components.size() < common + 2) {
        return Status::InvalidArgument(list_path, ": child ", u.info.shard_list_info_file.file_path,
                                       " is not below ", JoinPath(dir));
      }
      const std::string& key = u.components[common];
      if (!groups.count(key)) order.push_back(key);
      groups[key].push_back(std::move(u));
    }
    std::int64_t shards = static_cast<std::int64_t>(list.shard_files.size());
    for (const std::string& key : order) {
      SEDPACK_ASSIGN_OR_RETURN(ShardListInfo child, Merge(std::move(groups[key]), common + 1));
      list.number_of_examples += child.number_of_examples;
      shards += child.number_of_shards;
      list.children_shard_lists.push_back(std::move(child));
    }

    const std::string text = SerializeShardsList(list);
    // relative_path_self decides where the list lives (as in the reference).
    SEDPACK_RETURN_NOT_OK(ValidateRelativePath(list.relative_path_self, "relative_path_self"));
    SEDPACK_RETURN_NOT_OK(WriteFileAtomic(ds_.PathOf(list.relative_path_self), text));
    const auto& algos = ds_.info().dataset_structure.hash_checksum_algorithms;
    SEDPACK_ASSIGN_OR_RETURN(
        auto hashes, HashBytes(algos, std::as_bytes(std::span<const char>(text.data(), text.size()))));
    ShardListInfo out;
    out.shard_list_info_file.file_path = list.relative_path_self;
    out.shard_list_info_file.hash_checksums = std::move(hashes);
    out.number_of_examples = list.number_of_examples;
    out.number_of_shards = shards;
    return out;
  }

 private:
  const Dataset& ds_;
};

}  // namespace

Result<FileInfo> Dataset::WriteConfig(const std::vector<ShardListInfo>& updated_infos) {
  std::vector<Split> order;
  std::map<Split, std::vector<Update>> by_split;
  for (const ShardListInfo& info : updated_infos) {
    const std::string& path = info.shard_list_info_file.file_path;
    SEDPACK_RETURN_NOT_OK(ValidateRelativePath(path, "shard_list_info_file.file_path"));
    Update u{info, PathComponents(path)};
    if (u.components.empty()) return Status::InvalidArgument("empty shards list path");
    auto split = ParseSplit(u.components.front());
    if (!split.ok()) {
      return Status::InvalidArgument("not a known split value: \"", u.components.front(),
                                     "\" in ", path);
    }
    if (!by_split.count(*split)) order.push_back(*split);
    by_split[*split].push_back(std::move(u));
  }
  Merger merger(*this);
  for (Split split : order) {
    SEDPACK_ASSIGN_OR_RETURN(ShardListInfo merged, merger.Merge(std::move(by_split[split]), 1));
    if (ShardListInfo* existing = info_.FindSplit(split)) {
      *existing = std::move(merged);
    } else {
      info_.splits.emplace_back(split, std::move(merged));
    }
  }
  const std::string text = SerializeDatasetInfo(info_);
  const std::string path = PathOf("dataset_info.json");
  SEDPACK_RETURN_NOT_OK(WriteFileAtomic(path, text));
  FileInfo out;
  out.file_path = "dataset_info.json";
  SEDPACK_ASSIGN_OR_RETURN(
      out.hash_checksums,
      HashBytes(info_.dataset_structure.hash_checksum_algorithms,
                std::as_bytes(std::span<const char>(text.data(), text.size()))));
  return out;
}

}  // namespace sedpack
