// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "sedpack/status.h"
#include "sedpack/types.h"

namespace sedpack {

/// Default cap on the size of any decompressed shard (4 GiB). A shard whose
/// decompressed size would pass the cap is refused with ResourceExhausted
/// before the memory is allocated.
inline constexpr std::uint64_t kDefaultMaxDecompressedBytes = 4ULL << 30;

/// Whole-file compression of fb shards, applied exactly as the reference does:
/// GZIP and ZLIB write one gzip member (level 9), BZ2 level 9, LZMA an .xz stream
/// (preset 6, CRC64), LZ4 one frame with content size, ZSTD one frame (level 3)
/// with content size. Thread-compatible: one instance per thread.
class Codec {
 public:
  virtual ~Codec() = default;
  virtual Compression type() const = 0;

  /// Compress `input` into `*out` (replacing its contents).
  virtual Status Compress(std::span<const std::byte> input, std::vector<std::byte>* out) = 0;

  /// Decompress `input` into `*out`. Fails with ResourceExhausted if the output
  /// would exceed `max_output` bytes, with Corruption on malformed or truncated
  /// input. Reads the first member/frame/stream as the reference readers do
  /// (BZ2/LZMA/GZIP: concatenated streams are accepted).
  virtual Status Decompress(std::span<const std::byte> input, std::uint64_t max_output,
                            std::vector<std::byte>* out) = 0;
};

/// Create the codec for `c`. kNone gives an identity codec. kZip is not a
/// whole-file codec (npz handles it) and gives InvalidArgument.
Result<std::unique_ptr<Codec>> MakeCodec(Compression c);

/// Create the codec TensorFlow's TFRecordWriter applies to a whole record
/// stream, which differs from the fb one of MakeCodec: GZIP writes one gzip
/// member and ZLIB one zlib (RFC 1950) stream, both at zlib's default level.
/// Reading GZIP accepts concatenated members; ZLIB reads exactly one stream
/// (anything after it is Corruption). kNone gives the identity codec; every
/// other compression is InvalidArgument.
Result<std::unique_ptr<Codec>> MakeTfRecordCodec(Compression c);

/// Raw DEFLATE (no zlib/gzip header), as used inside zip members.
/// `level` as zlib's (-1 = default, 6).
Status DeflateRaw(std::span<const std::byte> input, int level, std::vector<std::byte>* out);
/// Inflate raw DEFLATE data whose decompressed size is known to be `expected_size`
/// (fails with Corruption if it differs; `expected_size` must be checked by the caller).
Status InflateRaw(std::span<const std::byte> input, std::uint64_t expected_size,
                  std::vector<std::byte>* out);

/// CRC-32 (zip/gzip polynomial) of `data`, continuing from `crc`.
std::uint32_t Crc32(std::span<const std::byte> data, std::uint32_t crc = 0);

/// CRC-32C (Castagnoli polynomial, as in iSCSI and TFRecord framing) of
/// `data`, continuing from `crc`. Uses the SSE4.2 instruction when the CPU has it.
std::uint32_t Crc32c(std::span<const std::byte> data, std::uint32_t crc = 0);

}  // namespace sedpack
