// SPDX-License-Identifier: Apache-2.0
// The journal of an export (export-trs, export-hdf5): the output is one file
// outside any dataset, so its journal lies beside it (`<out>.sedpack-journal`)
// and the unfinished file keeps a fixed name (`.<name>.sedpack-partial`) a
// rerun finds. Each unit is a range of rows written, made durable, and
// checksummed, recorded as a journal entry (journal_internal.h).
// Project-private (src/ include directory), not installed.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "journal/journal_internal.h"
#include "sedpack/io/file_system.h"
#include "sedpack/metadata/models.h"
#include "sedpack/status.h"

namespace sedpack::journal_internal {

/// One exported range of rows: rows [first, first + rows) are `bytes` bytes of
/// the output at `offset`, with checksum `hash`. Where rows are not a byte range
/// (HDF5, whose shards may span splits) `first` is 0, `rows` counts the rows,
/// `offset` is the first shard's number in export order, `bytes` the number of
/// shards, and the hash covers their values as the file holds them. The hash
/// is a CRC-64 (RangeHasher), hex.
struct RowRange {
  std::uint64_t first = 0;
  std::uint64_t rows = 0;
  std::uint64_t offset = 0;
  std::uint64_t bytes = 0;
  std::string hash;  ///< hex CRC-64 (RangeHasher)
};

JournalEntry EncodeRowRange(const RowRange& range);
/// nullopt unless `entry` is a well-formed row range record.
std::optional<RowRange> DecodeRowRange(const JournalEntry& entry);

/// Where the journal and the unfinished file of the export to `out` live.
struct ExportPaths {
  std::string folder;   ///< the output's folder ("." for a bare name)
  std::string journal;  ///< relative to folder: "<name>.sedpack-journal"
  std::string partial;  ///< full path: "<folder>/.<name>.sedpack-partial"
};
ExportPaths ExportPathsFor(const std::string& out);

/// What an earlier run of the same export left.
struct ExportJournalState {
  std::vector<RowRange> recorded;  ///< in journal order
  bool found = false;              ///< a journal was there
  std::string note;                ///< why a journal found was not used (empty: it was)
};

/// Read the journal beside `out`. `restart`: the journal and the partial file
/// are removed first. A journal whose header does not validate is ignored (a
/// note says so); one whose parameters differ from `parameters` is
/// InvalidArgument "<command>: <journal>: ... (<difference>); run with --restart ...".
Result<ExportJournalState> ReadExportJournal(const std::string& command, const std::string& out,
                                             const JobParameters& parameters, bool restart, FileSystem* fs);

/// Start (or restart from `kept`) the journal beside `out`.
Result<std::unique_ptr<JournalWriter>> OpenExportJournal(const std::string& out, const JobParameters& parameters,
                                                         const std::vector<RowRange>& kept, FileSystem* fs);

/// The job id of an export: derived from its parameters, so reruns name the same job.
std::string ExportJobId(const JobParameters& parameters);

/// A short digest (hex SHA-256) of `text`, for parameters that stand for much data.
std::string DigestOf(std::string_view text);
/// The digest of what a list of shards names: paths, recorded hashes, example counts.
std::string DigestOfShards(const std::vector<ShardInfo>& shards);

/// Streams bytes into a CRC-64 (codecs' Crc64) as they are written.
class RangeHasher {
 public:
  RangeHasher();
  ~RangeHasher();
  void Update(const void* data, std::size_t size);
  /// The hex digest of what was fed since the last Finish (then starts again).
  std::string Finish();

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace sedpack::journal_internal
