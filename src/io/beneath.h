// SPDX-License-Identifier: Apache-2.0
// File-descriptor plumbing under the containment rules of sedpack/io/file.h:
// opening a path beneath a root and reading open files. Shared by the modules
// that open dataset files themselves (dataset, index, io/pack) and the CLI;
// project-private (src/ include directory), not installed.
#pragma once

#include <fcntl.h>

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "sedpack/io/file.h"
#include "sedpack/io/file_system.h"
#include "sedpack/status.h"

namespace sedpack {

/// An open POSIX file descriptor, closed when this object goes away.
class FileDescriptor {
 public:
  FileDescriptor() = default;
  /// `fd` was opened through `fs` (nullptr: CurrentFileSystem()), which closes it.
  explicit FileDescriptor(int fd, FileSystem* fs = nullptr) : fd_(fd), fs_(fs) {}
  ~FileDescriptor() { Reset(); }
  FileDescriptor(FileDescriptor&& other) noexcept : fs_(other.fs_) { fd_ = other.Release(); }
  FileDescriptor& operator=(FileDescriptor&& other) noexcept;
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;

  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  /// Give up ownership: the caller closes the descriptor.
  int Release() {
    const int fd = fd_;
    fd_ = -1;
    return fd;
  }
  void Reset();

 private:
  int fd_ = -1;
  FileSystem* fs_ = nullptr;
};

/// Open `relative`, a path inside the folder `root`, such that resolving it
/// never leaves `root`: an absolute path, a ".." that climbs above `root`, or a
/// symbolic link (at any component) whose target lies outside `root` gives
/// InvalidArgument "<root>/<relative> leads outside the dataset root <root>
/// (...)". Symbolic links that stay inside `root` are followed. `root` itself
/// may be a symbolic link (it is the caller's choice, not the dataset's).
/// `flags` are open(2) flags (O_RDONLY, O_PATH | O_DIRECTORY, ...); O_CLOEXEC
/// is added. NotFound if a component is missing; IOError otherwise.
///
/// Uses openat2(2) with RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS relative to the
/// root folder; where that is refused (old kernels: ENOSYS, seccomp filters:
/// EPERM) and for absolute links that point back inside the root (which
/// RESOLVE_BENEATH refuses), the canonical path (realpath) is compared with the
/// canonical root and the file is then opened by its canonical path.
Result<FileDescriptor> OpenBeneath(const std::string& root, std::string_view relative,
                                   int flags = O_RDONLY, FileSystem* fs = nullptr);

/// A regular file opened beneath a root for reading, with its size.
struct BeneathFile {
  FileDescriptor fd;
  std::uint64_t size = 0;
  std::int64_t mtime_ns = 0;  ///< from the same fstat (a journal records it to see the file change)
  std::string path;  ///< <root>/<relative>, for messages
};
/// OpenBeneath for reading a regular file: IOError "not a regular file: <path>"
/// for anything else (a FIFO is opened without blocking and refused).
Result<BeneathFile> OpenFileBeneath(const std::string& root, std::string_view relative,
                                    FileSystem* fs = nullptr);
/// Fill `out` from `fd` (at `offset` with positioned reads, else from the file
/// position), retrying interrupted and short reads. IOError naming `path` on a
/// read error, or when the file ends first ("shrank while being read").
Status ReadFully(int fd, std::span<std::byte> out, const std::string& path,
                 std::optional<std::uint64_t> offset = std::nullopt, FileSystem* fs = nullptr);
/// Read the whole of an open regular file of `size` bytes (its size at open
/// time). ResourceExhausted if larger than `max_bytes`; `path` is for messages.
Result<std::vector<std::byte>> ReadAllBytes(int fd, std::uint64_t size, const std::string& path,
                                            std::uint64_t max_bytes, FileSystem* fs = nullptr);

}  // namespace sedpack
