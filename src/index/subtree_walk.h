// SPDX-License-Identifier: Apache-2.0
// One step of building the sample index, for the parallel builder
// (sedpack_distributed) that walks subtrees on different ranks.
// Project-private (src/ include directory), not installed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

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

/// Appends the shards `list` names itself (not its children's) to `out`: each
/// one's file_infos[0] path and example count. Corruption, naming the list, for
/// a shard without file_infos or with a negative number_of_examples.
Status AppendListShards(const ShardsList& list, IndexedSplit* out);

}  // namespace sedpack
