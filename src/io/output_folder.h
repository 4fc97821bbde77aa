// SPDX-License-Identifier: Apache-2.0
// The output folder of a job that creates a dataset: whether it was there
// before, and how to put it back when the job fails or is interrupted.
// Project-private.
#pragma once

#include <filesystem>
#include <string>
#include <system_error>

namespace sedpack::io_internal {

/// True if `path` exists (as anything) before the job starts.
inline bool OutputExists(const std::string& path) {
  std::error_code ec;
  return std::filesystem::symlink_status(path, ec).type() != std::filesystem::file_type::not_found;
}

/// Put a job's output folder back the way it was before the job: removed if the
/// job created it (`existed` false), emptied if it was an empty folder. Call only
/// for a folder the job checked was absent or empty before it wrote anything.
inline void RestoreOutputFolder(const std::string& path, bool existed) {
  std::error_code ec;
  if (!existed) {
    std::filesystem::remove_all(path, ec);
    return;
  }
  for (const auto& e : std::filesystem::directory_iterator(path, ec)) {
    std::error_code ec2;
    std::filesystem::remove_all(e.path(), ec2);
  }
}

}  // namespace sedpack::io_internal
