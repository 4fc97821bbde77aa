// SPDX-License-Identifier: Apache-2.0
// The checks sidecar of a parallel job: rank 0 records every rank's shards
// after the commit (appends keep the earlier jobs' records), and a deep
// verify over the ranks of a dataset without one records the same from the
// shards it checked.
#include <filesystem>

#include "codecs/decode_points_internal.h"
#include "mpi/shared_dir.h"
#include "mpi/test_comm.h"
#include "sedpack/check/verify.h"
#include "sedpack/dataset/reader.h"
#include "sedpack/io/file.h"
#include "sedpack/mpi/distributed_write.h"
#include "sidecar/checks_internal.h"
#include "sidecar/sidecar_files.h"
#include "support/test_support.h"

namespace sedpack {
namespace {

using testing::SharedDir;
using testing::TestComm;

DistributedWriteOptions ChecksOptions() {
  DistributedWriteOptions o;
  DatasetStructure s;
  Attribute x;
  x.name = "x";
  x.dtype = "int64";
  x.shape = {2};
  Attribute t;
  t.name = "tag";
  t.dtype = "str";
  t.shape = {};
  s.saved_data_description = {x, t};
  s.compression = Compression::kZstd;
  s.examples_per_shard = 3;
  o.create_structure = s;
  o.filler.concurrency = 1;
  return o;
}

// The sidecar of `root` (fresh), its records by path, checked against every
// listed shard file: stored size and fast checksum, one record per shard.
std::vector<sidecar_internal::ShardChecks> ExpectSidecarCoversEveryShard(const std::string& root) {
  std::vector<sidecar_internal::ShardChecks> out;
  auto checks = sidecar_internal::LoadFreshChecks(root, nullptr);
  EXPECT_NE(checks, nullptr);
  if (!checks) return out;
  auto ds = Dataset::Open(root);
  EXPECT_TRUE(ds.ok());
  auto shards = ListShards(*ds, Split::kTrain);
  EXPECT_TRUE(shards.ok());
  EXPECT_EQ(checks->size(), shards->size());
  for (const ShardInfo& info : *shards) {
    const std::string& rel = info.file_infos[0].file_path;
    const auto* record = checks->Find(rel);
    EXPECT_NE(record, nullptr) << rel;
    if (!record) continue;
    auto bytes = ReadFileBytes(root + "/" + rel);
    EXPECT_TRUE(bytes.ok());
    EXPECT_EQ(record->stored_size(), bytes->size());
    EXPECT_EQ(record->stored_checksum(), codecs_internal::FastChecksum(*bytes));
    EXPECT_EQ(record->num_examples(), static_cast<std::size_t>(info.number_of_examples));
    out.push_back(record->ToChecks());
  }
  return out;
}

TEST(DistributedChecksTest, RankZeroRecordsEveryRanksShardsAndAppendsKeepThem) {
  SharedDir dir;
  const int rank = TestComm().rank(), size = TestComm().size();
  for (int job = 0; job < 2; ++job) {
    ASSERT_OK_AND_ASSIGN(auto w, DistributedWriter::Open(TestComm(), dir.path(), ChecksOptions()));
    for (std::int64_t k = 20 * job + rank; k < 20 * (job + 1); k += size) {
      std::vector<std::int64_t> x = {k, k * k};
      const std::string tag = "k" + std::to_string(k);
      std::vector<ValueView> v = {ValueView::Array(x, {2}), ValueView::Str(tag)};
      ASSERT_OK(w->WriteExample(Split::kTrain, v));
    }
    ASSERT_OK(w->Finish());
  }
  std::vector<sidecar_internal::ShardChecks> written;
  if (rank == 0) {
    written = ExpectSidecarCoversEveryShard(dir.path());
    EXPECT_GE(written.size(), 14u);  // 40 examples in shards of 3 or fewer
    // Without a sidecar, a deep verify over the ranks records the same.
    std::filesystem::remove(SidecarPath(dir.path(), sidecar_internal::kChecksFileName));
  }
  ASSERT_OK(TestComm().Barrier());
  VerifyOptions vo;
  vo.check.deep = true;
  vo.check.record_checks = true;
  ASSERT_OK_AND_ASSIGN(CheckReport report, VerifyDataset(TestComm(), dir.path(), vo));
  if (rank == 0) {
    EXPECT_TRUE(report.ok());
    std::vector<sidecar_internal::ShardChecks> found = ExpectSidecarCoversEveryShard(dir.path());
    ASSERT_EQ(found.size(), written.size());
    for (std::size_t i = 0; i < found.size(); ++i) EXPECT_EQ(found[i], written[i]) << found[i].path;
  }
}

}  // namespace
}  // namespace sedpack
