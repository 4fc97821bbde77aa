// SPDX-License-Identifier: Apache-2.0
#include "sedpack/value.h"

#include <bit>
#include <cmath>

namespace sedpack {

Float16 Float16::FromFloat(float f) {
  const std::uint32_t x = std::bit_cast<std::uint32_t>(f);
  const std::uint32_t sign = (x >> 16) & 0x8000u;
  const std::uint32_t abs = x & 0x7fffffffu;
  Float16 h;
  if (abs >= 0x7f800000u) {  // inf or nan
    h.bits = static_cast<std::uint16_t>(sign | 0x7c00u | (abs > 0x7f800000u ? 0x200u : 0u));
    return h;
  }
  if (abs >= 0x477ff000u) {  // rounds to >= 65520: overflow to inf
    h.bits = static_cast<std::uint16_t>(sign | 0x7c00u);
    return h;
  }
  if (abs < 0x38800000u) {  // subnormal or zero in half precision
    // Scale into the subnormal range and round to nearest even via float arithmetic.
    const float a = std::bit_cast<float>(abs);
    const float scaled = a * 16777216.0f;  // 2^24: one half-subnormal ulp becomes 1.0
    const auto m = static_cast<std::uint32_t>(std::nearbyint(scaled));
    h.bits = static_cast<std::uint16_t>(sign | m);
    return h;
  }
  // Normal: rebias exponent, round mantissa to nearest even.
  std::uint32_t mant = abs & 0x7fffffu;
  std::uint32_t exp = (abs >> 23) - 127 + 15;
  std::uint32_t half = (exp << 10) | (mant >> 13);
  const std::uint32_t rest = mant & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (half & 1u))) ++half;
  h.bits = static_cast<std::uint16_t>(sign | half);
  return h;
}

float Float16::ToFloat() const {
  const std::uint32_t sign = static_cast<std::uint32_t>(bits & 0x8000u) << 16;
  const std::uint32_t exp = (bits >> 10) & 0x1fu;
  const std::uint32_t mant = bits & 0x3ffu;
  if (exp == 0) {
    const float v = std::ldexp(static_cast<float>(mant), -24);
    return sign ? -v : v;
  }
  if (exp == 31) {
    return std::bit_cast<float>(sign | 0x7f800000u | (mant << 13));
  }
  return std::bit_cast<float>(sign | ((exp - 15 + 127) << 23) | (mant << 13));
}

Status ValidateValue(const AttributeSpec& spec, const ValueView& value) {
  const bool int_like = (spec.dtype == DType::kInt && value.dtype == DType::kInt64) ||
                        (spec.dtype == DType::kInt64 && value.dtype == DType::kInt);
  if (value.dtype != spec.dtype && !int_like) {
    return Status::InvalidArgument("attribute \"", spec.name, "\" has dtype ", DTypeName(spec.dtype),
                                   " but the value has dtype ", DTypeName(value.dtype));
  }
  if (spec.IsVariableSize()) {
    if (!value.shape.empty()) {
      return Status::InvalidArgument("attribute \"", spec.name, "\" is a variable-size ",
                                     DTypeName(spec.dtype), " and takes shape (), got ",
                                     ShapeToString(value.shape));
    }
    return Status::OK();
  }
  if (value.shape != spec.shape) {
    return Status::InvalidArgument("attribute \"", spec.name, "\" has shape ",
                                   ShapeToString(value.shape), ", expected ",
                                   ShapeToString(spec.shape));
  }
  SEDPACK_ASSIGN_OR_RETURN(std::uint64_t expected, spec.FixedByteSize());
  if (value.data.size() != expected) {
    return Status::InvalidArgument("attribute \"", spec.name, "\" of dtype ", DTypeName(spec.dtype),
                                   " and shape ", ShapeToString(spec.shape), " needs ", expected,
                                   " bytes, got ", value.data.size());
  }
  return Status::OK();
}

}  // namespace sedpack
