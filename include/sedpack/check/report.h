// SPDX-License-Identifier: Apache-2.0
// A CheckReport as JSON, for tools that read verification results, and as the
// text `sedpack verify` prints.
#pragma once

#include <string>
#include <string_view>

#include "sedpack/check/check.h"

namespace sedpack {

/// The report as a JSON object (pretty-printed, two-space indent, keys sorted,
/// ending in a newline): `dataset` (the path given), `ok`, `errors`,
/// `warnings`, `files_checked`, `bytes_checked`, `shards_checked`,
/// `examples_checked`, `seconds` (as given: how long the check took) and
/// `problems`, an array of objects with `severity` ("error" or "warning"),
/// `kind` (CheckProblemKindName), `path`, `message`, and for hash mismatches
/// `algorithm`, `expected`, `found` (each only when not empty). Bytes that are
/// not valid UTF-8 in paths or messages are replaced by U+FFFD. A non-empty
/// `schema` adds a `schema` member (the document's schema name).
std::string CheckReportToJson(const CheckReport& report, const std::string& dataset, double seconds,
                              std::string_view schema = {});

/// One line per problem, in report order: "ERROR <kind> <path>: <message>"
/// ("WARNING" for warnings; "." for an empty path; the path not repeated when
/// the message starts with it), and for a hash mismatch whose message does not
/// show the found value " (<algorithm>: expected <e>, found <f>)".
std::string CheckProblemsToText(const CheckReport& report);

}  // namespace sedpack
