// SPDX-License-Identifier: Apache-2.0
// The import engine over in-memory ImportSources on one rank, the mapping
// parser's dialects, and the rank-0 progress collector on one rank.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include "comm/progress_internal.h"
#include "import/import_internal.h"
#include "import/mapping_internal.h"
#include "sedpack/dataset/dataset.h"
#include "sedpack/dataset/reader.h"
#include "sidecar/checks_internal.h"
#include "support/test_support.h"

namespace sedpack::import_internal {
namespace {

constexpr std::string_view kConfig = R"({
  "dataset_structure": {"saved_data_description": [
    {"name": "x", "dtype": "uint16", "shape": [2]},
    {"name": "name", "dtype": "str", "shape": []}],
    "examples_per_shard": 4},
  "import_test": {"splits": {"train": {"attributes": {"x": "x", "name": "name"}}}}
})";

Dialect TestDialect() {
  Dialect d;
  d.key = "import_test";
  d.source_forms = "\"field\"";
  d.check_split_count = true;
  return d;
}

// Rows i of input `base`: x = (base + i, 2 * (base + i)), name = "r<base + i>"
// padded with NULs to 8 bytes.
class MemorySource : public ImportSource {
 public:
  MemorySource(std::vector<AttributeSpec> fields, std::uint64_t base, std::uint64_t rows, std::uint64_t chunk)
      : fields_(std::move(fields)), rows_(rows), chunk_(chunk) {
    for (std::uint64_t i = 0; i < rows; ++i) {
      const std::uint16_t v[2] = {static_cast<std::uint16_t>(base + i), static_cast<std::uint16_t>(2 * (base + i))};
      const auto* p = reinterpret_cast<const std::byte*>(v);
      x_.insert(x_.end(), p, p + 4);
      std::string n = "r" + std::to_string(base + i);
      n.resize(8, '\0');
      const auto* q = reinterpret_cast<const std::byte*>(n.data());
      names_.insert(names_.end(), q, q + 8);
    }
  }
  std::string Describe() const override { return "memory"; }
  const std::vector<AttributeSpec>& fields() const override { return fields_; }
  std::uint64_t rows() const override { return rows_; }
  std::uint64_t preferred_block_rows() const override { return chunk_; }
  Status ReadBlock(std::uint64_t first, std::uint64_t n, std::vector<ImportColumn>* columns) override {
    if (first + n > rows_) return Status::Internal("read past the end");
    blocks.emplace_back(first, n);
    *columns = {ImportColumn{x_.data() + first * 4, 4, 4, false}, ImportColumn{names_.data() + first * 8, 8, 8, true}};
    return Status::OK();
  }
  void Release() override { ++released; }

  std::vector<std::pair<std::uint64_t, std::uint64_t>> blocks;
  int released = 0;

 private:
  std::vector<AttributeSpec> fields_;
  std::uint64_t rows_, chunk_;
  std::vector<std::byte> x_, names_;
};

struct Job {
  MappingConfig config;
  ImportJob job;
  std::vector<ImportSplit> splits;
};

// Two inputs of 10 and 7 rows; the split takes rows [2, 10) of the first and
// all of the second.
Job MakeJob(std::uint64_t block_rows) {
  Job j;
  auto c = ParseMapping(kConfig, "test.json", TestDialect());
  EXPECT_TRUE(c.ok()) << c.status().ToString();
  j.config = std::move(c).value();
  j.job.metadata = j.config.metadata;
  j.job.structure = j.config.structure;
  j.job.sizing.block_rows = block_rows;
  j.job.sizing.threads = 1;
  auto schema = j.config.structure.Schema();
  EXPECT_TRUE(schema.ok());
  ImportSplit& sp = j.splits.emplace_back();
  sp.split = Split::kTrain;
  sp.inputs.push_back(std::make_unique<MemorySource>(*schema, 0, 10, 4));
  sp.inputs.push_back(std::make_unique<MemorySource>(*schema, 100, 7, 1));
  sp.rows = {{2, 10}, {0, 7}};
  sp.row_bytes = 12;
  return j;
}

TEST(ImportEngine, WritesEveryRowInSourceOrder) {
  testing::TempDir dir;
  const std::string out = dir.path() + "/out";
  Job j = MakeJob(/*block_rows=*/5);
  std::vector<ImportProgress> seen;
  j.job.progress = [&](const ImportProgress& p) { seen.push_back(p); };
  SerialComm comm;
  ASSERT_OK_AND_ASSIGN(ImportResult r, Import(comm, Status::OK(), j.splits, out, j.job));
  EXPECT_EQ(r.examples[static_cast<int>(Split::kTrain)], 15u);
  EXPECT_EQ(r.examples_total, 15u);
  EXPECT_EQ(r.source_bytes, 15u * 12);
  EXPECT_EQ(r.block_rows, 5u);
  // Blocks end on the first input's chunks (4 rows) when a whole one fits.
  const auto& first = static_cast<MemorySource&>(*j.splits[0].inputs[0]);
  EXPECT_EQ(first.blocks, (std::vector<std::pair<std::uint64_t, std::uint64_t>>{{2, 2}, {4, 4}, {8, 2}}));
  EXPECT_EQ(first.released, 1);
  ASSERT_FALSE(seen.empty());
  EXPECT_TRUE(seen.back().finished);
  EXPECT_EQ(seen.back().rows_done, 15u);
  EXPECT_EQ(seen.back().bytes_total, 15u * 12);

  ASSERT_OK_AND_ASSIGN(auto ds, Dataset::Open(out));
  // The import's writer left the checks sidecar, one record per shard.
  auto checks = sidecar_internal::LoadFreshChecks(out, nullptr);
  ASSERT_NE(checks, nullptr);
  ASSERT_OK_AND_ASSIGN(auto shards, ListShards(ds, Split::kTrain));
  EXPECT_EQ(checks->size(), shards.size());
  for (const ShardInfo& s : shards) EXPECT_NE(checks->Find(s.file_infos[0].file_path), nullptr);
  ReadOptions ro;
  ro.prefetch_shards = 0;
  ASSERT_OK_AND_ASSIGN(auto reader, ExampleReader::Make(ds, Split::kTrain, ro));
  std::vector<std::uint64_t> expected;
  for (std::uint64_t i = 2; i < 10; ++i) expected.push_back(i);
  for (std::uint64_t i = 100; i < 107; ++i) expected.push_back(i);
  for (std::uint64_t v : expected) {
    ASSERT_OK_AND_ASSIGN(auto ex, reader->Next());
    ASSERT_TRUE(ex.has_value());
    EXPECT_EQ(ex->Get(0).At<std::uint16_t>(0), v);
    EXPECT_EQ(ex->Get(0).At<std::uint16_t>(1), 2 * v);
    const ValueView name = ex->Get(1);
    EXPECT_EQ(std::string(reinterpret_cast<const char*>(name.data.data()), name.data.size()),
              "r" + std::to_string(v));
  }
  ASSERT_OK_AND_ASSIGN(auto end, reader->Next());
  EXPECT_FALSE(end.has_value());
}

TEST(ImportEngine, RefusesAFullOutputAndAFailedPlan) {
  testing::TempDir dir;
  const std::string out = dir.path() + "/out";
  std::filesystem::create_directories(out);
  std::ofstream(out + "/keep") << "x";
  Job j = MakeJob(5);
  j.job.who = "import-test";
  SerialComm comm;
  EXPECT_STATUS(StatusCode::kAlreadyExists, "import-test writes a new dataset",
                Import(comm, Status::OK(), j.splits, out, j.job));
  EXPECT_TRUE(std::filesystem::exists(out + "/keep"));
  EXPECT_STATUS(StatusCode::kInvalidArgument, "bad plan",
                Import(comm, Status::InvalidArgument("bad plan"), j.splits, dir.path() + "/new", j.job));
  EXPECT_FALSE(std::filesystem::exists(dir.path() + "/new"));
}

TEST(ImportEngine, AFailedReadLeavesNoDataset) {
  testing::TempDir dir;
  const std::string out = dir.path() + "/out";
  Job j = MakeJob(5);
  j.splits[0].rows[1] = {0, 8};  // past the second input's end
  SerialComm comm;
  EXPECT_STATUS(StatusCode::kInternal, "read past the end", Import(comm, Status::OK(), j.splits, out, j.job));
  EXPECT_FALSE(std::filesystem::exists(out));
}

TEST(ImportSizing, SplitsTheBudget) {
  const ImportSizing s = ChooseImportSizing(256ULL << 20, 2, 1000, 32ULL << 20);
  EXPECT_EQ(s.threads, 2);
  EXPECT_EQ(s.shard_byte_budget, (128ULL << 20) / 10);
  EXPECT_EQ(s.block_rows, (96ULL << 20) / 1000);
  EXPECT_EQ(ChooseImportSizing(16ULL << 20, 1, 1ULL << 40).block_rows, 1u);
}

TEST(ImportMapping, DialectKeysAndMessages) {
  Dialect d = TestDialect();
  EXPECT_STATUS(StatusCode::kInvalidArgument, "unknown key \"import_test.inputs\"",
                ParseMapping(R"({"import_test": {"inputs": []}})", "m.json", d));
  EXPECT_STATUS(StatusCode::kInvalidArgument, "m.json: import_test.splits: no split is mapped",
                ParseMapping(R"({"import_test": {}})", "m.json", d));
  EXPECT_STATUS(StatusCode::kInvalidArgument, "import_test.splits.train.attributes.x: expected \"field\", got 3",
                ParseMapping(R"({"import_test": {"splits": {"train": {"attributes": {"x": 3}}}}})", "m.json", d));
  EXPECT_STATUS(StatusCode::kInvalidArgument, "dataset_structure.saved_data_description is required",
                ParseMapping(R"({"import_test": {"splits": {"train": {}}}})", "m.json", d));
  d.job_keys = true;
  d.shard_custom_metadata = true;
  d.check_split_count = false;
  auto c = ParseMapping(R"({"dataset_structure": {"saved_data_description": []},
    "import_test": {"inputs": ["a", "b"], "output": "o", "level": 3, "memory_budget_mb": 64,
                    "splits": {"test": {"rows": [1, 5], "shard_custom_metadata":
                                        {"k": {"dataset": "key", "dtype": "uint8"}}}}}})",
                        "m.json", d);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->params.inputs, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(c->params.output, "o");
  EXPECT_EQ(c->params.level, 3);
  EXPECT_EQ(c->params.memory_budget_bytes, 64ULL << 20);
  ASSERT_EQ(c->params.splits.size(), 1u);
  EXPECT_EQ(c->params.splits[0].split, Split::kTest);
  EXPECT_EQ(c->params.splits[0].rows, (std::pair<std::uint64_t, std::uint64_t>{1, 5}));
  ASSERT_EQ(c->params.splits[0].shard_custom_metadata.size(), 1u);
  EXPECT_EQ(c->params.splits[0].shard_custom_metadata[0].second.dtype, DType::kUInt8);
}

TEST(RankProgress, OneRankHasNoOthers) {
  SerialComm comm;
  internal::RankProgress p(comm);
  EXPECT_TRUE(p.is_root());
  EXPECT_FALSE(p.others_final());
  ASSERT_OK(p.Poll());
  EXPECT_TRUE(p.others_final());
  EXPECT_EQ(p.Total(42), 42u);
}

}  // namespace
}  // namespace sedpack::import_internal
