// SPDX-License-Identifier: Apache-2.0
// How the tool runs: one process, or one rank of an MPI job (mpirun/srun).
#pragma once

#include <memory>
#include <string>

#include "sedpack/comm/comm.h"
#include "sedpack/status.h"

namespace sedpack::cli {

/// The communicator of this process and whatever keeps MPI alive.
class CliComm {
 public:
  virtual ~CliComm() = default;
  virtual Comm& comm() = 0;
  bool is_root() { return comm().rank() == 0; }
  /// "[rank N] " under MPI with several ranks, "" otherwise.
  std::string RankPrefix();
  /// Print a collective command's failure once: a rank's own error with its
  /// "[rank N] " prefix on that rank, another rank's ("aborted: rank N failed: ...")
  /// only on rank 0. Returns the exit code (ExitCodeFor; `input_stage` false for
  /// work on a dataset already opened: ExitCodeForData).
  int ReportFailure(const Status& status, bool input_stage = true);
};

/// A serial communicator, or MPI when launched by mpirun/srun with several tasks.
/// NotImplemented ("not built with MPI") if launched that way without MPI support.
Result<std::unique_ptr<CliComm>> StartComm();

}  // namespace sedpack::cli
