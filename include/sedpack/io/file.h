// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <fcntl.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "sedpack/status.h"

namespace sedpack {

/// An open POSIX file descriptor, closed when this object goes away.
class FileDescriptor {
 public:
  FileDescriptor() = default;
  explicit FileDescriptor(int fd) : fd_(fd) {}
  ~FileDescriptor() { Reset(); }
  FileDescriptor(FileDescriptor&& other) noexcept : fd_(other.Release()) {}
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
};

// ---- Containment ---------------------------------------------------------------
// Paths inside a dataset come from its metadata, which is untrusted input, and
// the tree itself may hold symbolic links. Every file of a dataset is opened
// through OpenBeneath, so that nothing a dataset contains makes us read a file
// outside its root, and every writer checks its target folder with
// CheckStaysBeneath before it writes or deletes.

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
                                   int flags = O_RDONLY);

/// A regular file opened beneath a root for reading, with its size.
struct BeneathFile {
  FileDescriptor fd;
  std::uint64_t size = 0;
  std::string path;  ///< <root>/<relative>, for messages
};
/// OpenBeneath for reading a regular file: IOError "not a regular file: <path>"
/// for anything else (a FIFO is opened without blocking and refused).
Result<BeneathFile> OpenFileBeneath(const std::string& root, std::string_view relative);
/// ReadFileBytes / ReadFileText / FileSize of `<root>/<relative>` through OpenFileBeneath.
Result<std::vector<std::byte>> ReadFileBytesBeneath(const std::string& root, std::string_view relative,
                                                    std::uint64_t max_bytes = (1ULL << 40));
Result<std::string> ReadFileTextBeneath(const std::string& root, std::string_view relative,
                                        std::uint64_t max_bytes = (1ULL << 30));
Result<std::uint64_t> FileSizeBeneath(const std::string& root, std::string_view relative);

/// For writers and deleters of `<root>/<relative>`: the deepest folder on the
/// way to it that exists already (its parent, or an ancestor of the parent not
/// created yet) must lie beneath `root` (OpenBeneath's rule and error). The
/// file itself may be a symbolic link: an atomic write renames over the link
/// and a removal removes the link, neither follows it.
Status CheckStaysBeneath(const std::string& root, std::string_view relative);

/// True for the error OpenBeneath and CheckStaysBeneath give for a path that
/// leads outside the root (as opposed to a missing or unreadable file): its
/// detail is StatusDetail::kOutsideRoot.
bool IsOutsideRoot(const Status& status);

/// Read the whole of an open regular file of `size` bytes (its size at open
/// time). ResourceExhausted if larger than `max_bytes`; `path` is for messages.
Result<std::vector<std::byte>> ReadAllBytes(int fd, std::uint64_t size, const std::string& path,
                                            std::uint64_t max_bytes);

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
/// True for a file name WriteFileAtomic gives its temporary files
/// ("update_*_of_*"): what a process killed in the middle of a write leaves.
bool IsAtomicWriteTempName(std::string_view file_name);

/// mkdir -p; IOError naming the path.
Status CreateDirectories(const std::string& path);
bool PathExists(const std::string& path);
/// Size of a regular file; NotFound / IOError.
Result<std::uint64_t> FileSize(const std::string& path);
/// Join a root folder and a relative path with '/'.
std::string JoinRoot(const std::string& root, std::string_view relative);

}  // namespace sedpack
