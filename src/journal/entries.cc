// SPDX-License-Identifier: Apache-2.0
#include "journal/entries_internal.h"
#include "journal/stats_internal.h"

#include <cerrno>
#include <chrono>
#include <cstring>

#include "sedpack/io/file.h"

namespace sedpack::journal_internal {

Result<RecordedEntryViews> ReadJobEntriesInPlace(const std::string& root, const std::string& job_id,
                                                 const JobParameters& parameters, const std::string& what,
                                                 FileSystem* fs) {
  RecordedEntryViews out;
  SEDPACK_ASSIGN_OR_RETURN(std::vector<JournalFile> journals, ListJournals(root, fs));
  for (const JournalFile& j : journals) {
    if (j.job_id != job_id) continue;
    auto read = ReadJournalInPlace(root, j.rel, fs);
    // A journal torn before its header validated records nothing to keep.
    if (!read.ok()) {
      if (read.status().code() == StatusCode::kNotFound || read.status().code() == StatusCode::kCorruption) continue;
      return read.status();
    }
    const std::string diff = DifferingParameter(read->parameters, parameters);
    if (!diff.empty()) {
      return Status::AlreadyExists(what, ": this run differs from the stopped run recorded in ", JoinRoot(root, j.rel),
                                     " (", diff, "); run the same command again, or add --restart to throw the "
                                     "stopped run's work away");
    }
    out.found = true;
    for (EntryView& e : read->entries) out.entries.push_back(std::move(e));
  }
  return out;
}

Result<RecordedEntries> ReadJobEntries(const std::string& root, const std::string& job_id,
                                       const JobParameters& parameters, const std::string& what, FileSystem* fs) {
  SEDPACK_ASSIGN_OR_RETURN(RecordedEntryViews views, ReadJobEntriesInPlace(root, job_id, parameters, what, fs));
  RecordedEntries out;
  out.found = views.found;
  out.entries.reserve(views.entries.size());
  for (const EntryView& e : views.entries) out.entries.push_back({std::string(e.kind), std::string(e.data)});
  return out;
}

Result<std::unique_ptr<JournalWriter>> StartEntryJournal(const std::string& root, const std::string& job_id, int rank,
                                                         const JobParameters& parameters,
                                                         const std::vector<JournalEntry>& kept, FileSystem* fs) {
  // Never made through a link that leads out of the dataset (the sidecar folder, say).
  SEDPACK_RETURN_NOT_OK(CheckStaysBeneath(root, JournalPath(job_id, rank), fs));
  SEDPACK_RETURN_NOT_OK(CreateDirectories(JoinRoot(root, kJournalDir), fs));
  return JournalWriter::Create(root, JournalPath(job_id, rank), parameters, kept, fs);
}

Status RemoveJobJournals(const std::string& root, const std::string& job_id, FileSystem* fs) {
  SEDPACK_ASSIGN_OR_RETURN(std::vector<JournalFile> journals, ListJournals(root, fs));
  FileSystem& f = FileSystemOr(fs);
  for (const JournalFile& j : journals) {
    if (j.job_id != job_id) continue;
    const std::string path = JoinRoot(root, j.rel);
    if (f.Unlink(path.c_str()) != 0 && errno != ENOENT) {
      return Status::IOError(path, ": cannot remove the job journal: ", std::strerror(errno));
    }
  }
  return RemoveJobPartials(root, job_id, fs);
}

JournalQueue::JournalQueue(JournalWriter* writer, std::size_t limit)
    : writer_(writer), limit_(limit < 1 ? 1 : limit), thread_([this] { Run(); }) {}

JournalQueue::~JournalQueue() { (void)Finish(); }

// The queue's thread is woken by a pushing worker only once half the queue
// waits (or the queue is full, or done); else it wakes on its own every
// kWake. Woken at every entry, the wake-up of a thread on another CPU (an
// interrupt between virtual CPUs) cost the worker some 20 us an entry on a
// 2-vCPU VM: 2% of a digest's wall time.
constexpr std::chrono::milliseconds kWake{10};

void JournalQueue::Push(JournalEntry entry, std::function<Status()> before) {
  JournalTimer timer;  // a worker that waits here for room waits for the journal
  std::unique_lock<std::mutex> lock(mu_);
  if (queue_.size() >= limit_ && !done_) {
    cv_.notify_one();
    room_.wait(lock, [this] { return queue_.size() < limit_ || done_; });
  }
  queue_.emplace_back(std::move(entry), std::move(before));
  if (2 * queue_.size() >= limit_) cv_.notify_one();
}

std::string JournalQueue::Spare() {
  std::lock_guard<std::mutex> lock(mu_);
  if (spares_.empty()) return {};
  std::string s = std::move(spares_.back());
  spares_.pop_back();
  return s;
}

Status JournalQueue::status() {
  std::lock_guard<std::mutex> lock(mu_);
  return first_error_;
}

Status JournalQueue::Finish() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    done_ = true;
    cv_.notify_one();
  }
  if (thread_.joinable()) thread_.join();
  std::lock_guard<std::mutex> lock(mu_);
  return first_error_;
}

void JournalQueue::Run() {
  MarkJournalBackgroundThread();
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    if (queue_.empty()) {
      if (done_) return;  // and nothing left
      cv_.wait_for(lock, kWake, [this] { return done_ || 2 * queue_.size() >= limit_; });
      continue;
    }
    auto [entry, before] = std::move(queue_.front());
    queue_.pop_front();
    room_.notify_all();
    if (!first_error_.ok()) continue;  // after a failure nothing more is recorded
    lock.unlock();
    // One record per entry (no batching): a job has as many journal steps
    // (kill points, io/kill_point.h) in every run, the crash test counts on it.
    Status st = before ? before() : Status::OK();
    if (st.ok()) st = writer_->Append(entry);
    entry.data.clear();
    lock.lock();
    if (!st.ok() && first_error_.ok()) first_error_ = st;
    // A few are kept (one for each worker that encodes at once, about).
    constexpr std::size_t kSpares = 4;
    if (spares_.size() < kSpares && entry.data.capacity() > 0) spares_.push_back(std::move(entry.data));
  }
}

std::string PackFields(const std::vector<std::string>& fields) {
  std::string out;
  for (const std::string& f : fields) {
    out += std::to_string(f.size());
    out += ':';
    out += f;
  }
  return out;
}

bool UnpackFields(std::string_view data, std::vector<std::string>* fields) {
  fields->clear();
  while (!data.empty()) {
    const std::size_t colon = data.find(':');
    if (colon == std::string_view::npos || colon == 0 || colon > 12) return false;
    std::uint64_t n = 0;
    for (char c : data.substr(0, colon)) {
      if (c < '0' || c > '9') return false;
      n = n * 10 + static_cast<std::uint64_t>(c - '0');
    }
    data.remove_prefix(colon + 1);
    if (n > data.size()) return false;
    fields->emplace_back(data.substr(0, n));
    data.remove_prefix(n);
  }
  return true;
}

}  // namespace sedpack::journal_internal
