// SPDX-License-Identifier: Apache-2.0
#include "cli/value_json.h"

#include <gtest/gtest.h>

#include <bit>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace sedpack::cli {
namespace {

std::string B64(std::string_view s) {
  std::string out;
  AppendBase64(std::as_bytes(std::span<const char>(s.data(), s.size())), &out);
  return out;
}

TEST(ValueJsonTest, Base64Rfc4648Vectors) {
  EXPECT_EQ(B64(""), "\"\"");
  EXPECT_EQ(B64("f"), "\"Zg==\"");
  EXPECT_EQ(B64("fo"), "\"Zm8=\"");
  EXPECT_EQ(B64("foo"), "\"Zm9v\"");
  EXPECT_EQ(B64("foob"), "\"Zm9vYg==\"");
  EXPECT_EQ(B64("fooba"), "\"Zm9vYmE=\"");
  EXPECT_EQ(B64("foobar"), "\"Zm9vYmFy\"");
  EXPECT_EQ(B64("\xff\xfe\xfd"), "\"//79\"");
}

TEST(ValueJsonTest, Strings) {
  std::string out;
  AppendJsonString("a\"b\\c\n\t\x01é🙂", &out);
  EXPECT_EQ(out, "\"a\\\"b\\\\c\\n\\t\\u0001é🙂\"");
  out.clear();
  AppendJsonString("x\xff" "y\xc3", &out);  // invalid byte, truncated sequence
  EXPECT_EQ(out, "\"x\\ufffdy\\ufffd\"");
  out.clear();
  AppendJsonString("\xed\xa0\x80", &out);  // UTF-16 surrogate encoded in UTF-8
  EXPECT_EQ(out, "\"\\ufffd\\ufffd\\ufffd\"");
}

TEST(ValueJsonTest, DoubleToHalfMatchesFloatPath) {
  // For a float input, rounding its (exact) double must equal FromFloat.
  std::mt19937 rng(3);
  std::vector<float> in = {0.0f, -0.0f, 65504.0f, 65519.99f, 65520.0f, 1e-8f, 2.98e-8f, 2.9802322e-8f,
                           5.9604645e-8f, 6.1035156e-5f, 6.097555e-5f, 1e30f, -1e-30f};
  for (std::uint32_t b = 0; b < 0x7c00; ++b) {
    Float16 h{static_cast<std::uint16_t>(b)}, n{static_cast<std::uint16_t>(b + 1)};
    const float mid = (h.ToFloat() + n.ToFloat()) / 2;
    in.push_back(mid);
    in.push_back(std::nextafter(mid, 0.0f));
    in.push_back(std::nextafter(mid, 1e9f));
  }
  std::uniform_int_distribution<std::uint32_t> bits;
  for (int i = 0; i < 200000; ++i) {
    const float f = std::bit_cast<float>(bits(rng));
    if (!std::isnan(f)) in.push_back(f);
  }
  for (float f : in) {
    ASSERT_EQ(DoubleToHalfBits(static_cast<double>(f)), Float16::FromFloat(f).bits) << f;
  }
}

TEST(ValueJsonTest, HalfTextRoundTripsEveryHalf) {
  for (std::uint32_t b = 0; b < 0x10000; ++b) {
    const std::string_view text = HalfToJson(static_cast<std::uint16_t>(b));
    if ((b & 0x7c00) == 0x7c00) {
      EXPECT_EQ(text, (b & 0x3ff) ? "\"NaN\"" : (b & 0x8000) ? "\"-Infinity\"" : "\"Infinity\"");
      continue;
    }
    double back = 0;
    auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), back);
    ASSERT_EQ(ec, std::errc()) << text;
    ASSERT_EQ(p, text.data() + text.size()) << text;
    ASSERT_EQ(DoubleToHalfBits(back), b) << text;
    ASSERT_NE(text.find_first_of(".e"), std::string_view::npos) << text;
  }
  EXPECT_EQ(HalfToJson(0x3c00), "1.0");
  EXPECT_EQ(HalfToJson(0x8000), "-0.0");
  EXPECT_EQ(HalfToJson(0x2e66), "0.1");  // 0.0999755859375
  EXPECT_EQ(HalfToJson(0xc000), "-2.0");
}

TEST(ValueJsonTest, NumbersAndShapes) {
  std::string out;
  const std::vector<float> f = {1.5f, -0.0f, std::numeric_limits<float>::quiet_NaN(),
                                -std::numeric_limits<float>::infinity(), 0.1f, 3e38f};
  AppendValueJson(ValueView::Array(f, {2, 3}), &out);
  EXPECT_EQ(out, "[[1.5,-0.0,\"NaN\"],[\"-Infinity\",0.1,3e+38]]");

  out.clear();
  const std::vector<double> d = {0.1, 1.0 / 3.0};
  AppendValueJson(ValueView::Array(d, {2}), &out);
  EXPECT_EQ(out, "[0.1,0.3333333333333333]");

  out.clear();
  const std::vector<std::uint64_t> u = {std::numeric_limits<std::uint64_t>::max()};
  AppendValueJson(ValueView::Array(u, {1}), &out);
  EXPECT_EQ(out, "[18446744073709551615]");

  out.clear();
  const std::int64_t n = std::numeric_limits<std::int64_t>::min();
  AppendValueJson(ValueView::Int(n), &out);
  EXPECT_EQ(out, "-9223372036854775808");

  out.clear();
  const std::uint16_t s = 65535;
  AppendValueJson(ValueView::Scalar(s), &out);
  EXPECT_EQ(out, "65535");

  out.clear();
  const std::vector<std::uint8_t> flags = {1, 0, 1};
  ValueView b{DType::kBool, {3}, std::as_bytes(std::span<const std::uint8_t>(flags))};
  AppendValueJson(b, &out);
  EXPECT_EQ(out, "[true,false,true]");

  out.clear();
  const std::vector<std::int8_t> i8 = {-128, 127, 0, 1};
  AppendValueJson(ValueView::Array(i8, {2, 1, 2}), &out);
  EXPECT_EQ(out, "[[[-128,127]],[[0,1]]]");

  out.clear();
  AppendValueJson(ValueView::Str("hé"), &out);
  EXPECT_EQ(out, "\"hé\"");

  out.clear();
  const std::vector<std::uint8_t> raw = {0, 1, 2, 3};
  AppendValueJson(ValueView::FixedBytes(raw), &out);
  EXPECT_EQ(out, "\"AAECAw==\"");

  // A shape that does not match the bytes prints them flat instead of overrunning.
  out.clear();
  ValueView bad = ValueView::Array(i8, {3});
  AppendValueJson(bad, &out);
  EXPECT_EQ(out, "[-128,127,0,1]");
}

}  // namespace
}  // namespace sedpack::cli
