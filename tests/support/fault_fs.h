// SPDX-License-Identifier: Apache-2.0
// A FileSystem (sedpack/io/file_system.h) that fails on purpose: ENOSPC at the
// n-th write, EIO on a read, short writes, fsync and rename failures. Tests run
// a job once to count its calls, then again with a fault at chosen calls.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <string>

#include "sedpack/io/file_system.h"

namespace sedpack::testing {

/// The calls a fault can hit.
enum class FaultOp { kWrite, kRead, kFsync, kRename, kCreate, kMkdir, kUnlink };
inline constexpr std::array<FaultOp, 7> kAllFaultOps = {FaultOp::kWrite,  FaultOp::kRead,  FaultOp::kFsync,
                                                        FaultOp::kRename, FaultOp::kCreate, FaultOp::kMkdir,
                                                        FaultOp::kUnlink};
const char* FaultOpName(FaultOp op);

struct FaultPlan {
  FaultOp op = FaultOp::kWrite;
  /// Fail the at-th call of `op` (1-based, counted over all threads); 0: never.
  std::int64_t at = 0;
  /// errno of the failure (ENOSPC, EIO, EDQUOT, ...).
  int error = EIO;
  /// Every later call of `op` fails too, as on a full disk; else only the at-th.
  bool sticky = false;
  /// Every write moves at most half of what it was asked (at least one byte),
  /// as a kernel may: correct callers loop and lose nothing.
  bool short_writes = false;
};

/// One failure of the at-th call of `op` with its usual errno: ENOSPC for a
/// write, EIO for the others.
FaultPlan FaultAt(FaultOp op, std::int64_t at);

/// A disk that fills up at the at-th write and stays full (sticky ENOSPC).
FaultPlan FullDiskFrom(std::int64_t at);

/// Forwards to `target` (the kernel's by default) but for the planned fault.
class FaultFileSystem : public FileSystemWrapper {
 public:
  explicit FaultFileSystem(FaultPlan plan = {}, FileSystem* target = DefaultFileSystem())
      : FileSystemWrapper(target), plan_(plan) {}

  /// Calls of `op` seen so far (the failed ones included).
  std::int64_t count(FaultOp op) const { return counts_[static_cast<int>(op)].load(); }
  /// Whether the planned fault happened.
  bool fired() const { return fired_.load(); }
  /// Bytes delivered by Read and Pread so far (what a job really read).
  std::int64_t bytes_read() const { return bytes_read_.load(); }

  int Open(const char* path, int flags, unsigned mode) override;
  int OpenAt(int dirfd, const char* path, int flags, unsigned mode) override;
  long Read(int fd, void* buffer, std::size_t size) override;
  long Pread(int fd, void* buffer, std::size_t size, std::int64_t offset) override;
  long Write(int fd, const void* data, std::size_t size) override;
  long Pwrite(int fd, const void* data, std::size_t size, std::int64_t offset) override;
  long CopyFileRange(int in, std::int64_t* in_offset, int out, std::size_t size) override;
  int Fsync(int fd) override;
  int Rename(const char* from, const char* to) override;
  int RenameExchange(const char* a, const char* b) override;
  int RenameNoReplace(const char* from, const char* to) override;
  int Link(const char* existing, const char* new_path) override;
  int Unlink(const char* path) override;
  int Mkdir(const char* path, unsigned mode) override;
  int Rmdir(const char* path) override;

 private:
  /// Count a call of `op`; true (errno set) if it is to fail.
  bool Fail(FaultOp op);

  FaultPlan plan_;
  std::array<std::atomic<std::int64_t>, kAllFaultOps.size()> counts_{};
  std::atomic<bool> fired_{false};
  std::atomic<std::int64_t> bytes_read_{0};
};

/// Installs a FileSystem as the process default for its lifetime (for code
/// whose options take no FileSystem), then puts the previous one back.
class ScopedFileSystem {
 public:
  explicit ScopedFileSystem(FileSystem* fs) : previous_(SetFileSystem(fs)) {}
  ~ScopedFileSystem() { SetFileSystem(previous_); }
  ScopedFileSystem(const ScopedFileSystem&) = delete;
  ScopedFileSystem& operator=(const ScopedFileSystem&) = delete;

 private:
  FileSystem* previous_;
};

}  // namespace sedpack::testing
