// SPDX-License-Identifier: Apache-2.0
// ExportHdf5: decode shards (in parallel under MPI) and write one HDF5 file,
// either from rank 0 (serial HDF5, one rank) or from every rank through MPI-IO.
#include "sedpack/hdf5/export.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <optional>

#include "hdf5/export_internal.h"
#include "io/kill_point.h"
#include "journal/exports_internal.h"
#include "journal/stats_internal.h"
#include "sedpack/cancel.h"
#include "sedpack/dataset/reader.h"
#include "sedpack/io/file.h"

namespace sedpack {
namespace {

using h5::Columns;
using h5::ExportWriter;
using h5::Handle;
using h5::ShardColumns;
using h5::SplitPlan;
using Clock = std::chrono::steady_clock;

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// Every rank walks the metadata (cheap, hashes checked) for the same plan, so
// every rank knows every dataset's full size before anything is written.
Result<std::vector<SplitPlan>> PlanSplits(const std::shared_ptr<const Dataset>& dataset,
                                          const Hdf5ExportOptions& options) {
  std::vector<Split> splits = options.splits;
  if (splits.empty()) {
    for (const auto& [split, sli] : dataset->info().splits) splits.push_back(split);
  }
  std::vector<SplitPlan> plans;
  for (Split s : splits) {
    if (dataset->info().FindSplit(s) == nullptr) return Status::InvalidArgument("the dataset has no split ", SplitName(s));
    SEDPACK_ASSIGN_OR_RETURN(auto shards, ListShards(dataset, s, options.verify_hashes));
    SplitPlan p{s, std::move(shards), {}, 0};
    for (const ShardInfo& sh : p.shards) {
      p.first_row.push_back(p.rows);
      p.rows += static_cast<std::uint64_t>(std::max<std::int64_t>(0, sh.number_of_examples));
    }
    plans.push_back(std::move(p));
  }
  return plans;
}

// Every shard in file order; round r gives shard r * size + rank to each rank.
struct Item {
  std::size_t plan, shard;
};

// Rank 0's journal of the file (written by rank 0 alone or by every rank).
struct RootJob {
  journal_internal::JobParameters params;
  std::unique_ptr<journal_internal::JournalWriter> journal;  ///< null: no journal (and on ranks > 0)
  std::string temp;
  /// A record costs a flush of the library's buffers: at least this many rows
  /// and `interval` (RecordInterval) between two, or the end, or a stop.
  std::uint64_t unit_rows = 1;
  std::chrono::milliseconds interval{1000};
  Clock::time_point last_record = Clock::now();
  /// The shards written since the last record: one record covers them all.
  journal_internal::RowRange pending;
  /// Fed with each pending shard's digest in export order (DigestWritten).
  journal_internal::RangeHasher pending_hash;
  std::size_t kept = 0;
  bool resumed = false;
  std::string note;
  /// The collective path, on every rank: the items from `recorded_to` on are
  /// not recorded yet; the next record follows the round that reaches item
  /// `record_at`, a point every rank knows, so that the rounds between two
  /// records cost no collective call of the journal's. `digests`: this rank's
  /// digests of its shards since then, in order, one per line.
  std::size_t recorded_to = 0, record_at = 0;
  std::string digests;
  Status digest_failed;

  bool Due(bool last) const {
    return pending.bytes > 0 &&
           (last || (pending.rows >= unit_rows && Clock::now() - last_record >= interval));
  }
  // One more shard of `rows` rows written, whose values hash to `digest`.
  void Add(std::uint64_t rows, const std::string& digest) {
    pending_hash.Update(digest.data(), digest.size());
    pending.rows += rows;
    ++pending.bytes;
  }
};

// A record's hash is the CRC-64 (RangeHasher) of its shards' digests (h5::RowDigest of the
// shard's rows as the file holds them: ExportWriter::DigestWritten as they are
// written, DigestStored on a rerun). Per shard, so that every rank of a
// collective write hashes its own rows in memory (as DecodeColumns copies
// them), and rank 0 combines them in export order exactly as a rerun
// recomputes them.

// What the shard loops share.
struct ExportRun {
  Comm& comm;
  const Dataset& dataset;
  const std::vector<SplitPlan>& plans;
  std::vector<Item> items;
  const Hdf5ExportOptions& options;
  Clock::time_point start;
  Hdf5ExportProgress progress;
  RootJob* job = nullptr;      ///< the journal (kept by rank 0); null: none
  std::size_t first_item = 0;  ///< items before it were kept from an earlier run

  std::size_t ranks() const { return static_cast<std::size_t>(comm.size()); }
  std::uint64_t first_row(const Item& it) const { return plans[it.plan].first_row[it.shard]; }
  // Decode this rank's shard of the round starting at `base` (none: nullopt).
  Result<std::optional<ShardColumns>> DecodeMine(std::size_t base) const {
    if (CancellationRequested()) return Status::Cancelled("export-hdf5: interrupted");
    const std::size_t k = base + static_cast<std::size_t>(comm.rank());
    if (k >= items.size()) return std::optional<ShardColumns>();
    SEDPACK_ASSIGN_OR_RETURN(std::string encoded, h5::EncodeShard(dataset, plans[items[k].plan].shards[items[k].shard],
                                                                  options.verify_hashes));
    SEDPACK_ASSIGN_OR_RETURN(ShardColumns cols, h5::DecodeColumns(encoded, dataset.schema().size(), job != nullptr));
    return std::optional<ShardColumns>(std::move(cols));
  }
  void Report(std::uint64_t bytes) {
    progress.bytes_done = bytes;
    progress.seconds = SecondsSince(start);
    if (comm.rank() == 0 && options.progress) options.progress(progress);
  }
};

// Journal each shard written since the last record, once the library has
// written out what it holds back (the file's metadata above all: a file left
// by a kill must reopen). No fsync of the data: a record survives a killed
// process with the page cache, and what a lost node loses a rerun finds by
// hashing every kept range, never trusting it; the output is synced once,
// before its rename, as without a journal.
Status AppendPending(RootJob& job) {
  job.pending.hash = job.pending_hash.Finish();
  SEDPACK_RETURN_NOT_OK(job.journal->Append(EncodeRowRange(job.pending)));
  job.pending = journal_internal::RowRange{0, 0, job.pending.offset + job.pending.bytes, 0, {}};
  job.last_record = Clock::now();
  return Status::OK();
}

Status JournalPending(RootJob& job, ExportWriter* writer) {
  journal_internal::JournalTimer timer;
  SEDPACK_RETURN_NOT_OK(writer->Flush());
  return AppendPending(job);
}

// Every rank's part (or, if any rank failed, the failure every rank agrees on)
// gathered to rank 0.
Result<std::vector<std::string>> GatherToRoot(Comm& comm, Result<std::string> mine) {
  SEDPACK_RETURN_NOT_OK(AgreeOnStatus(comm, mine.status()));
  return comm.Gatherv(*mine, 0);
}

// Rank 0 writes the gathered shards of the round starting at `base`.
Status WriteRound(ExportRun& run, ExportWriter* writer, std::size_t base, const std::vector<std::string>& gathered) {
  const bool journaled = run.job != nullptr && run.job->journal != nullptr;
  for (std::size_t r = 0; r < run.ranks() && base + r < run.items.size(); ++r) {
    const Item& it = run.items[base + r];
    SEDPACK_ASSIGN_OR_RETURN(ShardColumns cols,
                             h5::DecodeColumns(gathered[r], run.dataset.schema().size(), journaled));
    SEDPACK_RETURN_NOT_OK(writer->WriteShard(it.plan, run.first_row(it), cols, Columns::kAll, H5P_DEFAULT));
    run.progress.examples_done += cols.examples;
    if (journaled) {
      journal_internal::JournalTimer timer;
      SEDPACK_ASSIGN_OR_RETURN(std::string digest, writer->DigestWritten(it.plan, run.first_row(it), cols));
      run.job->Add(cols.examples, digest);
    }
  }
  writer->StartWriteback();
  if (journaled && run.job->Due(base + run.ranks() >= run.items.size())) {
    SEDPACK_RETURN_NOT_OK(JournalPending(*run.job, writer));
  }
  run.Report(writer->bytes());
  return Status::OK();
}

// Rank 0 writes every shard: each round it gathers the ranks' encoded shards
// (serial HDF5, or one rank). `writer` is rank 0's open file (null elsewhere).
Status WriteGathered(ExportRun& run, ExportWriter* writer) {
  Comm& comm = run.comm;
  const bool root = comm.rank() == 0;
  for (std::size_t base = run.first_item; base < run.items.size(); base += run.ranks()) {
    Status mine = CancellationRequested() ? Status::Cancelled("export-hdf5: interrupted") : Status::OK();
    Result<std::string> message = std::string();
    const std::size_t k = base + static_cast<std::size_t>(comm.rank());
    if (!mine.ok()) {
      message = mine;
    } else if (k < run.items.size()) {
      const Item& it = run.items[k];
      message = h5::EncodeShard(run.dataset, run.plans[it.plan].shards[it.shard], run.options.verify_hashes);
    }
    SEDPACK_ASSIGN_OR_RETURN(auto gathered, GatherToRoot(comm, std::move(message)));
    Status wrote = root ? WriteRound(run, writer, base, gathered) : Status::OK();
    SEDPACK_RETURN_NOT_OK(AgreeOnStatus(comm, wrote));
  }
  return Status::OK();
}

// How many journal records (and so shards) the reopened file holds: the
// prefix of records, each a run of shards in export order, whose rows hash as
// recorded. The rows are read in file order, whole chunks at a time
// (DigestStored): this check is the part of a rerun that grows with what was kept.
std::size_t KeptRecords(const ExportRun& run, ExportWriter& writer,
                        const std::vector<journal_internal::RowRange>& recorded, std::size_t* items) {
  std::size_t kept = 0;
  *items = 0;
  for (; kept < recorded.size(); ++kept) {
    const journal_internal::RowRange& r = recorded[kept];
    if (r.offset != *items || r.bytes == 0 || r.bytes > run.items.size() - *items || r.first != 0) break;
    journal_internal::RangeHasher hash;
    std::uint64_t rows = 0;
    bool read = true;
    for (std::size_t i = *items; i < *items + r.bytes && read; ++i) {
      const Item& it = run.items[i];
      const auto n = static_cast<std::uint64_t>(
          std::max<std::int64_t>(0, run.plans[it.plan].shards[it.shard].number_of_examples));
      auto digest = writer.DigestStored(it.plan, run.first_row(it), n);
      read = digest.ok();
      if (read) hash.Update(digest->data(), digest->size());
      rows += n;
    }
    if (!read || rows != r.rows || hash.Finish() != r.hash) break;
    *items += r.bytes;
  }
  writer.ReleaseStored();
  return kept;
}

// Rank 0 with a journal: an earlier run's unfinished file is reopened
// (serially) and checked (datasets, shapes, the journaled rows), and what it
// holds is kept (job->kept shards, the writer returned); else, or if that
// fails, it is removed (null returned). The journal is then started anew with
// the kept records.
Result<std::unique_ptr<ExportWriter>> ReopenKept(ExportRun& run, const std::string& out, const std::string& temp) {
  RootJob* job = run.job;
  FileSystem* fs = run.options.file_system;
  SEDPACK_ASSIGN_OR_RETURN(auto state, journal_internal::ReadExportJournal("export-hdf5", out, job->params,
                                                                           run.options.restart, fs));
  job->resumed = state.found && state.note.empty();
  job->note = state.note;
  std::unique_ptr<ExportWriter> writer;
  if (job->resumed && PathExists(temp)) {
    auto reopened = ExportWriter::Reopen(temp, run.dataset, run.plans, run.options.file_system);
    Status checked = reopened.ok() ? (*reopened)->CheckShapes(run.plans) : reopened.status();
    if (checked.ok()) {
      writer = std::move(reopened).value();
      state.recorded.resize(KeptRecords(run, *writer, state.recorded, &job->kept));
    } else {
      job->note = "cannot resume from " + temp + " (" + checked.message() + "): starting over";
    }
  }
  if (job->kept == 0) {
    writer.reset();
    (void)RemoveTree(temp);
    state.recorded.clear();
  }
  job->pending.offset = job->kept;
  SEDPACK_ASSIGN_OR_RETURN(job->journal,
                           journal_internal::OpenExportJournal(out, job->params, state.recorded, fs));
  return writer;
}

// Every rank learns how many shards rank 0 kept, and counts them done.
Status ShareKept(ExportRun& run) {
  const std::int64_t kept = run.comm.rank() == 0 && run.job != nullptr ? static_cast<std::int64_t>(run.job->kept) : 0;
  SEDPACK_ASSIGN_OR_RETURN(std::int64_t first, run.comm.AllreduceSum(kept));
  run.first_item = static_cast<std::size_t>(first);
  if (run.job != nullptr) run.job->kept = run.first_item;
  for (std::size_t i = 0; i < run.first_item; ++i) {
    const Item& it = run.items[i];
    run.progress.examples_done +=
        static_cast<std::uint64_t>(std::max<std::int64_t>(0, run.plans[it.plan].shards[it.shard].number_of_examples));
  }
  return Status::OK();
}

// Rank 0: the file to write into, kept from an earlier run where it can be.
Result<std::unique_ptr<ExportWriter>> OpenRootWriter(ExportRun& run, const std::string& out, const std::string& temp) {
  std::unique_ptr<ExportWriter> writer;
  if (run.job != nullptr) {
    SEDPACK_ASSIGN_OR_RETURN(writer, ReopenKept(run, out, temp));
  }
  if (writer == nullptr) {
    SEDPACK_ASSIGN_OR_RETURN(writer, ExportWriter::Create(temp, run.dataset, run.plans, run.options, H5P_DEFAULT));
  }
  return writer;
}

#ifdef SEDPACK_HDF5_MPIIO

// MPI-IO needs an MPI communicator; the Comm of MpiSession spans a duplicate
// of MPI_COMM_WORLD, so the world is the same group of ranks in the same order.
bool SameRanksAsWorld(Comm& comm) {
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  if (initialized) MPI_Finalized(&finalized);
  if (!initialized || finalized) return false;
  int size = 0, rank = -1;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return size == comm.size() && rank == comm.rank();
}

// Every rank writes into the file only if every rank sees the folder rank 0
// writes it in: on a node-local path (/tmp of each node) MPI-IO would make a
// part-file per node. Rank 0 leaves a marker beside `temp`; where a rank does
// not see it, rank 0 gathers and writes alone, as with serial HDF5.
Result<bool> CanWriteCollectively(Comm& comm, const std::string& temp) {
  if (!comm.IsMPI() || comm.size() < 2) return false;
  const std::string marker = temp + ".ranks";
  // No marker in a missing folder (it would create it): the file's creation reports that.
  std::string folder = std::filesystem::path(temp).parent_path().string();
  if (folder.empty()) folder = ".";
  Status made;
  if (comm.rank() == 0 && IsDirectory(folder)) made = WriteFileAtomic(marker, std::string_view("export-hdf5\n"));
  SEDPACK_RETURN_NOT_OK(AgreeOnStatus(comm, made));
  const bool can = SameRanksAsWorld(comm) && PathExists(marker);
  SEDPACK_ASSIGN_OR_RETURN(std::int64_t all, comm.AllreduceMin(can ? 1 : 0));
  if (comm.rank() == 0) (void)RemoveTree(marker);
  return all == 1;
}

// The checks WriteShard would make, done before the collective writes: a rank
// that failed inside one would leave the others waiting in it.
Status CheckFixedColumns(const ShardColumns& c, const std::vector<AttributeSpec>& schema) {
  for (std::size_t j = 0; j < schema.size(); ++j) {
    if (h5::VariableLength(schema[j].dtype) || c.dtypes[j] == DType::kBool) continue;
    if (!h5::NativeType(c.dtypes[j]).valid()) {
      return Status::Corruption("export-hdf5: attribute \"", schema[j].name, "\" stored as ", DTypeName(c.dtypes[j]));
    }
  }
  return Status::OK();
}

// The collective path's records. Each rank hashes the shards it wrote, in
// memory, and keeps the digests. At a record (the schedule below, the end, or
// a stop) they go to rank 0, which adds them in export order as the serial
// path does; all ranks flush the file together, then rank 0 appends the
// record and sets when the next one is due.

// All ranks flush the file together, then rank 0 appends the record.
Status FlushAndRecord(ExportRun& run, ExportWriter* writer) {
  SEDPACK_RETURN_NOT_OK(AgreeOnStatus(run.comm, writer->Flush()));
  const bool root = run.comm.rank() == 0;
  SEDPACK_RETURN_NOT_OK(AgreeOnStatus(run.comm, root ? AppendPending(*run.job) : Status::OK()));
  // Every rank's point once the record is in: a test stopping rank r here knows what is kept.
  KillPoint("h5flush", run.job->temp);
  return Status::OK();
}

// The item after which a record of the items from `from` holds at least
// `unit_rows` rows (known on every rank: the plans are).
std::size_t ItemAfterRows(const ExportRun& run, std::size_t from, std::uint64_t unit_rows) {
  std::uint64_t rows = 0;
  std::size_t i = from;
  while (i < run.items.size() && rows < unit_rows) {
    const Item& it = run.items[i++];
    rows += static_cast<std::uint64_t>(std::max<std::int64_t>(0, run.plans[it.plan].shards[it.shard].number_of_examples));
  }
  return i;
}

// Record every item before `end` (every rank has written its shards there).
// With `schedule`, rank 0 then sets the next record: `interval` later at the
// speed seen since the last one, and at least unit_rows rows on.
Status RecordTo(ExportRun& run, ExportWriter* writer, std::size_t end, bool schedule) {
  Comm& comm = run.comm;
  RootJob& job = *run.job;
  const bool root = comm.rank() == 0;
  Result<std::string> mine = job.digest_failed.ok() ? Result<std::string>(std::move(job.digests))
                                                    : Result<std::string>(job.digest_failed);
  job.digests.clear();
  SEDPACK_ASSIGN_OR_RETURN(auto gathered, GatherToRoot(comm, std::move(mine)));
  const std::size_t from = job.recorded_to;
  if (root) {
    // Item i of the rounds from first_item on is rank (i - first_item) % ranks's.
    std::vector<std::size_t> at(run.ranks(), 0);
    for (std::size_t i = from; i < end; ++i) {
      const std::size_t r = (i - run.first_item) % run.ranks();
      const std::string& lines = gathered[r];
      const std::size_t eol = lines.find('\n', at[r]);
      if (eol == std::string::npos) return Status::Internal("export-hdf5: rank ", r, " sent too few shard digests");
      const ShardInfo& shard = run.plans[run.items[i].plan].shards[run.items[i].shard];
      job.Add(static_cast<std::uint64_t>(std::max<std::int64_t>(0, shard.number_of_examples)),
              lines.substr(at[r], eol - at[r]));
      at[r] = eol + 1;
    }
  }
  const auto since = Clock::now() - job.last_record;
  SEDPACK_RETURN_NOT_OK(FlushAndRecord(run, writer));
  job.recorded_to = end;
  if (!schedule) return Status::OK();
  std::size_t next = 0;
  if (root) {
    const double seconds = std::chrono::duration<double>(since).count();
    const double wanted = std::chrono::duration<double>(job.interval).count();
    const double items = seconds > 0 ? static_cast<double>(end - from) * wanted / seconds : 0;
    next = std::max(ItemAfterRows(run, end, job.unit_rows),
                    end + static_cast<std::size_t>(std::min(items, static_cast<double>(run.items.size()))));
  }
  SEDPACK_ASSIGN_OR_RETURN(std::int64_t at, comm.AllreduceMax(static_cast<std::int64_t>(next)));
  job.record_at = static_cast<std::size_t>(at);
  return Status::OK();
}

// After the collective round starting at `base`: this rank's digest of the
// shard it wrote, and the record if one is due.
Status RecordRound(ExportRun& run, ExportWriter* writer, std::size_t base, const std::optional<ShardColumns>& mine) {
  journal_internal::JournalTimer timer;
  RootJob& job = *run.job;
  if (mine.has_value() && job.digest_failed.ok()) {
    const Item& it = run.items[base + static_cast<std::size_t>(run.comm.rank())];
    auto digest = writer->DigestWritten(it.plan, run.first_row(it), *mine);
    if (digest.ok()) {
      job.digests += *digest;
      job.digests += '\n';
    } else {
      job.digest_failed = digest.status();
    }
  }
  const std::size_t end = std::min(run.items.size(), base + run.ranks());
  if (end < job.record_at && end < run.items.size()) return Status::OK();
  return RecordTo(run, writer, end, end < run.items.size());
}

// A stop agreed by every rank before the round at `base`: the rows written
// since the last record are kept.
void RecordStop(ExportRun& run, ExportWriter* writer, std::size_t base) {
  if (run.job->recorded_to < base) (void)RecordTo(run, writer, base, false);
}

// Phase 1: every rank writes the numeric rows of its own shards, collectively.
// The str/bytes columns of its shards are kept in `variable` (one message per
// round, empty when it had no shard) for phase 2.
Status WriteFixedCollective(ExportRun& run, ExportWriter* writer, std::vector<std::string>* variable,
                            bool has_variable) {
  Comm& comm = run.comm;
  SEDPACK_ASSIGN_OR_RETURN(Handle dxpl, h5::H5Checked(H5Pcreate(H5P_DATASET_XFER), "transfer property list"));
  SEDPACK_RETURN_NOT_OK(h5::H5Check(H5Pset_dxpl_mpio(dxpl.get(), H5FD_MPIO_COLLECTIVE), "MPI-IO"));
  for (std::size_t base = run.first_item; base < run.items.size(); base += run.ranks()) {
    auto decoded = run.DecodeMine(base);
    Status mine = decoded.status();
    if (mine.ok() && decoded->has_value()) mine = CheckFixedColumns(**decoded, run.dataset.schema());
    // Shards take uneven time to decode: wait without spinning.
    SEDPACK_RETURN_NOT_OK(comm.IdleBarrier());
    Status agreed = AgreeOnStatus(comm, mine);
    if (!agreed.ok()) {
      if (run.job != nullptr && IsCancelled(agreed)) RecordStop(run, writer, base);
      return agreed;
    }
    const std::size_t k = base + static_cast<std::size_t>(comm.rank());
    const std::size_t end = std::min(run.items.size(), base + run.ranks());
    Status wrote;
    // Every rank takes part in the write of every split this round touches.
    for (std::size_t p = run.items[base].plan; p <= run.items[end - 1].plan; ++p) {
      const bool mine_here = k < end && run.items[k].plan == p && (*decoded)->examples > 0;
      Status st = mine_here
                      ? writer->WriteShard(p, run.first_row(run.items[k]), **decoded, Columns::kFixed, dxpl.get())
                      : writer->WriteNothing(p, dxpl.get());
      if (wrote.ok()) wrote = st;
    }
    for (std::size_t r = base; r < end; ++r) {
      const ShardInfo& shard = run.plans[run.items[r].plan].shards[run.items[r].shard];
      run.progress.examples_done += static_cast<std::uint64_t>(shard.number_of_examples);
    }
    if (has_variable) variable->push_back(decoded->has_value() ? h5::EncodeVariableColumns(**decoded) : std::string());
    SEDPACK_RETURN_NOT_OK(AgreeOnStatus(comm, wrote));
    writer->StartWriteback();
    if (run.job != nullptr) SEDPACK_RETURN_NOT_OK(RecordRound(run, writer, base, *decoded));
    SEDPACK_ASSIGN_OR_RETURN(std::int64_t bytes, comm.AllreduceSum(static_cast<std::int64_t>(writer->bytes())));
    run.Report(static_cast<std::uint64_t>(bytes));
  }
  return Status::OK();
}

// Phase 2: HDF5 1.10 cannot write variable-length data through MPI-IO, so
// rank 0 reopens the file serially and writes the str/bytes columns each rank
// kept, gathered round by round.
Status WriteVariableFromRoot(ExportRun& run, const std::string& temp, std::vector<std::string>* variable,
                             std::uint64_t* bytes) {
  Comm& comm = run.comm;
  const bool root = comm.rank() == 0;
  std::unique_ptr<ExportWriter> writer;
  Status opened;
  if (root) {
    auto w = ExportWriter::Reopen(temp, run.dataset, run.plans, run.options.file_system);
    if (w.ok()) {
      writer = std::move(w).value();
    } else {
      opened = w.status();
    }
  }
  SEDPACK_RETURN_NOT_OK(AgreeOnStatus(comm, opened));
  for (std::size_t round = 0; round < variable->size(); ++round) {
    const std::size_t base = round * run.ranks();
    SEDPACK_ASSIGN_OR_RETURN(auto gathered, comm.Gatherv((*variable)[round], 0));
    (*variable)[round].clear();
    (*variable)[round].shrink_to_fit();
    Status wrote;
    for (std::size_t r = 0; root && r < run.ranks() && base + r < run.items.size() && wrote.ok(); ++r) {
      auto cols = h5::DecodeColumns(gathered[r], run.dataset.schema().size());
      wrote = cols.ok() ? writer->WriteShard(run.items[base + r].plan, run.first_row(run.items[base + r]), *cols,
                                             Columns::kVariable, H5P_DEFAULT)
                        : cols.status();
    }
    SEDPACK_RETURN_NOT_OK(AgreeOnStatus(comm, wrote));
    if (root) writer->StartWriteback();
  }
  Status closed;
  if (root) {
    closed = writer->Close();
    *bytes += writer->bytes();
  }
  return AgreeOnStatus(comm, closed);
}

// Every rank opens `temp` through MPI-IO, writes its rows, and closes it.
// Journaled (numeric columns only), rank 0 first checks what an earlier run
// left, serially, and every rank then reopens the kept file.
Status WriteCollective(ExportRun& run, const std::string& out, const std::string& temp) {
  Comm& comm = run.comm;
  SEDPACK_ASSIGN_OR_RETURN(Handle fapl, h5::H5Checked(H5Pcreate(H5P_FILE_ACCESS), "file access property list"));
  SEDPACK_RETURN_NOT_OK(h5::H5Check(H5Pset_fapl_mpio(fapl.get(), MPI_COMM_WORLD, MPI_INFO_NULL),
                                    "MPI-IO"));
  // The metadata is the same on every rank: written once, collectively.
  SEDPACK_RETURN_NOT_OK(h5::H5Check(H5Pset_coll_metadata_write(fapl.get(), true), "MPI-IO"));
  Status checked;
  if (run.job != nullptr && comm.rank() == 0) checked = ReopenKept(run, out, temp).status();
  SEDPACK_RETURN_NOT_OK(AgreeOnStatus(comm, checked));
  SEDPACK_RETURN_NOT_OK(ShareKept(run));
  if (run.job != nullptr) {
    run.job->recorded_to = run.first_item;
    run.job->record_at = ItemAfterRows(run, run.first_item, run.job->unit_rows);
  }
  auto created = run.first_item > 0 ? ExportWriter::Reopen(temp, run.dataset, run.plans, run.options.file_system, fapl.get())
                                    : ExportWriter::Create(temp, run.dataset, run.plans, run.options, fapl.get());
  SEDPACK_RETURN_NOT_OK(AgreeOnStatus(comm, created.status()));
  std::unique_ptr<ExportWriter> writer = std::move(created).value();
  bool has_variable = false;
  for (const AttributeSpec& a : run.dataset.schema()) has_variable = has_variable || h5::VariableLength(a.dtype);
  std::vector<std::string> variable;
  SEDPACK_RETURN_NOT_OK(WriteFixedCollective(run, writer.get(), &variable, has_variable));
  SEDPACK_RETURN_NOT_OK(AgreeOnStatus(comm, writer->Close()));
  SEDPACK_ASSIGN_OR_RETURN(std::int64_t fixed_bytes, comm.AllreduceSum(static_cast<std::int64_t>(writer->bytes())));
  writer.reset();
  std::uint64_t bytes = static_cast<std::uint64_t>(fixed_bytes);
  if (has_variable) SEDPACK_RETURN_NOT_OK(WriteVariableFromRoot(run, temp, &variable, &bytes));
  run.progress.bytes_done = bytes;
  return Status::OK();
}

#else

Result<bool> CanWriteCollectively(Comm&, const std::string&) { return false; }
Status WriteCollective(ExportRun&, const std::string&, const std::string&) {
  return Status::Internal("export-hdf5: built without parallel HDF5");
}

#endif  // SEDPACK_HDF5_MPIIO

// Rank 0 alone creates (or reopens) the file and writes what every rank decoded.
Status WriteFromRoot(ExportRun& run, const std::string& out, const std::string& temp) {
  const bool root = run.comm.rank() == 0;
  std::unique_ptr<ExportWriter> writer;
  Status created;
  if (root) {
    auto w = OpenRootWriter(run, out, temp);
    if (w.ok()) {
      writer = std::move(w).value();
    } else {
      created = w.status();
    }
  }
  SEDPACK_RETURN_NOT_OK(AgreeOnStatus(run.comm, created));
  SEDPACK_RETURN_NOT_OK(ShareKept(run));
  Status wrote = WriteGathered(run, writer.get());
  if (!wrote.ok()) {
    // A stop (SIGTERM at a time limit) keeps the rows written since the last record.
    if (root && IsCancelled(wrote) && run.job != nullptr && run.job->pending.bytes > 0) {
      (void)JournalPending(*run.job, writer.get());
    }
    return wrote;
  }
  Status closed = root ? writer->Close() : Status::OK();
  return AgreeOnStatus(run.comm, closed);
}

// The least time between two records: a record flushes the library's
// buffers (cheap once a second, not every few MiB). Tests that stop an export
// at a record on any machine set another (TestRecordInterval).
std::chrono::milliseconds RecordInterval() {
  return TestRecordInterval().value_or(journal_internal::JournalWriter::kSyncInterval);
}

// What identifies the file an export writes (the number of ranks does not:
// every rank count writes the same file).
journal_internal::JobParameters H5JobParameters(const Dataset& ds, const std::vector<SplitPlan>& plans,
                                                const Hdf5ExportOptions& o) {
  std::string splits, rows;
  std::vector<ShardInfo> all;
  for (const SplitPlan& p : plans) {
    splits += (splits.empty() ? "" : " ") + std::string(SplitName(p.split));
    rows += (rows.empty() ? "" : " ") + std::to_string(p.rows);
    all.insert(all.end(), p.shards.begin(), p.shards.end());
  }
  return {{"command", "export-hdf5"},
          {"dataset", ds.root()},
          {"splits", splits},
          {"rows", rows},
          {"deflate", std::to_string(o.deflate_level)},
          {"chunk_rows", std::to_string(o.chunk_rows)},
          {"dataset_info", journal_internal::DigestOf(SerializeDatasetInfo(ds.info()))},
          {"shards", journal_internal::DigestOfShards(all)}};
}

}  // namespace

Result<Hdf5ExportSummary> ExportHdf5(Comm& comm, std::shared_ptr<const Dataset> dataset, const std::string& out,
                                     const Hdf5ExportOptions& options) {
  const auto start = Clock::now();
  h5::SilenceLibraryErrors();
  const bool root = comm.rank() == 0;
  auto planned = PlanSplits(dataset, options);
  Status ready = planned.status();
  if (ready.ok() && root && PathExists(out)) {
    ready = Status::AlreadyExists("export-hdf5: ", out, " exists (remove it or choose another name)");
  }
  SEDPACK_RETURN_NOT_OK(AgreeOnStatus(comm, ready));
  const std::vector<SplitPlan>& plans = *planned;
  // Rank 0's process id names the temporary file for every rank.
  std::string temp = out + ".partial-" + std::to_string(::getpid());
  SEDPACK_RETURN_NOT_OK(comm.Bcast(&temp, 0));
  ExportRun run{comm, *dataset, plans, {}, options, start, {}};
  for (std::size_t p = 0; p < plans.size(); ++p) {
    for (std::size_t i = 0; i < plans[p].shards.size(); ++i) run.items.push_back({p, i});
    run.progress.examples_total += plans[p].rows;
  }
  SEDPACK_ASSIGN_OR_RETURN(bool collective, CanWriteCollectively(comm, temp));
  collective = collective && !run.items.empty();
  bool has_variable = false;
  for (const AttributeSpec& a : dataset->schema()) has_variable = has_variable || h5::VariableLength(a.dtype);
  RootJob job;
  std::string gathered_note;
  if (options.journal && collective && has_variable) {
    // Its str/bytes columns are written after all the numeric ones: no row
    // would be finished before the end, so rank 0 writes such a file alone.
    collective = false;
    gathered_note = "str/bytes attributes: rank 0 writes the file (--no-journal writes it collectively)";
  }
  if (options.journal) {
    // A fixed name, so that a rerun finds the unfinished file.
    temp = journal_internal::ExportPathsFor(out).partial;
    job.temp = temp;
    job.params = H5JobParameters(*dataset, plans, options);
    // About 32 MiB of values, and at least 16 records in a job.
    std::uint64_t row_bytes = 0;
    for (const AttributeSpec& a : dataset->schema()) row_bytes += h5::VariableLength(a.dtype) ? 16 : a.FixedByteSize().ValueOr(1);
    const std::uint64_t per_unit = std::max<std::uint64_t>(1, (32ULL << 20) / std::max<std::uint64_t>(1, row_bytes));
    job.unit_rows = std::max<std::uint64_t>(1, std::min(per_unit, (run.progress.examples_total + 15) / 16));
    job.interval = RecordInterval();
    run.job = &job;
  }
  Status wrote = collective ? WriteCollective(run, out, temp) : WriteFromRoot(run, out, temp);
  // The HDF5 library wrote the file; it becomes the output only once its bytes
  // and then its name are on disk (the journal goes first: a kill between the
  // two leaves an unfinished file a rerun starts over).
  if (wrote.ok() && root && job.journal) wrote = job.journal->Remove();
  if (wrote.ok() && root) wrote = MoveIntoPlace(temp, out, "export-hdf5");
  wrote = AgreeOnStatus(comm, wrote);
  if (!wrote.ok()) {
    const bool resumable = IsCancelled(wrote) || wrote.code() == StatusCode::kIOError || CancellationRequested();
    // Only what this run made is removed: a refused rerun leaves the earlier run's files.
    if (root && (run.job == nullptr || (job.journal && !resumable))) {
      (void)RemoveTree(temp);
      if (job.journal) (void)job.journal->Remove();
    }
    return wrote;
  }
  Hdf5ExportSummary s;
  if (run.job != nullptr) {
    s.job_id = journal_internal::ExportJobId(job.params);
    s.units = run.items.size();
    s.kept_units = job.kept;
    s.resumed = job.resumed;
    s.journal_note = job.note.empty() || gathered_note.empty() ? job.note + gathered_note
                                                               : job.note + "; " + gathered_note;
  }
  s.examples = run.progress.examples_total;
  s.splits = plans.size();
  s.shards = run.items.size();
  s.bytes = run.progress.bytes_done;
  s.seconds = SecondsSince(start);
  if (root && options.progress) {
    run.progress.finished = true;
    run.progress.seconds = s.seconds;
    options.progress(run.progress);
  }
  return s;
}

std::string Hdf5LibraryDescription() { return h5::LibraryDescription(); }

}  // namespace sedpack
