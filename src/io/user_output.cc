// SPDX-License-Identifier: Apache-2.0
#include "io/user_output_internal.h"
#include "sedpack/io/file_system.h"

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <optional>
#include <utility>

#include "io/file_internal.h"
#include "sedpack/cancel.h"

namespace sedpack {
namespace {

enum class Target { kStdout, kAtomic, kThrough };

// The folder `path` would be created in must exist: it is never created for a
// user's output, since a typo in it should not grow a tree of folders.
Status CheckParent(const std::string& path) {
  std::string parent = std::filesystem::path(path).parent_path().string();
  if (parent.empty()) parent = ".";
  struct stat st {};
  if (::stat(parent.c_str(), &st) != 0) {
    const int err = errno;
    if (err == ENOENT || err == ENOTDIR) return Status::NotFound("no such folder: ", parent, " (for ", path, ")");
    return Status::IOError("cannot use the folder ", parent, " (for ", path, "): ", std::strerror(err));
  }
  if (!S_ISDIR(st.st_mode)) return Status::NotFound("not a folder: ", parent, " (for ", path, ")");
  return Status::OK();
}

Result<Target> Classify(const std::string& path, const UserOutputOptions& options) {
  if (path == "-") return Target::kStdout;
  if (path.empty()) return Status::InvalidArgument("the output path is empty (use - for standard output)");
  if (path.find('\0') != std::string::npos) {
    return Status::InvalidArgument("the output path ", path, " contains a NUL byte");
  }
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) {
    const int err = errno;
    if (err == ENOENT || err == ENOTDIR) {
      SEDPACK_RETURN_NOT_OK(CheckParent(path));
      // The parent exists but the name still fails (a trailing '/' on a new name).
      if (err == ENOTDIR || path.back() == '/') return Status::NotFound("no such folder: ", path);
      return Target::kAtomic;
    }
    return Status::IOError("cannot use ", path, " as output: ", std::strerror(err));
  }
  if (S_ISDIR(st.st_mode)) return Status::InvalidArgument(path, " is a folder; give a file name to write");
  if (S_ISREG(st.st_mode)) {
    if (!options.replace_existing) return Status::AlreadyExists(path, " already exists");
    return Target::kAtomic;
  }
  if (S_ISLNK(st.st_mode)) {
    struct stat target {};
    if (::stat(path.c_str(), &target) == 0) {
      if (S_ISDIR(target.st_mode)) {
        return Status::InvalidArgument(path, " is a symbolic link to a folder; give a file name to write");
      }
      if (S_ISREG(target.st_mode) && !options.replace_existing) {
        return Status::AlreadyExists(path, " already exists (a symbolic link to a file)");
      }
      if (S_ISSOCK(target.st_mode)) {
        return Status::InvalidArgument(path, " is a symbolic link to a socket; it cannot be written to");
      }
    }
    // A link to nothing yet: opening it creates its target, as `>` would.
    return Target::kThrough;
  }
  if (S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode)) return Target::kThrough;
  return Status::InvalidArgument(path, " is a socket or another special file; it cannot be written to");
}

// Blocks SIGPIPE in the calling thread while it lives, so that a write to a
// pipe without a reader fails with EPIPE instead of killing the process, and
// discards the SIGPIPE such a write left pending (unless one was pending
// before). The process's signal disposition is not touched.
class SigpipeBlocked {
 public:
  SigpipeBlocked() {
    sigemptyset(&set_);
    sigaddset(&set_, SIGPIPE);
    sigset_t pending;
    sigemptyset(&pending);
    was_pending_ = ::sigpending(&pending) == 0 && sigismember(&pending, SIGPIPE) == 1;
    ::pthread_sigmask(SIG_BLOCK, &set_, &old_);
  }
  ~SigpipeBlocked() {
    if (got_epipe_ && !was_pending_) {
      const struct timespec zero {};
      while (::sigtimedwait(&set_, nullptr, &zero) == SIGPIPE) {
      }
    }
    ::pthread_sigmask(SIG_SETMASK, &old_, nullptr);
  }
  void GotEpipe() { got_epipe_ = true; }

 private:
  sigset_t set_;
  sigset_t old_;
  bool was_pending_ = false;
  bool got_epipe_ = false;
};

}  // namespace

Status CheckUserOutput(const std::string& path, const UserOutputOptions& options) {
  return Classify(path, options).status();
}

Result<UserOutput> UserOutput::Open(const std::string& path, const UserOutputOptions& options) {
  SEDPACK_ASSIGN_OR_RETURN(Target target, Classify(path, options));
  UserOutput out;
  out.path_ = path;
  out.display_ = path == "-" ? "standard output" : path;
  out.sync_ = options.sync;
  switch (target) {
    case Target::kStdout:
      // What the caller printed with stdio or iostreams goes first.
      std::fflush(stdout);
      out.fd_ = STDOUT_FILENO;
      out.owns_fd_ = false;
      break;
    case Target::kAtomic: {
      out.temp_ = io_internal::AtomicTempName(path);
      out.fd_ = CurrentFileSystem().Open(out.temp_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
      if (out.fd_ < 0) {
        const int err = errno;
        out.temp_.clear();
        return Status::IOError("cannot create a temporary file beside ", path, ": ", std::strerror(err));
      }
      out.owns_fd_ = true;
      // A replaced file keeps its permissions.
      struct stat st {};
      if (::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode)) ::fchmod(out.fd_, st.st_mode & 07777);
      break;
    }
    case Target::kThrough: {
      // Not O_TRUNC yet: the file may be our own standard output (below).
      int fd;
      do {
        fd = CurrentFileSystem().Open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC | O_NOCTTY, 0666);
        // A FIFO without a reader blocks here; SIGINT/SIGTERM break the wait off.
      } while (fd < 0 && errno == EINTR && !CancellationRequested());
      if (fd < 0 && errno == EINTR) return CheckCancelled();
      if (fd < 0) {
        const int err = errno;
        if (err == EISDIR) return Status::InvalidArgument(path, " leads to a folder; give a file name to write");
        if (err == ENOENT) {
          return Status::NotFound("no such folder for the target of the symbolic link ", path);
        }
        return Status::IOError("cannot open ", path, " for writing: ", std::strerror(err));
      }
      out.fd_ = fd;
      out.owns_fd_ = true;
      struct stat st {};
      if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
        // /dev/stdout of `cmd > file` leads to that file, but opening it makes
        // a second file offset: truncating and writing there would clobber what
        // goes to standard output. Such a path means the descriptor itself.
        for (const int std_fd : {STDOUT_FILENO, STDERR_FILENO}) {
          struct stat std_st {};
          if (::fstat(std_fd, &std_st) == 0 && std_st.st_dev == st.st_dev && std_st.st_ino == st.st_ino) {
            std::fflush(std_fd == STDOUT_FILENO ? stdout : stderr);
            CurrentFileSystem().Close(fd);
            out.fd_ = std_fd;
            out.owns_fd_ = false;
            break;
          }
        }
        if (out.owns_fd_ && CurrentFileSystem().Ftruncate(fd, 0) != 0) {
          return Status::IOError("cannot truncate ", path, " for writing: ", std::strerror(errno));
        }
      }
      break;
    }
  }
  struct stat st {};
  out.regular_ = ::fstat(out.fd_, &st) == 0 && S_ISREG(st.st_mode);
  return out;
}

UserOutput::UserOutput(UserOutput&& other) noexcept { *this = std::move(other); }

UserOutput& UserOutput::operator=(UserOutput&& other) noexcept {
  if (this != &other) {
    Abandon();
    path_ = std::move(other.path_);
    display_ = std::move(other.display_);
    temp_ = std::move(other.temp_);
    fd_ = std::exchange(other.fd_, -1);
    owns_fd_ = std::exchange(other.owns_fd_, false);
    regular_ = other.regular_;
    sync_ = other.sync_;
    done_ = std::exchange(other.done_, true);
    other.temp_.clear();
  }
  return *this;
}

UserOutput::~UserOutput() { Abandon(); }

void UserOutput::Abandon() {
  if (done_) return;
  done_ = true;
  if (owns_fd_ && fd_ >= 0) CurrentFileSystem().Close(fd_);
  fd_ = -1;
  if (!temp_.empty()) CurrentFileSystem().Unlink(temp_.c_str());
}

Status UserOutput::Write(const void* data, std::size_t size) {
  if (done_ || fd_ < 0) return Status::Internal("write to ", display_, " after it was finished");
  const auto* p = static_cast<const char*>(data);
  std::optional<SigpipeBlocked> blocked;
  if (!regular_) blocked.emplace();
  while (size > 0) {
    const ssize_t n = CurrentFileSystem().Write(fd_, p, std::min<std::size_t>(size, 1u << 30));
    if (n < 0) {
      const int err = errno;
      if (err == EINTR) {
        // A pipe or device that does not drain must not hold an interrupted job.
        if (CancellationRequested()) return CheckCancelled();
        continue;
      }
      if (err == EPIPE && blocked) blocked->GotEpipe();
      return Status::IOError("cannot write to ", display_, ": ", std::strerror(err));
    }
    if (n == 0) return Status::IOError("cannot write to ", display_, ": no progress");
    p += n;
    size -= static_cast<std::size_t>(n);
  }
  return Status::OK();
}

Status UserOutput::Commit() {
  if (done_) return Status::Internal("output ", display_, " finished twice");
  done_ = true;
  const int fd = std::exchange(fd_, -1);
  if (!owns_fd_) return Status::OK();  // standard output stays open
  Status st;
  // Only a regular file has anything to flush to a disk; a device or pipe may
  // refuse fsync (EINVAL), which says nothing about the bytes.
  if (sync_ && regular_ && CurrentFileSystem().Fsync(fd) != 0) {
    st = Status::IOError("cannot write to ", display_, " (fsync): ", std::strerror(errno));
  }
  if (CurrentFileSystem().Close(fd) != 0 && st.ok()) {
    st = Status::IOError("cannot write to ", display_, " (close): ", std::strerror(errno));
  }
  if (temp_.empty()) return st;
  if (st.ok() && CurrentFileSystem().Rename(temp_.c_str(), path_.c_str()) != 0) {
    st = Status::IOError("cannot rename the temporary file onto ", display_, ": ", std::strerror(errno));
  }
  if (!st.ok()) {
    CurrentFileSystem().Unlink(temp_.c_str());
    return st;
  }
  if (sync_) {
    std::string parent = std::filesystem::path(path_).parent_path().string();
    if (parent.empty()) parent = ".";
    const int dir = CurrentFileSystem().Open(parent.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dir >= 0) {
      CurrentFileSystem().Fsync(dir);
      CurrentFileSystem().Close(dir);
    }
  }
  return Status::OK();
}

Status WriteUserOutput(const std::string& path, std::string_view bytes, const UserOutputOptions& options) {
  SEDPACK_ASSIGN_OR_RETURN(UserOutput out, UserOutput::Open(path, options));
  SEDPACK_RETURN_NOT_OK(out.Write(bytes));
  return out.Commit();
}

}  // namespace sedpack
