// SPDX-License-Identifier: Apache-2.0
// CRC-64/XZ for the checksums of exported row ranges (compress_internal.h):
// ISA-L's carry-less-multiply folding where the build has ISA-L, liblzma's
// (a required codec library) otherwise. Both compute the same CRC.
#include "codecs/compress_internal.h"

#include "sedpack/config.h"

#ifdef SEDPACK_HAVE_ISAL
#include <isa-l/crc64.h>

#include "codecs/isal_internal.h"
#else
#include <lzma.h>
#endif

namespace sedpack {

std::uint64_t Crc64(std::span<const std::byte> data, std::uint64_t crc) {
  if (data.empty()) return crc;
#ifdef SEDPACK_HAVE_ISAL
  crc = crc64_ecma_refl(crc, reinterpret_cast<const unsigned char*>(data.data()), data.size());
  codecs_internal::AfterIsalCall();
  return crc;
#else
  return lzma_crc64(reinterpret_cast<const std::uint8_t*>(data.data()), data.size(), crc);
#endif
}

}  // namespace sedpack
