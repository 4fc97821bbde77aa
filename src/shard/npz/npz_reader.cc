// SPDX-License-Identifier: Apache-2.0
#include <cstring>
#include <deque>
#include <map>
#include <new>
#include <string>
#include <utility>
#include <vector>

#include "codecs/compress_internal.h"
#include "npy/npy_internal.h"
#include "npy/zip_internal.h"
#include "shard/shard_internal.h"

namespace sedpack::shard_internal {
namespace {

using npz_internal::NpyDType;
using npz_internal::NpyHeader;
using npz_internal::ZipEntry;

// Raw DEFLATE cannot expand data by more than 1032:1 (a 258-byte match coded in
// two bits), so a member claiming more is lying; refusing it avoids allocating
// its claimed size from a tiny file.
constexpr std::uint64_t kMaxDeflateRatio = 1032;
constexpr std::uint64_t kDeflateRatioSlack = 1024;

// One attribute's values inside the decoded shard.
struct Column {
  DType dtype = DType::kUInt8;
  Shape shape;
  // Fixed-size numeric values: value i is [base + i*stride, base + (i+1)*stride).
  const std::byte* base = nullptr;
  std::size_t stride = 0;
  // str / bytes: value i is [base + offsets[i], base + offsets[i+1]).
  std::vector<std::uint64_t> offsets;
};

class NpzDecodedShard final : public DecodedShard {
 public:
  NpzDecodedShard(std::vector<std::byte> file, const ShardReadLimits& limits)
      : file_(std::move(file)), limits_(limits) {}

  Status Index(const std::vector<AttributeSpec>& schema) {
    SEDPACK_ASSIGN_OR_RETURN(std::vector<ZipEntry> entries, npz_internal::ReadZipDirectory(file_));
    for (ZipEntry& entry : entries) {
      std::string name = entry.name;
      if (!by_name_.emplace(std::move(name), std::move(entry)).second) {
        return Status::Corruption("npz shard: duplicate zip member \"", name, "\"");
      }
    }
    std::size_t longest = 0;
    for (const AttributeSpec& spec : schema) {
      longest = std::max(longest, Utf8CodePointCount(spec.name));
    }
    columns_.resize(schema.size());
    // The example count comes from the first attribute, as in the reference.
    for (std::size_t j = 0; j < schema.size(); ++j) {
      const AttributeSpec& spec = schema[j];
      Column& column = columns_[j];
      if (spec.dtype == DType::kBytes) {
        SEDPACK_RETURN_NOT_OK(
            IndexBytes(spec, "len" + std::string(longest, '_') + spec.name, j == 0, &column));
      } else if (spec.dtype == DType::kStr) {
        SEDPACK_RETURN_NOT_OK(IndexStr(spec, j == 0, &column));
      } else {
        SEDPACK_RETURN_NOT_OK(IndexNumeric(spec, j == 0, &column));
      }
    }
    by_name_.clear();
    return Status::OK();
  }

  std::size_t num_examples() const override { return num_examples_; }
  std::size_t num_attributes() const override { return columns_.size(); }
  ValueView Get(std::size_t example, std::size_t attribute) const override {
    const Column& c = columns_[attribute];
    if (c.offsets.empty()) {
      return ValueView{c.dtype, c.shape, {c.base + example * c.stride, c.stride}};
    }
    return ValueView{c.dtype,
                     c.shape,
                     {c.base + c.offsets[example], c.offsets[example + 1] - c.offsets[example]}};
  }

 private:
  struct Array {
    NpyHeader header;
    NpyDType dtype;
    std::span<const std::byte> data;
  };

  // Find, decompress and parse the .npy member for `key`.
  Result<Array> LoadArray(const std::string& key) {
    const std::string file_name = key + ".npy";
    const auto it = by_name_.find(file_name);
    if (it == by_name_.end()) {
      return Status::Corruption("npz shard: member \"", file_name, "\" is missing");
    }
    const ZipEntry& entry = it->second;
    SEDPACK_ASSIGN_OR_RETURN(std::span<const std::byte> member, LoadMember(entry));
    SEDPACK_ASSIGN_OR_RETURN(NpyHeader header,
                             Prefixed(npz_internal::ParseNpyHeader(member), file_name));
    SEDPACK_ASSIGN_OR_RETURN(NpyDType dtype,
                             Prefixed(npz_internal::ParseNpyDescr(header.descr), file_name));
    // Element count and byte size with overflow checks: the shape is untrusted.
    std::uint64_t bytes = dtype.itemsize;
    for (std::uint64_t d : header.shape) {
      if (d != 0 && bytes > (std::uint64_t{1} << 62) / d) {
        return Status::Corruption("npz member \"", file_name, "\": shape is too large");
      }
      bytes *= d;
    }
    const std::uint64_t available = member.size() - header.data_offset;
    if (bytes != available) {
      return Status::Corruption("npz member \"", file_name, "\": dtype ", header.descr,
                                " and shape need ", bytes, " bytes of data, the member holds ",
                                available);
    }
    return Array{std::move(header), dtype, member.subspan(member.size() - available)};
  }

  template <typename T>
  static Result<T> Prefixed(Result<T> r, const std::string& file_name) {
    if (r.ok()) return r;
    return r.status().WithPrefix("npz member \"" + file_name + "\": ");
  }

  // Return the uncompressed bytes of `entry`: a view into file_ when stored,
  // else a buffer owned by this shard.
  Result<std::span<const std::byte>> LoadMember(const ZipEntry& entry) {
    if (entry.flags & npz_internal::kFlagEncrypted) {
      return Status::Corruption("npz member \"", entry.name, "\" is encrypted");
    }
    if (entry.method != npz_internal::kMethodStored &&
        entry.method != npz_internal::kMethodDeflated) {
      return Status::Corruption("npz member \"", entry.name, "\" uses zip method ", entry.method,
                                " (only stored and deflate are supported)");
    }
    if (entry.uncompressed_size > limits_.max_decompressed_bytes) {
      return Status::ResourceExhausted(
          "npz member \"", entry.name, "\" declares ", entry.uncompressed_size,
          " uncompressed bytes, more than the limit of ", limits_.max_decompressed_bytes);
    }
    SEDPACK_ASSIGN_OR_RETURN(std::span<const std::byte> raw,
                             npz_internal::ZipEntryData(file_, entry));
    std::span<const std::byte> data;
    if (entry.method == npz_internal::kMethodStored) {
      if (entry.compressed_size != entry.uncompressed_size) {
        return Status::Corruption("npz member \"", entry.name,
                                  "\" is stored but its sizes differ (", entry.compressed_size,
                                  " vs ", entry.uncompressed_size, ")");
      }
      data = raw;
    } else {
      if (entry.uncompressed_size / kMaxDeflateRatio > entry.compressed_size + kDeflateRatioSlack) {
        return Status::Corruption("npz member \"", entry.name, "\" claims ",
                                  entry.uncompressed_size, " bytes from ", entry.compressed_size,
                                  " compressed bytes, more than DEFLATE can produce");
      }
      owned_.emplace_back();
      SEDPACK_RETURN_NOT_OK(InflateRaw(raw, entry.uncompressed_size, &owned_.back())
                                .WithPrefix("npz member \"" + entry.name + "\": "));
      if (owned_.back().size() != entry.uncompressed_size) {
        return Status::Corruption("npz member \"", entry.name, "\" inflates to ",
                                  owned_.back().size(), " bytes, expected ",
                                  entry.uncompressed_size);
      }
      data = owned_.back();
    }
    if (Crc32(data) != entry.crc32) {
      return Status::Corruption("npz member \"", entry.name, "\" fails its CRC-32 check");
    }
    return data;
  }

  // Check the leading axis against the example count (or set it for the first attribute).
  Status CheckCount(const std::string& what, std::uint64_t count, bool first) {
    if (first) {
      if (count > (std::uint64_t{1} << 40)) {
        return Status::Corruption("npz shard: ", what, " implies ", count, " examples");
      }
      num_examples_ = static_cast<std::size_t>(count);
      return Status::OK();
    }
    if (count != num_examples_) {
      return Status::Corruption("npz shard: ", what, " has ", count, " examples, expected ",
                                num_examples_);
    }
    return Status::OK();
  }

  Status IndexNumeric(const AttributeSpec& spec, bool first, Column* column) {
    SEDPACK_ASSIGN_OR_RETURN(Array array, LoadArray(spec.name));
    const std::string what = "member \"" + spec.name + ".npy\"";
    if (array.dtype.dtype == DType::kStr) {
      return Status::Corruption("npz shard: ", what, " holds strings (", array.header.descr,
                                ") but attribute \"", spec.name, "\" is ", DTypeName(spec.dtype));
    }
    const auto& dims = array.header.shape;
    if (dims.empty()) return Status::Corruption("npz shard: ", what, " is 0-dimensional");
    SEDPACK_RETURN_NOT_OK(CheckCount(what, dims[0], first));
    const Shape element(dims.begin() + 1, dims.end());
    if (element != spec.shape) {
      return Status::Corruption("npz shard: ", what, " holds values of shape ",
                                ShapeToString(element), ", attribute \"", spec.name,
                                "\" has shape ", ShapeToString(spec.shape));
    }
    // The reference stores whatever dtype the writer passed and does not cast;
    // `int` stored as int64 keeps the declared name.
    column->dtype = (spec.dtype == DType::kInt && array.dtype.dtype == DType::kInt64)
                        ? DType::kInt
                        : array.dtype.dtype;
    column->shape = spec.shape;
    column->base = array.data.data();
    column->stride = num_examples_ == 0 ? 0 : array.data.size() / num_examples_;
    return Status::OK();
  }

  Status IndexStr(const AttributeSpec& spec, bool first, Column* column) {
    SEDPACK_ASSIGN_OR_RETURN(Array array, LoadArray(spec.name));
    const std::string what = "member \"" + spec.name + ".npy\"";
    if (array.dtype.dtype != DType::kStr) {
      return Status::Corruption("npz shard: ", what, " has dtype ", array.header.descr,
                                ", expected a '<U' string array for attribute \"", spec.name, "\"");
    }
    if (array.header.shape.size() != 1) {
      return Status::Corruption("npz shard: ", what, " must be 1-dimensional, has shape of rank ",
                                array.header.shape.size());
    }
    SEDPACK_RETURN_NOT_OK(CheckCount(what, array.header.shape[0], first));
    // Convert UTF-32 to UTF-8 once; numpy drops trailing NULs of each element.
    const std::size_t width = array.dtype.itemsize / 4;
    if (width == 0) {
      // numpy never writes '<U0'; its zero-byte elements would let a tiny
      // member claim any number of examples.
      return Status::Corruption("npz shard: ", what, " has the empty string dtype '<U0'");
    }
    strings_.emplace_back();
    std::string& utf8 = strings_.back();
    utf8.reserve(array.data.size() / 4);
    column->offsets.reserve(num_examples_ + 1);
    column->offsets.push_back(0);
    for (std::size_t i = 0; i < num_examples_; ++i) {
      const std::byte* element = array.data.data() + i * width * 4;
      std::size_t len = width;
      while (len > 0 && LoadLe32(element + (len - 1) * 4) == 0) --len;
      for (std::size_t c = 0; c < len; ++c) {
        const std::uint32_t cp = LoadLe32(element + c * 4);
        if (cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) {
          return Status::Corruption("npz shard: ", what, " element ", i,
                                    " holds an invalid code point ", cp);
        }
        AppendUtf8(cp, &utf8);
      }
      column->offsets.push_back(utf8.size());
    }
    column->dtype = DType::kStr;
    column->shape = spec.shape;
    column->base = reinterpret_cast<const std::byte*>(utf8.data());
    return Status::OK();
  }

  Status IndexBytes(const AttributeSpec& spec, const std::string& offsets_key, bool first,
                    Column* column) {
    SEDPACK_ASSIGN_OR_RETURN(Array offsets, LoadArray(offsets_key));
    const std::string what = "member \"" + offsets_key + ".npy\"";
    if (offsets.header.descr != "<i8" || offsets.header.shape.size() != 1 ||
        offsets.header.shape[0] == 0) {
      return Status::Corruption("npz shard: ", what, " must be a non-empty 1-d '<i8' array");
    }
    SEDPACK_RETURN_NOT_OK(CheckCount(what, offsets.header.shape[0] - 1, first));
    SEDPACK_ASSIGN_OR_RETURN(Array data, LoadArray(spec.name));
    const std::string data_what = "member \"" + spec.name + ".npy\"";
    if (data.header.descr != "|u1" || data.header.shape.size() != 2 || data.header.shape[0] != 1) {
      return Status::Corruption("npz shard: ", data_what,
                                " must be a '|u1' array of shape (1, total)");
    }
    const std::uint64_t total = data.header.shape[1];
    std::uint64_t fixed = 0;
    if (!spec.IsVariableSize()) {
      SEDPACK_ASSIGN_OR_RETURN(fixed, spec.FixedByteSize());
    }
    column->offsets.reserve(num_examples_ + 1);
    std::uint64_t previous = 0;
    for (std::size_t i = 0; i <= num_examples_; ++i) {
      const std::uint64_t value = LoadLe64(offsets.data.data() + i * 8);
      // Offsets are int64: a negative one shows up as a huge unsigned value.
      if (value > total || (i > 0 && value < previous)) {
        return Status::Corruption("npz shard: ", what, " offset ", i, " (",
                                  static_cast<std::int64_t>(value),
                                  ") is not monotonic or passes the data (", total, " bytes)");
      }
      if (i > 0 && !spec.IsVariableSize() && value - previous != fixed) {
        return Status::Corruption("npz shard: example ", i - 1, " attribute \"", spec.name,
                                  "\" holds ", value - previous, " bytes, shape ",
                                  ShapeToString(spec.shape), " needs ", fixed);
      }
      column->offsets.push_back(value);
      previous = value;
    }
    column->dtype = DType::kBytes;
    column->shape = spec.shape;
    column->base = data.data.data();
    return Status::OK();
  }

  std::vector<std::byte> file_;
  ShardReadLimits limits_;
  std::map<std::string, ZipEntry> by_name_;  // Only while indexing.
  // Deques: growing them never moves an element, so views stay valid.
  std::deque<std::vector<std::byte>> owned_;  // Inflated members.
  std::deque<std::string> strings_;           // UTF-8 of str attributes.
  std::vector<Column> columns_;
  std::size_t num_examples_ = 0;
};

}  // namespace

Result<std::unique_ptr<DecodedShard>> DecodeNpzShard(const std::vector<AttributeSpec>& schema,
                                                     std::vector<std::byte> file_bytes,
                                                     const ShardReadLimits& limits) {
  try {
    auto shard = std::make_unique<NpzDecodedShard>(std::move(file_bytes), limits);
    SEDPACK_RETURN_NOT_OK(shard->Index(schema));
    return std::unique_ptr<DecodedShard>(std::move(shard));
  } catch (const std::bad_alloc&) {
    return Status::ResourceExhausted("out of memory while decoding an npz shard");
  }
}

}  // namespace sedpack::shard_internal
