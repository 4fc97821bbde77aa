// SPDX-License-Identifier: Apache-2.0
// What journaling costs one process, measured from inside: the time spent
// creating, appending to, syncing and removing job journals, and hashing the
// exported ranges they record. bench/journal_overhead.sh sets
//   SEDPACK_BENCH_JOURNAL_STATS=FILE
// and every process that journaled appends, at its exit, one line
//   "journal<TAB>records<TAB>bytes<TAB>syncs<TAB>seconds<TAB>background<TAB>cpu<TAB>background cpu\n"
// (seconds: wall time in the journal code on the job's own threads, summed
// over them: the journal's cost on the job's way; background: the same on the
// journal's own threads, which the job does not wait for unless it waits in a
// timed call, e.g. for room in a full queue; cpu and background cpu: the CPU
// time, user and system, of those same calls: what the journal takes from
// the machine, without the time a thread in it waited or was off its CPU, which
// the wall figures count on a loaded machine). A wall-time
// comparison of a journaled with an unjournaled run of seconds is dominated by
// the disk's writeback on a shared machine; this figure is not.
// Without the variable every measure is one relaxed atomic load.
// Project-private (src/journal), not installed.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>

namespace sedpack::journal_internal {

/// True when SEDPACK_BENCH_JOURNAL_STATS is set (read once).
bool JournalStatsEnabled();

/// Adds the wall time of its scope to the process's journal time; a timer
/// inside another one's scope on the same thread adds nothing (its time is counted once).
class JournalTimer {
 public:
  JournalTimer() : active_(JournalStatsEnabled() && Outermost()) {
    if (active_) {
      // The CPU clock is a system call (about 2 us here, and a point where the
      // thread may be switched out): read outside the wall-time window.
      cpu_start_ = ThreadCpuNanoseconds();
      start_ = std::chrono::steady_clock::now();
    }
  }
  ~JournalTimer();
  JournalTimer(const JournalTimer&) = delete;
  JournalTimer& operator=(const JournalTimer&) = delete;

 private:
  friend class JournalComputeTimer;
  static bool Outermost();  // and marks this thread as inside a timer
  static std::uint64_t ThreadCpuNanoseconds();
  bool active_;
  std::chrono::steady_clock::time_point start_{};
  std::uint64_t cpu_start_ = 0;
};

/// A JournalTimer for pure computation (hashing what a journal records, in
/// pieces of a few hundred kB): its wall time, from the monotonic clock alone
/// (tens of ns), counts as its CPU time too. The thread CPU clock is a system
/// call of about 2 us here: per piece hashed it cost as much as the hash, and
/// the measure counted it as the journal's. A thread switched out inside the
/// scope counts against the journal, never for it.
class JournalComputeTimer {
 public:
  JournalComputeTimer() : active_(JournalStatsEnabled() && JournalTimer::Outermost()) {
    if (active_) start_ = std::chrono::steady_clock::now();
  }
  ~JournalComputeTimer();
  JournalComputeTimer(const JournalComputeTimer&) = delete;
  JournalComputeTimer& operator=(const JournalComputeTimer&) = delete;

 private:
  bool active_;
  std::chrono::steady_clock::time_point start_{};
};

/// Marks the calling thread as one of the journal's own (a queue's writer, a
/// hasher): its timers count as background time from then on.
void MarkJournalBackgroundThread();

/// Counts one record of `bytes` written, and one sync.
void CountJournalRecord(std::size_t bytes);
void CountJournalSync();

}  // namespace sedpack::journal_internal
