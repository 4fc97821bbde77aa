// SPDX-License-Identifier: Apache-2.0
#include <string>

#include "sedpack/metadata/models.h"
#include "support/test_support.h"

namespace sedpack {
namespace {

int Cmp(const std::string& a, const std::string& b) {
  auto va = ParseSemVer(a);
  auto vb = ParseSemVer(b);
  EXPECT_TRUE(va.ok()) << a;
  EXPECT_TRUE(vb.ok()) << b;
  if (!va.ok() || !vb.ok()) return 99;
  return CompareSemVer(*va, *vb);
}

TEST(SemVerTest, ParsesValidVersions) {
  ASSERT_OK_AND_ASSIGN(SemVer v, ParseSemVer("1.22.333-alpha.1.x-y+build.5-a"));
  EXPECT_EQ(v.major, 1u);
  EXPECT_EQ(v.minor, 22u);
  EXPECT_EQ(v.patch, 333u);
  EXPECT_EQ(v.prerelease, (std::vector<std::string>{"alpha", "1", "x-y"}));
  EXPECT_EQ(v.build, "build.5-a");
  for (const char* ok : {"0.0.0", "0.0.7-dev", "0.1.4", "10.20.30", "1.0.0-0A.is.legal",
                         "1.0.0+0.build.1-rc.10000aaa-kk-0.1", "1.0.0-alpha-a.b-c-somethinglong",
                         "1.0.0-00a", "18446744073709551615.0.0"}) {
    SCOPED_TRACE(ok);
    EXPECT_OK(ParseSemVer(ok).status());
  }
}

TEST(SemVerTest, RejectsInvalidVersions) {
  for (const char* bad : {"1.0", "v1.0.0", "01.0.0", "", "1", "1.0.0.0", "1.01.0", "1.0.00",
                          "1.0.0-", "1.0.0+", "1.0.0-01", "1.0.0-a..b", "1.0.0-a_b", "1.0.0+a_b",
                          " 1.0.0", "1.0.0 ", "1.0.0\n", "-1.0.0", "a.b.c", "1.0.0-é",
                          "18446744073709551616.0.0"}) {
    EXPECT_STATUS(StatusCode::kInvalidArgument, "is not a valid SemVer", ParseSemVer(bad));
  }
}

TEST(SemVerTest, Precedence) {
  EXPECT_LT(Cmp("0.0.7-dev", "0.0.7"), 0);
  EXPECT_LT(Cmp("0.0.7-alpha", "0.0.7-dev"), 0);
  EXPECT_LT(Cmp("0.0.7-dev", "0.0.7-dev.1"), 0);
  EXPECT_EQ(Cmp("0.0.7+abc", "0.0.7"), 0);
  EXPECT_EQ(Cmp("0.0.7-dev+x", "0.0.7-dev+y"), 0);
  EXPECT_LT(Cmp("0.0.7", "0.1.4"), 0);
  EXPECT_LT(Cmp("1.9.0", "1.10.0"), 0);
  EXPECT_GT(Cmp("2.0.0", "1.99.99"), 0);
  // The SemVer 2.0 spec example chain.
  const char* chain[] = {"1.0.0-alpha",      "1.0.0-alpha.1", "1.0.0-alpha.beta", "1.0.0-beta",
                         "1.0.0-beta.2",     "1.0.0-beta.11", "1.0.0-rc.1",       "1.0.0"};
  for (std::size_t i = 0; i + 1 < std::size(chain); ++i) {
    EXPECT_LT(Cmp(chain[i], chain[i + 1]), 0) << chain[i] << " < " << chain[i + 1];
    EXPECT_GT(Cmp(chain[i + 1], chain[i]), 0);
  }
  // Numeric identifiers compare numerically, also beyond 64 bits.
  EXPECT_LT(Cmp("1.0.0-2", "1.0.0-10"), 0);
  EXPECT_LT(Cmp("1.0.0-99999999999999999999", "1.0.0-100000000000000000000"), 0);
  EXPECT_LT(Cmp("1.0.0-999", "1.0.0-a"), 0);
}

TEST(SemVerTest, CheckSedpackVersion) {
  EXPECT_OK(CheckSedpackVersion("0.0.7-dev"));
  EXPECT_OK(CheckSedpackVersion("0.1.0"));
  EXPECT_OK(CheckSedpackVersion("0.1.4"));
  EXPECT_OK(CheckSedpackVersion("0.1.4+local"));
  EXPECT_OK(CheckSedpackVersion("0.0.7-dev", "0.1.4"));
  EXPECT_STATUS(StatusCode::kInvalidArgument,
                "dataset was written by sedpack 0.2.0, newer than 0.1.4 that this reader implements",
                CheckSedpackVersion("0.2.0"));
  EXPECT_STATUS(StatusCode::kInvalidArgument, "newer than 0.1.4", CheckSedpackVersion("0.1.5-dev"));
  EXPECT_STATUS(StatusCode::kInvalidArgument, "newer than 0.0.7-dev",
                CheckSedpackVersion("0.0.7", "0.0.7-dev"));
  for (const char* bad : {"1.0", "v1.0.0", "01.0.0", ""}) {
    EXPECT_STATUS(StatusCode::kInvalidArgument,
                  "sedpack_version \"" + std::string(bad) + "\" is not a valid SemVer",
                  CheckSedpackVersion(bad));
  }
}

}  // namespace
}  // namespace sedpack
