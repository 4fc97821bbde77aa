// SPDX-License-Identifier: Apache-2.0
// The VZEROUPPER that ISA-L's assembly leaves out (isal_internal.h).
#include "codecs/isal_internal.h"

namespace sedpack::codecs_internal {

namespace {

#if defined(__x86_64__)
__attribute__((target("avx"))) void ZeroUpper() { __builtin_ia32_vzeroupper(); }

bool HaveAvx() {
  static const bool have = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx") != 0;
  }();
  return have;
}
#endif

}  // namespace

void AfterIsalCall() {
#if defined(__x86_64__)
  if (HaveAvx()) ZeroUpper();
#endif
}

}  // namespace sedpack::codecs_internal
