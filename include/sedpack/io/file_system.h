// SPDX-License-Identifier: Apache-2.0
// The file-system interface every dataset read and write goes through.
//
// sedpack's I/O is a handful of POSIX calls used with care: files opened
// beneath a dataset root (openat2), written to a temporary name and renamed into
// place, folders fsynced, trees swapped with RENAME_EXCHANGE. FileSystem is that
// set of calls and nothing more, so that the careful code stays in one place
// (sedpack/io/file.h) and a different FileSystem can sit under all of it: the
// tests install one that fails the n-th write with ENOSPC, a read with EIO,
// writes short, an fsync or a rename, and check that every job survives it.
//
// Each method has the contract of the POSIX call it is named after: it returns
// what that call returns and sets errno when it fails. The default forwards to
// the kernel.
#pragma once

#include <cstddef>
#include <cstdint>

namespace sedpack {

class FileSystem {
 public:
  virtual ~FileSystem();

  /// open(2) and openat(2) (`mode` for O_CREAT).
  virtual int Open(const char* path, int flags, unsigned mode = 0);
  virtual int OpenAt(int dirfd, const char* path, int flags, unsigned mode = 0);
  /// openat2(2) with `how_flags` as open_how.flags and `resolve` as open_how.resolve.
  virtual long OpenAt2(int dirfd, const char* path, std::uint64_t how_flags, std::uint64_t resolve);
  virtual int Close(int fd);
  /// read(2), pread(2), write(2): a short count is allowed, as from the kernel.
  virtual long Read(int fd, void* buffer, std::size_t size);
  virtual long Pread(int fd, void* buffer, std::size_t size, std::int64_t offset);
  virtual long Write(int fd, const void* data, std::size_t size);
  /// copy_file_range(2) from `in` at *in_offset (advanced) to `out` at its position.
  virtual long CopyFileRange(int in, std::int64_t* in_offset, int out, std::size_t size);
  virtual int Fsync(int fd);
  virtual int Ftruncate(int fd, std::int64_t size);
  /// rename(2); renameat2(2) with RENAME_EXCHANGE (both paths must exist).
  virtual int Rename(const char* from, const char* to);
  virtual int RenameExchange(const char* a, const char* b);
  /// renameat2(2) with RENAME_NOREPLACE (EINVAL where the file system has no such rename).
  virtual int RenameNoReplace(const char* from, const char* to);
  /// link(2), symlink(2), unlink(2), mkdir(2), rmdir(2).
  virtual int Link(const char* existing, const char* new_path);
  virtual int Symlink(const char* target, const char* link_path);
  virtual int Unlink(const char* path);
  virtual int Mkdir(const char* path, unsigned mode);
  virtual int Rmdir(const char* path);
};

/// The FileSystem in use (the default one unless SetFileSystem installed another).
FileSystem& CurrentFileSystem();

/// Make `fs` the FileSystem of every thread of this process (nullptr: the
/// default); returns the one it replaces. `fs` must outlive its use. Install it
/// before starting a job, not while one runs: a call in flight may still use
/// the previous one.
FileSystem* SetFileSystem(FileSystem* fs);

}  // namespace sedpack
