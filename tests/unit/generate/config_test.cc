// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <string>

#include "sedpack/generate/generate.h"
#include "support/test_support.h"

namespace sedpack {
namespace {

TEST(GenerateConfigTest, ShippedConfigsLoadAndValidate) {
  for (const char* name : {"generate_tinyaes.json", "generate_small.json"}) {
    const std::string path = std::string(SEDPACK_CONFIGS_DIR) + "/" + name;
    ASSERT_OK_AND_ASSIGN(GenerateConfig c, LoadGenerateConfig(path));
    SCOPED_TRACE(name);
    EXPECT_OK(ValidateGenerateConfig(c));
  }
  ASSERT_OK_AND_ASSIGN(GenerateConfig c,
                       LoadGenerateConfig(std::string(SEDPACK_CONFIGS_DIR) + "/generate_tinyaes.json"));
  ASSERT_OK_AND_ASSIGN(std::int64_t len, TraceLength(c));
  EXPECT_EQ(len, kDefaultTraceLength);
  EXPECT_EQ(c.structure.compression, Compression::kLz4);
  EXPECT_EQ(c.structure.examples_per_shard, 256);
  EXPECT_EQ(c.examples(Split::kTrain), 2048u);
}

TEST(GenerateConfigTest, FullConfig) {
  ASSERT_OK_AND_ASSIGN(GenerateConfig c, ParseGenerateConfig(R"({
    "metadata": {"description": "d", "custom_metadata": {"lab": "x"}},
    "dataset_structure": {"compression": "ZSTD", "examples_per_shard": 8,
                          "hash_checksum_algorithms": ["xxh64"]},
    "generate": {"seed": 18446744073709551615, "examples": {"train": 3, "holdout": 2},
                 "trace_length": 512, "key_group_size": 4, "shard_by_key": true,
                 "threads": 3, "noise_std": 0.5, "leak_scale": 0, "output": "/tmp/x",
                 "progress": true}
  })", "cfg.json"));
  EXPECT_EQ(c.metadata.description, "d");
  EXPECT_EQ(c.metadata.custom_metadata.text(), R"({"lab":"x"})");
  EXPECT_EQ(c.structure.compression, Compression::kZstd);
  EXPECT_EQ(c.structure.examples_per_shard, 8);
  EXPECT_EQ(c.structure.shard_file_type, ShardFileType::kFb);
  ASSERT_EQ(c.structure.hash_checksum_algorithms.size(), 1u);
  EXPECT_EQ(c.params.seed, 18446744073709551615ULL);
  EXPECT_EQ(c.examples(Split::kTrain), 3u);
  EXPECT_EQ(c.examples(Split::kTest), 256u);  // default kept
  EXPECT_EQ(c.examples(Split::kHoldout), 2u);
  EXPECT_EQ(TraceLength(c).ValueOr(0), 512);
  EXPECT_EQ(c.structure.saved_data_description.size(), 4u);
  EXPECT_EQ(c.params.key_group_size, 4u);
  EXPECT_TRUE(c.params.shard_by_key);
  EXPECT_EQ(c.params.threads, 3);
  EXPECT_EQ(c.params.noise_std, 0.5);
  EXPECT_EQ(c.params.leak_scale, 0.0);
  EXPECT_EQ(c.params.output, "/tmp/x");
  EXPECT_TRUE(c.params.progress);
  EXPECT_OK(ValidateGenerateConfig(c));
}

TEST(GenerateConfigTest, EmptyObjectIsTheDefaultJob) {
  ASSERT_OK_AND_ASSIGN(GenerateConfig c, ParseGenerateConfig("{}", "cfg.json"));
  EXPECT_EQ(TraceLength(c).ValueOr(0), kDefaultTraceLength);
  EXPECT_OK(ValidateGenerateConfig(c));
}

TEST(GenerateConfigTest, UnknownKeysNameKeyAndFile) {
  EXPECT_STATUS(StatusCode::kInvalidArgument, "cfg.json",
                ParseGenerateConfig(R"({"generat": {}})", "cfg.json"));
  EXPECT_STATUS(StatusCode::kInvalidArgument, "\"generat\"",
                ParseGenerateConfig(R"({"generat": {}})", "cfg.json"));
  EXPECT_STATUS(StatusCode::kInvalidArgument, "generate.sed",
                ParseGenerateConfig(R"({"generate": {"sed": 1}})", "cfg.json"));
  EXPECT_STATUS(StatusCode::kInvalidArgument, "generate.examples.trian",
                ParseGenerateConfig(R"({"generate": {"examples": {"trian": 1}}})", "cfg.json"));
  EXPECT_STATUS(StatusCode::kInvalidArgument, "descripton",
                ParseGenerateConfig(R"({"metadata": {"descripton": "x"}})", "cfg.json"));
  EXPECT_STATUS(StatusCode::kInvalidArgument, "cfg.json",
                ParseGenerateConfig(R"({"metadata": {"descripton": "x"}})", "cfg.json"));
  EXPECT_STATUS(StatusCode::kInvalidArgument, "compresion",
                ParseGenerateConfig(R"({"dataset_structure": {"compresion": "LZ4"}})", "cfg.json"));
  EXPECT_STATUS(StatusCode::kInvalidArgument, "shap",
                ParseGenerateConfig(R"({"dataset_structure": {"saved_data_description": [
                    {"name": "trace1", "dtype": "float16", "shape": [300], "shap": 1}]}})",
                                    "cfg.json"));
}

TEST(GenerateConfigTest, BadValues) {
  EXPECT_STATUS(StatusCode::kInvalidArgument, "generate.seed",
                ParseGenerateConfig(R"({"generate": {"seed": -1}})", "c.json"));
  EXPECT_STATUS(StatusCode::kInvalidArgument, "generate.seed",
                ParseGenerateConfig(R"({"generate": {"seed": "1"}})", "c.json"));
  EXPECT_STATUS(StatusCode::kInvalidArgument, "generate.shard_by_key",
                ParseGenerateConfig(R"({"generate": {"shard_by_key": 1}})", "c.json"));
  EXPECT_STATUS(StatusCode::kInvalidArgument, "generate.examples.test",
                ParseGenerateConfig(R"({"generate": {"examples": {"test": 1.5}}})", "c.json"));
  EXPECT_STATUS(StatusCode::kInvalidArgument, "not valid JSON",
                ParseGenerateConfig(R"({"generate": )", "c.json"));
  EXPECT_STATUS(StatusCode::kInvalidArgument, "must be a JSON object",
                ParseGenerateConfig("[]", "c.json"));
  EXPECT_STATUS(StatusCode::kInvalidArgument, "compression",
                ParseGenerateConfig(R"({"dataset_structure": {"compression": "LZ5"}})", "c.json"));
  EXPECT_STATUS(StatusCode::kNotFound, "no_such.json", LoadGenerateConfig("/nonexistent/no_such.json"));
}

TEST(GenerateConfigTest, TraceLengthVersusSchema) {
  // The schema's shape is used when trace_length is absent...
  ASSERT_OK_AND_ASSIGN(GenerateConfig c, ParseGenerateConfig(R"({"dataset_structure": {
      "saved_data_description": [{"name": "trace1", "dtype": "float32", "shape": [700]}]}})",
                                                             "c.json"));
  EXPECT_EQ(TraceLength(c).ValueOr(0), 700);
  EXPECT_OK(ValidateGenerateConfig(c));
  // ...agrees when both are given, and a contradiction is an error.
  EXPECT_OK(ParseGenerateConfig(R"({"generate": {"trace_length": 700}, "dataset_structure": {
      "saved_data_description": [{"name": "trace1", "dtype": "float32", "shape": [700]}]}})",
                                "c.json")
                .status());
  EXPECT_STATUS(StatusCode::kInvalidArgument, "contradicts",
                ParseGenerateConfig(R"({"generate": {"trace_length": 800}, "dataset_structure": {
      "saved_data_description": [{"name": "trace1", "dtype": "float32", "shape": [700]}]}})",
                                    "c.json"));
}

}  // namespace
}  // namespace sedpack
