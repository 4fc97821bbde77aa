// SPDX-License-Identifier: Apache-2.0
#include <algorithm>
#include <cstring>
#include <exception>
#include <new>
#include <utility>
#include <vector>

#include "codecs/byte_buffer.h"
#include "shard/fb/fb_checks_internal.h"
#include "shard/fb/fb_internal.h"
#include "shard/shard_internal.h"

namespace sedpack::shard_internal {
namespace {

using fb_internal::fbs::Attribute;
using fb_internal::fbs::Example;

// Worst-case bytes one Attribute adds besides its data: alignment padding
// before the data (< max(alignment, 4)), the uint32 length, table padding (< 4),
// the table (soffset + one uoffset field) and a transient 6-byte vtable
// (deduplicated, but counted so the bound never depends on dedup).
constexpr std::uint64_t kAttributeOverhead = 4 + 3 + 8 + 8;
// Worst-case bytes one Example adds besides its attributes: the attributes
// vector (length + padding), the Example table, its vtable, and its slot in
// the Shard's examples vector written at Finish().
constexpr std::uint64_t kExampleOverhead = 4 + 3 + 3 + 8 + 8 + 4;
// Bytes Finish() adds at most besides the per-example slots: examples vector
// length + padding, Shard table + vtable, root offset and the final padding to
// the largest alignment (16).
constexpr std::uint64_t kFinishOverhead = 4 + 3 + 3 + 8 + 8 + 4 + 15 + 15;

// Initial builder capacity: room for this many examples like the first one,
// so a typical shard (the reference fills 256 examples) grows rarely or never.
// Untouched capacity costs address space only: the builder never zeroes it.
constexpr std::uint64_t kInitialExamples = 256;
constexpr std::uint64_t kMinInitialBytes = 1024;
constexpr std::uint64_t kMaxInitialBytes = 256ULL << 20;

// Builder memory from the codecs' block pool: a shard-sized buffer that is
// already faulted in (or backed by huge pages) instead of a fresh mmap that is
// page-faulted 4 KiB at a time. Holds the (at most two, while growing) blocks
// the builder uses.
class PooledFbAllocator final : public flatbuffers::Allocator {
 public:
  std::uint8_t* allocate(std::size_t size) override {
    blocks_.push_back(codecs_internal::PooledBlock::Allocate(size));
    return reinterpret_cast<std::uint8_t*>(blocks_.back().data());
  }
  void deallocate(std::uint8_t* p, std::size_t) override {
    for (auto it = blocks_.begin(); it != blocks_.end(); ++it) {
      if (reinterpret_cast<std::uint8_t*>(it->data()) == p) {
        blocks_.erase(it);
        return;
      }
    }
  }

 private:
  std::vector<codecs_internal::PooledBlock> blocks_;
};

class FbShardWriter final : public ShardWriter, public BufferFinishable {
 public:
  FbShardWriter(Compression compression, std::vector<AttributeSpec> schema, const CodecOptions& codec)
      : compression_(compression), codec_(codec), schema_(std::move(schema)) {
    attributes_.reserve(schema_.size());
  }

  Status Add(std::span<const ValueView> values) override {
    if (finished_) return Status::InvalidArgument("Add() called after Finish()");
    SEDPACK_RETURN_NOT_OK(ValidateExample(schema_, values));
    const std::uint64_t added = EstimateAddedBytes(values);
    if (buffered_bytes() + added > kFlatBufferMaxBytes) {
      return Status::ResourceExhausted("adding this example would pass the FlatBuffers limit of ",
                                       kFlatBufferMaxBytes, " bytes (shard holds ",
                                       examples_.size(), " examples, ", buffered_bytes(),
                                       " bytes); close the shard before adding it");
    }
    // The verifier (ours and the Rust reader's) refuses buffers with more tables.
    const std::uint64_t tables = 1 + (examples_.size() + 1) * (schema_.size() + 1);
    if (tables > fb_internal::kMaxTables) {
      return Status::ResourceExhausted("adding this example would give the shard ", tables,
                                       " FlatBuffers tables, more than readers accept (",
                                       fb_internal::kMaxTables,
                                       "); close the shard before adding it");
    }
    try {
      if (!builder_) {
        const std::uint64_t initial = std::clamp(added * kInitialExamples + kFinishOverhead,
                                                 kMinInitialBytes, kMaxInitialBytes);
        builder_ = std::make_unique<flatbuffers::FlatBufferBuilder>(initial, &allocator_);
      }
      flatbuffers::FlatBufferBuilder& b = *builder_;
      attributes_.clear();
      for (std::size_t j = 0; j < schema_.size(); ++j) {
        const std::span<const std::byte> data = values[j].data;
        // Python's StartVector(1, n, alignment) aligns the data start to
        // `alignment`, also for empty vectors. PreAlign (and so
        // ForceVectorAlignment) skips n == 0, where Align gives the same bytes.
        if (data.empty()) {
          b.Align(schema_[j].FbAlignment());
        } else {
          b.PreAlign(data.size(), schema_[j].FbAlignment());
        }
        b.StartVector(data.size(), 1);
        if (!data.empty()) {
          b.PushBytes(reinterpret_cast<const std::uint8_t*>(data.data()), data.size());
        }
        checks_.AddValue(b.GetSize(), data.size());
        const flatbuffers::Offset<flatbuffers::Vector<std::uint8_t>> vec(b.EndVector(data.size()));
        attributes_.push_back(fb_internal::fbs::CreateAttribute(b, vec));
      }
      const auto attrs = b.CreateVector(attributes_);
      examples_.push_back(fb_internal::fbs::CreateExample(b, attrs));
      checks_.EndExample(values);
    } catch (const std::bad_alloc&) {
      // The builder may be half-way through an example; it cannot be used any more.
      finished_ = true;
      return Status::ResourceExhausted("out of memory while building an fb shard");
    }
    return Status::OK();
  }

  std::size_t num_examples() const override { return examples_.size(); }

  std::uint64_t buffered_bytes() const override {
    // The examples' slots in the Shard's examples vector are only written by
    // Finish(), so they are counted here explicitly.
    return (builder_ ? builder_->GetSize() : 0) + 4ULL * examples_.size() + kFinishOverhead;
  }

  std::uint64_t EstimateAddedBytes(std::span<const ValueView> values) const override {
    std::uint64_t total = kExampleOverhead + 4ULL * values.size();
    for (std::size_t j = 0; j < values.size(); ++j) {
      const std::uint64_t alignment = j < schema_.size() ? schema_[j].FbAlignment() : 16;
      total += values[j].data.size() + kAttributeOverhead + std::max<std::uint64_t>(alignment, 4);
    }
    return total;
  }

  Result<std::vector<std::byte>> Finish() override {
    std::vector<std::byte> raw;
    SEDPACK_RETURN_NOT_OK(FinishWith([&raw, this](std::span<const std::byte> encoded, Compression c) {
      if (c == Compression::kNone) {
        raw.assign(encoded.begin(), encoded.end());
        return Status::OK();
      }
      codecs_internal::ByteBuffer compressed;
      SEDPACK_RETURN_NOT_OK(codecs_internal::CompressToBuffer(c, codec_, encoded, &compressed, &decode_points_));
      raw = std::move(compressed).ToVector();
      return Status::OK();
    }));
    return raw;
  }

  // The compressed file bytes stay in the pooled memory the compressor wrote
  // them to: never copied into a vector.
  Status FinishToBuffer(codecs_internal::ByteBuffer* out) override {
    return FinishWith([out, this](std::span<const std::byte> encoded, Compression c) {
      if (c == Compression::kNone) {
        out->clear();
        out->resize(encoded.size());
        if (!encoded.empty()) std::memcpy(out->data(), encoded.data(), encoded.size());
        return Status::OK();
      }
      return codecs_internal::CompressToBuffer(c, codec_, encoded, out, &decode_points_);
    });
  }

  // Uncompressed: straight from the builder's memory; GZIP/ZLIB: compressed
  // in pieces (codecs_internal::CompressTo).
  Status FinishToSink(const codecs_internal::ByteSink& sink, int threads) override {
    CodecOptions codec = codec_;
    codec.threads = std::max(codec.threads, threads);
    return FinishWith([&sink, &codec, this](std::span<const std::byte> encoded, Compression c) {
      return codecs_internal::CompressTo(c, codec, encoded, sink, &decode_points_);
    });
  }

  bool StreamsOnFinish() const override { return codecs_internal::CompressStreams(compression_); }

  ShardWriteChecks TakeWriteChecks() override {
    ShardWriteChecks checks = checks_.Take();
    checks.decoded_size = decoded_size_;
    checks.decode_points = std::move(decode_points_);
    return checks;
  }

 private:
  // Finish the FlatBuffer and hand its bytes (valid during the call) to `emit`.
  template <class Emit>
  Status FinishWith(Emit&& emit) {
    if (finished_) return Status::InvalidArgument("Finish() called twice or after a failure");
    finished_ = true;
    try {
      if (!builder_) {
        builder_ = std::make_unique<flatbuffers::FlatBufferBuilder>(kMinInitialBytes, &allocator_);
      }
      flatbuffers::FlatBufferBuilder& b = *builder_;
      const auto examples = b.CreateVector(examples_);
      b.Finish(fb_internal::fbs::CreateShard(b, examples));
      checks_.Finish(b.GetSize());
      const std::span<const std::byte> buffer(
          reinterpret_cast<const std::byte*>(b.GetBufferPointer()), b.GetSize());
      decoded_size_ = buffer.size();
      SEDPACK_RETURN_NOT_OK(emit(buffer, compression_));
    } catch (const std::bad_alloc&) {
      return Status::ResourceExhausted("out of memory while finishing an fb shard");
    }
    builder_.reset();
    examples_ = {};
    return Status::OK();
  }

  Compression compression_;
  CodecOptions codec_;
  std::vector<AttributeSpec> schema_;
  PooledFbAllocator allocator_;  // Outlives builder_ (declared before it).
  // Made lazily, sized by the first example.
  std::unique_ptr<flatbuffers::FlatBufferBuilder> builder_;
  std::vector<flatbuffers::Offset<Example>> examples_;
  std::vector<flatbuffers::Offset<Attribute>> attributes_;  // Scratch, reused per example.
  bool finished_ = false;
  fb_internal::FbChecksRecorder checks_;
  // What the last Finish wrote, for TakeWriteChecks.
  std::uint64_t decoded_size_ = 0;
  std::vector<codecs_internal::DecodePoint> decode_points_;
};

}  // namespace

std::unique_ptr<ShardWriter> MakeFbShardWriter(Compression compression,
                                               std::vector<AttributeSpec> schema,
                                               const CodecOptions& codec) {
  return std::make_unique<FbShardWriter>(compression, std::move(schema), codec);
}

}  // namespace sedpack::shard_internal
