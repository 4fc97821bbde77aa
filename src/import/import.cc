// SPDX-License-Identifier: Apache-2.0
// The import engine: cut rows into per-rank ranges, read blocks, write them
// through the DistributedWriter. See import_internal.h for the contract.
#include "import/import_internal.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <thread>

#include "comm/progress_internal.h"
#include "io/output_folder.h"
#include "io/timestamp.h"
#include "journal/resume_internal.h"
#include "sedpack/codecs/hash.h"
#include "parallel/worker_pool.h"
#include "sedpack/cancel.h"
#include "sedpack/dataset/dataset.h"
#include "sedpack/io/file.h"
#include "sedpack/mpi/distributed_write.h"

namespace sedpack::import_internal {

ImportSource::~ImportSource() = default;

Result<const JsonValue*> ImportSource::RowMetadata(std::uint64_t) { return nullptr; }

namespace {

constexpr std::uint64_t kMinShardBudget = 1ULL << 20;
constexpr std::uint64_t kMaxShardBudget = 1ULL << 30;

std::uint64_t SplitRows(const ImportSplit& sp) {
  std::uint64_t n = 0;
  for (const auto& [first, last] : sp.rows) n += last - first;
  return n;
}

// Global cut points of a split for `ranks` ranks: near-equal shares, each cut
// moved to the nearest preferred block boundary of its input (or the input's
// edge), so that no two ranks decompress the same chunk.
std::vector<std::uint64_t> CutPoints(const ImportSplit& sp, int ranks) {
  std::vector<std::uint64_t> offset;
  std::uint64_t total = 0;
  for (const auto& [first, last] : sp.rows) {
    offset.push_back(total);
    total += last - first;
  }
  std::vector<std::uint64_t> cuts(static_cast<std::size_t>(ranks) + 1, 0);
  cuts.back() = total;
  for (int r = 1; r < ranks; ++r) {
    const std::uint64_t ideal = static_cast<std::uint64_t>((static_cast<unsigned __int128>(total) * r) / ranks);
    std::size_t f = 0;  // the input holding `ideal`
    while (f + 1 < offset.size() && offset[f + 1] <= ideal) ++f;
    const auto [lo, hi] = sp.rows[f];
    const std::uint64_t local = lo + (ideal - offset[f]);
    const std::uint64_t cr = sp.inputs[f]->preferred_block_rows();
    std::uint64_t snapped = local;
    if (cr > 1) {
      const std::uint64_t down = std::max(lo, local / cr * cr);
      const std::uint64_t up = std::min(hi, (local + cr - 1) / cr * cr);
      snapped = (local - down <= up - local) ? down : up;
    }
    cuts[static_cast<std::size_t>(r)] = std::max(cuts[static_cast<std::size_t>(r) - 1], offset[f] + (snapped - lo));
  }
  for (int r = ranks - 1; r > 0; --r) {
    cuts[static_cast<std::size_t>(r)] = std::min(cuts[static_cast<std::size_t>(r)], cuts[static_cast<std::size_t>(r) + 1]);
  }
  return cuts;
}

// A read of a chunked HDF5 dataset holds a few kB of HDF5's own for every
// chunk it touches until it returns (its chunk map): a block of the whole
// budget over chunks of 80 rows held 206 MB to import 200,000 rows.
constexpr std::uint64_t kMaxChunksPerBlock = 256;

// End of the block starting at row `r` of a segment ending at `hi`: whole
// preferred blocks where the budget allows, at most kMaxChunksPerBlock of them.
std::uint64_t BlockEnd(std::uint64_t r, std::uint64_t hi, std::uint64_t block_rows, std::uint64_t chunk_rows) {
  if (chunk_rows > 1) block_rows = std::min(block_rows, chunk_rows * kMaxChunksPerBlock);
  std::uint64_t end = r + block_rows;
  if (chunk_rows > 1 && block_rows >= chunk_rows) {
    const std::uint64_t aligned = end / chunk_rows * chunk_rows;
    if (aligned > r) end = aligned;
  }
  return std::min(end, hi);
}

class Importer {
 public:
  Importer(Comm& comm, std::span<ImportSplit> splits, DistributedWriter& writer, const ImportJob& job)
      : comm_(comm), splits_(splits), writer_(writer), job_(job), progress_(comm) {}

  Status Run(std::array<std::uint64_t, 3>* examples) {
    start_ = std::chrono::steady_clock::now();
    for (const ImportSplit& sp : splits_) {
      global_rows_ += SplitRows(sp);
      global_bytes_ += SplitRows(sp) * sp.row_bytes;
    }
    for (ImportSplit& sp : splits_) {
      const std::vector<std::uint64_t> cuts = CutPoints(sp, comm_.size());
      const std::uint64_t g1 = cuts[comm_.rank() + 1];
      // The rows an earlier run of a resumable job kept are not read again.
      const std::uint64_t g0 = std::min(g1, cuts[comm_.rank()] + writer_.kept_examples(sp.split));
      std::uint64_t f0 = 0;
      for (std::size_t f = 0; f < sp.inputs.size() && g0 < g1; ++f) {
        const std::uint64_t f1 = f0 + (sp.rows[f].second - sp.rows[f].first);
        const std::uint64_t a = std::max(g0, f0), b = std::min(g1, f1);
        if (a < b) {
          const std::uint64_t lo = sp.rows[f].first + (a - f0), hi = sp.rows[f].first + (b - f0);
          Status st = Segment(sp, *sp.inputs[f], lo, hi);
          sp.inputs[f]->Release();
          SEDPACK_RETURN_NOT_OK(st);
          (*examples)[static_cast<int>(sp.split)] += hi - lo;
        }
        f0 = f1;
      }
    }
    return Status::OK();
  }

  std::uint64_t bytes_read() const { return bytes_read_; }

  double max_rounding_error() const {
    double e = 0;
    for (const ImportSplit& sp : splits_) {
      for (const auto& in : sp.inputs) e = std::max(e, in->max_rounding_error());
    }
    return e;
  }

  // Called once on every rank after Run, whatever it returned, so that rank 0
  // never waits for a rank that stopped early.
  void FinalReport() { Report(true); }

 private:
  Status Segment(const ImportSplit& sp, ImportSource& in, std::uint64_t lo, std::uint64_t hi) {
    const std::vector<AttributeSpec>& fields = in.fields();
    const std::size_t na = fields.size();
    std::vector<ImportColumn> columns;
    std::vector<ValueView> values(na);
    for (std::size_t a = 0; a < na; ++a) {
      values[a].dtype = fields[a].dtype;
      values[a].shape = fields[a].shape;
    }
    const std::uint64_t chunk_rows = in.preferred_block_rows();
    for (std::uint64_t r = lo; r < hi;) {
      SEDPACK_RETURN_NOT_OK(CheckCancelled());
      const std::uint64_t end = BlockEnd(r, hi, job_.sizing.block_rows, chunk_rows);
      const std::uint64_t n = end - r;
      SEDPACK_RETURN_NOT_OK(in.ReadBlock(r, n, &columns));
      bytes_read_ += n * sp.row_bytes;
      for (std::uint64_t i = 0; i < n; ++i) {
        for (std::size_t a = 0; a < na; ++a) {
          const ImportColumn& c = columns[a];
          const std::byte* row = c.offsets ? c.data + c.offsets[i] : c.data + i * c.stride;
          std::size_t len = c.offsets ? c.offsets[i + 1] - c.offsets[i] : c.bytes;
          if (c.trim_nul) {
            while (len > 0 && row[len - 1] == std::byte{0}) --len;
          }
          values[a].data = std::span<const std::byte>(row, len);
        }
        SEDPACK_ASSIGN_OR_RETURN(const JsonValue* meta, in.RowMetadata(i));
        Status st = writer_.WriteExample(sp.split, values, meta);
        if (!st.ok()) {
          if (!job_.name_rows_in_write_errors || DistributedWriter::IsAbort(st)) return st;
          return st.WithPrefix(in.Describe() + ": row " + std::to_string(r + i) + ": ");
        }
      }
      rows_done_ += n;
      Report(false);
      r = end;
    }
    return Status::OK();
  }

  ImportProgress Totals() {
    (void)progress_.Poll();  // a lost progress message only delays the numbers
    ImportProgress g;
    g.rows_done = progress_.Total(rows_done_);
    g.rows_total = global_rows_;
    g.bytes_total = global_bytes_;
    g.bytes_done = global_rows_ ? static_cast<std::uint64_t>(static_cast<double>(global_bytes_) * g.rows_done /
                                                           static_cast<double>(global_rows_))
                                : 0;
    g.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    return g;
  }

  // Rank 0 reports the sum over ranks; the others send their row counts to it.
  void Report(bool final) {
    if (!progress_.is_root()) {
      progress_.Send(rows_done_, final);
      return;
    }
    const auto now = std::chrono::steady_clock::now();
    if (!final && now - last_report_ < std::chrono::milliseconds(200)) return;
    last_report_ = now;
    if (!final) {
      if (job_.progress) job_.progress(Totals());
      return;
    }
    if (comm_.size() > 1) {
      progress_.WaitForOthersFinal([&] {
        if (job_.progress) job_.progress(Totals());
      });
    }
    ImportProgress g = Totals();
    g.finished = true;
    if (job_.progress) job_.progress(g);
  }

  Comm& comm_;
  std::span<ImportSplit> splits_;
  DistributedWriter& writer_;
  const ImportJob& job_;
  internal::RankProgress progress_;
  std::uint64_t rows_done_ = 0, bytes_read_ = 0;
  std::uint64_t global_rows_ = 0, global_bytes_ = 0;
  std::chrono::steady_clock::time_point start_, last_report_;
};

Status CheckOutputFree(const std::string& out, std::string_view who, FileSystem* fs, bool* existed) {
  *existed = PathExists(out, fs);
  if (*existed && !IsEmptyDirectory(out, fs)) {
    return Status::AlreadyExists(out, " already exists; ", who,
                                 " writes a new dataset, choose a new or empty folder");
  }
  return Status::OK();
}

Result<ImportResult> Summarize(Comm& comm, const Importer& importer, DistributedWriter& writer,
                               const std::array<std::uint64_t, 3>& examples, const ImportJob& job) {
  ImportResult summary;
  for (int s = 0; s < 3; ++s) {
    SEDPACK_ASSIGN_OR_RETURN(std::int64_t n, comm.AllreduceSum(static_cast<std::int64_t>(examples[s])));
    summary.examples[s] = static_cast<std::uint64_t>(n);
    summary.examples_total += summary.examples[s];
  }
  SEDPACK_ASSIGN_OR_RETURN(std::int64_t bytes, comm.AllreduceSum(static_cast<std::int64_t>(importer.bytes_read())));
  summary.source_bytes = static_cast<std::uint64_t>(bytes);
  // The largest rounding error over all ranks: non-negative doubles order as
  // their bit patterns do, so the integer maximum is the double maximum.
  std::int64_t bits;
  const double e = importer.max_rounding_error();
  std::memcpy(&bits, &e, 8);
  SEDPACK_ASSIGN_OR_RETURN(std::int64_t max_bits, comm.AllreduceMax(bits));
  std::memcpy(&summary.max_rounding_error, &max_bits, 8);
  summary.job_id = writer.job_id();
  summary.kept_shards = writer.kept_shards();
  summary.journal_shards = writer.journal_shards();
  SEDPACK_ASSIGN_OR_RETURN(summary.root_checksums, writer.dataset()->MetadataChecksums());
  summary.block_rows = job.sizing.block_rows;
  summary.shard_byte_budget = job.sizing.shard_byte_budget;
  summary.write_threads = job.sizing.threads;
  summary.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - job.start).count();
  return summary;
}

}  // namespace

ImportSizing ChooseImportSizing(std::uint64_t budget, int threads, std::uint64_t row_bytes, std::uint64_t reserved) {
  ImportSizing s;
  s.threads = ResolveThreads(threads);
  s.shard_byte_budget = std::clamp<std::uint64_t>(budget / 2 / (2 * (2 * static_cast<std::uint64_t>(s.threads) + 1)),
                                                  kMinShardBudget, kMaxShardBudget);
  s.block_rows = std::max<std::uint64_t>(1, (budget / 2 - reserved) / std::max<std::uint64_t>(row_bytes, 1));
  return s;
}

namespace {

// A resumable import's job id and parameters: one job per new dataset, so a
// rerun with other inputs or options finds the journal and is refused.
void SetUpResume(const Comm& comm, std::span<const ImportSplit> splits, const ImportJob& job,
                 DistributedWriteOptions* wo) {
  wo->job_id = job.job_id.empty() ? journal_internal::JobIdFor(std::string(job.who) + " into a new dataset") : job.job_id;
  wo->resume_parameters = job.resume_parameters;
  DatasetInfo info;
  info.metadata = job.metadata;
  info.dataset_structure = job.structure;
  std::string text = SerializeDatasetInfo(info);
  for (const ImportSplit& sp : splits) {
    text += "\n" + std::string(SplitName(sp.split));
    for (const auto& [first, last] : sp.rows) text += " " + std::to_string(first) + "-" + std::to_string(last);
  }
  auto digest = HashBytes(std::vector<HashAlgorithm>{HashAlgorithm::kSha256},
                          std::as_bytes(std::span<const char>(text.data(), text.size())));
  // The options a user changes between runs, each by name, before the digest
  // of everything (metadata, row ranges): a refused rerun names the first
  // parameter that differs ("examples per shard: the journal has 500, this run
  // 400") where a digest would only say that something did.
  for (auto& p : journal_internal::StructureParameters(job.structure)) wo->resume_parameters.push_back(std::move(p));
  std::string rows;
  for (const ImportSplit& sp : splits) {
    std::uint64_t n = 0;
    for (const auto& [first, last] : sp.rows) n += last - first;
    rows += (rows.empty() ? "" : ", ") + std::string(SplitName(sp.split)) + " " + std::to_string(n);
  }
  wo->resume_parameters.emplace_back("rows", rows);
  wo->resume_parameters.emplace_back("structure and rows", digest.ok() ? (*digest)[0].substr(0, 16) : "?");
  wo->resume_parameters.emplace_back("level", std::to_string(job.level));
  wo->resume_parameters.emplace_back("shard byte budget", std::to_string(job.sizing.shard_byte_budget));
  wo->resume_parameters.emplace_back("ranks", std::to_string(comm.size()));
  wo->restart = job.restart;
}

}  // namespace

std::vector<std::pair<std::string, std::string>> InputParameters(const std::vector<std::string>& inputs,
                                                                 FileSystem* fs) {
  std::vector<std::pair<std::string, std::string>> out;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    FileStat st;
    std::string v = inputs[i];
    if (FileSystemOr(fs).Stat(inputs[i].c_str(), &st) == 0) {
      v += " (" + std::to_string(st.size) + " bytes, modified " + io_internal::UtcTimestampNs(st.mtime_ns) + ")";
    }
    out.emplace_back("input " + std::to_string(i + 1), std::move(v));
  }
  return out;
}

namespace {

// Whether `out` holds rank 0's journal of the resumable job: a stopped run to resume.
bool HoldsJournal(const std::string& out, const DistributedWriteOptions& wo, FileSystem* fs) {
  return !wo.resume_parameters.empty() && PathExists(JoinRoot(out, journal_internal::JournalPath(wo.job_id, 0)), fs);
}

}  // namespace

Result<ImportResult> Import(Comm& comm, const Status& planned, std::span<ImportSplit> splits, const std::string& out,
                            const ImportJob& job) {
  const bool resumable = !job.resume_parameters.empty();
  DistributedWriteOptions wo;
  if (resumable) SetUpResume(comm, splits, job, &wo);
  // 1. Check everything before anything is created.
  bool existed = false;
  Status local = planned;
  if (local.ok() && comm.rank() == 0 && !HoldsJournal(out, wo, job.file_system)) {
    if (resumable) journal_internal::ClearUnstartedJournal(out, job.file_system);
    local = CheckOutputFree(out, job.who, job.file_system, &existed);
    if (local.ok() && resumable) {
      local = journal_internal::StartJournal(out, wo.job_id, wo.resume_parameters, job.file_system);
    }
  }
  SEDPACK_RETURN_NOT_OK(AgreeOnStatus(comm, local));

  // 2. Open the writer (rank 0 creates the dataset) and import this rank's rows.
  wo.create_metadata = job.metadata;
  wo.create_structure = job.structure;
  if (!resumable) wo.job_id = job.job_id;
  wo.file_system = job.file_system;
  wo.filler.concurrency = job.sizing.threads;
  wo.filler.max_pending_shards = job.sizing.threads;
  wo.filler.shard_byte_budget = job.sizing.shard_byte_budget;
  wo.filler.codec.level = job.level;
  auto writer = DistributedWriter::Open(comm, out, wo);
  if (!writer.ok()) {
    if (comm.rank() == 0 && !resumable) io_internal::RestoreOutputFolder(out, existed, job.file_system);
    return writer.status();
  }
  std::array<std::uint64_t, 3> examples{};
  Importer importer(comm, splits, **writer, job);
  Status mine = importer.Run(&examples);
  if (!mine.ok()) (*writer)->Fail(mine);
  importer.FinalReport();
  Status finished = (*writer)->Finish();
  // A resumable job keeps its dataset and the shards its journals name.
  if (!finished.ok() && resumable) return finished;
  if (!finished.ok()) {
    // Every rank removes its own shards, then rank 0 the dataset it created.
    for (Split s : AllSplits()) {
      (void)RemoveTree((std::filesystem::path(out) / SplitName(s) / (*writer)->RankFolder()).string(), job.file_system);
    }
    (void)comm.Barrier();
    if (comm.rank() == 0) io_internal::RestoreOutputFolder(out, existed, job.file_system);
    (void)comm.Barrier();
    return finished;
  }
  return Summarize(comm, importer, **writer, examples, job);
}

}  // namespace sedpack::import_internal
