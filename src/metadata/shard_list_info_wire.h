// SPDX-License-Identifier: Apache-2.0
// A ShardListInfo as bytes, for the parallel writer (sedpack_distributed) to
// send between ranks. Project-private (src/ include directory), not installed.
#pragma once

#include <string>
#include <string_view>

#include "sedpack/metadata/models.h"
#include "sedpack/status.h"

namespace sedpack {

/// Compact JSON for one ShardListInfo (all fields), for sending between processes.
std::string SerializeShardListInfo(const ShardListInfo& info);
Result<ShardListInfo> ParseShardListInfo(std::string_view text, std::string_view source);

}  // namespace sedpack
