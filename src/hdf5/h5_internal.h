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

/// One source resolved against one open file: shape, element type, chunking.
struct ResolvedSource {
  std::string file;     ///< for messages
  Hdf5Source spec;      ///< as configured
  std::uint64_t rows = 0;            ///< size of the first dimension
  std::vector<hsize_t> dims;         ///< dataset dimensions
  Shape row_shape;                   ///< values per row (after the window, with field array dims)
  std::uint64_t row_elements = 0;    ///< prod(row_shape)
  NumType type;                      ///< element type (of the field, if any)
  std::vector<hsize_t> field_dims;   ///< array dims of the compound field ({} if scalar)
  std::uint64_t chunk_rows = 0;      ///< chunk size along rows; 0 = not chunked
  std::uint64_t chunk_bytes = 0;     ///< bytes of one chunk (0 = not chunked)
  std::uint64_t chunks_per_row_band = 1;  ///< chunks across the non-row dimensions
  std::string Where() const;         ///< "file.h5: /path field \"f\""
};

/// Look up `spec` in `file` and check it is a numeric dataset (or numeric
/// field of a compound dataset) with at least one dimension and a valid window.
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
  ReadAs read_as() const { return read_as_; }
  std::size_t mem_item_size() const { return mem_item_size_; }

 private:
  const ResolvedSource* src_ = nullptr;
  Handle dataset_, mem_type_, elem_type_;
  ReadAs read_as_ = ReadAs::kDirect;
  std::size_t mem_item_size_ = 1;
};

}  // namespace sedpack::h5
