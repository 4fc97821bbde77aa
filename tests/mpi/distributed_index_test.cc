// SPDX-License-Identifier: Apache-2.0
// The index built from the metadata across ranks is byte for byte the serial one.
// Runs on one rank (SerialComm) and under mpirun with 1, 2 and 4 ranks.
#include <filesystem>

#include "mpi/shared_dir.h"
#include "mpi/test_comm.h"
#include "sedpack/io/file.h"
#include "sedpack/mpi/distributed_index.h"
#include "sedpack/mpi/distributed_write.h"
#include "sidecar/sidecar_internal.h"
#include "support/test_support.h"
#include "index/index_internal.h"
#include "unit/index/index_test_util.h"

namespace sedpack {
namespace {

using testing::SharedDir;
using testing::TestComm;


std::vector<std::byte> SerialBytes(const std::string& root) {
  auto ds = Dataset::Open(root);
  EXPECT_TRUE(ds.ok()) << ds.status().ToString();
  if (!ds.ok()) return {};
  auto contents = BuildIndexContents(*ds);
  EXPECT_TRUE(contents.ok()) << contents.status().ToString();
  if (!contents.ok()) return {};
  return EncodeIndex(*contents).ValueOr({});
}

// A dataset whose every split has one subtree per rank (written by the
// parallel writer) plus, on rank 0, a second job's subtrees.
Status WriteRankTree(const std::string& root) {
  DistributedWriteOptions o;
  DatasetStructure s;
  Attribute x;
  x.name = "x";
  x.dtype = "int64";
  x.shape = {};
  s.saved_data_description = {x};
  s.compression = Compression::kLz4;
  s.examples_per_shard = 3;
  o.create_structure = s;
  o.filler.concurrency = 1;
  for (int job = 0; job < 2; ++job) {
    SEDPACK_ASSIGN_OR_RETURN(auto w, DistributedWriter::Open(TestComm(), root, o));
    const int n = 5 + 3 * TestComm().rank() + job;
    for (int k = 0; k < n; ++k) {
      const std::int64_t v = 100 * TestComm().rank() + k;
      const ValueView values[] = {ValueView::Int(v)};
      SEDPACK_RETURN_NOT_OK(w->WriteExample(k % 3 == 2 ? Split::kTest : Split::kTrain, values));
    }
    SEDPACK_RETURN_NOT_OK(w->Finish());
  }
  return Status::OK();
}

TEST(DistributedIndexTest, RankTreeGivesTheSerialBytes) {
  SharedDir dir;
  const std::string root = dir.path() + "/ds";
  ASSERT_OK(WriteRankTree(root));
  // A message of one record a round: the walks reach rank 0 in many rounds,
  // the ranks running out of records in different rounds.
  for (auto [per_rank, message_bytes] : {std::pair<int, std::size_t>{1, 0}, {4, 0}, {1, 1}, {4, 1}}) {
    DistributedIndexOptions o;
    o.subtrees_per_rank = per_rank;
    o.message_bytes = message_bytes;
    ASSERT_OK_AND_ASSIGN(IndexContents built, BuildIndexDistributed(TestComm(), root, o));
    if (TestComm().rank() != 0) {
      EXPECT_TRUE(built.splits.empty());
      continue;
    }
    const std::vector<std::byte> serial = SerialBytes(root);
    ASSERT_FALSE(serial.empty());
    ASSERT_OK_AND_ASSIGN(std::vector<std::byte> bytes, EncodeIndex(built));
    EXPECT_EQ(bytes, serial) << "subtrees_per_rank " << per_rank << ", message_bytes " << message_bytes;
    ASSERT_OK_AND_ASSIGN(std::vector<std::byte> file, ReadFileBytes(SidecarPath(root, kIndexFileName)));
    EXPECT_EQ(file, serial);
    ASSERT_OK_AND_ASSIGN(IndexCheck check, CheckIndex(root));
    EXPECT_EQ(check.freshness, IndexFreshness::kFresh);
    std::uint64_t train = 0;
    for (std::uint64_t n : built.splits[0].shard_examples) train += n;
    std::uint64_t want = 0;
    for (int r = 0; r < TestComm().size(); ++r) {
      for (int job = 0; job < 2; ++job) {
        const int n = 5 + 3 * r + job;
        for (int k = 0; k < n; ++k) want += k % 3 == 2 ? 0 : 1;
      }
    }
    EXPECT_EQ(train, want);
  }
}

TEST(DistributedIndexTest, NestedTreeAndGoldenDatasetsGiveTheSerialBytes) {
  SharedDir dir;
  std::vector<std::string> roots;
  if (TestComm().rank() == 0) {
    ASSERT_OK(testing::MakeTreeDataset(dir.path() + "/tree").status());
  }
  roots.push_back(dir.path() + "/tree");
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(testing::GoldenDir(), ec)) {
    if (std::filesystem::exists(e.path() / "dataset" / "dataset_info.json")) {
      roots.push_back((e.path() / "dataset").string());
    }
  }
  std::sort(roots.begin(), roots.end());
  ASSERT_GE(roots.size(), 13u);
  ASSERT_OK(TestComm().Barrier());
  for (const std::string& root : roots) {
    DistributedIndexOptions o;
    o.write = false;  // golden trees are read-only
    o.subtrees_per_rank = 1;
    ASSERT_OK_AND_ASSIGN(IndexContents built, BuildIndexDistributed(TestComm(), root, o));
    if (TestComm().rank() != 0) continue;
    ASSERT_OK_AND_ASSIGN(std::vector<std::byte> bytes, EncodeIndex(built));
    EXPECT_EQ(bytes, SerialBytes(root)) << root;
  }
  // Nothing was written into the golden trees (the tree made above has a sidecar
  // folder: its writer's commit lock).
  for (const std::string& root : roots) {
    if (root.rfind(dir.path(), 0) == 0) continue;
    EXPECT_FALSE(std::filesystem::exists(SidecarDir(root))) << root;
  }
}

TEST(DistributedIndexTest, ErrorsReachEveryRank) {
  SharedDir dir;
  auto missing = BuildIndexDistributed(TestComm(), dir.path() + "/none");
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound) << missing.status().ToString();
  // A child list that is not there: the walking rank's error is everyone's.
  const std::string root = dir.path() + "/broken";
  if (TestComm().rank() == 0) {
    ASSERT_OK(testing::MakeTreeDataset(root).status());
    std::filesystem::remove(root + "/train/a/b/shards_list.json");
  }
  ASSERT_OK(TestComm().Barrier());
  DistributedIndexOptions o;
  o.subtrees_per_rank = 1;
  auto broken = BuildIndexDistributed(TestComm(), root, o);
  EXPECT_EQ(broken.status().code(), StatusCode::kNotFound) << broken.status().ToString();
  EXPECT_NE(broken.status().message().find("train/a/b/shards_list.json"), std::string::npos)
      << broken.status().ToString();
}

}  // namespace
}  // namespace sedpack
