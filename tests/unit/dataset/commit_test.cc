// SPDX-License-Identifier: Apache-2.0
// The commit journal (dataset/commit.h): a hot journal puts the dataset back to
// its last completed commit when it is opened, and a journal with bad bytes is
// refused without touching anything. The crash test (tests/crash) kills real jobs;
// these cases build each on-disk state by hand.
#include <filesystem>
#include <fstream>
#include <sstream>

#include "sedpack/check/check.h"
#include "sedpack/dataset/commit.h"
#include "sedpack/dataset/dataset.h"
#include "sedpack/dataset/filler.h"
#include "sedpack/io/file.h"
#include "dataset/commit_internal.h"
#include "sidecar/sidecar_internal.h"
#include "support/test_support.h"
#include "sidecar/sidecar_files.h"
#include "dataset/commit_metadata.h"

namespace sedpack {
namespace {

using testing::CopyTree;
using testing::GoldenDir;
using testing::TempDir;

std::string Slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

void Put(const std::string& path, const std::string& text) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
}

std::string Sha(const std::string& text) {
  return DigestHex(Sha256Of(std::as_bytes(std::span<const char>(text.data(), text.size()))));
}

struct Entry {
  std::string path;
  std::optional<std::string> previous;
};

std::string Journal(const std::string& before, const std::string& after, const std::vector<Entry>& entries) {
  std::string j = "sedpack-hpc commit journal 1\nbefore " + before + "\nafter " + after + "\nfiles " +
                  std::to_string(entries.size()) + "\n";
  for (const Entry& e : entries) {
    j += e.path + "\n";
    j += e.previous ? std::to_string(e.previous->size()) + "\n" + *e.previous + "\n" : "absent\n";
  }
  return j;
}

class CommitJournalTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = tmp_.path() + "/ds";
    CopyTree(GoldenDir() + "/fb_none/dataset", root_);
    info_ = Slurp(root_ + "/dataset_info.json");
    list_ = Slurp(root_ + "/train/shards_list.json");
    journal_ = root_ + "/" + std::string(kCommitJournalPath);
  }
  bool Clean() {
    auto r = CheckDataset(root_, CheckOptions{});
    return r.ok() && r->ok() && r->problems.empty();
  }

  TempDir tmp_;
  std::string root_, info_, list_, journal_;
};

TEST_F(CommitJournalTest, HotJournalBeforeTheCommitPointIsRolledBackOnOpen) {
  // Died after replacing train/shards_list.json and adding a new sub-list, before
  // dataset_info.json: the dataset does not check until the journal is applied.
  Put(root_ + "/train/shards_list.json", "{\"half\": \"written\"}");
  Put(root_ + "/train/job-r0/shards_list.json", "{}");
  Put(journal_, Journal(Sha(info_), Sha("the new dataset_info.json"),
                        {{"train/job-r0/shards_list.json", std::nullopt}, {"train/shards_list.json", list_}}));
  auto ds = Dataset::Open(root_);
  ASSERT_TRUE(ds.ok()) << ds.status().ToString();
  EXPECT_EQ(Slurp(root_ + "/train/shards_list.json"), list_);
  EXPECT_FALSE(PathExists(root_ + "/train/job-r0/shards_list.json"));
  EXPECT_FALSE(PathExists(journal_));
  EXPECT_EQ(Slurp(root_ + "/dataset_info.json"), info_);
  EXPECT_TRUE(Clean());
}

TEST_F(CommitJournalTest, JournalAfterTheCommitPointIsOnlyDropped) {
  // dataset_info.json is already the new one: the lists on disk are the new ones
  // too and must stay.
  Put(journal_, Journal(Sha("the old dataset_info.json"), Sha(info_), {{"train/shards_list.json", "old"}}));
  auto recovered = RecoverInterruptedCommit(root_);
  ASSERT_TRUE(recovered.ok()) << recovered.status().ToString();
  EXPECT_TRUE(*recovered);
  EXPECT_EQ(Slurp(root_ + "/train/shards_list.json"), list_);
  EXPECT_FALSE(PathExists(journal_));
  EXPECT_TRUE(Clean());
  auto again = RecoverInterruptedCommit(root_);
  ASSERT_TRUE(again.ok());
  EXPECT_FALSE(*again);
}

TEST_F(CommitJournalTest, JournalForAnotherDatasetInfoIsRefusedAndNothingChanges) {
  const std::string text = Journal(Sha("a"), Sha("b"), {{"train/shards_list.json", "old"}});
  Put(journal_, text);
  auto ds = Dataset::Open(root_);
  ASSERT_FALSE(ds.ok());
  EXPECT_EQ(ds.status().code(), StatusCode::kCorruption);
  EXPECT_NE(ds.status().message().find("commit-journal"), std::string::npos) << ds.status().message();
  EXPECT_EQ(Slurp(root_ + "/train/shards_list.json"), list_);
  EXPECT_EQ(Slurp(journal_), text);
}

TEST_F(CommitJournalTest, TamperedJournalsAreRefusedWithoutTouchingFiles) {
  const std::string before = Sha(info_), after = Sha("x");
  const std::string good_entry = "train/shards_list.json\n3\nabc\n";
  const std::vector<std::string> bad = {
      "not a journal\n",
      Journal(before, after, {{"../outside/shards_list.json", "x"}}),
      Journal(before, after, {{"/etc/shards_list.json", "x"}}),
      Journal(before, after, {{"train/a/../../shards_list.json", "x"}}),
      Journal(before, after, {{"train/shard.fb", "x"}}),
      Journal(before, after, {{"dataset_info.json", "x"}}),
      "sedpack-hpc commit journal 1\nbefore " + before + "\nafter " + after + "\nfiles 1\n" +
          "train/shards_list.json\n999999999999\nabc\n",
      "sedpack-hpc commit journal 1\nbefore " + before + "\nafter " + after + "\nfiles 1\n" +
          "train/shards_list.json\n18446744073709551615\nabc\n",
      "sedpack-hpc commit journal 1\nbefore " + before + "\nafter " + after + "\nfiles 99999999999\n" + good_entry,
      "sedpack-hpc commit journal 1\nbefore " + before + "\nafter " + after + "\nfiles 1\n" + good_entry + "junk",
      "sedpack-hpc commit journal 1\nbefore short\nafter " + after + "\nfiles 0\n",
      "sedpack-hpc commit journal 1\nbefore " + before + "\nafter " + after + "\nfiles 2\n" + good_entry,
  };
  for (const std::string& text : bad) {
    Put(journal_, text);
    auto ds = Dataset::Open(root_);
    ASSERT_FALSE(ds.ok()) << text;
    EXPECT_NE(ds.status().message().find("commit-journal"), std::string::npos) << ds.status().message();
    EXPECT_EQ(Slurp(root_ + "/train/shards_list.json"), list_) << text;
    EXPECT_EQ(Slurp(journal_), text);
  }
}

TEST_F(CommitJournalTest, CommitMetadataLeavesNoJournalAndUndoesAFailedWrite) {
  // A successful commit: the list and dataset_info.json are replaced, no journal stays.
  MetadataWrite w{"train/shards_list.json", list_, list_};
  ASSERT_TRUE(CommitMetadata(root_, std::span<const MetadataWrite>(&w, 1), &info_).ok());
  EXPECT_FALSE(PathExists(journal_));
  EXPECT_TRUE(Clean());
  // A write that fails (its folder is a file) is undone: the first list is restored.
  Put(root_ + "/blocked", "a file where a folder should be");
  std::vector<MetadataWrite> ws = {{"train/shards_list.json", "{\"changed\": 1}", list_},
                                   {"blocked/shards_list.json", "{}", std::nullopt}};
  const std::string next = "{\"next\": true}";
  Status st = CommitMetadata(root_, ws, &next);
  EXPECT_FALSE(st.ok());
  EXPECT_EQ(Slurp(root_ + "/train/shards_list.json"), list_);
  EXPECT_EQ(Slurp(root_ + "/dataset_info.json"), info_);
  EXPECT_FALSE(PathExists(journal_));
  EXPECT_TRUE(Clean());
}

}  // namespace
}  // namespace sedpack

namespace sedpack {
namespace {

// Two writers that opened the dataset before either committed (each holds the
// dataset_info.json of then): each commit merges into what is on disk under
// the commit lock, so neither replaces the other's examples.
TEST(ConcurrentCommitTest, WritersOpenedTogetherBothLand) {
  TempDir tmp;
  const std::string root = tmp.path() + "/ds";
  DatasetStructure structure;
  Attribute a;
  a.name = "x";
  a.dtype = "int";
  a.shape = {};
  structure.saved_data_description = {a};
  structure.examples_per_shard = 4;
  structure.compression = Compression::kNone;
  structure.shard_file_type = ShardFileType::kFb;
  ASSERT_TRUE(Dataset::Create(root, Metadata{}, structure).ok());
  auto first = Dataset::Open(root);
  auto second = Dataset::Open(root);
  ASSERT_TRUE(first.ok() && second.ok());
  auto write = [&](std::shared_ptr<Dataset> ds, int n, std::int64_t base, bool with_test) {
    FillerOptions o;
    o.concurrency = 1;
    auto filler = Filler::Make(std::move(ds), o);
    ASSERT_TRUE(filler.ok()) << filler.status().ToString();
    for (int i = 0; i < n; ++i) {
      const std::int64_t v = base + i;
      const ValueView values[] = {ValueView::Int(v)};
      ASSERT_TRUE((*filler)->WriteExample(Split::kTrain, values).ok());
      if (with_test) {
        ASSERT_TRUE((*filler)->WriteExample(Split::kTest, values).ok());
      }
    }
    ASSERT_TRUE((*filler)->Finish().ok());
  };
  write(*first, 10, 0, true);
  // Opened before the first commit, so its dataset_info.json has no split yet:
  // merged into that, the first writer's test split would be lost.
  write(*second, 7, 100, false);
  EXPECT_EQ((*second)->info().FindSplit(Split::kTrain)->number_of_examples, 17);
  ASSERT_OK_AND_ASSIGN(auto reopened, Dataset::Open(root));
  ASSERT_NE(reopened->info().FindSplit(Split::kTrain), nullptr);
  ASSERT_NE(reopened->info().FindSplit(Split::kTest), nullptr) << "the first writer's test split was lost";
  EXPECT_EQ(reopened->info().FindSplit(Split::kTrain)->number_of_examples, 17);
  EXPECT_EQ(reopened->info().FindSplit(Split::kTest)->number_of_examples, 10);
  CheckOptions check;
  check.find_orphans = true;
  ASSERT_OK_AND_ASSIGN(CheckReport report, CheckDataset(root, check));
  EXPECT_TRUE(report.problems.empty()) << (report.problems.empty() ? "" : report.problems.front().message);
  // No lock is left behind.
  EXPECT_FALSE(std::filesystem::exists(root + "/" + std::string(kCommitLockPath)));
}

}  // namespace
}  // namespace sedpack
