// SPDX-License-Identifier: Apache-2.0
#include "dataset/shards_tree_internal.h"

#include <algorithm>
#include <utility>

#include "dataset/verified_read.h"
#include "metadata/shards_list_parse.h"
#include "sedpack/metadata/paths.h"

namespace sedpack::dataset_internal {

Status CheckShardsListDepth(std::string_view path, std::size_t depth) {
  if (depth < kMaxShardsListDepth) return Status::OK();
  return Status::Corruption(path, ": shards_list tree deeper than ", kMaxShardsListDepth, " levels");
}

Status RepeatedShardsList(std::string_view path) {
  return Status::Corruption(path, " is listed more than once (a cycle or a repeated child)");
}

namespace {

// The checks every list path passes before it is read, in this order: a tree
// too deep is reported as such even when its paths also repeat.
Status Admit(const std::string& path, std::size_t depth, std::unordered_set<std::string>* seen,
             std::vector<std::string>* order, ShardsTreeRefusal* why) {
  *why = ShardsTreeRefusal::kTooDeep;
  SEDPACK_RETURN_NOT_OK(CheckShardsListDepth(path, depth));
  *why = ShardsTreeRefusal::kRepeated;
  if (!seen->insert(path).second) return RepeatedShardsList(path);
  // Parsed lists only hold checked paths; this guards the ones a caller adds.
  *why = ShardsTreeRefusal::kBadPath;
  SEDPACK_RETURN_NOT_OK(ValidateRelativePath(path, "shard_list_info_file.file_path"));
  order->push_back(path);
  return Status::OK();
}

}  // namespace

Status LoadShardsTreeNode(const Dataset& dataset, const ShardsTreeLimits& limits, ShardsTreeNode& node) {
  const FileInfo& file = node.entry.shard_list_info_file;
  if (!limits.keep_text) {
    SEDPACK_ASSIGN_OR_RETURN(node.list, limits.verify_hashes ? LoadShardsListVerified(dataset, file)
                                                             : LoadShardsList(dataset, file.file_path));
    return Status::OK();
  }
  SEDPACK_ASSIGN_OR_RETURN(std::string text, dataset.ReadText(file.file_path, kMaxMetadataBytes));
  if (limits.verify_hashes) {
    SEDPACK_RETURN_NOT_OK(CheckRecordedHash(
        dataset, file.file_path, file.hash_checksums,
        std::span<const std::byte>(reinterpret_cast<const std::byte*>(text.data()), text.size())));
  }
  node.text = text;
  SEDPACK_ASSIGN_OR_RETURN(node.list, metadata_internal::ParseShardsListOwned(std::move(text), file.file_path));
  return Status::OK();
}

Result<bool> ShardsTreeVisitor::Load(const Dataset& dataset, const ShardsTreeLimits& limits,
                                     ShardsTreeNode& node) {
  SEDPACK_RETURN_NOT_OK(LoadShardsTreeNode(dataset, limits, node));
  return true;
}

ShardsTreeWalk::ShardsTreeWalk(const Dataset& dataset, ShardsTreeLimits limits, ShardsTreeVisitor* hooks)
    : dataset_(dataset), limits_(limits), hooks_(hooks) {}

void ShardsTreeWalk::Add(ShardListInfo entry, std::size_t depth) {
  // Later subtrees wait below the earlier ones on the stack.
  pending_.insert(pending_.begin(), Pending{std::move(entry), depth});
}

Status ShardsTreeWalk::AddSplit(Split split) {
  const ShardListInfo* root = dataset_.info().FindSplit(split);
  if (!root) return Status::NotFound("there is no shard in ", SplitName(split));
  Add(*root, 0);
  return Status::OK();
}

Result<std::optional<ShardsTreeNode>> ShardsTreeWalk::Next() {
  if (pending_.empty()) return std::optional<ShardsTreeNode>();
  std::optional<ShardsTreeNode> node(std::in_place);
  node->entry = std::move(pending_.back().entry);
  node->depth = pending_.back().depth;
  pending_.pop_back();
  ShardsTreeRefusal why;
  Status admitted = Admit(node->path(), node->depth, &seen_, &order_, &why);
  if (!admitted.ok()) {
    if (!hooks_) return admitted;
    SEDPACK_RETURN_NOT_OK(hooks_->Refused(*node, why, admitted));
    node->skipped = true;
    return node;
  }
  if (hooks_) {
    SEDPACK_ASSIGN_OR_RETURN(const bool read, hooks_->Load(dataset_, limits_, *node));
    node->skipped = !read;
    if (!read) return node;
  } else {
    SEDPACK_RETURN_NOT_OK(LoadShardsTreeNode(dataset_, limits_, *node));
  }
  const auto& children = node->list.children_shard_lists;
  for (auto c = children.rbegin(); c != children.rend(); ++c) pending_.push_back(Pending{*c, node->depth + 1});
  return node;
}

// Leave comes as soon as a list's last child's subtree is done (the walk hands
// out a subtree's lists together, and a skipped child counts as done), before
// the next list is read.
Status VisitShardsTree(ShardsTreeWalk& walk, ShardsTreeVisitor& visitor) {
  struct Open {
    ShardsTreeNode node;
    std::size_t children_left = 0;
  };
  std::vector<Open> path;
  for (;;) {
    SEDPACK_ASSIGN_OR_RETURN(std::optional<ShardsTreeNode> next, walk.Next());
    if (!next) return Status::OK();
    if (next->skipped) {
      if (!path.empty()) --path.back().children_left;
    } else {
      const std::size_t children = next->list.children_shard_lists.size();
      SEDPACK_RETURN_NOT_OK(visitor.Enter(*next));
      path.push_back(Open{std::move(*next), children});
    }
    while (!path.empty() && path.back().children_left == 0) {
      SEDPACK_RETURN_NOT_OK(visitor.Leave(path.back().node));
      path.pop_back();
      if (!path.empty()) --path.back().children_left;
    }
  }
}

Status WalkShardsTree(const Dataset& dataset, Split split, ShardsTreeVisitor& visitor,
                      const ShardsTreeLimits& limits) {
  ShardsTreeWalk walk(dataset, limits, &visitor);
  SEDPACK_RETURN_NOT_OK(walk.AddSplit(split));
  return VisitShardsTree(walk, visitor);
}

Status WalkShardsSubtree(const Dataset& dataset, const ShardListInfo& entry, std::size_t depth,
                         ShardsTreeVisitor& visitor, const ShardsTreeLimits& limits,
                         std::vector<std::string>* visited) {
  ShardsTreeWalk walk(dataset, limits, &visitor);
  walk.Add(entry, depth);
  Status st = VisitShardsTree(walk, visitor);
  if (visited) visited->insert(visited->end(), walk.visited().begin(), walk.visited().end());
  return st;
}

Result<std::vector<ShardsTreeUnit>> PlanShardsSubtrees(
    const Dataset& dataset, const std::vector<ShardListInfo>& roots, std::size_t want,
    std::vector<std::string>* visited, const std::function<bool(const std::string&, std::size_t)>& whole) {
  std::vector<ShardsTreeUnit> units;
  for (std::size_t k = 0; k < roots.size(); ++k) {
    ShardsTreeUnit u;
    u.root = k;
    u.subtree = true;
    u.entry = roots[k];
    u.weight = static_cast<std::uint64_t>(std::max<std::int64_t>(0, roots[k].number_of_shards));
    units.push_back(std::move(u));
  }
  std::unordered_set<std::string> seen(visited->begin(), visited->end());
  // Each level is read by one thread (or rank) alone: a few at most.
  for (int level = 0; level < 3; ++level) {
    const auto subtrees = static_cast<std::size_t>(
        std::count_if(units.begin(), units.end(), [](const ShardsTreeUnit& u) { return u.subtree; }));
    if (subtrees == 0 || subtrees >= want) break;
    std::vector<ShardsTreeUnit> next;
    for (ShardsTreeUnit& u : units) {
      if (!u.subtree || (whole && whole(u.entry.shard_list_info_file.file_path, u.depth))) {
        next.push_back(std::move(u));
        continue;
      }
      ShardsTreeRefusal why;
      SEDPACK_RETURN_NOT_OK(Admit(u.entry.shard_list_info_file.file_path, u.depth, &seen, visited, &why));
      ShardsTreeUnit own;
      own.root = u.root;
      own.depth = u.depth;
      SEDPACK_ASSIGN_OR_RETURN(own.list, LoadShardsList(dataset, u.entry.shard_list_info_file.file_path));
      std::vector<ShardListInfo> children = std::move(own.list.children_shard_lists);
      own.list.children_shard_lists.clear();
      own.entry = std::move(u.entry);
      next.push_back(std::move(own));
      for (ShardListInfo& child : children) {
        ShardsTreeUnit c;
        c.root = u.root;
        c.subtree = true;
        c.depth = u.depth + 1;
        c.weight = static_cast<std::uint64_t>(std::max<std::int64_t>(0, child.number_of_shards));
        c.entry = std::move(child);
        next.push_back(std::move(c));
      }
    }
    units = std::move(next);
  }
  return units;
}

}  // namespace sedpack::dataset_internal
