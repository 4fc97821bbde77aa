// SPDX-License-Identifier: Apache-2.0
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>

#include "hdf5/convert_internal.h"
#include "sedpack/value.h"

namespace sedpack::h5 {
namespace {

template <typename T>
T Load(const std::byte* p, std::size_t i) {
  T v;
  std::memcpy(&v, p + i * sizeof(T), sizeof(T));
  return v;
}

template <typename T>
void Store(std::byte* p, std::size_t i, T v) {
  std::memcpy(p + i * sizeof(T), &v, sizeof(T));
}

std::string Text(ReadAs from, const std::byte* in, std::size_t i) {
  std::string s;
  if (AppendJsonNumber(from, in, i, &s)) return s;
  const double d = Load<double>(in, i);
  return std::isnan(d) ? "nan" : d > 0 ? "inf" : "-inf";
}

// Integer destination from an integer source.
template <typename D>
bool IntFromInt(ReadAs from, const std::byte* in, std::size_t n, std::byte* out, InexactValue* bad) {
  for (std::size_t i = 0; i < n; ++i) {
    bool ok;
    D v{};
    if (from == ReadAs::kUInt64) {
      const std::uint64_t x = Load<std::uint64_t>(in, i);
      ok = x <= static_cast<std::uint64_t>(std::numeric_limits<D>::max());
      v = static_cast<D>(x);
    } else {
      const std::int64_t x = Load<std::int64_t>(in, i);
      if constexpr (std::is_signed_v<D>) {
        ok = x >= std::numeric_limits<D>::min() && x <= std::numeric_limits<D>::max();
      } else {
        ok = x >= 0 && static_cast<std::uint64_t>(x) <= std::numeric_limits<D>::max();
      }
      v = static_cast<D>(x);
    }
    if (!ok) {
      *bad = {i, Text(from, in, i)};
      return false;
    }
    Store(out, i, v);
  }
  return true;
}

// Integer destination from a float source: integral and in range.
template <typename D>
bool IntFromFloat(const std::byte* in, std::size_t n, std::byte* out, InexactValue* bad) {
  // 2^(digits) as a double is exact; values must lie in [min, max].
  const double lo = static_cast<double>(std::numeric_limits<D>::min());
  const double hi_excl = std::ldexp(1.0, std::numeric_limits<D>::digits);
  for (std::size_t i = 0; i < n; ++i) {
    const double x = Load<double>(in, i);
    if (!(x >= lo && x < hi_excl) || std::trunc(x) != x) {
      *bad = {i, Text(ReadAs::kFloat64, in, i)};
      return false;
    }
    Store(out, i, static_cast<D>(x));
  }
  return true;
}

template <typename D>
bool ToInt(ReadAs from, const std::byte* in, std::size_t n, std::byte* out, InexactValue* bad) {
  if (from == ReadAs::kFloat64) return IntFromFloat<D>(in, n, out, bad);
  return IntFromInt<D>(from, in, n, out, bad);
}

double AsDouble(ReadAs from, const std::byte* in, std::size_t i, bool* exact) {
  *exact = true;
  if (from == ReadAs::kFloat64) return Load<double>(in, i);
  if (from == ReadAs::kInt64) {
    const std::int64_t x = Load<std::int64_t>(in, i);
    const double d = static_cast<double>(x);
    // 2^63 is not an int64, so compare in the double domain first.
    *exact = d < 9223372036854775808.0 && static_cast<std::int64_t>(d) == x;
    return d;
  }
  const std::uint64_t x = Load<std::uint64_t>(in, i);
  const double d = static_cast<double>(x);
  *exact = d < 18446744073709551616.0 && static_cast<std::uint64_t>(d) == x;
  return d;
}

bool ToFloat(ReadAs from, const std::byte* in, std::size_t n, DType dest, std::byte* out,
             InexactValue* bad) {
  for (std::size_t i = 0; i < n; ++i) {
    bool exact;
    const double d = AsDouble(from, in, i, &exact);
    if (dest == DType::kFloat64) {
      Store(out, i, d);
    } else {
      const float f = static_cast<float>(d);
      exact = exact && (std::isnan(d) || static_cast<double>(f) == d);
      if (dest == DType::kFloat32) {
        Store(out, i, f);
      } else {
        const Float16 h = Float16::FromFloat(f);
        exact = exact && (std::isnan(f) || h.ToFloat() == f);
        Store(out, i, h.bits);
      }
    }
    if (!exact) {
      *bad = {i, Text(from, in, i)};
      return false;
    }
  }
  return true;
}

// bool from any number: 0 and 1 only (export-hdf5 writes bool as uint8 0/1).
bool ToBool(ReadAs from, const std::byte* in, std::size_t n, std::byte* out, InexactValue* bad) {
  if (!ToInt<std::uint8_t>(from, in, n, out, bad)) return false;
  for (std::size_t i = 0; i < n; ++i) {
    if (out[i] > std::byte{1}) {
      *bad = {i, Text(from, in, i)};
      return false;
    }
  }
  return true;
}

}  // namespace

bool ConvertExact(ReadAs from, const std::byte* in, std::size_t n, DType dest, std::byte* out,
                  InexactValue* bad) {
  switch (dest) {
    case DType::kInt8: return ToInt<std::int8_t>(from, in, n, out, bad);
    case DType::kInt16: return ToInt<std::int16_t>(from, in, n, out, bad);
    case DType::kInt32: return ToInt<std::int32_t>(from, in, n, out, bad);
    case DType::kInt64: case DType::kInt: return ToInt<std::int64_t>(from, in, n, out, bad);
    case DType::kUInt8: return ToInt<std::uint8_t>(from, in, n, out, bad);
    case DType::kUInt16: return ToInt<std::uint16_t>(from, in, n, out, bad);
    case DType::kUInt32: return ToInt<std::uint32_t>(from, in, n, out, bad);
    case DType::kUInt64: return ToInt<std::uint64_t>(from, in, n, out, bad);
    case DType::kFloat16: case DType::kFloat32: case DType::kFloat64:
      return ToFloat(from, in, n, dest, out, bad);
    case DType::kBool: return ToBool(from, in, n, out, bad);
    default:
      *bad = {0, "(unsupported destination dtype)"};
      return false;
  }
}

bool AppendJsonNumber(ReadAs from, const std::byte* in, std::size_t i, std::string* out) {
  char buf[64];
  std::to_chars_result r{};
  if (from == ReadAs::kInt64) {
    r = std::to_chars(buf, buf + sizeof(buf), Load<std::int64_t>(in, i));
  } else if (from == ReadAs::kUInt64) {
    r = std::to_chars(buf, buf + sizeof(buf), Load<std::uint64_t>(in, i));
  } else {
    const double d = Load<double>(in, i);
    if (!std::isfinite(d)) return false;
    r = std::to_chars(buf, buf + sizeof(buf), d);
    std::string_view s(buf, static_cast<std::size_t>(r.ptr - buf));
    out->append(s);
    // Python's json writes 43.0, not 43: keep floats floats for the reader.
    if (s.find_first_of(".e") == std::string_view::npos) out->append(".0");
    return true;
  }
  out->append(buf, r.ptr);
  return true;
}

}  // namespace sedpack::h5
