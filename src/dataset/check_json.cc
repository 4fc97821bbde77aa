// SPDX-License-Identifier: Apache-2.0
#include "sedpack/dataset/check_json.h"

#include <nlohmann/json.hpp>

namespace sedpack {

std::string CheckReportToJson(const CheckReport& r, const std::string& dataset, double seconds) {
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
  const nlohmann::json doc = {{"dataset", dataset},
                              {"ok", r.ok()},
                              {"errors", r.error_count()},
                              {"warnings", r.problems.size() - r.error_count()},
                              {"files_checked", r.files_checked},
                              {"bytes_checked", r.bytes_checked},
                              {"shards_checked", r.shards_checked},
                              {"examples_checked", r.examples_checked},
                              {"seconds", seconds},
                              {"problems", std::move(problems)}};
  // Paths come from the file system and metadata and need not be UTF-8; the
  // default handler would throw on them.
  return doc.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

}  // namespace sedpack
