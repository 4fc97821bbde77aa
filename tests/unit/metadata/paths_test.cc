// SPDX-License-Identifier: Apache-2.0
#include "sedpack/metadata/paths.h"

#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "support/test_support.h"

namespace sedpack {
namespace {

bool IsLowerHex(const std::string& s) {
  for (char c : s) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

TEST(PathsTest, ValidateRelativePath) {
  EXPECT_OK(ValidateRelativePath("train/ab/shards_list.json", "f"));
  EXPECT_OK(ValidateRelativePath("a", "f"));
  EXPECT_OK(ValidateRelativePath("./a/b", "f"));
  EXPECT_OK(ValidateRelativePath("a..b/..c/d..", "f"));  // only a whole ".." component is bad
  EXPECT_OK(ValidateRelativePath("ab:c", "f"));  // only a one-letter drive prefix is refused
  EXPECT_STATUS(StatusCode::kInvalidArgument, "src: x: the path is empty",
                ValidateRelativePath("", "src: x"));
  for (const char* abs : {"/a", "\\a", "//server/share", "C:\\a", "c:/a", "Z:a"}) {
    EXPECT_STATUS(StatusCode::kInvalidArgument, "fld: absolute paths are not allowed",
                  ValidateRelativePath(abs, "fld"));
    EXPECT_EQ(ValidateRelativePath(abs, "fld").detail(), StatusDetail::kPathEscape) << abs;
  }
  for (const char* dd : {"..", "../a", "a/..", "a/../b", "a\\..\\b", "a/./../b", "a//..//"}) {
    EXPECT_STATUS(StatusCode::kInvalidArgument, "fld: a \"..\" component is not allowed",
                  ValidateRelativePath(dd, "fld"));
    EXPECT_EQ(ValidateRelativePath(dd, "fld").detail(), StatusDetail::kPathEscape) << dd;
  }
  EXPECT_STATUS(StatusCode::kInvalidArgument, "NUL",
                ValidateRelativePath(std::string("a\0b", 3), "fld"));
  // Invalid, but not an escape: callers that refuse escapes tell the two apart by the detail.
  EXPECT_EQ(ValidateRelativePath(std::string("a\0b", 3), "fld").detail(), StatusDetail::kNone);
  EXPECT_EQ(ValidateRelativePath("", "fld").detail(), StatusDetail::kNone);
}

TEST(PathsTest, ComponentsAndJoin) {
  EXPECT_EQ(PathComponents("a/b/c"), (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(PathComponents("./a//b/./c/"), (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(PathComponents("a\\b/c"), (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(PathComponents("a/../b"), (std::vector<std::string>{"a", "..", "b"}));
  EXPECT_TRUE(PathComponents("").empty());
  EXPECT_TRUE(PathComponents("./.").empty());
  EXPECT_EQ(JoinPath({"train", "ab", "x.fb"}), "train/ab/x.fb");
  EXPECT_EQ(JoinPath({}), "");
  EXPECT_EQ(JoinPath(PathComponents("x\\y\\shards_list.json")), "x/y/shards_list.json");
}

TEST(PathsTest, RandomHex32) {
  std::set<std::string> seen;
  for (int i = 0; i < 1000; ++i) {
    const std::string h = RandomHex32();
    ASSERT_EQ(h.size(), 32u);
    ASSERT_TRUE(IsLowerHex(h)) << h;
    EXPECT_EQ(h[12], '4');  // uuid4 version nibble
    EXPECT_NE(std::string("89ab").find(h[16]), std::string::npos) << h;
    seen.insert(h);
  }
  EXPECT_EQ(seen.size(), 1000u);

  // Thread-safe and independent per thread.
  std::vector<std::vector<std::string>> per_thread(4);
  std::vector<std::thread> threads;
  for (auto& out : per_thread) {
    threads.emplace_back([&out] {
      for (int i = 0; i < 500; ++i) out.push_back(RandomHex32());
    });
  }
  for (auto& t : threads) t.join();
  for (const auto& v : per_thread) seen.insert(v.begin(), v.end());
  EXPECT_EQ(seen.size(), 3000u);
}

// Replaces every directory name by the index of its first appearance at that
// depth and the file stem by its length, e.g. "0/0/1/32".
std::vector<std::string> Pattern(PathGenerator& g, int n) {
  std::vector<std::map<std::string, int>> ids;
  std::vector<std::string> out;
  for (int i = 0; i < n; ++i) {
    const auto parts = PathComponents(g.Next());
    if (ids.size() < parts.size()) ids.resize(parts.size());
    std::string key;
    for (std::size_t d = 0; d + 1 < parts.size(); ++d) {
      const int id = ids[d].emplace(parts[d], static_cast<int>(ids[d].size())).first->second;
      key += std::to_string(id) + "/";
    }
    key += std::to_string(parts.back().size());
    out.push_back(key);
  }
  return out;
}

std::vector<std::string> Split(const std::string& s) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start < s.size()) {
    std::size_t end = s.find(' ', start);
    if (end == std::string::npos) end = s.size();
    out.push_back(s.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

// The expected patterns were produced by running the reference Python
// PathGenerator (sedpack 79f548e) with the same parameters.
TEST(PathGeneratorTest, RolloverMatchesReference) {
  {
    PathGenerator g(4, 2, 4);
    EXPECT_EQ(Pattern(g, 14),
              Split("0/0/0/32 0/0/0/32 0/0/1/32 0/0/1/32 0/1/2/32 0/1/2/32 0/1/3/32 0/1/3/32 "
                    "1/2/4/32 1/2/4/32 1/2/5/32 1/2/5/32 1/3/6/32 1/3/6/32"));
  }
  {
    PathGenerator g(3, 3, 4);
    EXPECT_EQ(Pattern(g, 14),
              Split("0/0/32 0/0/32 0/0/32 0/1/32 0/1/32 0/1/32 0/2/32 0/2/32 0/2/32 1/3/32 "
                    "1/3/32 1/3/32 1/4/32 1/4/32"));
  }
  {
    PathGenerator g(2, 2, 4);
    EXPECT_EQ(Pattern(g, 14), Split("0/32 0/32 1/32 1/32 2/32 2/32 3/32 3/32 4/32 4/32 5/32 "
                                    "5/32 6/32 6/32"));
  }
  {
    PathGenerator g(1, 2, 4);  // a single level: bare file names, never rolls over
    EXPECT_EQ(Pattern(g, 4), Split("32 32 32 32"));
  }
}

TEST(PathGeneratorTest, DefaultShape) {
  PathGenerator g;
  std::set<std::string> leaf_dirs;
  for (int i = 0; i < 1001; ++i) {
    const auto parts = PathComponents(g.Next());
    ASSERT_EQ(parts.size(), 4u);
    for (int d = 0; d < 3; ++d) {
      EXPECT_EQ(parts[d].size(), 10u);
      EXPECT_TRUE(IsLowerHex(parts[d]));
    }
    EXPECT_EQ(parts[3].size(), 32u);
    EXPECT_TRUE(IsLowerHex(parts[3]));
    leaf_dirs.insert(parts[0] + "/" + parts[1] + "/" + parts[2]);
  }
  // 1000 files per leaf directory; the 1001st opens a new one.
  EXPECT_EQ(leaf_dirs.size(), 2u);
}

}  // namespace
}  // namespace sedpack
