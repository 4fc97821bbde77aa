// SPDX-License-Identifier: Apache-2.0
// Decode every shard written by the reference (Python sedpack) and compare
// every value with expected_examples.jsonl; re-encode to compare bytes.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "sedpack/codecs/hash.h"
#include "sedpack/shard/shard.h"
#include "support/test_support.h"
#include "unit/shard/shard_test_util.h"

namespace sedpack {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using testing::FromHex;
using testing::ReadFileBytes;
using testing::ToHex;

std::string Hex(std::span<const std::byte> data) { return ToHex(data.data(), data.size()); }

json ReadJson(const fs::path& path) {
  std::ifstream in(path);
  EXPECT_TRUE(in.good()) << "cannot open " << path;
  return json::parse(in);
}

std::vector<json> ReadJsonLines(const fs::path& path) {
  std::ifstream in(path);
  EXPECT_TRUE(in.good()) << "cannot open " << path;
  std::vector<json> out;
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) out.push_back(json::parse(line));
  }
  return out;
}

std::vector<AttributeSpec> SchemaFrom(const json& attributes) {
  std::vector<AttributeSpec> schema;
  for (const json& a : attributes) {
    AttributeSpec spec;
    spec.name = a.at("name").get<std::string>();
    spec.dtype = ParseDType(a.at("dtype").get<std::string>()).value();
    spec.shape = a.at("shape").get<Shape>();
    schema.push_back(spec);
  }
  return schema;
}

// Every fixture with the common 16-attribute schema; fb_minimal is tested apart.
const char* const kFixtures[] = {
    "fb_none",    "fb_gzip", "fb_zlib",  "fb_bz2",  "fb_lzma",
    "fb_lz4",     "fb_zstd", "npz_none", "npz_zip", "fb_multiprocessing",
    "fb_continue"};

TEST(GoldenShardTest, EveryFixtureIsCovered) {
  std::set<std::string> on_disk;
  for (const auto& entry : fs::directory_iterator(testing::GoldenDir())) {
    const std::string name = entry.path().filename().string();
    if (entry.is_directory() && (name.rfind("fb_", 0) == 0 || name.rfind("npz_", 0) == 0)) {
      on_disk.insert(name);
    }
  }
  std::set<std::string> covered(std::begin(kFixtures), std::end(kFixtures));
  covered.insert("fb_minimal");
  EXPECT_EQ(on_disk, covered);
}

class GoldenFixtureTest : public ::testing::TestWithParam<const char*> {
 protected:
  void SetUp() override {
    dir_ = fs::path(testing::GoldenDir()) / GetParam();
    expected_ = ReadJson(dir_ / "expected.json");
    examples_ = ReadJsonLines(dir_ / "expected_examples.jsonl");
    schema_ = SchemaFrom(expected_.at("attributes"));
    type_ = ParseShardFileType(expected_.at("shard_file_type").get<std::string>()).value();
    compression_ = ParseCompression(expected_.at("compression").get<std::string>()).value();
  }

  // The jsonl rows of shard `index` of `split`, in read order.
  std::vector<const json*> RowsOf(const std::string& split, std::size_t index) const {
    std::vector<const json*> rows;
    for (const json& row : examples_) {
      if (row.at("split") == split && row.at("shard").get<std::size_t>() == index) {
        rows.push_back(&row);
      }
    }
    return rows;
  }

  fs::path dir_;
  json expected_;
  std::vector<json> examples_;
  std::vector<AttributeSpec> schema_;
  ShardFileType type_ = ShardFileType::kFb;
  Compression compression_ = Compression::kNone;
};

TEST_P(GoldenFixtureTest, DecodesEveryShardAndValue) {
  std::size_t compared = 0;
  for (const auto& [split, info] : expected_.at("splits").items()) {
    const json& shards = info.at("shards");
    for (std::size_t s = 0; s < shards.size(); ++s) {
      SCOPED_TRACE(split + " shard " + std::to_string(s));
      const fs::path path = dir_ / "dataset" / shards[s].at("file_path").get<std::string>();
      ASSERT_OK_AND_ASSIGN(auto shard,
                           DecodeShard(type_, compression_, schema_, ReadFileBytes(path)));
      const auto rows = RowsOf(split, s);
      ASSERT_EQ(shard->num_examples(), rows.size());
      ASSERT_EQ(shard->num_examples(), shards[s].at("number_of_examples").get<std::size_t>());
      ASSERT_EQ(shard->num_attributes(), schema_.size());
      for (std::size_t i = 0; i < rows.size(); ++i) {
        for (std::size_t j = 0; j < schema_.size(); ++j) {
          const ValueView v = shard->Get(i, j);
          const std::string& name = schema_[j].name;
          EXPECT_EQ(Hex(v.data), rows[i]->at("values").at(name).at("hex").get<std::string>())
              << "example " << i << " attribute " << name;
          // The reference wrote the declared dtypes, so npz stores them too.
          EXPECT_EQ(v.dtype, schema_[j].dtype) << name;
          EXPECT_EQ(v.shape, schema_[j].IsVariableSize() ? Shape{} : schema_[j].shape) << name;
          ++compared;
        }
      }
    }
  }
  EXPECT_EQ(compared, examples_.size() * schema_.size());
  EXPECT_GT(compared, 0u);
}

// Re-encode every decoded shard with the C++ writer. fb: the uncompressed
// bytes must equal the reference builder's (decompressed_sha256). npz: the
// whole file must equal the reference's.
TEST_P(GoldenFixtureTest, ReencodingGivesTheReferenceBytes) {
  const HashAlgorithm sha256[] = {HashAlgorithm::kSha256};
  for (const auto& [split, info] : expected_.at("splits").items()) {
    const json& shards = info.at("shards");
    for (std::size_t s = 0; s < shards.size(); ++s) {
      SCOPED_TRACE(split + " shard " + std::to_string(s));
      const fs::path path = dir_ / "dataset" / shards[s].at("file_path").get<std::string>();
      const std::vector<std::byte> file = ReadFileBytes(path);
      ASSERT_OK_AND_ASSIGN(auto shard, DecodeShard(type_, compression_, schema_, file));
      const Compression out_compression =
          type_ == ShardFileType::kFb ? Compression::kNone : compression_;
      ASSERT_OK_AND_ASSIGN(auto writer, MakeShardWriter(type_, out_compression, schema_));
      for (std::size_t i = 0; i < shard->num_examples(); ++i) {
        std::vector<ValueView> values;
        for (std::size_t j = 0; j < schema_.size(); ++j) values.push_back(shard->Get(i, j));
        ASSERT_OK(writer->Add(values));
      }
      ASSERT_OK_AND_ASSIGN(auto bytes, writer->Finish());
      if (type_ == ShardFileType::kFb) {
        ASSERT_OK_AND_ASSIGN(auto digest, HashBytes(sha256, bytes));
        EXPECT_EQ(digest[0], shards[s].at("decompressed_sha256").get<std::string>());
        EXPECT_EQ(bytes.size(), shards[s].at("decompressed_size").get<std::size_t>());
        if (compression_ == Compression::kNone) {
          EXPECT_TRUE(bytes == file);
        }
      } else {
        EXPECT_EQ(bytes.size(), file.size());
        EXPECT_TRUE(bytes == file);
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Fixtures, GoldenFixtureTest, ::testing::ValuesIn(kFixtures),
                         [](const auto& info) { return std::string(info.param); });

class GoldenMinimalTest : public ::testing::Test {
 protected:
  void SetUp() override {
    expected_ = ReadJson(fs::path(testing::GoldenDir()) / "fb_minimal" / "expected.json");
  }
  const std::vector<AttributeSpec> schema_ = {
      {"x", DType::kFloat32, {2}}, {"s", DType::kStr, {}}, {"b", DType::kBytes, {}}};
  json expected_;
};

TEST_F(GoldenMinimalTest, Decodes) {
  const std::vector<std::byte> bytes = FromHex(expected_.at("shard_hex").get<std::string>());
  ASSERT_EQ(bytes.size(), 192u);
  ASSERT_OK_AND_ASSIGN(auto shard,
                       DecodeShard(ShardFileType::kFb, Compression::kNone, schema_, bytes));
  const json& examples = expected_.at("examples");
  ASSERT_EQ(shard->num_examples(), examples.size());
  for (std::size_t i = 0; i < examples.size(); ++i) {
    for (std::size_t j = 0; j < schema_.size(); ++j) {
      EXPECT_EQ(Hex(shard->Get(i, j).data),
                examples[i].at(schema_[j].name).at("hex").get<std::string>());
    }
  }
}

TEST_F(GoldenMinimalTest, WriterMatchesPythonBuilderByteForByte) {
  const float x0[] = {1.0f, -2.0f};
  const float x1[] = {0.5f, 3.0f};
  const std::uint8_t b0[] = {1, 2, 3};
  const ValueView e0[] = {ValueView::Array(std::span<const float>(x0), {2}), ValueView::Str("hi"),
                          ValueView::Bytes(std::span<const std::uint8_t>(b0))};
  const ValueView e1[] = {ValueView::Array(std::span<const float>(x1), {2}), ValueView::Str(""),
                          ValueView::Bytes(std::span<const std::uint8_t>())};
  ASSERT_OK_AND_ASSIGN(auto writer,
                       MakeShardWriter(ShardFileType::kFb, Compression::kNone, schema_));
  ASSERT_OK(writer->Add(e0));
  ASSERT_OK(writer->Add(e1));
  ASSERT_OK_AND_ASSIGN(auto bytes, writer->Finish());
  EXPECT_EQ(Hex(bytes), expected_.at("shard_hex").get<std::string>());
}

}  // namespace
}  // namespace sedpack
