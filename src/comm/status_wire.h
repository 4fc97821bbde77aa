// SPDX-License-Identifier: Apache-2.0
// A Status as bytes, for sending it from one rank to the others. The code and
// the detail travel as numbers, so a receiving rank classifies the error
// exactly as the rank that made it.
#pragma once

#include <charconv>
#include <string>
#include <string_view>

#include "sedpack/status.h"

namespace sedpack::internal {

/// "<code> <detail>\n<message>".
inline std::string EncodeStatus(const Status& s) {
  return std::to_string(static_cast<int>(s.code())) + " " + std::to_string(static_cast<int>(s.detail())) + "\n" +
         s.message();
}

inline Status DecodeStatus(const std::string& text) {
  const auto malformed = [] { return Status::Internal("malformed status message"); };
  const auto nl = text.find('\n');
  const auto sp = text.find(' ');
  if (nl == std::string::npos || sp == std::string::npos || sp > nl) return malformed();
  // Both numbers must be whole and known (a rank of another build could send
  // one this build does not have).
  auto number = [&text](std::size_t begin, std::size_t end, int* out) {
    const char* first = text.data() + begin;
    const char* last = text.data() + end;
    const auto [ptr, ec] = std::from_chars(first, last, *out);
    return first != last && ec == std::errc() && ptr == last;
  };
  int code = 0, detail = 0;
  if (!number(0, sp, &code) || !number(sp + 1, nl, &detail)) return malformed();
  if (code < 0 || StatusCodeName(static_cast<StatusCode>(code)) == "Unknown") return malformed();
  if (detail < 0 || StatusDetailName(static_cast<StatusDetail>(detail)) == "unknown") return malformed();
  return Status(static_cast<StatusCode>(code), text.substr(nl + 1), static_cast<StatusDetail>(detail));
}

}  // namespace sedpack::internal
