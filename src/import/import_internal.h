// SPDX-License-Identifier: Apache-2.0
// The import engine behind import-hdf5, import-trs and import-chipwhisperer:
// rows of fixed-layout fields from any number of inputs become one new
// dataset, on one rank or many. A format supplies one ImportSource per split
// and input (reading and converting its values); Import checks the output,
// cuts every split's rows into per-rank ranges, reads bounded blocks, writes
// through the DistributedWriter, reports progress on rank 0 and cleans up on
// failure.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sedpack/codecs/compress.h"
#include "sedpack/comm/comm.h"
#include "sedpack/import/import.h"
#include "sedpack/io/file_system.h"
#include "sedpack/metadata/json_value.h"
#include "sedpack/metadata/models.h"
#include "sedpack/status.h"
#include "sedpack/types.h"

namespace sedpack::import_internal {

/// Rows of one field in a block as the attribute stores them: row i is
/// `bytes` bytes at data + i * stride, without its trailing NULs if `trim_nul`
/// (text padded to a fixed width); with `offsets` (values of varying length)
/// row i is data[offsets[i], offsets[i + 1]) instead.
struct ImportColumn {
  const std::byte* data = nullptr;
  std::uint64_t stride = 0;
  std::uint64_t bytes = 0;
  bool trim_nul = false;
  const std::uint64_t* offsets = nullptr;
};

/// One input (a file, a segment) as the rows of one split: one field per
/// attribute of the schema, already in the attribute's dtype and shape.
class ImportSource {
 public:
  virtual ~ImportSource();
  /// "capture.trs", "file.h5", for messages.
  virtual std::string Describe() const = 0;
  /// The attributes it fills, in schema order.
  virtual const std::vector<AttributeSpec>& fields() const = 0;
  /// Rows of the input; the split takes a range of them.
  virtual std::uint64_t rows() const = 0;
  /// Blocks and rank cuts fall on multiples of this where they can (a chunk
  /// of the input's largest field); 0 or 1: anywhere.
  virtual std::uint64_t preferred_block_rows() const { return 1; }
  /// Rows [first, first + n): (*columns)[a] for field a, valid until the next
  /// call (or Release).
  virtual Status ReadBlock(std::uint64_t first, std::uint64_t n, std::vector<ImportColumn>* columns) = 0;
  /// The shard custom_metadata of row i of the last block; nullptr: none.
  virtual Result<const JsonValue*> RowMetadata(std::uint64_t i);
  /// This rank has read all its rows of the source: buffers and open
  /// readers may go.
  virtual void Release() {}
  /// Largest rounding error of the values converted so far (0: exact).
  virtual double max_rounding_error() const { return 0; }
};

/// One split of the new dataset, planned over every input in row order.
struct ImportSplit {
  Split split = Split::kTrain;
  std::vector<std::unique_ptr<ImportSource>> inputs;
  /// Per input: its rows [first, last) that go into the split.
  std::vector<std::pair<std::uint64_t, std::uint64_t>> rows;
  /// Source bytes a row stands for, in progress and in the summary.
  std::uint64_t row_bytes = 0;
};

/// Per-rank sizes derived from the memory budget.
struct ImportSizing {
  std::uint64_t block_rows = 1;
  std::uint64_t shard_byte_budget = 1ULL << 30;
  int threads = 1;
};

/// Half the budget for shards being filled, compressed and written (raw and
/// encoded copies of at most 2 * threads + 1 shards), half less `reserved`
/// for read blocks of `row_bytes` a row.
ImportSizing ChooseImportSizing(std::uint64_t budget, int threads, std::uint64_t row_bytes,
                                std::uint64_t reserved = 0);

struct ImportJob {
  /// The dataset to create.
  Metadata metadata;
  DatasetStructure structure;
  ImportSizing sizing;
  int level = kDefaultCodecLevel;
  std::string job_id;
  /// A resumable job (DistributedWriteOptions::resume_parameters): what
  /// identifies its inputs and options; the import adds its own (structure,
  /// ranks, codec and shard options). Empty: not resumable.
  std::vector<std::pair<std::string, std::string>> resume_parameters;
  /// With resume_parameters: throw away an earlier run's journal and shards.
  bool restart = false;
  /// Rank 0 only, a few times a second, totals of all ranks.
  std::function<void(const ImportProgress&)> progress;
  /// Who refuses an existing output, e.g. "import-hdf5".
  std::string_view who = "an import";
  /// Prefix a failed write with the input and row.
  bool name_rows_in_write_errors = false;
  /// The FileSystem the output check, the dataset writes and the cleanup go
  /// through (nullptr: CurrentFileSystem()).
  FileSystem* file_system = nullptr;
  /// When the import began (for the summary's seconds).
  std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
};

/// The summary, and the largest rounding error over all ranks.
struct ImportResult : ImportSummary {
  double max_rounding_error = 0;
};

/// Resume parameters naming each input file with its size and modification
/// time, so that a rerun after an input changed is refused.
std::vector<std::pair<std::string, std::string>> InputParameters(const std::vector<std::string>& inputs,
                                                                 FileSystem* fs);

/// Collective over `comm`: every rank passes its own plan of the same job
/// (`planned` says whether planning worked; the ranks agree on it, and on the
/// output being new or empty, before anything is created). Rank r writes the
/// r-th contiguous range of each split's rows, cut at preferred block
/// boundaries; the merge keeps the source order. On failure anywhere every
/// rank removes its shards and `out` is left as it was; a resumable job
/// (job.resume_parameters) keeps the dataset and the shards its journals name,
/// and its rerun skips the rows they hold.
Result<ImportResult> Import(Comm& comm, const Status& planned, std::span<ImportSplit> splits, const std::string& out,
                            const ImportJob& job);

}  // namespace sedpack::import_internal
