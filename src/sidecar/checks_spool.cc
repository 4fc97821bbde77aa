// SPDX-License-Identifier: Apache-2.0
#include "sidecar/checks_spool_internal.h"

#include <fcntl.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <optional>
#include <queue>
#include <random>
#include <sstream>
#include <string_view>

#include "codecs/decode_points_internal.h"
#include "core/endian_internal.h"
#include "io/file_internal.h"
#include "sedpack/io/file.h"
#include "sidecar/sidecar_internal.h"

namespace sedpack::sidecar_internal {

namespace {

using core_internal::AppendLe;
using core_internal::LoadLe32;

// No record of ours comes near this (a shard of a million examples of 1,000
// attributes would); a length past it is a damaged spool.
constexpr std::uint32_t kMaxRecordBytes = 1u << 30;
constexpr std::size_t kReadBuffer = 16 << 10;

std::string_view PathOf(std::span<const std::byte> record) {
  return std::string_view(reinterpret_cast<const char*>(record.data()) + 4, LoadLe32(record.data()));
}

// The records of one run, one at a time, through a small buffer.
class RunReader {
 public:
  RunReader(FileSystem& files, int fd, const ChecksRun& run)
      : files_(files), fd_(fd), path_(run.path), pos_(run.offset), end_(run.offset + run.size) {}

  // The next record into record(); false at the end of the run (or on an error, in `st`).
  bool Next(Status* st) {
    std::byte len[4];
    if (buffered() == 0 && pos_ == end_) return false;
    if (!Take(len, 4, st)) return false;
    const std::uint32_t n = LoadLe32(len);
    if (n < 4 || n > kMaxRecordBytes) {
      *st = Status::Corruption(path_, ": a spooled checks record of ", n, " bytes");
      return false;
    }
    record_.resize(n);
    if (!Take(record_.data(), n, st)) return false;
    if (LoadLe32(record_.data()) > n - 4) {
      *st = Status::Corruption(path_, ": a spooled checks record's path runs past it");
      return false;
    }
    return true;
  }
  std::span<const std::byte> record() const { return record_; }

 private:
  std::size_t buffered() const { return blen_ - bpos_; }
  bool Take(std::byte* out, std::size_t n, Status* st) {
    while (n > 0) {
      if (bpos_ == blen_) {
        const std::uint64_t want = std::min<std::uint64_t>(kReadBuffer, end_ - pos_);
        if (want == 0) {
          *st = Status::Corruption(path_, ": a spooled checks run ends inside a record");
          return false;
        }
        buf_.resize(kReadBuffer);
        const long got = files_.Pread(fd_, buf_.data(), want, static_cast<std::int64_t>(pos_));
        if (got <= 0) {
          *st = Status::IOError("cannot read ", path_, ": ", got < 0 ? std::strerror(errno) : "unexpected end");
          return false;
        }
        pos_ += static_cast<std::uint64_t>(got);
        bpos_ = 0;
        blen_ = static_cast<std::size_t>(got);
      }
      const std::size_t k = std::min(n, buffered());
      std::memcpy(out, buf_.data() + bpos_, k);
      bpos_ += k;
      out += k;
      n -= k;
    }
    return true;
  }
  FileSystem& files_;
  int fd_;
  std::string path_;
  std::uint64_t pos_, end_;
  std::vector<std::byte> buf_, record_;
  std::size_t bpos_ = 0, blen_ = 0;
};

// Every record of carried and the runs in path order, the last source's of
// equal paths, to `emit`. Opens each spool file once.
Status MergeRuns(FileSystem& files, const ChecksSidecar* carried, const std::vector<ChecksRun>& runs,
                 const std::function<Status(std::span<const std::byte>)>& emit) {
  std::map<std::string, int> fds;
  Status st;
  for (const ChecksRun& r : runs) {
    if (fds.count(r.path)) continue;
    const int fd = files.Open(r.path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
      st = Status::IOError("cannot open ", r.path, ": ", std::strerror(errno));
      break;
    }
    fds[r.path] = fd;
  }
  std::vector<std::unique_ptr<RunReader>> readers;
  // Source 0 is the carried sidecar (its records in order), source i+1 run i.
  std::optional<ChecksSidecar::Cursor> old;
  if (carried) old.emplace(carried->Records());
  auto current = [&](std::size_t source) -> std::span<const std::byte> {
    if (source == 0) return old->record().encoded();
    return readers[source - 1]->record();
  };
  auto advance = [&](std::size_t source) -> bool {
    if (source > 0) return readers[source - 1]->Next(&st);
    if (!old || old->Next()) return old.has_value();
    if (!old->status().ok()) st = old->status();
    return false;
  };
  // Smallest path first; of equal paths the latest source first.
  auto later = [&](std::size_t a, std::size_t b) {
    const int c = PathOf(current(a)).compare(PathOf(current(b)));
    return c != 0 ? c > 0 : a < b;
  };
  std::priority_queue<std::size_t, std::vector<std::size_t>, decltype(later)> heap(later);
  if (st.ok()) {
    for (const ChecksRun& r : runs) readers.push_back(std::make_unique<RunReader>(files, fds[r.path], r));
    for (std::size_t s = 0; s <= readers.size() && st.ok(); ++s) {
      if (advance(s)) heap.push(s);
    }
  }
  std::string last;
  bool first = true;
  while (st.ok() && !heap.empty()) {
    const std::size_t s = heap.top();
    heap.pop();
    const std::span<const std::byte> rec = current(s);
    if (first || PathOf(rec) != last) {
      first = false;
      last.assign(PathOf(rec));
      st = emit(rec);
    }
    if (st.ok() && advance(s)) heap.push(s);
  }
  for (const auto& [path, fd] : fds) files.Close(fd);
  return st;
}

constexpr std::string_view kSpoolPrefix = "checks-spool-", kSpoolSuffix = ".tmp";

// A name no other writer picks: 128 random bits.
std::string SpoolName() {
  std::random_device rd;
  char hex[33];
  std::snprintf(hex, sizeof hex, "%08x%08x%08x%08x", rd(), rd(), rd(), rd());
  return std::string(kSpoolPrefix) + hex + std::string(kSpoolSuffix);
}

}  // namespace

bool IsChecksSpoolName(std::string_view file_name) {
  return file_name.size() > kSpoolPrefix.size() + kSpoolSuffix.size() && file_name.starts_with(kSpoolPrefix) &&
         file_name.ends_with(kSpoolSuffix);
}

std::string EncodeRuns(const std::vector<ChecksRun>& runs) {
  std::string out;
  for (const ChecksRun& r : runs) out += std::to_string(r.size) + " " + std::to_string(r.offset) + " " + r.path + "\n";
  return out;
}

Result<std::vector<ChecksRun>> DecodeRuns(const std::string& text) {
  std::vector<ChecksRun> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    ChecksRun r;
    std::istringstream fields(line);
    if (!(fields >> r.size >> r.offset) || fields.get() != ' ' || !std::getline(fields, r.path) || r.path.empty()) {
      return Status::Corruption("a checks run that does not parse: \"", line, "\"");
    }
    out.push_back(std::move(r));
  }
  return out;
}

std::string RunsMessage(const Result<std::vector<ChecksRun>>& runs) {
  return runs.ok() ? "+\n" + EncodeRuns(*runs) : std::string("-\n");
}

Result<std::optional<std::vector<ChecksRun>>> ParseRunsMessage(const std::string& message) {
  if (message.rfind("+\n", 0) != 0) return std::optional<std::vector<ChecksRun>>();
  SEDPACK_ASSIGN_OR_RETURN(std::vector<ChecksRun> runs, DecodeRuns(message.substr(2)));
  return std::optional<std::vector<ChecksRun>>(std::move(runs));
}

ChecksSpool::ChecksSpool(std::string root, FileSystem* fs) : root_(std::move(root)), fs_(fs) {}

ChecksSpool::~ChecksSpool() {
  if (fd_ < 0) return;
  FileSystem& files = FileSystemOr(fs_);
  files.Close(fd_);
  files.Unlink(path_.c_str());
}

Status ChecksSpool::Add(const ShardChecks& checks) {
  SEDPACK_ASSIGN_OR_RETURN(std::vector<std::byte> e, EncodeShardChecks(checks));
  return Add(e);
}

Status ChecksSpool::Add(std::span<const std::byte> encoded) {
  if (encoded.size() < 4 || encoded.size() > kMaxRecordBytes) {
    return Status::InvalidArgument("a checks record of ", encoded.size(), " bytes");
  }
  starts_.push_back(static_cast<std::uint32_t>(run_.size()));
  AppendLe(encoded.size(), 4, &run_);
  run_.insert(run_.end(), encoded.begin(), encoded.end());
  ++records_;
  return run_.size() >= kRunBytes ? Flush() : Status::OK();
}

Status ChecksSpool::Flush() {
  if (starts_.empty()) return Status::OK();
  FileSystem& files = FileSystemOr(fs_);
  if (fd_ < 0) {
    SEDPACK_RETURN_NOT_OK(CreateDirectories(SidecarDir(root_), fs_));
    path_ = SidecarPath(root_, SpoolName());
    fd_ = files.Open(path_.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd_ < 0) return Status::IOError("cannot create ", path_, ": ", std::strerror(errno));
  }
  auto record = [&](std::uint32_t start) {
    return std::span<const std::byte>(run_.data() + start + 4, LoadLe32(run_.data() + start));
  };
  // Stable: of two records of one path the later stays last, and is kept.
  std::stable_sort(starts_.begin(), starts_.end(),
                   [&](std::uint32_t a, std::uint32_t b) { return PathOf(record(a)) < PathOf(record(b)); });
  std::vector<std::byte> sorted;
  sorted.reserve(run_.size());
  for (std::size_t i = 0; i < starts_.size(); ++i) {
    if (i + 1 < starts_.size() && PathOf(record(starts_[i])) == PathOf(record(starts_[i + 1]))) continue;
    const auto r = record(starts_[i]);
    AppendLe(r.size(), 4, &sorted);
    sorted.insert(sorted.end(), r.begin(), r.end());
  }
  SEDPACK_RETURN_NOT_OK(io_internal::WriteAll(files, fd_, sorted.data(), sorted.size(), path_));
  runs_.push_back(ChecksRun{path_, end_, sorted.size()});
  end_ += sorted.size();
  run_.clear();
  run_.shrink_to_fit();
  starts_.clear();
  starts_.shrink_to_fit();
  return Status::OK();
}

Status WriteChecksFromRuns(const std::string& root, const DatasetInfoDigest& digest, const ChecksSidecar* carried,
                           const std::vector<ChecksRun>& runs, FileSystem* fs) {
  FileSystem& files = FileSystemOr(fs);
  std::uint64_t count = 0, bytes = 0;
  SEDPACK_RETURN_NOT_OK(MergeRuns(files, carried, runs, [&](std::span<const std::byte> r) {
    ++count;
    bytes += r.size();
    return Status::OK();
  }));
  SEDPACK_RETURN_NOT_OK(CheckStaysBeneath(root, ChecksFileRelative(), fs));
  SEDPACK_RETURN_NOT_OK(CreateDirectories(SidecarDir(root), fs));
  AtomicWriteOptions options;
  options.file_system = fs;
  return WriteFileAtomicStreamed(
      SidecarPath(root, kChecksFileName),
      [&](const ByteSink& sink) -> Status {
        codecs_internal::FastChecksummer sum;
        const std::vector<std::byte> header = EncodeChecksHeader(digest, count, bytes);
        sum.Update(header);
        SEDPACK_RETURN_NOT_OK(sink(header));
        std::uint64_t seen = 0;
        SEDPACK_RETURN_NOT_OK(MergeRuns(files, carried, runs, [&](std::span<const std::byte> r) {
          ++seen;
          sum.Update(r);
          return sink(r);
        }));
        if (seen != count) return Status::Internal("the checks runs changed between the two passes");
        std::vector<std::byte> trailer;
        AppendLe(sum.Digest(), 8, &trailer);
        return sink(trailer);
      },
      options);
}

}  // namespace sedpack::sidecar_internal
