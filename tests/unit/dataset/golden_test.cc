// SPDX-License-Identifier: Apache-2.0
// Every dataset written by the reference reads value for value and checks clean.
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "sedpack/check/check.h"
#include "sedpack/dataset/reader.h"
#include "support/test_support.h"

namespace sedpack {
namespace {

using nlohmann::json;
using testing::GoldenDir;
using testing::ToHex;

std::vector<std::string> Fixtures() {
  std::vector<std::string> out;
  std::error_code ec;
  if (!std::filesystem::is_directory(GoldenDir(), ec)) return out;
  for (const auto& e : std::filesystem::directory_iterator(GoldenDir())) {
    if (e.is_directory() && std::filesystem::exists(e.path() / "dataset" / "dataset_info.json")) {
      out.push_back(e.path().filename().string());
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

json LoadJson(const std::string& path) {
  std::ifstream in(path);
  return json::parse(in);
}

class GoldenTest : public ::testing::TestWithParam<std::string> {
 protected:
  std::string Dir() const { return GoldenDir() + "/" + GetParam(); }
};

TEST(GoldenFixturesTest, AllPresent) {
  // The suite is only meaningful if the fixtures are there.
  EXPECT_GE(Fixtures().size(), 12u) << "golden fixtures missing under " << GoldenDir();
}

TEST_P(GoldenTest, ReadsEveryValueExactly) {
  ASSERT_OK_AND_ASSIGN(std::shared_ptr<Dataset> ds, Dataset::Open(Dir() + "/dataset"));
  const json expected = LoadJson(Dir() + "/expected.json");
  std::vector<json> lines;
  if (std::filesystem::exists(Dir() + "/expected_examples.jsonl")) {
    std::ifstream in(Dir() + "/expected_examples.jsonl");
    std::string line;
    while (std::getline(in, line)) {
      if (!line.empty()) lines.push_back(json::parse(line));
    }
  } else {
    // fb_minimal keeps its two examples in expected.json.
    for (const auto& ex : expected["examples"]) {
      lines.push_back(json{{"split", "train"}, {"values", ex}});
    }
  }
  ASSERT_FALSE(lines.empty());
  std::size_t line = 0;
  for (const auto& [split, entry] : ds->info().splits) {
    ReadOptions opts;
    ASSERT_OK_AND_ASSIGN(auto reader, ExampleReader::Make(ds, split, opts));
    std::size_t count = 0;
    for (;;) {
      ASSERT_OK_AND_ASSIGN(std::optional<Example> ex, reader->Next());
      if (!ex) break;
      ASSERT_LT(line, lines.size());
      const json& want = lines[line++];
      ASSERT_EQ(want["split"], std::string(SplitName(split)));
      for (std::size_t j = 0; j < ds->schema().size(); ++j) {
        const std::string& name = ds->schema()[j].name;
        const ValueView v = ex->Get(j);
        EXPECT_EQ(ToHex(v.data.data(), v.data.size()), want["values"][name]["hex"].get<std::string>())
            << GetParam() << " split " << SplitName(split) << " example " << count << " attribute "
            << name;
      }
      ++count;
    }
    EXPECT_EQ(static_cast<std::int64_t>(count), entry.number_of_examples);
    if (expected.contains("splits")) {
      EXPECT_EQ(count, expected["splits"][std::string(SplitName(split))]["example_ids_in_read_order"].size());
    }
  }
  EXPECT_EQ(line, lines.size()) << "not every expected example was read";
}

TEST_P(GoldenTest, ChecksCleanAgainstRootChecksums) {
  const json expected = LoadJson(Dir() + "/expected.json");
  CheckOptions opts;
  opts.expected_root_checksums = expected["dataset_info_checksums"].get<std::vector<std::string>>();
  opts.deep = true;
  ASSERT_OK_AND_ASSIGN(CheckReport report, CheckDataset(Dir() + "/dataset", opts));
  for (const auto& p : report.problems) ADD_FAILURE() << p.path << ": " << p.message;
  EXPECT_GT(report.files_checked, 1u);
  EXPECT_GT(report.examples_checked, 0u);
}

TEST_P(GoldenTest, ShardListingMatchesExpected) {
  ASSERT_OK_AND_ASSIGN(std::shared_ptr<Dataset> ds, Dataset::Open(Dir() + "/dataset"));
  const json expected = LoadJson(Dir() + "/expected.json");
  if (!expected.contains("splits")) {
    // fb_minimal records its one shard as shard_file and the
    // examples in it, not as a per-split listing.
    ASSERT_EQ(ds->info().splits.size(), 1u);
    ASSERT_OK_AND_ASSIGN(auto shards, ListShards(ds, Split::kTrain));
    ASSERT_EQ(shards.size(), 1u);
    EXPECT_EQ(shards[0].file_infos[0].file_path, expected["shard_file"].get<std::string>());
    EXPECT_EQ(shards[0].number_of_examples, static_cast<std::int64_t>(expected["examples"].size()));
    return;
  }
  for (const auto& [split, entry] : ds->info().splits) {
    ASSERT_OK_AND_ASSIGN(auto shards, ListShards(ds, split));
    const json& want = expected["splits"][std::string(SplitName(split))]["shards"];
    ASSERT_EQ(shards.size(), want.size());
    for (std::size_t i = 0; i < shards.size(); ++i) {
      EXPECT_EQ(shards[i].file_infos[0].file_path, want[i]["file_path"].get<std::string>());
      EXPECT_EQ(shards[i].number_of_examples, want[i]["number_of_examples"].get<std::int64_t>());
      EXPECT_EQ(json::parse(shards[i].custom_metadata.text()), want[i]["custom_metadata"]);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Fixtures, GoldenTest, ::testing::ValuesIn(Fixtures()),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace sedpack
