// SPDX-License-Identifier: Apache-2.0
// import-hdf5 end to end: fixtures in the ASCAD v1, ASCAD v2 and lascar layouts
// are imported with the shipped mappings (and inline ones), then every value of
// the dataset is compared with the value the fixture stored. The same tests run
// serially and under mpirun with 1, 2 and 4 ranks (tests/mpi/*_main.cc).
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <tuple>

#include "mpi/shared_dir.h"
#include "mpi/test_comm.h"
#include "sedpack/dataset/dataset.h"
#include "sedpack/dataset/reader.h"
#include "sedpack/check/check.h"
#include "sedpack/hdf5/import.h"
#include "sedpack/io/file.h"
#include "support/fault_fs.h"
#include "support/h5_fixtures.h"
#include "support/test_support.h"

namespace sedpack {
namespace {

using testing::FixtureValue;
using testing::H5FixtureSpec;
using testing::SharedDir;
using testing::TestComm;
using testing::ValueKind;


// Run `make` on rank 0 only, then let every rank go on.
template <typename Fn>
void OnRoot(Fn make) {
  if (TestComm().rank() == 0) make();
  EXPECT_OK(TestComm().Barrier());
}

std::string ConfigPath(const std::string& name) { return std::string(SEDPACK_CONFIGS_DIR) + "/" + name; }

Hdf5ImportConfig LoadConfig(const std::string& name) {
  auto c = LoadHdf5ImportConfig(ConfigPath(name));
  EXPECT_TRUE(c.ok()) << c.status().ToString();
  return c.ok() ? *c : Hdf5ImportConfig{};
}

Hdf5ImportConfig ParseConfig(const std::string& text) {
  auto c = ParseHdf5ImportConfig(text, "inline");
  EXPECT_TRUE(c.ok()) << c.status().ToString();
  return c.ok() ? *c : Hdf5ImportConfig{};
}

double ElementAsDouble(const ValueView& v, std::size_t i) {
  switch (v.dtype) {
    case DType::kInt8: return v.At<std::int8_t>(i);
    case DType::kUInt8: return v.At<std::uint8_t>(i);
    case DType::kInt16: return v.At<std::int16_t>(i);
    case DType::kUInt16: return v.At<std::uint16_t>(i);
    case DType::kInt32: return v.At<std::int32_t>(i);
    case DType::kUInt32: return v.At<std::uint32_t>(i);
    case DType::kInt64: case DType::kInt: return static_cast<double>(v.At<std::int64_t>(i));
    case DType::kUInt64: return static_cast<double>(v.At<std::uint64_t>(i));
    case DType::kFloat16: return Float16{v.At<std::uint16_t>(i)}.ToFloat();
    case DType::kFloat32: return v.At<float>(i);
    case DType::kFloat64: return v.At<double>(i);
    default: return NAN;
  }
}

// What attribute j of a split must hold: element e of source row r is
// FixtureValue(seed, key, r, col0 + e, kind) (row 0 for fixed keys).
struct AttrExpect {
  std::string key;
  ValueKind kind;
  std::uint64_t col0 = 0;
  bool fixed = false;
};
// One input file's part of a split, in order.
struct Segment {
  std::uint64_t seed;
  std::uint64_t first_row, last_row;
};

// Compare every value of `split` with the fixtures; returns the number of
// examples seen (all must match; the first mismatch is reported).
std::uint64_t ExpectSplit(const std::string& out, Split split, const std::vector<AttrExpect>& attrs,
                          const std::vector<Segment>& segments) {
  auto ds = Dataset::Open(out);
  EXPECT_TRUE(ds.ok()) << ds.status().ToString();
  if (!ds.ok()) return 0;
  ReadOptions ro;
  ro.prefetch_shards = 0;
  auto reader = ExampleReader::Make(*ds, split, ro);
  EXPECT_TRUE(reader.ok()) << reader.status().ToString();
  if (!reader.ok()) return 0;
  std::uint64_t seen = 0;
  for (const Segment& seg : segments) {
    for (std::uint64_t row = seg.first_row; row < seg.last_row; ++row) {
      auto ex = (*reader)->Next();
      EXPECT_TRUE(ex.ok() && ex->has_value()) << "split " << SplitName(split) << " ends before example " << seen;
      if (!ex.ok() || !ex->has_value()) return seen;
      for (std::size_t j = 0; j < attrs.size(); ++j) {
        const ValueView v = (*ex)->Get(j);
        std::size_t n = 1;
        for (auto d : v.shape) n *= static_cast<std::size_t>(d);
        for (std::size_t e = 0; e < n; ++e) {
          const double want =
              FixtureValue(seg.seed, attrs[j].key, attrs[j].fixed ? 0 : row, attrs[j].col0 + e, attrs[j].kind);
          const double got = ElementAsDouble(v, e);
          if (got != want) {
            ADD_FAILURE() << "split " << SplitName(split) << " example " << seen << " (source row " << row
                          << ") attribute " << j << " (" << attrs[j].key << ") element " << e << ": got " << got
                          << ", want " << want;
            return seen;
          }
        }
      }
      ++seen;
    }
  }
  auto end = (*reader)->Next();
  EXPECT_TRUE(end.ok() && !end->has_value()) << "split " << SplitName(split) << " has more than " << seen
                                             << " examples";
  return seen;
}

Hdf5ImportSummary Import(const Hdf5ImportConfig& config, const std::vector<std::string>& inputs,
                         const std::string& out) {
  auto s = ImportHdf5(TestComm(), config, inputs, out);
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  return s.ok() ? *s : Hdf5ImportSummary{};
}

// Deep check (every hash, every shard decoded) on rank 0.
void ExpectChecksClean(const std::string& out) {
  if (TestComm().rank() != 0) return;
  CheckOptions co;
  co.deep = true;
  auto report = CheckDataset(out, co);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_TRUE(report->ok()) << report->problems.size() << " problems, first: "
                            << (report->problems.empty() ? "" : report->problems.front().message);
}

std::vector<AttrExpect> AscadV1Attrs(const std::string& group, ValueKind trace_kind, bool with_ct, int masks,
                                     bool fixed_key) {
  std::vector<AttrExpect> a = {{group + "/traces", trace_kind},
                               {group + "/labels", ValueKind::kByte},
                               {group + "/metadata.plaintext", ValueKind::kByte},
                               {group + "/metadata.key", ValueKind::kByte, 0, fixed_key}};
  if (with_ct) a.push_back({group + "/metadata.ciphertext", ValueKind::kByte});
  if (masks) a.push_back({group + "/metadata.masks", ValueKind::kByte});
  return a;
}

TEST(Hdf5Import, AscadV1FixedKeyChunked) {
  SharedDir dir;
  H5FixtureSpec spec;
  spec.trace_len = 700;
  spec.profiling_rows = 100;
  spec.attack_rows = 40;
  spec.chunk_rows = 16;
  spec.fixed_key = true;
  spec.desync = true;
  OnRoot([&] { testing::WriteAscadV1(dir / "ascad.h5", spec); });
  Hdf5ImportConfig config = LoadConfig("import_ascad_v1_fixed.json");
  config.structure.examples_per_shard = 8;
  const Hdf5ImportSummary s = Import(config, {dir / "ascad.h5"}, dir / "out");
  EXPECT_EQ(s.examples[0], 100u);
  EXPECT_EQ(s.examples[1], 40u);
  EXPECT_EQ(s.source_bytes, 140u * (700 + 1 + 16 * 3));
  if (TestComm().rank() == 0) {
    EXPECT_EQ(ExpectSplit(dir / "out", Split::kTrain,
                          AscadV1Attrs("Profiling_traces", ValueKind::kSignedByte, false, 16, true),
                          {{spec.seed, 0, 100}}),
              100u);
    EXPECT_EQ(ExpectSplit(dir / "out", Split::kTest,
                          AscadV1Attrs("Attack_traces", ValueKind::kSignedByte, false, 16, true),
                          {{spec.seed, 0, 40}}),
              40u);
    // The key became every shard's custom_metadata, as integers.
    auto ds = Dataset::Open(dir / "out");
    ASSERT_TRUE(ds.ok());
    auto shards = ListShards(*ds, Split::kTrain);
    ASSERT_TRUE(shards.ok());
    std::string want = "{\"key\":[";
    for (int e = 0; e < 16; ++e) {
      want += (e ? "," : "") +
              std::to_string(static_cast<int>(FixtureValue(spec.seed, "Profiling_traces/metadata.key", 0, e,
                                                           ValueKind::kByte)));
    }
    want += "]}";
    ASSERT_FALSE(shards->empty());
    for (const ShardInfo& sh : *shards) EXPECT_EQ(sh.custom_metadata.text(), want);
  }
  ExpectChecksClean(dir / "out");
}

TEST(Hdf5Import, AscadV1FloatMetadataInOneGroupContiguous) {
  SharedDir dir;
  H5FixtureSpec spec;
  spec.seed = 7;
  spec.trace_len = 700;
  spec.profiling_rows = 64;
  spec.attack_rows = 30;
  spec.chunked = false;
  spec.profiling_float_metadata = true;  // float64 in one group, uint8 in the other
  OnRoot([&] { testing::WriteAscadV1(dir / "ascad.h5", spec); });
  Hdf5ImportConfig config = LoadConfig("import_ascad_v1_fixed.json");
  config.params.splits[0].shard_custom_metadata.clear();
  config.params.splits[1].shard_custom_metadata.clear();
  config.structure.examples_per_shard = 10;
  Import(config, {dir / "ascad.h5"}, dir / "out");
  if (TestComm().rank() == 0) {
    ExpectSplit(dir / "out", Split::kTrain, AscadV1Attrs("Profiling_traces", ValueKind::kSignedByte, false, 16, false),
                {{spec.seed, 0, 64}});
    ExpectSplit(dir / "out", Split::kTest, AscadV1Attrs("Attack_traces", ValueKind::kSignedByte, false, 16, false),
                {{spec.seed, 0, 30}});
  }
  ExpectChecksClean(dir / "out");
}

TEST(Hdf5Import, AscadV1VariableKeyTwoFiles) {
  SharedDir dir;
  H5FixtureSpec a, b;
  a.trace_len = b.trace_len = 1400;
  a.masks = b.masks = 18;
  a.seed = 11;
  b.seed = 12;
  a.profiling_rows = 50;
  b.profiling_rows = 37;
  a.attack_rows = 9;
  b.attack_rows = 13;
  a.chunk_rows = 8;
  b.chunked = false;
  a.attack_float_metadata = true;
  b.profiling_float_metadata = true;
  OnRoot([&] {
    testing::WriteAscadV1(dir / "a.h5", a);
    testing::WriteAscadV1(dir / "b.h5", b);
  });
  Hdf5ImportConfig config = LoadConfig("import_ascad_v1_variable.json");
  config.structure.examples_per_shard = 7;
  const Hdf5ImportSummary s = Import(config, {dir / "a.h5", dir / "b.h5"}, dir / "out");
  EXPECT_EQ(s.examples_total, 50u + 37 + 9 + 13);
  if (TestComm().rank() == 0) {
    ExpectSplit(dir / "out", Split::kTrain, AscadV1Attrs("Profiling_traces", ValueKind::kSignedByte, true, 18, false),
                {{a.seed, 0, 50}, {b.seed, 0, 37}});
    ExpectSplit(dir / "out", Split::kTest, AscadV1Attrs("Attack_traces", ValueKind::kSignedByte, true, 18, false),
                {{a.seed, 0, 9}, {b.seed, 0, 13}});
  }
  ExpectChecksClean(dir / "out");
}

TEST(Hdf5Import, AscadV2ExtractedCompoundLabels) {
  SharedDir dir;
  H5FixtureSpec spec;
  spec.seed = 3;
  spec.trace_len = 15000;
  spec.profiling_rows = 45;
  spec.attack_rows = 20;
  spec.chunk_rows = 5;
  OnRoot([&] { testing::WriteAscadV2(dir / "v2.h5", spec); });
  Hdf5ImportConfig config = LoadConfig("import_ascad_v2_extracted.json");
  config.structure.examples_per_shard = 16;
  Import(config, {dir / "v2.h5"}, dir / "out");
  if (TestComm().rank() == 0) {
    for (auto [split, group, rows] : {std::tuple{Split::kTrain, std::string("Profiling_traces"), 45u},
                                      std::tuple{Split::kTest, std::string("Attack_traces"), 20u}}) {
      std::vector<AttrExpect> attrs = {{group + "/traces", ValueKind::kSignedByte},
                                       {group + "/labels.alpha_mask", ValueKind::kByte},
                                       {group + "/labels.beta_mask", ValueKind::kByte},
                                       {group + "/labels.sbox_masked", ValueKind::kByte},
                                       {group + "/labels.sbox_masked_with_perm", ValueKind::kByte},
                                       {group + "/labels.perm_index", ValueKind::kByte},
                                       {group + "/metadata.plaintext", ValueKind::kByte},
                                       {group + "/metadata.key", ValueKind::kByte},
                                       {group + "/metadata.masks", ValueKind::kByte}};
      EXPECT_EQ(ExpectSplit(dir / "out", split, attrs, {{spec.seed, 0, rows}}), rows);
    }
  }
  ExpectChecksClean(dir / "out");
}

TEST(Hdf5Import, LascarThreeFilesWithWindowAndRowRange) {
  SharedDir dir;
  std::vector<H5FixtureSpec> specs(3);
  const std::uint64_t rows[3] = {30, 25, 41};
  for (int i = 0; i < 3; ++i) {
    specs[i].seed = 100 + i;
    specs[i].profiling_rows = rows[i];
    specs[i].trace_len = 1200;
    specs[i].trace_type = testing::TraceType::kFloat32;
    specs[i].chunked = i != 1;
    specs[i].chunk_rows = 6;
    specs[i].profiling_float_metadata = i == 2;
  }
  OnRoot([&] {
    for (int i = 0; i < 3; ++i) testing::WriteLascar(dir / ("c" + std::to_string(i) + ".h5"), specs[i]);
  });
  const std::vector<std::string> inputs = {dir / "c0.h5", dir / "c1.h5", dir / "c2.h5"};
  // The shipped mapping: window [0, 1000) of 1200 samples.
  {
    Hdf5ImportConfig config = LoadConfig("import_lascar.json");
    config.structure.examples_per_shard = 9;
    Import(config, inputs, dir / "out");
    if (TestComm().rank() == 0) {
      std::vector<AttrExpect> attrs = {{"/leakages", ValueKind::kFloat},
                                       {"/values.plaintext", ValueKind::kByte},
                                       {"/values.key", ValueKind::kByte},
                                       {"/values.ciphertext", ValueKind::kByte}};
      EXPECT_EQ(ExpectSplit(dir / "out", Split::kTrain, attrs,
                            {{100, 0, 30}, {101, 0, 25}, {102, 0, 41}}),
                96u);
    }
    ExpectChecksClean(dir / "out");
  }
  // Rows [5, 20) of each file to train, [20, 25) to test, a window in the
  // middle, npz shards, and float32 traces narrowed to float16 where exact...
  // they are not (k/4096 needs 17 bits), so keep float32 and widen to float64.
  {
    Hdf5ImportConfig config = ParseConfig(R"({
      "dataset_structure": {
        "saved_data_description": [
          {"name": "window", "dtype": "float64", "shape": [200]},
          {"name": "key", "dtype": "int16", "shape": [4, 4]}
        ],
        "shard_file_type": "npz", "compression": "ZIP", "examples_per_shard": 4,
        "hash_checksum_algorithms": ["xxh64"]
      },
      "import_hdf5": {
        "splits": {
          "train": {"rows": [5, 20], "attributes": {
              "window": {"dataset": "/leakages", "columns": [100, 300]},
              "key": {"dataset": "values", "field": "key"}}},
          "test": {"rows": [20, 25], "attributes": {
              "window": {"dataset": "leakages", "columns": [100, 300]},
              "key": {"dataset": "values", "field": "key"}}}
        },
        "memory_budget_mb": 16
      }
    })");
    Import(config, inputs, dir / "out2");
    if (TestComm().rank() == 0) {
      std::vector<AttrExpect> attrs = {{"/leakages", ValueKind::kFloat, 100}, {"/values.key", ValueKind::kByte}};
      EXPECT_EQ(ExpectSplit(dir / "out2", Split::kTrain, attrs, {{100, 5, 20}, {101, 5, 20}, {102, 5, 20}}), 45u);
      EXPECT_EQ(ExpectSplit(dir / "out2", Split::kTest, attrs, {{100, 20, 25}, {101, 20, 25}, {102, 20, 25}}), 15u);
    }
    ExpectChecksClean(dir / "out2");
  }
}

TEST(Hdf5Import, Float16TracesDirectAndWidened) {
  SharedDir dir;
  H5FixtureSpec spec;
  spec.seed = 21;
  spec.trace_len = 300;
  spec.trace_type = testing::TraceType::kFloat16;
  spec.profiling_rows = 33;
  spec.attack_rows = 0;
  spec.chunk_rows = 10;
  OnRoot([&] { testing::WriteAscadV1(dir / "f16.h5", spec); });
  for (const char* dtype : {"float16", "float32"}) {
    Hdf5ImportConfig config = ParseConfig(std::string(R"({
      "dataset_structure": {"saved_data_description": [{"name": "t", "dtype": ")") + dtype + R"(", "shape": [300]}],
                            "examples_per_shard": 5},
      "import_hdf5": {"splits": {"holdout": {"attributes": {"t": "Profiling_traces/traces"}}}}})");
    const std::string out = dir / (std::string("out_") + dtype);
    Import(config, {dir / "f16.h5"}, out);
    if (TestComm().rank() == 0) {
      EXPECT_EQ(ExpectSplit(out, Split::kHoldout, {{"Profiling_traces/traces", ValueKind::kHalf}}, {{21, 0, 33}}),
                33u);
    }
  }
}

// ---- Errors: each fails the whole job and leaves OUT as it was (absent). ----

Status ImportError(const Hdf5ImportConfig& config, const std::vector<std::string>& inputs, const std::string& out) {
  auto s = ImportHdf5(TestComm(), config, inputs, out);
  EXPECT_FALSE(s.ok()) << "import unexpectedly succeeded";
  EXPECT_OK(TestComm().Barrier());
  EXPECT_FALSE(std::filesystem::exists(out)) << out << " was left behind";
  return s.status();
}

// The rank that failed reports the reason; every other rank reports it as the
// reason it aborted. Either way the text is there.
#define EXPECT_IMPORT_ERROR(status, text) \
  EXPECT_NE((status).message().find(text), std::string::npos) << (status).ToString()

struct ErrorFixture {
  SharedDir dir;
  H5FixtureSpec spec;
  ErrorFixture() {
    spec.trace_len = 700;
    spec.profiling_rows = 40;
    spec.attack_rows = 12;
    spec.chunk_rows = 8;
    spec.profiling_float_metadata = true;
    OnRoot([&] { testing::WriteAscadV1(dir / "ascad.h5", spec); });
  }
};

TEST(Hdf5ImportErrors, MissingDatasetNamesFileAndPath) {
  ErrorFixture f;
  Hdf5ImportConfig config = LoadConfig("import_ascad_v1_fixed.json");
  config.params.splits[1].attributes[0].second.dataset = "Attack_traces/tracez";
  const Status st = ImportError(config, {f.dir / "ascad.h5"}, f.dir / "out");
  EXPECT_EQ(st.code(), StatusCode::kNotFound);
  EXPECT_IMPORT_ERROR(st, "ascad.h5: no dataset /Attack_traces/tracez");
}

TEST(Hdf5ImportErrors, MissingFieldListsTheFields) {
  ErrorFixture f;
  Hdf5ImportConfig config = LoadConfig("import_ascad_v1_fixed.json");
  config.params.splits[0].attributes[2].second.field = "cipher";
  const Status st = ImportError(config, {f.dir / "ascad.h5"}, f.dir / "out");
  EXPECT_IMPORT_ERROR(st, "has no field \"cipher\"");
  EXPECT_IMPORT_ERROR(st, "fields: plaintext, key, ciphertext, masks");
}

TEST(Hdf5ImportErrors, UnreadableAndMissingFiles) {
  ErrorFixture f;
  OnRoot([&] { std::ofstream(f.dir / "garbage.h5") << "this is not HDF5"; });
  Hdf5ImportConfig config = LoadConfig("import_ascad_v1_fixed.json");
  Status st = ImportError(config, {f.dir / "ascad.h5", f.dir / "garbage.h5"}, f.dir / "out");
  EXPECT_IMPORT_ERROR(st, "garbage.h5: not an HDF5 file");
  st = ImportError(config, {f.dir / "nope.h5"}, f.dir / "out");
  EXPECT_IMPORT_ERROR(st, "nope.h5: cannot open the file");
}

TEST(Hdf5ImportErrors, ShapeMismatchIsCaughtBeforeWriting) {
  ErrorFixture f;
  Hdf5ImportConfig config = LoadConfig("import_ascad_v1_variable.json");  // 1400 samples, 18 masks
  Status st = ImportError(config, {f.dir / "ascad.h5"}, f.dir / "out");
  EXPECT_IMPORT_ERROR(st, "each row holds (700,) = 700 values, but attribute \"trace\" has shape (1400,)");
  // A window past the end of the rows.
  config = LoadConfig("import_ascad_v1_fixed.json");
  config.params.splits[0].attributes[0].second.columns = std::make_pair(600, 701);
  st = ImportError(config, {f.dir / "ascad.h5"}, f.dir / "out");
  EXPECT_IMPORT_ERROR(st, "the window ends at column 701 but rows have 700 columns");
  // Rows asked for that the file does not have.
  config = LoadConfig("import_ascad_v1_fixed.json");
  config.params.splits[1].rows = std::make_pair(0ULL, 13ULL);
  st = ImportError(config, {f.dir / "ascad.h5"}, f.dir / "out");
  EXPECT_IMPORT_ERROR(st, "rows [0, 13) asked for");
}

TEST(Hdf5ImportErrors, InexactValuesNameDatasetFieldRowAndValue) {
  for (double bad : {3.5, 300.0, -1.0}) {
    ErrorFixture f;
    // In the last rows, so with several ranks the last rank finds it while the
    // others are writing.
    OnRoot([&] { testing::OverwriteValue(f.dir / "ascad.h5", "Profiling_traces/metadata", "plaintext", 38, 5, bad); });
    Hdf5ImportConfig config = LoadConfig("import_ascad_v1_fixed.json");
    config.structure.examples_per_shard = 4;
    const Status st = ImportError(config, {f.dir / "ascad.h5"}, f.dir / "out");
    std::ostringstream value;
    value << "value " << (bad == 3.5 ? "3.5" : bad == 300 ? "300.0" : "-1.0");
    EXPECT_IMPORT_ERROR(st, "ascad.h5: /Profiling_traces/metadata field \"plaintext\": row 38 element 5");
    EXPECT_IMPORT_ERROR(st, value.str() + " is not exactly representable as uint8");
  }
}

TEST(Hdf5ImportErrors, RowCountsMustAgree) {
  ErrorFixture f;
  Hdf5ImportConfig config = LoadConfig("import_ascad_v1_fixed.json");
  // Profiling labels (40 rows) beside attack traces (12 rows).
  config.params.splits[1].attributes[1].second.dataset = "Profiling_traces/labels";
  const Status st = ImportError(config, {f.dir / "ascad.h5"}, f.dir / "out");
  EXPECT_IMPORT_ERROR(st, "/Profiling_traces/labels has 40 rows but /Attack_traces/traces has 12");
}

TEST(Hdf5ImportErrors, ExistingDatasetIsNotTouched) {
  ErrorFixture f;
  OnRoot([&] {
    std::filesystem::create_directories(f.dir / "out");
    std::ofstream(f.dir / "out/keep.txt") << "precious";
  });
  Hdf5ImportConfig config = LoadConfig("import_ascad_v1_fixed.json");
  auto s = ImportHdf5(TestComm(), config, {f.dir / "ascad.h5"}, f.dir / "out");
  EXPECT_EQ(s.status().code(), StatusCode::kAlreadyExists);
  EXPECT_OK(TestComm().Barrier());
  auto text = ReadFileText(f.dir / "out/keep.txt");
  ASSERT_TRUE(text.ok());
  EXPECT_EQ(*text, "precious");
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(f.dir / "out"), {}), 1);
}

// I/O faults on the last rank while it writes the imported dataset (the HDF5
// files are read by libhdf5, outside sedpack's FileSystem): every rank fails,
// and the new output folder is gone, so that the same import runs again.
TEST(Hdf5ImportFaults, AFaultOnOneRankRemovesTheNewDataset) {
  SharedDir dir;
  H5FixtureSpec spec;
  spec.trace_len = 700;  // the shape import_ascad_v1_fixed.json expects
  spec.profiling_rows = 60;
  spec.attack_rows = 20;
  spec.fixed_key = true;
  OnRoot([&] { testing::WriteAscadV1(dir / "ascad.h5", spec); });
  Hdf5ImportConfig config = LoadConfig("import_ascad_v1_fixed.json");
  config.structure.examples_per_shard = 8;
  const int rank = TestComm().rank(), victim = TestComm().size() - 1;
  testing::FaultFileSystem counter;
  {
    std::optional<testing::ScopedFileSystem> installed;
    if (rank == victim) installed.emplace(&counter);
    ASSERT_OK(ImportHdf5(TestComm(), config, {dir / "ascad.h5"}, dir / "healthy").status());
  }
  ExpectChecksClean(dir / "healthy");
  int tried = 0, run = 0;
  for (testing::FaultOp op : {testing::FaultOp::kWrite, testing::FaultOp::kCreate, testing::FaultOp::kMkdir,
                              testing::FaultOp::kRename}) {
    std::int64_t n = rank == victim ? counter.count(op) : 0;
    ASSERT_OK_AND_ASSIGN(n, TestComm().AllreduceSum(n));
    for (std::int64_t at : std::set<std::int64_t>{1, n / 2, n}) {
      if (at < 1) continue;
      const std::string out = dir / ("out" + std::to_string(run++));
      testing::FaultPlan plan;
      plan.op = op;
      plan.at = at;
      plan.error = op == testing::FaultOp::kWrite ? ENOSPC : EIO;
      testing::FaultFileSystem faulty(plan);
      Status st;
      {
        std::optional<testing::ScopedFileSystem> installed;
        if (rank == victim) installed.emplace(&faulty);
        st = ImportHdf5(TestComm(), config, {dir / "ascad.h5"}, out).status();
      }
      const std::string context = std::string(testing::FaultOpName(op)) + " #" + std::to_string(at) + " of " +
                                  std::to_string(n) + ": " + st.ToString();
      // Threads racing for the same folders make the number of mkdir calls
      // vary by a few: a point past this run's last call does not fire.
      ASSERT_OK_AND_ASSIGN(std::int64_t fired, TestComm().AllreduceSum(std::int64_t{faulty.fired() ? 1 : 0}));
      if (fired == 0) {
        EXPECT_TRUE(st.ok()) << context;
        continue;
      }
      ++tried;
      // The checks sidecar is written after the commit, best effort: a fault
      // there leaves the import done, without the sidecar.
      ASSERT_OK_AND_ASSIGN(std::int64_t failed, TestComm().AllreduceSum(std::int64_t{st.ok() ? 0 : 1}));
      if (failed == 0 && rank == 0) {
        EXPECT_FALSE(std::filesystem::exists(out + "/.sedpack-hpc/checks.bin")) << context;
      }
      if (failed == 0) continue;
      EXPECT_FALSE(st.ok()) << context;
      ASSERT_OK(TestComm().Barrier());
      if (rank == 0) {
        EXPECT_FALSE(std::filesystem::exists(out)) << context << ": the failed import left " << out;
      }
      ASSERT_OK(TestComm().Barrier());
    }
  }
  if (rank == 0) std::printf("[faults] import-hdf5, %d ranks: %d fault points\n", TestComm().size(), tried);
}

}  // namespace
}  // namespace sedpack
