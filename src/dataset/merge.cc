// SPDX-License-Identifier: Apache-2.0
// Dataset::WriteConfig: the reference's write_config / merge_shard_infos. Every
// ancestor folder of an updated list gets a shards_list.json pointing one level
// deeper, up to <split>/shards_list.json, and dataset_info.json is rewritten.
#include <algorithm>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "sedpack/codecs/hash.h"
#include "sedpack/dataset/commit.h"
#include "sedpack/dataset/dataset.h"
#include "sedpack/io/file.h"
#include "sedpack/metadata/paths.h"
#include "dataset/merge.h"
#include "dataset/shards_tree_internal.h"
#include "dataset/commit_metadata.h"

namespace sedpack {
namespace {

constexpr std::string_view kListName = "shards_list.json";
constexpr std::string_view kInfoName = "dataset_info.json";
constexpr std::uint64_t kMaxInfoBytes = 1ULL << 30;

// The structure part of dataset_info.json as text, for comparing two structures.
std::string SerializeStructure(const DatasetStructure& structure) {
  DatasetInfo only;
  only.dataset_structure = structure;
  return SerializeDatasetInfo(only);
}

struct Update {
  ShardListInfo info;
  std::vector<std::string> components;
  bool existing = false;  // a child the list already records, not a new subtree
};

// Computes every list of a merge in memory first; Commit() then hands them to
// CommitMetadata, which writes children before parents and dataset_info.json
// last, undoes a failed write, and journals the commit against a crash.
class Merger {
 public:
  explicit Merger(const Dataset& ds) : ds_(ds) {}

  Status Commit(const std::string* dataset_info_text) {
    return CommitMetadata(ds_.root(), pending_, dataset_info_text, ds_.commit_lock_options());
  }
  Status CommitLocked(const std::string& dataset_info_text, const LockFile& held) {
    return CommitMetadataLocked(ds_.root(), pending_, dataset_info_text, held);
  }

  Result<ShardListInfo> Merge(std::vector<Update> updates, std::size_t common) {
    // No writer produces a deeper tree; refusing one bounds the recursion.
    if (common > dataset_internal::kMaxShardsListDepth) {
      return Status::InvalidArgument("shards_list tree deeper than ", dataset_internal::kMaxShardsListDepth,
                                     " levels");
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
    std::optional<std::string> previous;
    if (PathExists(ds_.PathOf(list_path), ds_.file_system())) {
      SEDPACK_ASSIGN_OR_RETURN(previous, ds_.ReadText(list_path, std::uint64_t{1} << 30));
      SEDPACK_ASSIGN_OR_RETURN(list, ParseShardsList(*previous, list_path));
    } else {
      list.relative_path_self = list_path;
    }
    if (list.relative_path_self != list_path) {
      return Status::Corruption(list_path, ": relative_path_self is \"", list.relative_path_self,
                                "\"; refusing to merge into a list that names another place");
    }

    // Existing children go first so that they keep their order; new subtrees follow.
    std::vector<Update> deeper;
    for (const ShardListInfo& child : list.children_shard_lists) {
      list.number_of_examples -= child.number_of_examples;
      Update u{child, PathComponents(child.shard_list_info_file.file_path), true};
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
      std::vector<Update>& group = groups[key];
      // A subtree nothing new goes into keeps its recorded entry: not reading and
      // rewriting every other job's lists keeps a commit (and the time it holds
      // the commit lock) proportional to what it adds, not to the dataset.
      if (group.size() == 1 && group.front().existing) {
        list.number_of_examples += group.front().info.number_of_examples;
        shards += group.front().info.number_of_shards;
        list.children_shard_lists.push_back(std::move(group.front().info));
        continue;
      }
      // A list this job has just written (a leaf, one level down) is described
      // by its writer's info: reading and parsing every leaf back would cost a
      // commit as much as all the lists it adds.
      if (group.size() == 1 && group.front().components.size() == common + 2) {
        list.number_of_examples += group.front().info.number_of_examples;
        shards += group.front().info.number_of_shards;
        list.children_shard_lists.push_back(std::move(group.front().info));
        continue;
      }
      SEDPACK_ASSIGN_OR_RETURN(ShardListInfo child, Merge(std::move(group), common + 1));
      list.number_of_examples += child.number_of_examples;
      shards += child.number_of_shards;
      list.children_shard_lists.push_back(std::move(child));
    }

    const std::string text = SerializeShardsList(list);
    const auto& algos = ds_.info().dataset_structure.hash_checksum_algorithms;
    SEDPACK_ASSIGN_OR_RETURN(
        auto hashes, HashBytes(algos, std::as_bytes(std::span<const char>(text.data(), text.size()))));
    ShardListInfo out;
    out.shard_list_info_file.file_path = list.relative_path_self;
    out.shard_list_info_file.hash_checksums = std::move(hashes);
    out.number_of_examples = list.number_of_examples;
    out.number_of_shards = shards;
    // A list that comes out as it was (a leaf list its writer has just written)
    // is not rewritten, and so not part of the commit that a rollback undoes.
    if (!previous || *previous != text) pending_.push_back(MetadataWrite{list_path, text, std::move(previous)});
    return out;
  }

 private:
  const Dataset& ds_;
  std::vector<MetadataWrite> pending_;
};

Result<std::vector<std::pair<std::string, std::vector<Update>>>> GroupByPrefix(
    const std::vector<ShardListInfo>& infos, std::size_t levels) {
  std::vector<std::pair<std::string, std::vector<Update>>> groups;
  for (const ShardListInfo& info : infos) {
    const std::string& path = info.shard_list_info_file.file_path;
    SEDPACK_RETURN_NOT_OK(ValidateRelativePath(path, "shard_list_info_file.file_path"));
    Update u{info, PathComponents(path)};
    if (u.components.size() < levels + 1) {
      return Status::InvalidArgument(path, " is not below ", levels, " folder levels");
    }
    auto split = ParseSplit(u.components.front());
    if (!split.ok()) {
      return Status::InvalidArgument("not a known split value: \"", u.components.front(), "\" in ",
                                     path);
    }
    std::vector<std::string> prefix(u.components.begin(),
                                    u.components.begin() + static_cast<long>(levels));
    const std::string key = JoinPath(prefix);
    auto it = std::find_if(groups.begin(), groups.end(), [&](const auto& g) { return g.first == key; });
    if (it == groups.end()) {
      groups.emplace_back(key, std::vector<Update>{});
      it = std::prev(groups.end());
    }
    it->second.push_back(std::move(u));
  }
  return groups;
}

}  // namespace

Result<FileInfo> Dataset::WriteConfig(const std::vector<ShardListInfo>& updated_infos) {
  if (pack_) return Status::InvalidArgument(root_, ": a packed dataset is read-only (sedpack unpack it first)");
  SEDPACK_ASSIGN_OR_RETURN(auto groups, GroupByPrefix(updated_infos, 1));
  // Other jobs may have committed since this one opened the dataset: read what
  // is there now, under the lock, and merge into that (commit.h), never into
  // the state this object read at Open.
  SEDPACK_ASSIGN_OR_RETURN(std::unique_ptr<LockFile> lock, TakeCommitLock(root_, lock_options_));
  SEDPACK_ASSIGN_OR_RETURN(std::string current, ReadText(kInfoName, kMaxInfoBytes));
  SEDPACK_ASSIGN_OR_RETURN(DatasetInfo fresh, ParseDatasetInfo(current, PathOf(kInfoName)));
  // The shards were written with the structure read at Open; a structure
  // changed meanwhile (recompress, restamp of the algorithms) would not fit them.
  if (SerializeStructure(fresh.dataset_structure) != SerializeStructure(info_.dataset_structure)) {
    return Status::InvalidArgument(PathOf(kInfoName), ": the dataset_structure changed while this job wrote ",
                                   "(another process recompressed or restructured the dataset); nothing was added");
  }
  Merger merger(*this);
  DatasetInfo next = std::move(fresh);
  for (auto& [split_name, updates] : groups) {
    const Split split = *ParseSplit(split_name);
    SEDPACK_ASSIGN_OR_RETURN(ShardListInfo merged, merger.Merge(std::move(updates), 1));
    if (ShardListInfo* existing = next.FindSplit(split)) {
      *existing = std::move(merged);
    } else {
      next.splits.emplace_back(split, std::move(merged));
    }
  }
  const std::string text = SerializeDatasetInfo(next);
  SEDPACK_RETURN_NOT_OK(merger.CommitLocked(text, *lock));
  (void)lock->Release();  // a lock left behind is stale once this process is gone
  info_ = std::move(next);
  FileInfo out;
  out.file_path = "dataset_info.json";
  SEDPACK_ASSIGN_OR_RETURN(
      out.hash_checksums,
      HashBytes(info_.dataset_structure.hash_checksum_algorithms,
                std::as_bytes(std::span<const char>(text.data(), text.size()))));
  return out;
}

Result<std::vector<ShardListInfo>> MergeSubtrees(const Dataset& dataset,
                                                 const std::vector<ShardListInfo>& updated_infos,
                                                 std::size_t levels) {
  if (levels < 1) return Status::InvalidArgument("MergeSubtrees: levels must be >= 1");
  SEDPACK_ASSIGN_OR_RETURN(auto groups, GroupByPrefix(updated_infos, levels));
  Merger merger(dataset);
  std::vector<ShardListInfo> out;
  for (auto& [prefix, updates] : groups) {
    SEDPACK_ASSIGN_OR_RETURN(ShardListInfo merged, merger.Merge(std::move(updates), levels));
    out.push_back(std::move(merged));
  }
  SEDPACK_RETURN_NOT_OK(merger.Commit(nullptr));
  return out;
}

}  // namespace sedpack
