// SPDX-License-Identifier: Apache-2.0
#include <cstring>
#include <deque>
#include <map>
#include <new>
#include <string>
#include <utility>
#include <vector>

#include "codecs/compress_internal.h"
#include "shard/npz/npy_internal.h"
#include "shard/npz/zip_internal.h"
#include "shard/shard_internal.h"

namespace sedpack::npz_internal {

using shard_internal::LoadLe16;
using shard_internal::LoadLe32;
using shard_internal::LoadLe64;

namespace {

// Largest archive comment, hence how far from the end the end record can be.
constexpr std::size_t kMaxCommentSize = 0xffff;

// The ZIP64 extra of a central entry holds, in this order, only the fields
// whose classic value is saturated.
Status ApplyZip64Extra(std::span<const std::byte> extra, bool need_uncompressed,
                       bool need_compressed, bool need_offset, ZipEntry* entry) {
  std::size_t pos = 0;
  while (extra.size() - pos >= 4) {
    const std::uint16_t id = LoadLe16(extra.data() + pos);
    const std::uint16_t size = LoadLe16(extra.data() + pos + 2);
    pos += 4;
    if (size > extra.size() - pos) {
      return Status::Corruption("zip entry \"", entry->name, "\": extra field passes its end");
    }
    if (id == kZip64ExtraId) {
      std::size_t field = pos;
      const std::size_t end = pos + size;
      auto take = [&](std::uint64_t* value) -> bool {
        if (end - field < 8) return false;
        *value = LoadLe64(extra.data() + field);
        field += 8;
        return true;
      };
      if ((need_uncompressed && !take(&entry->uncompressed_size)) ||
          (need_compressed && !take(&entry->compressed_size)) ||
          (need_offset && !take(&entry->local_header_offset))) {
        return Status::Corruption("zip entry \"", entry->name, "\": ZIP64 extra field too short");
      }
      return Status::OK();
    }
    pos += size;
  }
  if (need_uncompressed || need_compressed || need_offset) {
    return Status::Corruption("zip entry \"", entry->name,
                              "\": saturated size or offset without a ZIP64 extra field");
  }
  return Status::OK();
}

}  // namespace

Result<std::vector<ZipEntry>> ReadZipDirectory(std::span<const std::byte> file) {
  const std::size_t size = file.size();
  if (size < kEndOfCentralDirSize) {
    return Status::Corruption("npz shard is too small to be a zip file (", size, " bytes)");
  }
  // Find the last end record whose comment fits in the file.
  std::size_t eocd = size;
  const std::size_t lowest = size - kEndOfCentralDirSize > kMaxCommentSize
                                 ? size - kEndOfCentralDirSize - kMaxCommentSize
                                 : 0;
  for (std::size_t p = size - kEndOfCentralDirSize + 1; p-- > lowest;) {
    if (LoadLe32(file.data() + p) == kEndOfCentralDirSignature &&
        LoadLe16(file.data() + p + 20) <= size - p - kEndOfCentralDirSize) {
      eocd = p;
      break;
    }
  }
  if (eocd == size) return Status::Corruption("npz shard: zip end record not found");
  const std::byte* e = file.data() + eocd;
  if (LoadLe16(e + 4) != 0 || LoadLe16(e + 6) != 0 || LoadLe16(e + 8) != LoadLe16(e + 10)) {
    return Status::Corruption("npz shard: multi-disk zip archives are not supported");
  }
  std::uint64_t count = LoadLe16(e + 10);
  std::uint64_t cd_size = LoadLe32(e + 12);
  std::uint64_t cd_offset = LoadLe32(e + 16);
  std::uint64_t cd_limit = eocd;  // The central directory must end before this.

  if (eocd >= kZip64LocatorSize &&
      LoadLe32(file.data() + eocd - kZip64LocatorSize) == kZip64LocatorSignature) {
    const std::byte* loc = file.data() + eocd - kZip64LocatorSize;
    const std::uint64_t z64 = LoadLe64(loc + 8);
    if (LoadLe32(loc + 4) != 0 || LoadLe32(loc + 16) > 1) {
      return Status::Corruption("npz shard: multi-disk zip archives are not supported");
    }
    if (z64 > eocd - kZip64LocatorSize ||
        eocd - kZip64LocatorSize - z64 < kZip64EndOfCentralDirSize) {
      return Status::Corruption("npz shard: ZIP64 end record offset ", z64, " is out of range");
    }
    const std::byte* r = file.data() + z64;
    if (LoadLe32(r) != kZip64EndOfCentralDirSignature) {
      return Status::Corruption("npz shard: ZIP64 end record signature missing");
    }
    if (LoadLe32(r + 16) != 0 || LoadLe32(r + 20) != 0 || LoadLe64(r + 24) != LoadLe64(r + 32)) {
      return Status::Corruption("npz shard: multi-disk zip archives are not supported");
    }
    count = LoadLe64(r + 32);
    cd_size = LoadLe64(r + 40);
    cd_offset = LoadLe64(r + 48);
    cd_limit = z64;
  }
  if (cd_offset > cd_limit || cd_size > cd_limit - cd_offset) {
    return Status::Corruption("npz shard: central directory (offset ", cd_offset, ", size ",
                              cd_size, ") lies outside the file");
  }
  if (count > cd_size / kCentralHeaderSize) {
    return Status::Corruption("npz shard: ", count,
                              " entries cannot fit in a central directory of ", cd_size, " bytes");
  }

  std::vector<ZipEntry> entries;
  entries.reserve(count);
  std::size_t pos = cd_offset;
  const std::size_t cd_end = cd_offset + cd_size;
  for (std::uint64_t i = 0; i < count; ++i) {
    if (cd_end - pos < kCentralHeaderSize) {
      return Status::Corruption("npz shard: central directory entry ", i, " is truncated");
    }
    const std::byte* c = file.data() + pos;
    if (LoadLe32(c) != kCentralHeaderSignature) {
      return Status::Corruption("npz shard: central directory entry ", i, " has a bad signature");
    }
    const std::size_t name_len = LoadLe16(c + 28);
    const std::size_t extra_len = LoadLe16(c + 30);
    const std::size_t comment_len = LoadLe16(c + 32);
    if (cd_end - pos - kCentralHeaderSize < name_len + extra_len + comment_len) {
      return Status::Corruption("npz shard: central directory entry ", i, " is truncated");
    }
    ZipEntry entry;
    entry.flags = LoadLe16(c + 8);
    entry.method = LoadLe16(c + 10);
    entry.crc32 = LoadLe32(c + 16);
    entry.compressed_size = LoadLe32(c + 20);
    entry.uncompressed_size = LoadLe32(c + 24);
    entry.local_header_offset = LoadLe32(c + 42);
    entry.name.assign(reinterpret_cast<const char*>(c + kCentralHeaderSize), name_len);
    const bool need_u = entry.uncompressed_size == 0xffffffffu;
    const bool need_c = entry.compressed_size == 0xffffffffu;
    const bool need_o = entry.local_header_offset == 0xffffffffu;
    if (need_u || need_c || need_o) {
      SEDPACK_RETURN_NOT_OK(
          ApplyZip64Extra(file.subspan(pos + kCentralHeaderSize + name_len, extra_len), need_u,
                          need_c, need_o, &entry));
    }
    entries.push_back(std::move(entry));
    pos += kCentralHeaderSize + name_len + extra_len + comment_len;
  }
  return entries;
}

Result<std::span<const std::byte>> ZipEntryData(std::span<const std::byte> file,
                                                const ZipEntry& entry) {
  const std::uint64_t size = file.size();
  const std::uint64_t off = entry.local_header_offset;
  if (off > size || size - off < kLocalHeaderSize) {
    return Status::Corruption("zip member \"", entry.name, "\": local header offset ", off,
                              " is outside the file");
  }
  const std::byte* h = file.data() + off;
  if (LoadLe32(h) != kLocalHeaderSignature) {
    return Status::Corruption("zip member \"", entry.name, "\": bad local header signature");
  }
  const std::uint64_t name_len = LoadLe16(h + 26);
  const std::uint64_t extra_len = LoadLe16(h + 28);
  if (size - off - kLocalHeaderSize < name_len + extra_len) {
    return Status::Corruption("zip member \"", entry.name, "\": local header is truncated");
  }
  if (std::string_view(reinterpret_cast<const char*>(h + kLocalHeaderSize), name_len) !=
      entry.name) {
    return Status::Corruption("zip member \"", entry.name,
                              "\": the local header names a different file");
  }
  const std::uint64_t data = off + kLocalHeaderSize + name_len + extra_len;
  if (entry.compressed_size > size - data) {
    return Status::Corruption("zip member \"", entry.name, "\": ", entry.compressed_size,
                              " bytes of data at offset ", data, " pass the end of the file (",
                              size, " bytes)");
  }
  return file.subspan(data, entry.compressed_size);
}

}  // namespace sedpack::npz_internal

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
