// SPDX-License-Identifier: Apache-2.0
#include "sedpack/io/file_system.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace sedpack {
namespace {

FileType TypeOf(mode_t mode) {
  if (S_ISREG(mode)) return FileType::kRegular;
  if (S_ISDIR(mode)) return FileType::kDirectory;
  if (S_ISLNK(mode)) return FileType::kSymlink;
  return FileType::kOther;
}

int FromStat(int rc, const struct stat& st, FileStat* out) {
  if (rc != 0) return rc;
  out->type = TypeOf(st.st_mode);
  out->size = static_cast<std::uint64_t>(st.st_size);
  out->mtime_ns = static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
  return 0;
}

class PosixFileSystem final : public FileSystem {
 public:
  int Open(const char* path, int flags, unsigned mode) override { return ::open(path, flags, mode); }
  int OpenAt(int dirfd, const char* path, int flags, unsigned mode) override {
    return ::openat(dirfd, path, flags, mode);
  }
  long OpenAt2(int dirfd, const char* path, std::uint64_t how_flags, std::uint64_t resolve) override {
    struct open_how how {};
    how.flags = how_flags;
    how.resolve = resolve;
    return ::syscall(SYS_openat2, dirfd, path, &how, sizeof(how));
  }
  int Close(int fd) override { return ::close(fd); }
  long Read(int fd, void* buffer, std::size_t size) override { return ::read(fd, buffer, size); }
  long Pread(int fd, void* buffer, std::size_t size, std::int64_t offset) override {
    return ::pread(fd, buffer, size, static_cast<off_t>(offset));
  }
  long Write(int fd, const void* data, std::size_t size) override { return ::write(fd, data, size); }
  long Pwrite(int fd, const void* data, std::size_t size, std::int64_t offset) override {
    return ::pwrite(fd, data, size, static_cast<off_t>(offset));
  }
  long CopyFileRange(int in, std::int64_t* in_offset, int out, std::size_t size) override {
    off_t off = static_cast<off_t>(*in_offset);
    const ssize_t n = ::copy_file_range(in, &off, out, nullptr, size, 0);
    *in_offset = static_cast<std::int64_t>(off);
    return n;
  }
  int Fsync(int fd) override { return ::fsync(fd); }
  int Ftruncate(int fd, std::int64_t size) override { return ::ftruncate(fd, static_cast<off_t>(size)); }
  int AdviseSequential(int fd) override {
    // posix_fadvise returns the error instead of setting errno.
    const int err = ::posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
    if (err == 0) return 0;
    errno = err;
    return -1;
  }
  int StartWriteback(int fd, std::int64_t offset, std::int64_t bytes) override {
    return ::sync_file_range(fd, static_cast<off_t>(offset), static_cast<off_t>(bytes), SYNC_FILE_RANGE_WRITE);
  }
  int Rename(const char* from, const char* to) override { return ::rename(from, to); }
  int RenameExchange(const char* a, const char* b) override {
    return ::renameat2(AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE);
  }
  int RenameNoReplace(const char* from, const char* to) override {
    return ::renameat2(AT_FDCWD, from, AT_FDCWD, to, RENAME_NOREPLACE);
  }
  int Link(const char* existing, const char* new_path) override { return ::link(existing, new_path); }
  int Symlink(const char* target, const char* link_path) override { return ::symlink(target, link_path); }
  int Unlink(const char* path) override { return ::unlink(path); }
  int Mkdir(const char* path, unsigned mode) override { return ::mkdir(path, mode); }
  int Rmdir(const char* path) override { return ::rmdir(path); }
  int Stat(const char* path, FileStat* out) override {
    struct stat st {};
    return FromStat(::stat(path, &st), st, out);
  }
  int Lstat(const char* path, FileStat* out) override {
    struct stat st {};
    return FromStat(::lstat(path, &st), st, out);
  }
  int Fstat(int fd, FileStat* out) override {
    struct stat st {};
    return FromStat(::fstat(fd, &st), st, out);
  }
  int ListDir(const char* path, std::vector<DirEntry>* entries) override {
    const int fd = ::open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return -1;
    DIR* dir = ::fdopendir(fd);
    if (dir == nullptr) {
      const int err = errno;
      ::close(fd);
      errno = err;
      return -1;
    }
    entries->clear();
    int err = 0;
    for (;;) {
      errno = 0;
      const struct dirent* e = ::readdir(dir);
      if (e == nullptr) {
        err = errno;
        break;
      }
      const std::string_view name(e->d_name);
      if (name == "." || name == "..") continue;
      DirEntry entry{std::string(name), FileType::kOther};
      switch (e->d_type) {
        case DT_REG: entry.type = FileType::kRegular; break;
        case DT_DIR: entry.type = FileType::kDirectory; break;
        case DT_LNK: entry.type = FileType::kSymlink; break;
        case DT_UNKNOWN: {  // some file systems do not say: ask
          struct stat st {};
          if (::fstatat(::dirfd(dir), e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0) entry.type = TypeOf(st.st_mode);
          break;
        }
        default: break;
      }
      entries->push_back(std::move(entry));
    }
    ::closedir(dir);
    if (err != 0) {
      errno = err;
      return -1;
    }
    std::sort(entries->begin(), entries->end(),
              [](const DirEntry& a, const DirEntry& b) { return a.name < b.name; });
    return 0;
  }
  int ReadLink(const char* path, std::string* target) override {
    std::string buffer(256, '\0');
    for (;;) {
      const ssize_t n = ::readlink(path, buffer.data(), buffer.size());
      if (n < 0) return -1;
      if (static_cast<std::size_t>(n) < buffer.size()) {
        buffer.resize(static_cast<std::size_t>(n));
        *target = std::move(buffer);
        return 0;
      }
      buffer.resize(buffer.size() * 2);  // perhaps cut short: ask again with more room
    }
  }
  int RealPath(const char* path, std::string* resolved) override {
    char* r = ::realpath(path, nullptr);
    if (r == nullptr) return -1;
    resolved->assign(r);
    std::free(r);
    return 0;
  }
};

PosixFileSystem g_default;
std::atomic<FileSystem*> g_current{&g_default};

}  // namespace

FileSystem::~FileSystem() = default;

bool FileSystem::Exists(const char* path) {
  FileStat st;
  return Stat(path, &st) == 0;
}

int FileSystemWrapper::Open(const char* path, int flags, unsigned mode) { return target_->Open(path, flags, mode); }
int FileSystemWrapper::OpenAt(int dirfd, const char* path, int flags, unsigned mode) {
  return target_->OpenAt(dirfd, path, flags, mode);
}
long FileSystemWrapper::OpenAt2(int dirfd, const char* path, std::uint64_t how_flags, std::uint64_t resolve) {
  return target_->OpenAt2(dirfd, path, how_flags, resolve);
}
int FileSystemWrapper::Close(int fd) { return target_->Close(fd); }
long FileSystemWrapper::Read(int fd, void* buffer, std::size_t size) { return target_->Read(fd, buffer, size); }
long FileSystemWrapper::Pread(int fd, void* buffer, std::size_t size, std::int64_t offset) {
  return target_->Pread(fd, buffer, size, offset);
}
long FileSystemWrapper::Write(int fd, const void* data, std::size_t size) { return target_->Write(fd, data, size); }
long FileSystemWrapper::Pwrite(int fd, const void* data, std::size_t size, std::int64_t offset) {
  return target_->Pwrite(fd, data, size, offset);
}
long FileSystemWrapper::CopyFileRange(int in, std::int64_t* in_offset, int out, std::size_t size) {
  return target_->CopyFileRange(in, in_offset, out, size);
}
int FileSystemWrapper::Fsync(int fd) { return target_->Fsync(fd); }
int FileSystemWrapper::Ftruncate(int fd, std::int64_t size) { return target_->Ftruncate(fd, size); }
int FileSystemWrapper::AdviseSequential(int fd) { return target_->AdviseSequential(fd); }
int FileSystemWrapper::StartWriteback(int fd, std::int64_t offset, std::int64_t bytes) {
  return target_->StartWriteback(fd, offset, bytes);
}
int FileSystemWrapper::Rename(const char* from, const char* to) { return target_->Rename(from, to); }
int FileSystemWrapper::RenameExchange(const char* a, const char* b) { return target_->RenameExchange(a, b); }
int FileSystemWrapper::RenameNoReplace(const char* from, const char* to) { return target_->RenameNoReplace(from, to); }
int FileSystemWrapper::Link(const char* existing, const char* new_path) { return target_->Link(existing, new_path); }
int FileSystemWrapper::Symlink(const char* target, const char* link_path) { return target_->Symlink(target, link_path); }
int FileSystemWrapper::Unlink(const char* path) { return target_->Unlink(path); }
int FileSystemWrapper::Mkdir(const char* path, unsigned mode) { return target_->Mkdir(path, mode); }
int FileSystemWrapper::Rmdir(const char* path) { return target_->Rmdir(path); }
int FileSystemWrapper::Stat(const char* path, FileStat* out) { return target_->Stat(path, out); }
int FileSystemWrapper::Lstat(const char* path, FileStat* out) { return target_->Lstat(path, out); }
int FileSystemWrapper::Fstat(int fd, FileStat* out) { return target_->Fstat(fd, out); }
int FileSystemWrapper::ListDir(const char* path, std::vector<DirEntry>* entries) {
  return target_->ListDir(path, entries);
}
int FileSystemWrapper::ReadLink(const char* path, std::string* target) { return target_->ReadLink(path, target); }
int FileSystemWrapper::RealPath(const char* path, std::string* resolved) { return target_->RealPath(path, resolved); }

FileSystem* DefaultFileSystem() { return &g_default; }

FileSystem& CurrentFileSystem() { return *g_current.load(std::memory_order_acquire); }

FileSystem* SetFileSystem(FileSystem* fs) {
  return g_current.exchange(fs == nullptr ? &g_default : fs, std::memory_order_acq_rel);
}

}  // namespace sedpack
