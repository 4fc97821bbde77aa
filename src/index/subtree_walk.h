// SPDX-License-Identifier: Apache-2.0
// One step of building the sample index, for the parallel builder
// (sedpack_distributed) that walks subtrees on different ranks.
// Project-private (src/ include directory), not installed.
#pragma once

#include <atomic>
#include <cstddef>
#include <functional>
#include <cstdint>
#include <map>
#include <string>
#include <unordered_set>
#include <vector>

#include "dataset/shards_tree_internal.h"
#include "index/index_internal.h"
#include "sedpack/dataset/dataset.h"
#include "sedpack/index/index.h"
#include "sedpack/status.h"

namespace sedpack {

/// The shards of the subtree rooted at the shards_list.json `list_path` in the
/// reader's order (the one tree walk, dataset/shards_tree_internal.h). `depth`
/// is the depth of `list_path` below the split (its list is depth 0).
/// `visited` collects the list paths read. Used to walk subtrees on different
/// threads or ranks.
Status IndexShardsSubtree(const Dataset& dataset, const std::string& list_path, std::size_t depth,
                          std::vector<std::string>* visited, IndexedSplit* out);

/// IndexShardsSubtree, taking any list below `list_path` (itself included)
/// that `known` holds by SubtreeKey (a stopped run journaled its subtree) from
/// its record instead of reading it and its subtree; `kept` counts them. A
/// run whose plan cuts the tree coarser than the stopped run's (fewer threads
/// or ranks) so finds the stopped run's subtrees inside its own. A record
/// whose lists changed since (TakeWalkedSubtree) or whose shards do not
/// decode is walked again instead. `stamps`, when given, receives one
/// ListStamp per list `visited` receives, in the same order (taken before
/// each list is read, so that a list changed while it is read mismatches
/// on a rerun rather than being kept), for EncodeSubtree.
Status IndexShardsSubtreeKeeping(const Dataset& dataset, const std::string& list_path, std::size_t depth,
                                 const std::map<std::string, WalkedSubtree>* known, std::vector<std::string>* visited,
                                 IndexedSplit* out, std::uint64_t* kept, std::vector<ListStamp>* stamps = nullptr);

/// A piece of the pre-order walk (the planner's unit): either shards already
/// read (a list's own) or a subtree still to walk. Concatenated in order they
/// give the serial order.
struct WalkUnit {
  dataset_internal::ShardsTreeUnit plan;
  IndexedSplit shards;  ///< own shards, or (after the walk) the subtree's
  std::vector<std::string> visited;
  std::vector<ListStamp> stamps;  ///< of `visited`, when journaled
  Status status;
};

/// The top of every split of `splits` cut into units for `threads` threads
/// (four a thread); a list a unit's shards come from (the planner read it) is
/// appended to `planned`. A subtree `whole(path, depth)` names is not cut.
Result<std::vector<WalkUnit>> PlanWalkUnits(const Dataset& ds, const std::vector<Split>& splits, int threads,
                                            std::vector<std::string>* planned,
                                            const std::function<bool(const std::string&, std::size_t)>& whole = {});

/// What a journaled walk keeps of stopped runs' subtrees (by SubtreeKey),
/// and its counts of subtree units kept and walked.
struct WalkKeeping {
  std::map<std::string, WalkedSubtree> known;
  bool stamp = false;  ///< collect each walked list's ListStamp into WalkUnit::stamps
  std::atomic<std::uint64_t> kept{0}, walked{0};
};

/// Walks the subtree units of `units` from `first` on (those before are
/// done) on `threads` threads and hands each unit from `first` on to `merge`
/// in walk order, as soon as it and every unit before it are walked (on the
/// thread that walked the last of them, one merge at a time). `seen` holds
/// the lists read so far (the planner's, the kept units'): a list reached
/// twice is the repeat the sequential reader refuses. The first failure in
/// walk order is returned.
using MergeWalkUnit = std::function<Status(WalkUnit&)>;
Status WalkUnits(const Dataset& ds, int threads, std::vector<WalkUnit>& units, std::size_t first,
                 std::unordered_set<std::string> seen, WalkKeeping* keep, const MergeWalkUnit& merge);

/// Appends the shards `list` names itself (not its children's) to `out`: each
/// one's file_infos[0] path and example count. Corruption, naming the list, for
/// a shard without file_infos or with a negative number_of_examples.
Status AppendListShards(const ShardsList& list, IndexedSplit* out);

}  // namespace sedpack
