// SPDX-License-Identifier: Apache-2.0
// tfrec datasets written by an independent encoder (make_tfrec_dataset.py:
// hand-encoded protocol buffers, bitwise CRC-32C, Python's gzip/zlib) are
// verified and read here value for value.
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sedpack/check/check.h"
#include "sedpack/dataset/dataset.h"
#include "sedpack/dataset/reader.h"
#include "support/test_support.h"

namespace sedpack {
namespace {

using Json = nlohmann::json;

class TfrecInteropTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new testing::TempDir();
    const std::string cmd = std::string("\"") + SEDPACK_PYTHON3 + "\" \"" +
                            SEDPACK_TFREC_ENCODER + "\" \"" + dir_->path() + "\"";
    ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
    std::ifstream in(dir_->path() + "/expected.json");
    std::stringstream text;
    text << in.rdbuf();
    expected_ = new Json(Json::parse(text.str()));
  }
  static void TearDownTestSuite() {
    delete expected_;
    delete dir_;
  }

  // Every example of `name`'s train split, in order, as the reader returns it.
  std::vector<Example> ReadAll(const std::string& name) {
    std::vector<Example> out;
    auto ds = Dataset::Open(dir_->path() + "/" + name);
    EXPECT_TRUE(ds.ok()) << ds.status().ToString();
    if (!ds.ok()) return out;
    auto reader = ExampleReader::Make(*ds, Split::kTrain);
    EXPECT_TRUE(reader.ok()) << reader.status().ToString();
    if (!reader.ok()) return out;
    for (;;) {
      auto ex = (*reader)->Next();
      EXPECT_TRUE(ex.ok()) << ex.status().ToString();
      if (!ex.ok() || !*ex) break;
      out.push_back(**ex);
    }
    return out;
  }

  static testing::TempDir* dir_;
  static Json* expected_;
};

testing::TempDir* TfrecInteropTest::dir_ = nullptr;
Json* TfrecInteropTest::expected_ = nullptr;

// Element `i` of a numeric value as the integer the script wrote for it:
// floats as their bit patterns, integers sign- or zero-extended.
std::int64_t ElementAsJsonNumber(const ValueView& v, std::size_t i) {
  switch (v.dtype) {
    case DType::kFloat16:
      return v.At<std::uint16_t>(i);
    case DType::kFloat32:
      return v.At<std::uint32_t>(i);
    case DType::kUInt8:
      return v.At<std::uint8_t>(i);
    case DType::kInt8:
      return v.At<std::int8_t>(i);
    case DType::kInt32:
      return v.At<std::int32_t>(i);
    default:  // kInt, kInt64
      return v.At<std::int64_t>(i);
  }
}

TEST_F(TfrecInteropTest, EveryDatasetVerifiesDeep) {
  for (const std::string name : {"none", "gzip", "zlib"}) {
    CheckOptions options;
    options.deep = true;
    ASSERT_OK_AND_ASSIGN(CheckReport report, CheckDataset(dir_->path() + "/" + name, options));
    EXPECT_TRUE(report.ok()) << name << ": " << report.problems.size() << " problems, first: "
                             << (report.problems.empty() ? "" : report.problems[0].message);
    EXPECT_EQ(report.examples_checked, 5u) << name;
  }
}

TEST_F(TfrecInteropTest, EveryValueMatchesWhatTheEncoderWrote) {
  const Json& examples = expected_->at("examples");
  ASSERT_EQ(examples.size(), 5u);
  for (const std::string name : {"none", "gzip", "zlib"}) {
    SCOPED_TRACE(name);
    ASSERT_OK_AND_ASSIGN(auto ds, Dataset::Open(dir_->path() + "/" + name));
    const std::vector<AttributeSpec>& schema = ds->schema();
    const std::vector<Example> got = ReadAll(name);
    ASSERT_EQ(got.size(), examples.size());
    for (std::size_t k = 0; k < got.size(); ++k) {
      for (std::size_t j = 0; j < schema.size(); ++j) {
        const AttributeSpec& spec = schema[j];
        const ValueView v = got[k].Get(j);
        const Json& want = examples[k].at(spec.name);
        SCOPED_TRACE("example " + std::to_string(k) + " attribute " + spec.name);
        ASSERT_EQ(v.dtype, spec.dtype);
        if (spec.dtype == DType::kStr) {
          EXPECT_EQ(v.AsStringView(), want.get<std::string>());
        } else if (spec.dtype == DType::kBytes) {
          EXPECT_EQ(testing::ToHex(v.data.data(), v.data.size()), want.get<std::string>());
        } else if (spec.dtype == DType::kFloat64) {
          ASSERT_EQ(v.data.size(), 8 * want.size());
          for (std::size_t i = 0; i < want.size(); ++i) {
            EXPECT_EQ(v.At<std::uint64_t>(i), want[i].get<std::uint64_t>()) << i;
          }
        } else {
          ASSERT_EQ(v.shape, spec.shape);
          ASSERT_EQ(v.data.size(), DTypeItemSize(spec.dtype) * want.size());
          for (std::size_t i = 0; i < want.size(); ++i) {
            EXPECT_EQ(ElementAsJsonNumber(v, i), want[i].get<std::int64_t>()) << i;
          }
        }
      }
    }
  }
}

TEST_F(TfrecInteropTest, ConcreteValues) {
  // Spot checks that do not go through expected.json, so a script that wrote
  // wrong values and wrong expectations alike would still be caught.
  const std::vector<Example> got = ReadAll("zlib");
  ASSERT_EQ(got.size(), 5u);
  // Schema: trace, key, i8, i32, i64, n, f32, f64, text, blob.
  EXPECT_EQ(got[1].Get(5).At<std::int64_t>(0), -4);                     // n = 1*1 - 5
  EXPECT_EQ(got[2].Get(1).At<std::uint8_t>(3), 17);                     // key = 2*7 + 3
  EXPECT_EQ(got[3].Get(2).At<std::int8_t>(0), -125);                    // i8 = -128 + 3
  EXPECT_EQ(got[4].Get(3).At<std::int32_t>(1), 2147483647 - 4);         // i32
  EXPECT_EQ(got[0].Get(4).At<std::int64_t>(0), INT64_MIN);              // i64
  EXPECT_EQ(got[0].Get(0).At<Float16>(3).ToFloat(), 0.25f);             // trace = 0 + 1.5 - 1.25
  EXPECT_EQ(got[4].Get(0).At<Float16>(0).ToFloat(), 2.75f);             // half_val encoding
  EXPECT_EQ(got[1].Get(6).At<float>(0), 1.25f);                         // f32
  EXPECT_EQ(got[0].Get(7).At<double>(0), static_cast<double>(1.0f / 3.0f));  // f64 via float32
  EXPECT_NE(got[0].Get(7).At<double>(0), 1.0 / 3.0);
  EXPECT_EQ(got[0].Get(8).AsStringView(), "h\xc3\xa9llo 0");
  EXPECT_EQ(got[3].Get(9).data.size(), 9u);
  EXPECT_EQ(static_cast<int>(got[3].Get(9).data[8]), 8);
}

}  // namespace
}  // namespace sedpack
