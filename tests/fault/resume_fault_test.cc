// SPDX-License-Identifier: Apache-2.0
// Resumable generate, import-trs and import-chipwhisperer jobs stopped by a
// full disk (ENOSPC from the n-th write on, support/fault_fs.h): the job fails,
// keeps the shards its journal names, and the same job run again on a healthy
// disk keeps them and ends with exactly the examples of an uninterrupted run,
// in the same order.
#include <gtest/gtest.h>

#include <cerrno>
#include <string>
#include <vector>

#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>

#include "capture/fixtures.h"
#include "sedpack/capture/chipwhisperer.h"
#include "sedpack/capture/import.h"
#include "sedpack/capture/sources.h"
#include "sedpack/comm/comm.h"
#include "sedpack/dataset/reader.h"
#include "sedpack/generate/parallel.h"
#include "support/fault_fs.h"
#include "support/full_disk.h"
#include "support/generate_config.h"
#include "support/test_support.h"

namespace sedpack {
namespace {

using testing::FullDiskThenResume;
using testing::ReadAll;
using testing::ResultOf;
using testing::SmallGenerateConfig;
using testing::TempDir;

TEST(ResumeFaultTest, FullDiskStopsTheJobAndTheRerunFinishesIt) {
  TempDir dir;
  SerialComm comm;
  const GenerateConfig config = SmallGenerateConfig(11);
  const std::string reference = dir.path() + "/ref";
  ASSERT_OK(GenerateOverComm(comm, config, reference).status());
  const std::vector<std::string> want = ReadAll(reference);
  ASSERT_EQ(want.size(), 76u);
  ParallelGenerateOptions options;
  options.resumable = true;
  FullDiskThenResume(
      dir.path(), [&](const std::string& out) { return ResultOf(GenerateOverComm(comm, config, out, options)); },
      want);
}

// A capture import, its inputs opened afresh for every run as the command does.
void CaptureFullDiskThenResume(const std::string& dir,
                               const std::function<std::vector<std::unique_ptr<CaptureInput>>()>& open,
                               const std::string& key, const std::vector<std::string>& files) {
  SerialComm comm;
  auto first = open();
  ASSERT_FALSE(first.empty());
  auto config = ParseCaptureImportConfig(SuggestCaptureMapping(*first.front(), key), "suggested", key);
  ASSERT_OK(config.status());
  config->structure.examples_per_shard = 4;
  ASSERT_OK(ImportCapture(comm, *config, first, dir + "/ref").status());
  const std::vector<std::string> want = ReadAll(dir + "/ref");
  ASSERT_GT(want.size(), 20u);
  CaptureImportOptions options;
  options.resumable = true;
  options.command = "import-" + key;
  options.input_files = files;
  FullDiskThenResume(
      dir, [&](const std::string& out) { return ResultOf(ImportCapture(comm, *config, open(), out, options)); },
      want);
}

TEST(ResumeFaultTest, FullDiskStopsAnImportTrsAndTheRerunFinishesIt) {
  TempDir dir;
  testing::TrsSpec spec;
  spec.traces = 90;
  spec.samples = 64;
  spec.coding = 0x02;
  spec.v2 = true;
  spec.data = 36;
  spec.title_space = 16;
  const std::string a = dir.path() + "/a.trs", b = dir.path() + "/b.trs";
  testing::WriteTrs(a, spec);
  spec.seed = 2;
  spec.traces = 50;
  testing::WriteTrs(b, spec);
  auto open = [&] {
    std::vector<std::unique_ptr<CaptureInput>> in;
    for (const std::string& f : {a, b}) {
      auto r = OpenTrsInput(f, TrsCountPolicy::kStrict, nullptr);
      EXPECT_OK(r.status());
      if (r.ok()) in.push_back(std::move(r).value());
    }
    return in;
  };
  CaptureFullDiskThenResume(dir.path(), open, "trs", {a, b});
}

TEST(ResumeFaultTest, FullDiskStopsAnImportChipWhispererAndTheRerunFinishesIt) {
  TempDir dir;
  const std::string traces = dir.path() + "/proj_data/traces";
  std::filesystem::create_directories(traces);
  testing::WriteCwSegment(traces, "s0_", 0, 70, 64, 40, false);
  testing::WriteCwSegment(traces, "s1_", 1, 30, 30, 40, false);
  const std::string project = dir.path() + "/proj.cwp";
  std::ofstream(project) << "[Trace Management]\ntracefile0 = proj_data\\traces\\config_s0_.cfg\nenabled0 = True\n"
                            "tracefile1 = proj_data\\traces\\config_s1_.cfg\nenabled1 = True\n";
  auto open = [&] {
    auto r = OpenChipWhispererInputs(project, nullptr);
    EXPECT_OK(r.status());
    return r.ok() ? std::move(r).value() : std::vector<std::unique_ptr<CaptureInput>>{};
  };
  CaptureFullDiskThenResume(dir.path(), open, "chipwhisperer", {project});
}

}  // namespace
}  // namespace sedpack
