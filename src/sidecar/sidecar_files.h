// SPDX-License-Identifier: Apache-2.0
// Reading and writing the files in <dataset root>/.sedpack-hpc/ for the modules
// that keep one there (index, maintain, the commit journal in dataset).
// Project-private (src/ include directory), not installed; the public side
// (names, digests) is sidecar/sidecar_internal.h.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>

#include "sidecar/sidecar_internal.h"
#include "sedpack/io/file.h"
#include "sedpack/status.h"

namespace sedpack {

/// SHA-256 of bytes already read (DatasetInfoSha256 of a file in memory).
DatasetInfoDigest Sha256Of(std::span<const std::byte> bytes);

/// Write `<root>/.sedpack-hpc/<name>` atomically (io/file.h WriteFileAtomic),
/// creating the folder if needed. Refused if the sidecar folder is a symbolic
/// link out of the root (io/file.h CheckStaysBeneath).
Status WriteSidecar(const std::string& root, std::string_view name, std::span<const std::byte> data);
/// The same with the bytes produced in pieces (WriteFileAtomicStreamed).
Status WriteSidecarStreamed(const std::string& root, std::string_view name,
                            const std::function<Status(const ByteSink&)>& produce);
/// Read `<root>/.sedpack-hpc/<name>` (io/file.h OpenBeneath: not through a link
/// out of the root). NotFound if it is not there.
Result<std::string> ReadSidecarText(const std::string& root, std::string_view name, std::uint64_t max_bytes);

}  // namespace sedpack
