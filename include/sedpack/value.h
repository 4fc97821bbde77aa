// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string_view>
#include <type_traits>
#include <vector>

#include "sedpack/types.h"

namespace sedpack {

/// IEEE 754 binary16 value, kept as its raw bits (C++20 has no portable half type).
struct Float16 {
  std::uint16_t bits = 0;
  static Float16 FromFloat(float f);
  float ToFloat() const;
};

/// Map a C++ element type to its DType (bool, intN_t, uintN_t, Float16, float, double).
template <typename T>
constexpr DType DTypeOf() {
  if constexpr (std::is_same_v<T, bool>) return DType::kBool;
  else if constexpr (std::is_same_v<T, std::int8_t>) return DType::kInt8;
  else if constexpr (std::is_same_v<T, std::int16_t>) return DType::kInt16;
  else if constexpr (std::is_same_v<T, std::int32_t>) return DType::kInt32;
  else if constexpr (std::is_same_v<T, std::int64_t>) return DType::kInt64;
  else if constexpr (std::is_same_v<T, std::uint8_t>) return DType::kUInt8;
  else if constexpr (std::is_same_v<T, std::uint16_t>) return DType::kUInt16;
  else if constexpr (std::is_same_v<T, std::uint32_t>) return DType::kUInt32;
  else if constexpr (std::is_same_v<T, std::uint64_t>) return DType::kUInt64;
  else if constexpr (std::is_same_v<T, Float16>) return DType::kFloat16;
  else if constexpr (std::is_same_v<T, float>) return DType::kFloat32;
  else if constexpr (std::is_same_v<T, double>) return DType::kFloat64;
  else static_assert(sizeof(T) == 0, "unsupported element type");
}

/// A non-owning view of one attribute value: its dtype, shape and raw bytes
/// (little-endian, C order; UTF-8 for str; raw for bytes). Used both to pass
/// values to writers (pointing at the caller's buffers, nothing is copied until
/// the shard is built) and to return values from readers (pointing into the
/// decoded shard, valid while the shard is alive).
struct ValueView {
  DType dtype = DType::kUInt8;
  Shape shape;
  std::span<const std::byte> data;

  /// A numeric array of `shape` over `values` (size must equal prod(shape)).
  template <typename T>
  static ValueView Array(std::span<const T> values, Shape shape) {
    return ValueView{DTypeOf<T>(), std::move(shape), std::as_bytes(values)};
  }
  template <typename T>
  static ValueView Array(const std::vector<T>& values, Shape shape) {
    return Array(std::span<const T>(values), std::move(shape));
  }
  /// A numeric scalar (shape ()); `value` must outlive the view.
  template <typename T>
  static ValueView Scalar(const T& value) {
    return ValueView{DTypeOf<T>(), {}, std::as_bytes(std::span<const T>(&value, 1))};
  }
  /// The reference's `int` (int64, shape ()); `value` must outlive the view.
  static ValueView Int(const std::int64_t& value) {
    return ValueView{DType::kInt, {}, std::as_bytes(std::span<const std::int64_t>(&value, 1))};
  }
  /// UTF-8 text (shape ()).
  static ValueView Str(std::string_view text) {
    return ValueView{DType::kStr, {}, std::as_bytes(std::span<const char>(text.data(), text.size()))};
  }
  /// Variable-size bytes (shape ()).
  static ValueView Bytes(std::span<const std::byte> bytes) {
    return ValueView{DType::kBytes, {}, bytes};
  }
  static ValueView Bytes(std::span<const std::uint8_t> bytes) {
    return ValueView{DType::kBytes, {}, std::as_bytes(bytes)};
  }
  /// Fixed-size bytes of shape (N,), N = bytes.size().
  static ValueView FixedBytes(std::span<const std::uint8_t> bytes) {
    return ValueView{DType::kBytes, {static_cast<std::int64_t>(bytes.size())}, std::as_bytes(bytes)};
  }

  std::string_view AsStringView() const {
    return {reinterpret_cast<const char*>(data.data()), data.size()};
  }
  /// Element `i` of a numeric value, read unaligned. REQUIRES: DTypeOf<T>() matches
  /// dtype (int64_t also reads kInt) and i < element count.
  template <typename T>
  T At(std::size_t i) const {
    T out;
    std::memcpy(&out, data.data() + i * sizeof(T), sizeof(T));
    return out;
  }
};

/// Check that `value` fits `spec` exactly: same dtype (kInt64 is accepted for kInt
/// and vice versa), same shape unless variable size, byte size = itemsize*prod(shape).
/// InvalidArgument naming the attribute otherwise.
Status ValidateValue(const AttributeSpec& spec, const ValueView& value);

}  // namespace sedpack
