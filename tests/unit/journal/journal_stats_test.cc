// SPDX-License-Identifier: Apache-2.0
// The journal's cost figures (journal/stats_internal.h), as
// bench/journal_overhead.sh reads them: time on the job's threads and time on
// the journal's own threads land in separate columns of the process's line,
// and so do the CPU time of each (a wait counts in the wall columns only).
// The variable is read once per process, so each case runs in a child (and
// this file is a test binary of its own).
#include "journal/stats_internal.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <ctime>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include "support/test_support.h"

namespace sedpack::journal_internal {
namespace {

using sedpack::testing::TempDir;

// Runs `body` in a child process with the stats going to `path`; the child's
// exit writes its line.
template <typename Body>
void InChild(const std::string& path, Body body) {
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::setenv("SEDPACK_BENCH_JOURNAL_STATS", path.c_str(), 1);
    body();
    std::exit(0);  // static destructors run: the line is written
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

struct Line {
  std::string kind;
  unsigned long long records = 0, bytes = 0, syncs = 0;
  double seconds = -1, background = -1, cpu = -1, background_cpu = -1;
};

Line ReadLine(const std::string& path) {
  std::ifstream in(path);
  std::string text;
  std::getline(in, text);
  std::istringstream fields(text);
  Line l;
  fields >> l.kind >> l.records >> l.bytes >> l.syncs >> l.seconds >> l.background >> l.cpu >> l.background_cpu;
  return l;
}

void Spend(std::chrono::milliseconds ms) {
  JournalTimer timer;
  std::this_thread::sleep_for(ms);
}

// Busy on the CPU for `ms` (as measured by this thread's CPU clock) in a timer.
void Burn(std::chrono::milliseconds ms) {
  JournalTimer timer;
  const auto cpu = [] {
    timespec ts{};
    ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return std::chrono::seconds(ts.tv_sec) + std::chrono::nanoseconds(ts.tv_nsec);
  };
  const auto start = cpu();
  volatile std::uint64_t x = 0;
  while (cpu() - start < ms) x = x + 1;
}

// Seconds since `start`, written to `path` (the child's own measure of what
// the timers may at most have counted).
void WriteElapsed(const std::string& path, std::chrono::steady_clock::time_point start) {
  std::ofstream(path) << std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}
double ReadElapsed(const std::string& path) {
  double s = -1;
  std::ifstream(path) >> s;
  return s;
}

TEST(JournalStatsTest, TimeOnTheJournalsOwnThreadIsCountedApart) {
  TempDir dir;
  const std::string path = dir.path() + "/stats.txt", mine = dir.path() + "/mine", theirs = dir.path() + "/theirs";
  InChild(path, [&] {
    CountJournalRecord(100);
    CountJournalSync();
    auto start = std::chrono::steady_clock::now();
    Spend(std::chrono::milliseconds(30));  // the job's thread
    WriteElapsed(mine, start);
    std::thread([&] {
      MarkJournalBackgroundThread();
      const auto begun = std::chrono::steady_clock::now();
      Spend(std::chrono::milliseconds(60));
      WriteElapsed(theirs, begun);
    }).join();
  });
  const Line l = ReadLine(path);
  EXPECT_EQ(l.kind, "journal");
  EXPECT_EQ(l.records, 1u);
  EXPECT_EQ(l.bytes, 100u);
  EXPECT_EQ(l.syncs, 1u);
  EXPECT_GE(l.seconds, 0.030);
  EXPECT_LE(l.seconds, ReadElapsed(mine));  // the background thread's time is not in it
  EXPECT_GE(l.background, 0.060);
  EXPECT_LE(l.background, ReadElapsed(theirs));
}

TEST(JournalStatsTest, CpuTimeIsCountedApartFromWaits) {
  TempDir dir;
  const std::string path = dir.path() + "/stats.txt", mine = dir.path() + "/mine";
  InChild(path, [&] {
    const auto start = std::chrono::steady_clock::now();
    Spend(std::chrono::milliseconds(200));  // a wait: wall time only
    Burn(std::chrono::milliseconds(50));    // on the CPU
    WriteElapsed(mine, start);
    std::thread([] {
      MarkJournalBackgroundThread();
      Burn(std::chrono::milliseconds(30));
    }).join();
  });
  const Line l = ReadLine(path);
  EXPECT_GE(l.seconds, 0.250);
  EXPECT_LE(l.seconds, ReadElapsed(mine));
  // The job's thread: the 50 ms it burned, not the 200 ms it slept.
  EXPECT_GE(l.cpu, 0.050);
  EXPECT_LT(l.cpu, 0.150);
  EXPECT_GE(l.background_cpu, 0.030);
  // Its CPU window holds its wall window and the two clock reads around it.
  EXPECT_LE(l.background_cpu, l.background + 0.002);
}

TEST(JournalStatsTest, ANestedTimerIsCountedOnce) {
  TempDir dir;
  const std::string path = dir.path() + "/stats.txt", mine = dir.path() + "/mine";
  InChild(path, [&] {
    const auto start = std::chrono::steady_clock::now();
    {
      JournalTimer outer;
      Spend(std::chrono::milliseconds(40));
      Spend(std::chrono::milliseconds(40));
    }
    WriteElapsed(mine, start);
  });
  // Counted twice, the inner timers' time would exceed the time that passed.
  const Line l = ReadLine(path);
  EXPECT_GE(l.seconds, 0.080);
  EXPECT_LE(l.seconds, ReadElapsed(mine));
  EXPECT_EQ(l.background, 0.0);
}

TEST(JournalStatsTest, WithoutTheVariableNothingIsWritten) {
  TempDir dir;
  const std::string path = dir.path() + "/stats.txt";
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::unsetenv("SEDPACK_BENCH_JOURNAL_STATS");
    Spend(std::chrono::milliseconds(5));
    std::exit(0);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  EXPECT_FALSE(std::ifstream(path).good());
}

}  // namespace
}  // namespace sedpack::journal_internal
