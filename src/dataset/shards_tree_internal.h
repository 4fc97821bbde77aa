// SPDX-License-Identifier: Apache-2.0
// The one walk over a split's shards_list.json tree (dataset_info.json names a
// split's list, every list names its shards and its child lists), with the one
// depth limit and the one cycle rule every reader of the tree applies, and the
// one way the top of the tree is cut into subtrees for threads or ranks.
// Project-private (src/ include directory), not installed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "sedpack/dataset/dataset.h"
#include "sedpack/metadata/models.h"
#include "sedpack/status.h"
#include "sedpack/types.h"

namespace sedpack::dataset_internal {

/// Lists nest one folder per level; real trees are a handful deep. A deeper
/// tree is hostile or broken and is refused rather than followed (a split's
/// list is at depth 0, so a list at depth kMaxShardsListDepth is refused).
inline constexpr std::size_t kMaxShardsListDepth = 64;

/// Corruption "<path>: shards_list tree deeper than 64 levels" for a list at
/// `depth` at or past the limit; OK otherwise.
Status CheckShardsListDepth(std::string_view path, std::size_t depth);

/// The cycle rule: within one walk a list path is read once; a second time (a
/// list naming one of its ancestors, or a child named twice) is this Corruption.
Status RepeatedShardsList(std::string_view path);

struct ShardsTreeLimits {
  /// Check each list's bytes against the hash its parent records (the split's
  /// against dataset_info.json) before parsing them.
  bool verify_hashes = false;
  /// Keep the bytes each list was parsed from (ShardsTreeNode::text).
  bool keep_text = false;
};

/// One list of the tree, as the walk reaches it.
struct ShardsTreeNode {
  ShardListInfo entry;    ///< the list's path, hashes and counts as its parent records them
  std::size_t depth = 0;  ///< 0: a split's list
  ShardsList list;
  std::string text;       ///< the bytes parsed, with ShardsTreeLimits::keep_text
  /// A list the walk did not read (refused, or its visitor's Load said skip):
  /// it has no list and no subtree.
  bool skipped = false;
  const std::string& path() const { return entry.shard_list_info_file.file_path; }
};

/// Why the walk refuses a list before reading it.
enum class ShardsTreeRefusal {
  kTooDeep,   ///< at or past kMaxShardsListDepth
  kRepeated,  ///< read before in this walk (RepeatedShardsList)
  kBadPath,   ///< not a valid relative path (ValidateRelativePath)
};

/// What a walk does with each list.
class ShardsTreeVisitor {
 public:
  virtual ~ShardsTreeVisitor() = default;
  /// A list refused before it is read, with the error the walk would stop
  /// with. Returning OK skips the list and its subtree instead (a check
  /// records a problem and goes on).
  virtual Status Refused(const ShardsTreeNode& node, ShardsTreeRefusal why, const Status& error) { return error; }
  /// Reads node.list (and node.text) for a list the walk has admitted;
  /// false skips it and its subtree. The default is the walk's own read.
  virtual Result<bool> Load(const Dataset& dataset, const ShardsTreeLimits& limits, ShardsTreeNode& node);
  /// Before the list's children are walked. May release node.list's entries
  /// (the children to walk are taken before the call).
  virtual Status Enter(ShardsTreeNode& node) = 0;
  /// After the whole subtree below it (children first: for rewrites that need
  /// their children's new hashes).
  virtual Status Leave(ShardsTreeNode& node) { return Status::OK(); }
};

/// The walk's read of a list: node.list (and with keep_text node.text) from
/// the file node.entry names, its bytes checked against the recorded hash
/// with verify_hashes.
Status LoadShardsTreeNode(const Dataset& dataset, const ShardsTreeLimits& limits, ShardsTreeNode& node);

/// The lists of one or more subtrees, depth first, pre-order (a list, then its
/// children in order), each loaded when reached: memory is the entries of the
/// children not visited yet along one path. Every list path is checked before
/// it is read: a valid relative path (no "..", not absolute), within the depth
/// limit, not seen before in this walk; lists above kMaxMetadataBytes are
/// refused by the read.
class ShardsTreeWalk {
 public:
  /// `hooks`, when given, decides about refused lists and reads them
  /// (ShardsTreeVisitor::Refused, Load); without, a refusal is an error.
  explicit ShardsTreeWalk(const Dataset& dataset, ShardsTreeLimits limits = {},
                          ShardsTreeVisitor* hooks = nullptr);

  /// Adds the subtree of the list `entry` names (at `depth`) to the walk;
  /// subtrees added earlier are walked first.
  void Add(ShardListInfo entry, std::size_t depth = 0);
  /// Adds the tree of `split`; NotFound "there is no shard in <split>" when
  /// the dataset has no such split.
  Status AddSplit(Split split);

  /// The next list, or nullopt at the end. With hooks, a refused or unread
  /// list comes back `skipped`.
  Result<std::optional<ShardsTreeNode>> Next();

  /// The list paths read so far, in walk order.
  const std::vector<std::string>& visited() const { return order_; }

 private:
  struct Pending {
    ShardListInfo entry;
    std::size_t depth = 0;
  };
  const Dataset& dataset_;
  ShardsTreeLimits limits_;
  ShardsTreeVisitor* hooks_;
  std::vector<Pending> pending_;  // the next list last
  std::unordered_set<std::string> seen_;
  std::vector<std::string> order_;
};

/// Walks what was added to `walk` (made with `visitor` as its hooks) to the
/// end: Enter in pre-order, Leave once a list's subtree is done. The lists
/// along the current path are kept for their Leave (Enter may release their
/// entries). More subtrees may be added and walked after it returns, under the
/// same cycle rule.
Status VisitShardsTree(ShardsTreeWalk& walk, ShardsTreeVisitor& visitor);

/// Walk the tree of `split` (ShardsTreeWalk's order and checks) with
/// `visitor`, stopping at the first error, the visitor's or the walk's.
Status WalkShardsTree(const Dataset& dataset, Split split, ShardsTreeVisitor& visitor,
                      const ShardsTreeLimits& limits = {});

/// The same from the list `entry` names, at `depth`; `visited`, when given,
/// receives the list paths read, in walk order.
Status WalkShardsSubtree(const Dataset& dataset, const ShardListInfo& entry, std::size_t depth,
                         ShardsTreeVisitor& visitor, const ShardsTreeLimits& limits = {},
                         std::vector<std::string>* visited = nullptr);

/// A piece of a pre-order walk cut for threads or ranks. Concatenated in order,
/// the pieces give the sequential order: a list's own shards, then its subtrees.
struct ShardsTreeUnit {
  std::size_t root = 0;      ///< which of the planner's roots it belongs to
  bool subtree = false;      ///< true: walk `entry` below; false: `list` was read
  ShardListInfo entry;       ///< the list (of the subtree, or the one read)
  std::size_t depth = 0;     ///< depth of `entry`
  std::uint64_t weight = 0;  ///< subtree: its recorded number_of_shards (>= 0)
  ShardsList list;           ///< a read list, its children_shard_lists moved out
};

/// Cuts the trees of `roots` (a split's list each) into units: the top lists
/// are read here, level by level (at most three levels), until there are
/// `want` subtrees or none is left. Every list read is checked as the walk
/// does it (path, depth, cycle) and appended to `visited`; a subtree unit's
/// walk must then refuse the paths of the others (see RepeatedShardsList).
/// A subtree whose list `whole(path, depth)` names is never cut (a resumed
/// job keeps it from its journal as one unit).
Result<std::vector<ShardsTreeUnit>> PlanShardsSubtrees(
    const Dataset& dataset, const std::vector<ShardListInfo>& roots, std::size_t want,
    std::vector<std::string>* visited, const std::function<bool(const std::string&, std::size_t)>& whole = {});

}  // namespace sedpack::dataset_internal
