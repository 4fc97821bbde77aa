// SPDX-License-Identifier: Apache-2.0
// Shard bytes in pooled memory (codecs/byte_buffer.h) instead of a
// std::vector, for the dataset module's writers and readers, which would
// otherwise copy every shard once more. Project-private (src/ include
// directory), not installed.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "codecs/byte_buffer.h"
#include "codecs/decode_points_internal.h"
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

/// One attribute value's bytes inside a decoded (uncompressed) fb shard.
struct ValueRange {
  std::uint64_t offset = 0;
  std::uint64_t size = 0;
  friend bool operator==(const ValueRange&, const ValueRange&) = default;
};

/// What the checks sidecar records of a shard that a writer learned while it
/// wrote it. The whole-file size and checksum are the caller's: it sees the
/// stored bytes.
struct ShardWriteChecks {
  std::uint64_t decoded_size = 0;  ///< bytes before compression
  /// Where a decoder may start (codecs/decode_points_internal.h); empty when
  /// the shard was written as one block.
  std::vector<codecs_internal::DecodePoint> decode_points;
  /// fb only: every example's value ranges, example-major (num_examples *
  /// schema size), and the FastChecksum of each example's value bytes
  /// concatenated in schema order. Empty for npz and tfrec.
  std::vector<ValueRange> values;
  std::vector<std::uint64_t> example_checksums;
};

/// After FinishShardToBuffer / FinishShardToSink / Finish: what the writer
/// learned for the checks sidecar (empty for writers that learn nothing).
ShardWriteChecks TakeShardWriteChecks(ShardWriter& writer);

/// What the checks sidecar records of a shard, found from its decode (for
/// shards someone else wrote): for an fb shard decoded by DecodeShardBuffer
/// its decoded size, value ranges and example checksums (decode points are
/// the codec's: FindDecodePoints); empty for npz and tfrec.
ShardWriteChecks ChecksOfDecodedShard(const DecodedShard& shard);

/// DecodeShard() on bytes held in a ByteBuffer (e.g. read into pooled memory).
Result<std::unique_ptr<DecodedShard>> DecodeShardBuffer(ShardFileType type, Compression compression,
                                                        const std::vector<AttributeSpec>& schema,
                                                        codecs_internal::ByteBuffer file_bytes,
                                                        const ShardReadLimits& limits);

}  // namespace sedpack::shard_internal
