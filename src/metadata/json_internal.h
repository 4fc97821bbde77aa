// SPDX-License-Identifier: Apache-2.0
//
// Private JSON plumbing of the metadata module. nlohmann_json is used only as a
// tokenizer (its SAX interface) inside json_value.cc; everything else works on
// the small Node tree below, so that:
//  - integers of any size keep their exact digits (nlohmann would turn integers
//    beyond uint64 into doubles, pydantic keeps Python ints exact);
//  - object key order is preserved as written;
//  - output can be formatted exactly like pydantic-core (which nlohmann's dump()
//    cannot do: different float format, different escaping of U+007F).
// Known difference from Python: a float literal that overflows a double (1e400)
// is a parse error here (nlohmann refuses it), while Python reads it as inf
// and pydantic would write it back as null.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sedpack/status.h"

namespace sedpack::json_internal {

/// Deepest nesting of arrays/objects accepted by ParseJson. Everything we write
/// is at most ~8 deep; the limit only exists so that hostile input cannot make
/// the (recursive) tree code below overflow the stack.
inline constexpr int kMaxDepth = 256;

struct Member;

struct Node {
  enum class Kind { kNull, kBool, kInt, kFloat, kString, kArray, kObject };

  Kind kind = Kind::kNull;
  bool boolean = false;
  /// kInt: canonical decimal digits with optional '-' (may exceed 64 bits).
  /// kString: the decoded UTF-8 text.
  std::string text;
  /// kFloat only.
  double number = 0.0;
  std::vector<Node> items;                            // kArray
  std::vector<Member> members;                        // kObject, in input order

  // Defined after the class: members of Node's own type cannot be built while
  // Node is incomplete (clang with libstdc++ refuses it).
  static Node Null();
  static Node Bool(bool b);
  static Node Int(std::int64_t v);
  static Node Float(double v);
  static Node String(std::string s);
  static Node Array();
  static Node Object();

  /// kObject: append a member (no duplicate check; callers build fresh objects).
  Node& Add(std::string key, Node value);
  /// kObject: the member named `key`, or nullptr.
  const Node* Find(std::string_view key) const;
};

/// One object member. A struct rather than std::pair<std::string, Node>: the
/// pair's traits would be instantiated while Node is still incomplete.
struct Member {
  Member() = default;
  Member(std::string k, Node v) : first(std::move(k)), second(std::move(v)) {}
  std::string first;
  Node second;
};

inline Node Node::Null() { return Node{}; }

/// Human-readable kind ("a string", "an array", ...) for error messages.
std::string_view KindName(Node::Kind kind);

/// Parse one JSON document. Duplicate object keys keep the position of the
/// first occurrence and the value of the last (Python dict semantics).
/// InvalidArgument "malformed JSON at byte N: ..." or "... nested deeper than
/// 256 levels"; the caller prefixes the source name.
Result<Node> ParseJson(std::string_view text);

/// Compact form (no whitespace), e.g. {"a":[1,2.5]}; keys sorted recursively
/// (by UTF-8 bytes, which is code point order) when `sort_keys`.
std::string WriteCompact(const Node& node, bool sort_keys = false);
/// pydantic model_dump_json(indent=2) layout; `indent` is the current depth in
/// spaces (the opening bracket is assumed to be already positioned).
void WritePretty(const Node& node, int indent, std::string* out);

/// A double as pydantic-core writes it: shortest round-trip digits, decimal
/// notation for 1e-5 <= |v| < 1e16 (always with a fraction, "1.0"), otherwise
/// scientific with a signed, unpadded exponent ("1e+16", "1e-7",
/// "1.7976931348623157e+308"); NaN and infinities as null.
std::string FormatFloat(double v);
/// Append `s` as a quoted JSON string escaped like serde_json/pydantic-core.
void AppendQuoted(std::string_view s, std::string* out);

}  // namespace sedpack::json_internal
