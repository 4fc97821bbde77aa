// SPDX-License-Identifier: Apache-2.0
#include "sedpack/io/file_system.h"

#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>

namespace sedpack {

FileSystem::~FileSystem() = default;

int FileSystem::Open(const char* path, int flags, unsigned mode) { return ::open(path, flags, mode); }
int FileSystem::OpenAt(int dirfd, const char* path, int flags, unsigned mode) {
  return ::openat(dirfd, path, flags, mode);
}
long FileSystem::OpenAt2(int dirfd, const char* path, std::uint64_t how_flags, std::uint64_t resolve) {
  struct open_how how {};
  how.flags = how_flags;
  how.resolve = resolve;
  return ::syscall(SYS_openat2, dirfd, path, &how, sizeof(how));
}
int FileSystem::Close(int fd) { return ::close(fd); }
long FileSystem::Read(int fd, void* buffer, std::size_t size) { return ::read(fd, buffer, size); }
long FileSystem::Pread(int fd, void* buffer, std::size_t size, std::int64_t offset) {
  return ::pread(fd, buffer, size, static_cast<off_t>(offset));
}
long FileSystem::Write(int fd, const void* data, std::size_t size) { return ::write(fd, data, size); }
long FileSystem::CopyFileRange(int in, std::int64_t* in_offset, int out, std::size_t size) {
  off_t off = static_cast<off_t>(*in_offset);
  const ssize_t n = ::copy_file_range(in, &off, out, nullptr, size, 0);
  *in_offset = static_cast<std::int64_t>(off);
  return n;
}
int FileSystem::Fsync(int fd) { return ::fsync(fd); }
int FileSystem::Ftruncate(int fd, std::int64_t size) { return ::ftruncate(fd, static_cast<off_t>(size)); }
int FileSystem::Rename(const char* from, const char* to) { return ::rename(from, to); }
int FileSystem::RenameExchange(const char* a, const char* b) {
  return ::renameat2(AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE);
}
int FileSystem::RenameNoReplace(const char* from, const char* to) {
  return ::renameat2(AT_FDCWD, from, AT_FDCWD, to, RENAME_NOREPLACE);
}
int FileSystem::Link(const char* existing, const char* new_path) { return ::link(existing, new_path); }
int FileSystem::Symlink(const char* target, const char* link_path) { return ::symlink(target, link_path); }
int FileSystem::Unlink(const char* path) { return ::unlink(path); }
int FileSystem::Mkdir(const char* path, unsigned mode) { return ::mkdir(path, mode); }
int FileSystem::Rmdir(const char* path) { return ::rmdir(path); }

namespace {
FileSystem g_default;
std::atomic<FileSystem*> g_current{&g_default};
}  // namespace

FileSystem& CurrentFileSystem() { return *g_current.load(std::memory_order_acquire); }

FileSystem* SetFileSystem(FileSystem* fs) {
  return g_current.exchange(fs == nullptr ? &g_default : fs, std::memory_order_acq_rel);
}

}  // namespace sedpack
