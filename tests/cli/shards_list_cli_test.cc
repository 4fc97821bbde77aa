// SPDX-License-Identifier: Apache-2.0
// A garbled shards_list.json (not JSON, or JSON of the wrong types) is a
// dataset problem: exit 1 from every command that reads it, whether its
// recorded hash still matches (the parse fails) or not (the hash check fails).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <fstream>
#include <string>
#include <vector>

#include "cli/tool_run.h"
#include "sedpack/codecs/hash.h"
#include "support/test_support.h"

namespace sedpack {
namespace {

using testing::Outcome;
using testing::RunTool;
using testing::Slurp;

class ShardsListCli : public ::testing::Test {
 protected:
  Outcome Tool(std::vector<std::string> args) { return RunTool(dir_.path(), std::move(args)); }

  // The small demo dataset with `text` as train/shards_list.json; with
  // `rehash`, dataset_info.json records the new file's sha256.
  std::string Garbled(const std::string& name, const std::string& text, bool rehash) {
    const std::string root = dir_.path() + "/" + name;
    const Outcome g = Tool({"generate", std::string(SEDPACK_CONFIGS_DIR) + "/generate_small.json", root, "-q",
                            "--hash-algorithms", "sha256"});
    EXPECT_EQ(g.code, 0) << g.err;
    std::ofstream(root + "/train/shards_list.json", std::ios::binary | std::ios::trunc) << text;
    if (rehash) {
      const HashAlgorithm sha256[] = {HashAlgorithm::kSha256};
      auto hashes = HashBytes(sha256, std::as_bytes(std::span<const char>(text.data(), text.size())));
      EXPECT_TRUE(hashes.ok());
      nlohmann::json info = nlohmann::json::parse(Slurp(root + "/dataset_info.json"));
      info["splits"]["train"]["shard_list_info_file"]["hash_checksums"] = *hashes;
      std::ofstream(root + "/dataset_info.json", std::ios::trunc) << info.dump(2);
    }
    return root;
  }

  testing::TempDir dir_;
};

TEST_F(ShardsListCli, GarbledListIsADatasetProblemInEveryCommand) {
  const std::vector<std::pair<std::string, std::string>> garbles = {
      {"not_json", R"({"relative_path_self": "train/shards_list.json", "shard_files": [)"},
      {"wrong_types", R"({"relative_path_self": "train/shards_list.json", "shard_files": 7, )"
                      R"("children_shard_lists": [], "number_of_examples": "many"})"},
  };
  int checked = 0;
  for (const auto& [name, text] : garbles) {
    for (bool rehash : {true, false}) {
      const std::string root = Garbled(name + (rehash ? "_rehashed" : ""), text, rehash);
      const std::vector<std::vector<std::string>> commands = {
          {"get", root, "-s", "train", "-i", "0"},
          {"get", root, "-s", "train", "-i", "0", "--no-verify"},
          {"cat", root, "-s", "train", "--limit", "1"},
          {"ls", root},
          {"stats", root},
          {"digest", root, "--print"},
          {"index", "build", root},
          {"check", root},
          {"export-trs", root, "-o", dir_.path() + "/" + name + ".trs"},
      };
      for (const auto& c : commands) {
        const Outcome r = Tool(c);
        std::string line;
        for (const std::string& a : c) line += a + " ";
        EXPECT_EQ(r.code, 1) << line << "\n" << r.err << r.out;
        EXPECT_NE((r.err + r.out).find("train/shards_list.json"), std::string::npos) << line << "\n" << r.err;
        ++checked;
      }
    }
  }
  EXPECT_EQ(checked, 36);
}

}  // namespace
}  // namespace sedpack
