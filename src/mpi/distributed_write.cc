// SPDX-License-Identifier: Apache-2.0
#include "sedpack/mpi/distributed_write.h"

#include <algorithm>
#include <filesystem>
#include <sstream>
#include <string_view>

#include "sedpack/cancel.h"
#include "sedpack/io/file.h"
#include "dataset/commit_internal.h"
#include "sidecar/sidecar_internal.h"
#include "comm/status_wire.h"
#include "sedpack/metadata/paths.h"
#include "dataset/merge.h"
#include "io/lock_file.h"
#include "metadata/shard_list_info_wire.h"

#include "dataset/checks_write_internal.h"
#include "journal/journal_internal.h"
#include "journal/resume_internal.h"

namespace sedpack {
namespace {

using internal::DecodeStatus;
using internal::EncodeStatus;

// Serialized ShardListInfos, one compact JSON per line.
std::string EncodeInfos(const std::vector<ShardListInfo>& infos) {
  std::string out;
  for (const auto& i : infos) {
    out += SerializeShardListInfo(i);
    out += '\n';
  }
  return out;
}
Result<std::vector<ShardListInfo>> DecodeInfos(const std::string& text, int from_rank) {
  std::vector<ShardListInfo> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    SEDPACK_ASSIGN_OR_RETURN(auto info,
                             ParseShardListInfo(line, "shard list info from rank " + std::to_string(from_rank)));
    out.push_back(std::move(info));
  }
  return out;
}

// Whether a committed job already used `job_id`: its rank-0 folder in any split.
bool JobFoldersExist(const std::string& root, const std::string& job_id, FileSystem* fs) {
  for (Split s : AllSplits()) {
    if (PathExists(JoinRoot(root, std::string(SplitName(s)) + "/" + job_id + "-r0"), fs)) return true;
  }
  return false;
}

// Rank 0 reserves the job id for the job's whole life (commit.h kJobLockDir),
// so that two jobs writing at the same time never share shard folders. A random
// id that is taken (reserved by a live job, or used by a committed one) is
// drawn again; a given id waits for a live job that has it, and takes over the
// reservation of a dead one.
Result<std::unique_ptr<LockFile>> ReserveJobId(const std::string& root, bool random, std::string* job_id,
                                               const CommitLockOptions& lock) {
  const std::string dir(kJobLockDir);
  SEDPACK_RETURN_NOT_OK(CheckStaysBeneath(root, dir + "/x.lock", lock.file_system));
  SEDPACK_RETURN_NOT_OK(CreateDirectories(JoinRoot(root, dir), lock.file_system));
  LockFileOptions lo;
  lo.file_system = lock.file_system;
  lo.stale_timeout = lock.stale_timeout;
  lo.wait_timeout = random ? std::chrono::milliseconds(0) : lock.wait_timeout;
  FileSystem& files = FileSystemOr(lock.file_system);
  for (int attempt = 0, vanished = 0;; ++attempt) {
    if (!random || !JobFoldersExist(root, *job_id, lock.file_system)) {
      auto reserved = LockFile::Acquire(JoinRoot(root, dir + "/" + *job_id + ".lock"), lo);
      // A job that ends removes the jobs folder when it is empty (an empty one
      // says nothing), and it may do so between this job's CreateDirectories
      // and its lock's first file there; once that file is in, the folder
      // stays. So a folder found gone after a failure is made again, and the
      // same id tried again.
      FileStat st;
      if (!reserved.ok() && vanished < 16 &&
          (files.Stat(JoinRoot(root, dir).c_str(), &st) != 0 || st.type != FileType::kDirectory)) {
        ++vanished;
        SEDPACK_RETURN_NOT_OK(CreateDirectories(JoinRoot(root, dir), lock.file_system));
        continue;
      }
      if (reserved.ok() || !random || reserved.status().code() != StatusCode::kAlreadyExists) {
        if (!reserved.ok()) return reserved.status().WithPrefix("job id " + *job_id + ": ");
        return reserved;
      }
    }
    if (attempt >= 64) return Status::Internal("no free random job id after ", attempt, " tries in ", root);
    *job_id = RandomHex32().substr(0, 12);
  }
}

// This rank's checks sidecar records: the runs its filler spooled, named by
// file (every rank sees the dataset's file system), not the records. A first
// line "-" says this rank has none to give (its spool failed).
std::string EncodeChecks(Filler* filler) {
  if (!filler) return std::string();
  return sidecar_internal::RunsMessage(FillerAccess::ChecksRuns(*filler));
}

// Rank 0, after the commit: the sidecar with every rank's records, merged
// from their spools (the other ranks keep them until the outcome's broadcast).
// Best effort, like a single writer's: if a rank's records are missing, no
// sidecar is written (reads of the shards check the recorded hashes).
void CommitGatheredChecks(const std::string& root, FileSystem* fs, const Filler* filler,
                          const std::vector<std::string>& gathered) {
  std::vector<sidecar_internal::ChecksRun> all;
  for (const std::string& g : gathered) {
    if (g.empty()) continue;  // a rank without a filler
    auto runs = sidecar_internal::ParseRunsMessage(g);
    if (!runs.ok() || !runs->has_value()) return;
    all.insert(all.end(), (*runs)->begin(), (*runs)->end());
  }
  dataset_internal::CommitChecks(root, filler ? FillerAccess::Carried(*filler) : nullptr, all, fs);
}

}  // namespace

Result<std::unique_ptr<DistributedWriter>> DistributedWriter::Open(Comm& comm, const std::string& root,
                                                                   DistributedWriteOptions options) {
  std::unique_ptr<DistributedWriter> w(new DistributedWriter(comm));
  if (options.file_system != nullptr) options.commit_lock.file_system = options.file_system;
  FileSystem* const fs = options.commit_lock.file_system;
  // 1. Rank 0 creates or opens the dataset and picks the job id.
  std::string payload;
  if (comm.rank() == 0) {
    Status st;
    w->job_id_ = options.job_id.empty() ? RandomHex32().substr(0, 12) : options.job_id;
    Status valid = ValidateRelativePath(w->job_id_, "job id");
    if (!valid.ok() || PathComponents(w->job_id_).size() != 1) {
      st = Status::InvalidArgument("job id \"", w->job_id_, "\" must be one folder name");
    } else if (!PathExists(JoinRoot(root, "dataset_info.json"), fs) && options.create_structure) {
      OpenOptions co;
      co.commit_lock = options.commit_lock;
      auto created = Dataset::Create(root, options.create_metadata.value_or(Metadata{}),
                                     *options.create_structure, co);
      st = created.status();
    }
    if (st.ok()) {
      auto reserved = ReserveJobId(root, options.job_id.empty(), &w->job_id_, options.commit_lock);
      st = reserved.status();
      if (reserved.ok()) w->reservation_ = std::move(reserved).value();
    }
    // A restart throws away every rank's earlier work, whatever the number of
    // ranks then; the other ranks wait for this in the broadcast below.
    if (st.ok() && options.restart && !options.resume_parameters.empty()) {
      st = journal_internal::DiscardJob(root, w->job_id_, fs);
    }
    payload = EncodeStatus(st) + "\n" + w->job_id_;
  }
  SEDPACK_RETURN_NOT_OK(comm.Bcast(&payload, 0));
  const auto last = payload.rfind('\n');
  Status opened = DecodeStatus(payload.substr(0, last));
  w->job_id_ = payload.substr(last + 1);
  // Rank 0's failure to create or name the job: the others abort because of it.
  if (!opened.ok() && comm.rank() != 0) {
    opened = opened.WithPrefix("aborted: rank 0 failed: ").WithDetail(StatusDetail::kPeerAborted);
  }
  if (opened.ok()) {
    OpenOptions oo;
    oo.commit_lock = options.commit_lock;
    auto ds = Dataset::Open(root, oo);
    opened = ds.status();
    if (ds.ok()) w->dataset_ = std::move(ds).value();
  }
  if (opened.ok()) {
    FillerOptions fo = options.filler;
    fo.relative_path_from_split = w->RankFolder();
    fo.auto_update_dataset = false;
    // A journaled shard is not forced to disk before its record (as no shard
    // of a job without a journal is): the rerun keeps a shard only once its
    // size and hashes check, so one a power cut lost or tore is written
    // again, and a flush per shard cost a 1-rank generate a third of its time.
    auto filler = Filler::Make(w->dataset_, fo);
    opened = filler.status();
    if (filler.ok()) w->filler_ = std::move(filler).value();
  }
  if (opened.ok() && !options.resume_parameters.empty()) opened = w->StartJournal(options);
  // Every rank must be able to open the dataset (a rank may not see the file system).
  SEDPACK_ASSIGN_OR_RETURN(std::int64_t first_bad, comm.AllreduceMin(opened.ok() ? comm.size() : comm.rank()));
  if (!opened.ok()) return opened;
  if (first_bad < comm.size()) {
    return Status::IOError("aborted: rank ", first_bad, " could not open the dataset at ", root)
        .WithDetail(StatusDetail::kPeerAborted);
  }
  if (!options.resume_parameters.empty()) {
    SEDPACK_ASSIGN_OR_RETURN(auto kept, comm.AllreduceSum(static_cast<std::int64_t>(w->kept_shards_)));
    SEDPACK_ASSIGN_OR_RETURN(auto named, comm.AllreduceSum(static_cast<std::int64_t>(w->journal_shards_)));
    w->kept_shards_ = static_cast<std::uint64_t>(kept);
    w->journal_shards_ = static_cast<std::uint64_t>(named);
  }
  return w;
}

Status DistributedWriter::StartJournal(const DistributedWriteOptions& options) {
  using namespace journal_internal;
  const int rank = comm_.rank();
  if (JobCommitted(dataset_->root(), job_id_, dataset_->file_system())) {
    // Killed after its commit, before its journals went: nothing to resume.
    (void)RemoveTree(dataset_->PathOf(JournalPath(job_id_, rank)), dataset_->file_system());
    return Status::AlreadyExists("job ", job_id_, " is already committed in ", dataset_->root())
        .WithDetail(StatusDetail::kJobCommitted);
  }
  SEDPACK_ASSIGN_OR_RETURN(RankResume resumed, ResumeRank(*dataset_, job_id_, rank, RankFolder(),
                                                          options.resume_parameters, options.restart));
  kept_examples_ = resumed.kept_examples;
  kept_shards_ = resumed.kept.size();
  journal_shards_ = resumed.recorded;
  journal_ = std::move(resumed.journal);
  JournalWriter* journal = journal_.get();
  FillerAccess::KeepWrittenShards(*filler_,
                                  [journal](const FilledShard& f) { return journal->Append(ToJournalUnit(f)); });
  return FillerAccess::ResumeFrom(*filler_, resumed.kept);
}

void DistributedWriter::RemoveRankFolders() {
  if (journal_) return;  // kept for the next run of the same job
  for (Split s : AllSplits()) {
    (void)RemoveTree(dataset_->PathOf(std::string(SplitName(s)) + "/" + RankFolder()), dataset_->file_system());
  }
}

DistributedWriter::DistributedWriter(Comm& comm) : comm_(comm) {}
DistributedWriter::~DistributedWriter() = default;

std::string DistributedWriter::RankFolder() const { return job_id_ + "-r" + std::to_string(comm_.rank()); }

bool DistributedWriter::failed() { return !local_.ok() || comm_.PeerFailed(); }

bool DistributedWriter::IsAbort(const Status& status) {
  return status.detail() == StatusDetail::kPeerAborted;
}

void DistributedWriter::Fail(const Status& status) {
  // A caller passing back the abort WriteExample returned is not a failure of
  // this rank: recording it would hide the real reason from the other ranks.
  if (status.ok() || !local_.ok() || IsAbort(status)) return;
  local_ = status;
  comm_.NotifyFailure();
}

Status DistributedWriter::WriteExample(Split split, std::span<const ValueView> values,
                                       const JsonValue* custom_metadata) {
  if (!local_.ok()) return local_;
  if (!filler_) return Status::InvalidArgument("the distributed writer is finished");
  if (Status c = CheckCancelled(); !c.ok()) {
    Fail(c);
    return c;
  }
  if (comm_.PeerFailed()) {
    return Status::IOError("aborted: another rank failed").WithDetail(StatusDetail::kPeerAborted);
  }
  Status st = filler_->WriteExample(split, values, custom_metadata);
  if (!st.ok()) Fail(st);
  return st;
}

Status DistributedWriter::Finish() {
  if (finished_) return Status::InvalidArgument("DistributedWriter::Finish called twice");
  finished_ = true;
  bool may_be_committed = false;
  Status st = FinishJob(&may_be_committed);
  if (!st.ok() && !may_be_committed) {
    // Nothing refers to this rank's folders: they go (the filler already
    // removed its files if it was the one that failed).
    filler_.reset();
    RemoveRankFolders();
  }
  return st;
}

Status DistributedWriter::FinishJob(bool* may_be_committed) {
  // 2. Close this rank's shards and its own subtree lists (<split>/<job>-r<rank>/...).
  std::vector<ShardListInfo> mine;
  if (local_.ok() && !comm_.PeerFailed()) {
    Status st = filler_->Finish();
    if (st.ok() && !filler_->updated_infos().empty()) {
      auto merged = MergeSubtrees(*dataset_, filler_->updated_infos(), 2);
      st = merged.status();
      if (merged.ok()) mine = std::move(merged).value();
    }
    if (!st.ok()) Fail(st);
  }
  // Ranks finish their shards at different times; wait without spinning.
  SEDPACK_RETURN_NOT_OK(comm_.IdleBarrier());
  // 3. Agree on success: the lowest failing rank, or size() if none failed.
  SEDPACK_ASSIGN_OR_RETURN(std::int64_t first_bad,
                           comm_.AllreduceMin(local_.ok() ? comm_.size() : comm_.rank()));
  SEDPACK_RETURN_NOT_OK(comm_.DrainFailureNotices());
  if (first_bad < comm_.size()) {
    // Tell everyone what the first failing rank saw (its code too, so that an
    // interrupted job is reported as one on every rank).
    std::string why = (comm_.rank() == first_bad) ? EncodeStatus(local_) : std::string();
    SEDPACK_RETURN_NOT_OK(comm_.Bcast(&why, static_cast<int>(first_bad)));
    // Nothing is merged: this rank's shards and lists are garbage. Stop its
    // shard writers, then remove its own folders (no other rank writes there).
    filler_.reset();
    RemoveRankFolders();
    // Return together, so that whoever looks at the dataset next (rank 0 removing
    // a folder the job created, a check) sees every rank's folders gone.
    SEDPACK_RETURN_NOT_OK(comm_.IdleBarrier());
    if (!local_.ok()) return local_;
    const Status first = DecodeStatus(why);
    return Status(first.code() == StatusCode::kOk ? StatusCode::kIOError : first.code(),
                  "aborted: rank " + std::to_string(first_bad) + " failed: " + first.message(),
                  StatusDetail::kPeerAborted);
  }
  // 4. Gather every rank's subtree infos on rank 0, merge, broadcast the outcome.
  SEDPACK_ASSIGN_OR_RETURN(std::vector<std::string> gathered, comm_.Gatherv(EncodeInfos(mine), 0));
  // The checks sidecar records of every rank's shards come the same way.
  SEDPACK_ASSIGN_OR_RETURN(std::vector<std::string> gathered_checks, comm_.Gatherv(EncodeChecks(filler_.get()), 0));
  std::string outcome;
  if (comm_.rank() == 0) {
    std::vector<ShardListInfo> all;
    Status st;
    for (std::size_t r = 0; r < gathered.size() && st.ok(); ++r) {
      auto infos = DecodeInfos(gathered[r], static_cast<int>(r));
      st = infos.status();
      if (infos.ok()) all.insert(all.end(), infos->begin(), infos->end());
    }
    if (st.ok() && !all.empty()) st = dataset_->WriteConfig(all).status();
    if (st.ok() && !all.empty()) CommitGatheredChecks(dataset_->root(), dataset_->file_system(), filler_.get(), gathered_checks);
    outcome = EncodeStatus(st);
  }
  // From here a failure to hear the outcome says nothing about the commit.
  *may_be_committed = true;
  SEDPACK_RETURN_NOT_OK(comm_.Bcast(&outcome, 0));
  Status merged = DecodeStatus(outcome);
  // WriteConfig either commits or leaves the metadata as it was.
  if (!merged.ok()) *may_be_committed = false;
  if (!merged.ok()) {
    return comm_.rank() == 0
               ? merged
               : merged.WithPrefix("aborted: rank 0 failed to merge: ").WithDetail(StatusDetail::kPeerAborted);
  }
  // Committed: the journal has nothing left to keep.
  const bool journaled = journal_ != nullptr;  // every rank of a journaled job has one
  if (journal_) (void)journal_->Remove();
  journal_.reset();
  if (comm_.rank() != 0) SEDPACK_RETURN_NOT_OK(dataset_->Reload());
  if (reservation_) (void)reservation_->Release();  // the job's folders now name it
  // The jobs folder goes once no job has anything in it (rmdir fails on a
  // folder another job is using), so a finished dataset packs as it was.
  if (journaled) {
    (void)comm_.Barrier();
    if (comm_.rank() == 0) {
      (void)FileSystemOr(dataset_->file_system()).Rmdir(dataset_->PathOf(journal_internal::kJournalDir).c_str());
    }
  }
  return Status::OK();
}

std::string SlurmJobId() {
  std::string id = journal_internal::SlurmJobIdentity();  // "slurm job 17 task 3"
  for (std::string_view word : {"job ", "task "}) {
    for (std::size_t at; (at = id.find(word)) != std::string::npos;) id.erase(at, word.size());
  }
  std::replace(id.begin(), id.end(), ' ', '-');
  return id;
}

}  // namespace sedpack
