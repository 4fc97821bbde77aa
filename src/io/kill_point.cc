// SPDX-License-Identifier: Apache-2.0
#include "io/kill_point.h"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <thread>

#include "sedpack/cancel.h"

namespace sedpack {
namespace {

struct KillConfig {
  bool active = false;
  std::int64_t rank = 0;
  std::uint64_t kill_at = 0;  // 0 = never
  std::string kill_what;      // count only the points of this kind ("" = all)
  int signal = SIGKILL;
  std::string log_path;
  std::int64_t journal_delay_ms = 0;
};

std::int64_t EnvInt(const char* name, std::int64_t fallback) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return fallback;
  char* end = nullptr;
  const long long n = std::strtoll(v, &end, 10);
  return (end != nullptr && *end == '\0') ? n : fallback;
}

std::int64_t OwnRank() {
  for (const char* name : {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK"}) {
    const std::int64_t r = EnvInt(name, -1);
    if (r >= 0) return r;
  }
  return 0;
}

const KillConfig& Config() {
  static const KillConfig config = [] {
    KillConfig c;
    const std::int64_t at = EnvInt("SEDPACK_TEST_KILL_AT", 0);
    const std::int64_t rank = EnvInt("SEDPACK_TEST_KILL_RANK", -1);
    c.rank = OwnRank();
    if (at > 0 && (rank < 0 || rank == c.rank)) c.kill_at = static_cast<std::uint64_t>(at);
    if (const char* log = std::getenv("SEDPACK_TEST_STEP_LOG")) c.log_path = log;
    if (const char* what = std::getenv("SEDPACK_TEST_KILL_WHAT")) c.kill_what = what;
    c.signal = static_cast<int>(EnvInt("SEDPACK_TEST_KILL_SIGNAL", SIGKILL));
    c.journal_delay_ms = EnvInt("SEDPACK_TEST_JOURNAL_DELAY_MS", 0);
    c.active = c.kill_at > 0 || !c.log_path.empty() || c.journal_delay_ms > 0;
    return c;
  }();
  return config;
}

std::atomic<std::uint64_t> g_points{0};
std::atomic<std::uint64_t> g_kind_points{0};  // the points of kind kill_what

struct ShardStepConfig {
  std::string notify_path;
  std::uint64_t gate_at = 0;  // 0 = never
  std::int64_t rank = 0;
  bool active = false;
};

const ShardStepConfig& StepConfig() {
  static const ShardStepConfig config = [] {
    ShardStepConfig c;
    if (const char* p = std::getenv("SEDPACK_TEST_SHARD_NOTIFY")) c.notify_path = p;
    const std::int64_t gate = EnvInt("SEDPACK_TEST_SHARD_GATE", 0);
    if (gate > 0) c.gate_at = static_cast<std::uint64_t>(gate);
    c.rank = OwnRank();
    c.active = c.gate_at > 0 || !c.notify_path.empty();
    return c;
  }();
  return config;
}

std::atomic<std::uint64_t> g_shard_steps{0};

void AppendLine(const std::string& path, const std::string& line) {
  // One write(2) per line on an O_APPEND file: lines of concurrent threads and
  // processes never interleave.
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd >= 0) {
    (void)!::write(fd, line.data(), line.size());
    ::close(fd);
  }
}

void ShardStep(std::string_view what) {
  const ShardStepConfig& c = StepConfig();
  if (!c.active) return;
  const std::uint64_t n = g_shard_steps.fetch_add(1, std::memory_order_relaxed) + 1;
  if (!c.notify_path.empty()) {
    std::string line = std::to_string(c.rank) + "\t" + std::to_string(n);
    line.append("\t").append(what).append("\n");
    AppendLine(c.notify_path, line);
  }
  if (c.gate_at == 0 || n < c.gate_at) return;
  // Bounded, so that a test that never signals fails on its own checks instead
  // of hanging the job.
  const auto end = std::chrono::steady_clock::now() + std::chrono::minutes(1);
  while (!CancellationRequested() && std::chrono::steady_clock::now() < end) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

}  // namespace

void KillPoint(std::string_view what, std::string_view path) {
  const KillConfig& c = Config();
  if (!c.active) return;
  const std::uint64_t n = g_points.fetch_add(1, std::memory_order_relaxed) + 1;
  if (!c.log_path.empty()) {
    std::string line = std::to_string(c.rank) + "\t" + std::to_string(n);
    line.append("\t").append(what).append("\t").append(path).append("\n");
    AppendLine(c.log_path, line);
  }
  if (c.kill_what.empty() ? n == c.kill_at
                          : what == c.kill_what && g_kind_points.fetch_add(1, std::memory_order_relaxed) + 1 == c.kill_at) {
    ::raise(c.signal);
  }
  if (c.journal_delay_ms > 0 && what == "journal") {
    std::this_thread::sleep_for(std::chrono::milliseconds(c.journal_delay_ms));
  }
}

void TestShardDelay() {
  static const std::int64_t ms = EnvInt("SEDPACK_TEST_SHARD_DELAY_MS", 0);
  if (ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(ms));
  ShardStep("read");
}

void TestShardWritten() { ShardStep("written"); }

std::optional<std::chrono::milliseconds> TestRecordInterval() {
  static const std::optional<std::chrono::milliseconds> interval = []() -> std::optional<std::chrono::milliseconds> {
    const std::int64_t ms = EnvInt("SEDPACK_TEST_RECORD_MS", -1);
    if (ms < 0) return std::nullopt;
    return std::chrono::milliseconds(ms);
  }();
  return interval;
}

}  // namespace sedpack
