// SPDX-License-Identifier: Apache-2.0
// stats and digest print running progress lines on stderr when asked
// (--progress; stderr is a file here, so none by default), then their final
// line, as verify and recompress do.
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "cli/tool_run.h"
#include "support/test_support.h"

namespace sedpack {
namespace {

using testing::Outcome;
using testing::RunTool;

// Run the tool with `args` on a pseudo-terminal (`script`): stdout and stderr
// are that terminal, and what it showed is returned; its exit code in *code.
std::string RunOnTerminal(const std::string& dir, const std::vector<std::string>& args, int* code) {
  std::string cmd = std::string("'") + SEDPACK_BIN + "'";
  for (const std::string& a : args) cmd += " '" + a + "'";
  const std::string shown = dir + "/terminal.out";
  const std::string line = "script -qec \"" + cmd + "\" /dev/null > '" + shown + "' 2>&1 </dev/null";
  const int status = std::system(line.c_str());
  *code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return testing::Slurp(shown);
}

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

// "12.3 MB" (FormatBytes) as bytes; -1 if it is not one.
double ParseBytes(const std::string& text) {
  std::istringstream in(text);
  double value = -1;
  std::string unit;
  if (!(in >> value >> unit)) return -1;
  const std::vector<std::string> units = {"B", "kB", "MB", "GB", "TB"};
  double scale = 1;
  for (const std::string& u : units) {
    if (unit.rfind(u, 0) == 0 && (unit.size() == u.size() || unit[u.size()] == ' ' || unit[u.size()] == ',')) {
      return value * scale;
    }
    scale *= 1000;
  }
  return -1;
}

// verify's progress: "X of [about] TOTAL": TOTAL estimates the files the check
// hashes (shards and lists), not only the lists read first (a user report:
// "3.92 kB of about 4.70 kB" on a 30 MB dataset). Every line's total, and the
// final line's, is within 2x of the dataset's size on disk.
TEST(ProgressCli, VerifyProgressTotalIsTheDatasetsSize) {
  testing::TempDir dir;
  const std::string root = dir.path() + "/mb";
  Outcome r = RunTool(dir.path(), {"generate", std::string(SEDPACK_CONFIGS_DIR) + "/generate_small.json", root,
                                   "--examples-train", "3000", "-q"});
  ASSERT_EQ(r.code, 0) << r.err;
  double du = 0;
  for (const auto& e : std::filesystem::recursive_directory_iterator(root)) {
    if (e.is_regular_file()) du += static_cast<double>(e.file_size());
  }
  ASSERT_GT(du, 4e6);
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"verify", root, "--progress"}, {"verify", root, "--progress", "-s", "train"}}) {
    r = RunTool(dir.path(), args);
    ASSERT_EQ(r.code, 0) << r.err;
    std::istringstream in(r.err);
    int totals = 0;
    std::string last;
    for (std::string line; std::getline(in, line);) {
      if (line.rfind("verify: ", 0) != 0) continue;
      last = line;
      std::size_t of = line.find(" of ");
      if (of == std::string::npos) continue;
      std::string rest = line.substr(of + 4);
      if (rest.rfind("about ", 0) == 0) rest = rest.substr(6);
      const double total = ParseBytes(rest);
      EXPECT_GT(total, du / 2) << line << " (dataset: " << du << " bytes)";
      EXPECT_LT(total, du * 2) << line << " (dataset: " << du << " bytes)";
      ++totals;
    }
    EXPECT_GT(totals, 0) << r.err;
    EXPECT_NE(last.find(" of "), std::string::npos) << "final line: " << last;
  }
}

// On a terminal generate and import-hdf5 show their progress line by default;
// --progress=false, --no-progress and -q hide it (a user report: on a terminal
// the line was shown whatever was asked).
TEST(ProgressCli, NoProgressAndQuietHideTheLineOnATerminal) {
  if (std::system("command -v script >/dev/null 2>&1") != 0) GTEST_SKIP() << "no script(1) for a terminal";
  testing::TempDir dir;
  const std::string config = std::string(SEDPACK_CONFIGS_DIR) + "/generate_small.json";
  int code = -1;
  int n = 0;
  for (const std::vector<std::string>& extra :
       {std::vector<std::string>{}, {"--progress=false"}, {"--no-progress"}, {"-q"}, {"-q", "--progress"}}) {
    std::vector<std::string> args = {"generate", config, dir.path() + "/g" + std::to_string(n++)};
    args.insert(args.end(), extra.begin(), extra.end());
    const std::string shown = RunOnTerminal(dir.path(), args, &code);
    ASSERT_EQ(code, 0) << shown;
    const bool want = extra.empty() || extra.back() == "--progress";
    EXPECT_EQ(shown.find("generate: 112/112 examples (100.0%)") != std::string::npos, want)
        << (extra.empty() ? "(default)" : extra[0]) << ": " << shown;
    EXPECT_EQ(shown.find("generated 112 examples") != std::string::npos, extra.empty() || extra[0] != "-q") << shown;
  }
  Outcome r = RunTool(dir.path(), {"generate", config, dir.path() + "/x", "--no-progress", "--progress"});
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("--no-progress cannot be used with --progress"), std::string::npos) << r.err;

  // import-hdf5 of an export of the dataset (when HDF5 is built in).
  const std::string h5 = dir.path() + "/e.h5", mapping = dir.path() + "/e.json";
  r = RunTool(dir.path(), {"export-hdf5", dir.path() + "/g0", "-o", h5, "-q"});
  if (r.code == 4) GTEST_SKIP() << "HDF5 not built in";
  ASSERT_EQ(r.code, 0) << r.err;
  r = RunTool(dir.path(), {"inspect-hdf5", h5, "--mapping"});
  ASSERT_EQ(r.code, 0) << r.err;
  {
    std::ofstream(mapping) << r.out;
  }
  for (const std::vector<std::string>& extra :
       {std::vector<std::string>{}, {"--progress=false"}, {"--no-progress"}, {"-q"}}) {
    std::vector<std::string> args = {"import-hdf5", "-c", mapping, h5, "-o", dir.path() + "/i" + std::to_string(n++)};
    args.insert(args.end(), extra.begin(), extra.end());
    const std::string shown = RunOnTerminal(dir.path(), args, &code);
    ASSERT_EQ(code, 0) << shown;
    EXPECT_EQ(shown.find("import-hdf5: ") != std::string::npos && shown.find(" rows (") != std::string::npos,
              extra.empty())
        << (extra.empty() ? "(default)" : extra[0]) << ": " << shown;
  }
}

}  // namespace
}  // namespace sedpack
