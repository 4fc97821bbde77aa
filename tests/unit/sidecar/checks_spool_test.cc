// SPDX-License-Identifier: Apache-2.0
// The spooled checks records: the file merged from many runs and carried
// records is byte for byte the one EncodeChecksFile makes of them all, the
// latest record of a path wins, and a writer's memory is its open run only.
#include <algorithm>
#include <filesystem>
#include <random>

#include "sedpack/io/file.h"
#include "sidecar/checks_internal.h"
#include "sidecar/checks_spool_internal.h"
#include "sidecar/sidecar_internal.h"
#include "support/test_support.h"

namespace sedpack {
namespace {

using sidecar_internal::ChecksSidecar;
using sidecar_internal::ChecksSpool;
using sidecar_internal::ShardChecks;

ShardChecks Record(const std::string& path, std::uint64_t stamp) {
  ShardChecks c;
  c.path = path;
  c.stored_size = 100 + stamp;
  c.stored_checksum = stamp;
  c.decoded_size = 1000;
  c.decode_points = {{0, 0}};
  c.values_per_example = 1;
  c.example_checksums = {stamp * 3};
  c.values = {{0, 8}};
  return c;
}

class ChecksSpoolTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = (std::filesystem::temp_directory_path() / ("spool_test_" + std::to_string(::getpid()))).string();
    std::filesystem::remove_all(root_);
    std::filesystem::create_directories(root_);
  }
  void TearDown() override { std::filesystem::remove_all(root_); }
  std::string root_;
};

TEST_F(ChecksSpoolTest, ManyRunsAndCarriedRecordsMergeToTheFileOfThemAll) {
  const DatasetInfoDigest digest{std::byte{9}};
  // Carried: an old sidecar of 300 records, some of whose paths the job rewrites.
  std::vector<std::vector<std::byte>> old_encoded;
  for (int i = 0; i < 300; ++i) old_encoded.push_back(*sidecar_internal::EncodeShardChecks(Record("train/o" + std::to_string(i * 7) + ".fb", 1)));
  std::vector<std::span<const std::byte>> old_spans(old_encoded.begin(), old_encoded.end());
  ASSERT_OK_AND_ASSIGN(auto carried, ChecksSidecar::Parse(sidecar_internal::EncodeChecksFile(digest, old_spans)));

  // Two writers (two ranks), 20,000 records each in random order: several runs each.
  std::mt19937 rng(5);
  std::vector<std::vector<std::byte>> expected_encoded = old_encoded;
  ChecksSpool a(root_, nullptr), b(root_, nullptr);
  for (int i = 0; i < 40000; ++i) {
    const std::string path = i % 97 == 0 && i / 97 < 100 ? "train/o" + std::to_string((i / 97) * 7) + ".fb"
                                         : "train/" + std::to_string(rng()) + "_" + std::to_string(i) + ".fb";
    const ShardChecks r = Record(path, 1000 + i);
    expected_encoded.push_back(*sidecar_internal::EncodeShardChecks(r));
    ASSERT_OK((i % 2 ? b : a).Add(r));
  }
  // The same path twice in one writer: the later record is the one kept.
  ASSERT_OK(a.Add(Record("train/twice.fb", 1)));
  ASSERT_OK(a.Add(Record("train/twice.fb", 2)));
  expected_encoded.push_back(*sidecar_internal::EncodeShardChecks(Record("train/twice.fb", 1)));
  expected_encoded.push_back(*sidecar_internal::EncodeShardChecks(Record("train/twice.fb", 2)));
  ASSERT_OK(a.Flush());
  ASSERT_OK(b.Flush());
  EXPECT_GT(a.runs().size(), 1u);
  std::vector<sidecar_internal::ChecksRun> runs = a.runs();
  ASSERT_OK_AND_ASSIGN(auto b_runs, sidecar_internal::DecodeRuns(sidecar_internal::EncodeRuns(b.runs())));
  runs.insert(runs.end(), b_runs.begin(), b_runs.end());

  ASSERT_OK(sidecar_internal::WriteChecksFromRuns(root_, digest, carried.get(), runs, nullptr));
  ASSERT_OK_AND_ASSIGN(auto written, ReadFileBytes(SidecarPath(root_, "checks.bin")));
  std::vector<std::span<const std::byte>> spans(expected_encoded.begin(), expected_encoded.end());
  const std::vector<std::byte> expected = sidecar_internal::EncodeChecksFile(digest, spans);
  EXPECT_EQ(written.size(), expected.size());
  EXPECT_TRUE(written == expected);
  ASSERT_OK_AND_ASSIGN(auto parsed, ChecksSidecar::Parse(written));
  ASSERT_NE(parsed->Find("train/twice.fb"), nullptr);
  EXPECT_EQ(parsed->Find("train/twice.fb")->stored_checksum(), 2u);
  ASSERT_NE(parsed->Find("train/o0.fb"), nullptr);
  EXPECT_EQ(parsed->Find("train/o0.fb")->stored_checksum(), 1000u);  // rewritten by the job
  EXPECT_EQ(parsed->Find("train/o7.fb")->stored_checksum(), 1000u + 97);
  EXPECT_EQ(parsed->Find("train/o2093.fb")->stored_checksum(), 1u);  // 299*7: carried as it was
}

TEST_F(ChecksSpoolTest, TheSpoolFileGoesWithTheSpool) {
  std::string path;
  {
    ChecksSpool s(root_, nullptr);
    ASSERT_OK(s.Add(Record("train/a.fb", 1)));
    ASSERT_OK(s.Flush());
    ASSERT_EQ(s.runs().size(), 1u);
    path = s.runs()[0].path;
    EXPECT_TRUE(std::filesystem::exists(path));
  }
  EXPECT_FALSE(std::filesystem::exists(path));
}

TEST_F(ChecksSpoolTest, ADamagedRunIsAnErrorNotAFile) {
  ChecksSpool s(root_, nullptr);
  ASSERT_OK(s.Add(Record("train/a.fb", 1)));
  ASSERT_OK(s.Flush());
  auto runs = s.runs();
  runs[0].size -= 3;  // the run now ends inside its record
  const DatasetInfoDigest digest{};
  EXPECT_FALSE(sidecar_internal::WriteChecksFromRuns(root_, digest, nullptr, runs, nullptr).ok());
  EXPECT_FALSE(std::filesystem::exists(SidecarPath(root_, "checks.bin")));
  EXPECT_FALSE(sidecar_internal::DecodeRuns("12 x y\n").ok());
}

}  // namespace
}  // namespace sedpack
