// SPDX-License-Identifier: Apache-2.0
// A FileSystem (sedpack/io/file_system.h) that keeps the whole tree in memory:
// jobs run on it touch no disk, and a test can build trees (links, folders,
// files of any size) that a real file system would make slow or awkward.
// Paths are absolute ("/ds/dataset_info.json"); a relative one is taken from
// "/". Folders, regular files, hard and symbolic links are kept; the calls
// follow POSIX (errno as the kernel sets it for the cases sedpack meets),
// openat2's RESOLVE_BENEATH and RESOLVE_NO_SYMLINKS included. Thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "sedpack/io/file_system.h"

namespace sedpack::testing {

class MemoryFileSystem : public FileSystem {
 public:
  MemoryFileSystem();
  ~MemoryFileSystem() override;

  /// Descriptors open now (a job that returned should have closed all of them).
  std::size_t open_files() const;

  int Open(const char* path, int flags, unsigned mode = 0) override;
  int OpenAt(int dirfd, const char* path, int flags, unsigned mode = 0) override;
  long OpenAt2(int dirfd, const char* path, std::uint64_t how_flags, std::uint64_t resolve) override;
  int Close(int fd) override;
  long Read(int fd, void* buffer, std::size_t size) override;
  long Pread(int fd, void* buffer, std::size_t size, std::int64_t offset) override;
  long Write(int fd, const void* data, std::size_t size) override;
  long Pwrite(int fd, const void* data, std::size_t size, std::int64_t offset) override;
  long CopyFileRange(int in, std::int64_t* in_offset, int out, std::size_t size) override;
  int Fsync(int fd) override;
  int Ftruncate(int fd, std::int64_t size) override;
  int AdviseSequential(int fd) override;
  int StartWriteback(int fd, std::int64_t offset, std::int64_t bytes) override;
  int Rename(const char* from, const char* to) override;
  int RenameExchange(const char* a, const char* b) override;
  int RenameNoReplace(const char* from, const char* to) override;
  int Link(const char* existing, const char* new_path) override;
  int Symlink(const char* target, const char* link_path) override;
  int Unlink(const char* path) override;
  int Mkdir(const char* path, unsigned mode) override;
  int Rmdir(const char* path) override;
  int Stat(const char* path, FileStat* out) override;
  int Lstat(const char* path, FileStat* out) override;
  int Fstat(int fd, FileStat* out) override;
  int ListDir(const char* path, std::vector<DirEntry>* entries) override;
  int ReadLink(const char* path, std::string* target) override;
  int RealPath(const char* path, std::string* resolved) override;

  struct Node;

 private:
  struct OpenFile;
  struct Lookup;
  enum class Rename2 { kReplace, kNoReplace, kExchange };

  // All below with mu_ held.
  Lookup Resolve(const std::string& base, std::string_view path, bool follow_last, bool beneath,
                 bool no_symlinks) const;
  // Resolve `path` from "/" to something that exists; false (errno set) if not.
  bool Find(const char* path, bool follow, Lookup* out) const;
  // Put `node` at `path`, which must not exist yet (its folder must).
  int AddLocked(const char* path, std::shared_ptr<Node> node);
  // Open `path` from the folder `dirfd` (AT_FDCWD: from "/").
  int OpenLocked(int dirfd, const char* path, int flags, bool beneath, bool no_symlinks);
  int RenameLocked(const char* from, const char* to, Rename2 how);
  OpenFile* FileOf(int fd);

  mutable std::mutex mu_;
  std::shared_ptr<Node> root_;
  std::map<int, std::unique_ptr<OpenFile>> files_;
  int next_fd_;
};

}  // namespace sedpack::testing
