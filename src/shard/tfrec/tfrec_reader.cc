// SPDX-License-Identifier: Apache-2.0
// tfrec shard decoder: undo the whole-stream compression, walk the TFRecord
// records (checking every CRC) and turn each tf.train.Example back into the
// schema's values, as the reference's get_from_tfrecord parses them.
#include <bit>
#include <limits>
#include <new>
#include <string>
#include <utility>

#include "sedpack_pb/example.pb.h"
#include "shard/shard_internal.h"
#include "shard/tfrec/tfrec_internal.h"

namespace sedpack {
namespace shard_internal {
namespace {

// Values are placed at offsets aligned to this, so views of numeric values
// are aligned for their element type.
constexpr std::size_t kValueAlignment = 8;

class TfrecDecodedShard final : public DecodedShard {
 public:
  struct Slot {
    std::size_t offset;
    std::size_t size;
  };

  TfrecDecodedShard(const std::vector<AttributeSpec>& schema, std::vector<std::byte> data,
                    std::vector<Slot> slots)
      : schema_(schema), data_(std::move(data)), slots_(std::move(slots)) {}

  std::size_t num_examples() const override { return slots_.size() / schema_.size(); }
  std::size_t num_attributes() const override { return schema_.size(); }

  ValueView Get(std::size_t example, std::size_t attribute) const override {
    const AttributeSpec& spec = schema_[attribute];
    const Slot& slot = slots_[example * schema_.size() + attribute];
    return ValueView{spec.dtype, spec.IsVariableSize() ? Shape{} : spec.shape,
                     std::span<const std::byte>(data_).subspan(slot.offset, slot.size)};
  }

 private:
  std::vector<AttributeSpec> schema_;
  std::vector<std::byte> data_;
  std::vector<Slot> slots_;
};

std::string_view KindName(tfrec_pb::Feature::KindCase kind) {
  switch (kind) {
    case tfrec_pb::Feature::kBytesList:
      return "bytes_list";
    case tfrec_pb::Feature::kFloatList:
      return "float_list";
    case tfrec_pb::Feature::kInt64List:
      return "int64_list";
    default:
      return "no list";
  }
}

// Appends decoded values to one growing buffer.
class ValueSink {
 public:
  explicit ValueSink(std::vector<std::byte>* data) : data_(data) {}

  // Start a value; returns its offset.
  std::size_t Begin(bool align) {
    if (align) data_->resize((data_->size() + kValueAlignment - 1) / kValueAlignment * kValueAlignment);
    return data_->size();
  }
  void Append(std::uint64_t value, std::size_t bytes) { AppendLe(value, static_cast<int>(bytes), data_); }
  void Append(std::string_view raw) {
    const auto* p = reinterpret_cast<const std::byte*>(raw.data());
    data_->insert(data_->end(), p, p + raw.size());
  }

 private:
  std::vector<std::byte>* data_;
};

// Range of the declared integer dtype, which the reference's writer widened to int64.
bool FitsIntDType(DType dtype, std::int64_t v) {
  switch (dtype) {
    case DType::kInt8:
      return v >= std::numeric_limits<std::int8_t>::min() && v <= std::numeric_limits<std::int8_t>::max();
    case DType::kUInt8:
      return v >= 0 && v <= std::numeric_limits<std::uint8_t>::max();
    case DType::kInt16:
      return v >= std::numeric_limits<std::int16_t>::min() &&
             v <= std::numeric_limits<std::int16_t>::max();
    case DType::kInt32:
      return v >= std::numeric_limits<std::int32_t>::min() &&
             v <= std::numeric_limits<std::int32_t>::max();
    default:  // kInt, kInt64
      return true;
  }
}

class ExampleDecoder {
 public:
  ExampleDecoder(const std::vector<AttributeSpec>& schema, std::vector<std::byte>* data,
                 std::vector<TfrecDecodedShard::Slot>* slots)
      : schema_(schema), sink_(data), data_(data), slots_(slots) {
    for (const AttributeSpec& spec : schema_) {
      // Validated by ValidateSchema: fixed-size attributes have a computable count.
      counts_.push_back(spec.IsVariableSize()
                            ? 1
                            : static_cast<std::size_t>(ShapeElementCount(spec.shape).value()));
    }
  }

  Status Decode(std::span<const std::byte> payload) {
    if (!example_.ParseFromArray(payload.data(), static_cast<int>(payload.size()))) {
      return Status::Corruption("not a valid tf.train.Example protocol buffer");
    }
    const auto& features = example_.features().feature();
    for (std::size_t j = 0; j < schema_.size(); ++j) {
      const AttributeSpec& spec = schema_[j];
      const auto it = features.find(spec.name);
      if (it == features.end()) {
        return Status::Corruption("attribute \"", spec.name, "\" is missing from the example");
      }
      Status st = DecodeValue(spec, counts_[j], it->second);
      if (!st.ok()) return st.WithPrefix("attribute \"" + spec.name + "\": ");
    }
    return Status::OK();
  }

 private:
  Status ExpectKind(const tfrec_pb::Feature& f, tfrec_pb::Feature::KindCase kind,
                    std::size_t got, std::size_t want) {
    if (f.kind_case() != kind) {
      return Status::Corruption("expected a ", KindName(kind), ", got ", KindName(f.kind_case()));
    }
    if (got != want) {
      return Status::Corruption("expected ", want, " values in its ", KindName(kind), ", got ", got);
    }
    return Status::OK();
  }

  void Push(std::size_t offset) { slots_->push_back({offset, data_->size() - offset}); }

  Status DecodeValue(const AttributeSpec& spec, std::size_t count, const tfrec_pb::Feature& f) {
    switch (spec.dtype) {
      case DType::kInt:
      case DType::kInt8:
      case DType::kUInt8:
      case DType::kInt16:
      case DType::kInt32:
      case DType::kInt64: {
        const auto& values = f.int64_list().value();
        SEDPACK_RETURN_NOT_OK(ExpectKind(f, tfrec_pb::Feature::kInt64List,
                                         static_cast<std::size_t>(values.size()), count));
        const std::size_t item = DTypeItemSize(spec.dtype);
        const std::size_t offset = sink_.Begin(true);
        for (std::int64_t v : values) {
          if (!FitsIntDType(spec.dtype, v)) {
            return Status::Corruption("value ", v, " does not fit dtype ", DTypeName(spec.dtype));
          }
          sink_.Append(static_cast<std::uint64_t>(v), item);
        }
        Push(offset);
        return Status::OK();
      }
      case DType::kFloat32:
      case DType::kFloat64: {
        const auto& values = f.float_list().value();
        SEDPACK_RETURN_NOT_OK(ExpectKind(f, tfrec_pb::Feature::kFloatList,
                                         static_cast<std::size_t>(values.size()), count));
        const std::size_t offset = sink_.Begin(true);
        for (float v : values) {
          if (spec.dtype == DType::kFloat32) {
            sink_.Append(std::bit_cast<std::uint32_t>(v), 4);
          } else {
            // Stored as float32: widening is exact, the precision is already lost.
            sink_.Append(std::bit_cast<std::uint64_t>(static_cast<double>(v)), 8);
          }
        }
        Push(offset);
        return Status::OK();
      }
      case DType::kFloat16:
        SEDPACK_RETURN_NOT_OK(
            ExpectKind(f, tfrec_pb::Feature::kBytesList,
                       static_cast<std::size_t>(f.bytes_list().value_size()), 1));
        return DecodeHalfTensor(spec, count, f.bytes_list().value(0));
      default: {  // kStr, kBytes
        SEDPACK_RETURN_NOT_OK(
            ExpectKind(f, tfrec_pb::Feature::kBytesList,
                       static_cast<std::size_t>(f.bytes_list().value_size()), 1));
        const std::string& raw = f.bytes_list().value(0);
        if (spec.dtype == DType::kStr && !IsValidUtf8(raw)) {
          return Status::Corruption("str value is not valid UTF-8");
        }
        if (!spec.IsVariableSize() && raw.size() != count) {
          return Status::Corruption("expected ", count, " bytes, got ", raw.size());
        }
        const std::size_t offset = sink_.Begin(false);
        sink_.Append(raw);
        Push(offset);
        return Status::OK();
      }
    }
  }

  // The inverse of tf.io.serialize_tensor for a float16 tensor of the declared shape.
  Status DecodeHalfTensor(const AttributeSpec& spec, std::size_t count, const std::string& raw) {
    if (!tensor_.ParseFromString(raw)) {
      return Status::Corruption("float16 value is not a valid serialized TensorProto");
    }
    if (tensor_.dtype() != tfrec_pb::DT_HALF) {
      return Status::Corruption("float16 value is a tensor of TensorFlow dtype ", tensor_.dtype(),
                                ", expected DT_HALF (19)");
    }
    const auto& dims = tensor_.tensor_shape().dim();
    bool same_shape = !tensor_.tensor_shape().unknown_rank() &&
                      static_cast<std::size_t>(dims.size()) == spec.shape.size();
    for (int d = 0; same_shape && d < dims.size(); ++d) {
      same_shape = dims[d].size() == spec.shape[static_cast<std::size_t>(d)];
    }
    if (!same_shape) {
      Shape got;
      for (const auto& dim : dims) got.push_back(dim.size());
      return Status::Corruption("float16 tensor has shape ", ShapeToString(got), ", expected ",
                                ShapeToString(spec.shape));
    }
    const std::size_t offset = sink_.Begin(true);
    if (!tensor_.tensor_content().empty()) {
      if (tensor_.tensor_content().size() != 2 * count) {
        return Status::Corruption("float16 tensor_content has ", tensor_.tensor_content().size(),
                                  " bytes, expected ", 2 * count);
      }
      sink_.Append(tensor_.tensor_content());
    } else {
      if (static_cast<std::size_t>(tensor_.half_val_size()) != count) {
        return Status::Corruption("float16 tensor has ", tensor_.half_val_size(),
                                  " half_val elements and no tensor_content, expected ", count);
      }
      for (std::int32_t bits : tensor_.half_val()) {
        sink_.Append(static_cast<std::uint16_t>(bits), 2);
      }
    }
    Push(offset);
    return Status::OK();
  }

  const std::vector<AttributeSpec>& schema_;
  ValueSink sink_;
  std::vector<std::byte>* data_;
  std::vector<TfrecDecodedShard::Slot>* slots_;
  std::vector<std::size_t> counts_;
  tfrec_pb::Example example_;  // Reused across records.
  tfrec_pb::TensorProto tensor_;
};

Result<std::unique_ptr<DecodedShard>> DecodeRecords(const std::vector<AttributeSpec>& schema,
                                                    std::span<const std::byte> stream) {
  std::vector<std::byte> data;
  std::vector<TfrecDecodedShard::Slot> slots;
  // The decoded values are about as large as the records; float64 and
  // alignment can add more, which the vector grows for.
  data.reserve(stream.size());
  ExampleDecoder decoder(schema, &data, &slots);
  tfrec_internal::RecordReader records(stream);
  for (;;) {
    SEDPACK_ASSIGN_OR_RETURN(std::optional<std::span<const std::byte>> payload, records.Next());
    if (!payload) break;
    Status st = decoder.Decode(*payload);
    if (!st.ok()) {
      return st.WithPrefix("record " + std::to_string(records.record_index()) + ": ");
    }
  }
  return std::unique_ptr<DecodedShard>(
      std::make_unique<TfrecDecodedShard>(schema, std::move(data), std::move(slots)));
}

}  // namespace

Result<std::unique_ptr<DecodedShard>> DecodeTfrecShard(Compression compression,
                                                       const std::vector<AttributeSpec>& schema,
                                                       std::span<const std::byte> file_bytes,
                                                       const ShardReadLimits& limits) {
  SEDPACK_RETURN_NOT_OK(tfrec_internal::CheckTfrecSchema(schema, /*for_reading=*/true));
  try {
    if (compression == Compression::kNone) {
      if (file_bytes.size() > limits.max_decompressed_bytes) {
        return Status::ResourceExhausted("tfrec shard of ", file_bytes.size(),
                                         " bytes exceeds the limit of ",
                                         limits.max_decompressed_bytes, " bytes");
      }
      return DecodeRecords(schema, file_bytes);
    }
    SEDPACK_ASSIGN_OR_RETURN(std::unique_ptr<Codec> codec, MakeTfRecordCodec(compression));
    std::vector<std::byte> stream;
    SEDPACK_RETURN_NOT_OK(codec->Decompress(file_bytes, limits.max_decompressed_bytes, &stream));
    return DecodeRecords(schema, stream);
  } catch (const std::bad_alloc&) {
    return Status::ResourceExhausted("out of memory while decoding a tfrec shard");
  }
}

}  // namespace shard_internal
}  // namespace sedpack
