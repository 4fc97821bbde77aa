// SPDX-License-Identifier: Apache-2.0
#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "comm/progress_internal.h"
#include "parallel/worker_pool.h"
#include "sedpack/cancel.h"
#include "check/check_wire_internal.h"
#include "dataset/verified_read.h"
#include "io/kill_point.h"
#include "maintain/shard_tasks_internal.h"
#include "sedpack/codecs/hash.h"
#include "sedpack/io/file.h"

namespace sedpack::maintain_internal {

namespace {

using Clock = std::chrono::steady_clock;

// Rank 0's progress calls: the other ranks' counts come over the Comm's
// progress channel, at most one call per interval (and the finished one).
class PassProgress {
 public:
  PassProgress(Comm& comm, const ShardPassOptions& pass, std::uint64_t bytes_total, std::uint64_t shards_total)
      : comm_(comm), pass_(pass), collector_(comm), start_(Clock::now()), last_(start_) {
    totals_.bytes_total = bytes_total;
    totals_.shards_total = shards_total;
  }

  // While the shards are read: this rank's cumulative bytes.
  void Tick(std::uint64_t mine) {
    if (!collector_.is_root()) {
      collector_.Send(mine, false);
      return;
    }
    (void)collector_.Poll();  // a lost message only delays the numbers
    const auto now = Clock::now();
    if (!pass_.progress || std::chrono::duration<double>(now - last_).count() < pass_.progress_interval_s) return;
    last_ = now;
    Call(mine, false);
  }

  // This rank's workers have ended: the last count goes to rank 0, which
  // waits for every rank's, so that no count is left in the channel.
  void Drain(std::uint64_t mine) {
    if (!collector_.is_root()) {
      collector_.Send(mine, true);
      return;
    }
    if (comm_.size() > 1) collector_.WaitForOthersFinal([] {});
    final_bytes_ = collector_.Total(mine);
  }

  void Finished() {
    if (collector_.is_root() && pass_.progress) Call(final_bytes_, true, /*total=*/true);
  }

 private:
  void Call(std::uint64_t mine, bool finished, bool total = false) {
    ShardPassProgress p = totals_;
    p.bytes_done = std::max(reported_, total ? mine : collector_.Total(mine));
    reported_ = p.bytes_done;
    p.seconds = std::chrono::duration<double>(Clock::now() - start_).count();
    p.finished = finished;
    pass_.progress(p);
  }

  Comm& comm_;
  const ShardPassOptions& pass_;
  internal::RankProgress collector_;
  ShardPassProgress totals_;
  Clock::time_point start_, last_;
  std::uint64_t reported_ = 0, final_bytes_ = 0;
};

}  // namespace

Status ForEachShard(Comm& comm, const Dataset& ds, const CheckOptions& walk_options, const ShardPassOptions& pass,
                    int* threads_used, const ShardFn& fn, const ShardSkipFn& skip) {
  std::vector<std::string> parts;
  std::uint64_t bytes_total = 0, shards_total = 0;
  Status local;
  if (comm.rank() == 0) {
    local = [&]() -> Status {
      SEDPACK_ASSIGN_OR_RETURN(MetadataWalk walk, WalkMetadata(ds, walk_options));
      for (const CheckProblem& p : walk.report.problems) {
        if (!p.warning()) {
          return Status::Corruption(ds.root(), ": the metadata does not check clean (", p.path, ": ", p.message,
                                    "); run `sedpack verify` first");
        }
      }
      for (const ShardCheckTask& t : walk.shards) bytes_total += t.size;
      shards_total = walk.shards.size();
      for (auto& p : PartitionShardTasks(walk.shards, comm.size())) parts.push_back(EncodeShardTasks(p));
      return Status::OK();
    }();
  }
  SEDPACK_RETURN_NOT_OK(AgreeOnStatus(comm, local));
  SEDPACK_ASSIGN_OR_RETURN(std::string mine_text, comm.Scatterv(parts, 0));
  SEDPACK_ASSIGN_OR_RETURN(std::vector<ShardCheckTask> mine, DecodeShardTasks(mine_text));
  const int n = ResolveThreads(pass.threads);
  if (threads_used) *threads_used = n;
  const auto checks = dataset_internal::ReaderChecks(ds, true, false, nullptr);
  std::atomic<std::size_t> next{0};
  std::atomic<std::uint64_t> bytes_done{0};
  // Only this (the calling) thread talks to `comm`: a Comm is not thread-safe,
  // and MPI is initialized for calls from the main thread only. The workers see
  // a failure elsewhere through `stop`, and report their own through
  // `first_error`; this thread relays both ways while they run.
  std::atomic<bool> stop{false};
  std::mutex mu;
  std::condition_variable cv;
  int running = n;
  Status first_error;
  auto work = [&](int t) {
    for (std::size_t i; !stop.load(std::memory_order_relaxed) && (i = next.fetch_add(1)) < mine.size();) {
      const ShardCheckTask& task = mine[i];
      if (skip && skip(task)) {
        bytes_done.fetch_add(task.size, std::memory_order_relaxed);
        continue;
      }
      if (pass.before_shard) pass.before_shard(comm.rank());
      TestShardDelay();
      Status s = [&]() -> Status {
        SEDPACK_RETURN_NOT_OK(CheckCancelled());
        // Checked as a verified read checks it (the sidecar's fast checksum when
        // fresh, else the fastest recorded hash): every algorithm is `verify`'s job.
        ShardInfo info;
        info.file_infos.push_back(FileInfo{task.path, task.expected});
        auto shard = dataset_internal::ReadShardChecked(ds, info, ShardReadLimits{}, true, checks.get());
        if (!shard.ok()) return shard.status();  // names the file
        if (static_cast<std::int64_t>((*shard)->num_examples()) != task.number_of_examples) {
          return Status::Corruption(task.path, ": holds ", (*shard)->num_examples(), " examples, ", task.list_path,
                                    " says ", task.number_of_examples);
        }
        return fn(t, task, **shard);
      }();
      if (!s.ok()) {
        std::lock_guard<std::mutex> lock(mu);
        if (first_error.ok()) first_error = s;
        stop.store(true, std::memory_order_relaxed);
        break;
      }
      bytes_done.fetch_add(task.size, std::memory_order_relaxed);
    }
    std::lock_guard<std::mutex> lock(mu);
    --running;
    cv.notify_all();
  };
  PassProgress progress(comm, pass, bytes_total, shards_total);
  std::vector<std::thread> pool = internal::StartThreads(n, work);
  {
    // Threads the system refused never run `work`; with none at all, this thread does the work.
    std::lock_guard<std::mutex> lock(mu);
    running -= n - static_cast<int>(pool.size());
    if (pool.empty()) running = 1;
  }
  if (pool.empty()) work(0);
  bool notified = false;
  for (;;) {
    bool done = false, failed = false;
    {
      // Wakes at once when the last worker ends; otherwise polls for peers' failures.
      std::unique_lock<std::mutex> lock(mu);
      cv.wait_for(lock, std::chrono::milliseconds(20), [&] { return running == 0; });
      done = running == 0;
      failed = !first_error.ok();
    }
    if (failed && !notified) {
      comm.NotifyFailure();
      notified = true;
    }
    if (done) break;
    if (comm.PeerFailed()) stop.store(true, std::memory_order_relaxed);
    progress.Tick(bytes_done.load());
  }
  for (auto& t : pool) t.join();
  progress.Drain(bytes_done.load());
  SEDPACK_RETURN_NOT_OK(comm.IdleBarrier());
  Status agreed = AgreeOnStatus(comm, first_error);
  SEDPACK_RETURN_NOT_OK(comm.DrainFailureNotices());
  if (agreed.ok()) progress.Finished();
  return agreed;
}

}  // namespace sedpack::maintain_internal
