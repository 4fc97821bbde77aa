// SPDX-License-Identifier: Apache-2.0
#include <new>
#include <utility>
#include <vector>

#include "shard/fb/fb_internal.h"
#include "shard/shard_internal.h"

namespace sedpack::shard_internal {
namespace {

class FbDecodedShard final : public DecodedShard {
 public:
  FbDecodedShard(codecs_internal::ByteBuffer buffer, const std::vector<AttributeSpec>& schema)
      : buffer_(std::move(buffer)) {
    dtypes_.reserve(schema.size());
    shapes_.reserve(schema.size());
    for (const AttributeSpec& spec : schema) {
      dtypes_.push_back(spec.dtype);
      shapes_.push_back(spec.shape);
    }
  }

  std::span<const std::byte> bytes() const { return buffer_.span(); }

  // Verify the buffer and index every value; the views point into buffer_.
  Status Index(const std::vector<AttributeSpec>& schema) {
    const std::size_t size = buffer_.size();
    // The verifier asserts the buffer is below FlatBuffers' 2 GiB limit.
    if (size >= FLATBUFFERS_MAX_BUFFER_SIZE) {
      return Status::Corruption("fb shard is ", size, " bytes, more than FlatBuffers allows");
    }
    const auto* base = reinterpret_cast<const std::uint8_t*>(buffer_.data());
    flatbuffers::Verifier::Options options;
    options.max_depth = fb_internal::kMaxDepth;
    options.max_tables = fb_internal::kMaxTables;
    options.check_alignment = true;
    flatbuffers::Verifier verifier(base, size, options);
    if (!fb_internal::fbs::VerifyShardBuffer(verifier)) {
      return Status::Corruption("fb shard (", size,
                                " bytes) is not a valid sedpack FlatBuffer (verification failed)");
    }
    const fb_internal::fbs::Shard* shard = fb_internal::fbs::GetShard(base);
    if (shard == nullptr) return Status::Corruption("fb shard has no root table");
    // The reference reads a missing examples vector as a shard without examples.
    const auto* examples = shard->examples();
    num_examples_ = examples ? examples->size() : 0;
    const std::size_t k = schema.size();
    values_.reserve(num_examples_ * k);
    for (std::size_t i = 0; i < num_examples_; ++i) {
      const fb_internal::fbs::Example* example =
          examples->Get(static_cast<flatbuffers::uoffset_t>(i));
      if (example == nullptr) return Status::Corruption("fb shard: example ", i, " is missing");
      const auto* attributes = example->attributes();
      if (attributes == nullptr) {
        return Status::Corruption("fb shard: example ", i, " has no attributes vector");
      }
      if (attributes->size() != k) {
        return Status::Corruption("fb shard: example ", i, " has ", attributes->size(),
                                  " attributes, the schema has ", k);
      }
      for (std::size_t j = 0; j < k; ++j) {
        const fb_internal::fbs::Attribute* attribute =
            attributes->Get(static_cast<flatbuffers::uoffset_t>(j));
        if (attribute == nullptr) {
          return Status::Corruption("fb shard: example ", i, " attribute \"", schema[j].name,
                                    "\" is missing");
        }
        // A missing vector reads as empty, as in the reference.
        std::span<const std::byte> data;
        if (const auto* bytes = attribute->attribute_bytes(); bytes != nullptr) {
          data = {reinterpret_cast<const std::byte*>(bytes->data()), bytes->size()};
        }
        SEDPACK_RETURN_NOT_OK(CheckValue(schema[j], i, data));
        values_.push_back(data);
      }
    }
    return Status::OK();
  }

  std::size_t num_examples() const override { return num_examples_; }
  std::size_t num_attributes() const override { return dtypes_.size(); }
  ValueView Get(std::size_t example, std::size_t attribute) const override {
    return ValueView{dtypes_[attribute], shapes_[attribute],
                     values_[example * dtypes_.size() + attribute]};
  }

 private:
  static Status CheckValue(const AttributeSpec& spec, std::size_t example,
                           std::span<const std::byte> data) {
    SEDPACK_RETURN_NOT_OK(fb_internal::CheckValueSize(spec, example, data.size()));
    return fb_internal::CheckValueBytes(spec, example, data);
  }

  codecs_internal::ByteBuffer buffer_;  // Pooled (decompressed) or adopted file bytes.
  std::vector<DType> dtypes_;
  std::vector<Shape> shapes_;
  std::size_t num_examples_ = 0;
  std::vector<std::span<const std::byte>> values_;  // Row-major: example, then attribute.
};

}  // namespace

}  // namespace sedpack::shard_internal

namespace sedpack::fb_internal {

Status CheckValueSize(const AttributeSpec& spec, std::size_t example, std::uint64_t size) {
  if (spec.IsVariableSize()) return Status::OK();
  SEDPACK_ASSIGN_OR_RETURN(std::uint64_t expected, spec.FixedByteSize());
  if (size != expected) {
    return Status::Corruption("fb shard: example ", example, " attribute \"", spec.name, "\" holds ", size,
                              " bytes, but dtype ", DTypeName(spec.dtype), " and shape ",
                              ShapeToString(spec.shape), " need ", expected);
  }
  return Status::OK();
}

Status CheckValueBytes(const AttributeSpec& spec, std::size_t example, std::span<const std::byte> data) {
  if (spec.dtype == DType::kStr &&
      !shard_internal::IsValidUtf8({reinterpret_cast<const char*>(data.data()), data.size()})) {
    return Status::Corruption("fb shard: example ", example, " attribute \"", spec.name,
                              "\" is not valid UTF-8");
  }
  return Status::OK();
}

}  // namespace sedpack::fb_internal

namespace sedpack::shard_internal {

Result<std::unique_ptr<DecodedShard>> DecodeFbShard(Compression compression,
                                                    const std::vector<AttributeSpec>& schema,
                                                    codecs_internal::ByteBuffer file_bytes,
                                                    const ShardReadLimits& limits) {
  try {
    codecs_internal::ByteBuffer buffer;
    if (compression == Compression::kNone) {
      buffer = std::move(file_bytes);
    } else {
      // Decoded straight into pooled memory: no zero-fill, no fresh mapping.
      SEDPACK_RETURN_NOT_OK(codecs_internal::DecompressTo(compression, file_bytes.span(),
                                                          limits.max_decompressed_bytes, &buffer)
                                .WithPrefix("fb shard: "));
      file_bytes = {};  // Release the compressed copy before indexing.
    }
    auto shard = std::make_unique<FbDecodedShard>(std::move(buffer), schema);
    SEDPACK_RETURN_NOT_OK(shard->Index(schema));
    return std::unique_ptr<DecodedShard>(std::move(shard));
  } catch (const std::bad_alloc&) {
    return Status::ResourceExhausted("out of memory while decoding an fb shard");
  }
}

ShardWriteChecks ChecksOfDecodedShard(const DecodedShard& shard) {
  ShardWriteChecks out;
  const auto* fb = dynamic_cast<const FbDecodedShard*>(&shard);
  if (!fb) return out;
  const std::span<const std::byte> all = fb->bytes();
  out.decoded_size = all.size();
  out.values.reserve(shard.num_examples() * shard.num_attributes());
  out.example_checksums.reserve(shard.num_examples());
  for (std::size_t e = 0; e < shard.num_examples(); ++e) {
    codecs_internal::FastChecksummer sum;
    for (std::size_t j = 0; j < shard.num_attributes(); ++j) {
      const std::span<const std::byte> v = shard.Get(e, j).data;
      // An empty value may have no place in the buffer: any offset inside it.
      const std::uint64_t offset = v.empty() ? 0 : static_cast<std::uint64_t>(v.data() - all.data());
      out.values.push_back({offset, v.size()});
      sum.Update(v);
    }
    out.example_checksums.push_back(sum.Digest());
  }
  return out;
}

}  // namespace sedpack::shard_internal
