// SPDX-License-Identifier: Apache-2.0
#include "generate/half_convert.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <cpuid.h>
#include <immintrin.h>
#define SEDPACK_HALF_X86 1
#endif

namespace sedpack::generate_internal {
namespace {

void FloatToHalfScalar(const float* in, Float16* out, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) out[i] = Float16::FromFloat(in[i]);
}

#ifdef SEDPACK_HALF_X86
// Compiled for F16C only in this function, so the rest of the binary keeps the
// baseline ISA; the caller checks the CPU first. Rounding is fixed to nearest
// even (not MXCSR) to match Float16::FromFloat.
__attribute__((target("avx,f16c"))) void FloatToHalfF16c(const float* in, Float16* out,
                                                         std::size_t n) {
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 v = _mm256_loadu_ps(in + i);
    const __m128i h = _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i), h);
  }
  FloatToHalfScalar(in + i, out + i, n - i);
}

// CPUID rather than __builtin_cpu_supports("f16c"), which clang 14 does not know.
bool HasF16c() {
  static const bool has = [] {
    unsigned a = 0, b = 0, c = 0, d = 0;
    if (!__get_cpuid(1, &a, &b, &c, &d)) return false;
    const bool osxsave = c & (1u << 27), avx = c & (1u << 28), f16c = c & (1u << 29);
    if (!(osxsave && avx && f16c)) return false;
    unsigned lo = 0, hi = 0;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    return (lo & 6u) == 6u;  // the OS saves XMM and YMM state
  }();
  return has;
}
#endif

}  // namespace

static_assert(sizeof(Float16) == 2, "Float16 must be exactly its bits");

void FloatToHalf(const float* in, Float16* out, std::size_t n) {
#ifdef SEDPACK_HALF_X86
  if (HasF16c()) {
    FloatToHalfF16c(in, out, n);
    return;
  }
#endif
  FloatToHalfScalar(in, out, n);
}

bool FloatToHalfIsAccelerated() {
#ifdef SEDPACK_HALF_X86
  return HasF16c();
#else
  return false;
#endif
}

}  // namespace sedpack::generate_internal
