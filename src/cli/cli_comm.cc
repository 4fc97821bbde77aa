// SPDX-License-Identifier: Apache-2.0
#include "cli/cli_comm.h"

#include <iostream>

#include "cli/cli_common.h"
#include "sedpack/config.h"
#include "sedpack/mpi/distributed_write.h"
#ifdef SEDPACK_HAVE_MPI
#include "sedpack/mpi/mpi_comm.h"
#endif

namespace sedpack::cli {
namespace {

class SerialCliComm final : public CliComm {
 public:
  SerialCliComm() : comm_(MakeSerialComm()) {}
  Comm& comm() override { return *comm_; }

 private:
  std::unique_ptr<Comm> comm_;
};

#ifdef SEDPACK_HAVE_MPI
class MpiCliComm final : public CliComm {
 public:
  explicit MpiCliComm(std::unique_ptr<MpiSession> s) : session_(std::move(s)) {}
  Comm& comm() override { return session_->comm(); }

 private:
  std::unique_ptr<MpiSession> session_;
};
#endif

}  // namespace

std::string CliComm::RankPrefix() {
  if (comm().size() <= 1) return "";
  return "[rank " + std::to_string(comm().rank()) + "] ";
}

int CliComm::ReportFailure(const Status& status, bool input_stage) {
  if (IsInterrupted(status)) return ReportInterrupted();  // once, by rank 0
  if (!DistributedWriter::IsAbort(status)) {
    std::cerr << RankPrefix() << "sedpack: " << status.ToString() << "\n";
  } else if (is_root()) {
    std::cerr << "sedpack: " << status.ToString() << "\n";
  }
  return input_stage ? ExitCodeFor(status, true) : ExitCodeForData(status);
}

Result<std::unique_ptr<CliComm>> StartComm() {
  if (!LaunchedUnderMpi()) return std::unique_ptr<CliComm>(new SerialCliComm());
#ifdef SEDPACK_HAVE_MPI
  SEDPACK_ASSIGN_OR_RETURN(auto session, MpiSession::Start(nullptr, nullptr));
  SetReportingRank(session->comm().rank());
  return std::unique_ptr<CliComm>(new MpiCliComm(std::move(session)));
#else
  return Status::NotImplemented(
      "started as one of several MPI tasks, but this sedpack was not built with MPI "
      "(rebuild with libopenmpi-dev installed, or run it as a single process)");
#endif
}

}  // namespace sedpack::cli
