// SPDX-License-Identifier: Apache-2.0
#include "sedpack/maintain/fix.h"
#include "sedpack/io/file_system.h"

#include <fcntl.h>

#include <algorithm>
#include <cstring>
#include <filesystem>

#include "sedpack/check/steps.h"
#include "io/beneath.h"
#include "io/lock_file.h"
#include "sedpack/dataset/commit.h"
#include "sedpack/cancel.h"
#include "sedpack/io/file.h"
#include "sedpack/io/pack.h"
#include "sedpack/maintain/content.h"
#include "sedpack/maintain/recompress.h"
#include "dataset/commit_internal.h"
#include "journal/resume_internal.h"
#include "sidecar/checks_spool_internal.h"
#include "sidecar/sidecar_internal.h"

namespace sedpack {
namespace {

namespace fs = std::filesystem;

// A leftover FindOrphans found (under a split folder), as opposed to the
// temporary files at the top of the dataset and the recompress folder.
bool UnderSplit(const Leftover& l) {
  if (l.kind == Leftover::Kind::kRecompress) return false;
  const std::string_view first = std::string_view(l.path).substr(0, l.path.find('/'));
  const auto splits = AllSplits();
  return std::any_of(splits.begin(), splits.end(), [&](Split s) { return SplitName(s) == first; });
}

// Remove `file` and the folders this leaves empty, up to (not including) `stop`.
Status RemoveWithEmptyParents(FileSystem& files, const fs::path& file, const fs::path& stop) {
  if (files.Unlink(file.c_str()) != 0) {
    return Status::IOError("cannot remove ", file.string(), ": ", std::strerror(errno));
  }
  for (auto dir = file.parent_path(); dir != stop && dir.string().size() > stop.string().size();
       dir = dir.parent_path()) {
    if (!IsEmptyDirectory(dir.string()) || files.Rmdir(dir.c_str()) != 0) break;
  }
  return Status::OK();
}

// The commit lock, the job reservations and what taking or breaking them left:
// a lock is a leftover only when it is provably stale (InspectLockFile: its
// process is gone from this host, or its heartbeat is older than the stale
// timeout); a live one is reported and left alone.
void DiagnoseLocks(const Dataset& dataset, DatasetDiagnosis* d) {
  const std::string& root = dataset.root();
  const auto stale = dataset.commit_lock_options().stale_timeout;
  std::vector<std::string> candidates;
  for (const std::string& dir : {std::string(kSidecarDirName), std::string(kJobLockDir)}) {
    const std::string folder = (fs::path(root) / dir).string();
    for (const DirEntry& e : ListDirectory(folder).ValueOr({})) {
      const std::string& name = e.name;
      const bool lock = dir == kJobLockDir ? name.ends_with(".lock") : dir + "/" + name == kCommitLockPath;
      if (IsRegularFile(JoinRoot(folder, name)) && (lock || IsLockLeftoverName(name))) {
        candidates.push_back(dir + "/" + name);
      }
    }
  }
  std::sort(candidates.begin(), candidates.end());
  for (const std::string& rel : candidates) {
    const LockInspection look = InspectLockFile(dataset.PathOf(rel), stale);
    if (look.state == LockInspection::State::kAbsent) continue;
    if (look.state == LockInspection::State::kStale) {
      Leftover l;
      l.kind = Leftover::Kind::kLock;
      l.path = rel;
      l.bytes = FileSize(dataset.PathOf(rel)).ValueOr(0);
      d->leftovers.push_back(std::move(l));
    } else {
      d->held_locks.push_back(rel + ": held by " + DescribeLockOwner(look.owner) + "; " + look.reason);
    }
  }
}

void DiagnoseSidecars(const std::string& root, DatasetDiagnosis* d) {
  if (auto index = CheckIndex(root); index.ok()) d->index = std::move(index).value();
  d->content_path = SidecarPath(root, kContentSidecarName);
  auto content = ReadContentDigests(root);
  if (!content.ok()) {
    if (content.status().code() != StatusCode::kNotFound) {
      d->content = ContentSidecarState::kInvalid;
      d->content_message = content.status().message();
    }
    return;
  }
  // If dataset_info.json cannot be hashed now there is nothing to compare; the
  // metadata walk reports that dataset_info.json itself.
  auto sha = DatasetInfoSha256(root);
  d->content = sha.ok() && content->dataset_info_sha256 != DigestHex(*sha) ? ContentSidecarState::kStale
                                                                         : ContentSidecarState::kCurrent;
}

}  // namespace

std::string_view LeftoverKindName(Leftover::Kind kind) {
  switch (kind) {
    case Leftover::Kind::kOrphan: return "orphan";
    case Leftover::Kind::kTemporary: return "temporary";
    case Leftover::Kind::kRecompress: return "recompress";
    case Leftover::Kind::kLock: return "lock";
  }
  return "unknown";
}

bool DatasetDiagnosis::index_needs_rebuild() const {
  return index && (index->freshness == IndexFreshness::kStale || index->freshness == IndexFreshness::kInvalid);
}

std::size_t DatasetDiagnosis::count(Leftover::Kind kind) const {
  return static_cast<std::size_t>(
      std::count_if(leftovers.begin(), leftovers.end(), [kind](const Leftover& l) { return l.kind == kind; }));
}

std::uint64_t DatasetDiagnosis::leftover_bytes() const {
  std::uint64_t total = 0;
  for (const Leftover& l : leftovers) total += l.bytes;
  return total;
}

Status DatasetDiagnosis::SafeToCollect() const {
  if (!unsafe.empty()) {
    return Status::InvalidArgument(unsafe.size(), " path", unsafe.size() == 1 ? "" : "s",
                                   " lead outside the dataset root (", unsafe.front().path, ": ",
                                   unsafe.front().message, "); nothing is removed")
        .WithDetail(StatusDetail::kPathEscape);
  }
  if (!unreadable.empty() && std::any_of(leftovers.begin(), leftovers.end(), UnderSplit)) {
    return Status::InvalidArgument(unreadable.size(), " metadata file", unreadable.size() == 1 ? "" : "s",
                                   " could not be followed (", unreadable.front().path,
                                   "), so the files they list look like orphans; nothing is removed");
  }
  return Status::OK();
}

Result<DatasetDiagnosis> DiagnoseDataset(const Dataset& dataset) {
  const std::string& root = dataset.root();
  DatasetDiagnosis d;
  d.packed = dataset.pack() != nullptr;
  CheckOptions check;
  SEDPACK_ASSIGN_OR_RETURN(MetadataWalk walk, WalkMetadata(dataset, check));
  for (const CheckProblem& p : walk.report.problems) {
    if (p.kind == CheckProblem::Kind::kPathEscape) d.unsafe.push_back(p);
    if (p.kind == CheckProblem::Kind::kMalformed || p.kind == CheckProblem::Kind::kMissingFile ||
        p.kind == CheckProblem::Kind::kIOError) {
      d.unreadable.push_back(p);
    }
  }
  // The walk reads only lists; a listed shard that is a link out is found by
  // opening it (O_PATH: nothing is read).
  if (!d.packed) {
    for (const ShardCheckTask& t : walk.shards) {
      auto fd = OpenBeneath(root, t.path, O_PATH);
      if (!fd.ok() && IsOutsideRoot(fd.status())) {
        CheckProblem p;
        p.kind = CheckProblem::Kind::kPathEscape;
        p.path = t.path;
        p.message = fd.status().message();
        d.unsafe.push_back(std::move(p));
      }
    }
  }
  CheckReport orphans;
  FindOrphans(dataset, check, walk.listed, &orphans);
  auto add_file = [&](Leftover::Kind kind, std::string path) {
    Leftover l;
    l.kind = kind;
    l.bytes = FileSize(dataset.PathOf(path)).ValueOr(0);
    l.path = std::move(path);
    d.leftovers.push_back(std::move(l));
  };
  for (const CheckProblem& p : orphans.problems) {
    if (p.kind == CheckProblem::Kind::kResumableJob) {
      d.resumable_jobs.push_back(ResumableJob{fs::path(p.path).filename().string(), std::stoull("0" + p.found)});
      continue;
    }
    if (p.kind != CheckProblem::Kind::kOrphan) {
      if (p.kind == CheckProblem::Kind::kPathEscape) d.unsafe.push_back(p);
      continue;
    }
    add_file(IsAtomicWriteTempName(fs::path(p.path).filename().string()) ? Leftover::Kind::kTemporary
                                                                         : Leftover::Kind::kOrphan,
             p.path);
  }
  if (d.packed) return d;
  // The root and the sidecar folder (a commit journal being written when a job
  // died leaves its temporary file there).
  // A writer's spool of checks records (sidecar/checks_spool_internal.h) is
  // removed by the writer however it ends but SIGKILL: it is a leftover only
  // while no job holds a lock of the dataset (known after DiagnoseLocks).
  std::vector<std::string> spools;
  for (const std::string& dir : {std::string(), std::string(kSidecarDirName) + "/"}) {
    std::vector<std::string> names;
    const std::string folder = (fs::path(root) / dir).string();
    for (const DirEntry& e : ListDirectory(folder).ValueOr({})) {
      const bool temp = IsAtomicWriteTempName(e.name);
      const bool spool = !dir.empty() && sidecar_internal::IsChecksSpoolName(e.name);
      if (!(temp || spool) || !IsRegularFile(JoinRoot(folder, e.name))) continue;
      (temp ? names : spools).push_back(dir + e.name);
    }
    for (std::string& n : names) add_file(Leftover::Kind::kTemporary, std::move(n));
  }
  DiagnoseLocks(dataset, &d);
  if (d.held_locks.empty()) {
    for (std::string& n : spools) add_file(Leftover::Kind::kTemporary, std::move(n));
  }
  // When each stopped job last recorded: the newest of its ranks' journals.
  FileSystem& files = FileSystemOr(dataset.file_system());
  auto stamp = [&files](const std::string& at, const journal_internal::JournalFile& j, ResumableJob& job) {
    FileStat st;
    if (j.job_id == job.job_id && files.Stat(JoinRoot(at, j.rel).c_str(), &st) == 0) {
      job.last_record_ns = std::max(job.last_record_ns, st.mtime_ns);
    }
  };
  const auto journals = journal_internal::ListJournals(root, dataset.file_system()).ValueOr({});
  for (ResumableJob& job : d.resumable_jobs) {
    for (const auto& j : journals) stamp(root, j, job);
  }
  for (ResumableJob& job : d.resumable_jobs) {
    const std::string lock = std::string(kSidecarDirName) + "/jobs/" + job.job_id + ".lock:";
    for (const std::string& held : d.held_locks) job.running = job.running || held.compare(0, lock.size(), lock) == 0;
  }
  const std::string staging = RecompressStagingPath(root);
  // A stopped journaled recompress keeps its staging tree for its rerun: a
  // resumable job (removed with the abandoned ones), not garbage.
  const auto staged = journal_internal::ListJournals(staging, nullptr).ValueOr({});
  if (!staged.empty()) {
    d.resumable_jobs.push_back(ResumableJob{staged.front().job_id, 0});
    for (const auto& j : staged) stamp(staging, j, d.resumable_jobs.back());
  } else if (PathExists(staging)) {
    d.leftovers.push_back({Leftover::Kind::kRecompress, staging, 0});
  }
  DiagnoseSidecars(root, &d);
  return d;
}

std::size_t GarbageReport::failures() const {
  return static_cast<std::size_t>(
      std::count_if(outcomes.begin(), outcomes.end(), [](const GarbageOutcome& o) { return !o.error.ok(); }));
}

Result<GarbageReport> CollectGarbage(const Dataset& dataset, const DatasetDiagnosis& diagnosis, bool apply) {
  SEDPACK_RETURN_NOT_OK(diagnosis.SafeToCollect());
  if (apply && dataset.pack()) {
    return Status::InvalidArgument(dataset.root(), ": a packed dataset is read-only; unpack it first");
  }
  const std::string& root = dataset.root();
  GarbageReport report;
  report.applied = apply;
  for (const Leftover& l : diagnosis.leftovers) {
    // Each removal stands on its own (garbage is garbage): an interrupted run
    // just leaves the rest for the next.
    if (apply) SEDPACK_RETURN_NOT_OK(CheckCancelled());
    GarbageOutcome& o = report.outcomes.emplace_back();
    o.leftover = l;
    if (!apply) continue;
    if (l.kind == Leftover::Kind::kRecompress) {
      if (Status removed = RemoveTree(l.path); !removed.ok()) {
        o.error = removed;
      } else {
        o.removed = true;
      }
      continue;
    }
    // FindOrphans does not enter links to folders, but the tree may have
    // changed since: never remove anything through a folder that leads out.
    if (Status beneath = CheckStaysBeneath(root, l.path); !beneath.ok()) {
      o.error = beneath.WithPrefix("not removed: ");
      continue;
    }
    if (l.kind == Leftover::Kind::kLock) {
      // Judged again now, and broken only if it is still that very lock: a job
      // may have taken the lock since the diagnosis.
      const std::string path = dataset.PathOf(l.path);
      const LockInspection look = InspectLockFile(path, dataset.commit_lock_options().stale_timeout);
      if (look.state == LockInspection::State::kAbsent) {
        o.removed = true;
      } else if (look.state != LockInspection::State::kStale) {
        o.error = Status::AlreadyExists(path, ": not removed, held by ", DescribeLockOwner(look.owner), " (",
                                        look.reason, ")");
      } else if (IsLockLeftoverName(fs::path(l.path).filename().string())) {
        o.error = RemoveWithEmptyParents(FileSystemOr(dataset.file_system()), path, fs::path(root) / std::string(kSidecarDirName));
        o.removed = o.error.ok();
      } else {
        o.error = BreakLockFile(path, look.owner);
        if (o.error.code() == StatusCode::kNotFound) o.error = Status::OK();
        o.removed = o.error.ok();
      }
      continue;
    }
    const fs::path stop = l.path.find('/') == std::string::npos
                              ? fs::path(root)
                              : fs::path(dataset.PathOf(l.path.substr(0, l.path.find('/'))));
    o.error = RemoveWithEmptyParents(FileSystemOr(dataset.file_system()), dataset.PathOf(l.path), stop);
    o.removed = o.error.ok();
  }
  return report;
}

Result<GarbageReport> CollectGarbage(const std::string& root, bool apply) {
  SEDPACK_ASSIGN_OR_RETURN(std::shared_ptr<Dataset> dataset, Dataset::Open(root));
  SEDPACK_ASSIGN_OR_RETURN(DatasetDiagnosis diagnosis, DiagnoseDataset(*dataset));
  return CollectGarbage(*dataset, diagnosis, apply);
}

FixResult FixDataset(std::shared_ptr<Dataset> dataset, const FixOptions& options) {
  FixResult r;
  auto fail = [&r](FixStep step, Status status) {
    r.failed_step = step;
    r.status = std::move(status);
    return std::move(r);
  };
  const std::string root = dataset->root();
  if (!options.restamp_reason.empty()) {
    auto s = RestampHashes(root, options.restamp_reason);
    if (!s.ok()) return fail(FixStep::kRestamp, s.status());
    r.restamp = std::move(s).value();
    auto reopened = Dataset::Open(root);
    if (!reopened.ok()) return fail(FixStep::kReopen, reopened.status());
    dataset = std::move(reopened).value();
  }
  auto diagnosed = DiagnoseDataset(*dataset);
  if (!diagnosed.ok()) return fail(FixStep::kDiagnose, diagnosed.status());
  r.diagnosis = std::move(diagnosed).value();
  const DatasetDiagnosis& d = *r.diagnosis;
  if (!d.unsafe.empty() || !d.SafeToCollect().ok()) {
    r.refused = true;
    return r;
  }
  if (!d.packed && d.index_needs_rebuild() && options.rebuild_index) {
    auto built = BuildIndexFile(dataset);
    if (!built.ok()) return fail(FixStep::kRebuildIndex, built.status());
    r.index_rebuilt = true;
  }
  if (options.remove_abandoned_jobs && !d.packed) {
    for (const ResumableJob& job : d.resumable_jobs) {
      if (job.running) continue;
      const std::string staging = RecompressStagingPath(root);
      const auto staged = journal_internal::ListJournals(staging, nullptr).ValueOr({});
      const bool in_staging = !staged.empty() && staged.front().job_id == job.job_id;
      Status removed = in_staging ? RemoveTree(staging)
                                  : journal_internal::DiscardJob(root, job.job_id, dataset->file_system());
      if (!removed.ok()) return fail(FixStep::kCollect, removed);
      r.jobs_removed.push_back(job.job_id);
    }
  }
  auto collected = CollectGarbage(*dataset, d, options.remove_leftovers);
  if (!collected.ok()) return fail(FixStep::kCollect, collected.status());
  r.garbage = std::move(collected).value();
  return r;
}

}  // namespace sedpack
