// SPDX-License-Identifier: Apache-2.0
// A pack: every file of a dataset tree in one file, for file systems that
// dislike many small files. Files are stored as raw bytes (shards are not
// decompressed or re-encoded), so unpacking gives back the tree byte for byte.
//
// Layout (little-endian):
//   "SEDPACK-PACK\0v01"                      16-byte magic
//   file data, each file starting at a multiple of 64 bytes
//   index: u64 count, then per file (sorted by path):
//          u32 path length, path bytes (relative, '/'-separated),
//          u64 offset, u64 size
//   footer: u64 index offset, u64 index size, "SEDPACK-PACK-END" (16 bytes)
// Everything in a pack is untrusted on reading: the footer, index offsets,
// sizes and paths are validated before use.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "sedpack/io/file_system.h"
#include "sedpack/status.h"

namespace sedpack {

/// One file in a pack.
struct PackEntry {
  std::uint64_t offset = 0;
  std::uint64_t size = 0;
};

/// Reads files out of a pack. Thread-safe (positioned reads).
class PackReader {
 public:
  /// Reads through `fs` (nullptr: CurrentFileSystem()), which must outlive it.
  static Result<std::unique_ptr<PackReader>> Open(const std::string& path, FileSystem* fs = nullptr);
  ~PackReader();
  /// True if `path` starts with the pack magic.
  static bool IsPack(const std::string& path, FileSystem* fs = nullptr);

  const std::map<std::string, PackEntry>& entries() const { return entries_; }
  bool Contains(std::string_view rel) const;
  /// Bytes of the file `rel`; NotFound if the pack has no such file;
  /// ResourceExhausted if larger than `max_bytes`.
  Result<std::vector<std::byte>> Read(std::string_view rel, std::uint64_t max_bytes = (1ULL << 40)) const;
  Result<std::uint64_t> Size(std::string_view rel) const;
  const std::string& path() const { return path_; }

 private:
  PackReader() = default;
  std::string path_;
  int fd_ = -1;
  FileSystem* fs_ = nullptr;
  std::map<std::string, PackEntry> entries_;
};

struct PackSummary {
  std::uint64_t files = 0;
  std::uint64_t bytes = 0;
};

/// Pack every regular file under `root` into `out`, a path the user names for
/// output (as for the CLI's JSON reports), which must be new: a new file is written
/// to a temporary name, fsync'ed and renamed, so it appears complete or not at
/// all; "-", a FIFO, a device or a symbolic link to nothing yet is written
/// through as one sequential stream; an existing file (also through a link) is
/// AlreadyExists. Symbolic links in the tree are refused (a pack holds one tree).
Result<PackSummary> PackTree(const std::string& root, const std::string& out);

/// Write every file of the pack into the new folder `out` (must not exist or be
/// empty), each file atomically. On failure the folder is removed.
Result<PackSummary> UnpackTree(const std::string& pack, const std::string& out);

}  // namespace sedpack
