// SPDX-License-Identifier: Apache-2.0
// A Status as bytes, for sending it from one rank to the others.
#pragma once

#include <cstdlib>
#include <string>

#include "sedpack/status.h"

namespace sedpack::internal {

/// "<code>\n<message>".
inline std::string EncodeStatus(const Status& s) {
  return std::to_string(static_cast<int>(s.code())) + "\n" + s.message();
}

inline Status DecodeStatus(const std::string& text) {
  const auto nl = text.find('\n');
  if (nl == std::string::npos) return Status::Internal("malformed status message");
  return Status(static_cast<StatusCode>(std::atoi(text.substr(0, nl).c_str())), text.substr(nl + 1));
}

}  // namespace sedpack::internal
