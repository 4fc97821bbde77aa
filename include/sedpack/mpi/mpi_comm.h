// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <memory>

#include "sedpack/comm/comm.h"
#include "sedpack/status.h"

namespace sedpack {

/// Owns MPI for a process: initialises it (MPI_THREAD_FUNNELED) unless the
/// application already did, and finalises it on destruction if it initialised it.
/// Declared without <mpi.h>: only src/mpi/mpi_comm.cc includes it.
class MpiSession {
 public:
  /// Initialise MPI (if needed) and build a communicator over a duplicate of
  /// MPI_COMM_WORLD. Errors from MPI are returned, not fatal.
  static Result<std::unique_ptr<MpiSession>> Start(int* argc, char*** argv);
  ~MpiSession();
  Comm& comm() { return *comm_; }

 private:
  MpiSession() = default;
  std::unique_ptr<Comm> comm_;
  bool owns_mpi_ = false;
};

}  // namespace sedpack
