// SPDX-License-Identifier: Apache-2.0
// Files the user names for output that are not datasets: a JSON report, a pack.
// The path is the user's, so it is honoured as a shell redirection would be,
// with one difference: a regular file is replaced atomically.
//
//   "-"                          standard output (file descriptor 1, not closed)
//   a symbolic link, a FIFO,     written through (opened for writing, following
//   a character or block device  the link, truncated where that means anything);
//                                never replaced, so /dev/stdout, /dev/null, a
//                                named pipe or a link to a shared file keep working;
//                                one that leads to the regular file that already is
//                                standard output or error (/dev/stdout of
//                                `cmd > file`) writes to that descriptor, at its
//                                position, instead of truncating the file under it
//   a regular file or a new path written to a temporary file beside it
//                                ("update_*_of_<name>", see WriteFileAtomic),
//                                fsync'ed, then renamed over the path: a crash
//                                leaves the old file or the new one, never half
//   a folder                     InvalidArgument "<path> is a folder ..."
//   a missing parent folder      NotFound "no such folder: <parent> (for <path>)"
//                                ("not a folder: ..." for a file in its place);
//                                folders are never created for it
//   anything else (a socket)     InvalidArgument naming the path
//
// Failures to write, fsync or close (ENOSPC, EPIPE, /dev/full, ...) are IOError
// naming the path. A write to a pipe whose reader is gone gives EPIPE, not a
// SIGPIPE: the signal is blocked in the writing thread while it writes.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "sedpack/status.h"

namespace sedpack {

/// Options for UserOutput / WriteUserOutput / CheckUserOutput.
struct UserOutputOptions {
  /// false: an existing regular file is AlreadyExists instead of being replaced,
  /// also when a symbolic link leads to it (for outputs that must be new, like a
  /// pack). Links to nothing yet, FIFOs and devices are still written through.
  bool replace_existing = true;
  /// fsync a regular file before it is renamed (and its folder after).
  bool sync = true;
};

/// Check `path` as an output path without writing or opening it (a FIFO is not
/// opened, so this never blocks): the errors UserOutput::Open would give for a
/// folder, a missing parent folder, a socket or (with !replace_existing) an
/// existing file. For commands that do long work before they write.
Status CheckUserOutput(const std::string& path, const UserOutputOptions& options = {});

/// An output file being written under the rules above. Not copyable; moving
/// is fine. Destroying it before Commit() abandons the output: a temporary file
/// is removed and a regular file at the path is left as it was (bytes already
/// written through a link, FIFO or device stay written).
class UserOutput {
 public:
  /// Open `path` for writing. Opening a FIFO waits for a reader, as a shell
  /// redirection does.
  static Result<UserOutput> Open(const std::string& path, const UserOutputOptions& options = {});

  UserOutput(UserOutput&& other) noexcept;
  UserOutput& operator=(UserOutput&& other) noexcept;
  UserOutput(const UserOutput&) = delete;
  UserOutput& operator=(const UserOutput&) = delete;
  ~UserOutput();

  /// Write all of `data`; IOError naming path() on failure.
  Status Write(const void* data, std::size_t size);
  Status Write(std::string_view text) { return Write(text.data(), text.size()); }

  /// Finish: fsync and rename a temporary file into place, or close the file
  /// written through (standard output is flushed, not closed). Errors of
  /// fsync/close/rename are IOError naming path(). Once only.
  Status Commit();

  /// The descriptor to write to (for callers that copy with the kernel, e.g.
  /// copy_file_range; they must report their errors with path()).
  int fd() const { return fd_; }
  /// The user's path, for messages ("-" is "standard output").
  const std::string& path() const { return display_; }
  /// True if the bytes go to a temporary file renamed over the path on Commit.
  bool atomic() const { return !temp_.empty(); }

 private:
  UserOutput() = default;
  void Abandon();

  std::string path_;     // as given
  std::string display_;  // for messages
  std::string temp_;     // the temporary file, atomic writes only
  int fd_ = -1;
  bool owns_fd_ = false;  // false for standard output
  bool regular_ = false;  // the descriptor is a regular file (fsync; no SIGPIPE)
  bool sync_ = true;
  bool done_ = false;
};

/// Write `bytes` to `path` under the rules above (Open, Write, Commit).
Status WriteUserOutput(const std::string& path, std::string_view bytes,
                       const UserOutputOptions& options = {});

}  // namespace sedpack
