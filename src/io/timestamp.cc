// SPDX-License-Identifier: Apache-2.0
#include "io/timestamp.h"

#include <cstdio>
#include <ctime>

namespace sedpack::io_internal {

std::string UtcTimestamp(std::int64_t seconds) {
  const auto t = static_cast<std::time_t>(seconds);
  std::tm tm{};
  if (::gmtime_r(&t, &tm) == nullptr) return std::to_string(seconds) + " s";
  char buf[64];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string UtcTimestampNs(std::int64_t nanoseconds) {
  constexpr std::int64_t kBillion = 1000000000;
  // Floor division: an mtime before 1970 keeps a fraction in [0, 1).
  std::int64_t seconds = nanoseconds / kBillion;
  std::int64_t fraction = nanoseconds % kBillion;
  if (fraction < 0) {
    fraction += kBillion;
    --seconds;
  }
  std::string s = UtcTimestamp(seconds);
  if (s.empty() || s.back() != 'Z') return std::to_string(nanoseconds) + " ns";
  char digits[16];
  std::snprintf(digits, sizeof digits, ".%09lldZ", static_cast<long long>(fraction));
  s.pop_back();
  return s + digits;
}

}  // namespace sedpack::io_internal
