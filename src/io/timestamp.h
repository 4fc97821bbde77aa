// SPDX-License-Identifier: Apache-2.0
// UTC timestamps as the tool prints and records them (a lock's owner, an
// input's mtime in a job's parameters, when a stopped job last recorded,
// restamp's audit lines), in one form: ISO 8601, "Z", no locale.
// Project-private (src/ include directory), not installed.
#pragma once

#include <cstdint>
#include <string>

namespace sedpack::io_internal {

/// 2026-12-06T03:51:48Z for `seconds` since the epoch.
std::string UtcTimestamp(std::int64_t seconds);
/// 2026-12-06T03:51:48.964840188Z for `nanoseconds` since the epoch (every digit
/// kept: two mtimes within the same second still differ).
std::string UtcTimestampNs(std::int64_t nanoseconds);

}  // namespace sedpack::io_internal
