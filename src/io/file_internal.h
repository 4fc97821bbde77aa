// SPDX-License-Identifier: Apache-2.0
#pragma once

namespace sedpack::io_internal {

/// Make OpenBeneath take its fallback (canonical paths compared with realpath)
/// even where openat2 works, so that tests exercise the fallback on every
/// machine, not only on kernels or sandboxes without openat2.
void SetOpenBeneathFallbackForTesting(bool on);

}  // namespace sedpack::io_internal
