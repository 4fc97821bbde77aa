// SPDX-License-Identifier: Apache-2.0
// The only translation unit that includes <mpi.h>.
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <thread>
#include <deque>
#include <limits>
#include <vector>

#include "sedpack/mpi/mpi_comm.h"

namespace sedpack {
namespace {

// Tag of the failure channel: one int per notice, on a private duplicate of
// MPI_COMM_WORLD so that it can never match application traffic.
constexpr int kFailureTag = 7301;
// Tag of the progress channel: two long longs (value, final flag) per message.
constexpr int kProgressTag = 7302;

// Every MPI return code passes through here; `what` names the collective.
Status Check(int rc, const char* what) {
  if (rc == MPI_SUCCESS) return Status::OK();
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(rc, text, &len);
  return Status::IOError("MPI ", what, " failed: ", std::string(text, static_cast<std::size_t>(len)));
}

Status CheckCount(std::size_t n, const char* what) {
  if (n > static_cast<std::size_t>(std::numeric_limits<int>::max())) {
    return Status::InvalidArgument("MPI ", what, ": message of ", n, " bytes exceeds 2 GiB");
  }
  return Status::OK();
}

class MpiComm final : public Comm {
 public:
  static Result<std::unique_ptr<MpiComm>> Make() {
    std::unique_ptr<MpiComm> c(new MpiComm());
    SEDPACK_RETURN_NOT_OK(Check(MPI_Comm_dup(MPI_COMM_WORLD, &c->comm_), "Comm_dup"));
    SEDPACK_RETURN_NOT_OK(Check(MPI_Comm_set_errhandler(c->comm_, MPI_ERRORS_RETURN), "set_errhandler"));
    SEDPACK_RETURN_NOT_OK(Check(MPI_Comm_rank(c->comm_, &c->rank_), "Comm_rank"));
    SEDPACK_RETURN_NOT_OK(Check(MPI_Comm_size(c->comm_, &c->size_), "Comm_size"));
    // One receive stays posted for the first failure notice from anyone.
    SEDPACK_RETURN_NOT_OK(Check(MPI_Irecv(&c->notice_in_, 1, MPI_INT, MPI_ANY_SOURCE, kFailureTag,
                                          c->comm_, &c->notice_req_),
                                "Irecv(failure channel)"));
    return c;
  }

  ~MpiComm() override {
    if (win_ != MPI_WIN_NULL) {
      MPI_Win_unlock_all(win_);
      MPI_Win_free(&win_);
    }
    if (notice_req_ != MPI_REQUEST_NULL) {
      MPI_Cancel(&notice_req_);
      MPI_Wait(&notice_req_, MPI_STATUS_IGNORE);
    }
    if (comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
  }

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  bool IsMPI() const override { return true; }

  Status Barrier() override { return Check(MPI_Barrier(comm_), "Barrier"); }

  Status IdleBarrier() override {
    MPI_Request req;
    SEDPACK_RETURN_NOT_OK(Check(MPI_Ibarrier(comm_, &req), "Ibarrier"));
    for (;;) {
      int done = 0;
      SEDPACK_RETURN_NOT_OK(Check(MPI_Test(&req, &done, MPI_STATUS_IGNORE), "Test(Ibarrier)"));
      if (done) return Status::OK();
      std::this_thread::sleep_for(std::chrono::microseconds(500));
    }
  }

  Status Bcast(std::string* data, int root) override {
    long long n = static_cast<long long>(data->size());
    SEDPACK_RETURN_NOT_OK(Check(MPI_Bcast(&n, 1, MPI_LONG_LONG, root, comm_), "Bcast(size)"));
    SEDPACK_RETURN_NOT_OK(CheckCount(static_cast<std::size_t>(n), "Bcast"));
    data->resize(static_cast<std::size_t>(n));
    return Check(MPI_Bcast(data->data(), static_cast<int>(n), MPI_BYTE, root, comm_), "Bcast");
  }

  Result<std::vector<std::string>> Gatherv(const std::string& mine, int root) override {
    SEDPACK_RETURN_NOT_OK(CheckCount(mine.size(), "Gatherv"));
    int n = static_cast<int>(mine.size());
    std::vector<int> counts(rank_ == root ? size_ : 0);
    SEDPACK_RETURN_NOT_OK(
        Check(MPI_Gather(&n, 1, MPI_INT, counts.data(), 1, MPI_INT, root, comm_), "Gather(sizes)"));
    std::vector<int> displs(counts.size());
    std::size_t total = 0;
    for (std::size_t r = 0; r < counts.size(); ++r) {
      displs[r] = static_cast<int>(total);
      total += static_cast<std::size_t>(counts[r]);
    }
    SEDPACK_RETURN_NOT_OK(CheckCount(total, "Gatherv"));
    std::string all(total, '\0');
    SEDPACK_RETURN_NOT_OK(Check(MPI_Gatherv(mine.data(), n, MPI_BYTE, all.data(), counts.data(),
                                            displs.data(), MPI_BYTE, root, comm_),
                                "Gatherv"));
    std::vector<std::string> out;
    for (std::size_t r = 0; r < counts.size(); ++r) {
      out.push_back(all.substr(static_cast<std::size_t>(displs[r]), static_cast<std::size_t>(counts[r])));
    }
    return out;
  }

  Result<std::string> Scatterv(const std::vector<std::string>& parts, int root) override {
    std::vector<int> counts, displs;
    std::string all;
    if (rank_ == root) {
      if (parts.size() != static_cast<std::size_t>(size_)) {
        return Status::InvalidArgument("Scatterv: ", parts.size(), " parts for ", size_, " ranks");
      }
      for (const auto& p : parts) {
        SEDPACK_RETURN_NOT_OK(CheckCount(all.size() + p.size(), "Scatterv"));
        counts.push_back(static_cast<int>(p.size()));
        displs.push_back(static_cast<int>(all.size()));
        all += p;
      }
    }
    int n = 0;
    SEDPACK_RETURN_NOT_OK(
        Check(MPI_Scatter(counts.data(), 1, MPI_INT, &n, 1, MPI_INT, root, comm_), "Scatter(sizes)"));
    std::string mine(static_cast<std::size_t>(n), '\0');
    SEDPACK_RETURN_NOT_OK(Check(MPI_Scatterv(all.data(), counts.data(), displs.data(), MPI_BYTE,
                                             mine.data(), n, MPI_BYTE, root, comm_),
                                "Scatterv"));
    return mine;
  }

  Result<std::int64_t> AllreduceSum(std::int64_t v) override { return Reduce(v, MPI_SUM, "Allreduce(sum)"); }
  Result<std::int64_t> AllreduceMin(std::int64_t v) override { return Reduce(v, MPI_MIN, "Allreduce(min)"); }
  Result<std::int64_t> AllreduceMax(std::int64_t v) override { return Reduce(v, MPI_MAX, "Allreduce(max)"); }

  void NotifyFailure() override {
    if (notified_) return;
    notified_ = true;
    // Eager, non-blocking sends to every peer; completed in DrainFailureNotices.
    for (int r = 0; r < size_; ++r) {
      if (r == rank_) continue;
      MPI_Request req;
      if (MPI_Isend(&notice_out_, 1, MPI_INT, r, kFailureTag, comm_, &req) == MPI_SUCCESS) {
        sends_.push_back(req);
      }
    }
  }

  bool PeerFailed() override {
    if (peer_failed_) return true;
    if (notice_req_ == MPI_REQUEST_NULL) return false;
    int done = 0;
    if (MPI_Test(&notice_req_, &done, MPI_STATUS_IGNORE) == MPI_SUCCESS && done) {
      peer_failed_ = true;
      notices_received_ = 1;
      notice_req_ = MPI_REQUEST_NULL;
    }
    return peer_failed_;
  }

  void SendProgress(int root, std::int64_t value, bool final) override {
    if (rank_ == root) return;
    // Completed sends are freed as we go; the buffers live in a deque so that
    // their addresses stay fixed while MPI owns them.
    while (!progress_out_.empty()) {
      int done = 0;
      MPI_Test(&progress_out_.front().req, &done, MPI_STATUS_IGNORE);
      if (!done) break;
      progress_out_.pop_front();
    }
    progress_out_.push_back(ProgressMsg{{value, final ? 1 : 0}, MPI_REQUEST_NULL});
    ProgressMsg& m = progress_out_.back();
    MPI_Isend(m.data, 2, MPI_LONG_LONG, root, kProgressTag, comm_, &m.req);
    if (final) {
      for (auto& msg : progress_out_) MPI_Wait(&msg.req, MPI_STATUS_IGNORE);
      progress_out_.clear();
    }
  }

  Result<Progress> ReceiveProgress() override {
    if (progress_latest_.empty()) {
      progress_latest_.assign(static_cast<std::size_t>(size_), 0);
      progress_final_.assign(static_cast<std::size_t>(size_), false);
      progress_final_[static_cast<std::size_t>(rank_)] = true;
    }
    for (;;) {
      int flag = 0;
      MPI_Status st;
      SEDPACK_RETURN_NOT_OK(Check(MPI_Iprobe(MPI_ANY_SOURCE, kProgressTag, comm_, &flag, &st), "Iprobe(progress)"));
      if (!flag) break;
      long long data[2];
      SEDPACK_RETURN_NOT_OK(Check(MPI_Recv(data, 2, MPI_LONG_LONG, st.MPI_SOURCE, kProgressTag, comm_,
                                           MPI_STATUS_IGNORE),
                                  "Recv(progress)"));
      progress_latest_[static_cast<std::size_t>(st.MPI_SOURCE)] = data[0];
      if (data[1]) progress_final_[static_cast<std::size_t>(st.MPI_SOURCE)] = true;
    }
    Progress p;
    p.values = progress_latest_;
    p.all_final = std::all_of(progress_final_.begin(), progress_final_.end(), [](bool b) { return b; });
    if (p.all_final) {  // ready for the next phase
      progress_latest_.clear();
      progress_final_.clear();
    }
    return p;
  }

  // The counter lives in a one-element window on rank 0; every rank holds a
  // shared lock on it from OpenCounter to CloseCounter (passive target), so a
  // FetchAdd needs nothing from rank 0's application thread.
  Status OpenCounter() override {
    if (win_ != MPI_WIN_NULL) return Status::Internal("OpenCounter: a counter is already open");
    const MPI_Aint bytes = rank_ == 0 ? static_cast<MPI_Aint>(sizeof(long long)) : 0;
    void* base = nullptr;
    SEDPACK_RETURN_NOT_OK(Check(MPI_Win_allocate(bytes, sizeof(long long), MPI_INFO_NULL, comm_, &base, &win_),
                                "Win_allocate(counter)"));
    if (rank_ == 0) *static_cast<long long*>(base) = 0;
    SEDPACK_RETURN_NOT_OK(Check(MPI_Win_set_errhandler(win_, MPI_ERRORS_RETURN), "Win_set_errhandler"));
    // Everyone sees the zero before anyone adds to it.
    SEDPACK_RETURN_NOT_OK(Check(MPI_Barrier(comm_), "Barrier(counter)"));
    return Check(MPI_Win_lock_all(0, win_), "Win_lock_all(counter)");
  }

  Result<std::int64_t> FetchAdd(std::int64_t delta) override {
    if (win_ == MPI_WIN_NULL) return Status::Internal("FetchAdd: no counter is open");
    long long add = delta, before = 0;
    SEDPACK_RETURN_NOT_OK(
        Check(MPI_Fetch_and_op(&add, &before, MPI_LONG_LONG, 0, 0, MPI_SUM, win_), "Fetch_and_op(counter)"));
    SEDPACK_RETURN_NOT_OK(Check(MPI_Win_flush(0, win_), "Win_flush(counter)"));
    return static_cast<std::int64_t>(before);
  }

  Status CloseCounter() override {
    if (win_ == MPI_WIN_NULL) return Status::Internal("CloseCounter: no counter is open");
    Status unlock = Check(MPI_Win_unlock_all(win_), "Win_unlock_all(counter)");
    Status freed = Check(MPI_Win_free(&win_), "Win_free(counter)");
    win_ = MPI_WIN_NULL;
    return unlock.ok() ? freed : unlock;
  }

  Status DrainFailureNotices() override {
    // Every rank learns how many ranks sent notices, then receives exactly the
    // notices addressed to it, so no message is left unmatched at MPI_Finalize.
    SEDPACK_ASSIGN_OR_RETURN(std::int64_t senders, AllreduceSum(notified_ ? 1 : 0));
    const std::int64_t expected = senders - (notified_ ? 1 : 0);
    PeerFailed();
    for (std::int64_t got = notices_received_; got < expected; ++got) {
      if (notice_req_ != MPI_REQUEST_NULL) {
        SEDPACK_RETURN_NOT_OK(Check(MPI_Wait(&notice_req_, MPI_STATUS_IGNORE), "Wait(failure notice)"));
        notice_req_ = MPI_REQUEST_NULL;
        continue;
      }
      int sink = 0;
      SEDPACK_RETURN_NOT_OK(Check(
          MPI_Recv(&sink, 1, MPI_INT, MPI_ANY_SOURCE, kFailureTag, comm_, MPI_STATUS_IGNORE),
          "Recv(failure notice)"));
    }
    notices_received_ = expected;
    if (!sends_.empty()) {
      SEDPACK_RETURN_NOT_OK(Check(MPI_Waitall(static_cast<int>(sends_.size()), sends_.data(),
                                              MPI_STATUSES_IGNORE),
                                  "Waitall(failure notices)"));
      sends_.clear();
    }
    // Re-arm the channel for the next phase.
    notified_ = false;
    peer_failed_ = false;
    notices_received_ = 0;
    if (notice_req_ == MPI_REQUEST_NULL) {
      SEDPACK_RETURN_NOT_OK(Check(MPI_Irecv(&notice_in_, 1, MPI_INT, MPI_ANY_SOURCE, kFailureTag,
                                            comm_, &notice_req_),
                                  "Irecv(failure channel)"));
    }
    return Status::OK();
  }

 private:
  MpiComm() = default;
  Result<std::int64_t> Reduce(std::int64_t v, MPI_Op op, const char* what) {
    long long in = v, out = 0;
    SEDPACK_RETURN_NOT_OK(Check(MPI_Allreduce(&in, &out, 1, MPI_LONG_LONG, op, comm_), what));
    return static_cast<std::int64_t>(out);
  }

  MPI_Comm comm_ = MPI_COMM_NULL;
  MPI_Win win_ = MPI_WIN_NULL;
  int rank_ = 0;
  int size_ = 1;
  int notice_in_ = 0;
  int notice_out_ = 1;
  MPI_Request notice_req_ = MPI_REQUEST_NULL;
  std::vector<MPI_Request> sends_;
  bool notified_ = false;
  bool peer_failed_ = false;
  std::int64_t notices_received_ = 0;
  struct ProgressMsg {
    long long data[2];
    MPI_Request req;
  };
  std::deque<ProgressMsg> progress_out_;
  std::vector<std::int64_t> progress_latest_;
  std::vector<bool> progress_final_;
};

}  // namespace

Result<std::unique_ptr<MpiSession>> MpiSession::Start(int* argc, char*** argv) {
  std::unique_ptr<MpiSession> s(new MpiSession());
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) {
    int provided = 0;
    SEDPACK_RETURN_NOT_OK(Check(MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided), "Init_thread"));
    s->owns_mpi_ = true;
  }
  SEDPACK_ASSIGN_OR_RETURN(auto comm, MpiComm::Make());
  s->comm_ = std::move(comm);
  return s;
}

MpiSession::~MpiSession() {
  comm_.reset();
  if (owns_mpi_) {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized) MPI_Finalize();
  }
}

}  // namespace sedpack
