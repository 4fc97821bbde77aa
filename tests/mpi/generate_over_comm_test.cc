// SPDX-License-Identifier: Apache-2.0
// GenerateOverComm: the parallel generate job, on one rank (SerialComm) and
// under mpirun (MpiComm).
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "mpi/shared_dir.h"
#include "mpi/test_comm.h"
#include "sedpack/check/check.h"
#include "sedpack/dataset/reader.h"
#include "sedpack/generate/parallel.h"
#include "sedpack/mpi/distributed_write.h"
#include "support/generate_config.h"
#include "support/test_support.h"

namespace sedpack {
namespace {

namespace fs = std::filesystem;
using testing::SharedDir;
using testing::TestComm;

// Fewer examples than the shared small config, two hashes and small key groups.
GenerateConfig SmallConfig() {
  GenerateConfig c = testing::SmallGenerateConfig(7);
  c.structure.hash_checksum_algorithms = {HashAlgorithm::kSha256, HashAlgorithm::kXxh64};
  c.params.examples = {13, 5, 0};
  c.params.key_group_size = 4;
  return c;
}

using Example = std::vector<std::string>;  // raw bytes per attribute

Example Bytes(const std::vector<ValueView>& values) {
  Example out;
  for (const ValueView& v : values) out.emplace_back(reinterpret_cast<const char*>(v.data.data()), v.data.size());
  return out;
}

// Every example of a split, sorted (ranks write in any order).
std::vector<Example> ReadSorted(const std::string& root, Split split) {
  std::vector<Example> out;
  auto ds = Dataset::Open(root);
  EXPECT_OK(ds.status());
  if (!ds.ok() || !(*ds)->info().FindSplit(split)) return out;
  auto reader = ExampleReader::Make(*ds, split);
  EXPECT_OK(reader.status());
  if (!reader.ok()) return out;
  for (;;) {
    auto next = (*reader)->Next();
    EXPECT_OK(next.status());
    if (!next.ok() || !next->has_value()) break;
    std::vector<ValueView> views;
    for (std::size_t j = 0; j < (*ds)->schema().size(); ++j) views.push_back((**next).Get(j));
    out.push_back(Bytes(views));
  }
  std::sort(out.begin(), out.end());
  return out;
}

// Examples [0, n) of a split as one job on one process makes them, sorted.
std::vector<Example> ExpectedSorted(const GenerateConfig& c, Split split, std::uint64_t n) {
  std::vector<Example> out;
  for (std::uint64_t i = 0; i < n; ++i) {
    ExampleBuffers ex;
    EXPECT_OK(GenerateExample(c, split, i, &ex));
    out.push_back(Bytes(ex.Views()));
  }
  std::sort(out.begin(), out.end());
  return out;
}

TEST(GenerateOverCommTest, RanksShareTheJobAndRankZeroSeesAllProgress) {
  SharedDir dir;
  const std::string out = dir / "ds";
  const int rank = TestComm().rank(), size = TestComm().size();
  std::vector<GenerateProgress> seen;
  ParallelGenerateOptions options;
  options.progress = [&](const GenerateProgress& p) { seen.push_back(p); };
  options.report_interval = std::chrono::milliseconds(0);
  const GenerateConfig config = SmallConfig();
  ASSERT_OK_AND_ASSIGN(ParallelGenerateSummary s, GenerateOverComm(TestComm(), config, out, options));
  EXPECT_EQ(s.examples_total, 18u);
  EXPECT_EQ(s.ranks, size);
  EXPECT_FALSE(s.appended);
  EXPECT_GT(s.bytes, 0u);
  ASSERT_OK_AND_ASSIGN(auto ds, Dataset::Open(out));
  ASSERT_OK_AND_ASSIGN(auto sums, ds->MetadataChecksums());
  EXPECT_EQ(s.root_checksums, sums);
  EXPECT_EQ(s.checksum_algorithms, config.structure.hash_checksum_algorithms);
  if (rank == 0) {
    // Once at the end with the whole job's count; never more than the job.
    ASSERT_FALSE(seen.empty());
    EXPECT_TRUE(seen.back().finished);
    EXPECT_EQ(seen.back().examples_done, 18u);
    EXPECT_EQ(seen.back().examples_total, 18u);
    EXPECT_EQ(std::count_if(seen.begin(), seen.end(), [](const auto& p) { return p.finished; }), 1);
    for (const auto& p : seen) EXPECT_LE(p.examples_done, 18u);
    if (size > 1) {
      for (int r = 0; r < size; ++r) {
        EXPECT_TRUE(fs::exists(out + "/train/" + s.job_id + "-r" + std::to_string(r))) << "rank " << r;
      }
    }
    EXPECT_EQ(ReadSorted(out, Split::kTrain), ExpectedSorted(config, Split::kTrain, 13));
    EXPECT_EQ(ReadSorted(out, Split::kTest), ExpectedSorted(config, Split::kTest, 5));
  } else {
    EXPECT_TRUE(seen.empty()) << "progress is reported on rank 0 only";
  }
  ASSERT_OK(TestComm().Barrier());

  // An append continues every split's indices: the same examples as one larger job.
  GenerateConfig more = SmallConfig();
  more.params.append = true;
  more.params.examples = {4, 0, 2};
  more.structure.compression = Compression::kZstd;  // replaced by the dataset's own
  ASSERT_OK_AND_ASSIGN(ParallelGenerateSummary a, GenerateOverComm(TestComm(), more, out));
  EXPECT_TRUE(a.appended);
  EXPECT_EQ(a.examples_total, 6u);
  EXPECT_NE(a.job_id, s.job_id);
  if (rank == 0) {
    EXPECT_EQ(ReadSorted(out, Split::kTrain), ExpectedSorted(config, Split::kTrain, 17));
    EXPECT_EQ(ReadSorted(out, Split::kHoldout), ExpectedSorted(config, Split::kHoldout, 2));
    ASSERT_OK_AND_ASSIGN(auto reopened, Dataset::Open(out));
    EXPECT_EQ(reopened->info().dataset_structure.compression, config.structure.compression);
    ASSERT_OK_AND_ASSIGN(CheckReport report, CheckDataset(out, {}));
    EXPECT_TRUE(report.ok());
    EXPECT_TRUE(report.problems.empty());
  }
}

// A refused output folder fails the job on every rank: rank 0 with its own
// reason, the others as an abort; nothing is written.
TEST(GenerateOverCommTest, RefusedOutputFailsEveryRankAndWritesNothing) {
  SharedDir dir;
  const std::string out = dir / "taken";
  if (TestComm().rank() == 0) {
    fs::create_directories(out);
    std::ofstream(out + "/file") << "x";
  }
  ASSERT_OK(TestComm().Barrier());
  auto job = GenerateOverComm(TestComm(), SmallConfig(), out);
  ASSERT_FALSE(job.ok());
  EXPECT_EQ(job.status().code(), StatusCode::kAlreadyExists) << job.status().ToString();
  EXPECT_EQ(DistributedWriter::IsAbort(job.status()), TestComm().rank() != 0) << job.status().ToString();
  ASSERT_OK(TestComm().Barrier());
  if (TestComm().rank() == 0) {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(out)) names.push_back(e.path().filename().string());
    EXPECT_EQ(names, std::vector<std::string>{"file"});
  }
}

// --append into something that is not a dataset fails on every rank.
TEST(GenerateOverCommTest, AppendNeedsADataset) {
  SharedDir dir;
  GenerateConfig c = SmallConfig();
  c.params.append = true;
  auto job = GenerateOverComm(TestComm(), c, dir / "none");
  ASSERT_FALSE(job.ok());
  EXPECT_NE(job.status().message().find("--append"), std::string::npos) << job.status().ToString();
}

TEST(PrepareGenerateOutputTest, TemporaryFilesOfAKilledCreateCountAsEmpty) {
  if (TestComm().rank() != 0) return;
  testing::TempDir tmp;
  const std::string out = tmp.path() + "/ds";
  EXPECT_OK(PrepareGenerateOutput(out));  // missing
  fs::create_directories(out);
  const std::string temp = out + "/update_1700000000.000000_0123456789abcdef0123456789abcdef_of_dataset_info.json";
  std::ofstream(temp) << "{";
  EXPECT_OK(PrepareGenerateOutput(out));
  EXPECT_FALSE(fs::exists(temp)) << "the temporary file is removed";
  std::ofstream(out + "/notes.txt") << "mine";
  EXPECT_STATUS(StatusCode::kAlreadyExists, "not empty", PrepareGenerateOutput(out));
  EXPECT_TRUE(fs::exists(out + "/notes.txt"));
  std::ofstream(out + "/dataset_info.json") << "{}";
  EXPECT_STATUS(StatusCode::kAlreadyExists, "already holds a sedpack dataset", PrepareGenerateOutput(out));
}

}  // namespace
}  // namespace sedpack
