// SPDX-License-Identifier: Apache-2.0
// Random access into compressed shards, and the fast checksum the checks
// sidecar records. A shard compressed with decode points is still one
// standard file of its codec (an LZ4 frame, a run of ZSTD frames, a GZIP or
// ZLIB stream): the points only say where a decoder may start without the
// bytes before them, so that a fetch decodes one block rather than the shard.
// Project-private (src/ include directory), not installed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "codecs/byte_buffer.h"
#include "sedpack/status.h"
#include "sedpack/types.h"

namespace sedpack::codecs_internal {

/// A place in a compressed file where decoding can begin afresh.
struct DecodePoint {
  std::uint64_t compressed_offset = 0;  ///< in the file as stored
  std::uint64_t decoded_offset = 0;     ///< in the decoded bytes
  friend bool operator==(const DecodePoint&, const DecodePoint&) = default;
};

/// Fill `out` with the stored file's bytes at `offset`; an error if it cannot
/// deliver every byte (I/O error, the file shrank).
using ReadStoredAt = std::function<Status(std::uint64_t offset, std::span<std::byte> out)>;

/// Whether shards of `compression` can be written with decode points and read
/// from them (LZ4, ZSTD, GZIP, ZLIB).
bool SupportsDecodePoints(Compression compression);

/// Decoded bytes [offset, offset + size) of a file of `file_size` stored bytes
/// compressed with `compression`, whose decode points (ascending, the first at
/// decoded offset 0) are `points` and whose decoded size is `decoded_size`.
/// Reads through `read_at` only the stored bytes of the blocks that hold the
/// range. Every point, length and block header is checked against the file
/// and the decoded size before use: Corruption on a mismatch, never a crash.
Result<ByteBuffer> DecodeRangeAt(Compression compression, std::span<const DecodePoint> points,
                                 std::uint64_t file_size, std::uint64_t decoded_size,
                                 const ReadStoredAt& read_at, std::uint64_t offset, std::uint64_t size);

/// The decode points of a stored file someone else may have written (for
/// `index build` / `verify --deep` on a dataset this library did not write):
/// found from the codec's own structure where it has one (the block headers
/// of an LZ4 frame with independent blocks, the frames of a multi-frame
/// ZSTD file). Empty when the file has none that can be found; never an
/// error for a valid file. Corruption when the structure is damaged.
Result<std::vector<DecodePoint>> FindDecodePoints(Compression compression,
                                                  std::span<const std::byte> stored);

/// The checks sidecar's checksum: XXH3-64 (seed 0), several GB/s per core.
std::uint64_t FastChecksum(std::span<const std::byte> bytes);

/// FastChecksum of bytes that arrive in pieces.
class FastChecksummer {
 public:
  FastChecksummer();
  ~FastChecksummer();
  FastChecksummer(const FastChecksummer&) = delete;
  FastChecksummer& operator=(const FastChecksummer&) = delete;
  void Update(std::span<const std::byte> bytes);
  /// FastChecksum of everything passed to Update so far.
  std::uint64_t Digest() const;

 private:
  void* state_;
};

}  // namespace sedpack::codecs_internal
