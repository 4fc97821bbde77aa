// SPDX-License-Identifier: Apache-2.0
// TFRecord framing (TensorFlow's RecordWriter/RecordReader layout).
#include <string>

#include "codecs/compress_internal.h"
#include "shard/shard_internal.h"
#include "shard/tfrec/tfrec_internal.h"

namespace sedpack::tfrec_internal {
namespace {

constexpr std::uint32_t kMaskDelta = 0xa282ead8;

using shard_internal::LoadLe32;
using shard_internal::LoadLe64;

void StoreLe(std::uint64_t value, int bytes, std::byte* out) {
  for (int i = 0; i < bytes; ++i) out[i] = static_cast<std::byte>((value >> (8 * i)) & 0xff);
}

}  // namespace

std::uint32_t MaskedCrc32c(std::span<const std::byte> data) {
  const std::uint32_t crc = Crc32c(data);
  return ((crc >> 15) | (crc << 17)) + kMaskDelta;
}

void FrameRecord(std::span<std::byte> frame) {
  const std::size_t payload_size = frame.size() - kRecordOverheadBytes;
  StoreLe(payload_size, 8, frame.data());
  StoreLe(MaskedCrc32c(frame.first(8)), 4, frame.data() + 8);
  StoreLe(MaskedCrc32c(frame.subspan(kRecordHeaderBytes, payload_size)), 4,
          frame.data() + kRecordHeaderBytes + payload_size);
}

Result<std::optional<std::span<const std::byte>>> RecordReader::Next() {
  if (started_) ++index_;
  started_ = true;
  const std::size_t left = stream_.size() - offset_;
  if (left == 0) return std::optional<std::span<const std::byte>>();
  auto where = [&] {
    return "record " + std::to_string(index_) + " (at byte " + std::to_string(offset_) + "): ";
  };
  if (left < kRecordHeaderBytes) {
    return Status::Corruption(where(), "truncated: ", left,
                              " bytes left, fewer than the 12-byte length header");
  }
  const std::byte* header = stream_.data() + offset_;
  if (LoadLe32(header + 8) != MaskedCrc32c({header, 8})) {
    return Status::Corruption(where(), "CRC mismatch in the length header");
  }
  const std::uint64_t length = LoadLe64(header);
  if (length > kMaxRecordPayloadBytes) {
    return Status::Corruption(where(), "length ", length, " exceeds the limit of ",
                              kMaxRecordPayloadBytes, " bytes");
  }
  const std::size_t room = left - kRecordHeaderBytes;
  if (room < kRecordFooterBytes || length > room - kRecordFooterBytes) {
    return Status::Corruption(where(), "truncated: length ", length, " needs ",
                              length + kRecordFooterBytes, " more bytes, only ", room, " left");
  }
  const std::span<const std::byte> payload =
      stream_.subspan(offset_ + kRecordHeaderBytes, static_cast<std::size_t>(length));
  if (LoadLe32(payload.data() + payload.size()) != MaskedCrc32c(payload)) {
    return Status::Corruption(where(), "CRC mismatch in the ", length, "-byte payload");
  }
  offset_ += kRecordOverheadBytes + static_cast<std::size_t>(length);
  return std::optional<std::span<const std::byte>>(payload);
}

bool TfrecSupportsDType(DType dtype, bool for_reading) {
  switch (dtype) {
    case DType::kInt:
    case DType::kInt8:
    case DType::kUInt8:
    case DType::kInt32:
    case DType::kInt64:
    case DType::kFloat16:
    case DType::kFloat32:
    case DType::kFloat64:
    case DType::kStr:
    case DType::kBytes:
      return true;
    case DType::kInt16:
      // The reference's reader parses int16 as int64, but its writer refuses it.
      return for_reading;
    case DType::kBool:
    case DType::kUInt16:
    case DType::kUInt32:
    case DType::kUInt64:
      return false;
  }
  return false;
}

Status CheckTfrecSchema(const std::vector<AttributeSpec>& schema, bool for_reading) {
  for (const AttributeSpec& spec : schema) {
    if (!TfrecSupportsDType(spec.dtype, for_reading)) {
      return Status::InvalidArgument(
          "attribute \"", spec.name, "\" has dtype ", DTypeName(spec.dtype),
          ", which tfrec shards cannot ", for_reading ? "hold" : "store",
          " (supported: int, int8, uint8, int32, int64, float16, float32, float64, str, bytes",
          for_reading ? "; int16 for reading" : "", ")");
    }
  }
  return Status::OK();
}

}  // namespace sedpack::tfrec_internal
