// SPDX-License-Identifier: Apache-2.0
// A Comm that forwards to another one and counts the calls made from any
// thread other than the one that created it. A Comm is not thread-safe and MPI
// is initialized for the main thread only, so code that runs worker threads
// must keep every Comm call on its calling thread; tests check that the count
// stays zero. (A serial Comm's failure channel does nothing, so without this
// such a misuse would go unnoticed by the serial tests, ThreadSanitizer included.)
#pragma once

#include <atomic>
#include <thread>

#include "sedpack/comm/comm.h"

namespace sedpack::testing {

class CallingThreadComm : public Comm {
 public:
  explicit CallingThreadComm(Comm& inner) : inner_(inner), owner_(std::this_thread::get_id()) {}

  /// Calls made from a thread other than the creating one.
  int foreign_calls() const { return foreign_.load(); }

  int rank() const override {
    Note();
    return inner_.rank();
  }
  int size() const override {
    Note();
    return inner_.size();
  }
  bool IsMPI() const override {
    Note();
    return inner_.IsMPI();
  }
  Status Barrier() override {
    Note();
    return inner_.Barrier();
  }
  Status IdleBarrier() override {
    Note();
    return inner_.IdleBarrier();
  }
  Status Bcast(std::string* data, int root) override {
    Note();
    return inner_.Bcast(data, root);
  }
  Result<std::vector<std::string>> Gatherv(const std::string& mine, int root) override {
    Note();
    return inner_.Gatherv(mine, root);
  }
  Result<std::string> Scatterv(const std::vector<std::string>& parts, int root) override {
    Note();
    return inner_.Scatterv(parts, root);
  }
  Result<std::int64_t> AllreduceSum(std::int64_t v) override {
    Note();
    return inner_.AllreduceSum(v);
  }
  Result<std::int64_t> AllreduceMin(std::int64_t v) override {
    Note();
    return inner_.AllreduceMin(v);
  }
  Result<std::int64_t> AllreduceMax(std::int64_t v) override {
    Note();
    return inner_.AllreduceMax(v);
  }
  void NotifyFailure() override {
    Note();
    inner_.NotifyFailure();
  }
  bool PeerFailed() override {
    Note();
    return inner_.PeerFailed();
  }
  void SendProgress(int root, std::int64_t value, bool final) override {
    Note();
    inner_.SendProgress(root, value, final);
  }
  Result<Progress> ReceiveProgress() override {
    Note();
    return inner_.ReceiveProgress();
  }
  Status OpenCounter() override {
    Note();
    return inner_.OpenCounter();
  }
  Result<std::int64_t> FetchAdd(std::int64_t delta) override {
    Note();
    return inner_.FetchAdd(delta);
  }
  Status CloseCounter() override {
    Note();
    return inner_.CloseCounter();
  }
  Status DrainFailureNotices() override {
    Note();
    return inner_.DrainFailureNotices();
  }

 private:
  void Note() const {
    if (std::this_thread::get_id() != owner_) foreign_.fetch_add(1);
  }

  Comm& inner_;
  const std::thread::id owner_;
  mutable std::atomic<int> foreign_{0};
};

}  // namespace sedpack::testing
