// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "sedpack/status.h"

namespace sedpack {

/// Read a whole file. NotFound if missing; ResourceExhausted if larger than
/// `max_bytes` (checked before allocating); IOError otherwise. Messages name the path.
Result<std::vector<std::byte>> ReadFileBytes(const std::string& path,
                                             std::uint64_t max_bytes = (1ULL << 40));
/// Read a whole text file (same errors as ReadFileBytes).
Result<std::string> ReadFileText(const std::string& path, std::uint64_t max_bytes = (1ULL << 30));

/// Options for WriteFileAtomic.
struct AtomicWriteOptions {
  /// fsync the file (and its directory after the rename) for durability.
  bool sync = false;
  /// Fail with AlreadyExists instead of replacing an existing file.
  bool no_replace = false;
};

/// Write `data` to `path` so that the file appears complete or not at all: the bytes
/// go to a temporary file in the same folder named like the reference's
/// ("update_<time>_<32hex>_of_<name>"), then it is renamed over `path`. The temporary
/// file is removed on any failure. Creates missing parent folders.
Status WriteFileAtomic(const std::string& path, std::span<const std::byte> data,
                       const AtomicWriteOptions& options = {});
Status WriteFileAtomic(const std::string& path, std::string_view text,
                       const AtomicWriteOptions& options = {});

/// mkdir -p; IOError naming the path.
Status CreateDirectories(const std::string& path);
bool PathExists(const std::string& path);
/// Size of a regular file; NotFound / IOError.
Result<std::uint64_t> FileSize(const std::string& path);
/// Join a root folder and a relative path with '/'.
std::string JoinRoot(const std::string& root, std::string_view relative);

}  // namespace sedpack
