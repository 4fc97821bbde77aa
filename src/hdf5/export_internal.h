// SPDX-License-Identifier: Apache-2.0
// The pieces of export-hdf5 shared by its two ways of writing: one writer on
// rank 0 fed by gathered shards (serial HDF5, or one rank), and every rank
// writing its own rows through MPI-IO (parallel HDF5). Private to src/hdf5.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "codecs/decode_points_internal.h"
#include "hdf5/h5_internal.h"
#include "journal/exports_internal.h"
#include "sedpack/dataset/dataset.h"
#include "sedpack/hdf5/export.h"
#include "sedpack/metadata/models.h"

namespace sedpack::h5 {

/// str and bytes: HDF5 variable-length data (which parallel HDF5 1.10 cannot write).
inline bool VariableLength(DType d) { return d == DType::kStr || d == DType::kBytes; }

/// One shard's values, column by column. Wire format (between ranks): a u64
/// example count, then per attribute a u8 dtype, then for numeric attributes a
/// u64 byte count and the bytes (examples in order, each value's elements in C
/// order); for str/bytes a u64 count and per value a u64 length and the bytes.
/// A column may be left empty (byte count 0 / count 0) when it is not needed.
struct ShardColumns {
  std::vector<DType> dtypes;
  std::vector<std::string> columns;  ///< str/bytes: the (length, bytes) pairs without the count
  std::uint64_t examples = 0;
};

/// Decode `shard` and serialize its columns (checking every value against the schema).
Result<std::string> EncodeShard(const Dataset& ds, const ShardInfo& shard, bool verify);
Result<ShardColumns> DecodeColumns(std::string_view in, std::size_t attributes);
/// The wire form of `c` with only its variable-length columns (the others empty).
std::string EncodeVariableColumns(const ShardColumns& c);

/// IOError "export-hdf5: <what>: <HDF5's message>" if `rc` (or `id`) is negative.
Status H5Check(herr_t rc, const std::string& what);
Result<Handle> H5Checked(hid_t id, const std::string& what);

/// One split to write: its shards in order and where each starts.
struct SplitPlan {
  Split split;
  std::vector<ShardInfo> shards;
  std::vector<std::uint64_t> first_row;
  std::uint64_t rows = 0;
};

/// The digest of one shard's rows as the file holds them: XXH3-64 (several
/// GB/s), since every value an export writes goes through it once.
class RowDigest {
 public:
  void Update(const void* data, std::size_t size) {
    sum_.Update(std::span<const std::byte>(static_cast<const std::byte*>(data), size));
  }
  /// 16 hex digits.
  std::string Hex() const;

 private:
  codecs_internal::FastChecksummer sum_;
};

/// Which columns a write covers.
enum class Columns { kAll, kFixed, kVariable };

/// The open output file and one dataset per attribute of each split. With an
/// MPI-IO file access list every call is collective except where noted.
class ExportWriter {
 public:
  /// Create `path` with file access list `fapl` (H5P_DEFAULT: serial, through
  /// o.file_system), its
  /// metadata attributes, groups and datasets (full size, from the plans).
  static Result<std::unique_ptr<ExportWriter>> Create(const std::string& path, const Dataset& ds,
                                                      const std::vector<SplitPlan>& plans,
                                                      const Hdf5ExportOptions& o, hid_t fapl);
  /// Reopen a file made by Create for writing, with file access list `fapl`
  /// (H5P_DEFAULT: serially, from one process, through `fs`; nullptr:
  /// CurrentFileSystem()).
  static Result<std::unique_ptr<ExportWriter>> Reopen(const std::string& path, const Dataset& ds,
                                                      const std::vector<SplitPlan>& plans, FileSystem* fs,
                                                      hid_t fapl = H5P_DEFAULT);
  /// Write one shard's rows [first, first + c.examples) of split number `plan`
  /// (columns `which`) with transfer list `dxpl`.
  Status WriteShard(std::size_t plan, std::uint64_t first, const ShardColumns& c, Columns which, hid_t dxpl);
  /// A rank's part in a collective write of split `plan` when it has no rows there.
  Status WriteNothing(std::size_t plan, hid_t dxpl);
  /// Flush and close (the flush is where a full disk shows).
  Status Close();
  /// Write out what the library holds back, so that the file on disk is whole.
  Status Flush();
  /// Whether every dataset has the shape the plans give it (a reopened file).
  Status CheckShapes(const std::vector<SplitPlan>& plans);
  /// Feed rows [first, first + c.examples) of split number `plan`, as the file
  /// holds them, to `hash`: from `c` where its bytes are the file's, else read
  /// back. The same bytes as HashRows of those rows.
  Status HashWritten(std::size_t plan, std::uint64_t first, const ShardColumns& c,
                     RowDigest* hash);
  /// Feed rows [first, first + rows) as read from the file: attribute by
  /// attribute, numeric values in the file's type, str and bytes as a u64
  /// length and the bytes each.
  Status HashRows(std::size_t plan, std::uint64_t first, std::uint64_t rows, RowDigest* hash);
  /// Value bytes this process wrote.
  std::uint64_t bytes() const { return bytes_; }

 private:
  ExportWriter() = default;
  Status HashAttribute(std::size_t plan, std::size_t j, std::uint64_t first, std::uint64_t rows,
                       RowDigest* hash);
  std::vector<AttributeSpec> schema_;
  Handle file_;
  std::vector<std::vector<Handle>> datasets_;
  std::uint64_t bytes_ = 0;
};

/// Describe the HDF5 library linked in, e.g. "HDF5 1.10.8 (parallel, MPI-IO)".
std::string LibraryDescription();

}  // namespace sedpack::h5
