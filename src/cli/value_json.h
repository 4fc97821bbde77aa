// SPDX-License-Identifier: Apache-2.0
// JSON text for attribute values (`sedpack cat`). Numbers are written so that
// parsing them gives back the exact stored value.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "sedpack/dataset/reader.h"
#include "sedpack/types.h"
#include "sedpack/value.h"

namespace sedpack::cli {

/// Append `text` as a JSON string. Invalid UTF-8 sequences become U+FFFD (JSON
/// text must be valid UTF-8); control characters, '"' and '\' are escaped.
void AppendJsonString(std::string_view text, std::string* out);

/// Append standard base64 (RFC 4648 alphabet, '=' padding) of `data`.
void AppendBase64(std::span<const std::byte> data, std::string* out);

/// Shortest decimal that parses (to double, then rounded to nearest-even
/// binary16) back to exactly `bits`; "NaN", "Infinity", "-Infinity" as JSON
/// strings. Always contains '.' or an exponent so that parsers see a float.
std::string_view HalfToJson(std::uint16_t bits);
/// Same for float32 and float64 (shortest round trip, std::to_chars).
void AppendFloat(float v, std::string* out);
void AppendDouble(double v, std::string* out);

/// Round a double to the nearest binary16 (ties to even), directly (no double
/// rounding through float).
std::uint16_t DoubleToHalfBits(double d);

/// Append one attribute value: numbers as nested lists following the shape
/// (a scalar for shape ()), bool as true/false, int as an integer, str as a
/// string, bytes as a base64 string.
void AppendValueJson(const ValueView& value, std::string* out);

/// The escaped `"name":` prefixes of a JSON object per example, in schema order.
std::vector<std::string> JsonObjectKeys(std::span<const AttributeSpec> schema);
/// Append one example as `{"name":value,...}` and a newline (the line `sedpack
/// cat` and `sedpack get` print). REQUIRES: the example has keys.size() attributes.
void AppendExampleJsonLine(std::span<const std::string> keys, const Example& example, std::string* out);

}  // namespace sedpack::cli
