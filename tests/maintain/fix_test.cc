// SPDX-License-Identifier: Apache-2.0
// DiagnoseDataset / CollectGarbage: what dead jobs leave behind is found, a dry
// run removes nothing, --apply removes exactly the leftovers, and nothing is
// removed while a path leads outside the root or a list cannot be read.
#include <gtest/gtest.h>

#include <algorithm>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include "sedpack/cancel.h"
#include "sedpack/comm/comm.h"
#include "sedpack/check/check.h"
#include "sedpack/dataset/dataset.h"
#include "sedpack/dataset/filler.h"
#include "sedpack/index/index.h"
#include "sedpack/io/pack.h"
#include "sedpack/maintain/fix.h"
#include "sedpack/maintain/recompress.h"
#include "support/test_support.h"

namespace sedpack {
namespace {

namespace fs = std::filesystem;

constexpr const char* kTempName = "update_1700000000.000000_0123456789abcdef0123456789abcdef_of_shards_list.json";

class FixTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = tmp_.path() + "/ds";
    DatasetStructure st;
    st.examples_per_shard = 4;
    st.hash_checksum_algorithms = {HashAlgorithm::kSha256};
    st.saved_data_description = {{"x", "int64", {2}, {}}};
    ASSERT_OK_AND_ASSIGN(auto ds, Dataset::Create(root_, Metadata{}, st));
    FillerOptions fo;
    fo.concurrency = 1;
    ASSERT_OK_AND_ASSIGN(auto filler, Filler::Make(ds, fo));
    for (std::int64_t i = 0; i < 10; ++i) {
      std::vector<std::int64_t> x = {i, -i};
      std::vector<ValueView> v = {ValueView::Array(x, {2})};
      ASSERT_OK(filler->WriteExample(i % 3 ? Split::kTrain : Split::kTest, v));
    }
    ASSERT_OK(filler->Finish());
  }

  void Write(const std::string& rel, const std::string& text = "x") {
    fs::create_directories(fs::path(root_ + "/" + rel).parent_path());
    std::ofstream(root_ + "/" + rel) << text;
  }

  // Every file under the root with its bytes.
  std::map<std::string, std::string> Snapshot() {
    std::map<std::string, std::string> out;
    for (const auto& e : fs::recursive_directory_iterator(root_)) {
      if (!e.is_regular_file()) continue;
      std::ifstream in(e.path(), std::ios::binary);
      out[fs::relative(e.path(), root_).string()] = std::string(std::istreambuf_iterator<char>(in), {});
    }
    return out;
  }

  // A dead job's shard, temporary files under a split, at the top and in the
  // sidecar folder, and an interrupted recompress.
  void MakeLeftovers() {
    Write("train/deadjob-r0/aa/0123.fb", "dead shard");
    Write(std::string("train/") + kTempName);
    Write(std::string(kTempName) + ".top");
    Write(std::string(".sedpack-hpc/") + kTempName);
    fs::create_directories(RecompressStagingPath(root_) + "/train");
  }

  // A list below train/ goes: its shards are listed nowhere now.
  void RemoveALeafList() {
  std::string leaf;
  for (const auto& e : fs::recursive_directory_iterator(root_ + "/train")) {
    if (e.path().filename() == "shards_list.json" && e.path().parent_path() != fs::path(root_ + "/train")) {
      leaf = e.path().string();
    }
  }
  ASSERT_FALSE(leaf.empty());
  fs::remove(leaf);
  }

  Result<DatasetDiagnosis> Diagnose() {
    SEDPACK_ASSIGN_OR_RETURN(auto ds, Dataset::Open(root_));
    return DiagnoseDataset(*ds);
  }

  testing::TempDir tmp_;
  std::string root_;
};

std::vector<std::string> Paths(const std::vector<Leftover>& leftovers, Leftover::Kind kind) {
  std::vector<std::string> out;
  for (const Leftover& l : leftovers) {
    if (l.kind == kind) out.push_back(l.path);
  }
  return out;
}

TEST_F(FixTest, CleanDatasetHasNothingToCollect) {
  ASSERT_OK_AND_ASSIGN(DatasetDiagnosis d, Diagnose());
  EXPECT_TRUE(d.leftovers.empty());
  EXPECT_TRUE(d.unsafe.empty());
  EXPECT_TRUE(d.unreadable.empty());
  EXPECT_OK(d.SafeToCollect());
  EXPECT_FALSE(d.index_needs_rebuild());
  EXPECT_EQ(d.content, ContentSidecarState::kAbsent);
}

TEST_F(FixTest, DiagnosisFindsEveryKindOfLeftover) {
  MakeLeftovers();
  ASSERT_OK_AND_ASSIGN(DatasetDiagnosis d, Diagnose());
  EXPECT_EQ(Paths(d.leftovers, Leftover::Kind::kOrphan), std::vector<std::string>{"train/deadjob-r0/aa/0123.fb"});
  EXPECT_EQ(Paths(d.leftovers, Leftover::Kind::kTemporary),
            (std::vector<std::string>{std::string("train/") + kTempName, std::string(kTempName) + ".top",
                                      std::string(".sedpack-hpc/") + kTempName}));
  EXPECT_EQ(Paths(d.leftovers, Leftover::Kind::kRecompress), std::vector<std::string>{RecompressStagingPath(root_)});
  EXPECT_EQ(d.leftovers.back().kind, Leftover::Kind::kRecompress);
  EXPECT_EQ(d.count(Leftover::Kind::kOrphan), 1u);
  EXPECT_EQ(d.count(Leftover::Kind::kTemporary), 3u);
  EXPECT_EQ(d.leftover_bytes(), std::string("dead shard").size() + 3);
  EXPECT_OK(d.SafeToCollect());
}

TEST_F(FixTest, DryRunListsAndRemovesNothing) {
  MakeLeftovers();
  const auto before = Snapshot();
  ASSERT_OK_AND_ASSIGN(GarbageReport r, CollectGarbage(root_, /*apply=*/false));
  EXPECT_FALSE(r.applied);
  ASSERT_EQ(r.outcomes.size(), 5u);
  EXPECT_EQ(r.outcomes.back().leftover.kind, Leftover::Kind::kRecompress);
  for (const GarbageOutcome& o : r.outcomes) {
    EXPECT_FALSE(o.removed) << o.leftover.path;
    EXPECT_OK(o.error);
  }
  EXPECT_EQ(r.failures(), 0u);
  EXPECT_EQ(Snapshot(), before);
  EXPECT_TRUE(fs::is_directory(RecompressStagingPath(root_)));
}

TEST_F(FixTest, ApplyRemovesExactlyTheLeftovers) {
  const auto clean = Snapshot();
  MakeLeftovers();
  ASSERT_OK_AND_ASSIGN(GarbageReport r, CollectGarbage(root_, /*apply=*/true));
  EXPECT_TRUE(r.applied);
  ASSERT_EQ(r.outcomes.size(), 5u);
  for (const GarbageOutcome& o : r.outcomes) {
    EXPECT_TRUE(o.removed) << o.leftover.path << ": " << o.error.ToString();
  }
  EXPECT_EQ(r.failures(), 0u);
  // The dead job's folders go with it; listed data and the sidecar folder stay.
  EXPECT_FALSE(fs::exists(root_ + "/train/deadjob-r0"));
  EXPECT_FALSE(fs::exists(RecompressStagingPath(root_)));
  EXPECT_TRUE(fs::is_directory(root_ + "/.sedpack-hpc"));
  EXPECT_EQ(Snapshot(), clean);
  ASSERT_OK_AND_ASSIGN(CheckReport check, CheckDataset(root_, {}));
  EXPECT_TRUE(check.problems.empty());
  ASSERT_OK_AND_ASSIGN(DatasetDiagnosis after, Diagnose());
  EXPECT_TRUE(after.leftovers.empty());
}

// The whole `fix` sequence: diagnose, rebuild the stale index, remove.
TEST_F(FixTest, FixDatasetRebuildsTheIndexAndRemovesTheLeftovers) {
  const auto clean = Snapshot();
  MakeLeftovers();
  {
    ASSERT_OK_AND_ASSIGN(auto ds, Dataset::Open(root_));
    ASSERT_OK(BuildIndexFile(ds).status());
  }
  Write(std::string(".sedpack-hpc/") + std::string(kIndexFileName), "not an index");
  ASSERT_OK_AND_ASSIGN(auto ds, Dataset::Open(root_));
  FixOptions options;
  options.rebuild_index = true;
  options.remove_leftovers = true;
  const FixResult r = FixDataset(ds, options);
  ASSERT_OK(r.status);
  EXPECT_EQ(r.failed_step, FixStep::kNone);
  EXPECT_FALSE(r.restamp);
  ASSERT_TRUE(r.diagnosis);
  EXPECT_TRUE(r.diagnosis->index_needs_rebuild());
  EXPECT_TRUE(r.index_rebuilt);
  EXPECT_FALSE(r.refused);
  ASSERT_TRUE(r.garbage);
  EXPECT_EQ(r.garbage->outcomes.size(), 5u);
  EXPECT_EQ(r.garbage->failures(), 0u);
  ASSERT_OK_AND_ASSIGN(IndexCheck index, CheckIndex(root_));
  EXPECT_EQ(index.freshness, IndexFreshness::kFresh);
  auto after = Snapshot();
  after.erase(std::string(".sedpack-hpc/") + std::string(kIndexFileName));
  EXPECT_EQ(after, clean);
}

// An unreadable list stops the sequence after the diagnosis: nothing is listed
// for removal, nothing removed.
TEST_F(FixTest, FixDatasetStopsAtAnUnreadableList) {
  MakeLeftovers();
  ASSERT_NO_FATAL_FAILURE(RemoveALeafList());
  const auto before = Snapshot();
  ASSERT_OK_AND_ASSIGN(auto ds, Dataset::Open(root_));
  FixOptions options;
  options.remove_leftovers = true;
  const FixResult r = FixDataset(ds, options);
  ASSERT_OK(r.status);
  EXPECT_TRUE(r.refused);
  ASSERT_TRUE(r.diagnosis);
  EXPECT_FALSE(r.diagnosis->unreadable.empty());
  EXPECT_FALSE(r.garbage);
  EXPECT_EQ(Snapshot(), before);
}

// A listed shard that is a symbolic link to a file outside the root: the
// diagnosis reports it and nothing at all is removed, not even the genuine orphan.
TEST_F(FixTest, UnsafePathBlocksRemoval) {
  MakeLeftovers();
  std::string shard;
  for (const auto& e : fs::recursive_directory_iterator(root_ + "/test")) {
    if (e.is_regular_file() && e.path().filename() != "shards_list.json") shard = e.path().string();
  }
  ASSERT_FALSE(shard.empty());
  const std::string outside = tmp_.path() + "/outside.fb";
  fs::rename(shard, outside);
  fs::create_symlink(outside, shard);
  ASSERT_OK_AND_ASSIGN(auto ds, Dataset::Open(root_));
  ASSERT_OK_AND_ASSIGN(DatasetDiagnosis d, DiagnoseDataset(*ds));
  ASSERT_FALSE(d.unsafe.empty());
  EXPECT_EQ(d.unsafe[0].kind, CheckProblem::Kind::kPathEscape);
  const Status safe = d.SafeToCollect();
  EXPECT_EQ(safe.code(), StatusCode::kInvalidArgument) << safe.ToString();
  EXPECT_EQ(safe.detail(), StatusDetail::kPathEscape) << safe.ToString();
  const auto before = Snapshot();
  auto r = CollectGarbage(*ds, d, /*apply=*/true);
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.status().detail(), StatusDetail::kPathEscape);
  EXPECT_EQ(Snapshot(), before);
  EXPECT_TRUE(fs::exists(outside));
  EXPECT_TRUE(fs::exists(root_ + "/train/deadjob-r0/aa/0123.fb"));
}

// A list that cannot be read: its shards look like orphans, so none is removed.
TEST_F(FixTest, UnreadableListBlocksRemovalOfOrphans) {
  ASSERT_OK_AND_ASSIGN(auto ds0, Dataset::Open(root_));
  ASSERT_NO_FATAL_FAILURE(RemoveALeafList());
  ASSERT_OK_AND_ASSIGN(auto ds, Dataset::Open(root_));
  ASSERT_OK_AND_ASSIGN(DatasetDiagnosis d, DiagnoseDataset(*ds));
  EXPECT_FALSE(d.unreadable.empty());
  EXPECT_GT(d.count(Leftover::Kind::kOrphan), 0u) << "the unlisted shards look like orphans";
  const Status safe = d.SafeToCollect();
  EXPECT_EQ(safe.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(safe.detail(), StatusDetail::kNone);
  const auto before = Snapshot();
  EXPECT_FALSE(CollectGarbage(*ds, d, /*apply=*/true).ok());
  EXPECT_EQ(Snapshot(), before);
}

// The tree may change between diagnosis and removal: a folder that became a
// link out is not removed through, and the other leftovers still are.
TEST_F(FixTest, RemovalRechecksThePathAndGoesOn) {
  MakeLeftovers();
  ASSERT_OK_AND_ASSIGN(auto ds, Dataset::Open(root_));
  ASSERT_OK_AND_ASSIGN(DatasetDiagnosis d, DiagnoseDataset(*ds));
  const std::string outside = tmp_.path() + "/elsewhere";
  fs::create_directories(outside + "/aa");
  std::ofstream(outside + "/aa/0123.fb") << "someone else's";
  fs::remove_all(root_ + "/train/deadjob-r0");
  fs::create_directory_symlink(outside, root_ + "/train/deadjob-r0");
  ASSERT_OK_AND_ASSIGN(GarbageReport r, CollectGarbage(*ds, d, /*apply=*/true));
  EXPECT_EQ(r.failures(), 1u);
  ASSERT_EQ(r.outcomes.size(), 5u);
  for (const GarbageOutcome& o : r.outcomes) {
    if (o.leftover.path == "train/deadjob-r0/aa/0123.fb") {
      EXPECT_FALSE(o.removed);
      EXPECT_EQ(o.error.detail(), StatusDetail::kOutsideRoot) << o.error.ToString();
    } else {
      EXPECT_TRUE(o.removed) << o.leftover.path << ": " << o.error.ToString();
    }
  }
  EXPECT_TRUE(fs::exists(outside + "/aa/0123.fb"));
}

TEST_F(FixTest, PackIsReadOnly) {
  const std::string pack = tmp_.path() + "/ds.pack";
  ASSERT_OK(PackTree(root_, pack).status());
  ASSERT_OK_AND_ASSIGN(auto ds, Dataset::Open(pack));
  ASSERT_OK_AND_ASSIGN(DatasetDiagnosis d, DiagnoseDataset(*ds));
  EXPECT_TRUE(d.packed);
  EXPECT_TRUE(d.leftovers.empty());
  ASSERT_OK_AND_ASSIGN(GarbageReport dry, CollectGarbage(*ds, d, /*apply=*/false));
  EXPECT_TRUE(dry.outcomes.empty());
  EXPECT_STATUS(StatusCode::kInvalidArgument, "read-only", CollectGarbage(*ds, d, /*apply=*/true));
}

// ---- Cancellation (sedpack/cancel.h): work stops and leaves nothing of its own ----

class CancelTest : public FixTest {
 protected:
  void TearDown() override { ResetCancellation(); }
};

TEST_F(CancelTest, FillerStopsAndWritesNoShard) {
  const auto before = Snapshot();
  {
    ASSERT_OK_AND_ASSIGN(auto ds, Dataset::Open(root_));
    FillerOptions fo;
    fo.concurrency = 2;
    ASSERT_OK_AND_ASSIGN(auto filler, Filler::Make(ds, fo));
    std::vector<std::int64_t> x = {1, 2};
    std::vector<ValueView> v = {ValueView::Array(x, {2})};
    ASSERT_OK(filler->WriteExample(Split::kTrain, v));
    RequestCancellation(SIGINT);
    EXPECT_STATUS(StatusCode::kCancelled, "interrupted (SIGINT)", filler->WriteExample(Split::kTrain, v));
    EXPECT_STATUS(StatusCode::kCancelled, "interrupted", filler->Finish());
  }
  EXPECT_EQ(Snapshot(), before);
}

TEST_F(CancelTest, IndexBuildWritesNoSidecar) {
  ASSERT_OK_AND_ASSIGN(auto ds, Dataset::Open(root_));
  RequestCancellation(SIGTERM);
  EXPECT_STATUS(StatusCode::kCancelled, "SIGTERM", BuildIndexFile(ds).status());
  EXPECT_FALSE(fs::exists(root_ + "/.sedpack-hpc/index.bin"));
  ResetCancellation();
  EXPECT_OK(BuildIndexFile(ds).status());
  EXPECT_TRUE(fs::exists(root_ + "/.sedpack-hpc/index.bin"));
}

TEST_F(CancelTest, GarbageCollectionStopsBeforeRemoving) {
  Write("train/deadjob-r0/aa/0123.fb");
  RequestCancellation(SIGINT);
  EXPECT_STATUS(StatusCode::kCancelled, "interrupted", CollectGarbage(root_, /*apply=*/true).status());
  EXPECT_TRUE(fs::exists(root_ + "/train/deadjob-r0/aa/0123.fb"));
  ResetCancellation();
  ASSERT_OK_AND_ASSIGN(GarbageReport r, CollectGarbage(root_, /*apply=*/true));
  EXPECT_FALSE(fs::exists(root_ + "/train/deadjob-r0"));
}

TEST_F(CancelTest, RecompressLeavesTheDatasetAndNoStaging) {
  const auto before = Snapshot();
  SerialComm comm;
  RecompressOptions o;
  o.compression = Compression::kZstd;
  o.threads = 1;
  RequestCancellation(SIGTERM);
  EXPECT_STATUS(StatusCode::kCancelled, "SIGTERM", Recompress(comm, root_, o).status());
  EXPECT_EQ(Snapshot(), before);
  EXPECT_FALSE(fs::exists(RecompressStagingPath(root_)));
  // Into a new folder: the folder is not created, or removed again.
  o.out = tmp_.path() + "/copy";
  EXPECT_STATUS(StatusCode::kCancelled, "SIGTERM", Recompress(comm, root_, o).status());
  EXPECT_FALSE(fs::exists(o.out));
  ResetCancellation();
  EXPECT_OK(Recompress(comm, root_, o).status());
  EXPECT_TRUE(fs::exists(o.out + "/dataset_info.json"));
}

}  // namespace
}  // namespace sedpack
