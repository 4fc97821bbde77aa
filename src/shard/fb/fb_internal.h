// SPDX-License-Identifier: Apache-2.0
// Private to the fb shard code: the only place the generated FlatBuffers
// header is included, plus the layout constants writer and reader share.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "codecs/byte_buffer.h"
#include "sedpack/shard/shard.h"

#include "sedpack/status.h"
#include "sedpack/types.h"
#include "sedpack_fb/shard_generated.h"

namespace sedpack::fb_internal {

namespace fbs = ::sedpack::io::flatbuffer::shardfile;

/// Verifier limits. They match the Rust reader's defaults so a shard this
/// library accepts is also accepted there (and vice versa).
inline constexpr std::uint32_t kMaxDepth = 64;
inline constexpr std::uint32_t kMaxTables = 1000000;

/// The checks both fb readers (whole shard, one example) make on attribute
/// `spec` of example `example`: a fixed-size value must hold exactly dtype x
/// shape bytes (checked on the size alone, before the bytes are read), a str
/// value must be valid UTF-8. Corruption naming the example and attribute.
Status CheckValueSize(const AttributeSpec& spec, std::size_t example, std::uint64_t size);
Status CheckValueBytes(const AttributeSpec& spec, std::size_t example, std::span<const std::byte> data);

/// A decoded shard of one example whose values are `values`, views into
/// `buffer` (which it keeps).
std::unique_ptr<DecodedShard> MakeOneExample(const std::vector<AttributeSpec>& schema,
                                             codecs_internal::ByteBuffer buffer,
                                             std::vector<std::span<const std::byte>> values);

}  // namespace sedpack::fb_internal
