// SPDX-License-Identifier: Apache-2.0
// Re-stamping the hash tree after a deliberate edit, with an audit trail. This
// is not a repair: it makes the metadata agree with whatever bytes are on disk
// now, so it is only for edits the user made on purpose, and every use is
// recorded in the audit sidecar `.sedpack-hpc/audit.jsonl`.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sedpack/status.h"

namespace sedpack {

inline constexpr std::string_view kAuditSidecarName = "audit.jsonl";

struct RestampSummary {
  std::uint64_t shards_changed = 0;  ///< shard entries whose hashes changed
  std::uint64_t lists_changed = 0;   ///< shards_list.json files rewritten
  std::vector<std::string> old_root, new_root;  ///< dataset_info.json checksums
};

/// Recompute the hash of every shard and every shards_list.json (children
/// first) and rewrite the lists and dataset_info.json whose recorded hashes no
/// longer match; then append {time, user, host, action, reason, old and new
/// root checksums} to the audit sidecar. `reason` must not be empty. Missing
/// shard files or lists that do not parse are errors (nothing to stamp).
Result<RestampSummary> RestampHashes(const std::string& root, const std::string& reason);

/// Append one JSON line to the audit sidecar (creating it); used by commands
/// that change a dataset deliberately.
Status AppendAudit(const std::string& root, const std::string& action, const std::string& reason,
                   const std::vector<std::string>& old_root, const std::vector<std::string>& new_root);

}  // namespace sedpack
