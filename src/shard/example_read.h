// SPDX-License-Identifier: Apache-2.0
// One example of an uncompressed fb shard, read by positioned reads of the
// bytes it needs instead of the whole file: for random access (the index
// fetcher), where a shard is tens of MB and an example a few hundred kB.
// Project-private (src/ include directory), not installed.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "shard/shard_buffer.h"
#include "sedpack/shard/shard.h"
#include "sedpack/status.h"
#include "sedpack/types.h"

namespace sedpack::shard_internal {

/// Fill `out` with the file's bytes at `offset`. The caller of ReadFbExample
/// guarantees offset + out.size() <= the file size it was given; a read that
/// cannot deliver every byte (I/O error, the file shrank) returns an error.
using ReadAt = std::function<Status(std::uint64_t offset, std::span<std::byte> out)>;

struct FbExample {
  /// The example alone, as a shard of one example (row 0).
  std::unique_ptr<DecodedShard> values;
  /// Bytes asked of ReadAt (metadata blocks and attribute bytes).
  std::uint64_t bytes_read = 0;
};

/// Read example `example` of an uncompressed fb shard of `file_size` bytes
/// through `read_at`: the root offset, the Shard table and its vtable, the
/// examples vector's length and the example's offset, the Example table, its
/// attributes vector, each Attribute table, then each attribute's bytes.
///
/// Every offset and length is checked before it is followed or allocated for,
/// as the FlatBuffers verifier checks them (alignment, vtable size, vector
/// lengths, everything inside the file), and each value's size against its
/// dtype and shape as DecodeShard does; the parts of the file not read are not
/// checked. The examples vector must hold `expected_examples` (what the
/// metadata records) and `example` must be below it. Corruption otherwise
/// (messages do not name the file: the caller adds it); never a crash.
Result<FbExample> ReadFbExample(const std::vector<AttributeSpec>& schema, std::uint64_t file_size,
                                std::uint64_t example, std::uint64_t expected_examples, const ReadAt& read_at);

/// Example `example` of an fb shard from the value ranges the checks sidecar
/// records for it (`ranges`, schema order, in the decoded bytes, each inside
/// the decoded size: the sidecar checked that) and the checksum of its value
/// bytes: `read_decoded` delivers decoded bytes (for an uncompressed shard,
/// positioned reads of the file). One read of the range covering the values
/// when they lie together, else one per value. Corruption (kHashMismatch)
/// naming the example when the bytes do not match the checksum; sizes and
/// str values are checked as DecodeShard checks them. No checksum (an
/// unverified fetch): the bytes are taken as they are.
Result<FbExample> ReadFbExampleByRanges(const std::vector<AttributeSpec>& schema, std::uint64_t example,
                                        std::span<const ValueRange> ranges, std::optional<std::uint64_t> checksum,
                                        const ReadAt& read_decoded);

}  // namespace sedpack::shard_internal
