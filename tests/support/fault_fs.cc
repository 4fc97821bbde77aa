// SPDX-License-Identifier: Apache-2.0
#include "support/fault_fs.h"

#include <fcntl.h>

#include <algorithm>
#include <cerrno>

namespace sedpack::testing {

const char* FaultOpName(FaultOp op) {
  switch (op) {
    case FaultOp::kWrite: return "write";
    case FaultOp::kRead: return "read";
    case FaultOp::kFsync: return "fsync";
    case FaultOp::kRename: return "rename";
    case FaultOp::kCreate: return "create";
    case FaultOp::kMkdir: return "mkdir";
    case FaultOp::kUnlink: return "unlink";
  }
  return "?";
}

FaultPlan FaultAt(FaultOp op, std::int64_t at) {
  FaultPlan plan;
  plan.op = op;
  plan.at = at;
  plan.error = op == FaultOp::kWrite ? ENOSPC : EIO;
  return plan;
}

FaultPlan FullDiskFrom(std::int64_t at) {
  FaultPlan plan = FaultAt(FaultOp::kWrite, at);
  plan.sticky = true;
  return plan;
}

bool FaultFileSystem::Fail(FaultOp op) {
  const std::int64_t n = ++counts_[static_cast<int>(op)];
  if (op != plan_.op || plan_.at <= 0) return false;
  if (n == plan_.at || (plan_.sticky && n > plan_.at)) {
    fired_.store(true);
    errno = plan_.error;
    return true;
  }
  return false;
}

int FaultFileSystem::Open(const char* path, int flags, unsigned mode) {
  if ((flags & O_CREAT) != 0 && Fail(FaultOp::kCreate)) return -1;
  return FileSystemWrapper::Open(path, flags, mode);
}

int FaultFileSystem::OpenAt(int dirfd, const char* path, int flags, unsigned mode) {
  if ((flags & O_CREAT) != 0 && Fail(FaultOp::kCreate)) return -1;
  return FileSystemWrapper::OpenAt(dirfd, path, flags, mode);
}

long FaultFileSystem::Read(int fd, void* buffer, std::size_t size) {
  if (Fail(FaultOp::kRead)) return -1;
  const long n = FileSystemWrapper::Read(fd, buffer, size);
  if (n > 0) bytes_read_ += n;
  return n;
}

long FaultFileSystem::Pread(int fd, void* buffer, std::size_t size, std::int64_t offset) {
  if (Fail(FaultOp::kRead)) return -1;
  const long n = FileSystemWrapper::Pread(fd, buffer, size, offset);
  if (n > 0) bytes_read_ += n;
  return n;
}

long FaultFileSystem::Write(int fd, const void* data, std::size_t size) {
  if (Fail(FaultOp::kWrite)) return -1;
  if (plan_.short_writes && size > 1) size = std::max<std::size_t>(1, size / 2);
  return FileSystemWrapper::Write(fd, data, size);
}

long FaultFileSystem::Pwrite(int fd, const void* data, std::size_t size, std::int64_t offset) {
  if (Fail(FaultOp::kWrite)) return -1;
  if (plan_.short_writes && size > 1) size = std::max<std::size_t>(1, size / 2);
  return FileSystemWrapper::Pwrite(fd, data, size, offset);
}

long FaultFileSystem::CopyFileRange(int in, std::int64_t* in_offset, int out, std::size_t size) {
  if (Fail(FaultOp::kWrite)) return -1;
  if (plan_.short_writes && size > 1) size = std::max<std::size_t>(1, size / 2);
  return FileSystemWrapper::CopyFileRange(in, in_offset, out, size);
}

int FaultFileSystem::Fsync(int fd) {
  if (Fail(FaultOp::kFsync)) return -1;
  return FileSystemWrapper::Fsync(fd);
}

int FaultFileSystem::Rename(const char* from, const char* to) {
  if (Fail(FaultOp::kRename)) return -1;
  return FileSystemWrapper::Rename(from, to);
}

int FaultFileSystem::RenameExchange(const char* a, const char* b) {
  if (Fail(FaultOp::kRename)) return -1;
  return FileSystemWrapper::RenameExchange(a, b);
}

int FaultFileSystem::RenameNoReplace(const char* from, const char* to) {
  if (Fail(FaultOp::kRename)) return -1;
  return FileSystemWrapper::RenameNoReplace(from, to);
}

int FaultFileSystem::Link(const char* existing, const char* new_path) {
  if (Fail(FaultOp::kRename)) return -1;
  return FileSystemWrapper::Link(existing, new_path);
}

int FaultFileSystem::Unlink(const char* path) {
  if (Fail(FaultOp::kUnlink)) return -1;
  return FileSystemWrapper::Unlink(path);
}

int FaultFileSystem::Mkdir(const char* path, unsigned mode) {
  if (Fail(FaultOp::kMkdir)) return -1;
  return FileSystemWrapper::Mkdir(path, mode);
}

int FaultFileSystem::Rmdir(const char* path) {
  if (Fail(FaultOp::kUnlink)) return -1;
  return FileSystemWrapper::Rmdir(path);
}

}  // namespace sedpack::testing
