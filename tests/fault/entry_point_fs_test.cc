// SPDX-License-Identifier: Apache-2.0
// A public entry point given a FileSystem does its I/O through that one: a
// counting FileSystem sees the dataset's bytes read, and one whose reads fail
// makes the entry point fail (or report the files it could not read). An entry
// point that opened its files some other way would pass neither.
#include <gtest/gtest.h>

#include <cerrno>
#include <cstdio>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "sedpack/check/check.h"
#include "sedpack/codecs/hash.h"
#include "sedpack/check/verify.h"
#include "sedpack/comm/comm.h"
#include "sedpack/dataset/dataset.h"
#include "sedpack/dataset/filler.h"
#include "sedpack/maintain/recompress.h"
#include "sedpack/mpi/distributed_index.h"
#include "support/fault_fs.h"
#include "support/test_support.h"

namespace sedpack {
namespace {

using testing::FaultFileSystem;
using testing::FaultOp;
using testing::TempDir;

// A dataset of 12 examples in 3 LZ4 shards on disk; its shard bytes.
std::uint64_t MakeDataset(const std::string& root) {
  DatasetStructure st;
  st.shard_file_type = ShardFileType::kFb;
  st.compression = Compression::kLz4;
  st.examples_per_shard = 4;
  st.hash_checksum_algorithms = {HashAlgorithm::kSha256};
  st.saved_data_description = {{"trace", "int16", {64}, {}}, {"label", "int64", {}, {}}};
  auto ds = Dataset::Create(root, Metadata{}, st);
  EXPECT_TRUE(ds.ok()) << ds.status().ToString();
  auto filler = Filler::Make(*ds, FillerOptions{});
  EXPECT_TRUE(filler.ok()) << filler.status().ToString();
  for (int i = 0; i < 12; ++i) {
    std::vector<std::int16_t> trace(64, static_cast<std::int16_t>(i));
    const std::int64_t label = i;
    std::vector<ValueView> v = {ValueView::Array(trace, {64}), ValueView::Scalar(label)};
    EXPECT_TRUE((*filler)->WriteExample(Split::kTrain, v).ok());
  }
  EXPECT_TRUE((*filler)->Finish().ok());
  std::uint64_t bytes = 0;
  for (const auto& e : std::filesystem::recursive_directory_iterator(root + "/train")) {
    if (e.is_regular_file() && e.path().extension() == ".fb") bytes += e.file_size();
  }
  return bytes;
}

class EntryPointFileSystemTest : public ::testing::TestWithParam<bool> {};

// VerifyDataset, whole (false) and partial (true): every rank opens the
// dataset through check.file_system (it once opened it through the global one).
TEST_P(EntryPointFileSystemTest, VerifyDatasetReadsThroughTheGivenFileSystem) {
  TempDir dir;
  const std::string root = dir.path() + "/ds";
  const std::uint64_t shard_bytes = MakeDataset(root);
  ASSERT_GT(shard_bytes, 0u);
  SerialComm comm;
  FaultFileSystem counting;
  VerifyOptions o;
  o.check.file_system = &counting;
  o.check.threads = 1;
  if (GetParam()) o.check.partial = {"train"};
  auto report = VerifyDataset(comm, root, o);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_TRUE(report->ok());
  EXPECT_GE(counting.bytes_read(), static_cast<std::int64_t>(shard_bytes));

  // Every read fails: nothing can be verified.
  FaultFileSystem failing(testing::FaultPlan{FaultOp::kRead, 1, EIO, /*sticky=*/true});
  o.check.file_system = &failing;
  auto broken = VerifyDataset(comm, root, o);
  EXPECT_TRUE(!broken.ok() || !broken->ok()) << "a check whose every read fails passed";
  EXPECT_TRUE(failing.fired());
}

INSTANTIATE_TEST_SUITE_P(WholeAndPartial, EntryPointFileSystemTest, ::testing::Bool());

TEST(EntryPointFileSystem, RecompressReadsThroughTheGivenFileSystem) {
  TempDir dir;
  const std::string root = dir.path() + "/ds";
  const std::uint64_t shard_bytes = MakeDataset(root);
  SerialComm comm;
  RecompressOptions o;
  o.compression = Compression::kZstd;
  o.threads = 1;
  // Every read fails: the job fails and the dataset is left as it was.
  FaultFileSystem failing(testing::FaultPlan{FaultOp::kRead, 1, EIO, /*sticky=*/true});
  o.file_system = &failing;
  EXPECT_FALSE(Recompress(comm, root, o).ok());
  EXPECT_TRUE(failing.fired());
  FaultFileSystem counting;
  o.file_system = &counting;
  auto summary = Recompress(comm, root, o);
  ASSERT_TRUE(summary.ok()) << summary.status().ToString();
  EXPECT_GE(counting.bytes_read(), static_cast<std::int64_t>(shard_bytes));
  auto ds = Dataset::Open(root);
  ASSERT_TRUE(ds.ok());
  EXPECT_EQ((*ds)->info().dataset_structure.compression, Compression::kZstd);
}

TEST(EntryPointFileSystem, BuildIndexDistributedReadsThroughTheGivenFileSystem) {
  TempDir dir;
  const std::string root = dir.path() + "/ds";
  MakeDataset(root);
  SerialComm comm;
  DistributedIndexOptions o;
  o.write = false;
  FaultFileSystem failing(testing::FaultPlan{FaultOp::kRead, 1, EIO, /*sticky=*/true});
  o.file_system = &failing;
  EXPECT_FALSE(BuildIndexDistributed(comm, root, o).ok());
  EXPECT_TRUE(failing.fired());
  FaultFileSystem counting;
  o.file_system = &counting;
  auto built = BuildIndexDistributed(comm, root, o);
  ASSERT_TRUE(built.ok()) << built.status().ToString();
  EXPECT_GT(counting.bytes_read(), 0);
  ASSERT_EQ(built->splits.size(), 1u);
  EXPECT_EQ(built->splits[0].shard_paths.size(), 3u);
}

TEST(EntryPointFileSystem, HashFileReadsThroughTheGivenFileSystem) {
  TempDir dir;
  const std::string path = dir.path() + "/f";
  {
    std::vector<char> bytes(100000, 'x');
    FILE* f = std::fopen(path.c_str(), "wb");
    ASSERT_NE(f, nullptr);
    ASSERT_EQ(std::fwrite(bytes.data(), 1, bytes.size(), f), bytes.size());
    std::fclose(f);
  }
  const std::vector<HashAlgorithm> algorithms = {HashAlgorithm::kSha256};
  FaultFileSystem counting;
  auto digests = HashFile(algorithms, path, &counting);
  ASSERT_TRUE(digests.ok()) << digests.status().ToString();
  EXPECT_EQ(counting.bytes_read(), 100000);
  FaultFileSystem failing(testing::FaultPlan{FaultOp::kRead, 1, EIO, /*sticky=*/true});
  EXPECT_FALSE(HashFile(algorithms, path, &failing).ok());
}

}  // namespace
}  // namespace sedpack
