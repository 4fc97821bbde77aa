// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstddef>
#include <string>

#include "sedpack/io/file_system.h"
#include "sedpack/status.h"

namespace sedpack::io_internal {

/// The temporary name WriteFileAtomic writes `path` under, in the same folder
/// ("update_<time>_<32hex>_of_<name>"): fresh on every call.
std::string AtomicTempName(const std::string& path);

/// Write all `size` bytes to `fd` through `files` (short writes and EINTR
/// retried); IOError naming `path` otherwise.
Status WriteAll(FileSystem& files, int fd, const std::byte* data, std::size_t size, const std::string& path);

/// Make OpenBeneath take its fallback (canonical paths compared with realpath)
/// even where openat2 works, so that tests exercise the fallback on every
/// machine, not only on kernels or sandboxes without openat2.
void SetOpenBeneathFallbackForTesting(bool on);

}  // namespace sedpack::io_internal
