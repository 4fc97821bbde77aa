// SPDX-License-Identifier: Apache-2.0
// Private to the shard module: the per-format factories behind MakeShardWriter /
// DecodeShard and the few helpers the fb, npz and tfrec code share. What the
// dataset module uses as well is in shard_buffer.h.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "codecs/byte_buffer.h"
#include "core/endian_internal.h"
#include "shard/shard_buffer.h"
#include "sedpack/shard/shard.h"
#include "sedpack/status.h"
#include "sedpack/types.h"
#include "sedpack/value.h"

namespace sedpack::shard_internal {

/// Check a schema once, when a writer or a decoder is made: at least one
/// attribute, unique non-empty names, `int` scalar, `str` variable-size, every
/// fixed size computable. InvalidArgument otherwise.
Status ValidateSchema(const std::vector<AttributeSpec>& schema);

/// Check one example against the schema (count, ValidateValue, UTF-8 for str).
/// InvalidArgument naming the attribute otherwise.
Status ValidateExample(const std::vector<AttributeSpec>& schema, std::span<const ValueView> values);

/// Whether `text` is well-formed UTF-8 (no overlong forms, no surrogates,
/// nothing above U+10FFFF), as Python's strict codec requires.
bool IsValidUtf8(std::string_view text);

/// Number of code points of well-formed UTF-8 `text`.
std::size_t Utf8CodePointCount(std::string_view text);

/// Append the UTF-32LE encoding of well-formed UTF-8 `text` to `out`.
void AppendUtf32LeFromUtf8(std::string_view text, std::vector<std::byte>* out);

/// Append the UTF-8 encoding of code point `cp` to `out`.
/// REQUIRES: cp <= 0x10FFFF and cp is not a surrogate.
void AppendUtf8(std::uint32_t cp, std::string* out);

/// Little-endian loads and stores (core/endian_internal.h).
using core_internal::AppendLe;
using core_internal::LoadLe16;
using core_internal::LoadLe32;
using core_internal::LoadLe64;

/// Implemented by writers that can hand over their file bytes without first
/// copying them into the std::vector that ShardWriter::Finish() returns.
class BufferFinishable {
 public:
  virtual ~BufferFinishable() = default;
  /// Like Finish(), but the bytes end up in `*out` (pooled memory).
  virtual Status FinishToBuffer(codecs_internal::ByteBuffer* out) = 0;
  /// Like Finish(), but the bytes go to `sink`, in order, in one or more
  /// pieces; the compressor may use up to `threads` threads (or the writer's
  /// codec threads if more).
  virtual Status FinishToSink(const codecs_internal::ByteSink& sink, int threads) = 0;
  /// Whether FinishToSink streams (small pieces, no buffer for the whole file)
  /// rather than handing over one buffer.
  virtual bool StreamsOnFinish() const = 0;
  /// What the last Finish learned for the checks sidecar (shard_buffer.h).
  virtual ShardWriteChecks TakeWriteChecks() { return {}; }
};

// Per-format entry points (fb/fb_writer.cc, fb/fb_reader.cc, npz/npz_writer.cc,
// npz/npz_reader.cc). The schema and compression were validated by the caller.
// The codec options were validated by the caller too.
std::unique_ptr<ShardWriter> MakeFbShardWriter(Compression compression,
                                               std::vector<AttributeSpec> schema,
                                               const CodecOptions& codec = {});
Result<std::unique_ptr<DecodedShard>> DecodeFbShard(Compression compression,
                                                    const std::vector<AttributeSpec>& schema,
                                                    codecs_internal::ByteBuffer file_bytes,
                                                    const ShardReadLimits& limits);
// `level`: zlib's 1..9 for the ZIP members (kDefaultCodecLevel: numpy's 6).
std::unique_ptr<ShardWriter> MakeNpzShardWriter(Compression compression,
                                                std::vector<AttributeSpec> schema,
                                                int level = kDefaultCodecLevel);
Result<std::unique_ptr<DecodedShard>> DecodeNpzShard(const std::vector<AttributeSpec>& schema,
                                                     std::vector<std::byte> file_bytes,
                                                     const ShardReadLimits& limits);
// tfrec/tfrec_writer.cc, tfrec/tfrec_reader.cc: these also check that every
// dtype of the schema is one tfrec can hold. The decoder copies the values
// out, so `file_bytes` need only live during the call.
Result<std::unique_ptr<ShardWriter>> MakeTfrecShardWriter(Compression compression,
                                                           std::vector<AttributeSpec> schema,
                                                           int level = kDefaultCodecLevel);
Result<std::unique_ptr<DecodedShard>> DecodeTfrecShard(Compression compression,
                                                       const std::vector<AttributeSpec>& schema,
                                                       std::span<const std::byte> file_bytes,
                                                       const ShardReadLimits& limits);

}  // namespace sedpack::shard_internal
