// SPDX-License-Identifier: Apache-2.0
#include "sedpack/io/file.h"

#include "sedpack/io/kill_point.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <random>
#include <system_error>

namespace sedpack {
namespace {

Status ErrnoStatus(std::string_view what, const std::string& path, int err) {
  if (err == ENOENT) return Status::NotFound(what, " ", path, ": ", std::strerror(err));
  if (err == EEXIST) return Status::AlreadyExists(what, " ", path, ": ", std::strerror(err));
  return Status::IOError(what, " ", path, ": ", std::strerror(err));
}

// RAII for a POSIX file descriptor.
class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }
  int Release() {
    int f = fd_;
    fd_ = -1;
    return f;
  }

 private:
  int fd_;
};

std::string TempNameFor(const std::string& path) {
  thread_local std::mt19937_64 rng{std::random_device{}() ^
                                   static_cast<std::uint64_t>(::getpid()) << 32};
  const auto now = std::chrono::system_clock::now().time_since_epoch();
  const double secs = std::chrono::duration<double>(now).count();
  char stamp[64];
  std::snprintf(stamp, sizeof(stamp), "%.6f", secs);
  char hex[33];
  std::snprintf(hex, sizeof(hex), "%016llx%016llx", static_cast<unsigned long long>(rng()),
                static_cast<unsigned long long>(rng()));
  const std::filesystem::path p(path);
  const std::string name = "update_" + std::string(stamp) + "_" + hex + "_of_" + p.filename().string();
  return (p.parent_path() / name).string();
}

Status WriteAll(int fd, const std::byte* data, std::size_t size, const std::string& path) {
  while (size > 0) {
    const std::size_t chunk = std::min<std::size_t>(size, 1u << 30);
    const ssize_t n = ::write(fd, data, chunk);
    if (n < 0) {
      if (errno == EINTR) continue;
      return ErrnoStatus("cannot write", path, errno);
    }
    data += n;
    size -= static_cast<std::size_t>(n);
  }
  return Status::OK();
}

}  // namespace

Result<std::vector<std::byte>> ReadFileBytes(const std::string& path, std::uint64_t max_bytes) {
  Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) return ErrnoStatus("cannot open", path, errno);
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return ErrnoStatus("cannot stat", path, errno);
  if (!S_ISREG(st.st_mode)) return Status::IOError("not a regular file: ", path);
  const auto size = static_cast<std::uint64_t>(st.st_size);
  if (size > max_bytes) {
    return Status::ResourceExhausted("file ", path, " has ", size, " bytes, more than the limit of ",
                                     max_bytes);
  }
  std::vector<std::byte> out(size);
  std::size_t done = 0;
  while (done < size) {
    const ssize_t n = ::read(fd.get(), out.data() + done, std::min<std::uint64_t>(size - done, 1u << 30));
    if (n < 0) {
      if (errno == EINTR) continue;
      return ErrnoStatus("cannot read", path, errno);
    }
    if (n == 0) return Status::IOError("file ", path, " shrank while being read");
    done += static_cast<std::size_t>(n);
  }
  return out;
}

Result<std::string> ReadFileText(const std::string& path, std::uint64_t max_bytes) {
  SEDPACK_ASSIGN_OR_RETURN(std::vector<std::byte> bytes, ReadFileBytes(path, max_bytes));
  return std::string(reinterpret_cast<const char*>(bytes.data()), bytes.size());
}

Status WriteFileAtomic(const std::string& path, std::span<const std::byte> data,
                       const AtomicWriteOptions& options) {
  const std::filesystem::path p(path);
  if (p.has_parent_path()) SEDPACK_RETURN_NOT_OK(CreateDirectories(p.parent_path().string()));
  const std::string tmp = TempNameFor(path);
  Fd fd(::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644));
  if (fd.get() < 0) return ErrnoStatus("cannot create", tmp, errno);
  Status st = WriteAll(fd.get(), data.data(), data.size(), tmp);
  if (st.ok() && options.sync && ::fsync(fd.get()) != 0) st = ErrnoStatus("cannot fsync", tmp, errno);
  if (st.ok() && ::close(fd.Release()) != 0) st = ErrnoStatus("cannot close", tmp, errno);
  if (st.ok()) KillPoint("write-temp", tmp);
  if (st.ok()) {
    if (options.no_replace) {
      // link() fails if the target exists, which gives create-exclusive semantics.
      if (::link(tmp.c_str(), path.c_str()) != 0) st = ErrnoStatus("cannot create", path, errno);
      ::unlink(tmp.c_str());
    } else if (::rename(tmp.c_str(), path.c_str()) != 0) {
      st = ErrnoStatus("cannot rename onto", path, errno);
    }
  }
  if (!st.ok()) {
    ::unlink(tmp.c_str());
    return st;
  }
  if (options.sync && p.has_parent_path()) {
    Fd dir(::open(p.parent_path().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (dir.get() >= 0) ::fsync(dir.get());
  }
  KillPoint("rename", path);
  return Status::OK();
}

Status WriteFileAtomic(const std::string& path, std::string_view text,
                       const AtomicWriteOptions& options) {
  return WriteFileAtomic(path, std::as_bytes(std::span<const char>(text.data(), text.size())),
                         options);
}

Status CreateDirectories(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::create_directories(path, ec)) KillPoint("mkdir", path);
  if (ec) return Status::IOError("cannot create folder ", path, ": ", ec.message());
  return Status::OK();
}

bool PathExists(const std::string& path) {
  std::error_code ec;
  return std::filesystem::exists(path, ec);
}

Result<std::uint64_t> FileSize(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return ErrnoStatus("cannot stat", path, errno);
  if (!S_ISREG(st.st_mode)) return Status::IOError("not a regular file: ", path);
  return static_cast<std::uint64_t>(st.st_size);
}

std::string JoinRoot(const std::string& root, std::string_view relative) {
  if (root.empty()) return std::string(relative);
  std::string out = root;
  if (out.back() != '/') out += '/';
  out += relative;
  return out;
}

}  // namespace sedpack
