// SPDX-License-Identifier: Apache-2.0
//
// Every metadata file written by the real Python sedpack must parse and
// re-serialize to the very same bytes (pydantic model_dump_json layout).
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "sedpack/metadata/models.h"
#include "sedpack/metadata/paths.h"
#include "support/test_support.h"
#include "metadata/shard_list_info_wire.h"

namespace sedpack {
namespace {

namespace fs = std::filesystem;

std::string ReadFile(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<fs::path> FixtureRoots() {
  std::vector<fs::path> roots;
  for (const auto& e : fs::directory_iterator(testing::GoldenDir())) {
    if (fs::is_regular_file(e.path() / "dataset" / "dataset_info.json")) {
      roots.push_back(e.path() / "dataset");
    }
  }
  return roots;
}

TEST(GoldenRoundTripTest, EveryMetadataFileIsByteIdentical) {
  const auto roots = FixtureRoots();
  ASSERT_GE(roots.size(), 12u) << "golden fixtures missing under " << testing::GoldenDir();
  int dataset_infos = 0;
  int shards_lists = 0;
  for (const fs::path& root : roots) {
    for (const auto& e : fs::recursive_directory_iterator(root)) {
      if (!e.is_regular_file()) continue;
      const std::string name = e.path().filename().string();
      const std::string rel = fs::relative(e.path(), root).generic_string();
      SCOPED_TRACE(e.path().string());
      if (name == "dataset_info.json") {
        const std::string text = ReadFile(e.path());
        ASSERT_OK_AND_ASSIGN(DatasetInfo info, ParseDatasetInfo(text, rel));
        EXPECT_EQ(SerializeDatasetInfo(info), text);
        EXPECT_OK(CheckSedpackVersion(info.metadata.sedpack_version));
        EXPECT_FALSE(info.splits.empty());
        ASSERT_OK(info.dataset_structure.Schema().status());
        ++dataset_infos;
      } else if (name == "shards_list.json") {
        const std::string text = ReadFile(e.path());
        ASSERT_OK_AND_ASSIGN(ShardsList list, ParseShardsList(text, rel));
        EXPECT_EQ(SerializeShardsList(list), text);
        // sedpack records each list's own location.
        EXPECT_EQ(list.relative_path_self, rel);
        for (const auto& child : list.children_shard_lists) {
          ASSERT_OK_AND_ASSIGN(ShardListInfo back,
                               ParseShardListInfo(SerializeShardListInfo(child), "mpi"));
          EXPECT_EQ(SerializeShardListInfo(back), SerializeShardListInfo(child));
        }
        ++shards_lists;
      }
    }
  }
  EXPECT_EQ(dataset_infos, static_cast<int>(roots.size()));
  EXPECT_GT(shards_lists, 100);
}

TEST(GoldenRoundTripTest, FbMinimalContent) {
  const fs::path root = fs::path(testing::GoldenDir()) / "fb_minimal" / "dataset";
  ASSERT_OK_AND_ASSIGN(DatasetInfo info,
                       ParseDatasetInfo(ReadFile(root / "dataset_info.json"), "dataset_info.json"));
  EXPECT_EQ(info.metadata.description, "minimal");
  EXPECT_EQ(info.metadata.sedpack_version, "0.0.7-dev");
  ASSERT_EQ(info.dataset_structure.saved_data_description.size(), 3u);
  EXPECT_EQ(info.dataset_structure.saved_data_description[0].name, "x");
  EXPECT_EQ(info.dataset_structure.saved_data_description[0].shape, Shape{2});
  EXPECT_EQ(info.dataset_structure.compression, Compression::kNone);
  EXPECT_EQ(info.dataset_structure.examples_per_shard, 4);
  EXPECT_EQ(info.dataset_structure.hash_checksum_algorithms,
            std::vector<HashAlgorithm>{HashAlgorithm::kSha256});
  const ShardListInfo* train = info.FindSplit(Split::kTrain);
  ASSERT_NE(train, nullptr);
  EXPECT_EQ(info.FindSplit(Split::kTest), nullptr);
  EXPECT_EQ(train->shard_list_info_file.file_path, "train/shards_list.json");
  EXPECT_EQ(train->number_of_examples, 2);
  EXPECT_EQ(train->number_of_shards, 1);
  ASSERT_OK_AND_ASSIGN(auto schema, info.dataset_structure.Schema());
  EXPECT_EQ(schema[0].dtype, DType::kFloat32);
  EXPECT_EQ(schema[1].dtype, DType::kStr);
  EXPECT_TRUE(schema[2].IsVariableSize());
}

TEST(GoldenRoundTripTest, CustomMetadataKeepsOrderAndTypes) {
  const fs::path root = fs::path(testing::GoldenDir()) / "fb_gzip" / "dataset";
  ASSERT_OK_AND_ASSIGN(DatasetInfo info,
                       ParseDatasetInfo(ReadFile(root / "dataset_info.json"), "dataset_info.json"));
  EXPECT_EQ(info.metadata.custom_metadata.text(),
            R"({"fixture":"fb_gzip","generator":"gen_golden.py",)"
            R"("nested":{"list":[1,2.5,"x"],"none":null,"flag":true}})");
  EXPECT_EQ(info.dataset_structure.saved_data_description[1].custom_metadata.text(),
            R"({"unit":"volt","scale":0.25})");
}

}  // namespace
}  // namespace sedpack
