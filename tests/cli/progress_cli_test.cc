// SPDX-License-Identifier: Apache-2.0
// stats and digest print running progress lines on stderr when asked
// (--progress; stderr is a file here, so none by default), then their final
// line, as verify and recompress do.
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "cli/tool_run.h"
#include "support/test_support.h"

namespace sedpack {
namespace {

using testing::Outcome;
using testing::RunTool;

// The stderr lines that start with `prefix` and hold a percentage.
std::vector<std::string> ProgressLines(const std::string& err, const std::string& prefix) {
  std::vector<std::string> lines;
  std::istringstream in(err);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(prefix, 0) == 0 && line.find("%) in ") != std::string::npos) lines.push_back(line);
  }
  return lines;
}

TEST(ProgressCli, StatsAndDigestPrintProgressWhenAsked) {
  testing::TempDir dir;
  const std::string root = dir.path() + "/small";
  Outcome r = RunTool(dir.path(), {"generate", std::string(SEDPACK_CONFIGS_DIR) + "/generate_small.json", root, "-q"});
  ASSERT_EQ(r.code, 0) << r.err;

  r = RunTool(dir.path(), {"stats", root, "-s", "train", "-s", "test", "--progress"});
  ASSERT_EQ(r.code, 0) << r.err;
  for (const char* split : {"train", "test"}) {
    const std::vector<std::string> lines = ProgressLines(r.err, std::string("stats: ") + split + ": ");
    ASSERT_FALSE(lines.empty()) << r.err;
    EXPECT_NE(lines.back().find("(100.0%) in "), std::string::npos) << lines.back();
    EXPECT_NE(lines.back().find(" MB/s"), std::string::npos) << lines.back();
  }
  EXPECT_NE(r.err.find("stats: train: 64 examples in 4 shards read in"), std::string::npos) << r.err;
  EXPECT_NE(ProgressLines(r.err, "stats: train: ").back().find("in 4 shards"), std::string::npos) << r.err;

  r = RunTool(dir.path(), {"digest", root, "--print", "--progress"});
  ASSERT_EQ(r.code, 0) << r.err;
  std::vector<std::string> lines = ProgressLines(r.err, "digest: ");
  ASSERT_FALSE(lines.empty()) << r.err;
  EXPECT_NE(lines.back().find("(100.0%) in 7 shards"), std::string::npos) << lines.back();
  EXPECT_NE(r.err.find("digest: 7 shards decoded in"), std::string::npos) << r.err;

  // Not asked (stderr is not a terminal), or --progress=false: no progress at all.
  for (const std::vector<std::string>& quiet :
       {std::vector<std::string>{"stats", root}, {"stats", root, "--progress=false"}, {"digest", root, "--print"},
        {"digest", root, "--print", "--progress=false"}}) {
    r = RunTool(dir.path(), quiet);
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(r.err, "") << quiet[0];
  }
}

}  // namespace
}  // namespace sedpack
