// SPDX-License-Identifier: Apache-2.0
// The first half of Dataset::WriteConfig on its own, for the parallel writer
// (sedpack_distributed). Project-private (src/ include directory), not installed.
#pragma once

#include <cstddef>
#include <vector>

#include "sedpack/dataset/dataset.h"
#include "sedpack/metadata/models.h"
#include "sedpack/status.h"

namespace sedpack {

/// Merge leaf/subtree lists up to the lists `levels` folders below the root
/// (1 = `<split>/shards_list.json`, 2 = `<split>/<sub>/shards_list.json`, ...)
/// without touching `dataset_info.json`. Returns one ShardListInfo per distinct
/// prefix, in order of first appearance. Used by parallel writers to close their
/// own subtree before a coordinator merges the tops. Lists are computed in memory
/// and written children first; on a failed write the old contents are restored.
Result<std::vector<ShardListInfo>> MergeSubtrees(const Dataset& dataset,
                                                 const std::vector<ShardListInfo>& updated_infos,
                                                 std::size_t levels);

}  // namespace sedpack
