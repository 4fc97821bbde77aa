// SPDX-License-Identifier: Apache-2.0
#include "sedpack/metadata/json_value.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <system_error>
#include <unordered_map>
#include <utility>
#include <vector>

#include "metadata/json_internal.h"

namespace sedpack {
namespace json_internal {

Node Node::Bool(bool b) {
  Node n;
  n.kind = Kind::kBool;
  n.boolean = b;
  return n;
}

Node Node::Int(std::int64_t v) {
  Node n;
  n.kind = Kind::kInt;
  n.text = std::to_string(v);
  return n;
}

Node Node::Float(double v) {
  Node n;
  n.kind = Kind::kFloat;
  n.number = v;
  return n;
}

Node Node::String(std::string s) {
  Node n;
  n.kind = Kind::kString;
  n.text = std::move(s);
  return n;
}

Node Node::Array() {
  Node n;
  n.kind = Kind::kArray;
  return n;
}

Node Node::Object() {
  Node n;
  n.kind = Kind::kObject;
  return n;
}

Node& Node::Add(std::string key, Node value) {
  members.emplace_back(std::move(key), std::move(value));
  return members.back().second;
}

const Node* Node::Find(std::string_view key) const {
  for (const auto& [k, v] : members) {
    if (k == key) return &v;
  }
  return nullptr;
}

std::string_view KindName(Node::Kind kind) {
  switch (kind) {
    case Node::Kind::kNull:
      return "null";
    case Node::Kind::kBool:
      return "a boolean";
    case Node::Kind::kInt:
      return "an integer";
    case Node::Kind::kFloat:
      return "a float";
    case Node::Kind::kString:
      return "a string";
    case Node::Kind::kArray:
      return "an array";
    case Node::Kind::kObject:
      return "an object";
  }
  return "?";
}

namespace {

// Builds a Node tree from nlohmann's SAX events. nlohmann's SAX parser is
// iterative (it keeps its own stack), so refusing to open a container past
// kMaxDepth bounds every later recursion over the tree; no separate pre-scan of
// the text is needed.
class TreeBuilder {
 public:
  using json = nlohmann::json;

  bool null() { return Put(Node::Null()); }
  bool boolean(bool b) { return Put(Node::Bool(b)); }
  bool number_integer(json::number_integer_t v) { return Put(Node::Int(v)); }
  bool number_unsigned(json::number_unsigned_t v) {
    Node n;
    n.kind = Node::Kind::kInt;
    n.text = std::to_string(v);
    return Put(std::move(n));
  }
  bool number_float(json::number_float_t v, const json::string_t& lexeme) {
    // nlohmann hands integers that overflow 64 bits to number_float; the lexeme
    // still has every digit, so keep it and stay exact like Python ints.
    if (lexeme.find_first_of(".eE") == std::string::npos) {
      Node n;
      n.kind = Node::Kind::kInt;
      n.text = lexeme;
      return Put(std::move(n));
    }
    return Put(Node::Float(v));
  }
  bool string(json::string_t& s) { return Put(Node::String(std::move(s))); }
  bool binary(json::binary_t& /*unused*/) {
    error_ = "unexpected binary value";
    return false;
  }
  bool start_object(std::size_t /*unused*/) { return Open(Node::Object()); }
  bool key(json::string_t& k) {
    Frame& f = stack_.back();
    auto [it, inserted] = f.index.try_emplace(k, f.node->members.size());
    if (inserted) {
      f.node->members.emplace_back(std::move(k), Node());
    } else {
      // Python dict semantics: the later value replaces the earlier one in place.
      f.node->members[it->second].second = Node();
    }
    f.pending = it->second;
    return true;
  }
  bool end_object() {
    stack_.pop_back();
    return true;
  }
  bool start_array(std::size_t /*unused*/) { return Open(Node::Array()); }
  bool end_array() {
    stack_.pop_back();
    return true;
  }
  bool parse_error(std::size_t position, const std::string& /*last_token*/,
                   const json::exception& ex) {
    std::string what = ex.what();
    // Drop nlohmann's "[json.exception.parse_error.101] " tag; the rest already
    // says "parse error at line L, column C: ...".
    if (!what.empty() && what[0] == '[') {
      const auto close = what.find("] ");
      if (close != std::string::npos) what.erase(0, close + 2);
    }
    // nlohmann quotes the whole current token ("last read: ..."), which hostile
    // input can make arbitrarily long; keep the message readable.
    constexpr std::size_t kMaxMessage = 300;
    if (what.size() > kMaxMessage) {
      // In place: `what.substr(...) + "..."` gets a false -Warray-bounds from gcc 12 -O2.
      what.resize(kMaxMessage);
      what += "...";
    }
    error_ = "malformed JSON at byte " + std::to_string(position) + ": " + what;
    return false;
  }

  Node TakeRoot() { return std::move(root_); }
  const std::string& error() const { return error_; }

 private:
  struct Frame {
    Node* node;
    std::unordered_map<std::string, std::size_t> index;  // objects: key -> member
    std::size_t pending = 0;                             // objects: slot of the last key
  };

  Node* Slot() {
    if (stack_.empty()) return &root_;
    Frame& f = stack_.back();
    if (f.node->kind == Node::Kind::kArray) {
      f.node->items.emplace_back();
      return &f.node->items.back();
    }
    return &f.node->members[f.pending].second;
  }

  bool Put(Node n) {
    *Slot() = std::move(n);
    return true;
  }

  bool Open(Node n) {
    if (static_cast<int>(stack_.size()) >= kMaxDepth) {
      error_ = "malformed JSON: nested deeper than " + std::to_string(kMaxDepth) + " levels";
      return false;
    }
    Node* slot = Slot();
    *slot = std::move(n);
    // Stable: a container's vector only grows while it is the innermost open one.
    stack_.push_back(Frame{slot, {}, 0});
    return true;
  }

  Node root_;
  std::vector<Frame> stack_;
  std::string error_;
};

void AppendIndent(int n, std::string* out) { out->append(static_cast<std::size_t>(n), ' '); }

void WriteScalar(const Node& node, std::string* out) {
  switch (node.kind) {
    case Node::Kind::kNull:
      out->append("null");
      break;
    case Node::Kind::kBool:
      out->append(node.boolean ? "true" : "false");
      break;
    case Node::Kind::kInt:
      out->append(node.text);
      break;
    case Node::Kind::kFloat:
      out->append(FormatFloat(node.number));
      break;
    case Node::Kind::kString:
      AppendQuoted(node.text, out);
      break;
    case Node::Kind::kArray:
    case Node::Kind::kObject:
      break;
  }
}

void WriteCompactTo(const Node& node, bool sort_keys, std::string* out) {
  if (node.kind == Node::Kind::kArray) {
    out->push_back('[');
    for (std::size_t i = 0; i < node.items.size(); ++i) {
      if (i) out->push_back(',');
      WriteCompactTo(node.items[i], sort_keys, out);
    }
    out->push_back(']');
    return;
  }
  if (node.kind == Node::Kind::kObject) {
    std::vector<const Member*> members;
    members.reserve(node.members.size());
    for (const auto& m : node.members) members.push_back(&m);
    if (sort_keys) {
      std::sort(members.begin(), members.end(),
                [](const auto* a, const auto* b) { return a->first < b->first; });
    }
    out->push_back('{');
    for (std::size_t i = 0; i < members.size(); ++i) {
      if (i) out->push_back(',');
      AppendQuoted(members[i]->first, out);
      out->push_back(':');
      WriteCompactTo(members[i]->second, sort_keys, out);
    }
    out->push_back('}');
    return;
  }
  WriteScalar(node, out);
}

}  // namespace

Result<Node> ParseJson(std::string_view text) {
  TreeBuilder builder;
  bool ok = false;
  try {
    ok = nlohmann::json::sax_parse(text.begin(), text.end(), &builder,
                                   nlohmann::json::input_format_t::json, /*strict=*/true,
                                   /*ignore_comments=*/false);
  } catch (const nlohmann::json::exception& e) {
    // sax_parse reports through parse_error(); this is only a safety net.
    return Status::InvalidArgument("malformed JSON: ", e.what());
  }
  if (!ok) {
    return Status::InvalidArgument(builder.error().empty() ? "malformed JSON"
                                                           : builder.error());
  }
  return builder.TakeRoot();
}

std::string WriteCompact(const Node& node, bool sort_keys) {
  std::string out;
  WriteCompactTo(node, sort_keys, &out);
  return out;
}

void WritePretty(const Node& node, int indent, std::string* out) {
  if (node.kind == Node::Kind::kArray) {
    if (node.items.empty()) {
      out->append("[]");
      return;
    }
    out->append("[\n");
    for (std::size_t i = 0; i < node.items.size(); ++i) {
      AppendIndent(indent + 2, out);
      WritePretty(node.items[i], indent + 2, out);
      out->append(i + 1 < node.items.size() ? ",\n" : "\n");
    }
    AppendIndent(indent, out);
    out->push_back(']');
    return;
  }
  if (node.kind == Node::Kind::kObject) {
    if (node.members.empty()) {
      out->append("{}");
      return;
    }
    out->append("{\n");
    for (std::size_t i = 0; i < node.members.size(); ++i) {
      AppendIndent(indent + 2, out);
      AppendQuoted(node.members[i].first, out);
      out->append(": ");
      WritePretty(node.members[i].second, indent + 2, out);
      out->append(i + 1 < node.members.size() ? ",\n" : "\n");
    }
    AppendIndent(indent, out);
    out->push_back('}');
    return;
  }
  WriteScalar(node, out);
}

std::string FormatFloat(double v) {
  if (!std::isfinite(v)) return "null";  // pydantic's default ser_json_inf_nan
  std::string out;
  if (std::signbit(v)) out.push_back('-');
  if (v == 0.0) return out + "0.0";

  // Shortest round-trip digits (same digits as ryu / Python repr), as d.ddde±x.
  char buf[64];
  const auto res = std::to_chars(buf, buf + sizeof(buf), std::fabs(v),
                                 std::chars_format::scientific);
  const std::string_view sci(buf, static_cast<std::size_t>(res.ptr - buf));
  const std::size_t e_pos = sci.find('e');
  std::string digits;
  for (char c : sci.substr(0, e_pos)) {
    if (c != '.') digits.push_back(c);
  }
  int exp10 = 0;
  std::string_view exp_text = sci.substr(e_pos + 1);
  if (!exp_text.empty() && exp_text[0] == '+') exp_text.remove_prefix(1);
  std::from_chars(exp_text.data(), exp_text.data() + exp_text.size(), exp10);

  // Same layout rules as the ryu crate's "pretty" output used by pydantic-core:
  // value = 0.DIGITS * 10^kk.
  const int n = static_cast<int>(digits.size());
  const int kk = exp10 + 1;
  const int k = kk - n;
  if (k >= 0 && kk <= 16) {
    out += digits;
    out.append(static_cast<std::size_t>(k), '0');
    out += ".0";
  } else if (kk > 0 && kk <= 16) {
    out += digits.substr(0, static_cast<std::size_t>(kk));
    out.push_back('.');
    out += digits.substr(static_cast<std::size_t>(kk));
  } else if (kk > -5 && kk <= 0) {
    out += "0.";
    out.append(static_cast<std::size_t>(-kk), '0');
    out += digits;
  } else {
    out.push_back(digits[0]);
    if (n > 1) {
      out.push_back('.');
      out += digits.substr(1);
    }
    const int e = kk - 1;
    out.push_back('e');
    out.push_back(e < 0 ? '-' : '+');
    out += std::to_string(e < 0 ? -e : e);
  }
  return out;
}

void AppendQuoted(std::string_view s, std::string* out) {
  static constexpr char kHex[] = "0123456789abcdef";
  out->push_back('"');
  for (char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    switch (c) {
      case '"':
        out->append("\\\"");
        break;
      case '\\':
        out->append("\\\\");
        break;
      case '\n':
        out->append("\\n");
        break;
      case '\t':
        out->append("\\t");
        break;
      case '\r':
        out->append("\\r");
        break;
      case '\b':
        out->append("\\b");
        break;
      case '\f':
        out->append("\\f");
        break;
      default:
        if (c < 0x20) {
          out->append("\\u00");
          out->push_back(kHex[c >> 4]);
          out->push_back(kHex[c & 0xf]);
        } else {
          // '/', DEL and all non-ASCII bytes are written raw, as pydantic does.
          out->push_back(ch);
        }
    }
  }
  out->push_back('"');
}

}  // namespace json_internal

Result<JsonValue> JsonValue::Parse(std::string_view text) {
  SEDPACK_ASSIGN_OR_RETURN(json_internal::Node node, json_internal::ParseJson(text));
  return JsonValue(json_internal::WriteCompact(node));
}

std::string JsonValue::SortedKeysText() const {
  auto node = json_internal::ParseJson(text_);
  // text_ always comes from Parse (or is the default "{}"), so this cannot fail.
  if (!node.ok()) return text_;
  return json_internal::WriteCompact(*node, /*sort_keys=*/true);
}

bool JsonValue::Equals(const JsonValue& other) const {
  return text_ == other.text_ || SortedKeysText() == other.SortedKeysText();
}

}  // namespace sedpack
