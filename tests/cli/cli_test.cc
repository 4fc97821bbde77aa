// SPDX-License-Identifier: Apache-2.0
// Runs the built `sedpack` binary as a child process and checks exit codes and output.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "cli/value_json.h"
#include "sedpack/config.h"
#include "sedpack/dataset/dataset.h"
#include "sedpack/dataset/filler.h"
#include "sedpack/generate/generate.h"
#include "support/test_support.h"

namespace sedpack {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

struct RunResult {
  int code = -1;
  std::string out;
  std::string err;
};

std::string ReadText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string Quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

class CliTest : public ::testing::Test {
 protected:
  // RunResult `sedpack <args>` (args already shell-quoted where needed).
  RunResult Sedpack(const std::string& args, const std::string& env = "") {
    const std::string out = tmp_.path() + "/stdout", err = tmp_.path() + "/stderr";
    const std::string cmd = "env " + env + " " + Quote(SEDPACK_BIN) + " " + args + " >" +
                            Quote(out) + " 2>" + Quote(err) + " </dev/null";
    const int status = std::system(cmd.c_str());
    RunResult r;
    r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    r.out = ReadText(out);
    r.err = ReadText(err);
    return r;
  }

  // Generate the small demo dataset once per test that needs it.
  std::string SmallDataset(const std::string& extra = "") {
    const std::string root = tmp_.path() + "/small";
    const RunResult r = Sedpack("generate " + Quote(std::string(SEDPACK_CONFIGS_DIR) +
                                              "/generate_small.json") +
                          " " + Quote(root) + " " + extra);
    EXPECT_EQ(r.code, 0) << r.err;
    return root;
  }

  std::string Path(const std::string& name) { return tmp_.path() + "/" + name; }
  // The path of the first shard `ls` lists for `split` ("" if none).
  std::string FirstShard(const std::string& root, const std::string& split) {
    RunResult r = Sedpack("ls " + Quote(root) + " --split " + split);
    EXPECT_EQ(r.code, 0) << r.err;
    std::istringstream cs(r.out.substr(0, r.out.find('\n')));
    std::vector<std::string> cols;
    for (std::string c; std::getline(cs, c, '\t');) cols.push_back(c);
    return cols.size() >= 3 ? cols[2] : std::string();
  }

  testing::TempDir tmp_;
};

TEST_F(CliTest, HelpAndVersion) {
  RunResult r = Sedpack("--help");
  EXPECT_EQ(r.code, 0);
  for (const char* cmd : {"info", "ls", "check", "cat", "generate"}) {
    EXPECT_NE(r.out.find(std::string("  ") + cmd), std::string::npos) << cmd;
    const RunResult h = Sedpack(std::string(cmd) + " --help");
    EXPECT_EQ(h.code, 0) << cmd << ": " << h.err;
    EXPECT_NE(h.out.find(std::string("Usage: sedpack ") + cmd), std::string::npos) << h.out;
    EXPECT_NE(h.out.find("Exit codes"), std::string::npos);
  }
  r = Sedpack("--version");
  EXPECT_EQ(r.code, 0);
  EXPECT_NE(r.out.find("sedpack"), std::string::npos);
}

TEST_F(CliTest, UsageErrorsExit2) {
  RunResult r = Sedpack("");
  EXPECT_EQ(r.code, 2);
  r = Sedpack("frobnicate");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("sedpack: unknown command"), std::string::npos) << r.err;
  r = Sedpack("info --no-such-option x");
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err.rfind("sedpack info: ", 0), 0u) << r.err;
  r = Sedpack("info");
  EXPECT_EQ(r.code, 2);
  r = Sedpack("info a b");
  EXPECT_EQ(r.code, 2);
  r = Sedpack("generate --seed -3 " + Quote(std::string(SEDPACK_CONFIGS_DIR) + "/generate_small.json") +
              " " + Quote(Path("x")));
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_FALSE(fs::exists(Path("x")));
}

TEST_F(CliTest, MissingOrInvalidDatasetExit2) {
  for (const char* cmd : {"info", "ls", "check", "cat --split train"}) {
    RunResult r = Sedpack(std::string(cmd) + " " + Quote(Path("does_not_exist")));
    EXPECT_EQ(r.code, 2) << cmd << ": " << r.err;
    EXPECT_EQ(r.err.rfind("sedpack: ", 0), 0u) << r.err;
    EXPECT_NE(r.err.find("does_not_exist"), std::string::npos) << r.err;
    fs::create_directories(Path("empty"));
    r = Sedpack(std::string(cmd) + " " + Quote(Path("empty")));
    EXPECT_EQ(r.code, 2) << cmd << ": " << r.err;
    EXPECT_NE(r.err.find("not a sedpack dataset"), std::string::npos) << r.err;
  }
  fs::create_directories(Path("bad_info"));
  std::ofstream(Path("bad_info/dataset_info.json")) << "{\"metadata\": 5";
  // A dataset whose dataset_info.json does not parse is damaged data (1), not a usage error.
  RunResult r = Sedpack("info " + Quote(Path("bad_info")));
  EXPECT_EQ(r.code, 1) << r.err;
}

TEST_F(CliTest, GenerateInfoLsCheckCat) {
  const std::string root = SmallDataset();
  RunResult r = Sedpack("info " + Quote(root));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("trace1"), std::string::npos);
  EXPECT_NE(r.out.find("(1000,)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("64 examples"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("sha256"), std::string::npos);

  // ls: one line per shard, counts add up, shards keyed by key_index (key groups of 16).
  r = Sedpack("ls " + Quote(root));
  ASSERT_EQ(r.code, 0) << r.err;
  std::istringstream lines(r.out);
  std::string line;
  int shards = 0;
  long examples = 0;
  while (std::getline(lines, line)) {
    std::vector<std::string> cols;
    std::istringstream cs(line);
    for (std::string c; std::getline(cs, c, '\t');) cols.push_back(c);
    ASSERT_EQ(cols.size(), 4u) << line;
    EXPECT_NE(cols[3].find("key_index"), std::string::npos) << line;
    examples += std::stol(cols[1]);
    ++shards;
  }
  EXPECT_EQ(examples, 64 + 32 + 16);
  EXPECT_EQ(shards, 4 + 2 + 1);
  r = Sedpack("ls " + Quote(root) + " --split test");
  EXPECT_EQ(r.code, 0);
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 2);

  // check: clean, also against the printed checksums.
  r = Sedpack("check " + Quote(root));
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("OK"), std::string::npos) << r.out;
  r = Sedpack("info --checksums " + Quote(root));
  ASSERT_EQ(r.code, 0);
  std::ofstream(Path("expect.txt")) << r.out;
  r = Sedpack("check --deep " + Quote(root) + " --expect-file " + Quote(Path("expect.txt")));
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  r = Sedpack("check " + Quote(root) + " --expect 00 11");
  EXPECT_EQ(r.code, 1) << r.out << r.err;

  // cat: JSON lines with the schema's keys, exact values.
  r = Sedpack("cat " + Quote(root) + " --split train --limit 2");
  ASSERT_EQ(r.code, 0) << r.err;
  ASSERT_OK_AND_ASSIGN(GenerateConfig config,
                       LoadGenerateConfig(std::string(SEDPACK_CONFIGS_DIR) + "/generate_small.json"));
  std::istringstream jl(r.out);
  int n = 0;
  while (std::getline(jl, line)) {
    const Json j = Json::parse(line);
    ASSERT_TRUE(j.is_object());
    std::vector<std::string> keys;
    for (auto it = j.begin(); it != j.end(); ++it) keys.push_back(it.key());
    // nlohmann::json sorts keys; the line itself must keep schema order.
    EXPECT_LT(line.find("\"trace1\""), line.find("\"key\""));
    EXPECT_LT(line.find("\"key\""), line.find("\"plaintext\""));
    EXPECT_LT(line.find("\"plaintext\""), line.find("\"ciphertext\""));
    ASSERT_EQ(keys.size(), 4u);
    ASSERT_EQ(j["trace1"].size(), 1000u);
    ASSERT_EQ(j["key"].size(), 16u);
    ExampleBuffers ex;
    ASSERT_OK(GenerateExample(config, Split::kTrain, n, &ex));
    for (int i = 0; i < 16; ++i) {
      EXPECT_EQ(j["key"][i].get<int>(), ex.key[i]);
      EXPECT_EQ(j["plaintext"][i].get<int>(), ex.plaintext[i]);
      EXPECT_EQ(j["ciphertext"][i].get<int>(), ex.ciphertext[i]);
    }
    for (std::size_t t = 0; t < 1000; ++t) {
      ASSERT_EQ(cli::DoubleToHalfBits(j["trace1"][t].get<double>()), ex.trace_f16[t].bits) << t;
    }
    ++n;
  }
  EXPECT_EQ(n, 2);
  r = Sedpack("cat " + Quote(root) + " --split holdout");
  EXPECT_EQ(r.code, 0);
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 16);
  EXPECT_EQ(Sedpack("cat " + Quote(root)).code, 2);
  EXPECT_EQ(Sedpack("cat " + Quote(root) + " --split train --format csv").code, 2);
  EXPECT_EQ(Sedpack("cat " + Quote(root) + " --split validation").code, 2);

  // A second generate into the same folder refuses.
  r = Sedpack("generate " + Quote(std::string(SEDPACK_CONFIGS_DIR) + "/generate_small.json") + " " +
              Quote(root));
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("already holds a sedpack dataset"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("--append"), std::string::npos) << r.err;
}

TEST_F(CliTest, GenerateAppendEqualsOneJobOfTheSummedCounts) {
  const std::string config = Quote(std::string(SEDPACK_CONFIGS_DIR) + "/generate_small.json");
  const std::string small = " --trace-length 256 --examples-per-shard 8 --examples-holdout 0";
  const std::string a = tmp_.path() + "/appended", b = tmp_.path() + "/whole";
  ASSERT_EQ(Sedpack("generate " + config + " " + Quote(a) + small + " --examples-train 20 --examples-test 4").code, 0);
  // A structure option would be ignored by an append, so it is refused.
  RunResult r = Sedpack("generate " + config + " " + Quote(a) + small +
                        " --append --examples-train 12 --examples-test 0 --compression ZSTD");
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("--compression cannot be used with --append"), std::string::npos) << r.err;
  r = Sedpack("generate " + config + " " + Quote(a) + " --trace-length 256 --append --examples-train 12 --examples-test 0");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("appended to"), std::string::npos) << r.out;
  ASSERT_EQ(Sedpack("generate " + config + " " + Quote(b) + small + " --examples-train 32 --examples-test 4").code, 0);
  EXPECT_EQ(Sedpack("check " + Quote(a)).code, 0);
  for (const char* split : {"train", "test"}) {
    const RunResult x = Sedpack("cat " + Quote(a) + " --split " + split);
    const RunResult y = Sedpack("cat " + Quote(b) + " --split " + split);
    EXPECT_EQ(x.out, y.out) << split;
  }
  // --append needs a dataset.
  r = Sedpack("generate " + config + " " + Quote(tmp_.path() + "/none") + small + " --append");
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("--append"), std::string::npos) << r.err;
}

TEST_F(CliTest, CheckFindsCorruptShard) {
  const std::string root = SmallDataset();
  const std::string shard = FirstShard(root, "test");
  ASSERT_FALSE(shard.empty());
  RunResult r;
  {
    std::fstream f(root + "/" + shard, std::ios::in | std::ios::out | std::ios::binary);
    ASSERT_TRUE(f.good());
    f.seekg(40);
    char c = 0;
    f.read(&c, 1);
    f.seekp(40);
    c = static_cast<char>(c ^ 0x5a);
    f.write(&c, 1);
  }
  r = Sedpack("check " + Quote(root));
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find(shard), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("ERROR"), std::string::npos) << r.out;
  // Only the test split is affected.
  r = Sedpack("check " + Quote(root) + " --split train");
  EXPECT_EQ(r.code, 0) << r.out << r.err;
}

// `verify --json FILE`: the same problems as the text report, as JSON.
TEST_F(CliTest, VerifyJsonReportNamesTheProblem) {
  const std::string root = SmallDataset();
  const std::string shard = FirstShard(root, "test");
  ASSERT_FALSE(shard.empty());
  RunResult r;
  std::ofstream(root + "/" + shard, std::ios::app | std::ios::binary) << "tail";
  r = Sedpack("verify " + Quote(root) + " --json=" + Quote(Path("report.json")));
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  std::ifstream in(Path("report.json"));
  const Json j = Json::parse(std::string(std::istreambuf_iterator<char>(in), {}));
  EXPECT_EQ(j["dataset"], root);
  EXPECT_EQ(j["ok"], false);
  EXPECT_GE(j["errors"].get<int>(), 1);
  ASSERT_FALSE(j["problems"].empty());
  bool named = false;
  for (const Json& p : j["problems"]) {
    if (p["path"] == shard && p["kind"] == "hash_mismatch" && p["severity"] == "error") named = true;
  }
  EXPECT_TRUE(named) << j.dump(2);
}

// Output paths are the user's: "-" is standard output, links and devices are
// written through (never replaced), a missing folder or a folder is refused
// before any work, by name.
TEST_F(CliTest, VerifyJsonToStandardOutput) {
  const std::string root = SmallDataset();
  RunResult r = Sedpack("verify " + Quote(root) + " --json -");
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  // Only the JSON on stdout; the text report went to stderr.
  const Json j = Json::parse(r.out);
  EXPECT_EQ(j["dataset"], root);
  EXPECT_EQ(j["ok"], true);
  EXPECT_NE(r.err.find("checked "), std::string::npos) << r.err;
}

TEST_F(CliTest, VerifyJsonToDevStdoutKeepsTheLink) {
  const std::string root = SmallDataset();
  struct stat before {};
  const bool dev_stdout_is_link = ::lstat("/dev/stdout", &before) == 0 && S_ISLNK(before.st_mode);
  if (!dev_stdout_is_link) GTEST_SKIP() << "/dev/stdout is not a symbolic link here";
  RunResult r = Sedpack("verify " + Quote(root) + " --json=/dev/stdout");
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  struct stat after {};
  ASSERT_EQ(::lstat("/dev/stdout", &after), 0);
  EXPECT_TRUE(S_ISLNK(after.st_mode)) << "/dev/stdout was replaced";
  // stdout is a file here: the JSON comes first, the text report after it, both kept.
  const std::size_t text = r.out.find("checked ");
  ASSERT_NE(text, std::string::npos) << r.out;
  const Json j = Json::parse(r.out.substr(0, text));
  EXPECT_EQ(j["ok"], true);
}

TEST_F(CliTest, VerifyJsonThroughASymbolicLink) {
  const std::string root = SmallDataset();
  fs::create_directories(Path("reports"));
  std::ofstream(Path("reports/latest.json")) << "an older and much longer report than the new one will be";
  ASSERT_EQ(::symlink("reports/latest.json", Path("link.json").c_str()), 0);
  RunResult r = Sedpack("verify " + Quote(root) + " --json=" + Quote(Path("link.json")));
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  struct stat st {};
  ASSERT_EQ(::lstat(Path("link.json").c_str(), &st), 0);
  EXPECT_TRUE(S_ISLNK(st.st_mode));
  EXPECT_EQ(Json::parse(ReadText(Path("reports/latest.json")))["ok"], true);
  EXPECT_EQ(fs::read_symlink(Path("link.json")), "reports/latest.json");
}

TEST_F(CliTest, VerifyJsonBadPathsAreUsageErrors) {
  const std::string root = SmallDataset();
  // Exit code 2 (usage or input error: a bad option value), before any hashing,
  // and the folder is not created.
  RunResult r = Sedpack("verify " + Quote(root) + " --json=" + Quote(Path("no/such/report.json")));
  EXPECT_EQ(r.code, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("no such folder: " + Path("no/such")), std::string::npos) << r.err;
  EXPECT_EQ(r.out.find("checked "), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(Path("no")));
  r = Sedpack("verify " + Quote(root) + " --json=" + Quote(tmp_.path()));
  EXPECT_EQ(r.code, 2) << r.out << r.err;
  EXPECT_NE(r.err.find(tmp_.path() + " is a folder"), std::string::npos) << r.err;
  // A failed write is an I/O failure: 3.
  if (::access("/dev/full", W_OK) == 0) {
    r = Sedpack("verify " + Quote(root) + " --json=/dev/full");
    EXPECT_EQ(r.code, 3) << r.out << r.err;
    EXPECT_NE(r.err.find("/dev/full"), std::string::npos) << r.err;
  }
}

TEST_F(CliTest, PackOutputPaths) {
  const std::string root = SmallDataset();
  // -o - : the pack on stdout, the summary on stderr; it unpacks.
  RunResult r = Sedpack("pack " + Quote(root) + " -o -");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out.compare(0, 12, "SEDPACK-PACK"), 0);
  EXPECT_NE(r.err.find("into standard output"), std::string::npos) << r.err;
  std::ofstream(Path("piped.pack"), std::ios::binary) << r.out;
  r = Sedpack("unpack " + Quote(Path("piped.pack")) + " " + Quote(Path("back")));
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(Sedpack("verify " + Quote(Path("back"))).code, 0);
  // A new file; then the same path again is refused (a pack never overwrites).
  r = Sedpack("pack " + Quote(root) + " -o " + Quote(Path("x.pack")));
  EXPECT_EQ(r.code, 0) << r.err;
  r = Sedpack("pack " + Quote(root) + " -o " + Quote(Path("x.pack")));
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("already exists"), std::string::npos) << r.err;
  r = Sedpack("pack " + Quote(root) + " -o " + Quote(Path("no/x.pack")));
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("no such folder"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(Path("no")));
  if (::access("/dev/full", W_OK) == 0) {
    r = Sedpack("pack " + Quote(root) + " -o /dev/full");
    EXPECT_EQ(r.code, 3) << r.err;
    EXPECT_NE(r.err.find("/dev/full"), std::string::npos) << r.err;
  }
}

TEST_F(CliTest, GenerateConfigErrors) {
  std::ofstream(Path("typo.json")) << R"({"generate": {"seed": 1, "trace_lenght": 300}})";
  RunResult r = Sedpack("generate " + Quote(Path("typo.json")) + " " + Quote(Path("out")));
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("trace_lenght"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("typo.json"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(Path("out")));

  std::ofstream(Path("typo2.json")) << R"({"dataset_structure": {"compresion": "LZ4"}})";
  r = Sedpack("generate " + Quote(Path("typo2.json")) + " " + Quote(Path("out")));
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("compresion"), std::string::npos) << r.err;

  std::ofstream(Path("broken.json")) << "{";
  r = Sedpack("generate " + Quote(Path("broken.json")) + " " + Quote(Path("out")));
  EXPECT_EQ(r.code, 2) << r.err;

  r = Sedpack("generate " + Quote(Path("missing.json")) + " " + Quote(Path("out")));
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("missing.json"), std::string::npos) << r.err;

  std::ofstream(Path("noout.json")) << "{}";
  r = Sedpack("generate " + Quote(Path("noout.json")));
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("OUT"), std::string::npos) << r.err;
}

TEST_F(CliTest, GenerateOverridesAndDeterminism) {
  const std::string cfg = Quote(std::string(SEDPACK_CONFIGS_DIR) + "/generate_small.json");
  const std::string common =
      " --examples-train 5 --examples-test 0 --examples-holdout 0 --trace-length 300"
      " --compression none --hash-algorithms md5 --shard-by-key=false";
  RunResult r = Sedpack("generate " + cfg + " " + Quote(Path("a")) + common + " --threads 1");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("generated 5 examples"), std::string::npos) << r.out;
  r = Sedpack("generate " + cfg + " " + Quote(Path("b")) + common + " --threads 4 --progress");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("generate: 5/5 examples"), std::string::npos) << r.err;
  r = Sedpack("generate " + cfg + " " + Quote(Path("c")) + common + " --seed 43");
  ASSERT_EQ(r.code, 0) << r.err;

  r = Sedpack("info " + Quote(Path("a")));
  EXPECT_NE(r.out.find("(300,)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("md5"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("none"), std::string::npos) << r.out;
  const std::string cat_a = Sedpack("cat " + Quote(Path("a")) + " --split train").out;
  const std::string cat_b = Sedpack("cat " + Quote(Path("b")) + " --split train").out;
  const std::string cat_c = Sedpack("cat " + Quote(Path("c")) + " --split train").out;
  EXPECT_EQ(std::count(cat_a.begin(), cat_a.end(), '\n'), 5);
  EXPECT_EQ(cat_a, cat_b);
  EXPECT_NE(cat_a, cat_c);
  r = Sedpack("ls " + Quote(Path("a")));
  EXPECT_EQ(r.out.find("key_index"), std::string::npos) << r.out;

  r = Sedpack("generate " + cfg + " " + Quote(Path("d")) + " --compression LZ5");
  EXPECT_EQ(r.code, 2) << r.err;
  r = Sedpack("generate " + cfg + " " + Quote(Path("d")) + " --trace-length 10");
  EXPECT_EQ(r.code, 2) << r.err;
  // The config's LZ4 is not a tfrec compression: refused as an input error.
  r = Sedpack("generate " + cfg + " " + Quote(Path("d")) + " --shard-file-type tfrec");
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("not allowed"), std::string::npos) << r.err;
}

TEST_F(CliTest, GenerateVerifyAndCatTfrec) {
  const std::string cfg = Quote(std::string(SEDPACK_CONFIGS_DIR) + "/generate_small.json");
  const std::string common =
      " --examples-train 6 --examples-test 2 --examples-holdout 0 --trace-length 300"
      " --hash-algorithms sha256 --shard-file-type tfrec";
  for (const std::string c : {"none", "GZIP", "ZLIB"}) {
    SCOPED_TRACE(c);
    const std::string root = Path("tf_" + c);
    RunResult r = Sedpack("generate " + cfg + " " + Quote(root) + common + " --compression " + c);
    ASSERT_EQ(r.code, 0) << r.err;
    r = Sedpack("info " + Quote(root));
    EXPECT_NE(r.out.find("tfrec"), std::string::npos) << r.out;
    r = Sedpack("verify --deep " + Quote(root));
    EXPECT_EQ(r.code, 0) << r.out << r.err;
    r = Sedpack("cat " + Quote(root) + " --split train");
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 6);
    // The same examples as an fb dataset from the same seed: tfrec keeps
    // float16 and uint8 exactly.
    const std::string fb_root = Path("fb_" + c);
    ASSERT_EQ(Sedpack("generate " + cfg + " " + Quote(fb_root) + " --examples-train 6 --examples-test 2"
                      " --examples-holdout 0 --trace-length 300 --hash-algorithms sha256"
                      " --compression none").code,
              0);
    EXPECT_EQ(r.out, Sedpack("cat " + Quote(fb_root) + " --split train").out);
  }
}

// Multi-rank generate is tested for real under mpirun (tests/mpi/generate_ranks_test.sh).

// Decode one of our JSON values to its little-endian bytes in `dtype`.
std::string JsonToBytes(const Json& v, const std::string& dtype) {
  std::string out;
  if (v.is_array()) {
    for (const Json& e : v) out += JsonToBytes(e, dtype);
    return out;
  }
  auto put = [&](auto x) { out.append(reinterpret_cast<const char*>(&x), sizeof(x)); };
  if (dtype == "float16") {
    double d = v.is_string() ? (v == "NaN" ? NAN : v == "Infinity" ? INFINITY : -INFINITY)
                             : v.get<double>();
    put(cli::DoubleToHalfBits(d));
  } else if (dtype == "float32") {
    put(static_cast<float>(v.get<double>()));
  } else if (dtype == "float64") {
    put(v.get<double>());
  } else if (dtype == "bool") {
    put(static_cast<std::uint8_t>(v.get<bool>()));
  } else if (dtype == "int8") {
    put(v.get<std::int8_t>());
  } else if (dtype == "int16") {
    put(v.get<std::int16_t>());
  } else if (dtype == "int32") {
    put(v.get<std::int32_t>());
  } else if (dtype == "int64" || dtype == "int") {
    put(v.get<std::int64_t>());
  } else if (dtype == "uint8") {
    put(v.get<std::uint8_t>());
  } else if (dtype == "uint16") {
    put(v.get<std::uint16_t>());
  } else if (dtype == "uint32") {
    put(v.get<std::uint32_t>());
  } else if (dtype == "uint64") {
    put(v.get<std::uint64_t>());
  } else if (dtype == "str") {
    out = v.get<std::string>();
  } else if (dtype == "bytes") {
    static const std::string kAlphabet =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    const std::string s = v.get<std::string>();
    std::uint32_t acc = 0;
    int bits = 0;
    for (char c : s) {
      if (c == '=') break;
      acc = (acc << 6) | static_cast<std::uint32_t>(kAlphabet.find(c));
      bits += 6;
      if (bits >= 8) {
        bits -= 8;
        out.push_back(static_cast<char>((acc >> bits) & 0xff));
      }
    }
  }
  return out;
}

std::string Hex(const std::string& bytes) {
  return testing::ToHex(reinterpret_cast<const std::byte*>(bytes.data()), bytes.size());
}

// `sedpack cat` of the reference's fixtures gives exactly the stored bytes.
TEST_F(CliTest, CatMatchesGoldenFixtures) {
  for (const char* fixture : {"fb_none", "fb_lz4", "npz_zip", "fb_multiprocessing"}) {
    const std::string dir = testing::GoldenDir() + "/" + fixture;
    const Json expected = Json::parse(ReadText(dir + "/expected.json"));
    std::map<std::string, std::string> dtypes;
    for (const Json& a : expected["attributes"]) dtypes[a["name"]] = a["dtype"];
    std::map<std::string, std::vector<Json>> golden;
    std::istringstream gl(ReadText(dir + "/expected_examples.jsonl"));
    for (std::string line; std::getline(gl, line);) {
      if (line.empty()) continue;
      Json j = Json::parse(line);
      golden[j["split"]].push_back(j);
    }
    ASSERT_FALSE(golden.empty()) << fixture;
    for (const auto& [split, examples] : golden) {
      const RunResult r = Sedpack("cat " + Quote(dir + "/dataset") + " --split " + split);
      ASSERT_EQ(r.code, 0) << fixture << " " << split << ": " << r.err;
      std::istringstream ol(r.out);
      std::size_t i = 0;
      for (std::string line; std::getline(ol, line); ++i) {
        ASSERT_LT(i, examples.size());
        const Json ours = Json::parse(line);
        const Json& values = examples[i]["values"];
        ASSERT_EQ(ours.size(), values.size());
        for (auto it = values.begin(); it != values.end(); ++it) {
          ASSERT_TRUE(ours.contains(it.key())) << it.key();
          EXPECT_EQ(Hex(JsonToBytes(ours[it.key()], dtypes[it.key()])),
                    it.value()["hex"].get<std::string>())
              << fixture << " " << split << " #" << i << " " << it.key() << " = "
              << ours[it.key()].dump();
        }
      }
      EXPECT_EQ(i, examples.size()) << fixture << " " << split;
    }
  }
}

// `sedpack get` prints exactly the lines `sedpack cat` prints, through the index.
std::string AllIndices(std::size_t n) {
  std::string args;
  for (std::size_t i = 0; i < n; ++i) args += " --index " + std::to_string(i);
  return args;
}

std::size_t Lines(const std::string& text) {
  return static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
}

TEST_F(CliTest, IndexBuildCheckAndGetMatchCat) {
  const std::string root = SmallDataset();
  RunResult r = Sedpack("index check " + Quote(root));
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  EXPECT_EQ(r.out.rfind("missing ", 0), 0u) << r.out;
  r = Sedpack("index build " + Quote(root));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("train: 64 examples in"), std::string::npos) << r.out;
  EXPECT_TRUE(fs::exists(root + "/.sedpack-hpc/index.bin"));
  r = Sedpack("index check " + Quote(root));
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_EQ(r.out.rfind("fresh ", 0), 0u) << r.out;
  for (const auto& [split, n] : std::vector<std::pair<std::string, std::size_t>>{
           {"train", 64}, {"test", 32}, {"holdout", 16}}) {
    const RunResult cat = Sedpack("cat " + Quote(root) + " --split " + split);
    ASSERT_EQ(cat.code, 0) << cat.err;
    ASSERT_EQ(Lines(cat.out), n);
    const RunResult all = Sedpack("get " + Quote(root) + " --split " + split + AllIndices(n));
    ASSERT_EQ(all.code, 0) << all.err;
    EXPECT_EQ(all.out, cat.out) << split;
    EXPECT_TRUE(all.err.empty()) << all.err;
    // One example at a time, in reverse: the same lines.
    std::istringstream lines(cat.out);
    std::vector<std::string> want;
    for (std::string line; std::getline(lines, line);) want.push_back(line + "\n");
    for (std::size_t i = n; i-- > n - 3;) {
      const RunResult one = Sedpack("get " + Quote(root) + " -s " + split + " -i " + std::to_string(i));
      ASSERT_EQ(one.code, 0) << one.err;
      EXPECT_EQ(one.out, want[i]) << split << " #" << i;
    }
    r = Sedpack("get " + Quote(root) + " --split " + split + " --index " + std::to_string(n));
    EXPECT_EQ(r.code, 2) << r.err;
    EXPECT_NE(r.err.find("out of range"), std::string::npos) << r.err;
  }
  EXPECT_EQ(Sedpack("get " + Quote(root) + " --split train").code, 2);
  EXPECT_EQ(Sedpack("get " + Quote(root) + " --split nope --index 0").code, 2);
  EXPECT_EQ(Sedpack("get " + Quote(root) + " --split train --index -1").code, 2);
  EXPECT_EQ(Sedpack("get " + Quote(root) + " --split train --index 0 --format csv").code, 2);
  EXPECT_EQ(Sedpack("index frobnicate " + Quote(root)).code, 2);
  EXPECT_EQ(Sedpack("index build " + Quote(Path("does_not_exist"))).code, 2);
  for (const char* cmd : {"index", "get"}) {
    const RunResult h = Sedpack(std::string(cmd) + " --help");
    EXPECT_EQ(h.code, 0);
    EXPECT_NE(h.out.find(std::string("Usage: sedpack ") + cmd), std::string::npos) << h.out;
  }
}

TEST_F(CliTest, StaleAndInvalidIndexAreReportedIgnoredOrRebuilt) {
  const std::string root = SmallDataset();
  ASSERT_EQ(Sedpack("index build " + Quote(root)).code, 0);
  const std::string want = Sedpack("cat " + Quote(root) + " --split test --limit 8").out;
  ASSERT_EQ(Lines(want), 8u);
  // Any change of dataset_info.json's bytes makes the index stale.
  {
    std::ofstream out(root + "/dataset_info.json", std::ios::app);
    out << "\n";
  }
  RunResult r = Sedpack("index check " + Quote(root));
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  EXPECT_EQ(r.out.rfind("stale ", 0), 0u) << r.out;
  EXPECT_NE(r.out.find("readers ignore it"), std::string::npos) << r.out;
  r = Sedpack("get " + Quote(root) + " --split test" + AllIndices(8));
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, want);
  EXPECT_NE(r.err.find("warning: index"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("stale"), std::string::npos) << r.err;
  EXPECT_EQ(Sedpack("index check " + Quote(root)).code, 1);  // get did not rewrite it
  r = Sedpack("index check --rebuild " + Quote(root));
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("rebuilt"), std::string::npos) << r.out;
  r = Sedpack("index check " + Quote(root));
  EXPECT_EQ(r.code, 0) << r.out;
  r = Sedpack("get " + Quote(root) + " --split test" + AllIndices(8));
  EXPECT_EQ(r.out, want);
  // (The checks sidecar is stale too since dataset_info.json changed: its own warning.)
  EXPECT_EQ(r.err.find("warning: index"), std::string::npos) << r.err;
  // Garbage in place of the index.
  {
    std::ofstream out(root + "/.sedpack-hpc/index.bin", std::ios::binary | std::ios::trunc);
    out << std::string(200, 'z');
  }
  r = Sedpack("index check " + Quote(root));
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.out.rfind("invalid ", 0), 0u) << r.out;
  r = Sedpack("get " + Quote(root) + " --split test" + AllIndices(8) + " --rebuild-index");
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, want);
  EXPECT_NE(r.err.find("rebuilding"), std::string::npos) << r.err;
  EXPECT_EQ(Sedpack("index check " + Quote(root)).code, 0);
}

// The sidecar folder is ours: verify does not call it an orphan, fix keeps it.
TEST_F(CliTest, VerifyAndFixLeaveTheIndexAlone) {
  const std::string root = SmallDataset();
  ASSERT_EQ(Sedpack("index build " + Quote(root)).code, 0);
  RunResult r = Sedpack("verify " + Quote(root));
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_EQ(r.out.find("orphan"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("WARNING"), std::string::npos) << r.out;
  // A real orphan next to it is still found, and only it is removed.
  {
    std::ofstream out(root + "/train/stray.fb");
    out << "x";
  }
  r = Sedpack("verify " + Quote(root));
  EXPECT_NE(r.out.find("WARNING orphan train/stray.fb"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find(".sedpack-hpc"), std::string::npos) << r.out;
  r = Sedpack("fix " + Quote(root) + " --remove-orphans");
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("1 orphan file"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(root + "/train/stray.fb"));
  EXPECT_TRUE(fs::exists(root + "/.sedpack-hpc/index.bin"));
  r = Sedpack("index check " + Quote(root));
  EXPECT_EQ(r.code, 0) << r.out;
}

// Golden datasets (read-only): get builds the index in memory and writes nothing.
TEST_F(CliTest, GetMatchesCatOnGoldenFixtures) {
  for (const char* fixture : {"fb_multiprocessing", "npz_zip", "fb_continue"}) {
    const std::string root = testing::GoldenDir() + "/" + fixture + "/dataset";
    for (const char* split : {"train", "test", "holdout"}) {
      const RunResult cat = Sedpack("cat " + Quote(root) + " --split " + split);
      ASSERT_EQ(cat.code, 0) << cat.err;
      const std::size_t n = Lines(cat.out);
      if (n == 0) continue;
      const RunResult get = Sedpack("get " + Quote(root) + " --split " + split + AllIndices(n));
      ASSERT_EQ(get.code, 0) << fixture << " " << split << ": " << get.err;
      EXPECT_EQ(get.out, cat.out) << fixture << " " << split;
    }
    EXPECT_FALSE(fs::exists(root + "/.sedpack-hpc")) << fixture;
  }
}

// Flip one bit of the byte in the middle of `path`.
void FlipMiddleByte(const std::string& path) {
  ASSERT_TRUE(testing::FlipBitAt(path, fs::file_size(path) / 2)) << path;
}

// A flipped byte in a shard of a reference-written dataset: `cat` and `get`
// refuse it (exit 1, the shard and the algorithm named) unless --no-verify.
TEST_F(CliTest, CatAndGetRefuseCorruptShardUnlessNoVerify) {
  const std::string root = Path("fb_none");
  testing::CopyTree(testing::GoldenDir() + "/fb_none/dataset", root);
  const std::string shard = FirstShard(root, "train");
  ASSERT_FALSE(shard.empty());
  RunResult r = Sedpack("cat " + Quote(root) + " --split train");
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string intact = r.out;
  FlipMiddleByte(root + "/" + shard);
  for (const std::string& cmd : {"cat " + Quote(root) + " --split train",
                                "get " + Quote(root) + " --split train --index 0"}) {
    SCOPED_TRACE(cmd);
    r = Sedpack(cmd);
    EXPECT_EQ(r.code, 1) << r.out << r.err;
    EXPECT_NE(r.err.find(shard + ": xxh128 mismatch (recorded "), std::string::npos) << r.err;
    EXPECT_EQ(r.out, "");
    r = Sedpack(cmd + " --no-verify");
    EXPECT_TRUE(r.code == 0 || r.code == 1) << r.code << ": " << r.err;  // 1: it does not decode
    EXPECT_EQ(r.err.find("mismatch (recorded"), std::string::npos) << r.err;
    if (r.code == 0) {
      EXPECT_NE(r.out, "");
    }
  }
  r = Sedpack("cat --help");
  EXPECT_NE(r.out.find("--no-verify"), std::string::npos);
  r = Sedpack("get --help");
  EXPECT_NE(r.out.find("--no-verify"), std::string::npos);
}

// A dataset this tool wrote has a checks sidecar: a flipped byte is caught by
// its fast checksums (cat: the shard; get: the example), and --strict-hash
// checks the recorded hash instead.
TEST_F(CliTest, CatAndGetCheckTheSidecarAndStrictHashTheRecordedHash) {
  const std::string cfg = Quote(std::string(SEDPACK_CONFIGS_DIR) + "/generate_small.json");
  const std::string root = Path("checked");
  RunResult r = Sedpack("generate " + cfg + " " + Quote(root) +
                        " --examples-train 4 --examples-test 0 --examples-holdout 0 --trace-length 300"
                        " --compression none --hash-algorithms sha256");
  ASSERT_EQ(r.code, 0) << r.err;
  ASSERT_TRUE(fs::exists(root + "/.sedpack-hpc/checks.bin"));
  const std::string shard = FirstShard(root, "train");
  FlipMiddleByte(root + "/" + shard);
  r = Sedpack("cat " + Quote(root) + " --split train");
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_NE(r.err.find(shard + ": xxh3-64 mismatch (checks sidecar records "), std::string::npos) << r.err;
  r = Sedpack("cat " + Quote(root) + " --split train --strict-hash");
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_NE(r.err.find(shard + ": sha256 mismatch (recorded "), std::string::npos) << r.err;
  std::string bad;
  for (int i = 0; i < 4 && bad.empty(); ++i) {
    r = Sedpack("get " + Quote(root) + " --split train --index " + std::to_string(i));
    if (r.code != 0) bad = r.err;
  }
  EXPECT_NE(bad.find("does not match its checksum in the checks sidecar"), std::string::npos) << bad;
  EXPECT_NE(bad.find(shard), std::string::npos) << bad;
  r = Sedpack("get " + Quote(root) + " --split train --index 0 --strict-hash");
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_NE(r.err.find("sha256 mismatch"), std::string::npos) << r.err;
  r = Sedpack("cat " + Quote(root) + " --split train --strict-hash --no-verify");
  EXPECT_EQ(r.code, 2) << r.err;
}

// `index build` on a dataset another library wrote (no checks sidecar) writes
// one from a checked read of every shard, which then serves verified fetches;
// a shard that fails its recorded hash is named in a warning and left out.
TEST_F(CliTest, IndexBuildWritesTheChecksSidecarOfAForeignDataset) {
  const std::string root = Path("foreign");
  testing::CopyTree(testing::GoldenDir() + "/fb_lz4/dataset", root);
  ASSERT_FALSE(fs::exists(root + "/.sedpack-hpc/checks.bin"));
  RunResult r = Sedpack("index build " + Quote(root));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("checks.bin (8 shards read and checked"), std::string::npos) << r.out;
  ASSERT_TRUE(fs::exists(root + "/.sedpack-hpc/checks.bin"));
  r = Sedpack("index build " + Quote(root));  // fresh now: not read again
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out.find("checks.bin"), std::string::npos) << r.out;
  const std::string shard = FirstShard(root, "train");
  FlipMiddleByte(root + "/" + shard);
  r = Sedpack("get " + Quote(root) + " --split train --index 0");
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_NE(r.err.find(shard + " (example 0 of split train)"), std::string::npos) << r.err;

  const std::string damaged = Path("foreign-damaged");
  testing::CopyTree(testing::GoldenDir() + "/fb_lz4/dataset", damaged);
  FlipMiddleByte(damaged + "/" + shard);
  r = Sedpack("index build " + Quote(damaged));  // the index holds paths only: it is written
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_TRUE(fs::exists(damaged + "/.sedpack-hpc/index.bin"));
  EXPECT_NE(r.err.find(shard), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("left out of"), std::string::npos) << r.err;
  // Without a record of the shard, a fetch from it checks the recorded hash.
  r = Sedpack("get " + Quote(damaged) + " --split train --index 0");
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_NE(r.err.find(shard + ": xxh32 mismatch (recorded "), std::string::npos) << r.err;
}


// ---- One vocabulary, one exit-code table, --json everywhere (issue 19). ----

// Every command: `help CMD` has a synopsis, options, examples and its MPI mode.
TEST_F(CliTest, EveryCommandsHelpHasSynopsisExamplesAndMpiMode) {
  const RunResult list = Sedpack("--dump-options");
  ASSERT_EQ(list.code, 0) << list.err;
  for (const char* cmd : {"info", "ls", "check", "cat", "generate", "verify", "checksums", "fix", "index", "get",
                          "recompress", "digest", "stats", "pack", "unpack", "import-hdf5", "inspect-hdf5",
                          "export-hdf5"}) {
    const RunResult h = Sedpack(std::string("help ") + cmd);
    if (h.code == 4) continue;  // not built in (HDF5)
    ASSERT_EQ(h.code, 0) << cmd << ": " << h.err;
    EXPECT_EQ(h.out.rfind(std::string("Usage: sedpack ") + cmd + " ", 0), 0u) << h.out;
    EXPECT_NE(h.out.find("\nExamples:\n  sedpack "), std::string::npos) << cmd;
    EXPECT_NE(h.out.find("\nMPI: "), std::string::npos) << cmd;
    EXPECT_EQ(h.out.find("--action"), std::string::npos) << cmd;  // no internal names
    EXPECT_EQ(h.out.find("--files"), std::string::npos) << cmd;
    EXPECT_EQ(h.out, Sedpack(std::string(cmd) + " --help").out) << cmd;
  }
  EXPECT_EQ(Sedpack("help nosuch").code, 2);
  // The option table the completion and the man page are made from.
  for (const char* row : {"pack\t--out\t-o\t", "generate\t--out\t-o\t", "recompress\t--out\t-o\t",
                          "unpack\t--out\t-o\t", "stats\t--split\t-s\t", "stats\t--threads\t-j\t",
                          "stats\t--json\t\t[FILE]", "ls\t--json\t\t[FILE]", "info\t--json\t\t[FILE]",
                          "digest\t--json\t\t[FILE]", "fix\t--json\t\t[FILE]", "checksums\t--json\t\t[FILE]",
                          "verify\t--json\t\t[FILE]", "index\t--json\t\t[FILE]", "digest\t--progress\t\t[BOOL]",
                          "verify\t--quiet\t-q\t"}) {
    EXPECT_NE(list.out.find(std::string("\n") + row), std::string::npos) << row;
  }
  const RunResult completion = Sedpack("--dump-completion");
  EXPECT_NE(completion.out.find("complete -o filenames -F _sedpack sedpack"), std::string::npos);
  EXPECT_NE(completion.out.find("    stats) opts=\""), std::string::npos);
  const RunResult man = Sedpack("--dump-man");
  EXPECT_EQ(man.out.find(".TH SEDPACK 1"), man.out.find('\n') + 1) << man.out.substr(0, 200);
  EXPECT_NE(man.out.find(".SS stats"), std::string::npos);
}

TEST_F(CliTest, VersionListsTheFeatures) {
  const RunResult r = Sedpack("--version");
  ASSERT_EQ(r.code, 0);
  for (const char* f : {"\n  MPI ", "\n  HDF5 ", "\n  Python ", "\n  codecs   none, GZIP"}) {
    EXPECT_NE(r.out.find(f), std::string::npos) << f << "\n" << r.out;
  }
}

TEST_F(CliTest, NoPrefixGuessingAndDidYouMean) {
  const std::string root = SmallDataset();
  RunResult r = Sedpack("verify " + Quote(root) + " --dee");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("unknown option '--dee'; did you mean '--deep'?"), std::string::npos) << r.err;
  r = Sedpack("verfy " + Quote(root));
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("did you mean 'verify'?"), std::string::npos) << r.err;
  r = Sedpack("stats " + Quote(root) + " --splt train");
  EXPECT_NE(r.err.find("did you mean '--split'?"), std::string::npos) << r.err;
  r = Sedpack("index chek " + Quote(root));
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("did you mean 'check'?"), std::string::npos) << r.err;
  r = Sedpack("zzzzzz");
  EXPECT_EQ(r.err.find("did you mean"), std::string::npos) << r.err;
}

TEST_F(CliTest, CodecNamesAnyCaseNoneAndFitTheShardType) {
  const std::string root = SmallDataset();
  RunResult r = Sedpack("recompress " + Quote(root) + " --compression lz4 -o " + Quote(Path("lz4")) + " -q");
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_NE(Sedpack("info " + Quote(Path("lz4"))).out.find("compression         LZ4"), std::string::npos);
  r = Sedpack("recompress " + Quote(root) + " --compression None -o " + Quote(Path("none")));
  EXPECT_EQ(r.code, 0) << r.err;
  r = Sedpack("recompress " + Quote(root) + " --compression zip -o " + Quote(Path("zip")));
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("ZIP does not fit fb shards (they take: none, GZIP, ZLIB, BZ2, LZMA, LZ4, ZSTD)"),
            std::string::npos) << r.err;
  r = Sedpack("recompress " + Quote(root) + " --compression brotli -o " + Quote(Path("b")));
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("unknown codec \"brotli\""), std::string::npos) << r.err;
  r = Sedpack("generate " + Quote(std::string(SEDPACK_CONFIGS_DIR) + "/generate_small.json") + " -o " +
              Quote(Path("g")) + " --compression zstd --shard-file-type tfrec");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("tfrec shards (they take: none, GZIP, ZLIB)"), std::string::npos) << r.err;
}

TEST_F(CliTest, OldSpellingsWorkWithADeprecationNote) {
  const std::string root = SmallDataset();
  RunResult r = Sedpack("pack " + Quote(root) + " --output " + Quote(Path("a.pack")));
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("--output is deprecated, use --out"), std::string::npos) << r.err;
  r = Sedpack("unpack " + Quote(Path("a.pack")) + " " + Quote(Path("back")));  // OUT as an argument
  EXPECT_EQ(r.code, 0) << r.err;
  r = Sedpack("unpack " + Quote(Path("a.pack")) + " -o " + Quote(Path("back2")) + " -q");
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "");
  r = Sedpack("stats " + Quote(root) + " --split test");  // one --split, as before
  EXPECT_EQ(r.code, 0) << r.err;
}

TEST_F(CliTest, GenerateAppendRefusesTraceLengthAndNotesTheSeed) {
  const std::string root = SmallDataset();
  const std::string config = Quote(std::string(SEDPACK_CONFIGS_DIR) + "/generate_small.json");
  RunResult r = Sedpack("generate " + config + " -o " + Quote(root) + " --append --trace-length 300");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--trace-length 300 cannot be used with --append: the dataset's traces have 1000 samples"),
            std::string::npos) << r.err;
  r = Sedpack("generate " + config + " -o " + Quote(root) + " --append --examples-train 2 --examples-test 0 "
              "--examples-holdout 0 -q");
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("--append without --seed uses the config's seed"), std::string::npos) << r.err;
  r = Sedpack("generate " + config + " -o " + Quote(root) + " --append --seed 9 --examples-train 2 "
              "--examples-test 0 --examples-holdout 0 -q");
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.err.find("--seed"), std::string::npos) << r.err;
}

// The exit-code table, command by command and fault by fault.
TEST_F(CliTest, ExitCodesPerCommandAndFault) {
  const std::string good = SmallDataset();
  fs::copy(good, Path("corrupt"), fs::copy_options::recursive);
  fs::copy(good, Path("garbled"), fs::copy_options::recursive);
  std::ofstream(Path("garbled") + "/dataset_info.json") << "{\"metadata\": [";
  for (const auto& e : fs::recursive_directory_iterator(Path("corrupt") + "/train")) {
    if (e.path().extension() != ".fb") continue;
    std::fstream f(e.path(), std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(100);
    f << "garbage garbage garbage";
  }
  // Splits: only train.
  ASSERT_EQ(Sedpack("generate " + Quote(std::string(SEDPACK_CONFIGS_DIR) + "/generate_small.json") + " -o " +
                    Quote(Path("trainonly")) + " --examples-test 0 --examples-holdout 0 -q")
                .code,
            0);
  struct Case {
    std::string command;  // DATASET goes where @ is
    int corrupt, garbled, absent_split;
  };
  const std::string out = Quote(Path("out"));
  std::vector<Case> cases = {
      {"info @", 0, 1, -1},
      {"ls @ -s test", 0, 1, 2},
      {"cat @ -s train", 1, 1, -1},
      {"cat @ -s test", 0, 1, 2},
      {"get @ -s train -i 20", 1, 1, -1},
      {"get @ -s test -i 0", 0, 1, 2},
      {"stats @", 1, 1, -1},
      {"stats @ -s test", 0, 1, 2},
      {"digest @ --print", 1, 1, -1},
      {"verify @", 1, 1, -1},
      {"verify @ -s test", 0, 1, 2},
      {"checksums @", 0, 1, -1},
      {"fix @", 0, 1, -1},
      {"recompress @ --profile hot -o " + out, 1, 1, -1},
      {"index build @", 0, 1, -1},
      {"pack @ -o " + out, 0, 1, -1},
      {"generate " + Quote(std::string(SEDPACK_CONFIGS_DIR) + "/generate_small.json") + " -o @ --append --seed 3",
       0, 1, -1},
  };
#ifdef SEDPACK_HAVE_HDF5
  cases.push_back({"export-hdf5 @ -o " + out, 1, 1, -1});
  cases.push_back({"export-hdf5 @ -s test -o " + out, 0, 1, 2});
#endif
  auto run = [&](const std::string& command, const std::string& root, const std::string& redirect = "") {
    std::string c = command;
    c.replace(c.find('@'), 1, Quote(root));
    fs::remove_all(Path("out"));
    return Sedpack(c + redirect);
  };
  for (const Case& k : cases) {
    RunResult r = run(k.command, Path("corrupt"));
    EXPECT_EQ(r.code, k.corrupt) << k.command << " (corrupt shard): " << r.err;
    r = run(k.command, Path("garbled"));
    EXPECT_EQ(r.code, k.garbled) << k.command << " (garbled dataset_info.json): " << r.err;
    if (k.absent_split >= 0) {
      r = run(k.command, Path("trainonly"));
      EXPECT_EQ(r.code, k.absent_split) << k.command << " (absent split): " << r.err;
      EXPECT_NE(r.err.find("the dataset has no split test (it has train)"), std::string::npos) << r.err;
    }
    if (::access("/dev/full", W_OK) == 0 && k.corrupt != 0) {
      // A command whose output is lost did not succeed.
      const std::string c = k.command.find(" -s test") == std::string::npos ? k.command : "";
      if (!c.empty()) {
        const std::string cmd = "env " + Quote(SEDPACK_BIN) + " " +
                                [&] { std::string x = c; x.replace(x.find('@'), 1, Quote(good)); return x; }() +
                                " >/dev/full 2>/dev/null";
        fs::remove_all(Path("out"));
        const int status = std::system(cmd.c_str());
        EXPECT_EQ(WIFEXITED(status) ? WEXITSTATUS(status) : -1, 3) << c << " > /dev/full";
      }
    }
  }
  if (::access("/dev/full", W_OK) == 0) {
    for (const char* c : {"info", "ls", "checksums", "fix"}) {
      const std::string cmd = Quote(SEDPACK_BIN) + " " + c + " " + Quote(good) + " >/dev/full 2>/dev/null";
      const int status = std::system(cmd.c_str());
      EXPECT_EQ(WIFEXITED(status) ? WEXITSTATUS(status) : -1, 3) << c << " > /dev/full";
    }
  }
}

// --json on every reporting command: one object with a versioned schema name.
TEST_F(CliTest, JsonOnEveryReportingCommand) {
  const std::string root = SmallDataset();
  const std::vector<std::pair<std::string, std::string>> commands = {
      {"info", "info @ --json"},
      {"ls", "ls @ --json -s test"},
      {"verify", "verify @ --json -"},
      {"stats", "stats @ --json"},
      {"checksums", "checksums @ --json"},
      {"digest", "digest @ --print --json"},
      {"index-check", "index check @ --json"},
      {"fix", "fix @ --json"},
  };
  std::map<std::string, Json> docs;
  for (const auto& [name, command] : commands) {
    std::string c = command;
    c.replace(c.find('@'), 1, Quote(root));
    const RunResult r = Sedpack(c);
    EXPECT_TRUE(r.code == 0 || (name == "index-check" && r.code == 1)) << c << ": " << r.err;
    Json doc = Json::parse(r.out, nullptr, false);
    ASSERT_FALSE(doc.is_discarded()) << c << ": " << r.out;
    EXPECT_EQ(doc["schema"], "sedpack-hpc/" + name + "/1") << c;
    docs[name] = doc;
  }
  EXPECT_EQ(docs["info"]["splits"]["train"]["examples"], 64);
  EXPECT_EQ(docs["info"]["attributes"][0]["name"], "trace1");
  EXPECT_EQ(docs["info"]["checksums"][0]["algorithm"], "sha256");
  EXPECT_EQ(docs["info"]["checksums"], docs["checksums"]["checksums"]);
  ASSERT_EQ(docs["ls"]["shards"].size(), 2u);
  EXPECT_EQ(docs["ls"]["shards"][0]["split"], "test");
  EXPECT_EQ(docs["ls"]["shards"][0]["custom_metadata"]["key_index"], 0);
  EXPECT_EQ(docs["verify"]["ok"], true);
  EXPECT_EQ(docs["stats"]["splits"][0]["split"], "train");
  EXPECT_EQ(docs["stats"]["splits"][0]["attributes"][1]["name"], "key");
  EXPECT_TRUE(docs["stats"]["splits"][0]["attributes"][1]["max"].is_number_integer());
  EXPECT_EQ(docs["digest"]["shards"].size(), 7u);
  EXPECT_EQ(docs["digest"]["written"], false);
  EXPECT_EQ(docs["index-check"]["state"], "missing");
  EXPECT_EQ(docs["fix"]["orphans"], 0);
  // --json FILE: the file holds the JSON, standard output the text.
  const RunResult r = Sedpack("info " + Quote(root) + " --json=" + Quote(Path("info.json")));
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("structure"), std::string::npos);
  EXPECT_EQ(Json::parse(ReadText(Path("info.json"))), docs["info"]);
}

// docs/cli.md's per-command reference lists the job options each command's
// table has (--resumable, --no-journal, --restart, fix's --remove-abandoned-jobs,
// --no-progress, --json), under that command's heading.
TEST_F(CliTest, CommandReferenceListsTheJobOptions) {
  const RunResult list = Sedpack("--dump-options");
  ASSERT_EQ(list.code, 0) << list.err;
  const std::string doc = ReadText(std::string(SEDPACK_TESTS_DIR) + "/../docs/cli.md");
  ASSERT_FALSE(doc.empty());
  auto section = [&](const std::string& cmd) {
    const std::size_t start = doc.find("#### `sedpack " + cmd + "`");
    if (start == std::string::npos) return std::string();
    const std::size_t end = doc.find("\n#", start + 1);
    return doc.substr(start, end == std::string::npos ? std::string::npos : end - start);
  };
  std::istringstream rows(list.out);
  int checked = 0;
  for (std::string row; std::getline(rows, row);) {
    const std::size_t tab = row.find('\t');
    if (tab == std::string::npos) continue;
    const std::string cmd = row.substr(0, tab);
    const std::string name = row.substr(tab + 1, row.find('\t', tab + 1) - tab - 1);
    if (name != "--resumable" && name != "--no-journal" && name != "--restart" && name != "--remove-abandoned-jobs" &&
        name != "--no-progress" && name != "--json") {
      continue;
    }
    const std::string text = section(cmd);
    ASSERT_FALSE(text.empty()) << "no section for " << cmd;
    EXPECT_TRUE(text.find("- `" + name) != std::string::npos || text.find(", `" + name + "[=FILE]`") != std::string::npos)
        << cmd << " " << name;
    ++checked;
  }
  EXPECT_GT(checked, 30);
}

// recompress changes the root checksums: it prints the new ones in generate's
// form ("  dataset_info.json ALGO HEX"), equal to what `checksums` then prints,
// for the dataset in place and for a copy (-o).
TEST_F(CliTest, RecompressPrintsTheNewRootChecksums) {
  const std::string root = SmallDataset();
  for (const std::vector<std::string>& run :
       {std::vector<std::string>{root, root, "--compression ZSTD"}, {root, Path("copy"), "--compression GZIP -o " +
                                                                                           Quote(Path("copy"))}}) {
    const std::string before = Sedpack("checksums " + Quote(run[1])).out;
    const RunResult r = Sedpack("recompress " + Quote(run[0]) + " " + run[2]);
    ASSERT_EQ(r.code, 0) << r.err;
    const RunResult sums = Sedpack("checksums " + Quote(run[1]));
    ASSERT_EQ(sums.code, 0) << sums.err;
    EXPECT_NE(sums.out, before);
    std::istringstream lines(sums.out);
    int n = 0;
    for (std::string line; std::getline(lines, line); ++n) {
      EXPECT_NE(r.out.find("\n  dataset_info.json " + line + "\n"), std::string::npos) << line << "\n" << r.out;
    }
    EXPECT_EQ(n, 2) << sums.out;  // sha256, xxh64
  }
  // -q: nothing on standard output.
  const RunResult q = Sedpack("recompress " + Quote(root) + " --compression LZ4 -q");
  ASSERT_EQ(q.code, 0) << q.err;
  EXPECT_EQ(q.out, "");
}

// A bare --json before the dataset is a flag: `info --json DATASET` prints the
// dataset's JSON; it does not take DATASET as the file (a user report: "missing
// DATASET argument"). A file is --json=FILE; the old `--json F.json` still works
// with a deprecation note.
TEST_F(CliTest, BareJsonBeforeTheDatasetIsAFlag) {
  const std::string root = SmallDataset();
  for (const char* cmd : {"info", "verify", "ls", "checksums", "stats"}) {
    const RunResult r = Sedpack(std::string(cmd) + " --json " + Quote(root));
    ASSERT_EQ(r.code, 0) << cmd << ": " << r.err;
    const Json doc = Json::parse(r.out, nullptr, false);
    ASSERT_FALSE(doc.is_discarded()) << cmd << ": " << r.out;
    EXPECT_EQ(doc["schema"], std::string("sedpack-hpc/") + cmd + "/1") << cmd;
  }
  // Relative to the working directory too (no path separator in DATASET).
  RunResult r = Sedpack("info --json small", "-C " + Quote(tmp_.path()));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(Json::parse(r.out)["splits"]["train"]["examples"], 64);
  // --json=FILE writes the file; standard output keeps the text.
  r = Sedpack("verify --json=" + Quote(Path("v.json")) + " " + Quote(root));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("OK"), std::string::npos) << r.out;
  EXPECT_EQ(Json::parse(ReadText(Path("v.json")))["ok"], true);
  // The deprecated spelling: a name ending in .json that is not a folder.
  r = Sedpack("info " + Quote(root) + " --json " + Quote(Path("old.json")));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("--json FILE is deprecated"), std::string::npos) << r.err;
  EXPECT_EQ(Json::parse(ReadText(Path("old.json")))["splits"]["train"]["examples"], 64);
  // Any other argument after a bare --json is not its file.
  r = Sedpack("info " + Quote(root) + " --json " + Quote(Path("out.txt")));
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("too many arguments"), std::string::npos) << r.err;
}

TEST_F(CliTest, StatsPrintsExactIntegersAndAFiniteStd) {
  const std::string root = Path("wide");
  {
    DatasetStructure st;
    st.compression = Compression::kNone;
    st.saved_data_description = {{"big", "int32", {2}, {}}, {"huge", "float64", {}, {}}, {"u", "uint64", {}, {}}};
    auto ds = Dataset::Create(root, Metadata{}, st);
    ASSERT_TRUE(ds.ok()) << ds.status().ToString();
    FillerOptions fo;
    fo.concurrency = 1;
    auto f = Filler::Make(*ds, fo);
    ASSERT_TRUE(f.ok());
    for (int i = 0; i < 10; ++i) {
      const std::vector<std::int32_t> big = {57000164 - i, -57000164 + i};
      const double huge = i % 2 ? 1e300 : -1e300;
      const std::uint64_t u = 18446744073709551615ULL - static_cast<std::uint64_t>(i);
      std::vector<ValueView> v = {ValueView::Array(big, {2}), ValueView::Scalar(huge), ValueView::Scalar(u)};
      ASSERT_TRUE((*f)->WriteExample(Split::kTrain, v).ok());
    }
    ASSERT_TRUE((*f)->Finish().ok());
  }
  RunResult r = Sedpack("stats " + Quote(root));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find(" 57000164 "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(" -57000164 "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(" 18446744073709551615 "), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("inf"), std::string::npos) << r.out;
  r = Sedpack("stats " + Quote(root) + " --json");
  ASSERT_EQ(r.code, 0) << r.err;
  const Json a = Json::parse(r.out)["splits"][0]["attributes"];
  EXPECT_EQ(a[0]["max"].get<std::int64_t>(), 57000164);
  EXPECT_EQ(a[0]["min"].get<std::int64_t>(), -57000164);
  EXPECT_EQ(a[2]["max"].get<std::uint64_t>(), 18446744073709551615ULL);
  ASSERT_TRUE(a[1]["std"].is_number()) << a[1];
  EXPECT_NEAR(a[1]["std"].get<double>(), 1e300, 1e286);
  EXPECT_NEAR(a[1]["mean"].get<double>(), 0, 1e285);
}

TEST_F(CliTest, SerialCommandsRunOnRankZeroOnly) {
  const std::string root = SmallDataset();
  RunResult r = Sedpack("info " + Quote(root), "OMPI_COMM_WORLD_SIZE=2 OMPI_COMM_WORLD_RANK=1");
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "");
  r = Sedpack("info " + Quote(root), "OMPI_COMM_WORLD_SIZE=2 OMPI_COMM_WORLD_RANK=0");
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("dataset_info.json checksums"), std::string::npos);
  EXPECT_NE(r.err.find("a serial command; of the several MPI ranks only rank 0 runs it"), std::string::npos);
  r = Sedpack("unpack nothing.pack -o " + Quote(Path("u")), "OMPI_COMM_WORLD_SIZE=3 OMPI_COMM_WORLD_RANK=2");
  EXPECT_EQ(r.code, 0) << r.err;  // rank 2 does nothing (rank 0 reports the missing pack)
}

TEST_F(CliTest, VerifyPartialPathsInAnyFormAndStrict) {
  const std::string root = SmallDataset();
  const std::string rel = "train/shards_list.json";
  for (const std::string& p : {rel, root + "/" + rel, fs::relative(root + "/" + rel).string(),
                               "./" + fs::relative(root + "/" + rel).string()}) {
    const RunResult r = Sedpack("verify " + Quote(root) + " --partial " + Quote(p));
    EXPECT_EQ(r.code, 0) << p << ": " << r.err;
    EXPECT_NE(r.out.find(": OK"), std::string::npos) << p << ": " << r.out;
  }
  RunResult r = Sedpack("verify " + Quote(root) + " --partial /etc/passwd");
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("is not inside the dataset"), std::string::npos) << r.err;
  // An orphan file is a warning: exit 0, with --strict exit 1.
  std::ofstream(root + "/train/orphan.fb") << "x";
  r = Sedpack("verify " + Quote(root));
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("WARNING"), std::string::npos) << r.out;
  r = Sedpack("verify " + Quote(root) + " --strict");
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  // Final progress lines.
  r = Sedpack("verify " + Quote(root) + " --progress");
  EXPECT_NE(r.err.find("verify: done, "), std::string::npos) << r.err;
  r = Sedpack("stats " + Quote(root) + " --progress");
  EXPECT_NE(r.err.find("stats: train: 64 examples in 4 shards read in"), std::string::npos) << r.err;
  r = Sedpack("digest " + Quote(root) + " --print --progress");
  EXPECT_NE(r.err.find("digest: 7 shards decoded in"), std::string::npos) << r.err;
  r = Sedpack("pack " + Quote(root) + " -o " + Quote(Path("p.pack")) + " --progress");
  EXPECT_NE(r.err.find("pack: done, "), std::string::npos) << r.err;
}


#ifdef SEDPACK_HAVE_HDF5
// export-hdf5: h5py reads the values `cat` prints (every dtype family), the
// metadata rides along as attributes, and inspect-hdf5 --mapping + import-hdf5
// bring the numeric examples back.
TEST_F(CliTest, ExportHdf5ReadByH5pyEqualsCatAndRoundTrips) {
  if (std::system("/usr/bin/python3 -c 'import h5py' >/dev/null 2>&1") != 0) GTEST_SKIP() << "no h5py";
  const std::string root = Path("mixed");
  {
    DatasetStructure st;
    st.compression = Compression::kZstd;
    st.examples_per_shard = 4;
    st.saved_data_description = {{"trace", "float16", {3}, {}}, {"x", "float64", {2, 2}, {}},
                                 {"label", "int", {}, {}},     {"flag", "bool", {1}, {}},
                                 {"note", "str", {}, {}},       {"blob", "bytes", {}, {}}};
    st.saved_data_description[2].custom_metadata = *JsonValue::Parse(R"({"unit":"class"})");
    Metadata m;
    m.description = "export test";
    m.custom_metadata = *JsonValue::Parse(R"({"lab":"B"})");
    auto ds = Dataset::Create(root, m, st);
    ASSERT_TRUE(ds.ok()) << ds.status().ToString();
    FillerOptions fo;
    fo.concurrency = 1;
    auto f = Filler::Make(*ds, fo);
    ASSERT_TRUE(f.ok());
    for (int i = 0; i < 10; ++i) {
      const std::vector<std::uint16_t> trace = {static_cast<std::uint16_t>(0x3c00 + i), 0xbc00, 0x7bff};
      const std::vector<double> x = {i * 0.1, -1e300, 1.0 / 3, static_cast<double>(i)};
      const std::int64_t label = i - 5;
      const std::vector<std::uint8_t> flag = {static_cast<std::uint8_t>(i % 2)};
      const std::string note = "n\xc3\xa9" + std::to_string(i);
      const std::string blob = std::string("\0\x01\xff", 3) + std::to_string(i);
      std::vector<ValueView> v = {ValueView{DType::kFloat16, {3}, std::as_bytes(std::span(trace))},
                                  ValueView::Array(x, {2, 2}), ValueView::Int(label),
                                  ValueView{DType::kBool, {1}, std::as_bytes(std::span(flag))},
                                  ValueView::Str(note),
                                  ValueView{DType::kBytes, {}, std::as_bytes(std::span(blob.data(), blob.size()))}};
      ASSERT_TRUE((*f)->WriteExample(i < 7 ? Split::kTrain : Split::kTest, v).ok());
    }
    ASSERT_TRUE((*f)->Finish().ok());
  }
  RunResult r = Sedpack("export-hdf5 " + Quote(root) + " -o " + Quote(Path("m.h5")) + " --deflate 3 --progress");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("exported 10 examples of 2 splits"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("export-hdf5: 10/10 examples"), std::string::npos) << r.err;
  // It refuses to overwrite, and leaves no temporary file behind.
  r = Sedpack("export-hdf5 " + Quote(root) + " -o " + Quote(Path("m.h5")));
  EXPECT_EQ(r.code, 2) << r.err;
  for (const auto& e : fs::directory_iterator(tmp_.path())) {
    EXPECT_EQ(e.path().filename().string().find(".partial"), std::string::npos) << e.path();
  }
  for (const std::string split : {"train", "test"}) {
    const std::string dump_cmd = "/usr/bin/python3 " + Quote(std::string(SEDPACK_TESTS_DIR) + "/cli/h5_dump.py") +
                                 " " + Quote(Path("m.h5")) + " " + split + " > " + Quote(Path("dump.json"));
    ASSERT_EQ(std::system(dump_cmd.c_str()), 0);
    const Json dump = Json::parse(ReadText(Path("dump.json")));
    const RunResult cat = Sedpack("cat " + Quote(root) + " -s " + split);
    ASSERT_EQ(cat.code, 0) << cat.err;
    std::vector<Json> lines;
    std::istringstream in(cat.out);
    for (std::string line; std::getline(in, line);) lines.push_back(Json::parse(line));
    ASSERT_EQ(dump["examples"].size(), lines.size()) << split;
    EXPECT_EQ(dump["dtypes"]["trace"], "float16");
    EXPECT_EQ(dump["dtypes"]["x"], "float64");
    EXPECT_EQ(dump["dtypes"]["label"], "int64");
    EXPECT_EQ(dump["dtypes"]["flag"], "uint8");
    EXPECT_EQ(dump["dtypes"]["note"], "object");
    EXPECT_EQ(dump["chunks"]["x"][0], lines.size());
    for (std::size_t i = 0; i < lines.size(); ++i) {
      const Json& h = dump["examples"][i];
      const Json& c = lines[i];
      // Float16: cat prints the shortest decimal that rounds back to the half;
      // h5py gives the half's exact value: they round to the same float16.
      for (std::size_t k = 0; k < 3; ++k) {
        const double hv = h["trace"][k].get<double>(), cv = c["trace"][k].get<double>();
        EXPECT_NEAR(hv, cv, std::abs(hv) * 1e-3) << split << " " << i;
      }
      EXPECT_EQ(h["x"], c["x"]) << split << " " << i;
      EXPECT_EQ(h["label"], c["label"]);
      EXPECT_EQ(h["flag"][0].get<int>() != 0, c["flag"][0].get<bool>());
      EXPECT_EQ(h["note"], c["note"]);
      EXPECT_EQ(h["blob"], c["blob"]);
    }
    const std::size_t shards = split == "train" ? 2 : 1;
    EXPECT_EQ(dump["attrs"]["shard_examples"].size(), shards) << dump["attrs"];
    EXPECT_EQ(dump["attrs"]["shard_first_row"][shards - 1], split == "train" ? 4 : 0);
    EXPECT_EQ(dump["root"]["description"], "export test");
    EXPECT_EQ(Json::parse(dump["root"]["custom_metadata"].get<std::string>())["lab"], "B");
  }

  // Round trip of the numeric attributes through inspect-hdf5 --mapping and import-hdf5.
  const std::string numeric = Path("numeric");
  ASSERT_EQ(Sedpack("generate " + Quote(std::string(SEDPACK_CONFIGS_DIR) + "/generate_small.json") + " -o " +
                    Quote(numeric) + " -q")
                .code,
            0);
  r = Sedpack("export-hdf5 " + Quote(numeric) + " -o " + Quote(Path("n.h5")));
  ASSERT_EQ(r.code, 0) << r.err;
  r = Sedpack("inspect-hdf5 " + Quote(Path("n.h5")) + " --mapping");
  ASSERT_EQ(r.code, 0) << r.err;
  std::ofstream(Path("map.json")) << r.out;
  r = Sedpack("import-hdf5 -c " + Quote(Path("map.json")) + " " + Quote(Path("n.h5")) + " -o " + Quote(Path("back")) +
              " -q");
  ASSERT_EQ(r.code, 0) << r.err;
  for (const char* split : {"train", "test", "holdout"}) {
    const RunResult a = Sedpack("cat " + Quote(numeric) + " -s " + split);
    const RunResult b = Sedpack("cat " + Quote(Path("back")) + " -s " + split);
    ASSERT_EQ(a.code, 0);
    ASSERT_EQ(b.code, 0) << b.err;
    std::istringstream ia(a.out), ib(b.out);
    std::size_t n = 0;
    for (std::string la, lb; std::getline(ia, la);) {
      ASSERT_TRUE(static_cast<bool>(std::getline(ib, lb))) << split;
      EXPECT_EQ(Json::parse(la), Json::parse(lb)) << split << " example " << n;  // same values, any key order
      ++n;
    }
    EXPECT_GT(n, 0u);
  }
}
#endif  // SEDPACK_HAVE_HDF5

}  // namespace
}  // namespace sedpack
