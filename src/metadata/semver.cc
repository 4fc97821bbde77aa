// SPDX-License-Identifier: Apache-2.0
#include <algorithm>
#include <charconv>
#include <cstdint>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "sedpack/metadata/models.h"

namespace sedpack {
namespace {

bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsIdentChar(char c) {
  return IsDigit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '-';
}
bool AllDigits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!IsDigit(c)) return false;
  }
  return true;
}

// A numeric core part: "0" or no leading zero (SemVer 2.0 / python-semver).
Status ParseNumber(std::string_view part, std::string_view what, std::uint64_t* out) {
  if (!AllDigits(part)) {
    return Status::InvalidArgument(what, " \"", part, "\" is not a non-negative integer");
  }
  if (part.size() > 1 && part[0] == '0') {
    return Status::InvalidArgument(what, " \"", part, "\" has a leading zero");
  }
  const auto res = std::from_chars(part.data(), part.data() + part.size(), *out);
  if (res.ec != std::errc() || res.ptr != part.data() + part.size()) {
    return Status::InvalidArgument(what, " \"", part, "\" is too large");
  }
  return Status::OK();
}

std::vector<std::string_view> SplitDots(std::string_view s) {
  std::vector<std::string_view> out;
  std::size_t start = 0;
  while (true) {
    const std::size_t dot = s.find('.', start);
    out.push_back(s.substr(start, dot == std::string_view::npos ? s.npos : dot - start));
    if (dot == std::string_view::npos) break;
    start = dot + 1;
  }
  return out;
}

// Numeric identifiers have no leading zeros, so comparing by length first and
// then lexicographically is numeric order, for any number of digits.
int CompareNumeric(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return a.size() < b.size() ? -1 : 1;
  return a.compare(b) < 0 ? -1 : (a == b ? 0 : 1);
}

}  // namespace

Result<SemVer> ParseSemVer(std::string_view text) {
  auto fail = [&](const Status& why) {
    return why.WithContext("\"" + std::string(text) + "\" is not a valid SemVer 2.0 version (", ")");
  };
  std::string_view rest = text;
  std::string_view build;
  if (const auto plus = rest.find('+'); plus != std::string_view::npos) {
    build = rest.substr(plus + 1);
    rest = rest.substr(0, plus);
    for (std::string_view id : SplitDots(build)) {
      if (id.empty()) return fail(Status::InvalidArgument("empty build identifier"));
      for (char c : id) {
        if (!IsIdentChar(c)) {
          return fail(Status::InvalidArgument("invalid character in build \"", build, "\""));
        }
      }
    }
  }
  std::string_view pre;
  bool has_pre = false;
  if (const auto dash = rest.find('-'); dash != std::string_view::npos) {
    pre = rest.substr(dash + 1);
    rest = rest.substr(0, dash);
    has_pre = true;
  }
  const auto core = SplitDots(rest);
  if (core.size() != 3) {
    return fail(Status::InvalidArgument("expected MAJOR.MINOR.PATCH"));
  }
  SemVer v;
  Status st = ParseNumber(core[0], "major", &v.major);
  if (st.ok()) st = ParseNumber(core[1], "minor", &v.minor);
  if (st.ok()) st = ParseNumber(core[2], "patch", &v.patch);
  if (!st.ok()) return fail(st);
  if (has_pre) {
    for (std::string_view id : SplitDots(pre)) {
      if (id.empty()) return fail(Status::InvalidArgument("empty prerelease identifier"));
      for (char c : id) {
        if (!IsIdentChar(c)) {
          return fail(
              Status::InvalidArgument("invalid character in prerelease \"", pre, "\""));
        }
      }
      if (AllDigits(id) && id.size() > 1 && id[0] == '0') {
        return fail(Status::InvalidArgument("prerelease identifier \"", id,
                                            "\" has a leading zero"));
      }
      v.prerelease.emplace_back(id);
    }
  }
  v.build = std::string(build);
  return v;
}

int CompareSemVer(const SemVer& a, const SemVer& b) {
  if (a.major != b.major) return a.major < b.major ? -1 : 1;
  if (a.minor != b.minor) return a.minor < b.minor ? -1 : 1;
  if (a.patch != b.patch) return a.patch < b.patch ? -1 : 1;
  // A version without prerelease ranks above any prerelease of it.
  if (a.prerelease.empty() != b.prerelease.empty()) return a.prerelease.empty() ? 1 : -1;
  const std::size_t n = std::min(a.prerelease.size(), b.prerelease.size());
  for (std::size_t i = 0; i < n; ++i) {
    const std::string& x = a.prerelease[i];
    const std::string& y = b.prerelease[i];
    const bool xn = AllDigits(x);
    const bool yn = AllDigits(y);
    int c;
    if (xn && yn) {
      c = CompareNumeric(x, y);
    } else if (xn != yn) {
      c = xn ? -1 : 1;  // numeric identifiers rank below alphanumeric ones
    } else {
      c = x.compare(y) < 0 ? -1 : (x == y ? 0 : 1);  // ASCII order
    }
    if (c != 0) return c;
  }
  if (a.prerelease.size() != b.prerelease.size()) {
    return a.prerelease.size() < b.prerelease.size() ? -1 : 1;
  }
  return 0;  // build metadata does not take part in precedence
}

Status CheckSedpackVersion(std::string_view dataset_version, std::string_view reader_version) {
  auto dataset = ParseSemVer(dataset_version);
  if (!dataset.ok()) {
    return dataset.status().WithPrefix("metadata.sedpack_version ");
  }
  auto reader = ParseSemVer(reader_version);
  if (!reader.ok()) {
    return reader.status().WithPrefix("reader version ");
  }
  if (CompareSemVer(*dataset, *reader) > 0) {
    return Status::InvalidArgument("dataset was written by sedpack ", dataset_version,
                                   ", newer than ", reader_version,
                                   " that this reader implements");
  }
  return Status::OK();
}

}  // namespace sedpack
