// SPDX-License-Identifier: Apache-2.0
// The job journal's records (journal/journal_internal.h): what is appended is
// read back in order; a torn or damaged record ends the journal there; a
// damaged header is an error. The queue that appends on a thread of its own
// (journal/entries_internal.h) keeps every worker's entries in order, and
// appends an entry pushed alone without being woken for it.
#include "journal/journal_internal.h"

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "journal/entries_internal.h"

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

TEST(JournalQueueTest, EveryWorkersEntriesAreAppendedInTheirOrder) {
  TempDir dir;
  const std::string rel = "q.journal";
  auto w = JournalWriter::Create(dir.path(), rel, kParams, std::vector<JournalEntry>{}, nullptr);
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  constexpr int kWorkers = 3, kEach = 200;
  {
    JournalQueue queue(w->get(), 4);  // full often: the workers wait for room
    std::vector<std::thread> workers;
    for (int t = 0; t < kWorkers; ++t) {
      workers.emplace_back([&queue, t] {
        for (int i = 0; i < kEach; ++i) queue.Push({"w" + std::to_string(t), std::to_string(i)});
      });
    }
    for (std::thread& t : workers) t.join();
    ASSERT_TRUE(queue.Finish().ok());
  }
  auto r = ReadJournal(dir.path(), rel, nullptr);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->entries.size(), static_cast<std::size_t>(kWorkers * kEach));
  std::vector<int> next(kWorkers, 0);
  for (const JournalEntry& e : r->entries) {
    const int t = e.kind[1] - '0';
    ASSERT_TRUE(t >= 0 && t < kWorkers) << e.kind;
    EXPECT_EQ(e.data, std::to_string(next[t]++)) << e.kind;
  }
}

// One entry, far below the half of the queue that wakes its thread: appended
// all the same, by the thread's own periodic wake-up (a queue that waited to
// be woken would hold it until Finish).
TEST(JournalQueueTest, AnEntryPushedAloneIsAppendedWithoutFinish) {
  TempDir dir;
  const std::string rel = "q1.journal";
  auto w = JournalWriter::Create(dir.path(), rel, kParams, std::vector<JournalEntry>{}, nullptr);
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  JournalQueue queue(w->get(), 64);
  // The second entry comes once the first is in the file: the queue's thread
  // has emptied the queue and waits again (the first may have been pushed
  // before it ever waited).
  std::size_t seen = 0;
  for (std::size_t want : {1u, 2u}) {
    queue.Push({"rows", std::to_string(want)});
    for (int tries = 0; tries < 1000 && seen < want; ++tries) {  // up to 10 s on a loaded machine
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
      auto r = ReadJournal(dir.path(), rel, nullptr);
      ASSERT_TRUE(r.ok()) << r.status().ToString();
      seen = r->entries.size();
    }
    ASSERT_EQ(seen, want);
  }
  EXPECT_TRUE(queue.Finish().ok());
}

// An appended entry's room comes back (Spare) for the next entry to be
// encoded into, empty; entries encoded into it are appended whole.
TEST(JournalQueueTest, AnAppendedEntrysRoomIsOfferedAgainEmpty) {
  TempDir dir;
  const std::string rel = "q2.journal";
  auto w = JournalWriter::Create(dir.path(), rel, kParams, std::vector<JournalEntry>{}, nullptr);
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  JournalQueue queue(w->get(), 4);
  EXPECT_EQ(queue.Spare().capacity(), std::string().capacity());  // nothing appended yet
  const std::string big(1 << 20, 'a');
  queue.Push({"rows", big});
  std::string spare;
  for (int tries = 0; tries < 1000 && spare.capacity() < big.size(); ++tries) {  // up to 10 s
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    spare = queue.Spare();
  }
  ASSERT_GE(spare.capacity(), big.size());
  EXPECT_TRUE(spare.empty());
  spare += "b";
  queue.Push({"rows", std::move(spare)});
  ASSERT_TRUE(queue.Finish().ok());
  auto r = ReadJournal(dir.path(), rel, nullptr);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->entries.size(), 2u);
  EXPECT_EQ(r->entries[0].data, big);
  EXPECT_EQ(r->entries[1].data, "b");
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
