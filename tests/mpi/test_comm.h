// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "sedpack/comm/comm.h"

namespace sedpack::testing {
/// The communicator the tests run on: serial, or MPI_COMM_WORLD under mpirun.
Comm& TestComm();
}  // namespace sedpack::testing
