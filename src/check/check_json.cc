// SPDX-License-Identifier: Apache-2.0
#include "sedpack/check/report.h"

#include <nlohmann/json.hpp>

namespace sedpack {

std::string CheckReportToJson(const CheckReport& r, const std::string& dataset, double seconds,
                              std::string_view schema) {
  nlohmann::json problems = nlohmann::json::array();
  for (const CheckProblem& p : r.problems) {
    nlohmann::json j = {{"severity", p.warning() ? "warning" : "error"},
                        {"kind", std::string(CheckProblemKindName(p.kind))},
                        {"path", p.path},
                        {"message", p.message}};
    if (!p.algorithm.empty()) j["algorithm"] = p.algorithm;
    if (!p.expected.empty()) j["expected"] = p.expected;
    if (!p.found.empty()) j["found"] = p.found;
    problems.push_back(std::move(j));
  }
  nlohmann::json doc = {{"dataset", dataset},
                        {"ok", r.ok()},
                        {"errors", r.error_count()},
                        {"warnings", r.problems.size() - r.error_count()},
                        {"files_checked", r.files_checked},
                        {"bytes_checked", r.bytes_checked},
                        {"shards_checked", r.shards_checked},
                        {"examples_checked", r.examples_checked},
                        {"seconds", seconds},
                        {"problems", std::move(problems)}};
  if (!schema.empty()) doc["schema"] = std::string(schema);
  // Paths come from the file system and metadata and need not be UTF-8; the
  // default handler would throw on them.
  return doc.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

std::string CheckProblemsToText(const CheckReport& report) {
  std::string text;
  for (const CheckProblem& p : report.problems) {
    // Messages often start with the path already; print it once.
    std::string_view message = p.message;
    if (!p.path.empty() && message.starts_with(p.path + ": ")) message.remove_prefix(p.path.size() + 2);
    text += p.warning() ? "WARNING " : "ERROR ";
    text += CheckProblemKindName(p.kind);
    text += " ";
    text += p.path.empty() ? "." : p.path;
    text += ": ";
    text += message;
    if (!p.algorithm.empty() && p.message.find(p.found) == std::string::npos) {
      text += " (" + p.algorithm + ": expected " + p.expected + ", found " + p.found + ")";
    }
    text += "\n";
  }
  return text;
}

}  // namespace sedpack
