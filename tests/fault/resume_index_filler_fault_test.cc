// SPDX-License-Identifier: Apache-2.0
// A journaled `index build` and a resumable filler (the engine of Python's
// `Dataset.filler(job_id=...)`) stopped by a full disk (ENOSPC from the n-th
// write on, support/fault_fs.h): the job fails leaving nothing half-written
// visible, and the same job run again on a healthy disk keeps what its
// journal names and ends equal to an uninterrupted run.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "index/index_internal.h"
#include "sedpack/comm/comm.h"
#include "sedpack/dataset/dataset.h"
#include "sedpack/dataset/filler.h"
#include "sedpack/index/index.h"
#include "sedpack/mpi/distributed_write.h"
#include "support/fault_fs.h"
#include "support/full_disk.h"
#include "support/test_support.h"

namespace sedpack {
namespace {

namespace fs = std::filesystem;
using testing::FullDiskCheck;
using testing::FullDiskThenResume;
using testing::ReadAll;
using testing::RunResult;
using testing::TempDir;

DatasetStructure Structure(int examples_per_shard) {
  DatasetStructure s;
  s.saved_data_description = {{"x", "int64", {2}, {}}};
  s.compression = Compression::kLz4;
  s.examples_per_shard = examples_per_shard;
  s.hash_checksum_algorithms = {HashAlgorithm::kSha256};
  return s;
}

// Example k of the jobs below: its split and its value.
Split SplitOf(std::int64_t k) { return k % 4 == 3 ? Split::kTest : Split::kTrain; }

TEST(ResumeIndexFaultTest, FullDiskStopsAnIndexBuildAndTheRerunFinishesIt) {
  TempDir dir;
  const std::string source = dir.path() + "/source";
  testing::MakeDeepDataset(source);
  const std::string reference = dir.path() + "/ref";
  testing::CopyTree(source, reference);
  {
    auto ds = Dataset::Open(reference);
    ASSERT_OK(ds.status());
    ASSERT_OK(BuildIndexFile(*ds, 1).status());  // the serial walk, unjournaled
  }
  const std::vector<std::string> want = testing::IndexRows(reference);
  ASSERT_EQ(want.size(), 96u);
  // Each run indexes its own copy of the dataset (copied past the fault file
  // system: only the build's own writes are counted and failed).
  auto job = [&](const std::string& out) {
    if (!fs::exists(out)) testing::CopyTree(source, out);
    auto ds = Dataset::Open(out);
    if (!ds.ok()) return RunResult{ds.status()};
    auto built = BuildIndexFileJournaled(*ds, 4, IndexJobOptions{});
    RunResult r{built.status()};
    if (built.ok()) {
      r.kept_shards = built->units_kept;
      r.journal_shards = built->units;
    }
    return r;
  };
  FullDiskCheck check;
  check.read = testing::IndexRows;
  check.damage_shards = false;  // the journal records lists walked, not shards written
  check.min_writes = 8;
  check.at_last_write = true;  // the index file's own writes
  std::vector<std::string> sidecars = {"jobs"};  // the dataset's own, and the journals' folder
  for (const auto& e : fs::directory_iterator(source + "/.sedpack-hpc")) sidecars.push_back(e.path().filename());
  std::sort(sidecars.begin(), sidecars.end());
  check.stopped = [&](const std::string& out) {
    // No index file (not even a part of one) is visible, and the journal is there.
    auto index = CheckIndex(out);
    ASSERT_OK(index.status());
    EXPECT_EQ(index->freshness, IndexFreshness::kMissing);
    std::vector<std::string> left;
    for (const auto& e : fs::directory_iterator(out + "/.sedpack-hpc")) left.push_back(e.path().filename());
    std::sort(left.begin(), left.end());
    EXPECT_EQ(left, sidecars);
    for (const auto& e : fs::directory_iterator(out + "/.sedpack-hpc/jobs")) {
      EXPECT_EQ(e.path().extension(), ".journal") << "left after the stop: " << e.path();
    }
  };
  FullDiskThenResume(dir.path(), job, want, check);
}

// What Python's `ds.filler(job_id="fill1", job_parameters={"seed": 3})` runs
// (python/dataset.cc: the journaled parallel writer over one process, the
// examples its journal kept skipped as the script writes them again). The
// binding cannot install a fault file system, so the C++ path is tested.
RunResult FillerJob(const std::string& out) {
  if (!fs::exists(out + "/dataset_info.json")) {
    auto created = Dataset::Create(out, Metadata{}, Structure(3));
    if (!created.ok()) return {created.status()};
  }
  SerialComm comm;
  DistributedWriteOptions o;
  o.filler.concurrency = 2;
  o.job_id = "fill1";
  o.resume_parameters = {{"writer", "python filler"}, {"ranks", "1"}, {"seed", "3"}};
  auto w = DistributedWriter::Open(comm, out, o);
  if (!w.ok()) return {w.status()};
  return testing::WriteShareAndFinish(**w, 0, 120, 1, SplitOf);
}

TEST(ResumeFillerFaultTest, FullDiskStopsAResumableFillerAndTheRerunFinishesIt) {
  TempDir dir;
  const std::string reference = dir.path() + "/ref";
  ASSERT_OK(FillerJob(reference).status);
  const std::vector<std::string> want = ReadAll(reference);
  ASSERT_EQ(want.size(), 120u);
  FullDiskCheck check;
  check.stopped = [](const std::string& out) {
    // The dataset stays as it was created (nothing committed, nothing
    // damaged); check notes the stopped job and nothing else.
    EXPECT_TRUE(ReadAll(out).empty());
    testing::ExpectOnlyStoppedJob(out, "fill1");
  };
  FullDiskThenResume(dir.path(), FillerJob, want, check);
}

}  // namespace
}  // namespace sedpack
