// SPDX-License-Identifier: Apache-2.0
// I/O faults injected under every writing job (support/fault_fs.h): ENOSPC at
// the n-th write (once, and from then on as on a full disk), EIO on a read,
// failed fsyncs, renames, file and folder creations, and short writes.
//
// Each job runs once on a healthy file system to count its calls, then again
// with a fault at points spread over those calls. After a failed run:
//   - the error names a file of the job (its path is under the test folder);
//   - the dataset is still at its last commit: it opens, checks clean, and
//     holds exactly the examples it held before, value for value;
//   - nothing of the failed job is left: no orphan shard, no temporary file,
//     no staging folder (DiagnoseDataset), no output file of a pack.
// A run the fault did not stop (a short write, a failed best-effort fsync)
// must have finished the job correctly.
#include <gtest/gtest.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <set>

#include "sedpack/comm/comm.h"
#include "sedpack/check/check.h"
#include "sedpack/dataset/dataset.h"
#include "sedpack/dataset/filler.h"
#include "sedpack/dataset/reader.h"
#include "sedpack/io/file.h"
#include "sedpack/io/pack.h"
#include "sedpack/maintain/fix.h"
#include "sedpack/maintain/recompress.h"
#include "sidecar/checks_spool_internal.h"
#include "support/fault_fs.h"
#include "support/test_support.h"

namespace sedpack {
namespace {

namespace fs = std::filesystem;
using testing::FaultFileSystem;
using testing::FaultOp;
using testing::FaultPlan;
using testing::ScopedFileSystem;
using testing::TempDir;

DatasetStructure Structure(Compression compression) {
  DatasetStructure st;
  st.shard_file_type = ShardFileType::kFb;
  st.compression = compression;
  st.examples_per_shard = 4;
  st.hash_checksum_algorithms = {HashAlgorithm::kSha256};
  st.saved_data_description = {{"trace", "int16", {32}, {}}, {"label", "int64", {}, {}}};
  return st;
}

// Write `count` examples starting at `first` into `dataset` (under `sub`).
Status Fill(std::shared_ptr<Dataset> dataset, const std::string& sub, int first, int count) {
  FillerOptions fo;
  fo.relative_path_from_split = sub;
  fo.concurrency = 2;
  SEDPACK_ASSIGN_OR_RETURN(auto filler, Filler::Make(std::move(dataset), fo));
  for (int i = first; i < first + count; ++i) {
    std::vector<std::int16_t> trace(32);
    for (int j = 0; j < 32; ++j) trace[j] = static_cast<std::int16_t>(i * 31 + j);
    const std::int64_t label = i;
    std::vector<ValueView> v = {ValueView::Array(trace, {32}), ValueView::Scalar(label)};
    SEDPACK_RETURN_NOT_OK(filler->WriteExample(i % 5 == 4 ? Split::kTest : Split::kTrain, v));
  }
  return filler->Finish();
}

// Options opening a dataset on `fs`.
OpenOptions OnFileSystem(FileSystem* fs) {
  OpenOptions o;
  o.file_system = fs;
  return o;
}

// The compression and every label of every split in reading order, or the
// reason it could not be read.
std::string Content(const std::string& root) {
  auto ds = Dataset::Open(root);
  if (!ds.ok()) return "open failed: " + ds.status().ToString();
  std::string out = "compression " + std::string(CompressionName((*ds)->info().dataset_structure.compression)) + "\n";
  for (Split s : AllSplits()) {
    if (!(*ds)->info().FindSplit(s)) continue;
    out += std::string(SplitName(s)) + ":";
    auto r = ExampleReader::Make(*ds, s);
    if (!r.ok()) return "reader failed: " + r.status().ToString();
    for (;;) {
      auto ex = (*r)->Next();
      if (!ex.ok()) return "read failed: " + ex.status().ToString();
      if (!ex->has_value()) break;
      const Example& e = **ex;
      out += " " + std::to_string(e.Get(1).At<std::int64_t>(0)) + "/" + std::to_string(e.Get(0).At<std::int16_t>(31));
    }
    out += "\n";
  }
  return out;
}

// The dataset at `root` checks clean and holds nothing a job left behind
// (but, when allowed, what a finished job could not remove after its commit:
// a recompress's old tree, a writer's spool of checks records; `fix --gc`
// removes both).
void ExpectCleanDataset(const std::string& root, const std::string& context, bool allow_unremoved = false) {
  auto report = CheckDataset(root);
  ASSERT_TRUE(report.ok()) << context << ": " << report.status().ToString();
  EXPECT_TRUE(report->problems.empty()) << context << ": " << report->problems.size() << " problems, first: "
                                        << report->problems.front().message;
  auto ds = Dataset::Open(root);
  ASSERT_TRUE(ds.ok()) << context;
  auto diagnosis = DiagnoseDataset(**ds);
  ASSERT_TRUE(diagnosis.ok()) << context << ": " << diagnosis.status().ToString();
  for (const Leftover& l : diagnosis->leftovers) {
    if (allow_unremoved && l.kind == Leftover::Kind::kRecompress) continue;
    if (allow_unremoved && l.kind == Leftover::Kind::kTemporary &&
        sidecar_internal::IsChecksSpoolName(fs::path(l.path).filename().string())) {
      continue;
    }
    ADD_FAILURE() << context << ": left behind: " << LeftoverKindName(l.kind) << " " << l.path;
  }
}

// Fault points for a job that made `n` calls: every one of up to 24 calls;
// else the first and last three and 12 spread between.
std::vector<std::int64_t> Points(std::int64_t n) {
  std::set<std::int64_t> points;
  if (n <= 24) {
    for (std::int64_t p = 1; p <= n; ++p) points.insert(p);
  } else {
    for (std::int64_t p : {std::int64_t{1}, std::int64_t{2}, std::int64_t{3}, n - 2, n - 1, n}) points.insert(p);
    for (int k = 1; k <= 12; ++k) points.insert(n * k / 13);
  }
  return {points.begin(), points.end()};
}

struct Tally {
  int tried = 0;
  int failed = 0;  // the job reported the fault
};

// A job on `root` (a fresh copy for every run). `before` is the content of the
// dataset before the job (empty: the job creates it), `after` its content
// after a successful run.
struct Job {
  std::string name;
  std::function<void(const std::string& root)> prepare;
  // `fs`: the FileSystem to pass in the job's options; nullptr for a job whose
  // options take none (it then runs with the FileSystem installed as the
  // process default).
  std::function<Status(const std::string& root, FileSystem* fs)> run;
  // Where a failed job's output must be gone (a pack file); may be empty.
  std::function<std::string(const std::string& root)> output;
  // False for a job that writes elsewhere (pack): the dataset stays as it was.
  bool changes_dataset = true;
  // Whether run() passes `fs` on in its options.
  bool takes_file_system = false;
};

// Run `job` on `root` with every file call going to `fs`: passed in its
// options, where the checked path never reaches the process default (a
// counting FileSystem installed there sees no call), or installed as that
// default for a job whose options take none.
Status RunOn(const Job& job, const std::string& root, FileSystem* fs) {
  if (!job.takes_file_system) {
    ScopedFileSystem installed(fs);
    return job.run(root, nullptr);
  }
  FaultFileSystem stray;
  Status st;
  {
    ScopedFileSystem installed(&stray);
    st = job.run(root, fs);
  }
  for (FaultOp op : testing::kAllFaultOps) {
    EXPECT_EQ(stray.count(op), 0) << job.name << ": " << testing::FaultOpName(op)
                                  << " calls bypassed the FileSystem passed in";
  }
  return st;
}

void RunWithFaults(const Job& job) {
  TempDir tmp;
  const std::string pristine = tmp.path() + "/pristine";
  job.prepare(pristine);
  const std::string before = fs::exists(pristine + "/dataset_info.json") ? Content(pristine) : "";

  // A healthy run: how many calls of each kind, and what a good run gives.
  std::string after;
  FaultFileSystem counter;
  {
    const std::string root = tmp.path() + "/count";
    testing::CopyTree(pristine, root);
    ASSERT_OK(RunOn(job, root, &counter));
    after = Content(root);
    ExpectCleanDataset(root, job.name + " healthy run");
  }
  if (job.changes_dataset) {
    ASSERT_NE(after, before) << job.name << " changes nothing";
  } else {
    ASSERT_EQ(after, before) << job.name << " changed the dataset";
  }
  if (job.output) {
    ASSERT_TRUE(fs::exists(job.output(tmp.path() + "/count"))) << job.name << " wrote nothing";
  }

  std::map<std::string, Tally> tally;
  int run_id = 0;
  const auto attempt = [&](const FaultPlan& plan, const std::string& label) {
    const std::string root = tmp.path() + "/run" + std::to_string(run_id++);
    testing::CopyTree(pristine, root);
    FaultFileSystem faulty(plan);
    const Status st = RunOn(job, root, &faulty);
    const std::string context = job.name + " with " + label + " (" + (st.ok() ? "succeeded" : st.ToString()) + ")";
    Tally& t = tally[std::string(testing::FaultOpName(plan.op))];
    ++t.tried;
    if (st.ok()) {
      // Tolerated (a short write, a best-effort fsync): the job is complete. A
      // failed unlink may leave what the job was removing after its commit (a
      // recompress's old tree, a writer's checks spool), which `sedpack fix
      // --gc` removes.
      EXPECT_EQ(Content(root), after) << context << " succeeded with other content";
      ExpectCleanDataset(root, context, plan.op == FaultOp::kUnlink);
    } else {
      ++t.failed;
      EXPECT_TRUE(faulty.fired()) << context << " failed without the fault: " << st.ToString();
      EXPECT_NE(st.message().find(tmp.path()), std::string::npos)
          << context << ": the error names no file: " << st.ToString();
      if (before.empty()) {
        // A dataset the job was creating: nothing of it is left, or an empty
        // dataset that checks clean.
        if (fs::exists(root + "/dataset_info.json")) ExpectCleanDataset(root, context);
      } else {
        EXPECT_EQ(Content(root), before) << context << ": the dataset is not at its last commit after "
                                         << st.ToString();
        ExpectCleanDataset(root, context);
      }
      if (job.output) {
        EXPECT_FALSE(fs::exists(job.output(root))) << context << ": the failed job's output is left";
      }
    }
    fs::remove_all(root);
  };

  for (FaultOp op : testing::kAllFaultOps) {
    const std::int64_t n = counter.count(op);
    for (std::int64_t at : Points(n)) {
      attempt(testing::FaultAt(op, at), std::string(testing::FaultOpName(op)) + " #" + std::to_string(at) + " of " +
                        std::to_string(n));
    }
  }
  // A disk that fills up half way and stays full.
  if (const std::int64_t n = counter.count(FaultOp::kWrite); n > 0) {
    const FaultPlan plan = testing::FullDiskFrom(std::max<std::int64_t>(1, n / 2));
    attempt(plan, "a full disk from write #" + std::to_string(plan.at));
  }
  // Short writes lose nothing.
  {
    FaultPlan plan;
    plan.short_writes = true;
    const std::string root = tmp.path() + "/short";
    testing::CopyTree(pristine, root);
    FaultFileSystem faulty(plan);
    ASSERT_OK(RunOn(job, root, &faulty));
    EXPECT_EQ(Content(root), after) << job.name << " with short writes";
  }
  std::string summary;
  int total = 0;
  for (const auto& [op, t] : tally) {
    summary += " " + op + ": " + std::to_string(t.tried) + " (" + std::to_string(t.failed) + " failed)";
    total += t.tried;
  }
  std::printf("[faults] %s: %d fault points%s\n", job.name.c_str(), total, summary.c_str());
}

std::shared_ptr<Dataset> MakeEmpty(const std::string& root, Compression compression = Compression::kLz4) {
  auto ds = Dataset::Create(root, Metadata{}, Structure(compression));
  EXPECT_TRUE(ds.ok()) << ds.status().ToString();
  return ds.ok() ? *ds : nullptr;
}

void MakeFilled(const std::string& root) {
  auto ds = MakeEmpty(root);
  ASSERT_TRUE(ds);
  ASSERT_OK(Fill(ds, "first", 0, 18));
}

// A Filler writing a new dataset with `compression` (the job is named `name`).
Job FreshWriterJob(std::string name, Compression compression) {
  return Job{std::move(name), [](const std::string& root) { fs::create_directories(root); },
             [compression](const std::string& root, FileSystem* fs) -> Status {
               SEDPACK_ASSIGN_OR_RETURN(auto ds,
                                        Dataset::Create(root, Metadata{}, Structure(compression), OnFileSystem(fs)));
               return Fill(ds, "job", 0, 18);
             },
             {}, true, true};
}

TEST(FaultTest, WriterOfAFreshDataset) { RunWithFaults(FreshWriterJob("writer", Compression::kLz4)); }

// GZIP shards are compressed, hashed and written in one streamed pass.
TEST(FaultTest, StreamedGzipWriter) { RunWithFaults(FreshWriterJob("gzip writer", Compression::kGzip)); }

TEST(FaultTest, Append) {
  RunWithFaults(Job{"append", MakeFilled,
                    [](const std::string& root, FileSystem* fs) -> Status {
                      SEDPACK_ASSIGN_OR_RETURN(auto ds, Dataset::Open(root, OnFileSystem(fs)));
                      return Fill(ds, "second", 100, 14);
                    },
                    {}, true, true});
}

TEST(FaultTest, RecompressInPlace) {
  RunWithFaults(Job{"recompress", MakeFilled,
                    [](const std::string& root, FileSystem*) -> Status {
                      SerialComm comm;
                      RecompressOptions o;
                      o.compression = Compression::kZstd;
                      o.threads = 2;
                      return Recompress(comm, root, o).status();
                    },
                    {}});
}

TEST(FaultTest, Pack) {
  RunWithFaults(Job{"pack", MakeFilled,
                    [](const std::string& root, FileSystem*) -> Status {
                      // The pack goes beside the dataset's files, into the copy.
                      return PackTree(root, root + ".pack").status();
                    },
                    [](const std::string& root) { return root + ".pack"; }, false});
}

}  // namespace
}  // namespace sedpack
