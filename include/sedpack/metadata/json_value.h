// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string>
#include <string_view>

#include "sedpack/status.h"

namespace sedpack {

/// An arbitrary JSON value (the `custom_metadata` fields), kept as compact JSON
/// text so that no JSON library type reaches a public header. Defaults to `{}`.
/// Object key order is preserved as written.
class JsonValue {
 public:
  JsonValue() = default;
  /// Parse and re-serialize compactly. InvalidArgument on malformed text.
  static Result<JsonValue> Parse(std::string_view text);

  /// Compact JSON text, e.g. {"group":"A"}.
  const std::string& text() const { return text_; }
  /// True for `{}` (the reference treats `{}` and None as "no metadata").
  bool IsEmptyObject() const { return text_ == "{}"; }
  bool IsObject() const { return !text_.empty() && text_[0] == '{'; }
  /// Compact JSON with object keys sorted recursively; identifies equal dicts.
  std::string SortedKeysText() const;
  /// Python dict equality: key order does not matter.
  bool Equals(const JsonValue& other) const;

 private:
  explicit JsonValue(std::string text) : text_(std::move(text)) {}
  std::string text_ = "{}";
};

}  // namespace sedpack
