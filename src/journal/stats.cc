// SPDX-License-Identifier: Apache-2.0
#include "journal/stats_internal.h"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace sedpack::journal_internal {
namespace {

struct Stats {
  std::atomic<std::uint64_t> records{0}, bytes{0}, syncs{0}, nanoseconds{0}, background{0};
  std::string path;
  bool enabled = false;

  Stats() {
    if (const char* p = std::getenv("SEDPACK_BENCH_JOURNAL_STATS"); p != nullptr && *p != '\0') {
      path = p;
      enabled = true;
    }
  }
  // At the process's exit: one line, one write(2) on an O_APPEND file, so that
  // the lines of the ranks of a job never interleave.
  ~Stats() {
    if (!enabled || (records.load() == 0 && nanoseconds.load() == 0 && background.load() == 0)) return;
    char line[160];
    const int n = std::snprintf(line, sizeof line, "journal\t%llu\t%llu\t%llu\t%.6f\t%.6f\n",
                                static_cast<unsigned long long>(records.load()),
                                static_cast<unsigned long long>(bytes.load()),
                                static_cast<unsigned long long>(syncs.load()), nanoseconds.load() * 1e-9,
                                background.load() * 1e-9);
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0) return;
    (void)!::write(fd, line, static_cast<std::size_t>(n));
    ::close(fd);
  }
};

Stats& TheStats() {
  static Stats stats;
  return stats;
}

}  // namespace

bool JournalStatsEnabled() {
  static const bool enabled = TheStats().enabled;
  return enabled;
}

namespace {
thread_local bool t_timing = false;
thread_local bool t_background = false;
}  // namespace

void MarkJournalBackgroundThread() { t_background = true; }

bool JournalTimer::Outermost() {
  if (t_timing) return false;
  t_timing = true;
  return true;
}

JournalTimer::~JournalTimer() {
  if (!active_) return;
  t_timing = false;
  const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start_);
  (t_background ? TheStats().background : TheStats().nanoseconds)
      .fetch_add(static_cast<std::uint64_t>(ns.count()), std::memory_order_relaxed);
}

void CountJournalRecord(std::size_t bytes) {
  if (!JournalStatsEnabled()) return;
  TheStats().records.fetch_add(1, std::memory_order_relaxed);
  TheStats().bytes.fetch_add(bytes, std::memory_order_relaxed);
}

void CountJournalSync() {
  if (JournalStatsEnabled()) TheStats().syncs.fetch_add(1, std::memory_order_relaxed);
}

}  // namespace sedpack::journal_internal
