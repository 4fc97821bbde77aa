// SPDX-License-Identifier: Apache-2.0
// N ranks as N threads of one process, each with a Comm of its own whose
// collectives meet the others' in memory: a test run on any number of MPI
// ranks can so run the same job on another number (a job stopped on 2 ranks
// and rerun on 4, say) without a second mpirun. Only what the index build
// and the other rank-0-led jobs use is there: barriers, broadcast, gather,
// scatter and the reductions; no progress channel, no shared counter.
#pragma once

#include <algorithm>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "sedpack/comm/comm.h"

namespace sedpack::testing {

class ThreadRanks {
 public:
  explicit ThreadRanks(int size) : size_(size), slots_(static_cast<std::size_t>(size)) {}

  /// `job(comm)` on every rank, each on a thread of its own; returns when all have.
  void Run(const std::function<void(Comm&)>& job) {
    std::vector<std::thread> threads;
    for (int r = 0; r < size_; ++r) {
      threads.emplace_back([this, r, &job] {
        RankComm comm(this, r);
        job(comm);
      });
    }
    for (std::thread& t : threads) t.join();
  }

 private:
  // Every rank waits here until all have come (a generation count, so that
  // the barrier can be reused at once).
  void Wait() {
    std::unique_lock<std::mutex> lock(mu_);
    const std::uint64_t generation = generation_;
    if (++arrived_ == size_) {
      arrived_ = 0;
      ++generation_;
      cv_.notify_all();
      return;
    }
    cv_.wait(lock, [&] { return generation_ != generation; });
  }

  class RankComm final : public Comm {
   public:
    RankComm(ThreadRanks* ranks, int rank) : ranks_(ranks), rank_(rank) {}
    int rank() const override { return rank_; }
    int size() const override { return ranks_->size_; }
    bool IsMPI() const override { return false; }
    Status Barrier() override {
      ranks_->Wait();
      return Status::OK();
    }
    Status IdleBarrier() override { return Barrier(); }
    Status Bcast(std::string* data, int root) override {
      if (rank_ == root) ranks_->slots_[0] = *data;
      ranks_->Wait();
      if (rank_ != root) *data = ranks_->slots_[0];
      ranks_->Wait();
      return Status::OK();
    }
    Result<std::vector<std::string>> Gatherv(const std::string& mine, int root) override {
      ranks_->slots_[static_cast<std::size_t>(rank_)] = mine;
      ranks_->Wait();
      std::vector<std::string> out;
      if (rank_ == root) out = ranks_->slots_;
      ranks_->Wait();
      return out;
    }
    Result<std::string> Scatterv(const std::vector<std::string>& parts, int root) override {
      if (rank_ == root) {
        if (parts.size() != ranks_->slots_.size()) return Status::InvalidArgument("Scatterv: one part per rank");
        ranks_->slots_ = parts;
      }
      ranks_->Wait();
      std::string mine = ranks_->slots_[static_cast<std::size_t>(rank_)];
      ranks_->Wait();
      return mine;
    }
    Result<std::int64_t> AllreduceSum(std::int64_t value) override {
      return Reduce(value, [](std::int64_t a, std::int64_t b) { return a + b; });
    }
    Result<std::int64_t> AllreduceMin(std::int64_t value) override {
      return Reduce(value, [](std::int64_t a, std::int64_t b) { return std::min(a, b); });
    }
    Result<std::int64_t> AllreduceMax(std::int64_t value) override {
      return Reduce(value, [](std::int64_t a, std::int64_t b) { return std::max(a, b); });
    }
    void NotifyFailure() override {}
    bool PeerFailed() override { return false; }
    void SendProgress(int, std::int64_t, bool) override {}
    Result<Progress> ReceiveProgress() override { return Progress{{0}, true}; }
    Status OpenCounter() override { return Status::InvalidArgument("ThreadRanks has no shared counter"); }
    Result<std::int64_t> FetchAdd(std::int64_t) override {
      return Status::InvalidArgument("ThreadRanks has no shared counter");
    }
    Status CloseCounter() override { return Status::OK(); }
    Status DrainFailureNotices() override { return Status::OK(); }

   private:
    template <typename Op>
    std::int64_t Reduce(std::int64_t value, Op op) {
      ranks_->slots_[static_cast<std::size_t>(rank_)] = std::to_string(value);
      ranks_->Wait();
      std::int64_t out = value;
      for (const std::string& s : ranks_->slots_) out = op(out, std::stoll(s));
      ranks_->Wait();
      return out;
    }
    ThreadRanks* ranks_;
    int rank_;
  };

  int size_;
  std::vector<std::string> slots_;  // written between two Waits by the ranks the collective says
  std::mutex mu_;
  std::condition_variable cv_;
  int arrived_ = 0;
  std::uint64_t generation_ = 0;
};

}  // namespace sedpack::testing
