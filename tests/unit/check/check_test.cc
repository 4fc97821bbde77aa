// SPDX-License-Identifier: Apache-2.0
// One test per kind of damage: each is found, reported with its path, and the
// check goes on to report every other problem too.
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "sedpack/check/check.h"
#include "sedpack/dataset/filler.h"
#include "sedpack/dataset/reader.h"
#include "sedpack/io/file.h"
#include "support/test_support.h"

namespace sedpack {
namespace {

using testing::CopyTree;
using testing::GoldenDir;
using testing::TempDir;

class CheckTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = tmp_.path() + "/ds";
    CopyTree(GoldenDir() + "/fb_none/dataset", root_);
    auto expected = nlohmann::json::parse(std::ifstream(GoldenDir() + "/fb_none/expected.json"));
    shard0_ = expected["splits"]["train"]["shards"][0]["file_path"].get<std::string>();
    shard1_ = expected["splits"]["train"]["shards"][1]["file_path"].get<std::string>();
    root_sums_ = expected["dataset_info_checksums"].get<std::vector<std::string>>();
  }
  CheckReport Check(bool deep = false) {
    CheckOptions o;
    o.deep = deep;
    o.expected_root_checksums = root_sums_;
    auto r = CheckDataset(root_, o);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? *r : CheckReport{};
  }
  static std::size_t Count(const CheckReport& r, CheckProblem::Kind kind, const std::string& path) {
    std::size_t n = 0;
    for (const auto& p : r.problems) n += (p.kind == kind && p.path == path) ? 1 : 0;
    return n;
  }
  void Append(const std::string& rel, const std::string& bytes) {
    std::ofstream(root_ + "/" + rel, std::ios::app | std::ios::binary) << bytes;
  }
  void FlipByte(const std::string& rel, std::size_t offset) {
    std::fstream f(root_ + "/" + rel, std::ios::in | std::ios::out | std::ios::binary);
    f.seekg(static_cast<std::streamoff>(offset));
    char c;
    f.get(c);
    f.seekp(static_cast<std::streamoff>(offset));
    f.put(static_cast<char>(c ^ 0x40));
  }

  TempDir tmp_;
  std::string root_, shard0_, shard1_;
  std::vector<std::string> root_sums_;
};

TEST_F(CheckTest, CleanCopyIsClean) {
  const CheckReport r = Check(true);
  EXPECT_TRUE(r.problems.empty());
  EXPECT_TRUE(r.ok());
}

TEST_F(CheckTest, AppendedByteToShardIsHashMismatchForEveryAlgorithm) {
  Append(shard0_, "x");
  const CheckReport r = Check();
  EXPECT_FALSE(r.ok());
  // fb_none records six algorithms; each one differs.
  EXPECT_EQ(Count(r, CheckProblem::Kind::kHashMismatch, shard0_), 6u);
}

TEST_F(CheckTest, ReportsEveryDamagedFileNotOnlyTheFirst) {
  FlipByte(shard0_, 100);
  std::filesystem::remove(root_ + "/" + shard1_);
  const CheckReport r = Check();
  EXPECT_GE(Count(r, CheckProblem::Kind::kHashMismatch, shard0_), 1u);
  EXPECT_EQ(Count(r, CheckProblem::Kind::kMissingFile, shard1_), 1u);
}

TEST_F(CheckTest, FlippedShardFailsDeepDecodeOrHash) {
  FlipByte(shard0_, 20);
  const CheckReport r = Check(true);
  EXPECT_FALSE(r.ok());
  EXPECT_GE(Count(r, CheckProblem::Kind::kHashMismatch, shard0_), 1u);
}

TEST_F(CheckTest, ModifiedShardsListIsMismatch) {
  Append("train/shards_list.json", "\n");
  const CheckReport r = Check();
  EXPECT_GE(Count(r, CheckProblem::Kind::kHashMismatch, "train/shards_list.json"), 1u);
}

TEST_F(CheckTest, RewrittenDatasetInfoIsDetectedByExpectedRoot) {
  Append("dataset_info.json", " ");
  const CheckReport r = Check();
  EXPECT_GE(Count(r, CheckProblem::Kind::kHashMismatch, "dataset_info.json"), 1u);
}

TEST_F(CheckTest, OrphanIsOnlyAWarning) {
  std::ofstream(root_ + "/train/stray.fb") << "junk";
  const CheckReport r = Check();
  EXPECT_TRUE(r.ok());
  EXPECT_EQ(Count(r, CheckProblem::Kind::kOrphan, "train/stray.fb"), 1u);
}

TEST_F(CheckTest, LargeListIsOnlyAWarning) {
  // The golden leaf list of train holds five shards; lower the bounds so that it
  // counts as large, once by entries and once by bytes.
  const std::string leaf = "train/afc951b7ff/9254bea686/a604443be5/shards_list.json";
  ASSERT_OK_AND_ASSIGN(std::uint64_t leaf_bytes, FileSize(root_ + "/" + leaf));
  for (int by_bytes = 0; by_bytes < 2; ++by_bytes) {
    SCOPED_TRACE(by_bytes);
    CheckOptions o;
    o.expected_root_checksums = root_sums_;
    if (by_bytes) {
      o.large_list_bytes = leaf_bytes - 1;
    } else {
      o.large_list_entries = 1;
    }
    ASSERT_OK_AND_ASSIGN(CheckReport r, CheckDataset(root_, o));
    EXPECT_TRUE(r.ok());
    ASSERT_EQ(Count(r, CheckProblem::Kind::kLargeList, leaf), 1u);
    for (const CheckProblem& p : r.problems) {
      if (p.path != leaf) continue;
      EXPECT_TRUE(p.warning());
      EXPECT_NE(p.message.find(std::to_string(leaf_bytes) + " bytes"), std::string::npos) << p.message;
      EXPECT_NE(p.message.find("5 entries"), std::string::npos) << p.message;
      EXPECT_NE(p.message.find("parse it whole"), std::string::npos) << p.message;
    }
    EXPECT_EQ(CheckProblemKindName(CheckProblem::Kind::kLargeList), "large_list");
  }
  // At the default bounds nothing in the golden dataset is large.
  const CheckReport r = Check();
  for (const CheckProblem& p : r.problems) EXPECT_NE(p.kind, CheckProblem::Kind::kLargeList) << p.path;
}

TEST_F(CheckTest, TraversalPathInListIsReported) {
  // Rewrite a leaf list so that a shard points outside the dataset.
  ASSERT_OK_AND_ASSIGN(auto ds, Dataset::Open(root_));
  ASSERT_OK_AND_ASSIGN(auto shards, ListShards(ds, Split::kTest));
  const std::string leaf = shards[0].file_infos[0].file_path.substr(
                               0, shards[0].file_infos[0].file_path.rfind('/')) + "/shards_list.json";
  ASSERT_OK_AND_ASSIGN(std::string text, ReadFileText(root_ + "/" + leaf));
  const std::string& victim = shards[0].file_infos[0].file_path;
  text.replace(text.find(victim), victim.size(), "test/../../etc/passwd");
  ASSERT_OK(WriteFileAtomic(root_ + "/" + leaf, text));
  const CheckReport r = Check();
  EXPECT_FALSE(r.ok());
  EXPECT_GE(Count(r, CheckProblem::Kind::kPathEscape, leaf), 1u);
  EXPECT_GE(Count(r, CheckProblem::Kind::kHashMismatch, leaf), 1u);
}

TEST_F(CheckTest, CorruptJsonIsMalformedNotACrash) {
  ASSERT_OK(WriteFileAtomic(root_ + "/test/shards_list.json", std::string("{\"relative_path_self\": ")));
  const CheckReport r = Check();
  EXPECT_GE(Count(r, CheckProblem::Kind::kMalformed, "test/shards_list.json"), 1u);
}

TEST_F(CheckTest, WrongCountsAreReported) {
  ASSERT_OK_AND_ASSIGN(std::string text, ReadFileText(root_ + "/dataset_info.json"));
  const std::string from = "\"number_of_examples\": 17";
  ASSERT_NE(text.find(from), std::string::npos);
  text.replace(text.find(from), from.size(), "\"number_of_examples\": 18");
  ASSERT_OK(WriteFileAtomic(root_ + "/dataset_info.json", text));
  CheckOptions o;  // no expected root: the rewritten file is accepted as root
  ASSERT_OK_AND_ASSIGN(CheckReport r, CheckDataset(root_, o));
  EXPECT_GE(Count(r, CheckProblem::Kind::kCountMismatch, "train/shards_list.json"), 1u);
}

TEST_F(CheckTest, CycleInListTreeIsReportedNotFollowed) {
  // train/shards_list.json names itself as a child: a walker without a guard loops forever.
  ASSERT_OK_AND_ASSIGN(std::string text, ReadFileText(root_ + "/train/shards_list.json"));
  auto j = nlohmann::json::parse(text);
  j["children_shard_lists"].push_back(
      {{"shard_list_info_file", {{"file_path", "train/shards_list.json"}}}, {"number_of_examples", 1}});
  ASSERT_OK(WriteFileAtomic(root_ + "/train/shards_list.json", j.dump(2)));
  const CheckReport r = Check();
  EXPECT_GE(Count(r, CheckProblem::Kind::kMalformed, "train/shards_list.json"), 1u);
  ASSERT_OK_AND_ASSIGN(auto ds, Dataset::Open(root_));
  EXPECT_STATUS(StatusCode::kCorruption, "more than once", ListShards(ds, Split::kTrain));
}

TEST_F(CheckTest, HugeCountsAreRejectedAsMalformed) {
  ASSERT_OK_AND_ASSIGN(std::string text, ReadFileText(root_ + "/test/shards_list.json"));
  auto j = nlohmann::json::parse(text);
  j["number_of_examples"] = 9223372036854775807LL;
  ASSERT_OK(WriteFileAtomic(root_ + "/test/shards_list.json", j.dump(2)));
  const CheckReport r = Check();
  EXPECT_GE(Count(r, CheckProblem::Kind::kMalformed, "test/shards_list.json"), 1u);
}

TEST_F(CheckTest, DeepNestingStopsWithAnError) {
  // A chain of 100 lists, each the only child of the one above it.
  std::string dir = "holdout";
  std::vector<std::string> paths;
  for (int i = 0; i < 100; ++i) {
    paths.push_back(dir + "/shards_list.json");
    dir += "/d";
  }
  for (std::size_t i = 0; i < paths.size(); ++i) {
    nlohmann::json j = {{"relative_path_self", paths[i]}};
    if (i + 1 < paths.size()) {
      j["children_shard_lists"] = {{{"shard_list_info_file", {{"file_path", paths[i + 1]}}}}};
    }
    ASSERT_OK(WriteFileAtomic(root_ + "/" + paths[i], j.dump(2)));
  }
  const CheckReport r = Check();
  EXPECT_FALSE(r.ok());
  bool deep = false;
  for (const auto& p : r.problems) deep = deep || p.message.find("deeper than") != std::string::npos;
  EXPECT_TRUE(deep);
  ASSERT_OK_AND_ASSIGN(auto ds, Dataset::Open(root_));
  EXPECT_STATUS(StatusCode::kCorruption, "deeper than", ListShards(ds, Split::kHoldout));
}

TEST(TfrecCheckTest, DeepCheckFindsTheCorruptRecord) {
  // Without hashes a damaged shard passes the hash stage, so only the deep
  // decode, which checks every record's CRCs, can find the damage.
  TempDir tmp;
  const std::string root = tmp.path() + "/ds";
  DatasetStructure s;
  Attribute key;
  key.name = "key";
  key.dtype = "uint8";
  key.shape = {16};
  s.saved_data_description = {key};
  s.shard_file_type = ShardFileType::kTfrec;
  s.compression = Compression::kNone;
  s.examples_per_shard = 3;
  s.hash_checksum_algorithms = {};
  ASSERT_OK_AND_ASSIGN(auto ds, Dataset::Create(root, Metadata{}, s));
  ASSERT_OK_AND_ASSIGN(auto filler, Filler::Make(ds));
  for (int k = 0; k < 6; ++k) {
    std::vector<std::uint8_t> v(16, static_cast<std::uint8_t>(k));
    const ValueView views[] = {ValueView::Array(v, {16})};
    ASSERT_OK(filler->WriteExample(Split::kTrain, views));
  }
  ASSERT_OK(filler->Finish());
  ASSERT_OK_AND_ASSIGN(auto shards, ListShards(ds, Split::kTrain));
  ASSERT_EQ(shards.size(), 2u);
  const std::string rel = shards[1].file_infos[0].file_path;
  CheckOptions o;
  o.deep = true;
  ASSERT_OK_AND_ASSIGN(CheckReport clean, CheckDataset(root, o));
  EXPECT_TRUE(clean.ok());
  EXPECT_EQ(clean.examples_checked, 6u);

  // Every record has the same size; damage the payload of the third one.
  const auto size = std::filesystem::file_size(root + "/" + rel);
  const std::size_t record = size / 3;
  {
    std::fstream f(root + "/" + rel, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(2 * record + 20));
    f.put('\x7f');
  }
  ASSERT_OK_AND_ASSIGN(CheckReport report, CheckDataset(root, o));
  ASSERT_EQ(report.error_count(), 1u);
  const CheckProblem& p = report.problems[0];
  EXPECT_EQ(p.kind, CheckProblem::Kind::kMalformed);
  EXPECT_EQ(p.path, rel);
  EXPECT_NE(p.message.find(rel + ": record 2 (at byte " + std::to_string(2 * record) +
                           "): CRC mismatch"),
            std::string::npos)
      << p.message;
  // Reading stops with the same error.
  ASSERT_OK_AND_ASSIGN(auto reader, ExampleReader::Make(ds, Split::kTrain));
  Status st;
  for (;;) {
    auto ex = reader->Next();
    if (!ex.ok()) {
      st = ex.status();
      break;
    }
    if (!*ex) break;
  }
  EXPECT_STATUS(StatusCode::kCorruption, "record 2", st);
}

TEST_F(CheckTest, UnreadableRootIsAnErrorStatus) {
  std::filesystem::remove(root_ + "/dataset_info.json");
  EXPECT_STATUS(StatusCode::kNotFound, "dataset_info.json", CheckDataset(root_, {}));
}

}  // namespace
}  // namespace sedpack
