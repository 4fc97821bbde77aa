// SPDX-License-Identifier: Apache-2.0
#include "sedpack/value.h"

#include <cmath>

#include "support/test_support.h"

namespace sedpack {
namespace {

TEST(Float16Test, ExactValues) {
  EXPECT_EQ(Float16::FromFloat(-2.0f).bits, 0xc000);
  EXPECT_EQ(Float16::FromFloat(-1.875f).bits, 0xbf80);
  EXPECT_EQ(Float16::FromFloat(1.0f).bits, 0x3c00);
  EXPECT_EQ(Float16::FromFloat(65504.0f).bits, 0x7bff);
  EXPECT_EQ(Float16::FromFloat(1e6f).bits, 0x7c00);
  EXPECT_EQ(Float16::FromFloat(5.960464477539063e-08f).bits, 0x0001);
  EXPECT_TRUE(std::isnan(Float16{0x7e00}.ToFloat()));
  for (std::uint32_t b = 0; b < 0x7c00; ++b) {  // every finite positive half round-trips
    Float16 h{static_cast<std::uint16_t>(b)};
    ASSERT_EQ(Float16::FromFloat(h.ToFloat()).bits, b);
  }
}

TEST(Float16Test, RoundsToNearestEven) {
  // 1 + 2^-11 is halfway between 1.0 and the next half; ties go to even (1.0).
  EXPECT_EQ(Float16::FromFloat(1.0f + std::ldexp(1.0f, -11)).bits, 0x3c00);
  EXPECT_EQ(Float16::FromFloat(1.0f + 3 * std::ldexp(1.0f, -11)).bits, 0x3c02);
}

TEST(ValidateValueTest, AcceptsMatching) {
  std::vector<float> v(12, 1.0f);
  AttributeSpec spec{"f32", DType::kFloat32, {3, 4}};
  EXPECT_OK(ValidateValue(spec, ValueView::Array(v, {3, 4})));
  std::int64_t n = 5;
  EXPECT_OK(ValidateValue({"n", DType::kInt, {}}, ValueView::Int(n)));
  EXPECT_OK(ValidateValue({"s", DType::kStr, {}}, ValueView::Str("héllo")));
}

TEST(ValidateValueTest, RejectsWrongDTypeShapeSize) {
  std::vector<float> v(12, 1.0f);
  std::vector<double> d(12, 1.0);
  AttributeSpec spec{"f32", DType::kFloat32, {3, 4}};
  EXPECT_STATUS(StatusCode::kInvalidArgument, "dtype float32", ValidateValue(spec, ValueView::Array(d, {3, 4})));
  EXPECT_STATUS(StatusCode::kInvalidArgument, "shape (4, 3)", ValidateValue(spec, ValueView::Array(v, {4, 3})));
  ValueView short_view = ValueView::Array(v, {3, 4});
  short_view.data = short_view.data.first(40);
  EXPECT_STATUS(StatusCode::kInvalidArgument, "needs 48 bytes", ValidateValue(spec, short_view));
  std::vector<std::uint8_t> seven(7);
  EXPECT_STATUS(StatusCode::kInvalidArgument, "\"fixed\"",
                ValidateValue({"fixed", DType::kBytes, {8}}, ValueView::FixedBytes(seven)));
}

}  // namespace
}  // namespace sedpack
