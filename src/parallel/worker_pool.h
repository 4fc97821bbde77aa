// SPDX-License-Identifier: Apache-2.0
// Threads for the modules that spread work over a process's cores (the
// Filler's shard writers, the generator, the maintenance passes, the HDF5
// importer). Project-private: reached through the src/ include directory,
// never installed.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <system_error>
#include <thread>
#include <vector>

namespace sedpack {

/// CPUs this process may run on (sched_getaffinity: under MPI with binding,
/// the cores given to this rank); the hardware threads where that is unknown.
int UsableCpus();

/// Number of threads a `threads` setting means: itself if positive, otherwise
/// UsableCpus() (at least 1).
int ResolveThreads(int threads);

}  // namespace sedpack

namespace sedpack::internal {

/// Start up to `n` threads running `fn(i)` for i = 0, 1, ... When the system
/// refuses a thread (std::system_error, EAGAIN: a thread limit, or an
/// address-space cap with no room for another stack), stop there instead of
/// letting the exception end the process: callers share their work among the
/// threads that did start, and do it on their own thread if none did (the
/// result is empty then).
template <typename Fn>
std::vector<std::thread> StartThreads(int n, Fn fn) {
  std::vector<std::thread> threads;
  threads.reserve(static_cast<std::size_t>(n > 0 ? n : 0));
  for (int i = 0; i < n; ++i) {
    try {
      threads.emplace_back(fn, i);
    } catch (const std::system_error&) {
      break;
    }
  }
  return threads;
}

/// Fixed set of threads running queued jobs. Submit() blocks while `max_pending`
/// jobs are queued or running, which bounds the memory held by queued work.
/// Jobs must not throw.
class WorkerPool {
 public:
  WorkerPool(int threads, int max_pending) : max_pending_(max_pending < 1 ? 1 : max_pending) {
    threads_ = StartThreads(threads < 1 ? 1 : threads, [this](int) { Run(); });
  }
  ~WorkerPool() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stopping_ = true;
    }
    cv_work_.notify_all();
    for (auto& t : threads_) t.join();
  }
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  void Submit(std::function<void()> job) {
    if (threads_.empty()) {  // not even one thread could start: run it here
      job();
      return;
    }
    std::unique_lock<std::mutex> lock(mu_);
    cv_space_.wait(lock, [this] { return pending_ < max_pending_; });
    ++pending_;
    queue_.push_back(std::move(job));
    cv_work_.notify_one();
  }

  /// Block until every submitted job has finished.
  void Wait() {
    std::unique_lock<std::mutex> lock(mu_);
    cv_space_.wait(lock, [this] { return pending_ == 0; });
  }

 private:
  void Run() {
    for (;;) {
      std::function<void()> job;
      {
        std::unique_lock<std::mutex> lock(mu_);
        cv_work_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
        if (queue_.empty()) return;
        job = std::move(queue_.front());
        queue_.pop_front();
      }
      job();
      {
        std::lock_guard<std::mutex> lock(mu_);
        --pending_;
      }
      cv_space_.notify_all();
    }
  }

  std::mutex mu_;
  std::condition_variable cv_work_;
  std::condition_variable cv_space_;
  std::deque<std::function<void()>> queue_;
  std::vector<std::thread> threads_;
  int max_pending_;
  int pending_ = 0;
  bool stopping_ = false;
};

}  // namespace sedpack::internal
