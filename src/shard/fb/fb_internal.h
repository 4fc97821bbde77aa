// SPDX-License-Identifier: Apache-2.0
// Private to the fb shard code: the only place the generated FlatBuffers
// header is included, plus the layout constants writer and reader share.
#pragma once

#include <cstdint>

#include "sedpack_fb/shard_generated.h"

namespace sedpack::fb_internal {

namespace fbs = ::sedpack::io::flatbuffer::shardfile;

/// Verifier limits. They match the Rust reader's defaults so a shard this
/// library accepts is also accepted there (and vice versa).
inline constexpr std::uint32_t kMaxDepth = 64;
inline constexpr std::uint32_t kMaxTables = 1000000;

}  // namespace sedpack::fb_internal
