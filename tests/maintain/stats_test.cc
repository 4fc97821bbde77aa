// SPDX-License-Identifier: Apache-2.0
// sedpack stats: exact merging of moments, agreement with a two-pass reference
// computation on every rank count, NaN handling, --write, corrupt shards.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string_view>
#include <thread>

#include "mpi/calling_thread_comm.h"
#include "mpi/shared_dir.h"
#include "mpi/test_comm.h"
#include "sedpack/check/check.h"
#include "sedpack/dataset/dataset.h"
#include "sedpack/dataset/filler.h"
#include "sedpack/dataset/reader.h"
#include "index/index_internal.h"
#include "sedpack/index/index.h"
#include "sedpack/maintain/content.h"
#include "sedpack/maintain/stats.h"
#include "support/test_support.h"

namespace sedpack {
namespace {

using testing::SharedDir;
using testing::TestComm;

TEST(Moments, MergingEqualsOnePassAndStaysStableFarFromZero) {
  // Values around 1e9 with a spread of about 1: the naive sum-of-squares
  // formula loses every digit here; Welford/Chan must not.
  Moments all, a, b, c;
  long double sum = 0, sum2 = 0;
  std::vector<double> xs;
  for (int i = 0; i < 3000; ++i) xs.push_back(1e9 + std::sin(i * 0.37) + (i % 7) * 0.25);
  for (double x : xs) sum += x;
  const long double mean = sum / xs.size();
  for (double x : xs) sum2 += (x - mean) * (x - mean);
  for (std::size_t i = 0; i < xs.size(); ++i) {
    all.Add(xs[i]);
    (i < 1000 ? a : i < 1700 ? b : c).Add(xs[i]);
  }
  a.Merge(b);
  a.Merge(Moments{});
  a.Merge(c);
  const double want_std = std::sqrt(static_cast<double>(sum2 / xs.size()));
  for (const Moments* m : {&all, &a}) {
    EXPECT_EQ(m->count, 3000u);
    EXPECT_NEAR(m->mean, static_cast<double>(mean), 1e-6);
    EXPECT_NEAR(m->StdDev(), want_std, 1e-6 * want_std);
  }
  EXPECT_EQ(a.min, all.min);
  EXPECT_EQ(a.max, all.max);
  Moments n;
  n.Add(NAN);
  n.Add(2);
  n.Add(4);
  EXPECT_EQ(n.nan_count, 1u);
  EXPECT_EQ(n.count, 2u);
  EXPECT_DOUBLE_EQ(n.mean, 3);
  EXPECT_DOUBLE_EQ(n.StdDev(), 1);
}


TEST(Moments, HugeValuesKeepAFiniteStdAndIntegersStayExact) {
  // +-1e300: the squared deviations (1e600) overflow a double unless scaled.
  Moments all, a, b;
  for (int i = 0; i < 100; ++i) {
    const double x = i % 2 ? 1e300 : -1e300;
    all.Add(x);
    (i < 37 ? a : b).Add(x);
  }
  a.Merge(b);
  for (const Moments* m : {&all, &a}) {
    ASSERT_TRUE(std::isfinite(m->StdDev()));
    EXPECT_NEAR(m->StdDev(), 1e300, 1e288);
    EXPECT_NEAR(m->mean, 0, 1e286);
  }
  Moments top;  // the largest doubles still work
  top.Add(1.7e308);
  top.Add(-1.7e308);
  EXPECT_NEAR(top.StdDev(), 1.7e308, 1e296);
  // Exact integer extremes, also beyond 2^53.
  Moments s, u, merged;
  s.AddInteger(57000164);
  s.AddInteger(-9007199254740993LL);
  u.AddUnsigned(18446744073709551615ULL);
  u.AddUnsigned(3);
  EXPECT_EQ(s.signed_max, 57000164);
  EXPECT_EQ(s.signed_min, -9007199254740993LL);
  EXPECT_EQ(u.unsigned_max, 18446744073709551615ULL);
  EXPECT_EQ(u.unsigned_min, 3u);
  merged.Merge(u);
  merged.Merge(Moments{});
  EXPECT_TRUE(merged.has_unsigned);
  EXPECT_FALSE(merged.has_signed);
  EXPECT_EQ(merged.unsigned_max, 18446744073709551615ULL);
  EXPECT_EQ(merged.count, 2u);
}

float TraceValue(int i, int j) { return static_cast<float>(100.0 + std::cos(i * 1.3 + j * 0.07) * (1 + i % 5)); }

void MakeDataset(const std::string& root) {
  if (TestComm().rank() == 0) {
    DatasetStructure st;
    st.compression = Compression::kLz4;
    st.examples_per_shard = 7;
    st.saved_data_description = {{"trace", "float32", {50}, {}}, {"label", "int16", {}, {}},
                                 {"note", "str", {}, {}}};
    st.saved_data_description[1].custom_metadata = *JsonValue::Parse(R"({"unit":"class"})");
    auto ds = Dataset::Create(root, Metadata{}, st);
    ASSERT_TRUE(ds.ok());
    FillerOptions fo;
    fo.concurrency = 1;
    auto f = Filler::Make(*ds, fo);
    ASSERT_TRUE(f.ok());
    for (int i = 0; i < 90; ++i) {
      std::vector<float> t(50);
      for (int j = 0; j < 50; ++j) t[j] = TraceValue(i, j);
      const std::int16_t label = static_cast<std::int16_t>(i % 13 - 6);
      std::vector<ValueView> v = {ValueView::Array(t, {50}), ValueView::Scalar(label), ValueView::Str("x")};
      ASSERT_OK((*f)->WriteExample(Split::kTrain, v));
    }
    ASSERT_OK((*f)->Finish());
  }
  EXPECT_OK(TestComm().Barrier());
}

TEST(SplitStats, MatchesATwoPassComputationOnEveryRankCount) {
  SharedDir dir;
  MakeDataset(dir / "ds");
  ASSERT_OK_AND_ASSIGN(SplitStats s, ComputeSplitStats(TestComm(), dir / "ds", Split::kTrain, 2));
  EXPECT_EQ(s.examples, 90u);
  ASSERT_EQ(s.attributes.size(), 2u);  // the str attribute has no statistics
  long double sum = 0;
  double lo = INFINITY, hi = -INFINITY;
  for (int i = 0; i < 90; ++i) {
    for (int j = 0; j < 50; ++j) {
      sum += TraceValue(i, j);
      lo = std::min<double>(lo, TraceValue(i, j));
      hi = std::max<double>(hi, TraceValue(i, j));
    }
  }
  const long double mean = sum / 4500;
  long double m2 = 0;
  for (int i = 0; i < 90; ++i) {
    for (int j = 0; j < 50; ++j) m2 += (TraceValue(i, j) - mean) * (TraceValue(i, j) - mean);
  }
  const Moments& t = s.attributes[0].moments;
  EXPECT_EQ(s.attributes[0].name, "trace");
  EXPECT_EQ(t.count, 4500u);
  EXPECT_EQ(t.min, lo);
  EXPECT_EQ(t.max, hi);
  EXPECT_NEAR(t.mean, static_cast<double>(mean), 1e-9);
  EXPECT_NEAR(t.StdDev(), std::sqrt(static_cast<double>(m2 / 4500)), 1e-9);
  const Moments& l = s.attributes[1].moments;
  EXPECT_EQ(l.min, -6);
  EXPECT_EQ(l.max, 6);
  EXPECT_EQ(l.count, 90u);
  EXPECT_EQ(ComputeSplitStats(TestComm(), dir / "ds", Split::kTest).status().code(), StatusCode::kNotFound);
}

TEST(SplitStats, WriteMinMaxKeepsOtherKeysAndTheDatasetChecks) {
  SharedDir dir;
  MakeDataset(dir / "ds");
  ASSERT_OK_AND_ASSIGN(SplitStats s, ComputeSplitStats(TestComm(), dir / "ds", Split::kTrain));
  if (TestComm().rank() == 0) {
    ASSERT_OK(WriteMinMax(dir / "ds", s));
    ASSERT_OK_AND_ASSIGN(auto ds, Dataset::Open(dir / "ds"));
    const auto& d = ds->info().dataset_structure.saved_data_description;
    EXPECT_EQ(d[1].custom_metadata.text(), R"({"unit":"class","min":-6,"max":6})");
    EXPECT_NE(d[0].custom_metadata.text().find("\"min\":"), std::string::npos);
    auto report = CheckDataset(dir / "ds", CheckOptions{});
    ASSERT_TRUE(report.ok());
    EXPECT_TRUE(report->ok());
  }
}

TEST(SplitStats, CorruptShardIsRefused) {
  SharedDir dir;
  MakeDataset(dir / "ds");
  if (TestComm().rank() == 0) {
    auto ds = Dataset::Open(dir / "ds");
    ASSERT_TRUE(ds.ok());
    auto shards = ListShards(*ds, Split::kTrain);
    ASSERT_TRUE(shards.ok());
    std::fstream f(dir / "ds" + "/" + (*shards)[3].file_infos[0].file_path,
                   std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(30);
    f.put('\x01');
  }
  EXPECT_OK(TestComm().Barrier());
  const Status st = ComputeSplitStats(TestComm(), dir / "ds", Split::kTrain).status();
  EXPECT_EQ(st.code(), StatusCode::kCorruption) << st.ToString();
  // Named by the checksum that caught it: the sidecar's xxh3-64 or a recorded hash.
  EXPECT_NE(st.message().find(" mismatch ("), std::string::npos) << st.ToString();
}

// The worker threads must not touch the Comm (not thread-safe; MPI runs
// FUNNELED): they used to poll PeerFailed and call NotifyFailure themselves.
TEST(SplitStats, OnlyTheCallingThreadTalksToTheComm) {
  SharedDir dir;
  MakeDataset(dir / "ds");
  testing::CallingThreadComm comm(TestComm());
  ASSERT_OK(ComputeSplitStats(comm, dir / "ds", Split::kTrain, 3).status());
  if (comm.rank() == 0) {  // a corrupt shard: the failure is announced to the other ranks
    auto ds = Dataset::Open(dir / "ds");
    ASSERT_TRUE(ds.ok());
    auto shards = ListShards(*ds, Split::kTrain);
    ASSERT_TRUE(shards.ok());
    std::fstream f(dir / "ds" + "/" + (*shards)[1].file_infos[0].file_path,
                   std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(20);
    f.put('\x02');
  }
  EXPECT_OK(comm.Barrier());
  EXPECT_EQ(ComputeSplitStats(comm, dir / "ds", Split::kTrain, 3).status().code(), StatusCode::kCorruption);
  EXPECT_EQ(comm.foreign_calls(), 0);
}

// The progress of stats and digest: rank 0 only, bytes_done never
// decreasing from a part to every shard's bytes, one last call marked finished.
TEST(ShardPass, ProgressCountsUpToEveryShardsBytesOnRankZero) {
  SharedDir dir;
  MakeDataset(dir / "ds");
  std::uint64_t file_bytes = 0, shards = 0;
  {
    ASSERT_OK_AND_ASSIGN(auto ds, Dataset::Open(dir / "ds"));
    ASSERT_OK_AND_ASSIGN(auto listed, ListShards(ds, Split::kTrain));
    for (const ShardInfo& s : listed) file_bytes += std::filesystem::file_size(dir / "ds" + "/" + s.file_infos[0].file_path);
    shards = listed.size();
  }
  ASSERT_EQ(shards, 13u);
  for (const char* pass_name : {"stats", "digest"}) {
    std::vector<ShardPassProgress> calls;
    ShardPassOptions pass;
    pass.threads = 1;
    pass.progress_interval_s = 0;
    pass.progress = [&calls](const ShardPassProgress& p) { calls.push_back(p); };
    // Slow enough that the caller's 20 ms polls see the pass half done.
    pass.before_shard = [](int) { std::this_thread::sleep_for(std::chrono::milliseconds(15)); };
    if (std::string_view(pass_name) == "stats") {
      ASSERT_OK(ComputeSplitStats(TestComm(), dir / "ds", Split::kTrain, pass).status());
    } else {
      ASSERT_OK(ComputeContentDigests(TestComm(), dir / "ds", pass).status());
    }
    if (TestComm().rank() != 0) {
      EXPECT_TRUE(calls.empty()) << pass_name;
      continue;
    }
    ASSERT_GE(calls.size(), 2u) << pass_name;
    EXPECT_LT(calls.front().bytes_done, file_bytes) << pass_name;
    for (std::size_t i = 0; i < calls.size(); ++i) {
      EXPECT_EQ(calls[i].bytes_total, file_bytes) << pass_name;
      EXPECT_EQ(calls[i].shards_total, shards) << pass_name;
      EXPECT_EQ(calls[i].finished, i + 1 == calls.size()) << pass_name << " call " << i;
      if (i > 0) {
        EXPECT_GE(calls[i].bytes_done, calls[i - 1].bytes_done) << pass_name << " call " << i;
        EXPECT_GE(calls[i].seconds, calls[i - 1].seconds) << pass_name;
      }
    }
    EXPECT_EQ(calls.back().bytes_done, file_bytes) << pass_name;
  }
  // A failed pass makes no finished call.
  if (TestComm().rank() == 0) {
    ASSERT_OK_AND_ASSIGN(auto ds, Dataset::Open(dir / "ds"));
    ASSERT_OK_AND_ASSIGN(auto listed, ListShards(ds, Split::kTrain));
    std::fstream f(dir / "ds" + "/" + listed[5].file_infos[0].file_path, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(25);
    f.put('\x03');
  }
  EXPECT_OK(TestComm().Barrier());
  bool finished = false;
  ShardPassOptions pass;
  pass.progress = [&finished](const ShardPassProgress& p) { finished = finished || p.finished; };
  EXPECT_EQ(ComputeSplitStats(TestComm(), dir / "ds", Split::kTrain, pass).status().code(), StatusCode::kCorruption);
  EXPECT_FALSE(finished);
}

}  // namespace
// stats, digest and index build give the same bytes for any thread count (the
// moments are merged per shard in path order, not per thread).
TEST(SplitStats, SameResultsForOneAndFourThreads) {
  SharedDir dir;
  MakeDataset(dir / "ds");
  ASSERT_OK_AND_ASSIGN(SplitStats one, ComputeSplitStats(TestComm(), dir / "ds", Split::kTrain, 1));
  ASSERT_OK_AND_ASSIGN(SplitStats four, ComputeSplitStats(TestComm(), dir / "ds", Split::kTrain, 4));
  ASSERT_EQ(one.attributes.size(), four.attributes.size());
  EXPECT_EQ(one.examples, four.examples);
  for (std::size_t a = 0; a < one.attributes.size(); ++a) {
    const Moments& x = one.attributes[a].moments;
    const Moments& y = four.attributes[a].moments;
    EXPECT_EQ(x.count, y.count);
    EXPECT_EQ(std::memcmp(&x.mean, &y.mean, sizeof(double)), 0) << x.mean << " vs " << y.mean;
    EXPECT_EQ(std::memcmp(&x.m2, &y.m2, sizeof(double)), 0) << x.m2 << " vs " << y.m2;
    EXPECT_EQ(x.min, y.min);
    EXPECT_EQ(x.max, y.max);
  }
  ASSERT_OK_AND_ASSIGN(ContentDigests d1, ComputeContentDigests(TestComm(), dir / "ds", 1));
  ASSERT_OK_AND_ASSIGN(ContentDigests d4, ComputeContentDigests(TestComm(), dir / "ds", 4));
  EXPECT_EQ(SerializeContentDigests(d1), SerializeContentDigests(d4));
  EXPECT_EQ(d1.shards.size(), 13u);
  if (TestComm().rank() != 0) return;
  // A deep list tree (2 shards per folder): the parallel walk splits it into
  // subtrees; the index must be the serial walk's, byte for byte.
  const std::string deep = dir / "deep";
  DatasetStructure st;
  st.compression = Compression::kZstd;
  st.examples_per_shard = 1;
  st.saved_data_description = {{"x", "int32", {}, {}}};
  ASSERT_OK_AND_ASSIGN(auto ds, Dataset::Create(deep, Metadata{}, st));
  FillerOptions fo;
  fo.concurrency = 1;
  fo.max_branching = 2;
  ASSERT_OK_AND_ASSIGN(auto f, Filler::Make(ds, fo));
  for (std::int32_t i = 0; i < 37; ++i) {
    std::vector<ValueView> v = {ValueView::Scalar(i)};
    ASSERT_OK(f->WriteExample(i % 3 == 0 ? Split::kTest : Split::kTrain, v));
  }
  ASSERT_OK(f->Finish());
  ASSERT_OK_AND_ASSIGN(auto opened, Dataset::Open(deep));
  ASSERT_OK_AND_ASSIGN(IndexContents serial, BuildIndexContents(opened, 1));
  ASSERT_OK_AND_ASSIGN(IndexContents parallel, BuildIndexContents(opened, 4));
  ASSERT_OK_AND_ASSIGN(std::vector<std::byte> a, EncodeIndex(serial));
  ASSERT_OK_AND_ASSIGN(std::vector<std::byte> b, EncodeIndex(parallel));
  EXPECT_TRUE(a == b);
  ASSERT_EQ(parallel.splits.size(), 2u);
  EXPECT_EQ(parallel.splits[0].shard_paths.size() + parallel.splits[1].shard_paths.size(), 37u);
}

}  // namespace sedpack
