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

#include "codecs/compress_internal.h"
#include "hdf5/h5_internal.h"
#include "io/beneath.h"
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
  /// The RowDigest (hex) of `columns` one after the other, as DecodeColumns
  /// copied them; empty when not asked for. It is the digest of the rows as
  /// the file holds them when no column is converted on its way in
  /// (ExportWriter::DigestWritten tells).
  std::string digest;
};

/// Decode `shard` and serialize its columns (checking every value against the schema).
Result<std::string> EncodeShard(const Dataset& ds, const ShardInfo& shard, bool verify);
/// With `digest`, every column is hashed as it is copied out of `in`, block
/// by block while the block is in cache (ShardColumns::digest): the separate
/// pass over a shard's values after its write read them back from memory.
Result<ShardColumns> DecodeColumns(std::string_view in, std::size_t attributes, bool digest = false);
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

/// The digest of one shard's rows as the file holds them: a CRC-64 (codecs'
/// Crc64, tens of GB/s), since every value an export writes goes through it once.
class RowDigest {
 public:
  void Update(const void* data, std::size_t size) {
    crc_ = Crc64(std::span<const std::byte>(static_cast<const std::byte*>(data), size), crc_);
  }
  /// 16 hex digits.
  std::string Hex() const;

 private:
  std::uint64_t crc_ = 0;
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
  /// CurrentFileSystem()). Either way StartWriteback goes through `fs` (as
  /// it does through o.file_system after Create).
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
  /// Send what has been written into the file so far to the device, without
  /// waiting for it (FileSystem::StartWriteback of the whole file, a hint).
  /// Called after every round: left to the fsync before the rename (or to the
  /// MPI_File_sync in every collective flush, which a journal's record makes),
  /// the file's pages would all be written out only then, with every rank
  /// waiting, after the page cache had filled with them.
  void StartWriteback();
  /// Whether every dataset has the shape the plans give it (a reopened file).
  Status CheckShapes(const std::vector<SplitPlan>& plans);
  /// The digest (RowDigest, hex) of rows [first, first + c.examples) of split
  /// number `plan` just written from `c`, as the file holds them: c.digest
  /// where every column went in unconverted, else from `c`'s bytes and, for
  /// a converted column, the rows read back. Equal to DigestStored of those rows.
  Result<std::string> DigestWritten(std::size_t plan, std::uint64_t first, const ShardColumns& c);
  /// The digest of rows [first, first + rows) as the file holds them:
  /// attribute by attribute, numeric values in the file's type, str and bytes
  /// as a u64 length and the bytes each. For the check of a reopened file
  /// before anything is written to it, shard after shard in row order: a
  /// numeric attribute of an unfiltered chunked dataset is read a whole
  /// chunk at a time as stored (H5Dread_chunk: one read from the file into a
  /// buffer kept for the next shard, no chunk cache, no conversion), the
  /// others through H5Dread. ReleaseStored frees the buffers.
  Result<std::string> DigestStored(std::size_t plan, std::uint64_t first, std::uint64_t rows);
  void ReleaseStored();
  /// Value bytes this process wrote.
  std::uint64_t bytes() const { return bytes_; }

 private:
  ExportWriter() = default;
  // What DigestStored keeps of one dataset: whether its chunks are read as
  // stored, their shape, and the chunk read last.
  struct StoredChunks {
    bool probed = false;
    bool direct = false;
    std::uint64_t chunk_rows = 0;
    std::uint64_t row_bytes = 0;
    std::uint64_t loaded = ~std::uint64_t{0};  ///< the chunk in `bytes` (its number)
    std::vector<hsize_t> offset;                ///< of that chunk, in elements
    std::vector<std::byte> bytes;
  };
  void OpenForWriteback(const std::string& path, FileSystem* fs);
  void ProbeStored(std::size_t plan, std::size_t j, StoredChunks* s);
  Status LoadStoredChunk(std::size_t plan, std::size_t j, std::uint64_t chunk, StoredChunks* s);
  // Whether values of dtype `stored` go into attribute j of split `plan` unconverted.
  bool StoredAsFile(std::size_t plan, std::size_t j, DType stored);
  Status HashAttribute(std::size_t plan, std::size_t j, std::uint64_t first, std::uint64_t rows,
                       RowDigest* hash);
  std::vector<AttributeSpec> schema_;
  Handle file_;
  std::vector<std::vector<Handle>> datasets_;
  std::vector<std::vector<StoredChunks>> stored_;
  /// StoredAsFile's answers: per split and attribute, the dtype last asked about and the answer.
  std::vector<std::vector<std::pair<int, bool>>> as_file_;
  std::uint64_t bytes_ = 0;
  /// A descriptor of the file of this process's own (MPI-IO's is out of
  /// reach), for StartWriteback; invalid if it could not be opened.
  FileDescriptor writeback_;
  FileSystem* writeback_fs_ = nullptr;
};

/// Describe the HDF5 library linked in, e.g. "HDF5 1.10.8 (parallel, MPI-IO)".
std::string LibraryDescription();

}  // namespace sedpack::h5
