// SPDX-License-Identifier: Apache-2.0
// gtest main for the MPI runs: every rank runs every test; only rank 0 prints,
// and the exit code is non-zero on every rank if any rank failed.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>

#include "mpi/test_comm.h"
#include "sedpack/mpi/mpi_comm.h"

namespace {
std::unique_ptr<sedpack::MpiSession> g_session;
}

namespace sedpack::testing {
Comm& TestComm() { return g_session->comm(); }
}  // namespace sedpack::testing

int main(int argc, char** argv) {
  auto session = sedpack::MpiSession::Start(&argc, &argv);
  if (!session.ok()) {
    std::fprintf(stderr, "%s\n", session.status().ToString().c_str());
    return 2;
  }
  g_session = std::move(session).value();
  ::testing::InitGoogleTest(&argc, argv);
  // SEDPACK_TEST_ALL_RANKS=1 keeps every rank's output (for finding which rank fails).
  if (g_session->comm().rank() != 0 && !std::getenv("SEDPACK_TEST_ALL_RANKS")) {
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
  }
  int rc = RUN_ALL_TESTS();
  auto any = g_session->comm().AllreduceMax(rc);
  rc = any.ok() ? static_cast<int>(*any) : 1;
  if (g_session->comm().rank() == 0) std::printf("ranks: %d, result: %s\n", g_session->comm().size(), rc ? "FAILED" : "PASSED");
  g_session.reset();
  return rc;
}
