// SPDX-License-Identifier: Apache-2.0
// What every caller of ISA-L (a build with SEDPACK_HAVE_ISAL) must do after it.
#pragma once

namespace sedpack::codecs_internal {

/// Clears the upper halves of the vector registers (VZEROUPPER) on a CPU with
/// AVX; to be called after each ISA-L function that may take an AVX2 or
/// AVX-512 path (deflate, inflate, the CRCs). ISA-L's hand-written assembly
/// (Debian's 2.30 has no VZEROUPPER at all) returns with them dirty, and then
/// every SSE instruction the caller runs pays for it until the next
/// VZEROUPPER: after crc64_ecma_refl_by16_10, export-trs's shard accessors and
/// memcpy took 45 ms more over 1.5 GB, more than the 25 ms of the CRC itself.
void AfterIsalCall();

}  // namespace sedpack::codecs_internal
