// SPDX-License-Identifier: Apache-2.0
#include "sedpack/comm/comm.h"

#include <cstdlib>
#include <string>

#include "comm/status_wire.h"

namespace sedpack {
namespace {

Status CheckRoot(int root) {
  if (root != 0) return Status::InvalidArgument("root rank ", root, " out of range (1 rank)");
  return Status::OK();
}

}  // namespace

Status SerialComm::Bcast(std::string*, int root) { return CheckRoot(root); }

Result<std::vector<std::string>> SerialComm::Gatherv(const std::string& mine, int root) {
  SEDPACK_RETURN_NOT_OK(CheckRoot(root));
  return std::vector<std::string>{mine};
}

Result<std::string> SerialComm::Scatterv(const std::vector<std::string>& parts, int root) {
  SEDPACK_RETURN_NOT_OK(CheckRoot(root));
  if (parts.size() != 1) return Status::InvalidArgument("Scatterv: expected 1 part, got ", parts.size());
  return parts[0];
}

Status SerialComm::OpenCounter() {
  if (counter_open_) return Status::Internal("OpenCounter: a counter is already open");
  counter_open_ = true;
  counter_ = 0;
  return Status::OK();
}

Result<std::int64_t> SerialComm::FetchAdd(std::int64_t delta) {
  if (!counter_open_) return Status::Internal("FetchAdd: no counter is open");
  const std::int64_t before = counter_;
  counter_ += delta;
  return before;
}

Status SerialComm::CloseCounter() {
  if (!counter_open_) return Status::Internal("CloseCounter: no counter is open");
  counter_open_ = false;
  return Status::OK();
}

bool LaunchedUnderMpi() {
  for (const char* var : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE", "MPI_LOCALNRANKS"}) {
    if (const char* v = std::getenv(var); v && std::atoi(v) > 1) return true;
  }
  // srun --mpi=pmix sets PMIX_RANK but not always PMIX_SIZE; SLURM_NTASKS tells the size.
  if (std::getenv("PMIX_RANK")) {
    const char* n = std::getenv("SLURM_NTASKS");
    return !n || std::atoi(n) > 1;
  }
  return false;
}

std::unique_ptr<Comm> MakeSerialComm() { return std::make_unique<SerialComm>(); }

Status AgreeOnStatus(Comm& comm, const Status& mine) {
  SEDPACK_ASSIGN_OR_RETURN(std::int64_t bad, comm.AllreduceMin(mine.ok() ? comm.size() : comm.rank()));
  if (bad >= comm.size()) return Status::OK();
  std::string wire = comm.rank() == bad ? internal::EncodeStatus(mine) : std::string();
  SEDPACK_RETURN_NOT_OK(comm.Bcast(&wire, static_cast<int>(bad)));
  if (comm.rank() == bad) return mine;
  const Status theirs = internal::DecodeStatus(wire);
  return Status(theirs.code(), "aborted: rank " + std::to_string(bad) + " failed: " + theirs.message(),
                StatusDetail::kPeerAborted);
}

}  // namespace sedpack
