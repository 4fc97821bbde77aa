// SPDX-License-Identifier: Apache-2.0
// One step of building the sample index, for the parallel builder
// (sedpack_distributed) that walks subtrees on different ranks.
// Project-private (src/ include directory), not installed.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

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

/// Appends the shards `list` names itself (not its children's) to `out`: each
/// one's file_infos[0] path and example count. Corruption, naming the list, for
/// a shard without file_infos or with a negative number_of_examples.
Status AppendListShards(const ShardsList& list, IndexedSplit* out);

}  // namespace sedpack
