// SPDX-License-Identifier: Apache-2.0
#include "sedpack/types.h"

#include <array>
#include <utility>

namespace sedpack {
namespace {

struct DTypeRow {
  DType dtype;
  std::string_view name;
  std::size_t itemsize;
  std::string_view descr;
};

// The one table of dtype facts; every conversion goes through it.
constexpr std::array<DTypeRow, 15> kDTypes = {{
    {DType::kBool, "bool", 1, "|b1"},
    {DType::kInt8, "int8", 1, "|i1"},
    {DType::kInt16, "int16", 2, "<i2"},
    {DType::kInt32, "int32", 4, "<i4"},
    {DType::kInt64, "int64", 8, "<i8"},
    {DType::kUInt8, "uint8", 1, "|u1"},
    {DType::kUInt16, "uint16", 2, "<u2"},
    {DType::kUInt32, "uint32", 4, "<u4"},
    {DType::kUInt64, "uint64", 8, "<u8"},
    {DType::kFloat16, "float16", 2, "<f2"},
    {DType::kFloat32, "float32", 4, "<f4"},
    {DType::kFloat64, "float64", 8, "<f8"},
    {DType::kInt, "int", 8, "<i8"},
    {DType::kStr, "str", 0, ""},
    {DType::kBytes, "bytes", 0, ""},
}};

// Other spellings numpy accepts for the same types.
constexpr std::array<std::pair<std::string_view, DType>, 40> kDTypeAliases = {{
    {"?", DType::kBool},        {"b1", DType::kBool},       {"bool_", DType::kBool},
    {"i1", DType::kInt8},       {"b", DType::kInt8},        {"byte", DType::kInt8},
    {"i2", DType::kInt16},      {"h", DType::kInt16},       {"short", DType::kInt16},
    {"i4", DType::kInt32},      {"i", DType::kInt32},       {"intc", DType::kInt32},
    {"i8", DType::kInt64},      {"l", DType::kInt64},       {"q", DType::kInt64},
    {"int_", DType::kInt64},    {"longlong", DType::kInt64},
    {"u1", DType::kUInt8},      {"B", DType::kUInt8},       {"ubyte", DType::kUInt8},
    {"u2", DType::kUInt16},     {"H", DType::kUInt16},      {"ushort", DType::kUInt16},
    {"u4", DType::kUInt32},     {"I", DType::kUInt32},      {"uintc", DType::kUInt32},
    {"u8", DType::kUInt64},     {"L", DType::kUInt64},      {"Q", DType::kUInt64},
    {"ulonglong", DType::kUInt64},
    {"f2", DType::kFloat16},    {"e", DType::kFloat16},     {"half", DType::kFloat16},
    {"f4", DType::kFloat32},    {"f", DType::kFloat32},     {"single", DType::kFloat32},
    {"f8", DType::kFloat64},    {"d", DType::kFloat64},     {"double", DType::kFloat64},
    {"float", DType::kFloat64},
}};

const DTypeRow& Row(DType d) { return kDTypes[static_cast<std::size_t>(d)]; }

template <typename E, std::size_t N>
Result<E> ParseEnum(const std::array<std::pair<std::string_view, E>, N>& table,
                    std::string_view name, std::string_view what) {
  for (const auto& [n, e] : table) {
    if (n == name) return e;
  }
  std::string allowed;
  for (const auto& [n, e] : table) {
    if (!allowed.empty()) allowed += ", ";
    allowed += "\"" + std::string(n) + "\"";
  }
  return Status::InvalidArgument("unknown ", what, " \"", name, "\" (allowed: ", allowed, ")");
}

template <typename E, std::size_t N>
std::string_view EnumName(const std::array<std::pair<std::string_view, E>, N>& table, E e) {
  for (const auto& [n, v] : table) {
    if (v == e) return n;
  }
  return "?";
}

constexpr std::array<std::pair<std::string_view, Compression>, 8> kCompressions = {{
    {"", Compression::kNone},
    {"BZ2", Compression::kBz2},
    {"GZIP", Compression::kGzip},
    {"LZMA", Compression::kLzma},
    {"LZ4", Compression::kLz4},
    {"ZIP", Compression::kZip},
    {"ZLIB", Compression::kZlib},
    {"ZSTD", Compression::kZstd},
}};

constexpr std::array<std::pair<std::string_view, ShardFileType>, 3> kShardFileTypes = {{
    {"fb", ShardFileType::kFb},
    {"npz", ShardFileType::kNpz},
    {"tfrec", ShardFileType::kTfrec},
}};

constexpr std::array<std::pair<std::string_view, HashAlgorithm>, 13> kHashes = {{
    {"md5", HashAlgorithm::kMd5},
    {"sha1", HashAlgorithm::kSha1},
    {"sha224", HashAlgorithm::kSha224},
    {"sha256", HashAlgorithm::kSha256},
    {"sha384", HashAlgorithm::kSha384},
    {"sha512", HashAlgorithm::kSha512},
    {"sha3_224", HashAlgorithm::kSha3_224},
    {"sha3_256", HashAlgorithm::kSha3_256},
    {"sha3_384", HashAlgorithm::kSha3_384},
    {"sha3_512", HashAlgorithm::kSha3_512},
    {"xxh32", HashAlgorithm::kXxh32},
    {"xxh64", HashAlgorithm::kXxh64},
    {"xxh128", HashAlgorithm::kXxh128},
}};

constexpr std::array<HashAlgorithm, 13> kAllHashes = {
    HashAlgorithm::kMd5,      HashAlgorithm::kSha1,     HashAlgorithm::kSha224,
    HashAlgorithm::kSha256,   HashAlgorithm::kSha384,   HashAlgorithm::kSha512,
    HashAlgorithm::kSha3_224, HashAlgorithm::kSha3_256, HashAlgorithm::kSha3_384,
    HashAlgorithm::kSha3_512, HashAlgorithm::kXxh32,    HashAlgorithm::kXxh64,
    HashAlgorithm::kXxh128};

constexpr std::array<std::pair<std::string_view, Split>, 3> kSplits = {{
    {"train", Split::kTrain},
    {"test", Split::kTest},
    {"holdout", Split::kHoldout},
}};
constexpr std::array<Split, 3> kAllSplits = {Split::kTrain, Split::kTest, Split::kHoldout};

}  // namespace

Result<DType> ParseDType(std::string_view name) {
  for (const auto& row : kDTypes) {
    if (row.name == name || (!row.descr.empty() && row.descr == name)) return row.dtype;
  }
  std::string_view bare = name;
  // numpy accepts explicit byte-order prefixes; values are stored little-endian anyway.
  if (!bare.empty() && (bare[0] == '<' || bare[0] == '>' || bare[0] == '=' || bare[0] == '|')) {
    bare.remove_prefix(1);
  }
  for (const auto& [alias, dtype] : kDTypeAliases) {
    if (alias == bare) return dtype;
  }
  for (const auto& row : kDTypes) {
    if (row.name == bare && row.itemsize != 0 && row.dtype != DType::kInt) return row.dtype;
  }
  return Status::InvalidArgument("unsupported dtype \"", name,
                                 "\" (supported: bool, int8..int64, uint8..uint64, float16, "
                                 "float32, float64, int, str, bytes)");
}

std::string_view DTypeName(DType dtype) { return Row(dtype).name; }
std::size_t DTypeItemSize(DType dtype) { return Row(dtype).itemsize; }
std::string_view DTypeNpyDescr(DType dtype) { return Row(dtype).descr; }

std::string ShapeToString(const Shape& shape) {
  std::string out = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i) out += ", ";
    out += std::to_string(shape[i]);
  }
  if (shape.size() == 1) out += ",";
  out += ")";
  return out;
}

Result<std::uint64_t> ShapeElementCount(const Shape& shape, std::uint64_t limit) {
  std::uint64_t n = 1;
  for (std::int64_t d : shape) {
    if (d <= 0) {
      return Status::InvalidArgument("all dimensions of a shape must be strictly positive, got ",
                                     ShapeToString(shape));
    }
    if (n > limit / static_cast<std::uint64_t>(d)) {
      return Status::InvalidArgument("shape ", ShapeToString(shape), " is too large");
    }
    n *= static_cast<std::uint64_t>(d);
  }
  return n;
}

bool AttributeSpec::IsVariableSize() const {
  return (dtype == DType::kStr || dtype == DType::kBytes) && shape.empty();
}

Result<std::uint64_t> AttributeSpec::FixedByteSize() const {
  if (IsVariableSize()) {
    return Status::InvalidArgument("attribute \"", name, "\" has variable size");
  }
  SEDPACK_ASSIGN_OR_RETURN(std::uint64_t count, ShapeElementCount(shape));
  if (dtype == DType::kBytes || dtype == DType::kStr) return count;
  // The element count is bounded, the byte count must be too: (2^31, 2^31)
  // float64 would otherwise wrap around to a small size and match a tiny value.
  const std::uint64_t item = DTypeItemSize(dtype);
  if (count > kMaxValueBytes / item) {
    return Status::InvalidArgument("attribute \"", name, "\": shape ", ShapeToString(shape), " of ",
                                   DTypeName(dtype), " needs more than ", kMaxValueBytes,
                                   " bytes per value");
  }
  return count * item;
}

std::size_t AttributeSpec::FbAlignment() const {
  if (dtype == DType::kStr || dtype == DType::kBytes) return 16;
  return DTypeItemSize(dtype);
}

Result<Compression> ParseCompression(std::string_view name) {
  return ParseEnum(kCompressions, name, "compression");
}
std::string_view CompressionName(Compression c) { return EnumName(kCompressions, c); }

Result<ShardFileType> ParseShardFileType(std::string_view name) {
  return ParseEnum(kShardFileTypes, name, "shard_file_type");
}
std::string_view ShardFileTypeName(ShardFileType t) { return EnumName(kShardFileTypes, t); }

bool CompressionAllowed(ShardFileType t, Compression c) {
  switch (t) {
    case ShardFileType::kFb:
      return c != Compression::kZip;
    case ShardFileType::kNpz:
      return c == Compression::kNone || c == Compression::kZip;
    case ShardFileType::kTfrec:
      return c == Compression::kNone || c == Compression::kGzip || c == Compression::kZlib;
  }
  return false;
}

Result<HashAlgorithm> ParseHashAlgorithm(std::string_view name) {
  return ParseEnum(kHashes, name, "hash algorithm");
}
std::string_view HashAlgorithmName(HashAlgorithm h) { return EnumName(kHashes, h); }
std::span<const HashAlgorithm> AllHashAlgorithms() { return kAllHashes; }

Result<Split> ParseSplit(std::string_view name) { return ParseEnum(kSplits, name, "split"); }
std::string_view SplitName(Split s) { return EnumName(kSplits, s); }
std::span<const Split> AllSplits() { return kAllSplits; }

}  // namespace sedpack
