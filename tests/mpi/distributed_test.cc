// SPDX-License-Identifier: Apache-2.0
// Parallel writing: runs on one rank (SerialComm) and under mpirun (MpiComm).
#include <algorithm>
#include <filesystem>
#include <map>
#include <sstream>
#include <thread>
#include <chrono>

#include "mpi/shared_dir.h"
#include "mpi/test_comm.h"
#include "sedpack/check/check.h"
#include "sedpack/dataset/reader.h"
#include "sedpack/io/file.h"
#include "sedpack/check/verify.h"
#include "sedpack/mpi/distributed_write.h"
#include "comm/status_wire.h"
#include <fstream>
#include "support/test_support.h"
#include "codecs/decode_points_internal.h"
#include "sidecar/checks_internal.h"
#include "sidecar/sidecar_files.h"

namespace sedpack {
namespace {

using testing::SharedDir;
using testing::TestComm;


DatasetStructure Structure() {
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
  s.hash_checksum_algorithms = {HashAlgorithm::kSha256, HashAlgorithm::kXxh64};
  return s;
}

DistributedWriteOptions Options() {
  DistributedWriteOptions o;
  o.create_structure = Structure();
  o.filler.concurrency = 1;
  return o;
}

Status Write(DistributedWriter& w, Split split, std::int64_t k) {
  std::vector<std::int64_t> x = {k, k * k};
  const std::string tag = "k" + std::to_string(k);
  std::vector<ValueView> v = {ValueView::Array(x, {2}), ValueView::Str(tag)};
  return w.WriteExample(split, v);
}

// Every example id in a split (sorted), read with the core reader.
std::vector<std::int64_t> Ids(const std::string& root, Split split) {
  std::vector<std::int64_t> out;
  auto ds = Dataset::Open(root);
  EXPECT_TRUE(ds.ok()) << ds.status().ToString();
  if (!ds.ok() || !(*ds)->info().FindSplit(split)) return out;
  auto reader = ExampleReader::Make(*ds, split);
  EXPECT_TRUE(reader.ok()) << reader.status().ToString();
  for (;;) {
    auto e = (*reader)->Next();
    EXPECT_TRUE(e.ok()) << e.status().ToString();
    if (!e.ok() || !*e) break;
    out.push_back((*e)->Get(0).At<std::int64_t>(0));
    EXPECT_EQ((*e)->Get(1).AsStringView(), "k" + std::to_string(out.back()));
  }
  std::sort(out.begin(), out.end());
  return out;
}

void ExpectCleanCheck(const std::string& root) {
  CheckOptions options;
  options.deep = true;
  auto report = CheckDataset(root, options);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  // Orphans (a dead job's shards) are warnings; everything listed must be intact.
  for (const auto& p : report->problems) {
    if (!p.warning()) ADD_FAILURE() << p.path << ": " << p.message;
  }
}

std::vector<std::int64_t> Range(std::int64_t a, std::int64_t b) {
  std::vector<std::int64_t> v;
  for (auto i = a; i < b; ++i) v.push_back(i);
  return v;
}

TEST(DistributedWriteTest, EveryRankWritesItsShareAndRankZeroMerges) {
  SharedDir dir;
  const int rank = TestComm().rank(), size = TestComm().size();
  ASSERT_OK_AND_ASSIGN(auto w, DistributedWriter::Open(TestComm(), dir.path(), Options()));
  for (std::int64_t k = rank; k < 40; k += size) ASSERT_OK(Write(*w, Split::kTrain, k));
  ASSERT_OK(w->Finish());
  if (rank == 0) {
    EXPECT_EQ(Ids(dir.path(), Split::kTrain), Range(0, 40));
    ExpectCleanCheck(dir.path());
    ASSERT_OK_AND_ASSIGN(auto top, LoadShardsList(*w->dataset(), "train/shards_list.json"));
    EXPECT_EQ(top.children_shard_lists.size(), static_cast<std::size_t>(size));
    EXPECT_EQ(top.children_shard_lists[0].shard_list_info_file.file_path,
              "train/" + w->job_id() + "-r0/shards_list.json");
  }
  // Every rank sees the merged metadata after Finish.
  EXPECT_EQ(w->dataset()->info().FindSplit(Split::kTrain)->number_of_examples, 40);
}

TEST(DistributedWriteTest, RanksWriteDifferentSplitsAndSomeWriteNothing) {
  SharedDir dir;
  const int rank = TestComm().rank();
  ASSERT_OK_AND_ASSIGN(auto w, DistributedWriter::Open(TestComm(), dir.path(), Options()));
  // Rank 0: train; rank 1: test; rank 2: holdout; rank 3: nothing.
  const std::vector<Split> splits = {Split::kTrain, Split::kTest, Split::kHoldout};
  if (rank < 3) {
    for (std::int64_t k = 0; k < 5; ++k) ASSERT_OK(Write(*w, splits[rank], 100 * rank + k));
  }
  ASSERT_OK(w->Finish());
  if (rank == 0) {
    EXPECT_EQ(Ids(dir.path(), Split::kTrain), Range(0, 5));
    if (TestComm().size() > 1) {
      EXPECT_EQ(Ids(dir.path(), Split::kTest), Range(100, 105));
    }
    if (TestComm().size() > 2) {
      EXPECT_EQ(Ids(dir.path(), Split::kHoldout), Range(200, 205));
    }
    ExpectCleanCheck(dir.path());
  }
}

TEST(DistributedWriteTest, NoRankWritesAnything) {
  SharedDir dir;
  ASSERT_OK_AND_ASSIGN(auto w, DistributedWriter::Open(TestComm(), dir.path(), Options()));
  ASSERT_OK(w->Finish());
  EXPECT_TRUE(w->dataset()->info().splits.empty());
}

TEST(DistributedWriteTest, AppendToExistingDataset) {
  SharedDir dir;
  const int rank = TestComm().rank(), size = TestComm().size();
  for (int job = 0; job < 2; ++job) {
    ASSERT_OK_AND_ASSIGN(auto w, DistributedWriter::Open(TestComm(), dir.path(), Options()));
    for (std::int64_t k = 20 * job + rank; k < 20 * (job + 1); k += size) {
      ASSERT_OK(Write(*w, Split::kTrain, k));
    }
    ASSERT_OK(w->Finish());
  }
  if (rank == 0) {
    EXPECT_EQ(Ids(dir.path(), Split::kTrain), Range(0, 40));
    ExpectCleanCheck(dir.path());
  }
}

std::map<std::string, std::string> MetadataSnapshot(const std::string& root) {
  std::map<std::string, std::string> out;
  for (const char* f : {"dataset_info.json", "train/shards_list.json", "test/shards_list.json"}) {
    auto t = ReadFileText(root + "/" + f);
    out[f] = t.ok() ? *t : "<absent>";
  }
  return out;
}

TEST(DistributedWriteTest, FailureOnOneRankFailsAllAndLeavesDatasetAsItWas) {
  SharedDir dir;
  const int rank = TestComm().rank(), size = TestComm().size();
  {  // Some data first, so that there is something to keep intact.
    ASSERT_OK_AND_ASSIGN(auto w, DistributedWriter::Open(TestComm(), dir.path(), Options()));
    for (std::int64_t k = rank; k < 12; k += size) ASSERT_OK(Write(*w, Split::kTrain, k));
    ASSERT_OK(w->Finish());
  }
  std::map<std::string, std::string> before;
  if (rank == 0) before = MetadataSnapshot(dir.path());
  ASSERT_OK(TestComm().Barrier());

  const int victim = size - 1;
  ASSERT_OK_AND_ASSIGN(auto w, DistributedWriter::Open(TestComm(), dir.path(), Options()));
  Status seen;
  for (std::int64_t k = 1000 + rank; k < 1000 + 60 * size && seen.ok(); k += size) {
    if (rank == victim && k >= 1000 + 10 * size) {
      // A bad example: wrong shape. The writer refuses it and the job must fail.
      std::vector<std::int64_t> bad = {1, 2, 3};
      std::vector<ValueView> v = {ValueView::Array(bad, {3}), ValueView::Str("bad")};
      seen = w->WriteExample(Split::kTest, v);
      ASSERT_FALSE(seen.ok());
      break;
    }
    seen = Write(*w, k % 2 ? Split::kTest : Split::kTrain, k);
  }
  // Front-ends hand whatever stopped them back to Fail; an abort caused by
  // another rank must not hide the victim's reason.
  if (!seen.ok()) w->Fail(seen);
  const Status finish = w->Finish();
  EXPECT_FALSE(finish.ok()) << "rank " << rank;
  // The victim's own error, everyone else's an abort; told apart by the detail.
  EXPECT_EQ(DistributedWriter::IsAbort(finish), rank != victim) << "rank " << rank << ": " << finish.ToString();
  EXPECT_NE(finish.message().find("\"x\""), std::string::npos) << "rank " << rank << ": " << finish.ToString();
  if (rank != victim) {
    EXPECT_NE(finish.message().find("rank " + std::to_string(victim)), std::string::npos)
        << finish.ToString();
  }
  // Every rank took away its own shard folders: nothing is left to collect.
  for (Split s : {Split::kTrain, Split::kTest}) {
    EXPECT_FALSE(std::filesystem::exists(std::filesystem::path(dir.path()) / SplitName(s) / w->RankFolder()))
        << "rank " << rank;
  }
  if (rank == 0) {
    EXPECT_EQ(MetadataSnapshot(dir.path()), before);
    EXPECT_EQ(Ids(dir.path(), Split::kTrain), Range(0, 12));
    // The dead job's shards are orphans: reported as warnings, never as data.
    auto report = CheckDataset(dir.path(), {});
    ASSERT_TRUE(report.ok());
    EXPECT_TRUE(report->ok());
  }
  // A rerun succeeds and does not mix with the dead job's folders.
  ASSERT_OK_AND_ASSIGN(auto again, DistributedWriter::Open(TestComm(), dir.path(), Options()));
  EXPECT_NE(again->job_id(), w->job_id());
  for (std::int64_t k = 12 + rank; k < 20; k += size) ASSERT_OK(Write(*again, Split::kTrain, k));
  ASSERT_OK(again->Finish());
  if (rank == 0) {
    EXPECT_EQ(Ids(dir.path(), Split::kTrain), Range(0, 20));
    ExpectCleanCheck(dir.path());
  }
}

// ---- Statuses between ranks ----

TEST(StatusWireTest, EveryCodeAndDetailRoundTrips) {
  for (int c = 1; c <= static_cast<int>(StatusCode::kCancelled); ++c) {
    for (StatusDetail d : {StatusDetail::kNone, StatusDetail::kPeerAborted, StatusDetail::kOutsideRoot,
                           StatusDetail::kPathEscape}) {
      const Status sent(static_cast<StatusCode>(c), "line one\nline two: 3 2", d);
      const Status got = internal::DecodeStatus(internal::EncodeStatus(sent));
      EXPECT_EQ(got.code(), sent.code());
      EXPECT_EQ(got.detail(), d) << StatusDetailName(d);
      EXPECT_EQ(got.message(), sent.message());
    }
  }
  EXPECT_TRUE(internal::DecodeStatus(internal::EncodeStatus(Status::OK())).ok());
}

TEST(StatusWireTest, MalformedInputIsAnInternalError) {
  for (const char* bad : {"", "3", "3\nno detail", "x 0\nm", "3 x\nm", "3 0x\nm", "99 0\nm", "3 99\nm",
                          "-1 0\nm", "3 -1\nm", "3 \nm", " 0\nm"}) {
    const Status got = internal::DecodeStatus(bad);
    EXPECT_EQ(got.code(), StatusCode::kInternal) << "\"" << bad << "\" -> " << got.ToString();
  }
}

// Sent by one rank, the status arrives on every other with its code and detail.
TEST(StatusWireTest, DetailSurvivesTheTripBetweenRanks) {
  const int rank = TestComm().rank(), last = TestComm().size() - 1;
  std::string wire;
  if (rank == last) {
    wire = internal::EncodeStatus(
        Status::InvalidArgument("train/x leads outside the dataset root").WithDetail(StatusDetail::kOutsideRoot));
  }
  ASSERT_OK(TestComm().Bcast(&wire, last));
  const Status got = internal::DecodeStatus(wire);
  EXPECT_EQ(got.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(got.detail(), StatusDetail::kOutsideRoot);
  EXPECT_TRUE(IsOutsideRoot(got));
}

// AgreeOnStatus: the failing rank keeps its own status (detail included); the
// others learn of it as an abort.
TEST(StatusWireTest, AgreeOnStatusMarksOtherRanksAborted) {
  const int rank = TestComm().rank(), last = TestComm().size() - 1;
  const Status mine = rank == last ? Status::InvalidArgument("a \"..\" component").WithDetail(StatusDetail::kPathEscape)
                                   : Status::OK();
  const Status agreed = AgreeOnStatus(TestComm(), mine);
  ASSERT_FALSE(agreed.ok());
  EXPECT_EQ(agreed.code(), StatusCode::kInvalidArgument);
  if (rank == last) {
    EXPECT_EQ(agreed.detail(), StatusDetail::kPathEscape);
  } else {
    EXPECT_EQ(agreed.detail(), StatusDetail::kPeerAborted);
    EXPECT_NE(agreed.message().find("component"), std::string::npos) << agreed.ToString();
  }
  EXPECT_OK(AgreeOnStatus(TestComm(), Status::OK()));
}

TEST(SharedCounterTest, EveryIndexIsHandedOutExactlyOnce) {
  Comm& comm = TestComm();
  ASSERT_OK(comm.OpenCounter());
  EXPECT_FALSE(comm.OpenCounter().ok());  // one at a time
  std::string mine;
  for (int i = 0; i < 200; ++i) {
    ASSERT_OK_AND_ASSIGN(std::int64_t v, comm.FetchAdd(i % 3 == 0 ? 2 : 1));
    mine += std::to_string(v) + (i % 3 == 0 ? "+2 " : "+1 ");
  }
  ASSERT_OK(comm.IdleBarrier());
  ASSERT_OK(comm.CloseCounter());
  EXPECT_FALSE(comm.FetchAdd(1).ok());
  // Reopened, it starts from zero again (every rank adds nothing).
  ASSERT_OK(comm.OpenCounter());
  ASSERT_OK_AND_ASSIGN(std::int64_t first, comm.FetchAdd(0));
  EXPECT_EQ(first, 0);
  ASSERT_OK(comm.IdleBarrier());
  ASSERT_OK(comm.CloseCounter());
  ASSERT_OK_AND_ASSIGN(std::vector<std::string> all, comm.Gatherv(mine, 0));
  if (comm.rank() != 0) return;
  // The ranges [v, v + delta) of every rank tile [0, total) without a gap or overlap.
  std::vector<std::pair<std::int64_t, std::int64_t>> ranges;
  for (const std::string& text : all) {
    std::istringstream in(text);
    std::string item;
    while (in >> item) {
      const auto plus = item.find('+');
      ranges.emplace_back(std::stoll(item.substr(0, plus)), std::stoll(item.substr(plus + 1)));
    }
  }
  std::sort(ranges.begin(), ranges.end());
  std::int64_t next = 0;
  for (const auto& [v, d] : ranges) {
    EXPECT_EQ(v, next);
    next = v + d;
  }
  EXPECT_EQ(ranges.size(), static_cast<std::size_t>(200 * comm.size()));
}

// A dataset with several shards written by every rank; returns its root checksums.
std::vector<std::string> WriteSome(const std::string& root, int per_rank) {
  const int rank = TestComm().rank(), size = TestComm().size();
  auto w = DistributedWriter::Open(TestComm(), root, Options());
  EXPECT_TRUE(w.ok()) << w.status().ToString();
  for (std::int64_t k = rank; k < per_rank * size; k += size) {
    EXPECT_OK(Write(**w, k % 3 ? Split::kTrain : Split::kTest, k));
  }
  EXPECT_OK((*w)->Finish());
  auto sums = (*w)->dataset()->MetadataChecksums();
  return sums.ok() ? *sums : std::vector<std::string>{};
}

TEST(DistributedVerifyTest, CleanDatasetVerifiesOnEveryRankCount) {
  SharedDir dir;
  VerifyOptions o;
  o.check.deep = true;
  o.check.expected_root_checksums = WriteSome(dir.path(), 20);
  std::uint64_t calls = 0, last_done = 0, total = 0;
  o.progress = [&](const VerifyProgress& p) {
    ++calls;
    last_done = p.bytes_done;
    total = p.bytes_total;
  };
  ASSERT_OK_AND_ASSIGN(CheckReport r, VerifyDataset(TestComm(), dir.path(), o));
  if (TestComm().rank() == 0) {
    for (const auto& p : r.problems) ADD_FAILURE() << p.path << ": " << p.message;
    EXPECT_EQ(r.examples_checked, static_cast<std::uint64_t>(20 * TestComm().size()));
    EXPECT_GE(calls, 1u);
    EXPECT_EQ(last_done, total);
    // Every shard plus every list plus dataset_info.json was hashed once.
    ASSERT_OK_AND_ASSIGN(auto serial, CheckDataset(dir.path(), o.check));
    EXPECT_EQ(r.files_checked, serial.files_checked);
    EXPECT_EQ(r.bytes_checked, serial.bytes_checked);
  }
}

TEST(DistributedVerifyTest, FindsEveryCorruptionWhicheverRankChecksIt) {
  SharedDir dir;
  VerifyOptions o;
  o.check.expected_root_checksums = WriteSome(dir.path(), 24);
  std::vector<std::string> damaged;
  if (TestComm().rank() == 0) {
    auto ds = Dataset::Open(dir.path());
    ASSERT_TRUE(ds.ok());
    auto shards = ListShards(*ds, Split::kTrain);
    ASSERT_TRUE(shards.ok());
    for (std::size_t i = 0; i < shards->size(); i += 2) {  // every other shard
      damaged.push_back((*shards)[i].file_infos[0].file_path);
      std::ofstream(dir.path() + "/" + damaged.back(), std::ios::app) << "!";
    }
    std::filesystem::remove(dir.path() + "/" + (*shards)[1].file_infos[0].file_path);
    damaged.push_back((*shards)[1].file_infos[0].file_path);
    std::ofstream(dir.path() + "/train/orphan.bin") << "x";
  }
  ASSERT_OK(TestComm().Barrier());
  ASSERT_OK_AND_ASSIGN(CheckReport r, VerifyDataset(TestComm(), dir.path(), o));
  if (TestComm().rank() == 0) {
    EXPECT_FALSE(r.ok());
    for (const std::string& d : damaged) {
      EXPECT_TRUE(std::any_of(r.problems.begin(), r.problems.end(), [&](const auto& p) {
        return p.path == d && !p.warning();
      })) << d;
    }
    EXPECT_TRUE(std::any_of(r.problems.begin(), r.problems.end(),
                            [](const auto& p) { return p.warning() && p.path == "train/orphan.bin"; }));
    // Problems come sorted: errors first, then warnings.
    EXPECT_FALSE(r.problems.front().warning());
    // The same report as the serial check, whatever the number of ranks.
    ASSERT_OK_AND_ASSIGN(CheckReport serial, CheckDataset(dir.path(), o.check));
    auto key = [](const CheckReport& rep) {
      std::vector<std::string> out;
      for (const auto& p : rep.problems) {
        out.push_back(std::string(CheckProblemKindName(p.kind)) + " " + p.path + " " + p.algorithm + " " +
                      p.expected + " " + p.found);
      }
      std::sort(out.begin(), out.end());
      return out;
    };
    EXPECT_EQ(key(r), key(serial));
    EXPECT_EQ(r.files_checked, serial.files_checked);
  }
}

TEST(DistributedVerifyTest, ASlowRankTakesFewerUnits) {
  // Units are handed out on demand: a rank that takes 40 ms per unit ends up
  // with fewer than its even share while the others take the rest, and the
  // report is the serial one.
  SharedDir dir;
  VerifyOptions o;
  o.check.threads = 1;
  o.check.expected_root_checksums = WriteSome(dir.path(), 48);
  const int slow = TestComm().size() > 1 ? 1 : -1;
  o.before_unit = [slow](int rank) {
    if (rank == slow) std::this_thread::sleep_for(std::chrono::milliseconds(40));
  };
  ASSERT_OK_AND_ASSIGN(CheckReport r, VerifyDataset(TestComm(), dir.path(), o));
  if (TestComm().rank() != 0) return;
  for (const auto& p : r.problems) ADD_FAILURE() << p.path << ": " << p.message;
  ASSERT_EQ(r.work_by_rank.size(), static_cast<std::size_t>(TestComm().size()));
  std::uint64_t units = 0, files = 0;
  for (const CheckWork& w : r.work_by_rank) {
    units += w.units;
    files += w.files;
  }
  EXPECT_EQ(files, r.files_checked);
  // 48 examples per rank, 3 per shard: at least one unit per shard.
  EXPECT_GE(units, static_cast<std::uint64_t>(16 * TestComm().size()));
  if (slow > 0) {
    const std::uint64_t share = units / static_cast<std::uint64_t>(TestComm().size());
    EXPECT_LT(r.work_by_rank[1].units, share) << "the slow rank took its even share of " << units << " units";
    EXPECT_GT(units - r.work_by_rank[1].units, share * static_cast<std::uint64_t>(TestComm().size() - 1))
        << "the other ranks did not take the slow rank's share";
  }
  CheckOptions serial_options = o.check;
  ASSERT_OK_AND_ASSIGN(CheckReport serial, CheckDataset(dir.path(), serial_options));
  EXPECT_EQ(r.files_checked, serial.files_checked);
  EXPECT_EQ(r.bytes_checked, serial.bytes_checked);
  EXPECT_EQ(r.shards_checked, serial.shards_checked);
}

TEST(DistributedVerifyTest, GoldenDatasetsVerifyClean) {
  // Datasets written by the reference implementation, with their recorded root hashes.
  for (const char* name : {"fb_none", "fb_gzip", "fb_bz2", "fb_lzma", "fb_lz4", "fb_zstd", "fb_zlib",
                           "npz_none", "npz_zip", "fb_multiprocessing", "fb_continue"}) {
    const std::string dir = testing::GoldenDir() + "/" + name;
    std::string text;
    ASSERT_OK_AND_ASSIGN(text, ReadFileText(dir + "/expected.json"));
    // The root checksums are the first array after "dataset_info_checksums".
    VerifyOptions o;
    o.check.deep = true;
    const auto at = text.find("\"dataset_info_checksums\"");
    ASSERT_NE(at, std::string::npos);
    const auto end = text.find(']', at);
    for (auto q = text.find('"', text.find('[', at)); q < end; q = text.find('"', q + 1)) {
      const auto q2 = text.find('"', q + 1);
      o.check.expected_root_checksums.push_back(text.substr(q + 1, q2 - q - 1));
      q = q2;
    }
    ASSERT_OK_AND_ASSIGN(CheckReport r, VerifyDataset(TestComm(), dir + "/dataset", o));
    if (TestComm().rank() == 0) {
      for (const auto& p : r.problems) ADD_FAILURE() << name << ": " << p.path << ": " << p.message;
      EXPECT_EQ(r.examples_checked, 24u) << name;
    }
  }
}

TEST(DistributedVerifyTest, PartialChecksOnlyThatPartAndItsChain) {
  SharedDir dir;
  VerifyOptions o;
  o.check.expected_root_checksums = WriteSome(dir.path(), 12);
  std::string target;
  if (TestComm().rank() == 0) {
    auto ds = Dataset::Open(dir.path());
    auto shards = ListShards(*ds, Split::kTrain);
    target = (*shards)[0].file_infos[0].file_path;
    // Damage a test shard: outside the part, so not reported.
    auto test_shards = ListShards(*ds, Split::kTest);
    std::ofstream(dir.path() + "/" + (*test_shards)[0].file_infos[0].file_path, std::ios::app) << "!";
  }
  ASSERT_OK(TestComm().Bcast(&target, 0));
  o.check.partial = {target};
  ASSERT_OK_AND_ASSIGN(CheckReport r, VerifyDataset(TestComm(), dir.path(), o));
  if (TestComm().rank() == 0) {
    for (const auto& p : r.problems) ADD_FAILURE() << p.path << ": " << p.message;
    EXPECT_EQ(r.shards_checked, 1u);
  }
  o.check.partial = {"train/does/not/exist.fb"};
  ASSERT_OK_AND_ASSIGN(CheckReport missing, VerifyDataset(TestComm(), dir.path(), o));
  if (TestComm().rank() == 0) {
    EXPECT_FALSE(missing.ok());
  }
}

// The checks sidecar of a parallel job: rank 0 records every rank's shards
// after the commit (appends keep the earlier jobs' records), and a deep
// verify over the ranks of a dataset without one records the same from the
// shards it checked.
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
    const auto record = checks->Find(rel);
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
    ASSERT_OK_AND_ASSIGN(auto w, DistributedWriter::Open(TestComm(), dir.path(), Options()));
    for (std::int64_t k = 20 * job + rank; k < 20 * (job + 1); k += size) ASSERT_OK(Write(*w, Split::kTrain, k));
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
