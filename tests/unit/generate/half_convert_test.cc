// SPDX-License-Identifier: Apache-2.0
#include "generate/half_convert.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

namespace sedpack::generate_internal {
namespace {

// The batch converter must give exactly Float16::FromFloat's bits, or generated
// content would depend on the CPU.
void ExpectSameAsScalar(const std::vector<float>& in) {
  std::vector<Float16> out(in.size());
  FloatToHalf(in.data(), out.data(), in.size());
  for (std::size_t i = 0; i < in.size(); ++i) {
    ASSERT_EQ(out[i].bits, Float16::FromFloat(in[i]).bits)
        << "input " << in[i] << " (0x" << std::hex << std::bit_cast<std::uint32_t>(in[i]) << ")";
  }
}

TEST(HalfConvertTest, EveryHalfAndEveryMidpoint) {
  std::vector<float> in;
  for (std::uint32_t b = 0; b < 0x10000; ++b) {
    if ((b & 0x7c00) == 0x7c00 && (b & 0x3ff)) continue;  // NaN payloads may differ
    Float16 h{static_cast<std::uint16_t>(b)};
    const float f = h.ToFloat();
    in.push_back(f);
    // Midpoint to the next half up (ties), and just either side of it.
    if ((b & 0x7fff) < 0x7bff) {
      Float16 next{static_cast<std::uint16_t>(b + 1)};
      const float mid = (f + next.ToFloat()) / 2;  // exact in float
      in.push_back(mid);
      in.push_back(std::nextafter(mid, 0.0f));
      in.push_back(std::nextafter(mid, mid * 2));
    }
  }
  ExpectSameAsScalar(in);
}

TEST(HalfConvertTest, RandomAndSpecial) {
  std::mt19937 rng(1);
  std::vector<float> in = {0.0f, -0.0f, 65504.0f, 65519.99f, 65520.0f, -65520.0f, 1e10f,
                           std::numeric_limits<float>::infinity(),
                           -std::numeric_limits<float>::infinity(), 1e-8f, -3e-8f, 2.98e-8f,
                           std::numeric_limits<float>::denorm_min()};
  std::uniform_real_distribution<float> d(-2.0f, 2.0f);
  for (int i = 0; i < 100001; ++i) in.push_back(d(rng));  // odd size: exercises the tail
  ExpectSameAsScalar(in);
}

}  // namespace
}  // namespace sedpack::generate_internal
