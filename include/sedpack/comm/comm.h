// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "sedpack/status.h"

namespace sedpack {

/// The few collective operations the parallel writer and verifier need, so that
/// the same logic runs under MPI (MpiSession, module sedpack::mpi) and serially
/// (SerialComm, one rank, no MPI). Every rank must make the same collective
/// calls in the same order. Not thread-safe: use from one thread per rank.
class Comm {
 public:
  virtual ~Comm() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  /// True for a real MPI communicator.
  virtual bool IsMPI() const = 0;

  virtual Status Barrier() = 0;
  /// A barrier that sleeps while it waits instead of spinning, so that ranks that
  /// finished early leave the CPU to those still working (MPI's blocking
  /// collectives busy-poll). Use before a collective that follows uneven work.
  virtual Status IdleBarrier() = 0;
  /// Replace `*data` on every rank by root's bytes (any length).
  virtual Status Bcast(std::string* data, int root) = 0;
  /// Gather every rank's bytes (any length each) to root, in rank order. Other
  /// ranks get an empty vector.
  virtual Result<std::vector<std::string>> Gatherv(const std::string& mine, int root) = 0;
  /// Root hands `parts[r]` to rank r (parts.size() == size() on root; ignored elsewhere).
  virtual Result<std::string> Scatterv(const std::vector<std::string>& parts, int root) = 0;
  /// Sum / minimum / maximum of one integer over all ranks, on every rank.
  virtual Result<std::int64_t> AllreduceSum(std::int64_t value) = 0;
  virtual Result<std::int64_t> AllreduceMin(std::int64_t value) = 0;
  virtual Result<std::int64_t> AllreduceMax(std::int64_t value) = 0;

  /// Tell every other rank, without waiting, that this rank has failed. Idempotent.
  virtual void NotifyFailure() = 0;
  /// True once another rank has called NotifyFailure. Cheap: meant to be polled
  /// in loops so that work stops within moments of a failure anywhere.
  virtual bool PeerFailed() = 0;
  /// Non-blocking: send a progress `value` (e.g. cumulative bytes) to `root` on a
  /// channel of its own; `final` marks this rank's last message. Non-root ranks only.
  virtual void SendProgress(int root, std::int64_t value, bool final) = 0;
  /// Root: take every progress message that has arrived. `values[r]` is rank r's
  /// latest value; `all_final` once every other rank sent its final message.
  struct Progress {
    std::vector<std::int64_t> values;
    bool all_final = false;
  };
  virtual Result<Progress> ReceiveProgress() = 0;

  /// Collective: create a counter shared by every rank, starting at 0 (one at a
  /// time: a second OpenCounter before CloseCounter is an Internal error).
  virtual Status OpenCounter() = 0;
  /// Add `delta` to the shared counter atomically and return its value before.
  /// Not collective: any rank, at any time between OpenCounter and
  /// CloseCounter, without the others taking part (MPI one-sided atomics). For
  /// handing out work on demand: each rank takes the next index when it is free.
  virtual Result<std::int64_t> FetchAdd(std::int64_t delta) = 0;
  /// Collective: free the counter.
  virtual Status CloseCounter() = 0;

  /// Collective end of the failure channel: consume every notice still in flight.
  /// Call on every rank before the communicator is destroyed.
  virtual Status DrainFailureNotices() = 0;
};

/// Whether the process looks like one of several tasks started by an MPI
/// launcher (mpirun/mpiexec, or srun --mpi=pmix). Pure environment check.
bool LaunchedUnderMpi();

/// Collective: agree on the outcome of a step every rank ran. OK if every rank's
/// `mine` is OK. Otherwise the lowest failing rank gets its own status back and
/// every other rank gets the same code, StatusDetail::kPeerAborted and the
/// message "aborted: rank N failed: <its message>".
Status AgreeOnStatus(Comm& comm, const Status& mine);

/// A one-rank communicator: collectives copy input to output. Pass one to the
/// Comm-taking functions (VerifyDataset, DistributedWriter, Recompress, ...) to
/// run them in a single process without MPI.
class SerialComm final : public Comm {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  bool IsMPI() const override { return false; }
  Status Barrier() override { return Status::OK(); }
  Status IdleBarrier() override { return Status::OK(); }
  /// InvalidArgument unless `root` is 0 (as for every rooted collective here).
  Status Bcast(std::string* data, int root) override;
  Result<std::vector<std::string>> Gatherv(const std::string& mine, int root) override;
  /// InvalidArgument unless `parts` holds exactly one part.
  Result<std::string> Scatterv(const std::vector<std::string>& parts, int root) override;
  Result<std::int64_t> AllreduceSum(std::int64_t value) override { return value; }
  Result<std::int64_t> AllreduceMin(std::int64_t value) override { return value; }
  Result<std::int64_t> AllreduceMax(std::int64_t value) override { return value; }
  void NotifyFailure() override {}
  bool PeerFailed() override { return false; }
  void SendProgress(int, std::int64_t, bool) override {}
  Result<Progress> ReceiveProgress() override { return Progress{{0}, true}; }
  Status OpenCounter() override;
  Result<std::int64_t> FetchAdd(std::int64_t delta) override;
  Status CloseCounter() override;
  Status DrainFailureNotices() override { return Status::OK(); }

 private:
  bool counter_open_ = false;
  std::int64_t counter_ = 0;
};

/// A SerialComm on the heap (for code that holds a std::unique_ptr<Comm>).
std::unique_ptr<Comm> MakeSerialComm();

}  // namespace sedpack
