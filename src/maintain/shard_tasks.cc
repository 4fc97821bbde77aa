// SPDX-License-Identifier: Apache-2.0
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "parallel/worker_pool.h"
#include "sedpack/cancel.h"
#include "check/check_wire_internal.h"
#include "maintain/shard_tasks_internal.h"
#include "sedpack/codecs/hash.h"
#include "sedpack/io/file.h"

namespace sedpack::maintain_internal {

Status ForEachShard(Comm& comm, const Dataset& ds, const CheckOptions& walk_options, int threads,
                    int* threads_used, const ShardFn& fn) {
  std::vector<std::string> parts;
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
      for (auto& p : PartitionShardTasks(walk.shards, comm.size())) parts.push_back(EncodeShardTasks(p));
      return Status::OK();
    }();
  }
  SEDPACK_RETURN_NOT_OK(AgreeOnStatus(comm, local));
  SEDPACK_ASSIGN_OR_RETURN(std::string mine_text, comm.Scatterv(parts, 0));
  SEDPACK_ASSIGN_OR_RETURN(std::vector<ShardCheckTask> mine, DecodeShardTasks(mine_text));
  const int n = ResolveThreads(threads);
  if (threads_used) *threads_used = n;
  const DatasetStructure& st = ds.info().dataset_structure;
  std::atomic<std::size_t> next{0};
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
      Status s = [&]() -> Status {
        SEDPACK_RETURN_NOT_OK(CheckCancelled());
        SEDPACK_ASSIGN_OR_RETURN(std::vector<std::byte> bytes, ds.ReadBytes(task.path));
        SEDPACK_ASSIGN_OR_RETURN(std::vector<std::string> hashes, HashBytes(st.hash_checksum_algorithms, bytes));
        if (hashes != task.expected) {
          return Status::Corruption(task.path, ": the file does not match its recorded hashes (", task.list_path,
                                    ")");
        }
        auto shard = DecodeShard(st.shard_file_type, st.compression, ds.schema(), std::move(bytes));
        if (!shard.ok()) return shard.status().WithPrefix(task.path + ": ");
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
    }
    std::lock_guard<std::mutex> lock(mu);
    --running;
    cv.notify_all();
  };
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
  }
  for (auto& t : pool) t.join();
  SEDPACK_RETURN_NOT_OK(comm.IdleBarrier());
  Status agreed = AgreeOnStatus(comm, first_error);
  SEDPACK_RETURN_NOT_OK(comm.DrainFailureNotices());
  return agreed;
}

}  // namespace sedpack::maintain_internal
