// SPDX-License-Identifier: Apache-2.0
#include "sedpack/metadata/json_value.h"

#include <limits>
#include <string>

#include "metadata/json_internal.h"
#include "sedpack/metadata/models.h"
#include "support/test_support.h"

namespace sedpack {
namespace {

using json_internal::FormatFloat;

TEST(JsonValueTest, DefaultIsEmptyObject) {
  JsonValue v;
  EXPECT_EQ(v.text(), "{}");
  EXPECT_TRUE(v.IsEmptyObject());
  EXPECT_TRUE(v.IsObject());
}

TEST(JsonValueTest, ParseIsCompactAndKeepsInsertionOrder) {
  ASSERT_OK_AND_ASSIGN(JsonValue v, JsonValue::Parse(R"( { "b" : 1 , "a" : [ true, null, "x" ] } )"));
  EXPECT_EQ(v.text(), R"({"b":1,"a":[true,null,"x"]})");
  EXPECT_TRUE(v.IsObject());
  EXPECT_FALSE(v.IsEmptyObject());
  ASSERT_OK_AND_ASSIGN(JsonValue arr, JsonValue::Parse("[1]"));
  EXPECT_FALSE(arr.IsObject());
}

TEST(JsonValueTest, SortedKeysAndEquality) {
  ASSERT_OK_AND_ASSIGN(JsonValue a, JsonValue::Parse(R"({"b":{"y":1,"x":2},"a":0})"));
  ASSERT_OK_AND_ASSIGN(JsonValue b, JsonValue::Parse(R"({"a":0,"b":{"x":2,"y":1}})"));
  ASSERT_OK_AND_ASSIGN(JsonValue c, JsonValue::Parse(R"({"a":0,"b":{"x":2,"y":3}})"));
  EXPECT_EQ(a.SortedKeysText(), R"({"a":0,"b":{"x":2,"y":1}})");
  EXPECT_TRUE(a.Equals(b));
  EXPECT_TRUE(b.Equals(a));
  EXPECT_FALSE(a.Equals(c));
  // Arrays keep their order.
  ASSERT_OK_AND_ASSIGN(JsonValue l1, JsonValue::Parse("[1,2]"));
  ASSERT_OK_AND_ASSIGN(JsonValue l2, JsonValue::Parse("[2,1]"));
  EXPECT_FALSE(l1.Equals(l2));
}

TEST(JsonValueTest, DuplicateKeysLastValueFirstPosition) {
  // Python dict semantics (json.loads and pydantic agree).
  ASSERT_OK_AND_ASSIGN(JsonValue v, JsonValue::Parse(R"({"a":1,"b":2,"a":3})"));
  EXPECT_EQ(v.text(), R"({"a":3,"b":2})");
}

TEST(JsonValueTest, BigIntegersStayExact) {
  ASSERT_OK_AND_ASSIGN(
      JsonValue v,
      JsonValue::Parse(R"({"big":1180591620717411303424,"neg":-1180591620717411303424,)"
                       R"("u64":18446744073709551615,"i64":-9223372036854775808,"z":-0})"));
  EXPECT_EQ(v.text(),
            R"({"big":1180591620717411303424,"neg":-1180591620717411303424,)"
            R"("u64":18446744073709551615,"i64":-9223372036854775808,"z":0})");
}

TEST(JsonValueTest, FloatsFormattedLikePydantic) {
  // Observed from pydantic-core 2.46.4 model_dump_json.
  EXPECT_EQ(FormatFloat(1.0), "1.0");
  EXPECT_EQ(FormatFloat(0.1), "0.1");
  EXPECT_EQ(FormatFloat(2.5), "2.5");
  EXPECT_EQ(FormatFloat(0.25), "0.25");
  EXPECT_EQ(FormatFloat(1e15), "1000000000000000.0");
  EXPECT_EQ(FormatFloat(1e16), "1e+16");
  EXPECT_EQ(FormatFloat(1e20), "1e+20");
  EXPECT_EQ(FormatFloat(1e-7), "1e-7");
  EXPECT_EQ(FormatFloat(0.00001), "0.00001");
  EXPECT_EQ(FormatFloat(0.0001), "0.0001");
  EXPECT_EQ(FormatFloat(-0.0), "-0.0");
  EXPECT_EQ(FormatFloat(0.0), "0.0");
  EXPECT_EQ(FormatFloat(123.456), "123.456");
  EXPECT_EQ(FormatFloat(-2.5), "-2.5");
  EXPECT_EQ(FormatFloat(5e-324), "5e-324");
  EXPECT_EQ(FormatFloat(1.7976931348623157e308), "1.7976931348623157e+308");
  EXPECT_EQ(FormatFloat(std::numeric_limits<double>::quiet_NaN()), "null");
  EXPECT_EQ(FormatFloat(std::numeric_limits<double>::infinity()), "null");
  EXPECT_EQ(FormatFloat(-std::numeric_limits<double>::infinity()), "null");
  // A JSON float with an integral value stays a float.
  ASSERT_OK_AND_ASSIGN(JsonValue v, JsonValue::Parse("[1E2,1.50,0.000001]"));
  EXPECT_EQ(v.text(), "[100.0,1.5,1e-6]");
}

TEST(JsonValueTest, StringEscaping) {
  ASSERT_OK_AND_ASSIGN(JsonValue v, JsonValue::Parse(
      "[\"a\\\"\\\\\\n\\t\\r\\b\\f\\u0001\\u001F\\u007f\\/\\u00e9\\u2028\"]"));
  // '"' '\' and \n \t \r \b \f escaped, other controls as lowercase \u00xx,
  // DEL, '/', non-ASCII and U+2028 raw.
  EXPECT_EQ(v.text(),
            "[\"a\\\"\\\\\\n\\t\\r\\b\\f\\u0001\\u001f\x7f/\xc3\xa9\xe2\x80\xa8\"]");
}

TEST(JsonValueTest, MalformedReportsOffsetAndLine) {
  EXPECT_STATUS(StatusCode::kInvalidArgument, "malformed JSON at byte", JsonValue::Parse("{\"a\": tru}"));
  EXPECT_STATUS(StatusCode::kInvalidArgument, "line 3", JsonValue::Parse("{\n  \"a\": 1,\n  \"b\": }"));
  EXPECT_STATUS(StatusCode::kInvalidArgument, "malformed JSON", JsonValue::Parse(""));
  EXPECT_STATUS(StatusCode::kInvalidArgument, "malformed JSON", JsonValue::Parse("{} {}"));
  EXPECT_STATUS(StatusCode::kInvalidArgument, "malformed JSON", JsonValue::Parse("{\"a\":1,}"));
  EXPECT_STATUS(StatusCode::kInvalidArgument, "malformed JSON", JsonValue::Parse("[\"\xff\"]"));
  EXPECT_STATUS(StatusCode::kInvalidArgument, "malformed JSON", JsonValue::Parse("// c\n{}"));
}

TEST(JsonValueTest, DeepNestingIsAnErrorNotACrash) {
  const std::string arrays(100000, '[');
  EXPECT_STATUS(StatusCode::kInvalidArgument, "nested deeper than 256", JsonValue::Parse(arrays));
  std::string objects;
  for (int i = 0; i < 100000; ++i) objects += "{\"a\":";
  EXPECT_STATUS(StatusCode::kInvalidArgument, "nested deeper than 256", JsonValue::Parse(objects));
  // Balanced, still too deep.
  std::string balanced = std::string(300, '[') + std::string(300, ']');
  EXPECT_STATUS(StatusCode::kInvalidArgument, "nested deeper", JsonValue::Parse(balanced));
  // Through the model parsers as well, naming the file.
  EXPECT_STATUS(StatusCode::kInvalidArgument, "x/shards_list.json: malformed JSON",
                ParseShardsList(arrays, "x/shards_list.json"));
  EXPECT_STATUS(StatusCode::kInvalidArgument, "dataset_info.json: malformed JSON",
                ParseDatasetInfo("{\"metadata\":{\"custom_metadata\":{\"a\":" + arrays,
                                 "dataset_info.json"));
  // The limit itself is fine.
  std::string ok = std::string(256, '[') + std::string(256, ']');
  ASSERT_OK(JsonValue::Parse(ok).status());
}

}  // namespace
}  // namespace sedpack
