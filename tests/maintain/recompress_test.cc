// SPDX-License-Identifier: Apache-2.0
// sedpack recompress: every profile, copies, refusal of corrupt data, and
// interruption at every step (a fault hook stops the job as a crash would):
// the dataset then still checks clean in its old form, byte for byte, and a
// rerun finishes. Runs serially and under mpirun with 1, 2 and 4 ranks.
#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>

#include "mpi/calling_thread_comm.h"
#include "mpi/shared_dir.h"
#include "mpi/test_comm.h"
#include "sedpack/check/check.h"
#include "sedpack/dataset/dataset.h"
#include "sedpack/dataset/filler.h"
#include "sedpack/dataset/reader.h"
#include "sedpack/io/file.h"
#include "sedpack/maintain/recompress.h"
#include "support/test_support.h"
#include "codecs/decode_points_internal.h"
#include "sidecar/checks_internal.h"

namespace sedpack {
namespace {

namespace fs = std::filesystem;
using testing::SharedDir;
using testing::TestComm;


// A dataset with several splits, subfolders and shards: float32 traces, a key, a label.
void MakeDataset(const std::string& root, ShardFileType type, Compression compression) {
  if (TestComm().rank() == 0) {
    DatasetStructure st;
    st.shard_file_type = type;
    st.compression = compression;
    st.examples_per_shard = 5;
    st.hash_checksum_algorithms = {HashAlgorithm::kSha256, HashAlgorithm::kXxh64};
    st.saved_data_description = {{"trace", "float32", {64}, {}}, {"key", "uint8", {16}, {}},
                                 {"label", "int64", {}, {}}};
    auto ds = Dataset::Create(root, Metadata{}, st);
    ASSERT_TRUE(ds.ok()) << ds.status().ToString();
    for (const char* sub : {"a", "b"}) {
      FillerOptions fo;
      fo.relative_path_from_split = sub;
      fo.concurrency = 1;
      auto filler = Filler::Make(*ds, fo);
      ASSERT_TRUE(filler.ok());
      for (int i = 0; i < 23; ++i) {
        std::vector<float> trace(64);
        for (int j = 0; j < 64; ++j) trace[j] = static_cast<float>((i * 7 + j * 3) % 17) / 4.0f;
        std::vector<std::uint8_t> key(16, static_cast<std::uint8_t>(i / 10));
        const std::int64_t label = i * 100 + sub[0];
        std::vector<ValueView> v = {ValueView::Array(trace, {64}), ValueView::Array(key, {16}),
                                    ValueView::Scalar(label)};
        ASSERT_OK((*filler)->WriteExample(i % 4 == 3 ? Split::kTest : Split::kTrain, v));
      }
      ASSERT_OK((*filler)->Finish());
    }
    std::ofstream(root + "/README.txt") << "notes beside the dataset";
  }
  EXPECT_OK(TestComm().Barrier());
}

// Every value of every split, as text: equal content <=> equal strings.
std::string Content(const std::string& root) {
  auto ds = Dataset::Open(root);
  if (!ds.ok()) return "open failed: " + ds.status().ToString();
  std::string out;
  for (Split s : AllSplits()) {
    if (!(*ds)->info().FindSplit(s)) continue;
    auto r = ExampleReader::Make(*ds, s);
    if (!r.ok()) return "reader failed";
    for (;;) {
      auto ex = (*r)->Next();
      if (!ex.ok()) return "read failed: " + ex.status().ToString();
      if (!ex->has_value()) break;
      for (std::size_t a = 0; a < (*ds)->schema().size(); ++a) {
        const ValueView v = (*ex)->Get(a);
        out += testing::ToHex(v.data.data(), v.data.size()) + ",";
      }
      out += "\n";
    }
  }
  return out;
}

// Path -> bytes of every file under root.
std::map<std::string, std::string> Snapshot(const std::string& root) {
  std::map<std::string, std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(root)) {
    if (!e.is_regular_file()) continue;
    auto text = ReadFileText(e.path().string());
    out[fs::relative(e.path(), root).string()] = text.ok() ? *text : "?";
  }
  return out;
}

void ExpectClean(const std::string& root) {
  CheckOptions co;
  co.deep = true;
  co.find_orphans = true;
  auto report = CheckDataset(root, co);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_TRUE(report->ok() && report->problems.empty())
      << root << ": " << report->problems.size() << " problems, first: "
      << (report->problems.empty() ? "" : report->problems.front().path + ": " + report->problems.front().message);
}

// The checks sidecar is fresh after the rewrite and describes every shard's new bytes.
void ExpectFreshChecks(const std::string& root) {
  auto checks = sidecar_internal::LoadFreshChecks(root, [](const std::string& w) { ADD_FAILURE() << w; });
  ASSERT_NE(checks, nullptr) << root;
  auto ds = Dataset::Open(root);
  ASSERT_TRUE(ds.ok());
  std::size_t shards = 0;
  for (Split split : {Split::kTrain, Split::kTest}) {
    auto list = ListShards(*ds, split);
    ASSERT_TRUE(list.ok());
    for (const ShardInfo& info : *list) {
      const auto record = checks->Find(info.file_infos[0].file_path);
      ASSERT_NE(record, nullptr) << info.file_infos[0].file_path;
      auto bytes = ReadFileBytes(root + "/" + info.file_infos[0].file_path);
      ASSERT_TRUE(bytes.ok());
      EXPECT_EQ(record->stored_checksum(), codecs_internal::FastChecksum(*bytes));
      ++shards;
    }
  }
  EXPECT_EQ(checks->size(), shards);
}

Compression CompressionOf(const std::string& root) {
  auto ds = Dataset::Open(root);
  return ds.ok() ? (*ds)->info().dataset_structure.compression : Compression::kZip;
}

TEST(Recompress, InPlaceThroughEveryProfile) {
  SharedDir dir;
  const std::string root = dir / "ds";
  MakeDataset(root, ShardFileType::kFb, Compression::kGzip);
  std::string before;
  if (TestComm().rank() == 0) before = Content(root);
  for (const CodecProfile& p : CodecProfiles()) {
    RecompressOptions o;
    o.compression = p.fb;
    o.codec.level = p.LevelFor(ShardFileType::kFb);
    o.threads = 2;
    auto s = Recompress(TestComm(), root, o);
    ASSERT_TRUE(s.ok()) << p.name << ": " << s.status().ToString();
    EXPECT_EQ(s->files, 6u + 4);  // per subfolder: 17 train (4 shards), 6 test (2 shards)
    if (TestComm().rank() == 0) {
      EXPECT_EQ(CompressionOf(root), p.fb) << p.name;
      ExpectClean(root);
      ExpectFreshChecks(root);
      EXPECT_EQ(Content(root), before) << p.name;
      EXPECT_FALSE(fs::exists(RecompressStagingPath(root))) << p.name;
      auto readme = ReadFileText(root + "/README.txt");
      EXPECT_TRUE(readme.ok() && *readme == "notes beside the dataset") << p.name;
    }
  }
}

// A level outside the codec's range is refused before anything is written.
TEST(Recompress, LevelOutOfRangeIsRefused) {
  SharedDir dir;
  const std::string root = dir / "ds";
  MakeDataset(root, ShardFileType::kFb, Compression::kLz4);
  RecompressOptions o;
  o.compression = Compression::kGzip;
  o.codec.level = 10;
  const auto s = Recompress(TestComm(), root, o);
  EXPECT_EQ(s.status().code(), StatusCode::kInvalidArgument) << s.status().ToString();
  EXPECT_NE(s.status().message().find("GZIP: valid levels are 1..9"), std::string::npos) << s.status().ToString();
  if (TestComm().rank() == 0) {
    EXPECT_EQ(CompressionOf(root), Compression::kLz4);
    EXPECT_FALSE(fs::exists(RecompressStagingPath(root)));
  }
}

TEST(Recompress, CopyLeavesTheSourceAsItWas) {
  SharedDir dir;
  const std::string root = dir / "ds";
  MakeDataset(root, ShardFileType::kFb, Compression::kLz4);
  std::map<std::string, std::string> snap;
  if (TestComm().rank() == 0) snap = Snapshot(root);
  RecompressOptions o;
  o.compression = Compression::kZstd;
  o.out = dir / "copy";
  ASSERT_OK(Recompress(TestComm(), root, o).status());
  if (TestComm().rank() == 0) {
    EXPECT_TRUE(Snapshot(root) == snap) << "the source changed";
    EXPECT_EQ(CompressionOf(o.out), Compression::kZstd);
    ExpectClean(o.out);
    EXPECT_EQ(Content(o.out), Content(root));
  }
  // An existing, non-empty target is refused.
  EXPECT_EQ(Recompress(TestComm(), root, o).status().code(), StatusCode::kAlreadyExists);
}

TEST(Recompress, NpzBetweenZipAndStored) {
  SharedDir dir;
  const std::string root = dir / "ds";
  MakeDataset(root, ShardFileType::kNpz, Compression::kNone);
  std::string before;
  if (TestComm().rank() == 0) before = Content(root);
  RecompressOptions o;
  o.compression = Compression::kZip;
  ASSERT_OK(Recompress(TestComm(), root, o).status());
  if (TestComm().rank() == 0) {
    EXPECT_EQ(CompressionOf(root), Compression::kZip);
    ExpectClean(root);
    EXPECT_EQ(Content(root), before);
  }
  o.compression = Compression::kLz4;  // not allowed for npz
  EXPECT_EQ(Recompress(TestComm(), root, o).status().code(), StatusCode::kInvalidArgument);
}

TEST(Recompress, CorruptShardIsRefusedNotReStamped) {
  SharedDir dir;
  const std::string root = dir / "ds";
  MakeDataset(root, ShardFileType::kFb, Compression::kNone);
  std::string victim;
  std::map<std::string, std::string> snap;
  if (TestComm().rank() == 0) {
    auto ds = Dataset::Open(root);
    ASSERT_TRUE(ds.ok());
    auto shards = ListShards(*ds, Split::kTrain);
    ASSERT_TRUE(shards.ok() && shards->size() > 2);
    victim = (*shards)[2].file_infos[0].file_path;
    std::fstream f(root + "/" + victim, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(100);
    f.put('\x7f');
    f.close();
    snap = Snapshot(root);
  }
  EXPECT_OK(TestComm().Bcast(&victim, 0));
  RecompressOptions o;
  o.compression = Compression::kZstd;
  const Status st = Recompress(TestComm(), root, o).status();
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find(victim), std::string::npos) << st.ToString();
  EXPECT_NE(st.message().find("refuses to re-stamp corrupt data"), std::string::npos) << st.ToString();
  if (TestComm().rank() == 0) {
    EXPECT_TRUE(Snapshot(root) == snap) << "a refused recompress changed the dataset";
  }
}

TEST(Recompress, InterruptedAtAnyStepTheDatasetStaysWhole) {
  SharedDir dir;
  const std::string root = dir / "ds";
  MakeDataset(root, ShardFileType::kFb, Compression::kLz4);
  std::map<std::string, std::string> snap;
  std::string content;
  if (TestComm().rank() == 0) {
    snap = Snapshot(root);
    content = Content(root);
  }
  // Stop at the k-th shard, at a list, before dataset_info.json, before the swap.
  const std::vector<std::pair<std::string, int>> stops = {
      {"shard ", 1}, {"shard ", 7}, {"list ", 1}, {"list ", 4}, {"dataset_info", 1}, {"exchange", 1}};
  for (const auto& [prefix, nth] : stops) {
    std::atomic<int> seen{0};
    RecompressOptions o;
    o.compression = Compression::kZstd;
    o.threads = 1;
    o.fault = [&, prefix = prefix, nth = nth](std::string_view step) -> Status {
      if (step.rfind(prefix, 0) == 0 && ++seen == nth) return Status::IOError("injected crash at ", step);
      return Status::OK();
    };
    const Status st = Recompress(TestComm(), root, o).status();
    // With several ranks a rank may not get 7 shards: then the job finishes,
    // the dataset moves on, and the remaining stops would need the old form.
    if (prefix != "shard " || TestComm().size() == 1) {
      EXPECT_FALSE(st.ok()) << prefix << nth;
    }
    if (st.ok()) break;
    if (TestComm().rank() == 0) {
      EXPECT_TRUE(Snapshot(root) == snap) << "the dataset changed after a stop at " << prefix << nth;
      ExpectClean(root);
    }
    EXPECT_OK(TestComm().Barrier());
  }
  // A clean rerun finishes and removes what the interrupted runs left.
  RecompressOptions o;
  o.compression = Compression::kZstd;
  ASSERT_OK(Recompress(TestComm(), root, o).status());
  if (TestComm().rank() == 0) {
    EXPECT_EQ(CompressionOf(root), Compression::kZstd);
    ExpectClean(root);
    EXPECT_EQ(Content(root), content);
    EXPECT_FALSE(fs::exists(RecompressStagingPath(root)));
  }
}

// The worker threads must not touch the Comm (not thread-safe; MPI runs
// FUNNELED): they used to poll PeerFailed and call NotifyFailure themselves.
TEST(Recompress, OnlyTheCallingThreadTalksToTheComm) {
  SharedDir dir;
  const std::string root = dir / "ds";
  MakeDataset(root, ShardFileType::kFb, Compression::kLz4);
  testing::CallingThreadComm comm(TestComm());
  RecompressOptions o;
  o.compression = Compression::kZstd;
  o.threads = 3;
  ASSERT_OK(Recompress(comm, root, o).status());
  // A failing shard: the failure is announced to the other ranks.
  std::atomic<int> seen{0};
  o.compression = Compression::kGzip;
  o.fault = [&](std::string_view step) -> Status {
    if (step.rfind("shard ", 0) == 0 && ++seen == 2) return Status::IOError("injected failure at ", step);
    return Status::OK();
  };
  const Status st = Recompress(comm, root, o).status();
  if (comm.size() == 1) {
    EXPECT_FALSE(st.ok());
  }
  EXPECT_EQ(comm.foreign_calls(), 0);
}

}  // namespace
}  // namespace sedpack
