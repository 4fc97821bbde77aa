// SPDX-License-Identifier: Apache-2.0
#include "support/full_disk.h"

#include <gtest/gtest.h>

#include <array>
#include <filesystem>
#include <fstream>

#include "sedpack/check/check.h"
#include "sedpack/dataset/dataset.h"
#include "sedpack/dataset/filler.h"
#include "sedpack/dataset/reader.h"
#include "sedpack/index/index.h"
#include "support/fault_fs.h"
#include "support/test_support.h"

namespace sedpack::testing {

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

void MakeDeepDataset(const std::string& root) {
  DatasetStructure s;
  s.saved_data_description = {{"x", "int64", {2}, {}}};
  s.compression = Compression::kLz4;
  s.examples_per_shard = 1;
  s.hash_checksum_algorithms = {HashAlgorithm::kSha256};
  auto ds = Dataset::Create(root, Metadata{}, s);
  ASSERT_OK(ds.status());
  FillerOptions o;
  o.concurrency = 2;
  o.max_branching = 2;
  auto filler = Filler::Make(*ds, o);
  ASSERT_OK(filler.status());
  for (std::int64_t k = 0; k < 96; ++k) {
    std::vector<std::int64_t> x = {k, -k};
    std::vector<ValueView> v = {ValueView::Array(x, {2})};
    ASSERT_OK((*filler)->WriteExample(k % 4 == 3 ? Split::kTest : Split::kTrain, v));
  }
  ASSERT_OK((*filler)->Finish());
}

std::vector<std::string> IndexRows(const std::string& root) {
  std::vector<std::string> out;
  auto check = CheckIndex(root);
  EXPECT_OK(check.status());
  if (check.ok()) {
    EXPECT_EQ(check->freshness, IndexFreshness::kFresh) << check->message;
  }
  EXPECT_FALSE(std::filesystem::exists(root + "/.sedpack-hpc/jobs")) << "the finished build left its journal";
  auto index = SampleIndex::OpenInDataset(root);
  EXPECT_OK(index.status());
  if (!index.ok()) return out;
  for (Split s : (*index)->splits()) {
    for (std::uint64_t i = 0; i < (*index)->num_shards(s); ++i) {
      out.push_back(std::string(SplitName(s)) + ":" + std::string((*index)->shard_path(s, i)) + ":" +
                    std::to_string((*index)->first_row(s, i)) + ":" + std::to_string((*index)->shard_examples(s, i)));
    }
  }
  return out;
}

RunResult WriteShareAndFinish(DistributedWriter& writer, std::int64_t first, std::int64_t last, std::int64_t step,
                              const std::function<Split(std::int64_t)>& split_of) {
  std::array<std::uint64_t, 3> seen{};
  Status st;
  for (std::int64_t k = first; k < last && st.ok(); k += step) {
    const Split s = split_of(k);
    if (seen[static_cast<int>(s)] < writer.kept_examples(s)) {
      ++seen[static_cast<int>(s)];
      continue;
    }
    std::vector<std::int64_t> x = {k, -k};
    std::vector<ValueView> v = {ValueView::Array(x, {2})};
    st = writer.WriteExample(s, v);
  }
  if (!st.ok()) writer.Fail(st);
  return {writer.Finish(), writer.kept_shards(), writer.journal_shards()};
}

void ExpectOnlyStoppedJob(const std::string& root, const std::string& job_id) {
  auto report = CheckDataset(root);
  ASSERT_OK(report.status());
  int jobs = 0;
  for (const auto& p : report->problems) {
    if (p.kind == CheckProblem::Kind::kResumableJob && p.path == ".sedpack-hpc/jobs/" + job_id) {
      ++jobs;
    } else {
      ADD_FAILURE() << p.path << ": " << p.message;
    }
  }
  EXPECT_EQ(jobs, 1);
}

void ExpectResumed(const RunResult& resumed, bool damaged) {
  ASSERT_OK(resumed.status);
  if (damaged) {
    EXPECT_EQ(resumed.kept_shards, 0u);
  } else {
    EXPECT_GT(resumed.kept_shards, 0u);
  }
  EXPECT_GE(resumed.journal_shards, resumed.kept_shards);
}

void DamageShardFiles(const std::string& dir) {
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir)) {
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

// Count the writes of a whole job, then fill the disk from a third and from
// two thirds of them; each stopped job is run again on a healthy disk and
// must end with `want`, keeping its shards the first time and none after
// they were damaged the second.
void FullDiskThenResume(const std::string& dir, const Job& job, const std::vector<std::string>& want,
                        const FullDiskCheck& check) {
  std::int64_t writes = 0;
  {
    FaultFileSystem counting;
    ScopedFileSystem scoped(&counting);
    ASSERT_OK(job(dir + "/count").status);
    writes = counting.count(FaultOp::kWrite);
  }
  ASSERT_GT(writes, check.min_writes);
  std::vector<std::int64_t> points = {writes / 3, 2 * writes / 3};
  if (check.at_last_write) points.push_back(writes);
  int retries = 0;
  for (std::size_t k = 0; k < points.size(); ++k) {
    const std::int64_t at = points[k];
    SCOPED_TRACE("ENOSPC from write " + std::to_string(at) + " of " + std::to_string(writes));
    const std::string out = dir + "/ds" + std::to_string(at);
    {
      FaultFileSystem full(testing::FullDiskFrom(at));
      ScopedFileSystem scoped(&full);
      EXPECT_FALSE(job(out).status.ok());
      EXPECT_TRUE(full.fired());
    }
    if (check.stopped) check.stopped(out);
    // The second stop: every shard on disk damaged in its last byte first, so
    // the rerun must keep none of those its journal names.
    const bool damage = check.damage_shards && k == 1;
    if (damage) DamageShardFiles(out);
    const RunResult resumed = job(out);
    // Shards are journaled in their order once written: on a loaded machine
    // the workers can write many before the first is journaled, and a stop
    // at a third of the writes then finds nothing to keep. That stop is
    // tried again later (a few times) instead of passing without a kept shard.
    if (k == 0 && resumed.status.ok() && resumed.journal_shards == 0 && retries < 3) {
      EXPECT_EQ(check.read(out), want);
      ++retries;
      points[0] = at + std::max<std::int64_t>(1, writes / 12);
      --k;
      continue;
    }
    ExpectResumed(resumed, damage);
    // Stopped in its last write, the job had journaled every unit.
    if (at == writes) {
      EXPECT_EQ(resumed.kept_shards, resumed.journal_shards);
    }
    EXPECT_EQ(check.read(out), want);
  }
}

}  // namespace sedpack::testing
