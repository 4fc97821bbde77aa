// SPDX-License-Identifier: Apache-2.0
// The leakage-model language of `sedpack report --snr`: a recursive-descent
// parser producing a postfix program, evaluated per example on a small stack.
#include <bit>
#include <cctype>
#include <cmath>
#include <cstring>

#include "generate/aes128.h"
#include "sedpack/report/report.h"

namespace sedpack {

struct SnrExpression::Node {
  enum Op : std::uint8_t { kConst, kElement, kXor, kSbox, kHw } op = kConst;
  DType dtype = DType::kUInt8;
  std::size_t attribute = 0;
  std::int64_t value = 0;  // the literal, or the element index
};

namespace {

// Nesting deeper than this is refused, so that evaluation has a fixed stack
// and a hostile expression cannot exhaust the parser's.
constexpr int kMaxDepth = 64;

bool IsIntegerDType(DType d) {
  switch (d) {
    case DType::kBool: case DType::kInt8: case DType::kUInt8: case DType::kInt16: case DType::kUInt16:
    case DType::kInt32: case DType::kUInt32: case DType::kInt64: case DType::kUInt64: case DType::kInt:
      return true;
    default:
      return false;
  }
}

class Parser {
 public:
  Parser(std::string_view text, const std::vector<AttributeSpec>& schema) : text_(text), schema_(schema) {}

  Status Run(std::vector<SnrExpression::Node>* out) {
    out_ = out;
    SEDPACK_RETURN_NOT_OK(Xor(0));
    SkipSpace();
    if (pos_ != text_.size()) return Error("unexpected '", std::string(1, text_[pos_]), "'");
    return Status::OK();
  }

 private:
  template <typename... Args>
  Status Error(Args&&... args) {
    return Status::InvalidArgument("--snr \"", text_, "\": ", std::forward<Args>(args)..., " at column ", pos_ + 1);
  }

  void SkipSpace() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }

  bool Accept(char c) {
    SkipSpace();
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }

  Status Expect(char c) {
    if (Accept(c)) return Status::OK();
    if (pos_ >= text_.size()) return Error("expected '", std::string(1, c), "' but the expression ends");
    return Error("expected '", std::string(1, c), "'");
  }

  Status Xor(int depth) {
    SEDPACK_RETURN_NOT_OK(Primary(depth));
    while (Accept('^')) {
      SEDPACK_RETURN_NOT_OK(Primary(depth));
      out_->push_back({SnrExpression::Node::kXor});
    }
    return Status::OK();
  }

  Status Integer(std::int64_t* value) {
    SkipSpace();
    const std::size_t start = pos_;
    int base = 10;
    if (text_.substr(pos_, 2) == "0x" || text_.substr(pos_, 2) == "0X") {
      base = 16;
      pos_ += 2;
    }
    std::uint64_t v = 0;
    std::size_t digits = 0;
    while (pos_ < text_.size() && std::isxdigit(static_cast<unsigned char>(text_[pos_]))) {
      const char c = static_cast<char>(std::tolower(static_cast<unsigned char>(text_[pos_])));
      const int d = c <= '9' ? c - '0' : c - 'a' + 10;
      if (d >= base) break;
      if (v > (static_cast<std::uint64_t>(INT64_MAX) - static_cast<std::uint64_t>(d)) / static_cast<std::uint64_t>(base)) {
        pos_ = start;
        return Error("integer too large");
      }
      v = v * static_cast<std::uint64_t>(base) + static_cast<std::uint64_t>(d);
      ++pos_;
      ++digits;
    }
    if (digits == 0) {
      pos_ = start;
      return Error("expected an integer");
    }
    *value = static_cast<std::int64_t>(v);
    return Status::OK();
  }

  Status Primary(int depth) {
    if (depth > kMaxDepth) return Error("nested more than ", kMaxDepth, " levels deep");
    SkipSpace();
    if (pos_ >= text_.size()) return Error("expected a value but the expression ends");
    const char c = text_[pos_];
    if (c == '(') {
      ++pos_;
      SEDPACK_RETURN_NOT_OK(Xor(depth + 1));
      return Expect(')');
    }
    if (std::isdigit(static_cast<unsigned char>(c))) {
      std::int64_t v = 0;
      SEDPACK_RETURN_NOT_OK(Integer(&v));
      out_->push_back({SnrExpression::Node::kConst, DType::kInt64, 0, v});
      return Status::OK();
    }
    if (!std::isalpha(static_cast<unsigned char>(c)) && c != '_') return Error("unexpected '", std::string(1, c), "'");
    const std::size_t start = pos_;
    while (pos_ < text_.size() &&
           (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_' || text_[pos_] == '-' ||
            text_[pos_] == '.')) {
      ++pos_;
    }
    const std::string name(text_.substr(start, pos_ - start));
    if (Accept('(')) {
      SnrExpression::Node::Op op;
      if (name == "sbox") {
        op = SnrExpression::Node::kSbox;
      } else if (name == "hw") {
        op = SnrExpression::Node::kHw;
      } else {
        pos_ = start;
        return Error("unknown function \"", name, "\" (known: sbox, hw)");
      }
      SEDPACK_RETURN_NOT_OK(Xor(depth + 1));
      SEDPACK_RETURN_NOT_OK(Expect(')'));
      out_->push_back({op});
      return Status::OK();
    }
    return Element(name, start);
  }

  Status Element(const std::string& name, std::size_t start) {
    std::size_t a = 0;
    while (a < schema_.size() && schema_[a].name != name) ++a;
    if (a == schema_.size()) {
      pos_ = start;
      std::string known;
      for (const AttributeSpec& s : schema_) known += (known.empty() ? "" : ", ") + s.name;
      return Error("unknown attribute \"", name, "\" (the dataset has: ", known, ")");
    }
    const AttributeSpec& spec = schema_[a];
    if (!IsIntegerDType(spec.dtype)) {
      pos_ = start;
      return Error("attribute \"", name, "\" is ", DTypeName(spec.dtype), ", not an integer dtype");
    }
    std::int64_t elements = 1;
    for (std::int64_t d : spec.shape) elements *= d;
    std::int64_t index = 0;
    if (Accept('[')) {
      const std::size_t at = pos_;
      SEDPACK_RETURN_NOT_OK(Integer(&index));
      if (index >= elements) {
        pos_ = at;
        return Error("index ", index, " is out of range for \"", name, "\" (", elements, " elements)");
      }
      SEDPACK_RETURN_NOT_OK(Expect(']'));
    } else if (elements != 1) {
      pos_ = start;
      return Error("attribute \"", name, "\" has ", elements, " elements: write ", name, "[i]");
    }
    out_->push_back({SnrExpression::Node::kElement, spec.dtype, a, index});
    return Status::OK();
  }

  std::string_view text_;
  const std::vector<AttributeSpec>& schema_;
  std::vector<SnrExpression::Node>* out_ = nullptr;
  std::size_t pos_ = 0;
};

std::int64_t Truncate(double x) { return std::fabs(x) < 9e18 ? static_cast<std::int64_t>(x) : 0; }

std::int64_t LoadInteger(const ValueView& v, DType dtype, std::int64_t index) {
  const std::size_t item = DTypeItemSize(dtype);
  if (item == 0) return 0;
  const std::size_t at = static_cast<std::size_t>(index) * item;
  if (at + item > v.data.size()) return 0;  // never for a shard that decoded against the schema
  const std::byte* p = v.data.data() + at;
  auto load = [p]<typename T>(T) {
    T x;
    std::memcpy(&x, p, sizeof(T));
    return x;
  };
  switch (dtype) {
    case DType::kBool: case DType::kUInt8: return load(std::uint8_t{});
    case DType::kInt8: return load(std::int8_t{});
    case DType::kInt16: return load(std::int16_t{});
    case DType::kUInt16: return load(std::uint16_t{});
    case DType::kInt32: return load(std::int32_t{});
    case DType::kUInt32: return load(std::uint32_t{});
    case DType::kUInt64: return static_cast<std::int64_t>(load(std::uint64_t{}));
    // A reader may hand out another dtype than the schema's (shards store what
    // the writer passed); a float stored for an integer attribute is truncated.
    case DType::kFloat32: return Truncate(load(float{}));
    case DType::kFloat64: return Truncate(load(double{}));
    case DType::kInt64: case DType::kInt: return load(std::int64_t{});
    default: return 0;
  }
}

}  // namespace

Result<SnrExpression> SnrExpression::Parse(std::string_view text, const std::vector<AttributeSpec>& schema) {
  SnrExpression e;
  e.text_ = std::string(text);
  Parser parser(text, schema);
  SEDPACK_RETURN_NOT_OK(parser.Run(&e.nodes_));
  return e;
}

SnrExpression::SnrExpression(const SnrExpression&) = default;
SnrExpression& SnrExpression::operator=(const SnrExpression&) = default;
SnrExpression::SnrExpression(SnrExpression&&) noexcept = default;
SnrExpression& SnrExpression::operator=(SnrExpression&&) noexcept = default;
SnrExpression::~SnrExpression() = default;

std::int64_t SnrExpression::Evaluate(const std::vector<ValueView>& values) const {
  // The parser bounds the nesting, not the length: `a ^ b ^ c ...` keeps the
  // stack at two, so the stack never holds more than kMaxDepth + 2 entries.
  std::int64_t stack[kMaxDepth + 4];
  int top = 0;
  for (const Node& n : nodes_) {
    switch (n.op) {
      case Node::kConst: stack[top++] = n.value; break;
      case Node::kElement: stack[top++] = LoadInteger(values[n.attribute], values[n.attribute].dtype, n.value); break;
      case Node::kXor: --top; stack[top - 1] ^= stack[top]; break;
      case Node::kSbox: stack[top - 1] = generate_internal::AesSbox(static_cast<std::uint8_t>(stack[top - 1])); break;
      case Node::kHw: stack[top - 1] = std::popcount(static_cast<std::uint64_t>(stack[top - 1])); break;
    }
  }
  return top == 1 ? stack[0] : 0;
}

}  // namespace sedpack
