// SPDX-License-Identifier: Apache-2.0
#include "sedpack/cancel.h"

#include <gtest/gtest.h>

#include <csignal>
#include <thread>

#include "comm/status_wire.h"

namespace sedpack {
namespace {

class CancelTest : public ::testing::Test {
 protected:
  void SetUp() override { ResetCancellation(); }
  void TearDown() override { ResetCancellation(); }
};

TEST_F(CancelTest, NotRequestedIsOk) {
  EXPECT_FALSE(CancellationRequested());
  EXPECT_EQ(CancellationSignal(), 0);
  EXPECT_TRUE(CheckCancelled().ok());
}

TEST_F(CancelTest, RequestNamesTheSignalAndKeepsTheFirst) {
  RequestCancellation(SIGTERM);
  RequestCancellation(SIGINT);
  EXPECT_TRUE(CancellationRequested());
  EXPECT_EQ(CancellationSignal(), SIGTERM);
  const Status st = CheckCancelled();
  EXPECT_EQ(st.code(), StatusCode::kCancelled);
  EXPECT_TRUE(IsCancelled(st));
  EXPECT_EQ(st.message(), "interrupted (SIGTERM)");
  EXPECT_EQ(StatusCodeName(st.code()), "Cancelled");
  ResetCancellation();
  EXPECT_TRUE(CheckCancelled().ok());
}

TEST_F(CancelTest, RequestWithoutSignalIsVisible) {
  std::thread([] { RequestCancellation(); }).join();
  EXPECT_TRUE(CancellationRequested());
  EXPECT_EQ(CancellationSignal(), 0);
  EXPECT_EQ(CheckCancelled().message(), "interrupted");
}

TEST_F(CancelTest, CancelledCrossesTheWire) {
  RequestCancellation(SIGINT);
  const Status sent = CheckCancelled();
  const Status got = internal::DecodeStatus(internal::EncodeStatus(sent));
  EXPECT_EQ(got.code(), StatusCode::kCancelled);
  EXPECT_EQ(got.message(), "interrupted (SIGINT)");
}

}  // namespace
}  // namespace sedpack
