// SPDX-License-Identifier: Apache-2.0
// The output folder of a job that creates a dataset: whether it was there
// before, and how to put it back when the job fails or is interrupted.
// Project-private.
#pragma once

#include <cerrno>
#include <string>
#include <vector>

#include "sedpack/io/file.h"
#include "sedpack/io/file_system.h"

namespace sedpack::io_internal {

/// True if `path` exists (as anything) before the job starts.
inline bool OutputExists(const std::string& path, FileSystem* fs = nullptr) {
  FileStat st;
  return FileSystemOr(fs).Lstat(path.c_str(), &st) == 0 || (errno != ENOENT && errno != ENOTDIR);
}

/// Put a job's output folder back the way it was before the job: removed if the
/// job created it (`existed` false), emptied if it was an empty folder. Call only
/// for a folder the job checked was absent or empty before it wrote anything.
/// Best effort, through the FileSystem (RemoveTree): what cannot be removed stays.
inline void RestoreOutputFolder(const std::string& path, bool existed, FileSystem* fs = nullptr) {
  if (!existed) {
    (void)RemoveTree(path, fs);
    return;
  }
  std::vector<DirEntry> entries;
  if (FileSystemOr(fs).ListDir(path.c_str(), &entries) != 0) return;
  for (const DirEntry& e : entries) (void)RemoveTree(JoinRoot(path, e.name), fs);
}

}  // namespace sedpack::io_internal
