// SPDX-License-Identifier: Apache-2.0
#include "journal/stats_internal.h"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <string>

namespace sedpack::journal_internal {
namespace {

struct Stats {
  std::atomic<std::uint64_t> records{0}, bytes{0}, syncs{0}, nanoseconds{0}, background{0}, cpu{0},
      background_cpu{0};
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
    char line[200];
    const int n = std::snprintf(line, sizeof line, "journal\t%llu\t%llu\t%llu\t%.6f\t%.6f\t%.6f\t%.6f\n",
                                static_cast<unsigned long long>(records.load()),
                                static_cast<unsigned long long>(bytes.load()),
                                static_cast<unsigned long long>(syncs.load()), nanoseconds.load() * 1e-9,
                                background.load() * 1e-9, cpu.load() * 1e-9, background_cpu.load() * 1e-9);
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

std::uint64_t JournalTimer::ThreadCpuNanoseconds() {
  timespec ts{};
  if (::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0) return 0;
  return static_cast<std::uint64_t>(ts.tv_sec) * 1000000000u + static_cast<std::uint64_t>(ts.tv_nsec);
}

JournalTimer::~JournalTimer() {
  if (!active_) return;
  t_timing = false;
  const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start_);
  const std::uint64_t cpu_now = ThreadCpuNanoseconds();
  const std::uint64_t cpu_ns = cpu_now > cpu_start_ ? cpu_now - cpu_start_ : 0;
  Stats& stats = TheStats();
  (t_background ? stats.background : stats.nanoseconds)
      .fetch_add(static_cast<std::uint64_t>(ns.count()), std::memory_order_relaxed);
  (t_background ? stats.background_cpu : stats.cpu).fetch_add(cpu_ns, std::memory_order_relaxed);
}

JournalComputeTimer::~JournalComputeTimer() {
  if (!active_) return;
  t_timing = false;
  const auto ns = static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start_).count());
  Stats& stats = TheStats();
  (t_background ? stats.background : stats.nanoseconds).fetch_add(ns, std::memory_order_relaxed);
  (t_background ? stats.background_cpu : stats.cpu).fetch_add(ns, std::memory_order_relaxed);
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
