// SPDX-License-Identifier: Apache-2.0
#include "cli/value_json.h"

#include <array>
#include <bit>
#include <charconv>
#include <cmath>
#include <cstring>
#include <memory>
#include <vector>

namespace sedpack::cli {
namespace {

// Make sure a finite number token reads as a float ("1" -> "1.0", "-0" -> "-0.0"),
// so that -0.0 keeps its sign and typed readers do not see an integer.
void EnsureFloatToken(char* begin, char** end) {
  for (char* p = begin; p != *end; ++p) {
    if (*p == '.' || *p == 'e' || *p == 'E') return;
  }
  *(*end)++ = '.';
  *(*end)++ = '0';
}

template <typename T>
void AppendFloating(T v, std::string* out) {
  if (std::isnan(v)) {
    out->append("\"NaN\"");
    return;
  }
  if (std::isinf(v)) {
    out->append(v > 0 ? "\"Infinity\"" : "\"-Infinity\"");
    return;
  }
  char buf[64];
  char* end = std::to_chars(buf, buf + sizeof(buf) - 2, v).ptr;
  EnsureFloatToken(buf, &end);
  out->append(buf, end);
}

float HalfToFloat(std::uint16_t bits) {
  Float16 h;
  h.bits = bits;
  return h.ToFloat();
}

struct HalfEntry {
  char text[15];
  std::uint8_t size;
};

// Shortest round-trip text of every binary16 value, built once (a few ms).
// `cat` of traces prints millions of halves, so the search must not repeat.
std::unique_ptr<std::array<HalfEntry, 65536>> BuildHalfTable() {
  auto table = std::make_unique<std::array<HalfEntry, 65536>>();
  for (std::uint32_t bits = 0; bits < 65536; ++bits) {
    HalfEntry& e = (*table)[bits];
    std::string_view text;
    char buf[64];
    const bool negative = (bits & 0x8000) != 0;
    if ((bits & 0x7c00) == 0x7c00) {
      text = (bits & 0x3ff) ? "\"NaN\"" : (negative ? "\"-Infinity\"" : "\"Infinity\"");
    } else {
      const double v = HalfToFloat(static_cast<std::uint16_t>(bits));
      // binary16 needs at most 5 significant digits; take the first precision
      // whose correctly rounded decimal maps back to the same half.
      for (int precision = 1; precision <= 17; ++precision) {
        char* end =
            std::to_chars(buf, buf + sizeof(buf) - 2, v, std::chars_format::general, precision).ptr;
        double back = 0;
        std::from_chars(buf, end, back);
        if (DoubleToHalfBits(back) == bits) {
          EnsureFloatToken(buf, &end);
          text = std::string_view(buf, static_cast<std::size_t>(end - buf));
          break;
        }
      }
    }
    if (text.size() > sizeof(e.text)) std::abort();  // cannot happen for binary16
    std::memcpy(e.text, text.data(), text.size());
    e.size = static_cast<std::uint8_t>(text.size());
  }
  return table;
}

const std::array<HalfEntry, 65536>& HalfTable() {
  static const std::unique_ptr<std::array<HalfEntry, 65536>> table = BuildHalfTable();
  return *table;
}

template <typename T>
T Load(const std::byte* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

// Append element `i` of a numeric value.
void AppendElement(DType dtype, const std::byte* data, std::size_t i, std::string* out) {
  char buf[32];
  auto append_int = [&](auto v) {
    char* end = std::to_chars(buf, buf + sizeof(buf), v).ptr;
    out->append(buf, end);
  };
  switch (dtype) {
    case DType::kBool:
      out->append(data[i] != std::byte{0} ? "true" : "false");
      break;
    case DType::kInt8: append_int(Load<std::int8_t>(data + i)); break;
    case DType::kInt16: append_int(Load<std::int16_t>(data + 2 * i)); break;
    case DType::kInt32: append_int(Load<std::int32_t>(data + 4 * i)); break;
    case DType::kInt64:
    case DType::kInt: append_int(Load<std::int64_t>(data + 8 * i)); break;
    case DType::kUInt8: append_int(Load<std::uint8_t>(data + i)); break;
    case DType::kUInt16: append_int(Load<std::uint16_t>(data + 2 * i)); break;
    case DType::kUInt32: append_int(Load<std::uint32_t>(data + 4 * i)); break;
    case DType::kUInt64: append_int(Load<std::uint64_t>(data + 8 * i)); break;
    case DType::kFloat16: out->append(HalfToJson(Load<std::uint16_t>(data + 2 * i))); break;
    case DType::kFloat32: AppendFloat(Load<float>(data + 4 * i), out); break;
    case DType::kFloat64: AppendDouble(Load<double>(data + 8 * i), out); break;
    case DType::kStr:
    case DType::kBytes: break;  // not element-typed; handled by the caller
  }
}

// Append the sub-array of dimension `dim` starting at element `*next`.
void AppendNested(DType dtype, const std::byte* data, const Shape& shape, std::size_t dim,
                  std::size_t* next, std::string* out) {
  if (dim == shape.size()) {
    AppendElement(dtype, data, (*next)++, out);
    return;
  }
  out->push_back('[');
  for (std::int64_t k = 0; k < shape[dim]; ++k) {
    if (k) out->push_back(',');
    AppendNested(dtype, data, shape, dim + 1, next, out);
  }
  out->push_back(']');
}

// Length of the valid UTF-8 sequence at s[i], or 0 if invalid.
std::size_t Utf8SequenceLength(std::string_view s, std::size_t i) {
  const auto c = static_cast<unsigned char>(s[i]);
  auto cont = [&](std::size_t k) {
    return i + k < s.size() && (static_cast<unsigned char>(s[i + k]) & 0xc0) == 0x80;
  };
  if (c < 0x80) return 1;
  if (c >= 0xc2 && c <= 0xdf) return cont(1) ? 2 : 0;
  if (c >= 0xe0 && c <= 0xef) {
    if (!cont(1) || !cont(2)) return 0;
    const auto c1 = static_cast<unsigned char>(s[i + 1]);
    if (c == 0xe0 && c1 < 0xa0) return 0;  // overlong
    if (c == 0xed && c1 >= 0xa0) return 0;  // surrogate
    return 3;
  }
  if (c >= 0xf0 && c <= 0xf4) {
    if (!cont(1) || !cont(2) || !cont(3)) return 0;
    const auto c1 = static_cast<unsigned char>(s[i + 1]);
    if (c == 0xf0 && c1 < 0x90) return 0;  // overlong
    if (c == 0xf4 && c1 >= 0x90) return 0;  // above U+10FFFF
    return 4;
  }
  return 0;
}

}  // namespace

std::uint16_t DoubleToHalfBits(double d) {
  const auto x = std::bit_cast<std::uint64_t>(d);
  const auto sign = static_cast<std::uint16_t>((x >> 48) & 0x8000);
  const std::uint64_t abs = x & 0x7fffffffffffffffULL;
  if (abs >= 0x7ff0000000000000ULL) {
    return static_cast<std::uint16_t>(sign | 0x7c00 | (abs > 0x7ff0000000000000ULL ? 0x200 : 0));
  }
  const int exp = static_cast<int>(abs >> 52) - 1023;
  if (exp < -26) return sign;  // below half the smallest subnormal (or a double subnormal)
  if (exp > 15) return static_cast<std::uint16_t>(sign | 0x7c00);
  const std::uint64_t mant = (abs & 0xfffffffffffffULL) | (1ULL << 52);
  // Units of the result: 2^q with q = max(exp, -14) - 10 (subnormals share 2^-24).
  const int q = std::max(exp, -14) - 10;
  const int shift = q - (exp - 52);  // >= 42
  std::uint64_t n = mant >> shift;
  const std::uint64_t rem = mant & ((1ULL << shift) - 1);
  const std::uint64_t half = 1ULL << (shift - 1);
  if (rem > half || (rem == half && (n & 1))) ++n;
  std::uint64_t bits;
  if (exp < -14) {
    bits = n;  // n == 1024 is the smallest normal, whose bits are exactly 0x400
  } else {
    bits = (static_cast<std::uint64_t>(exp + 15) << 10) + (n - 1024);  // carry bumps the exponent
  }
  if (bits >= 0x7c00) bits = 0x7c00;
  return static_cast<std::uint16_t>(sign | bits);
}

std::string_view HalfToJson(std::uint16_t bits) {
  const HalfEntry& e = HalfTable()[bits];
  return {e.text, e.size};
}

void AppendFloat(float v, std::string* out) { AppendFloating(v, out); }
void AppendDouble(double v, std::string* out) { AppendFloating(v, out); }

void AppendJsonString(std::string_view text, std::string* out) {
  static const char* kHex = "0123456789abcdef";
  out->push_back('"');
  for (std::size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x80) {
      switch (c) {
        case '"': out->append("\\\""); break;
        case '\\': out->append("\\\\"); break;
        case '\n': out->append("\\n"); break;
        case '\r': out->append("\\r"); break;
        case '\t': out->append("\\t"); break;
        case '\b': out->append("\\b"); break;
        case '\f': out->append("\\f"); break;
        default:
          if (c < 0x20) {
            out->append("\\u00");
            out->push_back(kHex[c >> 4]);
            out->push_back(kHex[c & 15]);
          } else {
            out->push_back(static_cast<char>(c));
          }
      }
      ++i;
      continue;
    }
    const std::size_t n = Utf8SequenceLength(text, i);
    if (n == 0) {
      out->append("\\ufffd");
      ++i;
    } else {
      out->append(text.substr(i, n));
      i += n;
    }
  }
  out->push_back('"');
}

void AppendBase64(std::span<const std::byte> data, std::string* out) {
  static const char* kAlphabet =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  out->push_back('"');
  std::size_t i = 0;
  for (; i + 3 <= data.size(); i += 3) {
    const std::uint32_t v = (std::to_integer<std::uint32_t>(data[i]) << 16) |
                            (std::to_integer<std::uint32_t>(data[i + 1]) << 8) |
                            std::to_integer<std::uint32_t>(data[i + 2]);
    out->push_back(kAlphabet[(v >> 18) & 63]);
    out->push_back(kAlphabet[(v >> 12) & 63]);
    out->push_back(kAlphabet[(v >> 6) & 63]);
    out->push_back(kAlphabet[v & 63]);
  }
  const std::size_t rest = data.size() - i;
  if (rest) {
    std::uint32_t v = std::to_integer<std::uint32_t>(data[i]) << 16;
    if (rest == 2) v |= std::to_integer<std::uint32_t>(data[i + 1]) << 8;
    out->push_back(kAlphabet[(v >> 18) & 63]);
    out->push_back(kAlphabet[(v >> 12) & 63]);
    out->push_back(rest == 2 ? kAlphabet[(v >> 6) & 63] : '=');
    out->push_back('=');
  }
  out->push_back('"');
}

void AppendValueJson(const ValueView& value, std::string* out) {
  if (value.dtype == DType::kStr) {
    AppendJsonString(value.AsStringView(), out);
    return;
  }
  if (value.dtype == DType::kBytes) {
    AppendBase64(value.data, out);
    return;
  }
  const std::size_t item = DTypeItemSize(value.dtype);
  const std::size_t count = item ? value.data.size() / item : 0;
  // Trust the shape only if it describes exactly the bytes present; otherwise
  // print what is there as a flat list rather than read out of bounds.
  std::uint64_t product = 1;
  bool shape_ok = true;
  for (std::int64_t d : value.shape) {
    if (d < 0 || __builtin_mul_overflow(product, static_cast<std::uint64_t>(d), &product)) {
      shape_ok = false;
      break;
    }
  }
  shape_ok = shape_ok && product == count && count * item == value.data.size();
  std::size_t next = 0;
  if (shape_ok) {
    AppendNested(value.dtype, value.data.data(), value.shape, 0, &next, out);
  } else {
    AppendNested(value.dtype, value.data.data(), Shape{static_cast<std::int64_t>(count)}, 0, &next,
                 out);
  }
}

std::vector<std::string> JsonObjectKeys(std::span<const AttributeSpec> schema) {
  std::vector<std::string> keys;
  for (const AttributeSpec& a : schema) {
    std::string k;
    AppendJsonString(a.name, &k);
    keys.push_back(k + ":");
  }
  return keys;
}

void AppendExampleJsonLine(std::span<const std::string> keys, const Example& example, std::string* out) {
  out->push_back('{');
  for (std::size_t j = 0; j < keys.size(); ++j) {
    if (j) out->push_back(',');
    *out += keys[j];
    AppendValueJson(example.Get(j), out);
  }
  *out += "}\n";
}

}  // namespace sedpack::cli
