// SPDX-License-Identifier: Apache-2.0
// I/O faults (support/fault_fs.h) on one rank of the parallel writer, serially
// and under mpirun: the last rank's file system fails its n-th write, create,
// mkdir or rename. Every rank then fails, the dataset keeps its last commit
// and checks clean, and no rank leaves a file behind. A resumable job whose
// disk fills on one rank, or on every rank, fails on all of them, keeps its
// finished shards, and the same job run again ends equal to an uninterrupted
// run. So does a journaled index build, rerun on the same ranks or serially,
// and one stopped on any number of ranks (1, 2, 4) and rerun on another.
#include <algorithm>
#include <atomic>
#include <cerrno>
#include <filesystem>
#include <optional>
#include <set>
#include <string_view>

#include "mpi/shared_dir.h"
#include "mpi/test_comm.h"
#include "mpi/thread_ranks.h"
#include "sedpack/check/check.h"
#include "sedpack/dataset/reader.h"
#include "sedpack/maintain/fix.h"
#include "index/index_internal.h"
#include "sedpack/mpi/distributed_index.h"
#include "sedpack/mpi/distributed_write.h"
#include "support/fault_fs.h"
#include "support/full_disk.h"
#include "support/test_support.h"

namespace sedpack {
namespace {

namespace fs = std::filesystem;
using testing::FaultFileSystem;
using testing::FaultOp;
using testing::SharedDir;
using testing::TestComm;

DistributedWriteOptions Options() {
  DistributedWriteOptions o;
  DatasetStructure s;
  s.saved_data_description = {{"x", "int64", {2}, {}}};
  s.compression = Compression::kLz4;
  s.examples_per_shard = 3;
  s.hash_checksum_algorithms = {HashAlgorithm::kSha256};
  o.create_structure = s;
  o.filler.concurrency = 2;
  return o;
}

// Every rank writes its share of [first, last) into the dataset at `root`,
// through `fs` (nullptr: the process default).
Status Job(const std::string& root, std::int64_t first, std::int64_t last, FileSystem* fs = nullptr) {
  const int rank = TestComm().rank(), size = TestComm().size();
  DistributedWriteOptions options = Options();
  options.file_system = fs;
  SEDPACK_ASSIGN_OR_RETURN(auto w, DistributedWriter::Open(TestComm(), root, options));
  Status st;
  for (std::int64_t k = first + rank; k < last && st.ok(); k += size) {
    std::vector<std::int64_t> x = {k, -k};
    std::vector<ValueView> v = {ValueView::Array(x, {2})};
    st = w->WriteExample(k % 3 == 2 ? Split::kTest : Split::kTrain, v);
  }
  if (!st.ok()) w->Fail(st);
  return w->Finish();
}

// The ids of both splits, sorted, or a note of what could not be read.
std::vector<std::int64_t> Ids(const std::string& root) {
  std::vector<std::int64_t> out;
  auto ds = Dataset::Open(root);
  if (!ds.ok()) return {-1};
  for (Split s : {Split::kTrain, Split::kTest}) {
    if (!(*ds)->info().FindSplit(s)) continue;
    auto r = ExampleReader::Make(*ds, s);
    if (!r.ok()) return {-2};
    for (;;) {
      auto e = (*r)->Next();
      if (!e.ok()) return {-3};
      if (!*e) break;
      out.push_back((*e)->Get(0).At<std::int64_t>(0));
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<std::int64_t> Range(std::int64_t a, std::int64_t b) {
  std::vector<std::int64_t> v;
  for (auto i = a; i < b; ++i) v.push_back(i);
  return v;
}

void ExpectNothingLeft(const std::string& root, const std::string& context) {
  auto report = CheckDataset(root);
  ASSERT_TRUE(report.ok()) << context << ": " << report.status().ToString();
  for (const auto& p : report->problems) ADD_FAILURE() << context << ": " << p.path << ": " << p.message;
  auto ds = Dataset::Open(root);
  ASSERT_TRUE(ds.ok()) << context;
  auto diagnosis = DiagnoseDataset(**ds);
  ASSERT_TRUE(diagnosis.ok()) << context;
  for (const Leftover& l : diagnosis->leftovers) {
    ADD_FAILURE() << context << ": left behind: " << LeftoverKindName(l.kind) << " " << l.path;
  }
}

// What another job that ends does to this one: it removes the jobs folder when
// it finds it empty, which it is between this job's making it and its lock's
// first file there. Once, before the first file of a job-id lock is created.
class JobsFolderTaker : public FileSystemWrapper {
 public:
  JobsFolderTaker() : FileSystemWrapper(DefaultFileSystem()) {}
  int Open(const char* path, int flags, unsigned mode) override {
    const std::string_view p(path);
    if (p.find("/.sedpack-hpc/jobs/") != std::string_view::npos && p.find(".lock.pending-") != std::string_view::npos &&
        !taken_.exchange(true)) {
      removed_ = target()->Rmdir(std::filesystem::path(path).parent_path().c_str()) == 0;
    }
    return FileSystemWrapper::Open(path, flags, mode);
  }
  bool removed() const { return removed_; }

 private:
  std::atomic<bool> taken_{false};
  bool removed_ = false;
};

// Jobs that end remove the empty jobs folder while others start: a job whose
// folder went between its making it and its lock's first file makes it again
// and goes on (concurrent appends failed with "cannot create ...lock.pending-
// ...: No such file or directory").
TEST(DistributedFaultTest, AJobWhoseJobsFolderIsRemovedBeforeItsLockMakesItAgain) {
  SharedDir dir;
  const int rank = TestComm().rank();
  const std::string root = dir.path() + "/ds";
  ASSERT_OK(Job(root, 0, 12));
  JobsFolderTaker taker;
  ASSERT_OK(Job(root, 100, 112, rank == 0 ? &taker : nullptr));
  if (rank == 0) {
    EXPECT_TRUE(taker.removed()) << "the folder was not removed: the test did not test";
    std::vector<std::int64_t> want = Range(0, 12), more = Range(100, 112);
    want.insert(want.end(), more.begin(), more.end());
    EXPECT_EQ(Ids(root), want);
    ExpectNothingLeft(root, "after the folder was made again");
  }
  ASSERT_OK(TestComm().Barrier());
}

TEST(DistributedFaultTest, AFaultOnOneRankFailsTheJobAndLeavesNothing) {
  SharedDir dir;
  const int rank = TestComm().rank(), size = TestComm().size();
  const int victim = size - 1;
  const std::string pristine = dir.path() + "/pristine";
  ASSERT_OK(Job(pristine, 0, 12));

  // A healthy append counts the victim's calls.
  FaultFileSystem counter;
  {
    const std::string root = dir.path() + "/count";
    if (rank == 0) testing::CopyTree(pristine, root);
    ASSERT_OK(TestComm().Barrier());
    ASSERT_OK(Job(root, 100, 130, rank == victim ? &counter : nullptr));
    if (rank == 0) ExpectNothingLeft(root, "healthy run");
  }
  // Every rank takes the victim's counts, so that all run the same plan.
  std::vector<std::int64_t> counts;
  for (FaultOp op : {FaultOp::kWrite, FaultOp::kCreate, FaultOp::kMkdir, FaultOp::kRename}) {
    std::int64_t n = rank == victim ? counter.count(op) : 0;
    ASSERT_OK_AND_ASSIGN(n, TestComm().AllreduceSum(n));
    counts.push_back(n);
  }
  int tried = 0, failed = 0, run = 0;
  const FaultOp ops[] = {FaultOp::kWrite, FaultOp::kCreate, FaultOp::kMkdir, FaultOp::kRename};
  for (std::size_t o = 0; o < 4; ++o) {
    const std::int64_t n = counts[o];
    std::set<std::int64_t> points = {1, n / 3, (2 * n) / 3, n};
    for (std::int64_t at : points) {
      if (at < 1 || at > n) continue;
      const std::string root = dir.path() + "/run" + std::to_string(run++);
      if (rank == 0) testing::CopyTree(pristine, root);
      ASSERT_OK(TestComm().Barrier());
      FaultFileSystem faulty(testing::FaultAt(ops[o], at));
      const Status st = Job(root, 100, 130, rank == victim ? &faulty : nullptr);
      const std::string context = std::string(testing::FaultOpName(ops[o])) + " #" + std::to_string(at) + " of " +
                                  std::to_string(n) + " on rank " + std::to_string(victim) + " (" +
                                  (st.ok() ? "succeeded" : st.ToString()) + ")";
      // Threads racing for the same folders make the number of mkdir calls
      // vary by a few: a point past this run's last call does not fire.
      ASSERT_OK_AND_ASSIGN(std::int64_t fired, TestComm().AllreduceSum(std::int64_t{faulty.fired() ? 1 : 0}));
      if (fired > 0) ++tried;
      EXPECT_TRUE(fired > 0 || st.ok()) << context << ": failed without the fault";
      // All ranks agree on the outcome.
      ASSERT_OK_AND_ASSIGN(std::int64_t oks, TestComm().AllreduceSum(std::int64_t{st.ok() ? 1 : 0}));
      EXPECT_TRUE(oks == 0 || oks == size) << context;
      if (!st.ok()) ++failed;
      ASSERT_OK(TestComm().Barrier());
      if (rank == 0) {
        if (st.ok()) {
          std::vector<std::int64_t> want = Range(0, 12);
          for (std::int64_t k : Range(100, 130)) want.push_back(k);
          EXPECT_EQ(Ids(root), want) << context;
        } else {
          EXPECT_EQ(Ids(root), Range(0, 12)) << context;
        }
        ExpectNothingLeft(root, context);
        fs::remove_all(root);
      }
      ASSERT_OK(TestComm().Barrier());
    }
  }
  if (rank == 0) {
    std::printf("[faults] parallel writer, %d ranks: %d fault points on rank %d, %d failed the job\n", size, tried,
                victim, failed);
  }
}

// A resumable job (the same id and parameters every run) appending [100, 160)
// to the dataset at `root` over `comm`, each rank through `fs` (nullptr: the
// process default); each rank skips the examples of its share its journal
// kept. The shares depend on the number of ranks, which the job's parameters
// name: a rerun with another number is refused.
testing::RunResult ResumableJob(const std::string& root, FileSystem* fs, Comm& comm = TestComm()) {
  const int rank = comm.rank(), size = comm.size();
  DistributedWriteOptions options = Options();
  options.file_system = fs;
  options.job_id = "fill";
  options.resume_parameters = {{"ranks", std::to_string(size)}, {"examples", "100-160"}};
  auto w = DistributedWriter::Open(comm, root, options);
  if (!w.ok()) return {w.status()};
  return testing::WriteShareAndFinish(**w, 100 + rank, 160, size,
                                      [](std::int64_t k) { return k % 3 == 2 ? Split::kTest : Split::kTrain; });
}

TEST(DistributedFaultTest, AFullDiskStopsAResumableJobOnAllRanksAndTheRerunFinishesIt) {
  SharedDir dir;
  const int rank = TestComm().rank(), size = TestComm().size();
  const int victim = size - 1;
  const std::string pristine = dir.path() + "/pristine";
  ASSERT_OK(Job(pristine, 0, 12));
  const std::string reference = dir.path() + "/ref";
  if (rank == 0) testing::CopyTree(pristine, reference);
  ASSERT_OK(TestComm().Barrier());
  ASSERT_OK(ResumableJob(reference, nullptr).status);
  std::vector<std::string> want;
  if (rank == 0) {
    want = testing::ReadAll(reference);
    ASSERT_EQ(want.size(), 72u);
  }
  // A healthy run counts each rank's writes.
  const std::string count = dir.path() + "/count";
  if (rank == 0) testing::CopyTree(pristine, count);
  ASSERT_OK(TestComm().Barrier());
  FaultFileSystem counter;
  ASSERT_OK(ResumableJob(count, &counter).status);
  const std::int64_t mine = counter.count(FaultOp::kWrite);
  ASSERT_OK_AND_ASSIGN(const std::int64_t victims, TestComm().AllreduceSum(rank == victim ? mine : 0));
  int run = 0;
  for (const bool every_rank : {false, true}) {
    const std::int64_t writes = every_rank ? mine : victims;
    const std::int64_t step = std::max<std::int64_t>(1, writes / 12);
    // Shards are journaled in their order once written: on a loaded machine a
    // rank's workers can write several before its first is journaled, and a
    // stop at a third of the writes then leaves no rank anything to keep. That
    // stop is tried again later (a few times) rather than passing without a
    // kept shard; every rank sees the same sums, so all retry together.
    std::int64_t later = 0;
    for (int third = 1; third <= 2; ++third) {
      const std::string root = dir.path() + "/run" + std::to_string(run++);
      const std::int64_t at = writes * third / 3 + later;
      const std::string context = std::string(every_rank ? "every rank's" : "rank " + std::to_string(victim) + "'s") +
                                  " disk full from write " + std::to_string(at) + " (" + std::to_string(third) +
                                  "/3) of " + std::to_string(size) + " ranks";
      SCOPED_TRACE(context);
      if (rank == 0) testing::CopyTree(pristine, root);
      ASSERT_OK(TestComm().Barrier());
      FaultFileSystem full(testing::FullDiskFrom(at));
      const Status stopped = ResumableJob(root, every_rank || rank == victim ? &full : nullptr).status;
      // The job fails on every rank, and returns on every rank (none hangs).
      ASSERT_OK_AND_ASSIGN(const std::int64_t oks, TestComm().AllreduceSum(std::int64_t{stopped.ok() ? 1 : 0}));
      EXPECT_EQ(oks, 0) << stopped.ToString();
      ASSERT_OK_AND_ASSIGN(const std::int64_t fired, TestComm().AllreduceSum(std::int64_t{full.fired() ? 1 : 0}));
      EXPECT_GT(fired, 0);
      ASSERT_OK(TestComm().Barrier());
      // Readers see the last commit; check notes the stopped job and nothing else.
      const bool damage = third == 2;
      if (rank == 0) {
        EXPECT_EQ(Ids(root), Range(0, 12));
        testing::ExpectOnlyStoppedJob(root, "fill");
        // The same job run again on one rank: the kept shards are of other
        // shares, so it is refused, and keeps them for the rerun below.
        if (size > 1 && !damage) {
          auto shard_files = [&] {
            std::vector<std::string> files;
            for (const auto& e : fs::recursive_directory_iterator(root)) {
              if (e.is_regular_file() && e.path().string().find("/fill-r") != std::string::npos) {
                files.push_back(e.path().string());
              }
            }
            std::sort(files.begin(), files.end());
            return files;
          };
          const std::vector<std::string> kept = shard_files();
          EXPECT_FALSE(kept.empty());
          SerialComm one;
          const Status other = ResumableJob(root, nullptr, one).status;
          EXPECT_EQ(other.code(), StatusCode::kInvalidArgument) << other.ToString();
          EXPECT_NE(other.message().find("ranks"), std::string::npos) << other.ToString();
          EXPECT_EQ(shard_files(), kept);
        }
        // The second stop: every rank's kept shards damaged, so none may be kept.
        if (damage) {
          for (Split s : {Split::kTrain, Split::kTest}) {
            const std::string split_dir = root + "/" + std::string(SplitName(s));
            for (const auto& e : fs::directory_iterator(split_dir)) {
              if (e.path().filename().string().rfind("fill-r", 0) == 0) testing::DamageShardFiles(e.path().string());
            }
          }
        }
      }
      ASSERT_OK(TestComm().Barrier());
      const testing::RunResult resumed = ResumableJob(root, nullptr);
      if (!damage && resumed.status.ok() && resumed.journal_shards == 0 && later < 3 * step) {
        later += step;
        if (rank == 0) {
          EXPECT_EQ(testing::ReadAll(root), want);
        }
        ASSERT_OK(TestComm().Barrier());
        --third;
        continue;
      }
      testing::ExpectResumed(resumed, damage);
      ASSERT_OK(TestComm().Barrier());
      if (rank == 0) {
        EXPECT_EQ(testing::ReadAll(root), want);
        ExpectNothingLeft(root, context);
      }
      ASSERT_OK(TestComm().Barrier());
    }
  }
}

// Rank 0's part of the index-build tests: the deep dataset in DIR/source, and
// in *rows the index rows of an uninterrupted serial build of a copy of it
// (DIR/ref), which every resumed build must reproduce.
void MakeDeepSourceAndItsIndex(const std::string& dir, std::vector<std::string>* rows) {
  const std::string source = dir + "/source", reference = dir + "/ref";
  testing::MakeDeepDataset(source);
  testing::CopyTree(source, reference);
  auto ds = Dataset::Open(reference);
  ASSERT_OK(ds.status());
  ASSERT_OK(BuildIndexFile(*ds, 1).status());
  *rows = testing::IndexRows(reference);
}

// A journaled distributed index build whose disk fills half way through the
// last rank's writes, or every rank's: it fails on every rank leaving no index
// file, and a rerun on the same ranks or serially (the same job) keeps the
// subtrees journaled and writes the index of an uninterrupted build.
TEST(DistributedFaultTest, AFullDiskStopsAJournaledIndexBuildAndAnyRerunFinishesIt) {
  SharedDir dir;
  const int rank = TestComm().rank(), size = TestComm().size();
  const int victim = size - 1;
  const std::string source = dir.path() + "/source";
  std::vector<std::string> want;
  if (rank == 0) {
    ASSERT_NO_FATAL_FAILURE(MakeDeepSourceAndItsIndex(dir.path(), &want));
    ASSERT_EQ(want.size(), 96u);
  }
  ASSERT_OK(TestComm().Barrier());
  DistributedIndexReport report;
  DistributedIndexOptions options;
  options.journal = true;
  options.report = &report;
  options.subtrees_per_rank = 8;
  // The build takes no FileSystem: each rank's process default is the fault one.
  const std::string count = dir.path() + "/count";
  if (rank == 0) testing::CopyTree(source, count);
  ASSERT_OK(TestComm().Barrier());
  std::int64_t mine = 0;
  {
    FaultFileSystem counter;
    testing::ScopedFileSystem scoped(&counter);
    ASSERT_OK(BuildIndexDistributed(TestComm(), count, options).status());
    mine = counter.count(FaultOp::kWrite);
  }
  ASSERT_OK_AND_ASSIGN(const std::int64_t victims, TestComm().AllreduceSum(rank == victim ? mine : 0));
  int run = 0;
  for (const bool every_rank : {false, true}) {
    for (const bool serial_rerun : {false, true}) {
      const std::string root = dir.path() + "/index" + std::to_string(run++);
      // Half way; a rank of few writes (one rank: the journal's header, its
      // records, the index) from its last, the index file's.
      const std::int64_t n = every_rank ? mine : victims;
      const std::int64_t at = n >= 8 ? n / 2 : n;
      SCOPED_TRACE(std::string(every_rank ? "every rank's" : "rank " + std::to_string(victim) + "'s") +
                   " disk full from write " + std::to_string(at) + " of " + std::to_string(size) + " ranks, rerun " +
                   (serial_rerun ? "serially" : "on the same ranks"));
      if (rank == 0) testing::CopyTree(source, root);
      ASSERT_OK(TestComm().Barrier());
      FaultFileSystem full(testing::FullDiskFrom(at));
      Status stopped;
      {
        std::optional<testing::ScopedFileSystem> scoped;
        if (every_rank || rank == victim) scoped.emplace(&full);
        stopped = BuildIndexDistributed(TestComm(), root, options).status();
      }
      ASSERT_OK_AND_ASSIGN(const std::int64_t oks, TestComm().AllreduceSum(std::int64_t{stopped.ok() ? 1 : 0}));
      EXPECT_EQ(oks, 0) << stopped.ToString();
      ASSERT_OK_AND_ASSIGN(const std::int64_t fired, TestComm().AllreduceSum(std::int64_t{full.fired() ? 1 : 0}));
      EXPECT_GT(fired, 0);
      ASSERT_OK(TestComm().Barrier());
      if (rank == 0) {
        auto index = CheckIndex(root);
        ASSERT_OK(index.status());
        EXPECT_EQ(index->freshness, IndexFreshness::kMissing);
      }
      testing::RunResult resumed;
      if (serial_rerun) {
        if (rank == 0) {
          auto ds = Dataset::Open(root);
          ASSERT_OK(ds.status());
          auto built = BuildIndexFileJournaled(*ds, 2, IndexJobOptions{});
          resumed = {built.status()};
          if (built.ok()) resumed = {built.status(), built->units_kept, built->units};
        }
      } else {
        report = {};
        resumed = {BuildIndexDistributed(TestComm(), root, options).status(), report.units_kept, report.units};
      }
      ASSERT_OK(TestComm().Barrier());
      if (rank == 0) {
        // The serial build plans its own subtrees (four a thread): it finds
        // the stopped run's inside them when that plan cut the tree finer.
        testing::ExpectResumed(resumed, false);
        EXPECT_EQ(testing::IndexRows(root), want);
      }
      ASSERT_OK(TestComm().Barrier());
    }
  }
}

// A journaled index build stopped half-way (a full disk on every rank) on one
// number of ranks and rerun on another keeps what the stopped run journaled
// (k > 0 of n subtrees, reported as the CLI prints it) and writes the bytes of
// an uninterrupted build, both ways between this run's ranks (TestComm) and
// each other count: 1 (the single-process build the CLI runs on one rank) and
// 2 and 4 ranks as threads of rank 0 (ThreadRanks). The plans differ: a plan
// cut coarser than the stopped run's finds its subtrees inside its own, one
// cut finer must not cut them.
TEST(DistributedFaultTest, AJournaledIndexBuildStoppedOnSomeRanksResumesOnAnyOther) {
  SharedDir dir;
  const int rank = TestComm().rank(), size = TestComm().size();
  const std::string source = dir.path() + "/source";
  std::vector<std::string> want;
  if (rank == 0) {
    ASSERT_NO_FATAL_FAILURE(MakeDeepSourceAndItsIndex(dir.path(), &want));
  }
  ASSERT_OK(TestComm().Barrier());
  DistributedIndexOptions options;
  options.journal = true;
  // The deep dataset has 24 subtrees at depth 1, 47 at depth 2 and 72 at
  // depth 3: one rank (or the single-process build) walks those at depth 1, 2
  // ranks those at depth 2, 4 ranks those at depth 3.
  options.subtrees_per_rank = 16;
  // One build of `root` on `ranks` ranks: 0 for the single-process build;
  // TestComm's size for this run's ranks (every rank takes part), otherwise
  // threads of rank 0. Its outcome on rank 0.
  auto build = [&](int ranks, const std::string& root) -> testing::RunResult {
    if (ranks == 0) {
      auto ds = Dataset::Open(root);
      if (!ds.ok()) return {ds.status()};
      auto built = BuildIndexFileJournaled(*ds, 2, IndexJobOptions{});
      if (!built.ok()) return {built.status()};
      return {built.status(), built->units_kept, built->units};
    }
    DistributedIndexReport report;
    DistributedIndexOptions o = options;
    o.report = &report;
    if (ranks == size) {
      const Status st = BuildIndexDistributed(TestComm(), root, o).status();
      return {st, report.units_kept, report.units};
    }
    std::vector<Status> st(static_cast<std::size_t>(ranks));
    testing::ThreadRanks(ranks).Run([&](Comm& comm) {
      st[static_cast<std::size_t>(comm.rank())] = BuildIndexDistributed(comm, root, o).status();
    });
    // A stopped build fails on every rank, a finished one succeeds on every rank.
    for (const Status& s : st) {
      if (s.ok() != st[0].ok()) return {Status::Internal("the ranks disagree: ", s.ToString(), " against ", st[0].ToString())};
    }
    return {st[0], report.units_kept, report.units};
  };
  auto name = [&](int ranks) {
    return ranks == 0 ? std::string("1 process") : std::to_string(ranks) + (ranks == size ? " MPI ranks" : " thread ranks");
  };
  // Runs `ranks`' build where it runs: this run's ranks together, or rank 0
  // alone while the others wait. With a disk full from the half of what a
  // counting run of the same build writes (per process).
  auto run = [&](int ranks, const std::string& root, bool stop) -> testing::RunResult {
    const bool here = ranks == size || rank == 0;
    testing::RunResult out;
    if (here) {
      std::int64_t writes = 0;
      if (stop) {
        const std::string count = root + ".count";
        if (ranks != size || rank == 0) testing::CopyTree(source, count);
        if (ranks == size) EXPECT_OK(TestComm().Barrier());
        FaultFileSystem counter;
        {
          testing::ScopedFileSystem scoped(&counter);
          EXPECT_OK(build(ranks, count).status);
        }
        writes = counter.count(FaultOp::kWrite);
      }
      FaultFileSystem full(testing::FullDiskFrom(writes >= 8 ? writes / 2 : writes));
      std::optional<testing::ScopedFileSystem> scoped;
      if (stop) scoped.emplace(&full);
      out = build(ranks, root);
      if (stop) {
        EXPECT_TRUE(full.fired() || ranks == size) << name(ranks) << ": the disk never filled";
      }
    }
    EXPECT_OK(TestComm().Barrier());
    return out;
  };
  std::vector<int> others = {0};
  for (int n : {1, 2, 4}) {
    if (n != size) others.push_back(n);
  }
  int cases = 0;
  for (int other : others) {
    for (const bool this_first : {true, false}) {
      const int first = this_first ? size : other, then = this_first ? other : size;
      SCOPED_TRACE("stopped on " + name(first) + ", rerun on " + name(then));
      const std::string root = dir.path() + "/case" + std::to_string(cases++);
      if (rank == 0) testing::CopyTree(source, root);
      ASSERT_OK(TestComm().Barrier());
      const testing::RunResult stopped = run(first, root, true);
      if (rank == 0) {
        EXPECT_FALSE(stopped.status.ok());
        auto index = CheckIndex(root);
        ASSERT_OK(index.status());
        EXPECT_EQ(index->freshness, IndexFreshness::kMissing);
      }
      const testing::RunResult resumed = run(then, root, false);
      if (rank == 0) {
        testing::ExpectResumed(resumed, false);
        EXPECT_EQ(testing::IndexRows(root), want);
      }
      ASSERT_OK(TestComm().Barrier());
    }
  }
}

}  // namespace
}  // namespace sedpack
