// SPDX-License-Identifier: Apache-2.0
// The job journal's records (journal/journal_internal.h): what is appended is
// read back in order; a torn or damaged record ends the journal there; a
// damaged header is an error.
#include "journal/journal_internal.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "support/test_support.h"

namespace sedpack::journal_internal {
namespace {

namespace fs = std::filesystem;
using sedpack::testing::TempDir;

const JobParameters kParams = {{"command", "export-trs"}, {"rows", "100"}};

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}
void Spit(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
}

TEST(JournalTest, EntriesReadBackInOrder) {
  TempDir dir;
  const std::string rel = "out.trs.journal";
  auto w = JournalWriter::Create(dir.path(), rel, kParams, std::vector<JournalEntry>{{"rows", "0-9"}}, nullptr);
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  ASSERT_TRUE((*w)->Append(JournalEntry{"rows", "10-19"}).ok());
  ASSERT_TRUE((*w)->Append(JournalEntry{"rows", std::string("\0\1binary", 8)}).ok());
  auto r = ReadJournal(dir.path(), rel, nullptr);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->parameters, kParams);
  ASSERT_EQ(r->entries.size(), 3u);
  EXPECT_EQ(r->entries[1].data, "10-19");
  EXPECT_EQ(r->entries[2].data, std::string("\0\1binary", 8));
  EXPECT_TRUE(r->units.empty());
  EXPECT_FALSE(r->torn_tail);
  EXPECT_TRUE(DifferingParameter(r->parameters, kParams).empty());
  EXPECT_NE(DifferingParameter(r->parameters, {{"command", "export-trs"}, {"rows", "101"}}).find("rows"),
            std::string::npos);
}

// Every cut of the last record, and every flipped byte in it, loses that
// record and nothing before it.
TEST(JournalTest, DamagedLastRecordIsIgnored) {
  TempDir dir;
  const std::string rel = "j.journal";
  const std::string path = (fs::path(dir.path()) / rel).string();
  {
    auto w = JournalWriter::Create(dir.path(), rel, kParams, std::vector<JournalEntry>{{"rows", "a"}}, nullptr);
    ASSERT_TRUE(w.ok());
  }
  const std::string one = Slurp(path);
  {
    auto w = JournalWriter::Create(dir.path(), rel, kParams, std::vector<JournalEntry>{{"rows", "a"}}, nullptr);
    ASSERT_TRUE(w.ok());
    ASSERT_TRUE((*w)->Append(JournalEntry{"rows", "b"}).ok());
  }
  const std::string two = Slurp(path);
  ASSERT_GT(two.size(), one.size());
  for (std::size_t cut = one.size(); cut < two.size(); ++cut) {
    Spit(path, two.substr(0, cut));
    auto r = ReadJournal(dir.path(), rel, nullptr);
    ASSERT_TRUE(r.ok()) << cut;
    ASSERT_EQ(r->entries.size(), 1u) << cut;
    EXPECT_EQ(r->torn_tail, cut > one.size()) << cut;
  }
  for (std::size_t at = one.size(); at < two.size(); ++at) {
    std::string bad = two;
    bad[at] = static_cast<char>(bad[at] ^ 0x20);
    Spit(path, bad);
    auto r = ReadJournal(dir.path(), rel, nullptr);
    ASSERT_TRUE(r.ok()) << at;
    EXPECT_EQ(r->entries.size(), 1u) << at;
    EXPECT_TRUE(r->torn_tail) << at;
  }
  std::string bad_head = two;
  bad_head[6] = static_cast<char>(bad_head[6] ^ 1);
  Spit(path, bad_head);
  EXPECT_FALSE(ReadJournal(dir.path(), rel, nullptr).ok());
}

TEST(JournalTest, PathMustStayBeneathTheRoot) {
  TempDir dir;
  EXPECT_FALSE(JournalWriter::Create(dir.path(), "../x.journal", kParams, std::vector<JournalEntry>{}, nullptr).ok());
}

}  // namespace
}  // namespace sedpack::journal_internal
