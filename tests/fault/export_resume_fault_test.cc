// SPDX-License-Identifier: Apache-2.0
// A journaled export-trs stopped by a full disk (ENOSPC from the n-th write
// on, support/fault_fs.h): the export fails, leaves its journal and
// unfinished file, and the same export on a healthy disk keeps the journaled
// rows and ends with exactly the bytes of an uninterrupted export.
#include <cstdlib>
#include <gtest/gtest.h>

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <cstdint>
#include <string>
#include <vector>

#include "sedpack/capture/export.h"
#include "sedpack/dataset/filler.h"
#include "support/fault_fs.h"
#include "support/test_support.h"

namespace sedpack {
namespace {

using testing::FaultFileSystem;
using testing::FaultOp;
using testing::FaultPlan;
using testing::TempDir;

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

TEST(ExportResumeFaultTest, FullDiskStopsTheTrsExportAndTheRerunFinishesIt) {
  TempDir dir;
  const std::string root = dir.path() + "/ds";
  {
    // 64 traces of 1024 float32 samples and a byte label, 4 a shard.
    DatasetStructure st;
    st.examples_per_shard = 4;
    st.saved_data_description = {{"trace", "float32", {1024}, {}}, {"label", "uint8", {}, {}}};
    ASSERT_OK_AND_ASSIGN(auto created, Dataset::Create(root, Metadata{}, st));
    ASSERT_OK_AND_ASSIGN(auto f, Filler::Make(created));
    for (int e = 0; e < 64; ++e) {
      std::vector<float> trace(1024);
      for (int i = 0; i < 1024; ++i) trace[i] = static_cast<float>((e * 31 + i * 7) % 101) / 8;
      const std::vector<std::uint8_t> label = {static_cast<std::uint8_t>(e)};
      const std::vector<ValueView> v = {ValueView::Array(trace, {1024}), ValueView::Array(label, {})};
      ASSERT_OK(f->WriteExample(Split::kTrain, v));
    }
    ASSERT_OK(f->Finish());
  }
  ASSERT_OK_AND_ASSIGN(auto ds, Dataset::Open(root));
  const std::string reference = dir.path() + "/ref.trs";
  TrsExportOptions plain;
  plain.journal = false;
  ASSERT_OK(ExportTrs(ds, Split::kTrain, reference, plain).status());
  const std::string want = Slurp(reference);
  ASSERT_GT(want.size(), 64u * 1024);

  // A record for every row range (export-trs records at most once a second by
  // default; a sticky full disk refuses the record of the ranges since the last).
  ::setenv("SEDPACK_TEST_RECORD_MS", "0", 1);
  // Count the writes of a whole journaled export, then fill the disk at a third and two thirds of them.
  std::int64_t writes = 0;
  {
    FaultFileSystem counting;
    TrsExportOptions o;
    o.file_system = &counting;
    ASSERT_OK_AND_ASSIGN(TrsExportSummary s, ExportTrs(ds, Split::kTrain, dir.path() + "/count.trs", o));
    EXPECT_EQ(s.units, 16u);
    EXPECT_FALSE(s.resumed);
    writes = counting.count(FaultOp::kWrite);
  }
  ASSERT_GT(writes, 16);
  for (std::int64_t at : {writes / 3, 2 * writes / 3}) {
    SCOPED_TRACE("ENOSPC from write " + std::to_string(at));
    const std::string out = dir.path() + "/out" + std::to_string(at) + ".trs";
    {
      FaultFileSystem full(FaultPlan{FaultOp::kWrite, at, ENOSPC, /*sticky=*/true});
      TrsExportOptions o;
      o.file_system = &full;
      auto stopped = ExportTrs(ds, Split::kTrain, out, o);
      ASSERT_FALSE(stopped.ok());
      EXPECT_EQ(stopped.status().code(), StatusCode::kIOError) << stopped.status().ToString();
      EXPECT_TRUE(full.fired());
    }
    EXPECT_FALSE(std::filesystem::exists(out));
    EXPECT_TRUE(std::filesystem::exists(out + ".sedpack-journal"));
    ASSERT_OK_AND_ASSIGN(TrsExportSummary resumed, ExportTrs(ds, Split::kTrain, out));
    EXPECT_TRUE(resumed.resumed);
    EXPECT_GT(resumed.kept_units, 0u);
    EXPECT_LT(resumed.kept_units, resumed.units);
    EXPECT_EQ(resumed.traces, 64u);
    EXPECT_EQ(Slurp(out), want);
    EXPECT_FALSE(std::filesystem::exists(out + ".sedpack-journal"));
  }
}

}  // namespace
}  // namespace sedpack
