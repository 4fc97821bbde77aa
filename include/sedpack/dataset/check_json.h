// SPDX-License-Identifier: Apache-2.0
// A CheckReport as JSON, for tools that read verification results.
#pragma once

#include <string>

#include "sedpack/dataset/check.h"

namespace sedpack {

/// The report as a JSON object (pretty-printed, two-space indent, keys sorted,
/// ending in a newline): `dataset` (the path given), `ok`, `errors`,
/// `warnings`, `files_checked`, `bytes_checked`, `shards_checked`,
/// `examples_checked`, `seconds` (as given: how long the check took) and
/// `problems`, an array of objects with `severity` ("error" or "warning"),
/// `kind` (CheckProblemKindName), `path`, `message`, and for hash mismatches
/// `algorithm`, `expected`, `found` (each only when not empty). Bytes that are
/// not valid UTF-8 in paths or messages are replaced by U+FFFD.
std::string CheckReportToJson(const CheckReport& report, const std::string& dataset, double seconds);

}  // namespace sedpack
