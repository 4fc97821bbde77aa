// SPDX-License-Identifier: Apache-2.0
// The file-system interface every dataset read and write goes through.
//
// sedpack's I/O is a handful of POSIX calls used with care: files opened
// beneath a dataset root (openat2), written to a temporary name and renamed into
// place, folders fsynced, trees swapped with RENAME_EXCHANGE. FileSystem is that
// set of calls and nothing more, so that the careful code stays in one place
// (sedpack/io/file.h) and a different FileSystem can sit under all of it: the
// tests run jobs on one that fails the n-th write with ENOSPC, a read with EIO,
// writes short, an fsync or a rename, and check that every job survives it, and
// on one that keeps the whole tree in memory.
//
// Each method has the contract of the POSIX call it is named after: it returns
// what that call returns and sets errno when it fails. DefaultFileSystem()
// forwards to the kernel; FileSystemWrapper forwards to another FileSystem, so
// that a FileSystem changing a few calls overrides only those.
//
// Jobs take the FileSystem to use in their options (`FileSystem* file_system`,
// nullptr: CurrentFileSystem()).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace sedpack {

/// What a path names, as stat(2)/lstat(2) see it.
enum class FileType : std::uint8_t {
  kRegular,
  kDirectory,
  kSymlink,  ///< only from Lstat and ListDir, which do not follow links
  kOther,    ///< FIFO, socket, device
};

/// The part of struct stat that sedpack uses.
struct FileStat {
  FileType type = FileType::kOther;
  std::uint64_t size = 0;
  /// Last modification, nanoseconds since the epoch (0 where a FileSystem does not know it).
  std::int64_t mtime_ns = 0;
};

/// One entry of a folder (never "." or ".."); `type` as Lstat gives it.
struct DirEntry {
  std::string name;
  FileType type = FileType::kOther;
};

class FileSystem {
 public:
  virtual ~FileSystem();

  /// open(2) and openat(2) (`mode` for O_CREAT).
  virtual int Open(const char* path, int flags, unsigned mode = 0) = 0;
  virtual int OpenAt(int dirfd, const char* path, int flags, unsigned mode = 0) = 0;
  /// openat2(2) with `how_flags` as open_how.flags and `resolve` as open_how.resolve.
  virtual long OpenAt2(int dirfd, const char* path, std::uint64_t how_flags, std::uint64_t resolve) = 0;
  virtual int Close(int fd) = 0;
  /// read(2), pread(2), write(2): a short count is allowed, as from the kernel.
  virtual long Read(int fd, void* buffer, std::size_t size) = 0;
  virtual long Pread(int fd, void* buffer, std::size_t size, std::int64_t offset) = 0;
  virtual long Write(int fd, const void* data, std::size_t size) = 0;
  /// pwrite(2): a short count is allowed; the file's position does not move.
  virtual long Pwrite(int fd, const void* data, std::size_t size, std::int64_t offset) = 0;
  /// copy_file_range(2) from `in` at *in_offset (advanced) to `out` at its position.
  virtual long CopyFileRange(int in, std::int64_t* in_offset, int out, std::size_t size) = 0;
  virtual int Fsync(int fd) = 0;
  virtual int Ftruncate(int fd, std::int64_t size) = 0;
  /// posix_fadvise(2) with POSIX_FADV_SEQUENTIAL over the whole file: a hint,
  /// which a FileSystem may ignore (returns 0 then).
  virtual int AdviseSequential(int fd) = 0;
  /// sync_file_range(2) with SYNC_FILE_RANGE_WRITE: starts writing `bytes` at
  /// `offset` out to the device and returns without waiting (only Fsync makes
  /// them durable), so that a long sequential write is flushed as it goes
  /// rather than all at its end. A hint, which a FileSystem may ignore: by
  /// default it does nothing and returns 0.
  virtual int StartWriteback(int /*fd*/, std::int64_t /*offset*/, std::int64_t /*bytes*/) { return 0; }
  /// rename(2); renameat2(2) with RENAME_EXCHANGE (both paths must exist).
  virtual int Rename(const char* from, const char* to) = 0;
  virtual int RenameExchange(const char* a, const char* b) = 0;
  /// renameat2(2) with RENAME_NOREPLACE (EINVAL where the file system has no such rename).
  virtual int RenameNoReplace(const char* from, const char* to) = 0;
  /// link(2), symlink(2), unlink(2), mkdir(2), rmdir(2).
  virtual int Link(const char* existing, const char* new_path) = 0;
  virtual int Symlink(const char* target, const char* link_path) = 0;
  virtual int Unlink(const char* path) = 0;
  virtual int Mkdir(const char* path, unsigned mode) = 0;
  virtual int Rmdir(const char* path) = 0;
  /// stat(2) (follows links), lstat(2) (does not), fstat(2).
  virtual int Stat(const char* path, FileStat* out) = 0;
  virtual int Lstat(const char* path, FileStat* out) = 0;
  virtual int Fstat(int fd, FileStat* out) = 0;
  /// opendir(3)/readdir(3): the entries of a folder, sorted by name.
  virtual int ListDir(const char* path, std::vector<DirEntry>* entries) = 0;
  /// readlink(2): the target of a symbolic link.
  virtual int ReadLink(const char* path, std::string* target) = 0;
  /// realpath(3): the absolute path with every link, "." and ".." resolved.
  virtual int RealPath(const char* path, std::string* resolved) = 0;

  /// Whether `path` names anything once links are followed (Stat succeeds):
  /// std::filesystem::exists. Lstat tells about the link itself.
  bool Exists(const char* path);
};

/// Forwards every call to a target FileSystem (leveldb's EnvWrapper): a
/// FileSystem that changes a few calls derives from this and overrides those.
class FileSystemWrapper : public FileSystem {
 public:
  /// `target` must outlive this object.
  explicit FileSystemWrapper(FileSystem* target) : target_(target) {}
  FileSystem* target() const { return target_; }

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

 private:
  FileSystem* target_;
};

/// The FileSystem of the kernel (POSIX calls). Lives as long as the process.
FileSystem* DefaultFileSystem();

/// The process-wide default: what a job uses when its options name no
/// FileSystem (DefaultFileSystem() unless SetFileSystem installed another).
FileSystem& CurrentFileSystem();

/// `fs`, or CurrentFileSystem() when `fs` is nullptr: how a job resolves the
/// `file_system` of its options.
inline FileSystem& FileSystemOr(FileSystem* fs) { return fs != nullptr ? *fs : CurrentFileSystem(); }

/// Make `fs` the process-wide default FileSystem (nullptr: DefaultFileSystem());
/// returns the one it replaces. `fs` must outlive its use. Install it before
/// starting a job, not while one runs: a call in flight may still use the
/// previous one. Prefer passing a FileSystem in a job's options.
FileSystem* SetFileSystem(FileSystem* fs);

}  // namespace sedpack
