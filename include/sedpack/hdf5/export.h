// SPDX-License-Identifier: Apache-2.0
// `sedpack export-hdf5`: the splits of a dataset as one HDF5 file.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "sedpack/comm/comm.h"
#include "sedpack/dataset/dataset.h"
#include "sedpack/io/file_system.h"
#include "sedpack/status.h"
#include "sedpack/types.h"

namespace sedpack {

struct Hdf5ExportProgress {
  std::uint64_t examples_done = 0;
  std::uint64_t examples_total = 0;
  std::uint64_t bytes_done = 0;  ///< value bytes written
  double seconds = 0;
  bool finished = false;
};

struct Hdf5ExportOptions {
  /// Splits to write, in this order; empty: every split the dataset has.
  std::vector<Split> splits;
  /// 0: no compression; 1-9: deflate (gzip) at that level, with shuffle.
  int deflate_level = 0;
  /// Rows per chunk; 0: about 1 MiB of values per chunk.
  std::uint64_t chunk_rows = 0;
  /// Check every shard against its recorded hashes as it is read.
  bool verify_hashes = true;
  /// Called on rank 0 after each round of shards, and once with finished.
  std::function<void(const Hdf5ExportProgress&)> progress;
  /// Keep a journal beside `out` (`<out>.sedpack-journal`, the unfinished file
  /// as `.<name>.sedpack-partial`) when rank 0 writes the file: after each
  /// round of shards the file is flushed and synced and each shard's rows are
  /// recorded with a checksum of their values. The same export run again after
  /// a stop reopens the unfinished file, checks its datasets and the recorded
  /// rows, and writes only the rest (a file it cannot reopen is started over).
  /// A journal of other parameters is refused (InvalidArgument naming the
  /// difference). The collective MPI-IO write keeps no journal.
  bool journal = true;
  /// Throw away the journal and unfinished file of an earlier run first.
  bool restart = false;
  /// The FileSystem the serial writer creates, writes and reopens the HDF5
  /// file through (nullptr: CurrentFileSystem()); the MPI-IO write uses MPI-IO.
  FileSystem* file_system = nullptr;
};

struct Hdf5ExportSummary {
  std::uint64_t examples = 0;
  std::size_t splits = 0;
  std::uint64_t shards = 0;
  std::uint64_t bytes = 0;  ///< value bytes written
  double seconds = 0;
  std::string job_id;            ///< the journaled job (empty without a journal)
  std::uint64_t units = 0;       ///< shards of the job, each a journaled row range
  std::uint64_t kept_units = 0;  ///< taken over from an earlier run
  bool resumed = false;          ///< an earlier run's journal was used
  std::string journal_note;      ///< why a journal found was not used, or none was kept
};

/// Collective: write the examples of `dataset` into the new HDF5 file `out`.
/// Layout: a group per split ("/train", ...), in it one dataset per attribute
/// of shape (N, *shape) in the attribute's dtype (float16 as IEEE binary16,
/// int as int64, bool as uint8 with attribute sedpack_dtype "bool", str as
/// variable-length UTF-8 strings, bytes as variable-length uint8 sequences),
/// chunked along the rows. Attributes: the metadata on the root group
/// (custom_metadata and sedpack_dataset_structure as JSON text), each
/// attribute's custom_metadata and sedpack_dtype on its dataset, and on each
/// split group the shards' custom_metadata (a JSON list), shard_examples and
/// shard_first_row. Rows keep the non-shuffled read order.
///
/// Shards are decoded in rounds, every rank one shard per round. Built against
/// parallel HDF5 and run on several MPI ranks, every rank writes the rows of
/// its own shards collectively through MPI-IO; str and bytes columns (which
/// HDF5 cannot write in parallel) are then gathered to rank 0, which writes
/// them into the same file. Otherwise rank 0 gathers every shard and is the
/// one writer. The file holds the same values either way. `out` is written
/// under a temporary name beside it and renamed when complete; it must not
/// exist (AlreadyExists). Interrupted, it is resumable (options.journal).
Result<Hdf5ExportSummary> ExportHdf5(Comm& comm, std::shared_ptr<const Dataset> dataset, const std::string& out,
                                     const Hdf5ExportOptions& options = {});

/// The HDF5 library this build uses, e.g. "HDF5 1.10.8 (parallel, MPI-IO)" or
/// "HDF5 1.10.8 (serial)".
std::string Hdf5LibraryDescription();

}  // namespace sedpack
