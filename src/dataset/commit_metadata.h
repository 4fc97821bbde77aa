// SPDX-License-Identifier: Apache-2.0
// Writing a commit (protocol: sedpack/dataset/commit.h), for the code that
// replaces metadata: Dataset::WriteConfig and the maintenance passes
// (sedpack_maintain). Project-private (src/ include directory), not installed.
#pragma once

#include <optional>
#include <span>
#include <string>

#include "sedpack/dataset/commit.h"
#include "sedpack/status.h"

namespace sedpack {

/// One metadata file a commit replaces (a shards_list.json, dataset-relative).
struct MetadataWrite {
  std::string relative;
  std::string text;
  /// Its bytes before the commit; nullopt if it did not exist.
  std::optional<std::string> previous;
};

/// Replace `lists` (children before parents) and then dataset_info.json with
/// `dataset_info_text`, as one commit that survives the process dying at any
/// instant (protocol: sedpack/dataset/commit.h). A write that fails in this process is undone at once.
/// With `dataset_info_text` null only lists that dataset_info.json does not reach
/// yet are written (a parallel writer's own subtree), so no journal is needed.
Status CommitMetadata(const std::string& root, std::span<const MetadataWrite> lists,
                      const std::string* dataset_info_text);

}  // namespace sedpack
