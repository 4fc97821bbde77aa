// SPDX-License-Identifier: Apache-2.0
// The importer's parts: mapping configs, exact conversion, the inspector.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <limits>

#include "hdf5/convert_internal.h"
#include "sedpack/hdf5/import.h"
#include "sedpack/hdf5/inspect.h"
#include "sedpack/hdf5/mapping.h"
#include "sedpack/comm/comm.h"
#include "support/h5_fixtures.h"
#include "support/test_support.h"

namespace sedpack {
namespace {

constexpr const char* kMinimal = R"({
  "dataset_structure": {"saved_data_description": [{"name": "t", "dtype": "int8", "shape": [10]}]},
  "import_hdf5": {"splits": {"train": {"attributes": {"t": "/traces"}}}}
})";

std::string With(std::string text, const std::string& from, const std::string& to) {
  const auto pos = text.find(from);
  EXPECT_NE(pos, std::string::npos) << from;
  return pos == std::string::npos ? text : text.replace(pos, from.size(), to);
}

TEST(Hdf5Mapping, ParsesSourcesInAllForms) {
  ASSERT_OK_AND_ASSIGN(Hdf5ImportConfig c, ParseHdf5ImportConfig(R"({
    "metadata": {"description": "d"},
    "dataset_structure": {"saved_data_description": [
        {"name": "t", "dtype": "int8", "shape": [10]}, {"name": "k", "dtype": "uint8", "shape": [16]}],
        "compression": "ZSTD"},
    "import_hdf5": {
      "splits": {"test": {"rows": [3, 9], "attributes": {
          "t": {"dataset": "g/traces", "columns": [5, 15]},
          "k": {"dataset": "/g/meta", "field": "key"}},
        "shard_custom_metadata": {"key": {"dataset": "g/meta", "field": "key", "dtype": "uint8"}}}},
      "inputs": ["a.h5", "b.h5"], "output": "out", "memory_budget_mb": 64, "threads": 3, "progress": true}
  })", "c.json"));
  ASSERT_OK(ValidateHdf5ImportConfig(c));
  EXPECT_EQ(c.metadata.description, "d");
  EXPECT_EQ(c.structure.compression, Compression::kZstd);
  ASSERT_EQ(c.params.splits.size(), 1u);
  const Hdf5SplitMapping& m = c.params.splits[0];
  EXPECT_EQ(m.split, Split::kTest);
  EXPECT_EQ(m.rows, std::make_pair(std::uint64_t{3}, std::uint64_t{9}));
  EXPECT_EQ(m.attributes[0].second.dataset, "g/traces");
  EXPECT_EQ(m.attributes[0].second.columns, std::make_pair(std::int64_t{5}, std::int64_t{15}));
  EXPECT_EQ(m.attributes[1].second.dataset, "g/meta");  // leading "/" dropped
  EXPECT_EQ(m.attributes[1].second.field, "key");
  EXPECT_EQ(m.shard_custom_metadata[0].second.dtype, DType::kUInt8);
  EXPECT_EQ(c.params.inputs, (std::vector<std::string>{"a.h5", "b.h5"}));
  EXPECT_EQ(c.params.memory_budget_bytes, 64ULL << 20);
  EXPECT_EQ(c.params.threads, 3);
  EXPECT_TRUE(c.params.progress);
}

TEST(Hdf5Mapping, UnknownKeysAreNamed) {
  EXPECT_STATUS(StatusCode::kInvalidArgument, "unknown key \"import\"",
                ParseHdf5ImportConfig(With(kMinimal, "\"import_hdf5\"", "\"import\""), "c.json"));
  EXPECT_STATUS(StatusCode::kInvalidArgument, "unknown key \"import_hdf5.splits.train.atributes\" in \"import_hdf5.splits.train\"",
                ParseHdf5ImportConfig(With(kMinimal, "\"attributes\"", "\"atributes\""), "c.json"));
  EXPECT_STATUS(StatusCode::kInvalidArgument, "attributes.t.feild\"",
                ParseHdf5ImportConfig(With(kMinimal, "\"/traces\"", R"({"dataset": "x", "feild": "y"})"), "c.json"));
  EXPECT_STATUS(StatusCode::kInvalidArgument, "unknown key \"import_hdf5.splits.validation\"",
                ParseHdf5ImportConfig(With(kMinimal, "\"train\"", "\"validation\""), "c.json"));
  EXPECT_STATUS(StatusCode::kInvalidArgument, "c.json: not valid JSON", ParseHdf5ImportConfig("{", "c.json"));
}

TEST(Hdf5Mapping, BadValuesAreRefused) {
  EXPECT_STATUS(StatusCode::kInvalidArgument, "expected first < last",
                ParseHdf5ImportConfig(With(kMinimal, "\"/traces\"", R"({"dataset": "x", "columns": [5, 5]})"), "c"));
  EXPECT_STATUS(StatusCode::kInvalidArgument, "column window applies to a plain",
                ParseHdf5ImportConfig(
                    With(kMinimal, "\"/traces\"", R"({"dataset": "x", "field": "f", "columns": [0, 5]})"), "c"));
  EXPECT_STATUS(StatusCode::kInvalidArgument, "missing HDF5 dataset path",
                ParseHdf5ImportConfig(With(kMinimal, "\"/traces\"", R"({"field": "f"})"), "c"));
  EXPECT_STATUS(StatusCode::kInvalidArgument, "memory_budget_mb",
                ParseHdf5ImportConfig(With(kMinimal, "\"splits\"", R"("memory_budget_mb": 1, "splits")"), "c"));
  EXPECT_STATUS(StatusCode::kInvalidArgument, "saved_data_description is required",
                ParseHdf5ImportConfig(R"({"dataset_structure": {}, "import_hdf5": {"splits": {}}})", "c"));
  EXPECT_STATUS(StatusCode::kInvalidArgument, "missing \"import_hdf5\"",
                ParseHdf5ImportConfig(R"({"dataset_structure": {"saved_data_description": []}})", "c"));
}

TEST(Hdf5Mapping, ValidationNeedsExactlyOneSourcePerAttribute) {
  ASSERT_OK_AND_ASSIGN(Hdf5ImportConfig c, ParseHdf5ImportConfig(kMinimal, "c"));
  ASSERT_OK(ValidateHdf5ImportConfig(c));
  Hdf5ImportConfig missing = c;
  missing.params.splits[0].attributes.clear();
  EXPECT_STATUS(StatusCode::kInvalidArgument, "attribute \"t\" has no source", ValidateHdf5ImportConfig(missing));
  Hdf5ImportConfig extra = c;
  extra.params.splits[0].attributes.push_back({"u", Hdf5Source{"x", "", {}, {}}});
  EXPECT_STATUS(StatusCode::kInvalidArgument, "\"u\" is not an attribute", ValidateHdf5ImportConfig(extra));
  Hdf5ImportConfig str = c;
  str.structure.saved_data_description[0].dtype = "str";
  str.structure.saved_data_description[0].shape = {};
  EXPECT_OK(ValidateHdf5ImportConfig(str));  // str comes from HDF5 strings
  Hdf5ImportConfig none = c;
  none.params.splits.clear();
  EXPECT_STATUS(StatusCode::kInvalidArgument, "no split is mapped", ValidateHdf5ImportConfig(none));
}

TEST(Hdf5Mapping, ShippedConfigsParseAndValidate) {
  for (const char* name : {"import_ascad_v1_fixed.json", "import_ascad_v1_variable.json",
                           "import_ascad_v2_extracted.json", "import_lascar.json"}) {
    auto c = LoadHdf5ImportConfig(std::string(SEDPACK_CONFIGS_DIR) + "/" + name);
    ASSERT_TRUE(c.ok()) << name << ": " << c.status().ToString();
    EXPECT_OK(ValidateHdf5ImportConfig(*c));
  }
}

// ---- Exact conversion ----

template <typename T>
std::vector<std::byte> Wide(std::initializer_list<T> values) {
  std::vector<std::byte> out(values.size() * 8);
  std::size_t i = 0;
  for (T v : values) std::memcpy(out.data() + 8 * i++, &v, 8);
  return out;
}

TEST(Hdf5Convert, ExactValuesPassAndInexactAreReported) {
  using h5::ReadAs;
  h5::InexactValue bad;
  std::vector<std::byte> out(64);
  auto d = Wide<double>({0.0, 43.0, 255.0});
  ASSERT_TRUE(h5::ConvertExact(ReadAs::kFloat64, d.data(), 3, DType::kUInt8, out.data(), &bad));
  EXPECT_EQ(static_cast<int>(out[1]), 43);
  EXPECT_EQ(static_cast<int>(out[2]), 255);
  for (double v : {3.5, 256.0, -1.0, std::nan(""), static_cast<double>(INFINITY)}) {
    auto x = Wide<double>({1.0, v});
    EXPECT_FALSE(h5::ConvertExact(ReadAs::kFloat64, x.data(), 2, DType::kUInt8, out.data(), &bad)) << v;
    EXPECT_EQ(bad.index, 1u);
  }
  auto neg = Wide<double>({-128.0, 127.0, -129.0});
  EXPECT_FALSE(h5::ConvertExact(ReadAs::kFloat64, neg.data(), 3, DType::kInt8, out.data(), &bad));
  EXPECT_EQ(bad.index, 2u);
  EXPECT_EQ(bad.value, "-129.0");
  // Integers to narrower integers and to floats.
  auto i = Wide<std::int64_t>({-5, 70000});
  EXPECT_FALSE(h5::ConvertExact(ReadAs::kInt64, i.data(), 2, DType::kInt16, out.data(), &bad));
  EXPECT_EQ(bad.value, "70000");
  EXPECT_TRUE(h5::ConvertExact(ReadAs::kInt64, i.data(), 2, DType::kInt32, out.data(), &bad));
  EXPECT_FALSE(h5::ConvertExact(ReadAs::kInt64, i.data(), 1, DType::kUInt32, out.data(), &bad));
  auto big = Wide<std::uint64_t>({(1ULL << 53) + 1});
  EXPECT_FALSE(h5::ConvertExact(ReadAs::kUInt64, big.data(), 1, DType::kFloat64, out.data(), &bad));
  auto u = Wide<std::uint64_t>({1ULL << 63});
  EXPECT_FALSE(h5::ConvertExact(ReadAs::kUInt64, u.data(), 1, DType::kInt64, out.data(), &bad));
  EXPECT_TRUE(h5::ConvertExact(ReadAs::kUInt64, u.data(), 1, DType::kUInt64, out.data(), &bad));
  // Floats to narrower floats: only when nothing is lost; NaN stays NaN.
  auto f = Wide<double>({0.5, 1.0 / 3.0});
  EXPECT_TRUE(h5::ConvertExact(ReadAs::kFloat64, f.data(), 1, DType::kFloat16, out.data(), &bad));
  EXPECT_FALSE(h5::ConvertExact(ReadAs::kFloat64, f.data(), 2, DType::kFloat32, out.data(), &bad));
  auto h = Wide<double>({65504.0, 65505.0});
  EXPECT_FALSE(h5::ConvertExact(ReadAs::kFloat64, h.data(), 2, DType::kFloat16, out.data(), &bad));
  EXPECT_EQ(bad.index, 1u);
  auto n = Wide<double>({std::nan("")});
  EXPECT_TRUE(h5::ConvertExact(ReadAs::kFloat64, n.data(), 1, DType::kFloat32, out.data(), &bad));
}

// ---- Inspector ----

TEST(Hdf5Inspect, ListsGroupsDatasetsChunksAndFields) {
  testing::TempDir dir;
  testing::H5FixtureSpec spec;
  spec.trace_len = 700;
  spec.desync = true;
  spec.attack_float_metadata = true;
  testing::WriteAscadV1(dir.path() + "/a.h5", spec);
  ASSERT_OK_AND_ASSIGN(std::vector<Hdf5ObjectInfo> objects, InspectHdf5(dir.path() + "/a.h5"));
  std::vector<std::string> paths;
  for (const auto& o : objects) paths.push_back(o.path);
  EXPECT_EQ(paths, (std::vector<std::string>{"/Attack_traces", "/Attack_traces/labels", "/Attack_traces/metadata",
                                             "/Attack_traces/traces", "/Profiling_traces",
                                             "/Profiling_traces/labels", "/Profiling_traces/metadata",
                                             "/Profiling_traces/traces"}));
  const Hdf5ObjectInfo& traces = objects[7];
  EXPECT_EQ(traces.dims, (std::vector<std::uint64_t>{100, 700}));
  EXPECT_EQ(traces.type, "int8");
  EXPECT_EQ(traces.layout, "chunked");
  EXPECT_EQ(traces.chunk, (std::vector<std::uint64_t>{16, 700}));
  EXPECT_EQ(traces.filters, (std::vector<std::string>{"deflate"}));
  const Hdf5ObjectInfo& meta = objects[2];
  EXPECT_EQ(meta.type, "compound");
  ASSERT_EQ(meta.fields.size(), 5u);
  EXPECT_EQ(meta.fields[0].name, "plaintext");
  EXPECT_EQ(meta.fields[0].type, "float64");
  EXPECT_EQ(meta.fields[0].dims, (std::vector<std::uint64_t>{16}));
  EXPECT_EQ(meta.fields[4].name, "desync");
  EXPECT_EQ(meta.fields[4].type, "uint32");
  EXPECT_TRUE(meta.fields[4].dims.empty());
  EXPECT_STATUS(StatusCode::kNotFound, "missing.h5", InspectHdf5(dir.path() + "/missing.h5"));
}

TEST(Hdf5Inspect, SuggestedMappingImports) {
  testing::TempDir dir;
  testing::H5FixtureSpec spec;
  spec.trace_len = 64;
  spec.profiling_rows = 20;
  spec.attack_rows = 7;
  testing::WriteAscadV2(dir.path() + "/v2.h5", spec);
  ASSERT_OK_AND_ASSIGN(auto objects, InspectHdf5(dir.path() + "/v2.h5"));
  std::vector<std::string> notes;
  ASSERT_OK_AND_ASSIGN(std::string text, SuggestHdf5Mapping(dir.path() + "/v2.h5", objects, &notes));
  EXPECT_TRUE(notes.empty()) << notes.front();
  ASSERT_OK_AND_ASSIGN(Hdf5ImportConfig config, ParseHdf5ImportConfig(text, "suggested"));
  ASSERT_OK(ValidateHdf5ImportConfig(config));
  ASSERT_EQ(config.params.splits.size(), 2u);
  EXPECT_EQ(config.params.splits[0].split, Split::kTest);   // Attack_traces sorts first
  EXPECT_EQ(config.params.splits[1].split, Split::kTrain);  // Profiling_traces
  EXPECT_EQ(config.structure.saved_data_description.size(), 1u + 5 + 4);
  auto comm = MakeSerialComm();
  ASSERT_OK_AND_ASSIGN(Hdf5ImportSummary s, ImportHdf5(*comm, config, {dir.path() + "/v2.h5"}, dir.path() + "/out"));
  EXPECT_EQ(s.examples[0], 20u);
  EXPECT_EQ(s.examples[1], 7u);
}

}  // namespace
}  // namespace sedpack
