// SPDX-License-Identifier: Apache-2.0
// Replaces the global (non-aligned) allocation functions of the test binary to
// record the largest single request, so the decompression-bomb tests can check
// that no buffer anywhere near the bomb's size was ever requested.
#include <atomic>
#include <cstdlib>
#include <new>

#include "codecs_test_util.h"

namespace {

std::atomic<std::size_t> g_peak{0};

void Record(std::size_t n) {
  std::size_t cur = g_peak.load(std::memory_order_relaxed);
  while (n > cur && !g_peak.compare_exchange_weak(cur, n, std::memory_order_relaxed)) {
  }
}

void* Allocate(std::size_t n) {
  Record(n);
  void* p = std::malloc(n == 0 ? 1 : n);
  if (p == nullptr) throw std::bad_alloc();
  return p;
}

void* AllocateNoThrow(std::size_t n) noexcept {
  Record(n);
  return std::malloc(n == 0 ? 1 : n);
}

}  // namespace

namespace sedpack::testing {
void ResetAllocPeak() { g_peak.store(0); }
std::size_t AllocPeak() { return g_peak.load(); }
}  // namespace sedpack::testing

void* operator new(std::size_t n) { return Allocate(n); }
void* operator new[](std::size_t n) { return Allocate(n); }
void* operator new(std::size_t n, const std::nothrow_t&) noexcept { return AllocateNoThrow(n); }
void* operator new[](std::size_t n, const std::nothrow_t&) noexcept { return AllocateNoThrow(n); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }
