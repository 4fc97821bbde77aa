// SPDX-License-Identifier: Apache-2.0
#include "sedpack/cancel.h"

#include <atomic>
#include <csignal>
#include <string>

namespace sedpack {
namespace {

// Bit 31 marks "requested" so that a request with signal number 0 is visible;
// the low bits hold the signal number. A lock-free int is async-signal-safe.
constexpr int kRequested = 1 << 30;
std::atomic<int> g_cancel{0};
static_assert(std::atomic<int>::is_always_lock_free);

}  // namespace

void RequestCancellation(int signal_number) noexcept {
  int expected = 0;
  g_cancel.compare_exchange_strong(expected, kRequested | (signal_number & (kRequested - 1)),
                                   std::memory_order_relaxed);
}

bool CancellationRequested() noexcept { return g_cancel.load(std::memory_order_relaxed) != 0; }

int CancellationSignal() noexcept { return g_cancel.load(std::memory_order_relaxed) & (kRequested - 1); }

void ResetCancellation() noexcept { g_cancel.store(0, std::memory_order_relaxed); }

Status CheckCancelled() {
  if (!CancellationRequested()) return Status::OK();
  const int sig = CancellationSignal();
  std::string why = "interrupted";
  if (sig == SIGINT) {
    why += " (SIGINT)";
  } else if (sig == SIGTERM) {
    why += " (SIGTERM)";
  } else if (sig != 0) {
    why += " (signal " + std::to_string(sig) + ")";
  }
  return Status(StatusCode::kCancelled, why);
}

}  // namespace sedpack
