// SPDX-License-Identifier: Apache-2.0
// The byte form in which shard tasks and check reports travel between ranks
// (length-prefixed fields). Project-private (src/ include directory), not
// installed: for the modules that spread check steps over a Comm.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "sedpack/check/check.h"
#include "sedpack/check/steps.h"
#include "sedpack/status.h"

namespace sedpack {

/// Serialize problems / tasks for sending between processes (length-prefixed fields).
std::string EncodeCheckReport(const CheckReport& report);
Result<CheckReport> DecodeCheckReport(std::string_view bytes);
std::string EncodeShardTasks(const std::vector<ShardCheckTask>& tasks);
Result<std::vector<ShardCheckTask>> DecodeShardTasks(std::string_view bytes);

}  // namespace sedpack
