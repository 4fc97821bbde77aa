// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "sedpack/status.h"

#define ASSERT_OK(expr)                                          \
  do {                                                           \
    const ::sedpack::Status _s = (expr);                         \
    ASSERT_TRUE(_s.ok()) << #expr << " -> " << _s.ToString();    \
  } while (false)
#define EXPECT_OK(expr)                                          \
  do {                                                           \
    const ::sedpack::Status _s = (expr);                         \
    EXPECT_TRUE(_s.ok()) << #expr << " -> " << _s.ToString();    \
  } while (false)

#define SEDPACK_TEST_CONCAT_I_(a, b) a##b
#define SEDPACK_TEST_CONCAT_(a, b) SEDPACK_TEST_CONCAT_I_(a, b)
#define ASSERT_OK_AND_ASSIGN_I_(tmp, lhs, rexpr)                                   \
  auto tmp = (rexpr);                                                              \
  ASSERT_TRUE(tmp.ok()) << #rexpr << " -> " << tmp.status().ToString();            \
  lhs = std::move(tmp).value()
/// ASSERT_OK_AND_ASSIGN(auto x, SomethingReturningResult());
#define ASSERT_OK_AND_ASSIGN(lhs, rexpr) \
  ASSERT_OK_AND_ASSIGN_I_(SEDPACK_TEST_CONCAT_(_r_, __LINE__), lhs, rexpr)

/// Expect a failed Status/Result with `code` whose message contains `substr`.
#define EXPECT_STATUS(expected_code, substr, expr)                                             \
  do {                                                                                \
    const ::sedpack::Status _s = ::sedpack::testing::ToStatus(expr);                  \
    EXPECT_EQ(_s.code(), expected_code) << #expr << " -> " << _s.ToString();                   \
    EXPECT_NE(_s.message().find(substr), std::string::npos)                           \
        << #expr << " -> " << _s.ToString() << " (expected to mention \"" << substr << "\")"; \
  } while (false)

namespace sedpack::testing {

inline Status ToStatus(const Status& s) { return s; }
template <typename T>
Status ToStatus(const Result<T>& r) {
  return r.status();
}

/// Folder of the golden fixtures written by the reference (env SEDPACK_GOLDEN_DIR
/// overrides the build-time default).
std::string GoldenDir();

/// A fresh empty temporary folder, removed when the object dies.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

/// Copy a folder tree (e.g. a golden dataset) to `dst`.
void CopyTree(const std::string& src, const std::string& dst);

/// Flips one bit (0x20) of the byte at `offset` of `path` in place; false if
/// the file cannot be opened, read or written there.
bool FlipBitAt(const std::string& path, std::uint64_t offset);

/// Bytes from a lowercase/uppercase hex string.
std::vector<std::byte> FromHex(const std::string& hex);
std::string ToHex(const std::byte* data, std::size_t size);

}  // namespace sedpack::testing
