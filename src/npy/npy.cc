// SPDX-License-Identifier: Apache-2.0
// .npy headers (numpy.lib.format), read and written.
#include <array>
#include <cstring>
#include <limits>
#include <optional>

#include "core/endian_internal.h"
#include "npy/npy_internal.h"

namespace sedpack::npz_internal {
namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr std::size_t kMagicLen = 6;
// numpy.lib.format constants: data starts at a multiple of kArrayAlign, and the
// header keeps room for a first axis of up to kGrowthAxisMaxDigits digits.
constexpr std::size_t kArrayAlign = 64;
constexpr std::size_t kGrowthAxisMaxDigits = 21;
// A sane cap on shape rank; numpy's own limit is 64 dimensions.
constexpr std::size_t kMaxDims = 64;

std::string ShapeRepr(std::span<const std::uint64_t> shape) {
  std::string out = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i) out += ", ";
    out += std::to_string(shape[i]);
  }
  if (shape.size() == 1) out += ",";
  out += ")";
  return out;
}

// Minimal parser for the Python dict literal numpy writes into .npy headers.
class HeaderParser {
 public:
  explicit HeaderParser(std::string_view text) : text_(text) {}

  Result<NpyHeader> Parse() {
    NpyHeader header;
    bool has_descr = false, has_order = false, has_shape = false;
    SkipSpace();
    if (!Consume('{')) return Error("expected '{'");
    for (;;) {
      SkipSpace();
      if (Consume('}')) break;
      SEDPACK_ASSIGN_OR_RETURN(std::string key, ParseString());
      SkipSpace();
      if (!Consume(':')) return Error("expected ':'");
      SkipSpace();
      if (key == "descr") {
        if (has_descr) return Error("duplicate key 'descr'");
        has_descr = true;
        SEDPACK_ASSIGN_OR_RETURN(header.descr, ParseString());
      } else if (key == "fortran_order") {
        if (has_order) return Error("duplicate key 'fortran_order'");
        has_order = true;
        if (ConsumeWord("False")) {
        } else if (ConsumeWord("True")) {
          return Status::NotImplemented(".npy arrays in Fortran order are not supported");
        } else {
          return Error("fortran_order must be True or False");
        }
      } else if (key == "shape") {
        if (has_shape) return Error("duplicate key 'shape'");
        has_shape = true;
        SEDPACK_ASSIGN_OR_RETURN(header.shape, ParseShape());
      } else {
        return Error("unexpected key '" + key + "'");
      }
      SkipSpace();
      if (Consume(',')) continue;
      if (Consume('}')) break;
      return Error("expected ',' or '}'");
    }
    SkipSpace();
    if (pos_ != text_.size()) return Error("unexpected text after the dict");
    if (!has_descr || !has_order || !has_shape) {
      return Error("the dict must have the keys descr, fortran_order and shape");
    }
    return header;
  }

 private:
  Status Error(const std::string& what) const {
    return Status::Corruption("malformed .npy header (", what, " at offset ", pos_, ")");
  }
  void SkipSpace() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\n' ||
                                   text_[pos_] == '\t' || text_[pos_] == '\r')) {
      ++pos_;
    }
  }
  bool Consume(char c) {
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  bool ConsumeWord(std::string_view word) {
    if (text_.substr(pos_, word.size()) == word) {
      pos_ += word.size();
      return true;
    }
    return false;
  }
  Result<std::string> ParseString() {
    if (pos_ >= text_.size() || (text_[pos_] != '\'' && text_[pos_] != '"')) {
      return Error("expected a string");
    }
    const char quote = text_[pos_++];
    const std::size_t start = pos_;
    while (pos_ < text_.size() && text_[pos_] != quote) {
      // numpy never writes escapes; refusing them keeps the parser trivial.
      if (text_[pos_] == '\\') return Error("escapes are not supported in strings");
      ++pos_;
    }
    if (pos_ >= text_.size()) return Error("unterminated string");
    std::string out(text_.substr(start, pos_ - start));
    ++pos_;
    return out;
  }
  Result<std::vector<std::uint64_t>> ParseShape() {
    std::vector<std::uint64_t> shape;
    if (!Consume('(')) return Error("shape must be a tuple");
    bool trailing_comma = false;
    for (;;) {
      SkipSpace();
      if (Consume(')')) break;
      if (pos_ >= text_.size() || text_[pos_] < '0' || text_[pos_] > '9') {
        return Error("shape entries must be non-negative integers");
      }
      std::uint64_t value = 0;
      while (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9') {
        const std::uint64_t digit = static_cast<std::uint64_t>(text_[pos_] - '0');
        // Dimensions must fit numpy's signed intp.
        if (value >
            (static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()) - digit) / 10) {
          return Error("shape entry too large");
        }
        value = value * 10 + digit;
        ++pos_;
      }
      if (shape.size() >= kMaxDims) return Error("too many dimensions");
      shape.push_back(value);
      SkipSpace();
      trailing_comma = Consume(',');
      if (!trailing_comma) {
        SkipSpace();
        if (!Consume(')')) return Error("expected ',' or ')' in shape");
        break;
      }
    }
    // "(5)" is an int in Python, not a tuple.
    if (shape.size() == 1 && !trailing_comma) return Error("shape must be a tuple");
    return shape;
  }

  std::string_view text_;
  std::size_t pos_ = 0;
};

struct DescrRow {
  std::string_view descr;
  DType dtype;
};
constexpr std::array<DescrRow, 12> kDescrs = {{
    {"|b1", DType::kBool},
    {"|i1", DType::kInt8},
    {"<i2", DType::kInt16},
    {"<i4", DType::kInt32},
    {"<i8", DType::kInt64},
    {"|u1", DType::kUInt8},
    {"<u2", DType::kUInt16},
    {"<u4", DType::kUInt32},
    {"<u8", DType::kUInt64},
    {"<f2", DType::kFloat16},
    {"<f4", DType::kFloat32},
    {"<f8", DType::kFloat64},
}};

}  // namespace

std::string FormatNpyHeader(std::string_view descr, std::span<const std::uint64_t> shape) {
  std::string dict = "{'descr': '";
  dict += descr;
  dict += "', 'fortran_order': False, 'shape': ";
  dict += ShapeRepr(shape);
  dict += ", }";
  if (!shape.empty()) {
    const std::size_t digits = std::to_string(shape[0]).size();
    dict.append(kGrowthAxisMaxDigits > digits ? kGrowthAxisMaxDigits - digits : 0, ' ');
  }
  const std::size_t hlen = dict.size() + 1;  // + the final '\n'
  // Version 1.0 stores the header length in a u16; numpy moves to 2.0 (u32) beyond.
  std::size_t length_bytes = 2;
  std::size_t padlen = kArrayAlign - ((kMagicLen + 2 + length_bytes + hlen) % kArrayAlign);
  if (hlen + padlen > 0xffff) {
    length_bytes = 4;
    padlen = kArrayAlign - ((kMagicLen + 2 + length_bytes + hlen) % kArrayAlign);
  }
  std::string out(kMagic, kMagicLen);
  out.push_back(static_cast<char>(length_bytes == 2 ? 1 : 2));
  out.push_back(0);
  const std::uint64_t total = hlen + padlen;
  for (std::size_t i = 0; i < length_bytes; ++i) {
    out.push_back(static_cast<char>((total >> (8 * i)) & 0xff));
  }
  out += dict;
  out.append(padlen, ' ');
  out.push_back('\n');
  return out;
}

Result<NpyHeader> ParseNpyHeader(std::span<const std::byte> member) {
  if (member.size() < kMagicLen + 4 || std::memcmp(member.data(), kMagic, kMagicLen) != 0) {
    return Status::Corruption("npz member is not a .npy file (bad magic or truncated)");
  }
  const auto major = static_cast<unsigned>(member[6]);
  const auto minor = static_cast<unsigned>(member[7]);
  std::size_t start;
  std::uint64_t hlen;
  if (major == 1 && minor == 0) {
    start = kMagicLen + 4;
    hlen = core_internal::LoadLe16(member.data() + 8);
  } else if (major == 2 && minor == 0) {
    if (member.size() < kMagicLen + 6) return Status::Corruption("truncated .npy header");
    start = kMagicLen + 6;
    hlen = core_internal::LoadLe32(member.data() + 8);
  } else {
    return Status::Corruption("unsupported .npy format version ", major, ".", minor);
  }
  if (hlen > member.size() - start) {
    return Status::Corruption(".npy header length ", hlen, " passes the end of the member (",
                              member.size(), " bytes)");
  }
  const std::string_view text(reinterpret_cast<const char*>(member.data() + start), hlen);
  for (char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (u >= 0x80 || (u < 0x20 && c != '\n' && c != '\t' && c != '\r')) {
      return Status::Corruption(".npy header holds a non-ASCII or control byte");
    }
  }
  SEDPACK_ASSIGN_OR_RETURN(NpyHeader header, HeaderParser(text).Parse());
  header.data_offset = start + hlen;
  return header;
}

Result<NpyDType> ParseNpyDescr(std::string_view descr) {
  for (const DescrRow& row : kDescrs) {
    if (row.descr == descr) return NpyDType{row.dtype, DTypeItemSize(row.dtype)};
  }
  if (descr.size() > 2 && descr.substr(0, 2) == "<U") {
    std::uint64_t n = 0;
    for (char c : descr.substr(2)) {
      if (c < '0' || c > '9') return Status::Corruption("malformed .npy descr '", descr, "'");
      n = n * 10 + static_cast<std::uint64_t>(c - '0');
      // numpy's itemsize is an int; anything near it is hostile.
      if (n > (1ULL << 31)) return Status::Corruption(".npy descr '", descr, "' is too large");
    }
    return NpyDType{DType::kStr, 4 * n};
  }
  if (!descr.empty() && descr[0] == '>') {
    return Status::NotImplemented("big-endian .npy dtype '", descr, "' is not supported");
  }
  return Status::NotImplemented(".npy dtype '", descr,
                                "' is not supported (supported: bool, int8..int64, "
                                "uint8..uint64, float16/32/64, '<U' strings)");
}

std::string_view NpyDescrOf(DType dtype) { return DTypeNpyDescr(dtype); }

}  // namespace sedpack::npz_internal
