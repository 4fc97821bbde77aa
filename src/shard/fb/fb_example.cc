// SPDX-License-Identifier: Apache-2.0
// One example of an uncompressed fb shard by positioned reads (example_read.h).
//
// The FlatBuffers layout walked here (little-endian, no size prefix, no file
// identifier; see shard.fbs):
//   u32 at 0: offset of the root table (Shard).
//   A table at T starts with an i32: its vtable is at T - that value. A vtable
//   is u16 vtable size, u16 table size, then one u16 per field: the field's
//   offset from T, 0 (or beyond the vtable) when the field is absent.
//   An offset field at F holds a u32 o, pointing at F + o.
//   A vector at V is a u32 length, then its elements; a vector of tables holds
//   u32 offsets, element i at V + 4 + 4i pointing at V + 4 + 4i + its value.
// Shard.examples, Example.attributes and Attribute.attribute_bytes are each
// their table's first (only) field, at vtable offset 4.
#include <algorithm>
#include <array>
#include <cstring>
#include <new>
#include <string>
#include <utility>

#include "codecs/byte_buffer.h"
#include "shard/example_read.h"
#include "shard/fb/fb_internal.h"
#include "shard/shard_internal.h"

namespace sedpack::shard_internal {
namespace {

// Every table of sedpack's schema has one field, found at this vtable offset.
constexpr std::uint64_t kFirstField = 4;
// Where each attribute's bytes start in the example's buffer (the whole-shard
// reader's views are aligned to at most 16 bytes, FbAlignment).
constexpr std::size_t kValueAlignment = 16;

class OneExample final : public DecodedShard {
 public:
  OneExample(const std::vector<AttributeSpec>& schema, codecs_internal::ByteBuffer buffer,
             std::vector<std::span<const std::byte>> values)
      : buffer_(std::move(buffer)), values_(std::move(values)) {
    dtypes_.reserve(schema.size());
    shapes_.reserve(schema.size());
    for (const AttributeSpec& spec : schema) {
      dtypes_.push_back(spec.dtype);
      shapes_.push_back(spec.shape);
    }
  }
  std::size_t num_examples() const override { return 1; }
  std::size_t num_attributes() const override { return dtypes_.size(); }
  ValueView Get(std::size_t /*example*/, std::size_t attribute) const override {
    return ValueView{dtypes_[attribute], shapes_[attribute], values_[attribute]};
  }

 private:
  codecs_internal::ByteBuffer buffer_;  // The attribute bytes, each aligned.
  std::vector<DType> dtypes_;
  std::vector<Shape> shapes_;
  std::vector<std::span<const std::byte>> values_;
};

// The small reads of the walk (offsets, vtables, lengths), served from a few
// aligned blocks of the file: the structures of one example lie close to each
// other, and the vtables all tables share sit together, so a fetch reads a few
// blocks rather than issuing one read per field.
class Walker {
 public:
  Walker(std::uint64_t size, const ReadAt& read_at) : size_(size), read_at_(read_at) {}

  std::uint64_t bytes_read() const { return bytes_read_; }

  // A scalar of N bytes at `pos`, aligned to N as the verifier requires.
  template <std::size_t N>
  Result<std::uint64_t> Scalar(std::uint64_t pos, const char* what) {
    if (pos % N != 0) return Status::Corruption("fb shard: ", what, " at offset ", pos, " is misaligned");
    if (pos > size_ || size_ - pos < N) return Outside(what, pos, N);
    std::byte buf[N];
    SEDPACK_RETURN_NOT_OK(Small(pos, N, buf));
    std::uint64_t v = 0;
    for (std::size_t i = 0; i < N; ++i) v |= static_cast<std::uint64_t>(std::to_integer<unsigned>(buf[i])) << (8 * i);
    return v;
  }

  // Follow the uoffset at `pos` (the verifier's VerifyOffset): non-zero, below
  // 2^31, pointing inside the file.
  Result<std::uint64_t> Offset(std::uint64_t pos, const char* what) {
    SEDPACK_ASSIGN_OR_RETURN(std::uint64_t o, Scalar<4>(pos, what));
    if (o == 0 || o > 0x7fffffffu) return Status::Corruption("fb shard: ", what, " at offset ", pos, " is ", o);
    if (pos + o >= size_) return Outside(what, pos + o, 1);
    return pos + o;
  }

  // The table at `table`: its vtable checked; returns the position its first
  // field's value lies at, or 0 if the table has no such field.
  Result<std::uint64_t> FirstField(std::uint64_t table, const char* what) {
    SEDPACK_ASSIGN_OR_RETURN(std::uint64_t raw, Scalar<4>(table, what));
    const auto soffset = static_cast<std::int32_t>(static_cast<std::uint32_t>(raw));
    const std::int64_t vtable = static_cast<std::int64_t>(table) - soffset;
    if (vtable < 0 || static_cast<std::uint64_t>(vtable) >= size_) {
      return Outside("vtable", static_cast<std::uint64_t>(std::max<std::int64_t>(vtable, 0)), 2);
    }
    const auto vt = static_cast<std::uint64_t>(vtable);
    SEDPACK_ASSIGN_OR_RETURN(std::uint64_t vsize, Scalar<2>(vt, "vtable"));
    if (vsize % 2 != 0) return Status::Corruption("fb shard: vtable at offset ", vt, " has odd size ", vsize);
    if (vt + vsize > size_) return Outside("vtable", vt, vsize);
    if (vsize <= kFirstField) return std::uint64_t{0};  // field absent (beyond the vtable)
    SEDPACK_ASSIGN_OR_RETURN(std::uint64_t field, Scalar<2>(vt + kFirstField, "vtable entry"));
    if (field == 0) return std::uint64_t{0};
    return table + field;
  }

  // The vector the offset field at `field` points at: its length, checked so
  // that 4 + elem_size x length bytes lie in the file. Sets *data to its first element.
  Result<std::uint64_t> Vector(std::uint64_t field, std::uint64_t elem_size, const char* what,
                               std::uint64_t* data) {
    SEDPACK_ASSIGN_OR_RETURN(std::uint64_t vec, Offset(field, what));
    SEDPACK_ASSIGN_OR_RETURN(std::uint64_t length, Scalar<4>(vec, what));
    if (length >= FLATBUFFERS_MAX_BUFFER_SIZE / elem_size || vec + 4 + elem_size * length > size_) {
      return Status::Corruption("fb shard: ", what, " at offset ", vec, " claims ", length,
                                " elements, more than the file (", size_, " bytes) holds");
    }
    *data = vec + 4;
    return length;
  }

  // `out.size()` bytes at `pos` straight into `out` (attribute bytes).
  Status Bulk(std::uint64_t pos, std::span<std::byte> out) {
    bytes_read_ += out.size();
    return read_at_(pos, out);
  }

 private:
  static constexpr std::size_t kBlock = 4096;
  static constexpr std::size_t kSlots = 4;
  struct Slot {
    std::uint64_t start = 0;
    std::size_t size = 0;  // 0: empty
    std::array<std::byte, kBlock> bytes;
  };

  Status Outside(const char* what, std::uint64_t pos, std::uint64_t n) const {
    return Status::Corruption("fb shard: ", what, " (", n, " bytes at offset ", pos, ") lies outside the file (",
                              size_, " bytes)");
  }

  // REQUIRES: pos + n <= size_, n <= kBlock, [pos, pos + n) within one block
  // (true for aligned scalars).
  Status Small(std::uint64_t pos, std::size_t n, std::byte* out) {
    for (Slot& s : slots_) {
      if (s.size != 0 && pos >= s.start && pos + n <= s.start + s.size) {
        std::memcpy(out, s.bytes.data() + (pos - s.start), n);
        return Status::OK();
      }
    }
    Slot& s = slots_[next_++ % kSlots];
    s.start = pos - pos % kBlock;
    s.size = static_cast<std::size_t>(std::min<std::uint64_t>(kBlock, size_ - s.start));
    bytes_read_ += s.size;
    Status st = read_at_(s.start, std::span<std::byte>(s.bytes.data(), s.size));
    if (!st.ok()) {
      s.size = 0;
      return st;
    }
    std::memcpy(out, s.bytes.data() + (pos - s.start), n);
    return Status::OK();
  }

  std::uint64_t size_;
  const ReadAt& read_at_;
  std::uint64_t bytes_read_ = 0;
  std::array<Slot, kSlots> slots_;
  std::size_t next_ = 0;
};

}  // namespace

Result<FbExample> ReadFbExample(const std::vector<AttributeSpec>& schema, std::uint64_t file_size,
                                std::uint64_t example, std::uint64_t expected_examples, const ReadAt& read_at) {
  // The whole-shard reader's limit: a larger file is no FlatBuffer.
  if (file_size >= FLATBUFFERS_MAX_BUFFER_SIZE) {
    return Status::Corruption("fb shard is ", file_size, " bytes, more than FlatBuffers allows");
  }
  Walker w(file_size, read_at);
  SEDPACK_ASSIGN_OR_RETURN(std::uint64_t root, w.Offset(0, "root table offset"));
  SEDPACK_ASSIGN_OR_RETURN(std::uint64_t examples_field, w.FirstField(root, "Shard table"));
  std::uint64_t num_examples = 0, examples = 0;
  // The reference reads a missing examples vector as a shard without examples.
  if (examples_field != 0) {
    SEDPACK_ASSIGN_OR_RETURN(num_examples, w.Vector(examples_field, 4, "examples vector", &examples));
  }
  if (num_examples != expected_examples) {
    return Status::Corruption("fb shard holds ", num_examples, " examples, the metadata records ",
                              expected_examples);
  }
  if (example >= num_examples) {
    return Status::InvalidArgument("example ", example, " is out of range: the shard holds ", num_examples);
  }
  const std::size_t k = schema.size();
  // The verifier of the whole-shard reader counts every table against kMaxTables;
  // a shard it refuses for that is refused here too.
  if (num_examples > (fb_internal::kMaxTables - 1) / (1 + k)) {
    return Status::Corruption("fb shard (", file_size, " bytes) is not a valid sedpack FlatBuffer (",
                              num_examples, " examples of ", k, " attributes pass the verifier's limit of ",
                              fb_internal::kMaxTables, " tables)");
  }

  SEDPACK_ASSIGN_OR_RETURN(std::uint64_t ex, w.Offset(examples + 4 * example, "example offset"));
  SEDPACK_ASSIGN_OR_RETURN(std::uint64_t attributes_field, w.FirstField(ex, "Example table"));
  if (attributes_field == 0) return Status::Corruption("fb shard: example ", example, " has no attributes vector");
  std::uint64_t attributes = 0;
  SEDPACK_ASSIGN_OR_RETURN(std::uint64_t num_attributes,
                           w.Vector(attributes_field, 4, "attributes vector", &attributes));
  if (num_attributes != k) {
    return Status::Corruption("fb shard: example ", example, " has ", num_attributes,
                              " attributes, the schema has ", k);
  }

  // Where each value lies, all checked before anything is allocated.
  struct Place {
    std::uint64_t pos = 0;
    std::uint64_t size = 0;
  };
  std::vector<Place> places(k);
  std::uint64_t total = 0;
  for (std::size_t j = 0; j < k; ++j) {
    SEDPACK_ASSIGN_OR_RETURN(std::uint64_t attribute, w.Offset(attributes + 4 * j, "attribute offset"));
    SEDPACK_ASSIGN_OR_RETURN(std::uint64_t bytes_field, w.FirstField(attribute, "Attribute table"));
    // A missing vector reads as empty, as in the reference.
    if (bytes_field != 0) {
      SEDPACK_ASSIGN_OR_RETURN(places[j].size, w.Vector(bytes_field, 1, "attribute_bytes vector", &places[j].pos));
    }
    SEDPACK_RETURN_NOT_OK(fb_internal::CheckValueSize(schema[j], example, places[j].size));
    total += places[j].size + kValueAlignment;
  }
  // Values of a well-formed shard do not overlap, so they fit in the file;
  // values aliasing one large vector must not make us allocate k times it.
  if (total > file_size + k * kValueAlignment) {
    return Status::Corruption("fb shard: the attributes of example ", example, " claim ", total - k * kValueAlignment,
                              " bytes, more than the file (", file_size, " bytes) holds");
  }

  codecs_internal::ByteBuffer buffer;
  try {
    buffer.resize(static_cast<std::size_t>(total));
  } catch (const std::bad_alloc&) {
    return Status::ResourceExhausted("out of memory reading example ", example, " (", total, " bytes)");
  }
  std::vector<std::span<const std::byte>> values(k);
  // Offsets are aligned relative to the buffer; its start is at least 16-aligned
  // (operator new[] or a pooled mapping).
  auto base = reinterpret_cast<std::uintptr_t>(buffer.data());
  std::size_t at = static_cast<std::size_t>((kValueAlignment - base % kValueAlignment) % kValueAlignment);
  for (std::size_t j = 0; j < k; ++j) {
    const std::span<std::byte> out(buffer.data() + at, static_cast<std::size_t>(places[j].size));
    if (!out.empty()) SEDPACK_RETURN_NOT_OK(w.Bulk(places[j].pos, out));
    SEDPACK_RETURN_NOT_OK(fb_internal::CheckValueBytes(schema[j], example, out));
    values[j] = out;
    at += static_cast<std::size_t>(places[j].size);
    at += (kValueAlignment - at % kValueAlignment) % kValueAlignment;
  }
  FbExample result;
  result.bytes_read = w.bytes_read();
  result.values = fb_internal::MakeOneExample(schema, std::move(buffer), std::move(values));
  return result;
}

}  // namespace sedpack::shard_internal

namespace sedpack::fb_internal {

std::unique_ptr<DecodedShard> MakeOneExample(const std::vector<AttributeSpec>& schema,
                                             codecs_internal::ByteBuffer buffer,
                                             std::vector<std::span<const std::byte>> values) {
  return std::make_unique<shard_internal::OneExample>(schema, std::move(buffer), std::move(values));
}

}  // namespace sedpack::fb_internal
