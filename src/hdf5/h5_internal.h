// SPDX-License-Identifier: Apache-2.0
// Thin, checked access to HDF5 files for the importer and the inspector:
// owned handles, error text from HDF5's error stack, and one "source" (a
// dataset or one compound field of it) read a block of rows at a time.
// Private to src/hdf5; the only files that include <hdf5.h>.
#pragma once

#include <hdf5.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "sedpack/hdf5/mapping.h"
#include "sedpack/io/file_system.h"
#include "sedpack/status.h"
#include "sedpack/types.h"

namespace sedpack::h5 {

/// An owned HDF5 identifier, closed with the right H5*close on destruction.
class Handle {
 public:
  Handle() = default;
  explicit Handle(hid_t id) : id_(id) {}
  Handle(Handle&& o) noexcept : id_(std::exchange(o.id_, H5I_INVALID_HID)) {}
  Handle& operator=(Handle&& o) noexcept {
    if (this != &o) {
      Reset();
      id_ = std::exchange(o.id_, H5I_INVALID_HID);
    }
    return *this;
  }
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  ~Handle() { Reset(); }
  hid_t get() const { return id_; }
  bool valid() const { return id_ >= 0; }
  void Reset();

 private:
  hid_t id_ = H5I_INVALID_HID;
};

/// Turn off HDF5's own printing of errors to stderr (we report them ourselves).
void SilenceLibraryErrors();
/// The innermost messages of HDF5's current error stack, e.g. "unable to open
/// file: file signature not found"; empty if the stack is empty.
std::string LastError();

/// Open `path` read-only (file locking off: captures sit on shared file systems
/// where many ranks open them at once). The error names the file.
Result<Handle> OpenFile(const std::string& path, FileSystem* fs = nullptr);
/// True if `path` names an object (of any kind) in the file.
bool ObjectExists(hid_t file, const std::string& path);

/// Read the string attribute `name` of `object` (variable or fixed length)
/// into `out`; false if it is absent, not a scalar string or longer than `limit`.
bool ReadStringAttribute(hid_t object, const char* name, std::size_t limit, std::string* out);

/// Element kind of a numeric HDF5 type.
enum class NumKind { kSigned, kUnsigned, kFloat };

/// A numeric element type as found in a file.
struct NumType {
  NumKind kind = NumKind::kUnsigned;
  std::size_t size = 1;  ///< bytes
  /// For floats: true if the layout is IEEE binary16/32/64 for its size.
  bool ieee = true;
};

/// Describe a numeric HDF5 type ("uint8", "float64", "float16"); NotImplemented
/// for anything else (strings, enums, references, nested compounds...).
Result<NumType> DescribeNumType(hid_t type, const std::string& what);
/// numpy-style name of a numeric type ("int8", "float16", ...).
std::string NumTypeName(const NumType& t);
/// The sedpack dtype holding `t` without conversion (float16 only for IEEE half).
Result<DType> NaturalDType(const NumType& t);

/// The HDF5 memory type of a numeric sedpack dtype (float16: IEEE binary16,
/// int: int64); an invalid handle for bool, str and bytes.
Handle NativeType(DType d);

/// What one element of a source is: a number, or a run of bytes.
enum class ElemKind {
  kNumber,        ///< integer or float (`num`)
  kFixedString,   ///< HDF5 string of `size` bytes, padded per `pad`
  kVarString,     ///< variable-length HDF5 string
  kOpaque,        ///< opaque blob of `size` bytes
  kVlenBytes,     ///< variable-length sequence of 1-byte integers
};

/// The element type of a source as found in a file.
struct ElemType {
  ElemKind kind = ElemKind::kNumber;
  NumType num;                      ///< kNumber; base type of kVlenBytes
  std::size_t size = 0;             ///< kFixedString, kOpaque: bytes per element
  H5T_str_t pad = H5T_STR_NULLTERM; ///< strings
  H5T_cset_t cset = H5T_CSET_ASCII; ///< strings
  std::string tag;                  ///< kOpaque: its tag (a memory type must carry the same)
  /// kNumber from an HDF5 enum (read as its integer values); `bool_enum`: the
  /// members are exactly FALSE = 0 and TRUE = 1, as h5py writes numpy bools.
  bool is_enum = false;
  bool bool_enum = false;
  /// "uint8", "string (variable, UTF-8)", "opaque (16 bytes)", "vlen uint8", ...
  std::string Name() const;
  bool is_bytes() const { return kind != ElemKind::kNumber; }
};

/// Describe the element type of a dataset or field: numbers (DescribeNumType),
/// enums of integers, strings, opaque data and variable-length sequences of
/// 1-byte integers;
/// NotImplemented for anything else.
Result<ElemType> DescribeElemType(hid_t type, const std::string& what);

/// One source resolved against one open file: shape, element type, chunking.
struct ResolvedSource {
  std::string file;     ///< for messages
  Hdf5Source spec;      ///< as configured
  std::uint64_t rows = 0;            ///< size of the first dimension
  std::vector<hsize_t> dims;         ///< dataset dimensions
  Shape row_shape;                   ///< values per row (after the window, with field array dims)
  std::uint64_t row_elements = 0;    ///< prod(row_shape)
  NumType type;                      ///< numeric element type (of the field, if any)
  ElemType elem;                     ///< element type; elem.num == type for numbers
  std::vector<hsize_t> field_dims;   ///< array dims of the compound field ({} if scalar)
  std::uint64_t chunk_rows = 0;      ///< chunk size along rows; 0 = not chunked
  std::uint64_t chunk_bytes = 0;     ///< bytes of one chunk (0 = not chunked)
  std::uint64_t chunks_per_row_band = 1;  ///< chunks across the non-row dimensions
  /// Byte-like elements: bytes a row is expected to need in memory (the size
  /// of a fixed element; for variable-length ones the mean over the first
  /// rows, plus room for the pointer).
  std::uint64_t bytes_per_row = 0;
  std::string Where() const;         ///< "file.h5: /path field \"f\""
};

/// Look up `spec` in `file` and check it is a dataset (or a field of a
/// compound dataset) of numbers, strings, opaque data or byte sequences with
/// at least one dimension and a valid window.
/// Errors name the file and the path.
Result<ResolvedSource> Resolve(hid_t file, const std::string& file_name, const Hdf5Source& spec);

/// How a source is read into memory.
enum class ReadAs {
  kDirect,   ///< straight into the destination dtype (same kind and size)
  kInt64,    ///< as int64, converted afterwards (exactly, or an error)
  kUInt64,   ///< as uint64, converted afterwards
  kFloat64,  ///< as double, converted afterwards
};

/// Chooses how to read `src` for destination `dest`.
ReadAs ChooseReadAs(const NumType& src, DType dest);

/// Values of a block of rows of a byte-like source: row i is
/// data[offsets[i], offsets[i + 1]).
struct ByteRows {
  std::vector<std::byte> data;
  std::vector<std::uint64_t> offsets;
};

/// How the bytes of one element become a value.
struct ByteRowRules {
  /// Strip fixed-length strings per their padding (NULLTERM: up to the first
  /// NUL; NULLPAD: trailing NULs; SPACEPAD: trailing spaces).
  bool strip_padding = true;
  /// Every value must have exactly this many bytes (0: any).
  std::uint64_t exact_bytes = 0;
  /// Bound on one value and on the bytes of the whole block.
  std::uint64_t max_value_bytes = std::uint64_t{1} << 31;
  std::uint64_t max_block_bytes = std::uint64_t{1} << 31;
  /// Values must be well-formed UTF-8 (a str attribute).
  bool utf8 = false;
};

/// Reads blocks of rows of one source from an open dataset.
class BlockReader {
 public:
  /// `dest` is the destination dtype (decides the memory type); `cache_bytes`
  /// sizes HDF5's chunk cache for this dataset.
  /// `wide_only` reads as int64/uint64/double even when a direct read is possible.
  static Result<BlockReader> Open(hid_t file, const ResolvedSource& src, DType dest,
                                  std::uint64_t cache_bytes, bool wide_only = false);
  /// Read rows [first, first + count) into `out` (resized to count * row_elements
  /// elements of the memory type: dest itemsize for kDirect, else 8 bytes).
  Status Read(std::uint64_t first, std::uint64_t count, std::vector<std::byte>* out);
  /// Rows [first, first + count) of a string, opaque or vlen source, one
  /// element per row. Variable-length data is sized (H5Dvlen_get_buf_size)
  /// and checked against `rules` before HDF5 allocates it, and reclaimed.
  Status ReadBytes(std::uint64_t first, std::uint64_t count, const ByteRowRules& rules, ByteRows* out);
  ReadAs read_as() const { return read_as_; }
  std::size_t mem_item_size() const { return mem_item_size_; }

 private:
  const ResolvedSource* src_ = nullptr;
  Handle dataset_, mem_type_, elem_type_;
  ReadAs read_as_ = ReadAs::kDirect;
  std::size_t mem_item_size_ = 1;

  void ChooseNumberType(DType dest, bool wide_only);
  Status SelectRows(std::uint64_t first, std::uint64_t count, Handle* fspace, Handle* mspace) const;
  Status CopyFixed(const std::vector<std::byte>& raw, std::uint64_t first, std::uint64_t count,
                   const ByteRowRules& rules, ByteRows* out) const;
  Status AppendValue(std::uint64_t row, const std::byte* p, std::uint64_t n, const ByteRowRules& rules,
                     ByteRows* out) const;
};

}  // namespace sedpack::h5
