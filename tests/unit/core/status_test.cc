// SPDX-License-Identifier: Apache-2.0
// Status details: set where an error is made, kept by every copy and prefix.
#include <gtest/gtest.h>

#include "sedpack/status.h"

namespace sedpack {
namespace {

TEST(StatusDetailTest, DefaultsToNone) {
  EXPECT_EQ(Status::OK().detail(), StatusDetail::kNone);
  EXPECT_EQ(Status::IOError("disk").detail(), StatusDetail::kNone);
  EXPECT_EQ(Status(StatusCode::kNotFound, "x").detail(), StatusDetail::kNone);
}

TEST(StatusDetailTest, WithDetailKeepsCodeAndMessage) {
  const Status s = Status::InvalidArgument("a/../b").WithDetail(StatusDetail::kPathEscape);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "a/../b");
  EXPECT_EQ(s.detail(), StatusDetail::kPathEscape);
  // The message is for people; ToString does not show the detail.
  EXPECT_EQ(s.ToString(), "Invalid argument: a/../b");
}

TEST(StatusDetailTest, OkStaysOk) {
  const Status s = Status::OK().WithDetail(StatusDetail::kPeerAborted);
  EXPECT_TRUE(s.ok());
  EXPECT_EQ(s.detail(), StatusDetail::kNone);
}

TEST(StatusDetailTest, KeptByCopiesPrefixesAndResults) {
  const Status s = Status::IOError("rank 1 failed").WithDetail(StatusDetail::kPeerAborted);
  const Status copy = s;  // NOLINT: the copy is what is tested
  EXPECT_EQ(copy.detail(), StatusDetail::kPeerAborted);
  const Status prefixed = s.WithPrefix("aborted: ");
  EXPECT_EQ(prefixed.message(), "aborted: rank 1 failed");
  EXPECT_EQ(prefixed.code(), StatusCode::kIOError);
  EXPECT_EQ(prefixed.detail(), StatusDetail::kPeerAborted);
  const Result<int> r = prefixed;
  EXPECT_EQ(r.status().detail(), StatusDetail::kPeerAborted);
  auto through_macro = [&]() -> Status {
    SEDPACK_RETURN_NOT_OK(s);
    return Status::OK();
  };
  EXPECT_EQ(through_macro().detail(), StatusDetail::kPeerAborted);
  // Replacing the detail replaces it; it does not touch the original.
  EXPECT_EQ(s.WithDetail(StatusDetail::kNone).detail(), StatusDetail::kNone);
  EXPECT_EQ(s.detail(), StatusDetail::kPeerAborted);
}

TEST(StatusDetailTest, WithContextKeepsCodeAndDetail) {
  const Status s(StatusCode::kCorruption, "bad block", StatusDetail::kHashMismatch);
  const Status wrapped = s.WithContext("shard a.fb: ", " (read twice)");
  EXPECT_EQ(wrapped.message(), "shard a.fb: bad block (read twice)");
  EXPECT_EQ(wrapped.code(), StatusCode::kCorruption);
  EXPECT_EQ(wrapped.detail(), StatusDetail::kHashMismatch);
  EXPECT_EQ(s.message(), "bad block");  // the original is untouched
  EXPECT_EQ(s.WithContext("", "").ToString(), s.ToString());
  EXPECT_TRUE(Status::OK().WithContext("x", "y").ok());
}

TEST(StatusDetailTest, Names) {
  EXPECT_EQ(StatusDetailName(StatusDetail::kNone), "none");
  EXPECT_EQ(StatusDetailName(StatusDetail::kPeerAborted), "peer_aborted");
  EXPECT_EQ(StatusDetailName(StatusDetail::kOutsideRoot), "outside_root");
  EXPECT_EQ(StatusDetailName(StatusDetail::kPathEscape), "path_escape");
  EXPECT_EQ(StatusDetailName(StatusDetail::kHashMismatch), "hash_mismatch");
  EXPECT_EQ(StatusDetailName(static_cast<StatusDetail>(99)), "unknown");
}

}  // namespace
}  // namespace sedpack
