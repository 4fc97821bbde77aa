// SPDX-License-Identifier: Apache-2.0
// tfrec shard writer: one tf.train.Example per example, encoded as the
// reference's to_tfrecord does, framed as TFRecord records; the whole record
// stream is compressed at Finish() as TensorFlow's TFRecordWriter does.
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

#include <bit>
#include <cstring>
#include <new>
#include <utility>

#include "sedpack_pb/example.pb.h"
#include "shard/shard_internal.h"
#include "shard/tfrec/tfrec_internal.h"

namespace sedpack {
namespace shard_internal {
namespace {

using tfrec_internal::kRecordHeaderBytes;
using tfrec_internal::kRecordOverheadBytes;

// Worst-case protobuf bytes of a tag plus a length prefix.
constexpr std::uint64_t kFieldOverhead = 1 + 10;
// Per attribute besides its name and elements: map entry, key, Feature, the
// list message and its packed field or element; for float16 also the
// TensorProto's dtype, shape and tensor_content fields.
constexpr std::uint64_t kAttributeOverhead = 8 * kFieldOverhead;
// Per example: Example.features and the record framing.
constexpr std::uint64_t kExampleOverhead = 2 * kFieldOverhead + kRecordOverheadBytes;

// Element `i` of a numeric value as int64 (sign- or zero-extended).
std::int64_t IntElement(const ValueView& v, std::size_t i) {
  const std::byte* p = v.data.data() + i * DTypeItemSize(v.dtype);
  switch (v.dtype) {
    case DType::kInt8:
      return static_cast<std::int8_t>(p[0]);
    case DType::kUInt8:
      return static_cast<std::uint8_t>(p[0]);
    case DType::kInt32:
      return static_cast<std::int32_t>(LoadLe32(p));
    default:  // kInt, kInt64
      return static_cast<std::int64_t>(LoadLe64(p));
  }
}

// Element `i` of a float32 or float64 value as float32: FloatList holds only
// float32, so float64 is rounded to nearest as numpy's astype(float32) does.
float FloatElement(const ValueView& v, std::size_t i) {
  if (v.dtype == DType::kFloat32) return std::bit_cast<float>(LoadLe32(v.data.data() + 4 * i));
  return static_cast<float>(std::bit_cast<double>(LoadLe64(v.data.data() + 8 * i)));
}

std::size_t ElementCount(const ValueView& v) { return v.data.size() / DTypeItemSize(v.dtype); }

// The bytes of tf.io.serialize_tensor(value.astype(float16)).
std::string SerializeHalfTensor(const AttributeSpec& spec, const ValueView& v) {
  tfrec_pb::TensorProto tensor;
  tensor.set_dtype(tfrec_pb::DT_HALF);
  auto* shape = tensor.mutable_tensor_shape();
  for (std::int64_t d : spec.shape) shape->add_dim()->set_size(d);
  tensor.set_tensor_content(std::string(v.AsStringView()));
  return tensor.SerializeAsString();
}

void EncodeFeature(const AttributeSpec& spec, const ValueView& v, tfrec_pb::Feature* feature) {
  switch (spec.dtype) {
    case DType::kInt:
    case DType::kInt8:
    case DType::kUInt8:
    case DType::kInt32:
    case DType::kInt64: {
      auto* list = feature->mutable_int64_list()->mutable_value();
      const std::size_t n = ElementCount(v);
      list->Reserve(static_cast<int>(n));
      for (std::size_t i = 0; i < n; ++i) list->Add(IntElement(v, i));
      return;
    }
    case DType::kFloat32:
    case DType::kFloat64: {
      auto* list = feature->mutable_float_list()->mutable_value();
      const std::size_t n = ElementCount(v);
      list->Reserve(static_cast<int>(n));
      for (std::size_t i = 0; i < n; ++i) list->Add(FloatElement(v, i));
      return;
    }
    case DType::kFloat16:
      feature->mutable_bytes_list()->add_value(SerializeHalfTensor(spec, v));
      return;
    default:  // kStr (validated UTF-8), kBytes: one element with the raw bytes.
      feature->mutable_bytes_list()->add_value(std::string(v.AsStringView()));
      return;
  }
}

// Upper bound of the encoded elements of one value.
std::uint64_t EstimateValueBytes(const AttributeSpec& spec, const ValueView& v) {
  switch (spec.dtype) {
    case DType::kFloat16:
      return v.data.size() + spec.shape.size() * 2 * kFieldOverhead;
    case DType::kFloat32:
    case DType::kFloat64:
      return 4 * ElementCount(v);
    case DType::kStr:
    case DType::kBytes:
      return v.data.size();
    default:  // Integers: at most 10 varint bytes each.
      return 10 * ElementCount(v);
  }
}

class TfrecShardWriter final : public ShardWriter {
 public:
  TfrecShardWriter(std::vector<AttributeSpec> schema, std::unique_ptr<Codec> codec)
      : schema_(std::move(schema)), codec_(std::move(codec)) {}

  Status Add(std::span<const ValueView> values) override {
    if (finished_) return Status::InvalidArgument("Add() called after Finish()");
    SEDPACK_RETURN_NOT_OK(ValidateExample(schema_, values));
    try {
      example_.Clear();
      auto& features = *example_.mutable_features()->mutable_feature();
      for (std::size_t j = 0; j < schema_.size(); ++j) {
        EncodeFeature(schema_[j], values[j], &features[schema_[j].name]);
      }
      const std::size_t size = example_.ByteSizeLong();
      if (size > tfrec_internal::kMaxRecordPayloadBytes) {
        return Status::InvalidArgument("one example encodes to ", size,
                                       " bytes, more than a TFRecord record can hold (",
                                       tfrec_internal::kMaxRecordPayloadBytes, ")");
      }
      const std::size_t start = records_.size();
      records_.resize(start + kRecordOverheadBytes + size);
      std::byte* payload = records_.data() + start + kRecordHeaderBytes;
      bool ok;
      {
        google::protobuf::io::ArrayOutputStream array(payload, static_cast<int>(size));
        google::protobuf::io::CodedOutputStream coded(&array);
        // Sorted map keys: the same example always gives the same bytes, so
        // rewriting a dataset reproduces its hashes.
        coded.SetSerializationDeterministic(true);
        example_.SerializeWithCachedSizes(&coded);
        ok = !coded.HadError() && static_cast<std::size_t>(coded.ByteCount()) == size;
      }
      if (!ok) {
        records_.resize(start);
        return Status::Internal("tf.train.Example serialization failed");
      }
      tfrec_internal::FrameRecord(std::span<std::byte>(records_).subspan(start));
    } catch (const std::bad_alloc&) {
      return Status::ResourceExhausted("out of memory while encoding a tfrec example");
    }
    ++num_examples_;
    return Status::OK();
  }

  std::size_t num_examples() const override { return num_examples_; }
  std::uint64_t buffered_bytes() const override { return records_.size(); }

  std::uint64_t EstimateAddedBytes(std::span<const ValueView> values) const override {
    std::uint64_t total = kExampleOverhead;
    for (std::size_t j = 0; j < schema_.size() && j < values.size(); ++j) {
      total += kAttributeOverhead + schema_[j].name.size() + EstimateValueBytes(schema_[j], values[j]);
    }
    return total;
  }

  Result<std::vector<std::byte>> Finish() override {
    if (finished_) return Status::InvalidArgument("Finish() called twice");
    finished_ = true;
    std::vector<std::byte> records = std::move(records_);
    records_ = {};
    if (codec_->type() == Compression::kNone) return records;
    std::vector<std::byte> out;
    SEDPACK_RETURN_NOT_OK(codec_->Compress(records, &out));
    return out;
  }

 private:
  std::vector<AttributeSpec> schema_;
  std::unique_ptr<Codec> codec_;
  tfrec_pb::Example example_;  // Reused so its buffers are reused.
  std::vector<std::byte> records_;
  std::size_t num_examples_ = 0;
  bool finished_ = false;
};

}  // namespace

Result<std::unique_ptr<ShardWriter>> MakeTfrecShardWriter(Compression compression,
                                                           std::vector<AttributeSpec> schema,
                                                           int level) {
  SEDPACK_RETURN_NOT_OK(tfrec_internal::CheckTfrecSchema(schema, /*for_reading=*/false));
  SEDPACK_ASSIGN_OR_RETURN(std::unique_ptr<Codec> codec, MakeTfRecordCodec(compression, level));
  return std::unique_ptr<ShardWriter>(
      std::make_unique<TfrecShardWriter>(std::move(schema), std::move(codec)));
}

}  // namespace shard_internal
}  // namespace sedpack
