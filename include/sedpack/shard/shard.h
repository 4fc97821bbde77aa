// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "sedpack/codecs/compress.h"
#include "sedpack/status.h"
#include "sedpack/types.h"
#include "sedpack/value.h"

namespace sedpack {

/// FlatBuffers buffers cannot pass 2 GiB; writers keep a margin under it.
inline constexpr std::uint64_t kFlatBufferMaxBytes = (1ULL << 31) - 1;

/// Builds one shard file in memory. Add() is called on the filling thread;
/// the writer (with its buffered data) may then be moved to another thread for
/// Finish(). Not thread-safe.
class ShardWriter {
 public:
  virtual ~ShardWriter() = default;

  /// Append one example: `values[j]` is attribute j of the schema. Every value is
  /// validated (dtype, shape, byte size; see ValidateValue) before anything is
  /// buffered, so a rejected example leaves the shard unchanged.
  virtual Status Add(std::span<const ValueView> values) = 0;

  virtual std::size_t num_examples() const = 0;
  /// Bytes the unfinished shard holds so far (an upper estimate of its encoded size).
  virtual std::uint64_t buffered_bytes() const = 0;
  /// Upper estimate of the bytes Add(values) would add to buffered_bytes().
  virtual std::uint64_t EstimateAddedBytes(std::span<const ValueView> values) const = 0;

  /// Produce the final file bytes (encoded and compressed as the dataset's
  /// compression requires). The writer must not be used afterwards.
  virtual Result<std::vector<std::byte>> Finish() = 0;
};

/// Create a writer for a shard of `type` with `compression` and `schema`.
/// InvalidArgument if the compression is not allowed for the type (e.g. ZIP for fb),
/// or for tfrec if an attribute has a dtype the reference cannot write there
/// (bool, int16, uint16, uint32, uint64), or if `codec.level` is outside
/// CodecLevels(compression). The level applies to the fb whole-file codec, the
/// npz ZIP members and the tfrec GZIP/ZLIB stream (zlib there).
Result<std::unique_ptr<ShardWriter>> MakeShardWriter(ShardFileType type, Compression compression,
                                                     std::vector<AttributeSpec> schema,
                                                     const CodecOptions& codec = {});

/// Limits applied when decoding untrusted shard bytes.
struct ShardReadLimits {
  /// Maximum bytes any decompression may produce (whole fb file, one npz
  /// member, or the whole tfrec record stream).
  std::uint64_t max_decompressed_bytes = kDefaultMaxDecompressedBytes;
};

/// A decoded shard: owns its decoded bytes; values are views into them.
class DecodedShard {
 public:
  virtual ~DecodedShard() = default;
  virtual std::size_t num_examples() const = 0;
  virtual std::size_t num_attributes() const = 0;
  /// Attribute `attribute` of example `example`. REQUIRES: indices in range.
  /// The dtype is the stored one: fb stores the declared dtype; npz stores what
  /// the writer passed (the reference does not cast), so it may differ; tfrec
  /// values are converted back to the declared dtype.
  /// The view is valid while this object lives.
  virtual ValueView Get(std::size_t example, std::size_t attribute) const = 0;
};

/// Decode a whole shard file (as stored on disk, compressed). Runs the FlatBuffers
/// verifier for fb, checks the zip/npy structure for npz, and for tfrec checks
/// both CRCs of every record (errors name the record, counted from 0) and
/// decodes every tf.train.Example; a value whose byte size does not match its
/// declared dtype and shape is Corruption. tfrec values come back in the
/// declared dtype (integers range-checked; float64 was stored as float32).
/// Corruption / ResourceExhausted on bad input, never a crash.
Result<std::unique_ptr<DecodedShard>> DecodeShard(ShardFileType type, Compression compression,
                                                  const std::vector<AttributeSpec>& schema,
                                                  std::vector<std::byte> file_bytes,
                                                  const ShardReadLimits& limits = {});

}  // namespace sedpack
