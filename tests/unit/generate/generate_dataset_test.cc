// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "sedpack/check/check.h"
#include "sedpack/dataset/reader.h"
#include "sedpack/generate/generate.h"
#include "support/test_support.h"

namespace sedpack {
namespace {

GenerateConfig TestConfig() {
  GenerateConfig c = DefaultGenerateConfig();
  EXPECT_OK(SetTraceLength(&c, 600));
  c.structure.examples_per_shard = 10;
  c.structure.hash_checksum_algorithms = {HashAlgorithm::kSha256, HashAlgorithm::kXxh64};
  c.params.seed = 99;
  c.params.examples = {45, 12, 5};
  c.params.key_group_size = 8;
  return c;
}

// All examples of a split as raw bytes per attribute, in read order.
std::vector<std::vector<std::string>> ReadAll(const std::string& root, Split split) {
  std::vector<std::vector<std::string>> out;
  auto ds = Dataset::Open(root);
  EXPECT_OK(ds.status());
  if (!ds.ok()) return out;
  auto reader = ExampleReader::Make(*ds, split);
  EXPECT_OK(reader.status());
  if (!reader.ok()) return out;
  for (;;) {
    auto next = (*reader)->Next();
    EXPECT_OK(next.status());
    if (!next.ok() || !next->has_value()) break;
    std::vector<std::string> values;
    for (std::size_t j = 0; j < (*ds)->schema().size(); ++j) {
      const ValueView v = (**next).Get(j);
      values.emplace_back(reinterpret_cast<const char*>(v.data.data()), v.data.size());
    }
    out.push_back(std::move(values));
  }
  return out;
}

std::vector<std::string> Expected(const GenerateConfig& c, Split split, std::uint64_t i) {
  ExampleBuffers ex;
  EXPECT_OK(GenerateExample(c, split, i, &ex));
  std::vector<std::string> values;
  for (const ValueView& v : ex.Views()) {
    values.emplace_back(reinterpret_cast<const char*>(v.data.data()), v.data.size());
  }
  return values;
}

TEST(GenerateDatasetTest, ContentIndependentOfThreadCount) {
  testing::TempDir tmp;
  GenerateConfig c = TestConfig();
  std::vector<std::string> roots;
  for (int threads : {1, 3}) {
    c.params.threads = threads;
    const std::string root = tmp.path() + "/t" + std::to_string(threads);
    ASSERT_OK_AND_ASSIGN(GenerateSummary s, GenerateDataset(c, root));
    EXPECT_EQ(s.examples_total, 62u);
    EXPECT_EQ(s.bytes, 62u * (600 * 2 + 48));
    EXPECT_EQ(s.root_checksums.size(), 2u);
    ASSERT_OK_AND_ASSIGN(CheckReport report, CheckDataset(root));
    EXPECT_TRUE(report.ok());
    roots.push_back(root);
  }
  for (Split split : AllSplits()) {
    const auto a = ReadAll(roots[0], split), b = ReadAll(roots[1], split);
    ASSERT_EQ(a.size(), c.examples(split));
    EXPECT_EQ(a, b) << SplitName(split);
    for (std::uint64_t i = 0; i < a.size(); ++i) {
      EXPECT_EQ(a[i], Expected(c, split, i)) << SplitName(split) << " " << i;
    }
  }
}

TEST(GenerateDatasetTest, ShardByKey) {
  testing::TempDir tmp;
  GenerateConfig c = TestConfig();
  c.params.shard_by_key = true;
  c.params.examples = {45, 0, 0};
  ASSERT_OK(GenerateDataset(c, tmp.path() + "/d").status());
  ASSERT_OK_AND_ASSIGN(auto ds, Dataset::Open(tmp.path() + "/d"));
  ASSERT_OK_AND_ASSIGN(auto shards, ListShards(ds, Split::kTrain));
  // 45 examples in key groups of 8 -> 6 groups (5 full + 5 examples), one shard each.
  ASSERT_EQ(shards.size(), 6u);
  for (std::size_t g = 0; g < shards.size(); ++g) {
    EXPECT_EQ(shards[g].custom_metadata.text(), "{\"key_index\":" + std::to_string(g) + "}");
    EXPECT_EQ(shards[g].number_of_examples, g < 5 ? 8 : 5);
  }
}

TEST(GenerateDatasetTest, RangesGenerateSubsets) {
  testing::TempDir tmp;
  GenerateConfig c = TestConfig();
  c.params.threads = 2;
  // Two "ranks" fill disjoint ranges of one dataset; together they equal the whole.
  ASSERT_OK_AND_ASSIGN(auto ds, Dataset::Create(tmp.path() + "/d", c.metadata, c.structure));
  for (int part = 0; part < 2; ++part) {
    GenerateOptions o;
    o.ranges[0] = part == 0 ? IndexRange{0, 20} : IndexRange{20, 1000};
    o.ranges[1] = part == 0 ? IndexRange{0, 0} : IndexRange{};
    o.ranges[2] = part == 0 ? IndexRange{} : IndexRange{5, 5};
    o.filler.relative_path_from_split = "part" + std::to_string(part);
    ASSERT_OK_AND_ASSIGN(GenerateSummary s, GenerateIntoDataset(c, ds, o));
    EXPECT_EQ(s.examples[0], part == 0 ? 20u : 25u);
  }
  ASSERT_OK_AND_ASSIGN(CheckReport report, CheckDataset(tmp.path() + "/d"));
  EXPECT_TRUE(report.ok());
  for (Split split : AllSplits()) {
    const auto got = ReadAll(tmp.path() + "/d", split);
    ASSERT_EQ(got.size(), c.examples(split)) << SplitName(split);
    for (std::uint64_t i = 0; i < got.size(); ++i) EXPECT_EQ(got[i], Expected(c, split, i));
  }
}

TEST(GenerateDatasetTest, ProgressAndErrors) {
  testing::TempDir tmp;
  GenerateConfig c = TestConfig();
  GenerateOptions o;
  std::uint64_t last = 0;
  int calls = 0;
  bool finished = false;
  o.progress = [&](const GenerateProgress& p) {
    EXPECT_FALSE(finished) << "no call after the finished one";
    finished = p.finished;
    EXPECT_GE(p.examples_done, last);
    EXPECT_EQ(p.examples_total, 62u);
    last = p.examples_done;
    ++calls;
  };
  ASSERT_OK(GenerateDataset(c, tmp.path() + "/d", o).status());
  EXPECT_EQ(last, 62u);
  EXPECT_TRUE(finished);
  EXPECT_GE(calls, 2);
  EXPECT_STATUS(StatusCode::kAlreadyExists, "", GenerateDataset(c, tmp.path() + "/d"));
  c.params.key_group_size = 0;
  EXPECT_STATUS(StatusCode::kInvalidArgument, "key_group_size", GenerateDataset(c, tmp.path() + "/e"));
}

}  // namespace
}  // namespace sedpack
