// SPDX-License-Identifier: Apache-2.0
// TRS v2 export: the split is counted from its shard lists (NUMBER_TRACES
// goes first in the header), then streamed example by example into records.
#include <fcntl.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <random>
#include <unordered_set>
#include <utility>

#include "sedpack/capture/export.h"
#include "capture/export_trs_internal.h"
#include "capture/trs_internal.h"
#include "io/kill_point.h"
#include "journal/exports_internal.h"
#include "journal/journal_internal.h"
#include "journal/stats_internal.h"
#include "parallel/worker_pool.h"
#include "sedpack/cancel.h"
#include "sedpack/dataset/reader.h"
#include "sedpack/io/file.h"
#include "sedpack/io/file_system.h"
#include "sedpack/value.h"

namespace sedpack {
namespace {
using trs_export_internal::Column;
using trs_export_internal::ExportPlan;
using trs_export_internal::Widen;

template <typename S, typename D>
void WidenCopy(const std::byte* in, std::uint64_t n, std::byte* out) {
  for (std::uint64_t i = 0; i < n; ++i) {
    S s;
    std::memcpy(&s, in + i * sizeof(S), sizeof(S));
    const D d = static_cast<D>(s);
    std::memcpy(out + i * sizeof(D), &d, sizeof(D));
  }
}

template <typename S>
bool NarrowToI32(const std::byte* in, std::uint64_t n, std::byte* out, std::uint64_t* bad) {
  for (std::uint64_t i = 0; i < n; ++i) {
    S s;
    std::memcpy(&s, in + i * sizeof(S), sizeof(S));
    if (!std::in_range<std::int32_t>(s)) {
      *bad = i;
      return false;
    }
    const auto d = static_cast<std::int32_t>(s);
    std::memcpy(out + i * 4, &d, 4);
  }
  return true;
}

// Copy one value into the record. False when a checked step cannot be exact
// (*bad: the element); float64 -> float32 errors are allowed with `round`
// (the largest goes to *max_err).
bool Put(const Column& c, const ValueView& v, bool round, std::byte* out, double* max_err, std::uint64_t* bad) {
  const std::byte* in = v.data.data();
  switch (c.widen) {
    case Widen::kNone: std::memcpy(out, in, c.out_bytes); return true;
    case Widen::kU8ToI16: WidenCopy<std::uint8_t, std::int16_t>(in, c.elements, out); return true;
    case Widen::kI8ToI16: WidenCopy<std::int8_t, std::int16_t>(in, c.elements, out); return true;
    case Widen::kU16ToI32: WidenCopy<std::uint16_t, std::int32_t>(in, c.elements, out); return true;
    case Widen::kU32ToI64: WidenCopy<std::uint32_t, std::int64_t>(in, c.elements, out); return true;
    case Widen::kBoolToI8:
      for (std::uint64_t i = 0; i < c.elements; ++i) out[i] = std::byte{in[i] != std::byte{0}};
      return true;
    case Widen::kU32ToI32: return NarrowToI32<std::uint32_t>(in, c.elements, out, bad);
    case Widen::kI64ToI32: return NarrowToI32<std::int64_t>(in, c.elements, out, bad);
    case Widen::kU64ToI32: return NarrowToI32<std::uint64_t>(in, c.elements, out, bad);
    case Widen::kF16ToF32:
      for (std::uint64_t i = 0; i < c.elements; ++i) {
        Float16 h;
        std::memcpy(&h.bits, in + 2 * i, 2);
        const float f = h.ToFloat();
        std::memcpy(out + 4 * i, &f, 4);
      }
      return true;
    case Widen::kF64ToF32:
      for (std::uint64_t i = 0; i < c.elements; ++i) {
        double d;
        std::memcpy(&d, in + 8 * i, 8);
        const float f = static_cast<float>(d);
        const double e = std::isnan(d) ? 0.0 : std::fabs(static_cast<double>(f) - d);
        if (e > 0 || (std::isinf(f) && !std::isinf(d))) {
          if (!round) {
            *bad = i;
            return false;
          }
          *max_err = std::max(*max_err, std::isinf(f) ? HUGE_VAL : e);
        }
        std::memcpy(out + 4 * i, &f, 4);
      }
      return true;
  }
  return true;
}

// The TRS file being written: a temporary file of its own (no journal), or the
// journaled job's unfinished file, which a failure leaves for the rerun when
// Keep() was called. In the journaled file every byte written also feeds the
// hash of the current row range (the temporary file of an unjournaled export
// needs none): as the caller builds it (Hash, while it is in cache), or else
// as Write writes it.
class OutFile {
 public:
  explicit OutFile(FileSystem& fs) : fs_(fs) {}
  ~OutFile() {
    if (fd_ >= 0) fs_.Close(fd_);
    if (!tmp_.empty() && !keep_) fs_.Unlink(tmp_.c_str());
  }
  Status OpenTemporary(const std::string& out) {
    std::random_device rd;
    const std::filesystem::path p(out);
    return OpenAt(out, (p.has_parent_path() ? p.parent_path().string() + "/" : std::string()) + "." +
                           p.filename().string() + ".part-" + std::to_string(rd()),
                  O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0);
  }
  // The unfinished file `partial`, cut to its first `keep` bytes (appended after).
  Status OpenPartial(const std::string& out, const std::string& partial, std::uint64_t keep) {
    SEDPACK_RETURN_NOT_OK(OpenAt(out, partial, O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC, keep));
    written_ = keep;
    hashing_ = true;
    return Status::OK();
  }
  // Write `b`, of which the first `hashed` bytes went through Hash already.
  Status Write(std::span<const std::byte> b, std::size_t hashed = 0) {
    std::size_t done = 0;
    while (done < b.size()) {
      const long r = fs_.Write(fd_, b.data() + done, b.size() - done);
      if (r < 0 && errno == EINTR) continue;
      if (r < 0) return Status::IOError(out_, ": write failed: ", std::strerror(errno));
      done += static_cast<std::size_t>(r);
    }
    if (hashing_ && hashed < b.size()) hash_.Update(b.data() + hashed, b.size() - hashed);
    written_ += b.size();
    return Status::OK();
  }
  // Cut the file back to its first `keep` bytes (the next Write appends there)
  // and drop what the range hash was fed since its last Finish.
  Status CutTo(std::uint64_t keep) {
    if (fs_.Ftruncate(fd_, static_cast<std::int64_t>(keep)) != 0) {
      return Status::IOError(tmp_, ": cannot truncate: ", std::strerror(errno));
    }
    written_ = keep;
    (void)hash_.Finish();
    return Status::OK();
  }
  // Feed bytes the next Write will write to the range's hash (a journaled file only).
  void Hash(std::span<const std::byte> b) {
    if (hashing_) hash_.Update(b.data(), b.size());
  }
  bool hashing() const { return hashing_; }
  Status Sync() {
    if (fs_.Fsync(fd_) != 0) return Status::IOError(out_, ": fsync failed: ", std::strerror(errno));
    return Status::OK();
  }
  // A hint (FileSystem::StartWriteback): a failure shows in the fsync of Commit.
  void StartWriteback(std::uint64_t offset, std::uint64_t bytes) {
    (void)fs_.StartWriteback(fd_, static_cast<std::int64_t>(offset), static_cast<std::int64_t>(bytes));
  }
  Status Commit() {
    SEDPACK_RETURN_NOT_OK(Sync());
    fs_.Close(fd_);
    fd_ = -1;
    if (fs_.RenameNoReplace(tmp_.c_str(), out_.c_str()) != 0) {
      const int e = errno;
      if (e == EEXIST) return Status::AlreadyExists(out_, " already exists; export-trs does not overwrite");
      return Status::IOError(out_, ": rename failed: ", std::strerror(e));
    }
    tmp_.clear();
    return Status::OK();
  }
  void Keep() { keep_ = true; }
  std::uint64_t written() const { return written_; }
  journal_internal::RangeHasher& hash() { return hash_; }

 private:
  Status OpenAt(const std::string& out, std::string tmp, int flags, std::uint64_t keep) {
    out_ = out;
    fd_ = fs_.Open(tmp.c_str(), flags, 0644);
    if (fd_ < 0) return Status::IOError(out, ": cannot create ", tmp, ": ", std::strerror(errno));
    tmp_ = std::move(tmp);
    if (fs_.Ftruncate(fd_, static_cast<std::int64_t>(keep)) != 0) {
      return Status::IOError(tmp_, ": cannot truncate: ", std::strerror(errno));
    }
    return Status::OK();
  }
  FileSystem& fs_;
  std::string out_, tmp_;
  int fd_ = -1;
  bool keep_ = false;
  bool hashing_ = false;
  std::uint64_t written_ = 0;
  journal_internal::RangeHasher hash_;
};

// A row range of the journaled job: whole shards up to shard_end, rows
// [first, first + rows) of the split.
struct Unit {
  std::size_t shard_end = 0;
  std::uint64_t first = 0, rows = 0;
};

// Ranges of whole shards of at least `target` rows each (the last may hold fewer).
std::vector<Unit> PlanUnits(const std::vector<ShardInfo>& shards, std::uint64_t target) {
  std::vector<Unit> units;
  Unit u;
  for (std::size_t i = 0; i < shards.size(); ++i) {
    u.rows += static_cast<std::uint64_t>(std::max<std::int64_t>(0, shards[i].number_of_examples));
    u.shard_end = i + 1;
    if (u.rows >= target) {
      units.push_back(u);
      u = Unit{0, u.first + u.rows, 0};
    }
  }
  if (u.rows > 0) {
    units.push_back(u);
  } else if (!units.empty()) {
    units.back().shard_end = shards.size();
  }
  return units;
}

std::size_t MatchingRanges(FileSystem& fs, int fd, std::uint64_t offset,
                           std::span<const journal_internal::RowRange> ranges, const std::atomic<bool>* stop);

// The check of the row ranges a rerun takes over, on a thread of its own beside
// the export of the rest: it reads back what the earlier run wrote (mostly from
// the page cache) and hashes it, which cost a rerun stopped at 45% about a
// tenth of its time when it came first. The export goes on as if every range
// planned were good; a bad one found sends it back there (WriteAndCommit), so
// nothing after a bad range is committed. Only reads: the file's writes after
// the kept ranges never touch the bytes it checks.
class KeptRangeCheck {
 public:
  KeptRangeCheck() = default;
  KeptRangeCheck(const KeptRangeCheck&) = delete;
  KeptRangeCheck& operator=(const KeptRangeCheck&) = delete;
  ~KeptRangeCheck() { Cancel(); }

  // Check `ranges` of `path` (they follow each other from `offset`).
  void Start(FileSystem& fs, std::string path, std::uint64_t offset, std::vector<journal_internal::RowRange> ranges) {
    fs_ = &fs;
    path_ = std::move(path);
    offset_ = offset;
    ranges_ = std::move(ranges);
    started_ = true;
    thread_ = internal::StartThreads(1, [this](int) {
      journal_internal::MarkJournalBackgroundThread();
      Run();
    });
    if (thread_.empty()) Run();  // no thread to be had: check here, before the export goes on
  }
  bool started() const { return started_; }
  std::size_t planned() const { return ranges_.size(); }
  // True once the check has ended on a range whose bytes differ from its record.
  bool FoundBad() const { return done_.load(std::memory_order_acquire) && good_ < ranges_.size(); }
  // Wait for the check to end: the number of leading ranges that are good.
  std::size_t Wait() {
    Join();
    return good_;
  }
  void Cancel() {
    stop_.store(true, std::memory_order_relaxed);
    Join();
  }
  // Stopped and back to not started.
  void Clear() {
    Cancel();
    ranges_.clear();
    started_ = false;
    good_ = 0;
    done_ = false;
    stop_ = false;
  }

 private:
  void Run() {
    std::size_t good = 0;
    const int fd = fs_->Open(path_.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd >= 0) {
      good = MatchingRanges(*fs_, fd, offset_, ranges_, &stop_);
      fs_->Close(fd);
    }
    good_ = good;
    done_.store(true, std::memory_order_release);
  }
  void Join() {
    for (std::thread& t : thread_) t.join();
    thread_.clear();
  }
  FileSystem* fs_ = nullptr;
  std::string path_;
  std::uint64_t offset_ = 0;
  std::vector<journal_internal::RowRange> ranges_;
  bool started_ = false;
  std::size_t good_ = 0;  // written before done_ is set
  std::atomic<bool> done_{false}, stop_{false};
  std::vector<std::thread> thread_;
};

// What a journaled export keeps between its pieces.
struct TrsJob {
  std::vector<Unit> units;
  std::size_t kept = 0;      ///< units taken over from the journal (until the check says otherwise)
  std::uint64_t record = 0;  ///< bytes of one trace record
  std::uint64_t header = 0;  ///< bytes of the header
  std::unique_ptr<journal_internal::JournalWriter> journal;  ///< null: no journal
  /// Ranges written, their writeback started, not yet durable nor journaled.
  std::vector<journal_internal::RowRange> pending;
  std::chrono::steady_clock::time_point last_record = std::chrono::steady_clock::now();
  /// A rerun: the journal's records of the kept units, the job's parameters and
  /// output (to start the journal again from fewer), and their check.
  std::vector<journal_internal::RowRange> recorded;
  journal_internal::JobParameters parameters;
  std::string out;
  KeptRangeCheck check;

  std::uint64_t kept_rows() const { return kept ? units[kept - 1].first + units[kept - 1].rows : 0; }
  std::uint64_t end_of(const Unit& u) const { return header + (u.first + u.rows) * record; }
};

// Make the pending ranges durable (one fsync) and journal them.
Status RecordPending(TrsJob& job, OutFile& file) {
  if (job.pending.empty()) return Status::OK();
  SEDPACK_RETURN_NOT_OK(file.Sync());
  for (const journal_internal::RowRange& r : job.pending) {
    SEDPACK_RETURN_NOT_OK(job.journal->Append(journal_internal::EncodeRowRange(r)));
  }
  job.pending.clear();
  job.last_record = std::chrono::steady_clock::now();
  return Status::OK();
}

// Write the buffered records; at the end of a row range send it to the device
// (without waiting for it): left for one fsync at the end, the whole file would
// be written out only then, after the page cache had filled with it. A
// journaled range is recorded only once it is durable, but not one by one: an
// fsync per range (about 8 MiB) made the job wait for the disk at every range
// (on a virtual disk the journaled export took twice as long). The fsync and
// the records of the ranges since the last come at most once a record interval
// (JournalWriter::kSyncInterval, as the journal's own syncs), at the last range,
// and before a stop is honoured, so that a stop keeps every range written and a
// kill loses at most an interval's work.
Status EndUnit(TrsJob& job, std::size_t u, OutFile& file, std::vector<std::byte>* buf, std::size_t hashed) {
  SEDPACK_RETURN_NOT_OK(file.Write(*buf, hashed));
  buf->clear();
  const Unit& unit = job.units[u];
  const std::uint64_t offset = job.header + unit.first * job.record, bytes = unit.rows * job.record;
  file.StartWriteback(offset, bytes);
  const bool stop = CancellationRequested();
  if (job.journal) {
    job.pending.push_back(journal_internal::RowRange{unit.first, unit.rows, offset, bytes, file.hash().Finish()});
    static const std::chrono::milliseconds interval =
        TestRecordInterval().value_or(std::chrono::duration_cast<std::chrono::milliseconds>(
            journal_internal::JournalWriter::kSyncInterval));
    if (stop || u + 1 == job.units.size() || std::chrono::steady_clock::now() - job.last_record >= interval) {
      SEDPACK_RETURN_NOT_OK(RecordPending(job, file));
    }
  }
  if (stop || CancellationRequested()) return Status::Cancelled("export-trs: interrupted");
  return Status::OK();
}

// Stream the split's examples (after the job's kept rows) into records, in
// buffers of about 8 MiB, ending a buffer at each row range's end. A journaled
// file's range hash is fed with the records as they are made, every
// kHashSpan or so, while they are in cache: hashed after the write, the
// buffer was read from memory once more (the hash there ran at half its speed).
Status WriteRecords(const std::shared_ptr<const Dataset>& dataset, Split split, const ExportPlan& plan,
                    const TrsExportOptions& options, const std::vector<ShardInfo>& shards, TrsJob& job,
                    OutFile& file, TrsExportSummary* summary) {
  const std::uint64_t title_space = plan.layout.title_space, data_bytes = plan.data_bytes;
  const Column& tc = plan.samples;
  const std::uint64_t record = job.record;
  const std::uint64_t per_buffer = std::max<std::uint64_t>(1, (8ULL << 20) / record);
  std::vector<std::byte> buf;
  buf.reserve(per_buffer * record);
  constexpr std::size_t kHashSpan = std::size_t{256} << 10;
  std::size_t hashed = 0;  // the bytes of buf fed to the range hash
  ReadOptions ro;
  ro.prefetch_shards = options.prefetch_shards;
  if (job.kept > 0) {
    auto skip = std::make_shared<std::unordered_set<std::string>>();
    for (std::size_t i = 0; i < job.units[job.kept - 1].shard_end; ++i) {
      if (!shards[i].file_infos.empty()) skip->insert(shards[i].file_infos[0].file_path);
    }
    ro.shard_filter = [skip](const ShardInfo& s) { return s.file_infos.empty() || !skip->count(s.file_infos[0].file_path); };
  }
  SEDPACK_ASSIGN_OR_RETURN(auto reader, ExampleReader::Make(dataset, split, ro));
  std::size_t unit = job.kept;
  for (;;) {
    SEDPACK_ASSIGN_OR_RETURN(std::optional<Example> ex, reader->Next());
    if (!ex) break;
    const std::size_t at = buf.size();
    buf.resize(at + record, std::byte{0});
    std::byte* r = buf.data() + at;
    if (plan.title) {
      const ValueView v = ex->Get(*plan.title);
      if (v.data.size() > title_space) {
        return Status::InvalidArgument("example ", summary->traces, ": title of ", v.data.size(),
                                       " bytes is longer than the 255 a TRS title holds");
      }
      std::memcpy(r, v.data.data(), v.data.size());
    }
    for (const Column& c : plan.params) {
      double unused = 0;
      std::uint64_t none = 0;
      Put(c, ex->Get(c.attr), true, r + title_space + c.offset, &unused, &none);
    }
    const ValueView samples = ex->Get(tc.attr);
    std::uint64_t bad = 0;
    if (!Put(tc, samples, options.round_float64, r + title_space + data_bytes, &summary->max_float32_error, &bad)) {
      return Status::InvalidArgument("example ", summary->traces, " of \"", dataset->schema()[tc.attr].name,
                                     "\": ", InexactSample(tc, samples, bad));
    }
    ++summary->traces;
    if (file.hashing() && buf.size() - hashed >= kHashSpan) {
      file.Hash(std::span<const std::byte>(buf).subspan(hashed));
      hashed = buf.size();
    }
    if (unit < job.units.size() && summary->traces == job.units[unit].first + job.units[unit].rows) {
      SEDPACK_RETURN_NOT_OK(EndUnit(job, unit++, file, &buf, hashed));
      hashed = 0;
      // A kept range found bad: what follows it is written again (WriteAndCommit).
      if (job.check.FoundBad()) return Status::OK();
    } else if (buf.size() >= per_buffer * record) {
      SEDPACK_RETURN_NOT_OK(file.Write(buf, hashed));
      buf.clear();
      hashed = 0;
    }
  }
  return file.Write(buf, hashed);
}

// The number of `ranges` (which follow each other from `offset`) whose bytes
// in `fd` have their recorded hash: one sequential pass, stopping at the first
// mismatch (or when `stop` is set: then the count so far). This check is the
// only part of a rerun that costs in proportion to the rows kept. Reads of
// 512 KiB: each block is hashed while the read has left it in cache (16 MiB
// blocks were hashed from memory).
std::size_t MatchingRanges(FileSystem& fs, int fd, std::uint64_t offset,
                           std::span<const journal_internal::RowRange> ranges, const std::atomic<bool>* stop) {
  if (ranges.empty()) return 0;
  const std::uint64_t end = ranges.back().offset + ranges.back().bytes;
  std::vector<std::byte> chunk(static_cast<std::size_t>(std::min<std::uint64_t>(512ULL << 10, end - offset)));
  journal_internal::RangeHasher hash;
  std::size_t kept = 0;
  std::uint64_t left = ranges[0].bytes;
  while (offset < end && !stop->load(std::memory_order_relaxed)) {
    const auto want = static_cast<std::size_t>(std::min<std::uint64_t>(chunk.size(), end - offset));
    const long n = fs.Pread(fd, chunk.data(), want, static_cast<std::int64_t>(offset));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return kept;
    for (std::uint64_t fed = 0; fed < static_cast<std::uint64_t>(n);) {
      const std::uint64_t take = std::min<std::uint64_t>(left, static_cast<std::uint64_t>(n) - fed);
      hash.Update(chunk.data() + fed, static_cast<std::size_t>(take));
      fed += take;
      left -= take;
      if (left == 0) {
        if (hash.Finish() != ranges[kept].hash) return kept;
        if (++kept == ranges.size()) return kept;
        left = ranges[kept].bytes;
      }
    }
    offset += static_cast<std::uint64_t>(n);
  }
  return kept;
}

// How many of the journaled row ranges the unfinished file may still hold: the
// same header, then each range where this run would write it, inside the
// file. Their hashes are checked beside the export (KeptRangeCheck).
std::size_t PlannedUnits(FileSystem& fs, const std::string& partial, std::span<const std::byte> header,
                         const TrsJob& job, const std::vector<journal_internal::RowRange>& recorded) {
  const int fd = fs.Open(partial.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return 0;
  FileStat st;
  std::vector<std::byte> head(header.size());
  const bool same_header = fs.Fstat(fd, &st) == 0 && st.type == FileType::kRegular && st.size >= header.size() &&
                           fs.Pread(fd, head.data(), head.size(), 0) == static_cast<long>(head.size()) &&
                           std::equal(head.begin(), head.end(), header.begin());
  // The ranges the journal and this run's plan agree on, and that the file holds.
  std::size_t planned = 0;
  for (; same_header && planned < recorded.size() && planned < job.units.size(); ++planned) {
    const journal_internal::RowRange& r = recorded[planned];
    const Unit& u = job.units[planned];
    if (r.first != u.first || r.rows != u.rows || r.offset != job.header + u.first * job.record ||
        r.bytes != u.rows * job.record || r.offset + r.bytes > st.size) {
      break;
    }
  }
  fs.Close(fd);
  return planned;
}

// What identifies the file an export writes: a rerun whose parameters differ
// would not write the same bytes after the kept ones.
journal_internal::JobParameters TrsJobParameters(const Dataset& ds, Split split, const std::vector<ShardInfo>& shards,
                                                 std::span<const std::byte> header, const ExportPlan& plan,
                                                 const TrsExportOptions& o, std::uint64_t unit_rows) {
  const std::vector<AttributeSpec>& schema = ds.schema();
  std::string mapping = "samples=" + schema[plan.samples.attr].name;
  if (plan.title) mapping += " title=" + schema[*plan.title].name;
  for (const Column& c : plan.params) mapping += " " + schema[c.attr].name;
  using journal_internal::DigestOf;
  // The plain ones first, so that the difference named is the telling one.
  return {{"command", "export-trs"},
          {"dataset", ds.root()},
          {"split", std::string(SplitName(split))},
          {"attributes", mapping},
          {"round_float64", o.round_float64 ? "yes" : "no"},
          {"rows", std::to_string(plan.layout.number_traces)},
          {"unit_rows", std::to_string(unit_rows)},
          {"ranks", "1"},
          {"dataset_info", DigestOf(SerializeDatasetInfo(ds.info()))},
          {"shards", journal_internal::DigestOfShards(shards)},
          {"header", DigestOf(std::string_view(reinterpret_cast<const char*>(header.data()), header.size()))}};
}

// Open the journaled job: take over what an earlier run left (checked), cut
// the unfinished file there, and start the journal again from it.
Status StartJob(const Dataset& ds, Split split, const std::string& out, const TrsExportOptions& options,
                std::span<const std::byte> header, const ExportPlan& plan, const std::vector<ShardInfo>& shards,
                std::uint64_t unit_rows, FileSystem& fs, TrsJob& job, OutFile& file, TrsExportSummary* summary) {
  const journal_internal::JobParameters params =
      TrsJobParameters(ds, split, shards, header, plan, options, unit_rows);
  SEDPACK_ASSIGN_OR_RETURN(auto state,
                           journal_internal::ReadExportJournal("export-trs", out, params, options.restart, &fs));
  const journal_internal::ExportPaths paths = journal_internal::ExportPathsFor(out);
  summary->job_id = journal_internal::ExportJobId(params);
  summary->resumed = state.found && state.note.empty();
  summary->journal_note = state.note;
  if (summary->resumed) job.kept = PlannedUnits(fs, paths.partial, header, job, state.recorded);
  state.recorded.resize(job.kept);
  SEDPACK_ASSIGN_OR_RETURN(job.journal, journal_internal::OpenExportJournal(out, params, state.recorded, &fs));
  SEDPACK_RETURN_NOT_OK(file.OpenPartial(out, paths.partial, job.kept ? job.end_of(job.units[job.kept - 1]) : 0));
  if (job.kept == 0) {
    SEDPACK_RETURN_NOT_OK(file.Write(header));
    (void)file.hash().Finish();
  } else {
    job.check.Start(fs, paths.partial, job.header, state.recorded);
  }
  job.recorded = std::move(state.recorded);
  job.parameters = params;
  job.out = out;
  summary->traces = job.kept_rows();
  summary->units = job.units.size();
  summary->kept_units = job.kept;
  return Status::OK();
}

// Write the records after the header (or the kept rows) and rename the file
// into place. A journaled job that failed in a way a rerun may not (a stop, a
// full disk) leaves its journal and unfinished file; any other failure removes them.
// Go back to the first `good` kept units, the check having found the next one
// bad: the journal starts again from their records before the file is cut
// after them, so that it never holds a record of what the file does not.
Status GoBackTo(TrsJob& job, std::size_t good, OutFile& file, FileSystem& fs, TrsExportSummary* summary) {
  job.pending.clear();
  job.recorded.resize(good);
  job.journal.reset();
  SEDPACK_ASSIGN_OR_RETURN(job.journal, journal_internal::OpenExportJournal(job.out, job.parameters, job.recorded, &fs));
  job.kept = good;
  SEDPACK_RETURN_NOT_OK(file.CutTo(good ? job.end_of(job.units[good - 1]) : job.header));
  job.last_record = std::chrono::steady_clock::now();
  summary->traces = job.kept_rows();
  summary->kept_units = good;
  return Status::OK();
}

// The records after the kept rows; on a rerun, until the check of the kept
// ones has ended and every one of them proved good (else again from the last good one).
Status WriteChecked(const std::shared_ptr<const Dataset>& dataset, Split split, const ExportPlan& plan,
                    const TrsExportOptions& options, const std::vector<ShardInfo>& shards, TrsJob& job,
                    OutFile& file, FileSystem& fs, TrsExportSummary* summary) {
  for (;;) {
    SEDPACK_RETURN_NOT_OK(WriteRecords(dataset, split, plan, options, shards, job, file, summary));
    if (!job.check.started()) return Status::OK();
    const std::size_t good = job.check.Wait();
    if (good >= job.check.planned()) return Status::OK();
    // At most once: the ranges kept now were all checked good.
    job.check.Clear();
    SEDPACK_RETURN_NOT_OK(GoBackTo(job, good, file, fs, summary));
  }
}

Status WriteAndCommit(const std::shared_ptr<const Dataset>& dataset, Split split, const ExportPlan& plan,
                      const TrsExportOptions& options, const std::vector<ShardInfo>& shards, TrsJob& job,
                      OutFile& file, FileSystem& fs, TrsExportSummary* summary) {
  Status st = WriteChecked(dataset, split, plan, options, shards, job, file, fs, summary);
  if (st.ok() && summary->traces != plan.layout.number_traces) {
    st = Status::Corruption(dataset->root(), ": split ", SplitName(split), " lists ", plan.layout.number_traces,
                            " examples but holds ", summary->traces);
  }
  if (st.ok() && job.journal) st = job.journal->Remove();
  if (st.ok()) st = file.Commit();
  if (!st.ok() && job.journal) {
    if (IsCancelled(st) || st.code() == StatusCode::kIOError || CancellationRequested()) {
      // The ranges written whole since the last record are kept too if they can
      // still be made durable (a full disk may refuse the journal's record:
      // then they are written again; the rerun checks every kept range).
      (void)RecordPending(job, file);
      file.Keep();
    } else {
      (void)job.journal->Remove();
    }
  }
  summary->bytes = file.written();
  return st;
}

}  // namespace

Result<TrsExportSummary> ExportTrs(const std::shared_ptr<const Dataset>& dataset, Split split, const std::string& out,
                                   const TrsExportOptions& options) {
  TrsExportSummary summary;
  ExportPlan plan;
  SEDPACK_RETURN_NOT_OK(PlanSamples(*dataset, options, &plan));
  SEDPACK_RETURN_NOT_OK(PlanTitle(dataset->schema(), options, &plan));
  SEDPACK_RETURN_NOT_OK(PlanParameters(dataset->schema(), &plan, &summary.notes));
  TrsWriteLayout& layout = plan.layout;
  // Count first: NUMBER_TRACES leads the header.
  SEDPACK_ASSIGN_OR_RETURN(std::vector<ShardInfo> shards, ListShards(dataset, split, /*verify_hashes=*/true));
  for (const ShardInfo& s : shards) layout.number_traces += static_cast<std::uint64_t>(s.number_of_examples);
  const std::string split_name(SplitName(split));
  TrsSetParameter origin{"SEDPACK_SPLIT", kTrsParamString, static_cast<std::uint32_t>(split_name.size()), {}};
  for (char ch : split_name) origin.value.push_back(static_cast<std::byte>(ch));
  layout.set_parameters.push_back(std::move(origin));
  // The samples' own name, so that import-trs gives them back under it.
  const AttributeSpec& trace = dataset->schema()[plan.samples.attr];
  TrsSetParameter name{std::string(kTrsTraceNameParameter), kTrsParamString,
                       static_cast<std::uint32_t>(trace.name.size()), {}};
  for (char ch : trace.name) name.value.push_back(static_cast<std::byte>(ch));
  layout.set_parameters.push_back(std::move(name));
  summary.trace_attribute = trace.name;
  summary.trace_dtype = trace.dtype;
  summary.sample_dtype = plan.sample_dtype;
  summary.samples = plan.samples.elements;
  summary.trace_chosen = options.trace_attribute.empty();
  SEDPACK_ASSIGN_OR_RETURN(std::vector<std::byte> header, FormatTrsHeader(layout));

  FileSystem& fs = FileSystemOr(options.file_system != nullptr ? options.file_system : dataset->file_system());
  // Whatever is there (a link, a FIFO, a device, a file) stays as it is.
  FileStat existing;
  if (fs.Lstat(out.c_str(), &existing) == 0) {
    return Status::AlreadyExists(out, " already exists; export-trs does not overwrite");
  }
  TrsJob job;
  job.record = layout.title_space + plan.data_bytes + plan.samples.out_bytes;
  job.header = header.size();
  // Row ranges of about one write buffer, and at least 16 of them in a job, so
  // that a stop loses little and a journal record costs little.
  const std::uint64_t per_buffer = std::max<std::uint64_t>(1, (8ULL << 20) / job.record);
  const std::uint64_t unit_rows = std::max<std::uint64_t>(1, std::min(per_buffer, (layout.number_traces + 15) / 16));
  job.units = PlanUnits(shards, unit_rows);
  OutFile file(fs);
  if (options.journal) {
    SEDPACK_RETURN_NOT_OK(StartJob(*dataset, split, out, options, header, plan, shards, unit_rows, fs, job, file,
                                   &summary));
  } else {
    SEDPACK_RETURN_NOT_OK(file.OpenTemporary(out));
    SEDPACK_RETURN_NOT_OK(file.Write(header));
  }
  SEDPACK_RETURN_NOT_OK(WriteAndCommit(dataset, split, plan, options, shards, job, file, fs, &summary));
  return summary;
}

}  // namespace sedpack
