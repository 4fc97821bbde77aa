// SPDX-License-Identifier: Apache-2.0
// CheckReportToJson: the `verify --json` document.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "sedpack/check/report.h"

namespace sedpack {
namespace {

CheckReport ReportWithProblems() {
  CheckReport r;
  r.files_checked = 7;
  r.bytes_checked = 4096;
  r.shards_checked = 5;
  r.examples_checked = 40;
  CheckProblem mismatch;
  mismatch.kind = CheckProblem::Kind::kHashMismatch;
  mismatch.path = "train/a/b.fb";
  mismatch.algorithm = "sha256";
  mismatch.expected = "00ff";
  mismatch.found = "ff00";
  mismatch.message = "hash checksum mismatch (sha256): expected 00ff, found ff00";
  CheckProblem orphan;
  orphan.kind = CheckProblem::Kind::kOrphan;
  orphan.path = "train/dead/x.fb";
  orphan.message = "file not listed by any metadata";
  r.problems = {mismatch, orphan};
  return r;
}

TEST(CheckReportToJsonTest, ProblemsAndTotals) {
  const std::string text = CheckReportToJson(ReportWithProblems(), "/data/ds", 1.5);
  ASSERT_FALSE(text.empty());
  EXPECT_EQ(text.back(), '\n');
  const nlohmann::json j = nlohmann::json::parse(text);
  EXPECT_EQ(j["dataset"], "/data/ds");
  EXPECT_EQ(j["ok"], false);
  EXPECT_EQ(j["errors"], 1);
  EXPECT_EQ(j["warnings"], 1);
  EXPECT_EQ(j["files_checked"], 7);
  EXPECT_EQ(j["bytes_checked"], 4096);
  EXPECT_EQ(j["shards_checked"], 5);
  EXPECT_EQ(j["examples_checked"], 40);
  EXPECT_EQ(j["seconds"], 1.5);
  ASSERT_EQ(j["problems"].size(), 2u);
  const auto& m = j["problems"][0];
  EXPECT_EQ(m["severity"], "error");
  EXPECT_EQ(m["kind"], "hash_mismatch");
  EXPECT_EQ(m["path"], "train/a/b.fb");
  EXPECT_EQ(m["algorithm"], "sha256");
  EXPECT_EQ(m["expected"], "00ff");
  EXPECT_EQ(m["found"], "ff00");
  EXPECT_EQ(m["message"], "hash checksum mismatch (sha256): expected 00ff, found ff00");
  const auto& o = j["problems"][1];
  EXPECT_EQ(o["severity"], "warning");
  EXPECT_EQ(o["kind"], "orphan");
  // Hash fields only where there are hashes.
  EXPECT_FALSE(o.contains("algorithm"));
  EXPECT_FALSE(o.contains("expected"));
  EXPECT_FALSE(o.contains("found"));
  EXPECT_EQ(j.size(), 10u);
}

// The exact text: tools (and `sedpack verify --json`) rely on the layout.
TEST(CheckReportToJsonTest, CleanReportText) {
  CheckReport r;
  r.files_checked = 2;
  r.bytes_checked = 10;
  EXPECT_EQ(CheckReportToJson(r, "ds", 0.25),
            "{\n"
            "  \"bytes_checked\": 10,\n"
            "  \"dataset\": \"ds\",\n"
            "  \"errors\": 0,\n"
            "  \"examples_checked\": 0,\n"
            "  \"files_checked\": 2,\n"
            "  \"ok\": true,\n"
            "  \"problems\": [],\n"
            "  \"seconds\": 0.25,\n"
            "  \"shards_checked\": 0,\n"
            "  \"warnings\": 0\n"
            "}\n");
}

// Paths need not be UTF-8; the document stays valid JSON instead of failing.
TEST(CheckReportToJsonTest, InvalidUtf8IsReplaced) {
  CheckReport r;
  CheckProblem p;
  p.kind = CheckProblem::Kind::kMissingFile;
  p.path = std::string("train/\xff\xfe.fb");
  p.message = "cannot open";
  r.problems = {p};
  const nlohmann::json j = nlohmann::json::parse(CheckReportToJson(r, "ds", 0));
  EXPECT_EQ(j["problems"][0]["path"], "train/\xEF\xBF\xBD\xEF\xBF\xBD.fb");
  EXPECT_EQ(j["ok"], false);
}

}  // namespace
}  // namespace sedpack
