// SPDX-License-Identifier: Apache-2.0
// A journaled `index build` and a resumable filler (the engine of Python's
// `Dataset.filler(job_id=...)`) stopped by a full disk (ENOSPC from the n-th
// write on, support/fault_fs.h): the job fails leaving nothing half-written
// visible, and the same job run again on a healthy disk keeps what its
// journal names and ends equal to an uninterrupted run.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <map>
#include <optional>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "index/index_internal.h"
#include "journal/journal_internal.h"
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
using testing::FaultFileSystem;
using testing::FaultOp;
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
    // The journals, and the index written so far where no reader looks for it.
    for (const auto& e : fs::directory_iterator(out + "/.sedpack-hpc/jobs")) {
      const std::string name = e.path().filename();
      EXPECT_TRUE(e.path().extension() == ".journal" ||
                  (name.size() > 14 && name.compare(name.size() - 14, 14, ".index.partial") == 0))
          << "left after the stop: " << e.path();
    }
  };
  FullDiskThenResume(dir.path(), job, want, check);
}

// A journaled index build of `root` with 4 threads, under `fault` if given.
Result<IndexBuildJob> BuildJournaled(const std::string& root, FileSystem* fault) {
  SEDPACK_ASSIGN_OR_RETURN(auto ds, Dataset::Open(root));
  std::optional<testing::ScopedFileSystem> scoped;
  if (fault) scoped.emplace(fault);
  return BuildIndexFileJournaled(ds, 4, IndexJobOptions{});
}

// The writes of an uninterrupted journaled build of a copy of `source` (made at `scratch`).
void CountBuildWrites(const std::string& source, const std::string& scratch, std::int64_t* writes) {
  testing::CopyTree(source, scratch);
  FaultFileSystem counter;
  ASSERT_OK(BuildJournaled(scratch, &counter).status());
  *writes = counter.count(FaultOp::kWrite);
  ASSERT_GE(*writes, 8);
}

// A copy of `source` at `root` whose journaled build a full disk stopped at write `at`.
void StopBuildAt(const std::string& source, const std::string& root, std::int64_t at) {
  testing::CopyTree(source, root);
  FaultFileSystem full(testing::FullDiskFrom(at));
  ASSERT_FALSE(BuildJournaled(root, &full).ok());
  ASSERT_TRUE(full.fired());
}

// An unjournaled build of a copy of `source` at `fresh`.
void FreshBuild(const std::string& source, const std::string& fresh) {
  testing::CopyTree(source, fresh);
  auto ds = Dataset::Open(fresh);
  ASSERT_OK(ds.status());
  ASSERT_OK(BuildIndexFile(*ds, 1).status());
}

// Every prefix unit the journals of the job stopped under `root` hold.
void JournaledUnits(const std::string& root, std::vector<PrefixUnit>* units) {
  ASSERT_OK_AND_ASSIGN(std::vector<journal_internal::JournalFile> journals,
                       journal_internal::ListJournals(root, nullptr));
  std::vector<journal_internal::EntryView> entries;
  for (const journal_internal::JournalFile& j : journals) {
    ASSERT_OK_AND_ASSIGN(journal_internal::JournalView read, journal_internal::ReadJournalInPlace(root, j.rel, nullptr));
    for (journal_internal::EntryView& e : read.entries) entries.push_back(std::move(e));
  }
  *units = DecodePrefixUnits(entries, ~std::uint64_t{0});
}

// The list the rerun must not keep from the journal once edited: the last
// list of the first subtree a stopped build journaled under `root`, and how
// many subtrees that build journaled.
void FirstJournaledList(const std::string& root, std::string* list, std::size_t* journaled) {
  std::vector<PrefixUnit> units;
  ASSERT_NO_FATAL_FAILURE(JournaledUnits(root, &units));
  std::erase_if(units, [](const PrefixUnit& u) { return !u.subtree; });
  ASSERT_FALSE(units.empty());
  ASSERT_FALSE(units.front().visited.empty());
  *journaled = units.size();
  *list = units.front().visited.back();
}

// Rewrites the first shard's number_of_examples in the list `rel` below
// `root` in place: 1 becomes `to` ("7": the same size, "17": one byte more),
// its modification time set a second later (a coarse clock would otherwise
// leave it as it was).
void EditList(const std::string& root, const std::string& rel, const std::string& to) {
  const std::string path = root + "/" + rel;
  const auto before = fs::last_write_time(path);
  std::string text;
  {
    std::ifstream in(path, std::ios::binary);
    text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  const std::string key = "\"number_of_examples\": 1";
  const std::size_t at = text.find(key, text.find("\"shard_files\""));
  ASSERT_NE(at, std::string::npos) << text;
  ASSERT_FALSE(std::isdigit(static_cast<unsigned char>(text[at + key.size()]))) << text;
  text.replace(at + key.size() - 1, 1, to);
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);  // the same file, rewritten
    out << text;
    ASSERT_TRUE(out.good());
  }
  fs::last_write_time(path, before + std::chrono::seconds(1));
}

// A journaled index build stopped half-way (a full disk), one list of a
// subtree it journaled then edited in place (the same size with other bytes,
// or another size; a newer mtime either way): the rerun walks that subtree
// again (it keeps one subtree fewer than the journal holds) and writes the
// index of the edited tree, as a fresh build of it does. Unedited, it keeps
// every journaled subtree.
TEST(ResumeIndexFaultTest, ARerunWalksAgainASubtreeWhoseListWasEditedInPlace) {
  TempDir dir;
  const std::string source = dir.path() + "/source";
  testing::MakeDeepDataset(source);
  std::int64_t writes = 0;
  ASSERT_NO_FATAL_FAILURE(CountBuildWrites(source, dir.path() + "/count", &writes));
  std::vector<std::string> unedited;
  for (const std::string to : {"", "7", "17"}) {
    SCOPED_TRACE(to.empty() ? "unedited" : "number_of_examples 1 edited to " + to);
    const std::string root = dir.path() + "/stopped" + to;
    ASSERT_NO_FATAL_FAILURE(StopBuildAt(source, root, writes / 2));
    std::string list;
    std::size_t journaled = 0;
    FirstJournaledList(root, &list, &journaled);
    const std::string fresh = dir.path() + "/fresh" + to;
    testing::CopyTree(source, fresh);
    if (!to.empty()) {
      EditList(root, list, to);
      EditList(fresh, list, to);
    }
    {
      auto ds = Dataset::Open(fresh);
      ASSERT_OK(ds.status());
      ASSERT_OK(BuildIndexFile(*ds, 1).status());
    }
    ASSERT_OK_AND_ASSIGN(const IndexBuildJob resumed, BuildJournaled(root, nullptr));
    EXPECT_EQ(resumed.units_kept, to.empty() ? journaled : journaled - 1) << "edited " << list;
    const std::vector<std::string> rows = testing::IndexRows(fresh);
    // The edit shows in the index (it is not one a stale rerun could pass).
    if (to.empty()) unedited = rows;
    if (!to.empty()) {
      EXPECT_NE(rows, unedited);
    }
    EXPECT_EQ(testing::IndexRows(root), rows);
  }
}

// A journaled index build stopped half-way, then one byte of the first
// subtree's path bytes in the partial index changed (a page a lost node never
// wrote back, a bad sector): the unit fails its hash, so the rerun (which
// checks the kept prefix while it walks the rest) walks it again, keeps the
// other journaled subtrees, and writes the index a fresh build writes.
TEST(ResumeIndexFaultTest, ARerunWalksAgainASubtreeWhoseBytesInThePartialIndexChanged) {
  TempDir dir;
  const std::string source = dir.path() + "/source";
  testing::MakeDeepDataset(source);
  std::int64_t writes = 0;
  ASSERT_NO_FATAL_FAILURE(CountBuildWrites(source, dir.path() + "/count", &writes));
  const std::string root = dir.path() + "/stopped";
  ASSERT_NO_FATAL_FAILURE(StopBuildAt(source, root, writes / 2));
  // The journaled subtrees; the first one's bytes are damaged.
  std::vector<PrefixUnit> units;
  ASSERT_NO_FATAL_FAILURE(JournaledUnits(root, &units));
  std::erase_if(units, [](const PrefixUnit& u) { return !u.subtree; });
  ASSERT_FALSE(units.empty());
  const std::size_t journaled = units.size();
  const PrefixUnit& first = units.front();
  ASSERT_GT(first.bytes, 0u);
  std::string partial;
  for (const auto& e : fs::directory_iterator(root + "/.sedpack-hpc/jobs")) {
    if (e.path().filename().string().ends_with(".index.partial")) partial = e.path();
  }
  ASSERT_FALSE(partial.empty());
  ASSERT_TRUE(testing::FlipBitAt(partial, first.offset + first.bytes / 2));
  ASSERT_NO_FATAL_FAILURE(FreshBuild(source, dir.path() + "/fresh"));
  ASSERT_OK_AND_ASSIGN(const IndexBuildJob resumed, BuildJournaled(root, nullptr));
  EXPECT_EQ(resumed.units_kept, journaled - 1);
  EXPECT_EQ(testing::IndexRows(root), testing::IndexRows(dir.path() + "/fresh"));
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
