// SPDX-License-Identifier: Apache-2.0
// The output folder of a job that creates a dataset: whether it was there
// before, and how to put it back when the job fails or is interrupted.
// Project-private.
#pragma once

#include <filesystem>
#include <string>
#include <system_error>

#include "sedpack/io/file.h"

namespace sedpack::io_internal {

/// True if `path` exists (as anything) before the job starts.
inline bool OutputExists(const std::string& path) {
  std::error_code ec;
  return std::filesystem::symlink_status(path, ec).type() != std::filesystem::file_type::not_found;
}

/// Put a job's output folder back the way it was before the job: removed if the
/// job created it (`existed` false), emptied if it was an empty folder. Call only
/// for a folder the job checked was absent or empty before it wrote anything.
/// Best effort, through the FileSystem (RemoveTree): what cannot be removed stays.
inline void RestoreOutputFolder(const std::string& path, bool existed) {
  if (!existed) {
    (void)RemoveTree(path);
    return;
  }
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(path, ec)) (void)RemoveTree(e.path().string());
}

}  // namespace sedpack::io_internal
