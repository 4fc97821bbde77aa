// SPDX-License-Identifier: Apache-2.0
// Shard bytes in pooled memory (codecs/byte_buffer.h) instead of a
// std::vector, for the dataset module's writers and readers, which would
// otherwise copy every shard once more. Project-private (src/ include
// directory), not installed.
#pragma once

#include <memory>
#include <vector>

#include "codecs/byte_buffer.h"
#include "sedpack/shard/shard.h"
#include "sedpack/status.h"
#include "sedpack/types.h"

namespace sedpack::shard_internal {

/// writer.Finish() into `*out`; copy-free for compressed fb shards.
Status FinishShardToBuffer(ShardWriter& writer, codecs_internal::ByteBuffer* out);
/// writer.Finish(), the bytes handed to `sink` in order, in one or more pieces;
/// compression may use up to `threads` threads (GZIP/ZLIB at ISA-L levels).
Status FinishShardToSink(ShardWriter& writer, const codecs_internal::ByteSink& sink, int threads = 1);
/// Whether FinishShardToSink streams for this writer: fb shards uncompressed
/// or GZIP/ZLIB, which need no buffer for the whole file.
bool ShardFinishStreams(const ShardWriter& writer);

/// DecodeShard() on bytes held in a ByteBuffer (e.g. read into pooled memory).
Result<std::unique_ptr<DecodedShard>> DecodeShardBuffer(ShardFileType type, Compression compression,
                                                        const std::vector<AttributeSpec>& schema,
                                                        codecs_internal::ByteBuffer file_bytes,
                                                        const ShardReadLimits& limits);

}  // namespace sedpack::shard_internal
