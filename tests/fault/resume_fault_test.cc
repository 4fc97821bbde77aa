// SPDX-License-Identifier: Apache-2.0
// A resumable generate job stopped by a full disk (ENOSPC from the n-th write
// on, support/fault_fs.h): the job fails, keeps the shards its journal names,
// and the same job run again on a healthy disk keeps them and ends with exactly
// the examples of an uninterrupted run, in the same order.
#include <gtest/gtest.h>

#include <cerrno>
#include <string>
#include <vector>

#include "sedpack/comm/comm.h"
#include "sedpack/dataset/reader.h"
#include "sedpack/generate/parallel.h"
#include "support/fault_fs.h"
#include "support/test_support.h"

namespace sedpack {
namespace {

using testing::FaultFileSystem;
using testing::FaultOp;
using testing::FaultPlan;
using testing::ScopedFileSystem;
using testing::TempDir;

GenerateConfig SmallConfig() {
  GenerateConfig c = DefaultGenerateConfig();
  EXPECT_OK(SetTraceLength(&c, 256));
  c.structure.examples_per_shard = 4;
  c.params.seed = 11;
  c.params.examples = {64, 12, 0};
  c.params.threads = 1;
  return c;
}

// Every example of every split, in read order, as raw bytes.
std::vector<std::string> ReadAll(const std::string& root) {
  std::vector<std::string> out;
  auto ds = Dataset::Open(root);
  EXPECT_OK(ds.status());
  if (!ds.ok()) return out;
  for (Split split : AllSplits()) {
    if (!(*ds)->info().FindSplit(split)) continue;
    auto reader = ExampleReader::Make(*ds, split);
    EXPECT_OK(reader.status());
    if (!reader.ok()) continue;
    for (;;) {
      auto next = (*reader)->Next();
      EXPECT_OK(next.status());
      if (!next.ok() || !next->has_value()) break;
      std::string ex = std::string(SplitName(split)) + ":";
      for (std::size_t j = 0; j < (*ds)->schema().size(); ++j) {
        const ValueView v = (**next).Get(j);
        ex.append(reinterpret_cast<const char*>(v.data.data()), v.data.size());
      }
      out.push_back(std::move(ex));
    }
  }
  return out;
}

TEST(ResumeFaultTest, FullDiskStopsTheJobAndTheRerunFinishesIt) {
  TempDir dir;
  SerialComm comm;
  const GenerateConfig config = SmallConfig();
  const std::string reference = dir.path() + "/ref";
  ASSERT_OK(GenerateOverComm(comm, config, reference).status());
  const std::vector<std::string> want = ReadAll(reference);
  ASSERT_EQ(want.size(), 76u);

  ParallelGenerateOptions options;
  options.resumable = true;
  // Count the writes of a whole job, then fill the disk at a third and two thirds of them.
  std::int64_t writes = 0;
  {
    FaultFileSystem counting;
    ScopedFileSystem scoped(&counting);
    ASSERT_OK(GenerateOverComm(comm, config, dir.path() + "/count", options).status());
    writes = counting.count(FaultOp::kWrite);
  }
  ASSERT_GT(writes, 20);
  for (std::int64_t at : {writes / 3, 2 * writes / 3}) {
    SCOPED_TRACE("ENOSPC from write " + std::to_string(at));
    const std::string out = dir.path() + "/ds" + std::to_string(at);
    {
      FaultPlan plan;
      plan.op = FaultOp::kWrite;
      plan.at = at;
      plan.error = ENOSPC;
      plan.sticky = true;
      FaultFileSystem full(plan);
      ScopedFileSystem scoped(&full);
      auto stopped = GenerateOverComm(comm, config, out, options);
      ASSERT_FALSE(stopped.ok());
      EXPECT_TRUE(full.fired());
    }
    auto resumed = GenerateOverComm(comm, config, out, options);
    ASSERT_OK(resumed.status());
    EXPECT_GT(resumed->kept_shards, 0u);
    EXPECT_GE(resumed->journal_shards, resumed->kept_shards);
    EXPECT_EQ(ReadAll(out), want);
  }
}

}  // namespace
}  // namespace sedpack
