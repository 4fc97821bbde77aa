// SPDX-License-Identifier: Apache-2.0
// Private to the tfrec shard format: TFRecord framing and the dtype rules of
// the reference's tf.train.Example encoding.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <vector>

#include "sedpack/status.h"
#include "sedpack/types.h"

namespace sedpack::tfrec_internal {

/// Bytes around each payload: uint64 LE length + masked CRC-32C of those 8
/// bytes before it, masked CRC-32C of the payload after it.
inline constexpr std::size_t kRecordHeaderBytes = 12;
inline constexpr std::size_t kRecordFooterBytes = 4;
inline constexpr std::size_t kRecordOverheadBytes = kRecordHeaderBytes + kRecordFooterBytes;

/// Largest payload accepted: protobuf parses and serializes messages of at
/// most 2 GiB - 1 bytes, so a longer record cannot hold a tf.train.Example.
inline constexpr std::uint64_t kMaxRecordPayloadBytes = std::numeric_limits<int>::max();

/// TFRecord's CRC masking: rotate right by 15 bits and add a constant, so a
/// CRC stored next to the data it covers does not checksum to a fixed value.
std::uint32_t MaskedCrc32c(std::span<const std::byte> data);

/// Fill in the framing of `frame`, which is kRecordHeaderBytes, then the
/// payload (already written), then kRecordFooterBytes.
/// REQUIRES: frame.size() >= kRecordOverheadBytes.
void FrameRecord(std::span<std::byte> frame);

/// Walks the records of an uncompressed TFRecord stream and checks both CRCs
/// of each. Errors are Corruption naming the record (counted from 0) and its
/// byte offset in the uncompressed stream; nothing is allocated from a length
/// field, which is checked against the bytes left first.
class RecordReader {
 public:
  explicit RecordReader(std::span<const std::byte> stream) : stream_(stream) {}

  /// The next record's payload (a view into the stream), or nullopt after the last.
  Result<std::optional<std::span<const std::byte>>> Next();

  /// Index of the record Next() returned last (or is about to read after an error).
  std::size_t record_index() const { return index_; }

 private:
  std::span<const std::byte> stream_;
  std::size_t offset_ = 0;
  std::size_t index_ = 0;
  bool started_ = false;
};

/// Whether the reference can write (`for_reading` false) or read (true)
/// attributes of `dtype` in tfrec shards. It writes int, int8, uint8, int32,
/// int64, float16, float32, float64, str and bytes; it also reads int16.
bool TfrecSupportsDType(DType dtype, bool for_reading);

/// InvalidArgument naming the first attribute whose dtype tfrec cannot hold.
Status CheckTfrecSchema(const std::vector<AttributeSpec>& schema, bool for_reading);

}  // namespace sedpack::tfrec_internal
