// SPDX-License-Identifier: Apache-2.0
#include "mpi/test_comm.h"

namespace sedpack::testing {
Comm& TestComm() {
  static auto comm = MakeSerialComm();
  return *comm;
}
}  // namespace sedpack::testing
