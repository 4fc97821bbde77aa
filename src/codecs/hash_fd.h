// SPDX-License-Identifier: Apache-2.0
// Hashing an already open file, for the dataset module, which opens shard files
// beneath the root itself. Project-private (src/ include directory).
#pragma once

#include <span>
#include <string>
#include <vector>

#include "sedpack/io/file_system.h"
#include "sedpack/status.h"
#include "sedpack/types.h"

namespace sedpack {

/// Hex digests of what is left to read of the open file `fd` (not closed);
/// `path` is for messages; `fs` is the FileSystem `fd` was opened through
/// (nullptr: CurrentFileSystem()).
Result<std::vector<std::string>> HashFd(std::span<const HashAlgorithm> algorithms, int fd,
                                        const std::string& path, FileSystem* fs = nullptr);

}  // namespace sedpack
