// SPDX-License-Identifier: Apache-2.0
// Journaled recompress and digest jobs stopped by a full disk (ENOSPC from
// the n-th write on, support/fault_fs.h): the job fails and keeps what its
// journals name; the same job run again on a healthy disk keeps it, does the
// rest, and leaves exactly the bytes of an uninterrupted run.
#include <gtest/gtest.h>

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <thread>

#include "sedpack/check/check.h"
#include "sedpack/comm/comm.h"
#include "sedpack/dataset/dataset.h"
#include "sedpack/generate/parallel.h"
#include "sedpack/maintain/content.h"
#include "sedpack/maintain/fix.h"
#include "sedpack/maintain/recompress.h"
#include "support/fault_fs.h"
#include "support/generate_config.h"
#include "support/test_support.h"

namespace sedpack {
namespace {

namespace fs = std::filesystem;
using testing::FaultFileSystem;
using testing::FaultOp;
using testing::FullDiskFrom;
using testing::ScopedFileSystem;
using testing::SmallGenerateConfig;
using testing::TempDir;

// Every file below `root` with its bytes (folders as empty entries).
std::map<std::string, std::string> Tree(const std::string& root) {
  std::map<std::string, std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(root)) {
    const std::string rel = fs::relative(e.path(), root).string();
    if (e.is_directory()) {
      out[rel + "/"] = "";
      continue;
    }
    std::ifstream in(e.path(), std::ios::binary);
    std::ostringstream bytes;
    bytes << in.rdbuf();
    out[rel] = bytes.str();
  }
  return out;
}

std::string Content(const std::string& root) {
  std::ifstream in(root + "/.sedpack-hpc/content.json", std::ios::binary);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

// The job journals under `root`.
int Journals(const std::string& root) {
  int n = 0;
  const fs::path jobs = fs::path(root) / ".sedpack-hpc/jobs";
  if (!fs::exists(jobs)) return 0;
  for (const auto& e : fs::directory_iterator(jobs)) n += e.path().extension() == ".journal";
  return n;
}

// Journal entries are appended by a thread of their own, a little behind the
// shards: each shard waits this long first, so that the entries of the shards
// before a fault are on disk when it comes, on a loaded machine too.
constexpr auto kPace = std::chrono::milliseconds(20);

// A generated dataset to work on, in a folder of its own.
class ResumeMaintainFaultTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_OK(GenerateOverComm(comm, SmallGenerateConfig(7), base).status()); }

  RecompressOptions Zstd(const std::string& out, int threads) const {
    RecompressOptions o;
    o.compression = Compression::kZstd;
    o.threads = threads;
    o.out = dir.path() + out;
    return o;
  }

  TempDir dir;
  SerialComm comm;
  const std::string base = dir.path() + "/base";
};

TEST_F(ResumeMaintainFaultTest, RecompressStoppedByAFullDiskIsFinishedByTheRerun) {
  RecompressOptions o = Zstd("/ref", 2);
  ASSERT_OK(Recompress(comm, base, o).status());
  const auto want = Tree(o.out);
  o.journal = true;
  o.threads = 1;
  o.fault = [](std::string_view) {
    std::this_thread::sleep_for(kPace);
    return Status::OK();
  };
  std::int64_t writes = 0;
  {
    FaultFileSystem counting;
    ScopedFileSystem scoped(&counting);
    o.out = dir.path() + "/count";
    ASSERT_OK(Recompress(comm, base, o).status());
    writes = counting.count(FaultOp::kWrite);
  }
  ASSERT_GT(writes, 20);
  for (std::int64_t at : {writes / 3, 2 * writes / 3}) {
    SCOPED_TRACE("ENOSPC from write " + std::to_string(at));
    o.out = dir.path() + "/out" + std::to_string(at);
    {
      FaultFileSystem full(FullDiskFrom(at));
      ScopedFileSystem scoped(&full);
      EXPECT_FALSE(Recompress(comm, base, o).ok());
      EXPECT_TRUE(full.fired());
    }
    ASSERT_GT(Journals(o.out), 0);
    auto resumed = Recompress(comm, base, o);
    ASSERT_OK(resumed.status());
    EXPECT_GT(resumed->shards_kept, 0u);
    EXPECT_LT(resumed->shards_kept, resumed->files);
    EXPECT_FALSE(resumed->resumed_job.empty());
    EXPECT_EQ(Tree(o.out), want);
  }
}

TEST_F(ResumeMaintainFaultTest, RecompressRefusesOtherOptionsAndRestarts) {
  RecompressOptions o = Zstd("/out", 1);
  o.journal = true;
  o.fault = [n = 0](std::string_view step) mutable {
    return step.substr(0, 5) == "shard" && ++n == 6 ? Status::IOError("stop") : Status::OK();
  };
  ASSERT_FALSE(Recompress(comm, base, o).ok());
  o.fault = nullptr;
  RecompressOptions other = o;
  other.compression = Compression::kLz4;
  auto refused = Recompress(comm, base, other);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kAlreadyExists);
  EXPECT_NE(refused.status().message().find("compression"), std::string::npos) << refused.status().ToString();
  EXPECT_NE(refused.status().message().find("--restart"), std::string::npos);
  other.restart = true;
  auto restarted = Recompress(comm, base, other);
  ASSERT_OK(restarted.status());
  EXPECT_EQ(restarted->shards_kept, 0u);
  EXPECT_EQ(Journals(o.out), 0);
}

// The resumable-job notes of a check: a stopped in-place recompress's journals
// are in its staging folder beside the dataset, where the orphan search does
// not look.
int ResumableNotes(const std::string& root, const std::string& mention) {
  auto report = CheckDataset(root);
  EXPECT_OK(report.status());
  if (!report.ok()) return -1;
  EXPECT_TRUE(report->ok()) << "a note is not an error";
  int n = 0;
  for (const CheckProblem& p : report->problems) {
    if (p.kind != CheckProblem::Kind::kResumableJob) continue;
    EXPECT_TRUE(p.warning());
    EXPECT_NE(p.message.find(mention), std::string::npos) << p.message;
    ++n;
  }
  return n;
}

TEST_F(ResumeMaintainFaultTest, StoppedInPlaceRecompressIsNotedByCheckAndListedOnceByFix) {
  RecompressOptions o = Zstd("", 1);
  o.out.clear();
  o.journal = true;
  o.fault = [n = 0](std::string_view step) mutable {
    return step.substr(0, 5) == "shard" && ++n == 6 ? Status::IOError("stop") : Status::OK();
  };
  ASSERT_FALSE(Recompress(comm, base, o).ok());
  const std::string staging = RecompressStagingPath(base);
  ASSERT_GT(Journals(staging), 0);
  EXPECT_EQ(ResumableNotes(base, staging), 1);
  {
    ASSERT_OK_AND_ASSIGN(auto ds, Dataset::Open(base));
    ASSERT_OK_AND_ASSIGN(DatasetDiagnosis d, DiagnoseDataset(*ds));
    EXPECT_EQ(d.resumable_jobs.size(), 1u);
  }
  o.fault = nullptr;
  ASSERT_OK(Recompress(comm, base, o).status());
  EXPECT_FALSE(fs::exists(staging));
  EXPECT_EQ(ResumableNotes(base, staging), 0);
}

TEST_F(ResumeMaintainFaultTest, DigestStoppedByAFullDiskIsFinishedByTheRerun) {
  const std::string ref = dir.path() + "/ref";
  fs::copy(base, ref, fs::copy_options::recursive);
  ShardPassOptions pass;
  pass.threads = 2;
  DigestJobOptions plain;
  plain.journal = false;
  ASSERT_OK(DigestDataset(comm, ref, pass, plain).status());
  const std::string want = Content(ref);
  ASSERT_FALSE(want.empty());
  DigestJobOptions job;
  pass.threads = 1;
  pass.before_shard = [](int) { std::this_thread::sleep_for(kPace); };
  std::int64_t writes = 0;
  {
    const std::string count = dir.path() + "/count";
    fs::copy(base, count, fs::copy_options::recursive);
    FaultFileSystem counting;
    ScopedFileSystem scoped(&counting);
    ASSERT_OK(DigestDataset(comm, count, pass, job).status());
    writes = counting.count(FaultOp::kWrite);
  }
  ASSERT_GT(writes, 8);
  for (std::int64_t at : {writes / 3, 2 * writes / 3}) {
    SCOPED_TRACE("ENOSPC from write " + std::to_string(at));
    const std::string ds = dir.path() + "/ds" + std::to_string(at);
    fs::copy(base, ds, fs::copy_options::recursive);
    {
      FaultFileSystem full(FullDiskFrom(at));
      ScopedFileSystem scoped(&full);
      EXPECT_FALSE(DigestDataset(comm, ds, pass, job).ok());
      EXPECT_TRUE(full.fired());
    }
    auto resumed = DigestDataset(comm, ds, pass, job);
    ASSERT_OK(resumed.status());
    EXPECT_GT(resumed->shards_kept, 0u);
    EXPECT_EQ(Content(ds), want);
    EXPECT_EQ(Journals(ds), 0);
  }
}

}  // namespace
}  // namespace sedpack
