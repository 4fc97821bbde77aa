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
#include "support/generate_config.h"
#include "support/test_support.h"

namespace sedpack {
namespace {

using testing::FaultFileSystem;
using testing::FaultOp;
using testing::ScopedFileSystem;
using testing::SmallGenerateConfig;
using testing::TempDir;

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

// What a test needs of one run of a resumable job into `out`.
struct RunResult {
  Status status;
  std::uint64_t kept_shards = 0, journal_shards = 0;
};
using Job = std::function<RunResult(const std::string& out)>;

template <typename Summary>
RunResult ResultOf(const Result<Summary>& r) {
  RunResult out{r.status()};
  if (r.ok()) {
    out.kept_shards = r->kept_shards;
    out.journal_shards = r->journal_shards;
  }
  return out;
}

// Count the writes of a whole job, then fill the disk from a third and from
// two thirds of them; each stopped job is run again on a healthy disk and
// must end with `want`, keeping its shards the first time and none after
// they were damaged the second.
void FullDiskThenResume(const std::string& dir, const Job& job, const std::vector<std::string>& want) {
  std::int64_t writes = 0;
  {
    FaultFileSystem counting;
    ScopedFileSystem scoped(&counting);
    ASSERT_OK(job(dir + "/count").status);
    writes = counting.count(FaultOp::kWrite);
  }
  ASSERT_GT(writes, 20);
  for (std::int64_t at : {writes / 3, 2 * writes / 3}) {
    SCOPED_TRACE("ENOSPC from write " + std::to_string(at));
    const std::string out = dir + "/ds" + std::to_string(at);
    {
      FaultFileSystem full(testing::FullDiskFrom(at));
      ScopedFileSystem scoped(&full);
      EXPECT_FALSE(job(out).status.ok());
      EXPECT_TRUE(full.fired());
    }
    // The second stop: every shard on disk damaged in its last byte first, so
    // the rerun must keep none of those its journal names.
    const bool damage = at != writes / 3;
    if (damage) {
      for (const auto& e : std::filesystem::recursive_directory_iterator(out)) {
        const std::string path = e.path().string();
        if (!e.is_regular_file() || e.path().extension() == ".json" || path.find("/.sedpack-hpc/") != std::string::npos) {
          continue;
        }
        std::fstream f(e.path(), std::ios::in | std::ios::out | std::ios::binary);
        f.seekg(-1, std::ios::end);
        const char c = static_cast<char>(f.get() ^ 0x5A);
        f.seekp(-1, std::ios::end);
        f.put(c);
      }
    }
    const RunResult resumed = job(out);
    ASSERT_OK(resumed.status);
    if (damage) {
      EXPECT_EQ(resumed.kept_shards, 0u);
    } else {
      EXPECT_GT(resumed.kept_shards, 0u);
    }
    EXPECT_GE(resumed.journal_shards, resumed.kept_shards);
    EXPECT_EQ(ReadAll(out), want);
  }
}

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
