// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "sedpack/status.h"

namespace sedpack {

/// Element types of attributes. The names are the reference's dtype strings.
/// kInt is the reference's Python `int`: stored as int64, shape must be ().
/// kStr is UTF-8 text and kBytes raw bytes; both are variable size when the
/// shape is () and kBytes is fixed size N with shape (N,).
enum class DType {
  kBool,
  kInt8,
  kInt16,
  kInt32,
  kInt64,
  kUInt8,
  kUInt16,
  kUInt32,
  kUInt64,
  kFloat16,
  kFloat32,
  kFloat64,
  kInt,
  kStr,
  kBytes,
};

/// Parse a dtype string as numpy/sedpack spell it ("float32", "<f4", "int",
/// "str", "bytes", "uint8", "|u1", "bool", "?", ...). InvalidArgument otherwise.
Result<DType> ParseDType(std::string_view name);
/// Canonical sedpack name ("float32", "int", "str", ...).
std::string_view DTypeName(DType dtype);
/// Size of one element in bytes; 0 for kStr and kBytes (not element-typed).
std::size_t DTypeItemSize(DType dtype);
/// The numpy .npy descr of a numeric dtype ("<f4", "|u1", "|b1"); empty for str/bytes.
std::string_view DTypeNpyDescr(DType dtype);

/// Attribute shape; () is a scalar (or variable size for str/bytes).
using Shape = std::vector<std::int64_t>;

/// Return "(3, 4)" / "()" / "(5,)" as numpy prints shapes.
std::string ShapeToString(const Shape& shape);

/// Bound on the elements of a shape and on the bytes of one fixed-size value.
inline constexpr std::uint64_t kMaxValueBytes = std::uint64_t{1} << 62;

/// Product of the dims; InvalidArgument on a non-positive dim or on overflow past `limit`.
Result<std::uint64_t> ShapeElementCount(const Shape& shape, std::uint64_t limit = kMaxValueBytes);

/// One attribute of the schema, typed (the metadata keeps the original strings).
struct AttributeSpec {
  std::string name;
  DType dtype = DType::kUInt8;
  Shape shape;

  /// True for str/bytes with shape (): any length is allowed.
  bool IsVariableSize() const;
  /// Exact byte size of one value for fixed-size attributes (itemsize * prod(shape);
  /// N for bytes (N,)). InvalidArgument for variable-size attributes and for
  /// sizes above kMaxValueBytes.
  Result<std::uint64_t> FixedByteSize() const;
  /// Alignment of the value's data inside an fb shard: 16 for str/bytes, else itemsize.
  std::size_t FbAlignment() const;
};

/// Shard compressions, spelled as in `dataset_structure.compression`.
enum class Compression { kNone, kGzip, kZlib, kBz2, kLzma, kLz4, kZstd, kZip };
Result<Compression> ParseCompression(std::string_view name);
/// "" for kNone, else "GZIP", "ZLIB", ...
std::string_view CompressionName(Compression c);

/// Shard container formats, spelled as file extensions.
enum class ShardFileType { kFb, kNpz, kTfrec };
Result<ShardFileType> ParseShardFileType(std::string_view name);
std::string_view ShardFileTypeName(ShardFileType t);
/// Whether `c` is allowed for shard type `t` (fb: "",GZIP,ZLIB,BZ2,LZMA,LZ4,ZSTD;
/// npz: "",ZIP; tfrec: "",GZIP,ZLIB).
bool CompressionAllowed(ShardFileType t, Compression c);

/// Hash algorithms, spelled as in `hash_checksum_algorithms`.
enum class HashAlgorithm {
  kMd5,
  kSha1,
  kSha224,
  kSha256,
  kSha384,
  kSha512,
  kSha3_224,
  kSha3_256,
  kSha3_384,
  kSha3_512,
  kXxh32,
  kXxh64,
  kXxh128,
};
Result<HashAlgorithm> ParseHashAlgorithm(std::string_view name);
std::string_view HashAlgorithmName(HashAlgorithm h);
/// Every algorithm, in declaration order.
std::span<const HashAlgorithm> AllHashAlgorithms();

/// Dataset splits; the reference allows exactly these three.
enum class Split { kTrain, kTest, kHoldout };
Result<Split> ParseSplit(std::string_view name);
std::string_view SplitName(Split s);
std::span<const Split> AllSplits();

/// SHA-256 of the bytes of a dataset_info.json. That file holds the hashes of
/// every shards_list.json (and those of every shard), so this one digest pins
/// the whole tree: files derived from a dataset (the sample index) record it,
/// and one whose digest differs from the current file is stale.
using DatasetInfoDigest = std::array<std::byte, 32>;

}  // namespace sedpack
