// SPDX-License-Identifier: Apache-2.0
#include "io/lock_file.h"
#include "sedpack/io/file_system.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <iostream>
#include <mutex>
#include <optional>
#include <random>
#include <sstream>
#include <thread>
#include <vector>

#include "io/kill_point.h"
#include "io/timestamp.h"

namespace sedpack {
namespace {

constexpr std::string_view kMagic = "sedpack-hpc lock 1";
constexpr std::size_t kMaxLockBytes = 4096;

std::string RandomToken() {
  static thread_local std::mt19937_64 rng([] {
    std::random_device rd;
    std::seed_seq seq{rd(), rd(), rd(), rd(), static_cast<unsigned>(::getpid()),
                      static_cast<unsigned>(std::chrono::steady_clock::now().time_since_epoch().count())};
    return std::mt19937_64(seq);
  }());
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out(32, '0');
  for (int half = 0; half < 2; ++half) {
    std::uint64_t v = rng();
    for (int i = 0; i < 16; ++i) out[half * 16 + i] = kHex[(v >> (60 - 4 * i)) & 0xf];
  }
  return out;
}

std::string Trimmed(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ' || s.back() == '\r')) s.pop_back();
  return s;
}

std::string HostName() {
  char buf[256] = {};
  if (::gethostname(buf, sizeof(buf) - 1) != 0) return "unknown";
  return buf;
}

std::string BootId() {
  std::FILE* f = std::fopen("/proc/sys/kernel/random/boot_id", "re");
  if (!f) return "";
  char buf[64] = {};
  const std::size_t n = std::fread(buf, 1, sizeof(buf) - 1, f);
  std::fclose(f);
  return Trimmed(std::string(buf, n));
}

// Start time of `pid` in clock ticks since boot (field 22 of /proc/<pid>/stat),
// which tells a live owner from a later process that reuses its pid. 0 if
// unknown. `state` (field 3) gets the process state letter if not null.
std::uint64_t ProcessStart(long pid, char* state = nullptr) {
  const std::string path = "/proc/" + std::to_string(pid) + "/stat";
  std::FILE* f = std::fopen(path.c_str(), "re");
  if (!f) return 0;
  char buf[1024] = {};
  const std::size_t n = std::fread(buf, 1, sizeof(buf) - 1, f);
  std::fclose(f);
  const std::string_view text(buf, n);
  const std::size_t close = text.rfind(')');  // the command name may hold spaces and ')'
  if (close == std::string_view::npos) return 0;
  std::istringstream in{std::string(text.substr(close + 1))};
  std::string field;
  for (int i = 3; i <= 22 && (in >> field); ++i) {
    if (i == 3 && state && !field.empty()) *state = field[0];
    if (i == 22) {
      std::uint64_t v = 0;
      auto [p, ec] = std::from_chars(field.data(), field.data() + field.size(), v);
      return ec == std::errc() ? v : 0;
    }
  }
  return 0;
}

std::string JobFromEnvironment() {
  const char* job = std::getenv("SLURM_JOB_ID");
  if (!job || !*job) return "";
  std::string out = job;
  if (const char* task = std::getenv("SLURM_ARRAY_TASK_ID"); task && *task) out += std::string("_") + task;
  return out;
}

const LockOwner& Self() {
  static const LockOwner self = [] {
    LockOwner o;
    o.host = HostName();
    o.boot_id = BootId();
    return o;
  }();
  return self;
}

std::string Serialize(const LockOwner& o) {
  std::string out(kMagic);
  out += "\ntoken " + o.token + "\nhost " + o.host + "\nboot_id " + o.boot_id + "\npid " + std::to_string(o.pid) +
         "\npid_start " + std::to_string(o.pid_start) + "\njob " + o.job + "\nstarted " +
         std::to_string(o.started) + "\n";
  return out;
}

std::optional<LockOwner> Parse(std::string_view text) {
  std::istringstream in{std::string(text)};
  std::string line;
  if (!std::getline(in, line) || line != kMagic) return std::nullopt;
  LockOwner o;
  while (std::getline(in, line)) {
    const std::size_t sp = line.find(' ');
    const std::string key = line.substr(0, sp);
    const std::string value = sp == std::string::npos ? "" : line.substr(sp + 1);
    auto number = [&](auto* v) { std::from_chars(value.data(), value.data() + value.size(), *v); };
    if (key == "token") o.token = value;
    else if (key == "host") o.host = value;
    else if (key == "boot_id") o.boot_id = value;
    else if (key == "pid") number(&o.pid);
    else if (key == "pid_start") number(&o.pid_start);
    else if (key == "job") o.job = value;
    else if (key == "started") number(&o.started);
  }
  if (o.token.empty()) return std::nullopt;
  return o;
}

// One look at a lock file.
struct Seen {
  bool exists = false;
  std::string raw;  // its bytes: identity of one acquisition (holds the token)
  std::optional<LockOwner> owner;
  struct stat st {};
};

Result<Seen> Look(FileSystem& files, const std::string& path) {
  Seen s;
  const int fd = files.Open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) {
    if (errno == ENOENT) return s;
    return Status::IOError("cannot read the lock ", path, ": ", std::strerror(errno));
  }
  s.exists = true;
  char buf[kMaxLockBytes];
  std::size_t got = 0;
  while (got < sizeof(buf)) {
    const ssize_t n = files.Read(fd, buf + got, sizeof(buf) - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += static_cast<std::size_t>(n);
  }
  ::fstat(fd, &s.st);
  files.Close(fd);
  s.raw.assign(buf, got);
  s.owner = Parse(s.raw);
  return s;
}

bool SameHost(const LockOwner& o) {
  const LockOwner& self = Self();
  return o.host == self.host && !o.boot_id.empty() && o.boot_id == self.boot_id;
}

// For an owner on this host: empty if its process is alive, else why it is dead.
std::string DeadReason(const LockOwner& o) {
  if (o.pid <= 0) return "its record names no process";
  if (::kill(static_cast<pid_t>(o.pid), 0) != 0 && errno == ESRCH) {
    return "process " + std::to_string(o.pid) + " is not running on this host";
  }
  char state = '?';
  const std::uint64_t start = ProcessStart(o.pid, &state);
  // A zombie (dead, not yet reaped: an MPI rank whose mpirun is gone, in a
  // container whose init reaps late) answers kill(0) but holds nothing.
  if (state == 'Z' || state == 'X') {
    return "process " + std::to_string(o.pid) + " has exited (it is a zombie)";
  }
  if (o.pid_start != 0 && start != 0 && start != o.pid_start) {
    return "process " + std::to_string(o.pid) + " is not running on this host (the pid belongs to a newer process)";
  }
  return "";
}

std::string Seconds(std::chrono::steady_clock::duration d) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.1f s", std::chrono::duration<double>(d).count());
  return buf;
}

std::string Holder(const Seen& s) {
  if (s.raw.empty()) return "no owner";
  return s.owner ? DescribeLockOwner(*s.owner) : std::string("an unreadable owner record");
}

// Rename the lock at `path` away, check it is the one whose bytes were `raw`,
// and remove it; if it is not (a new holder took the lock after we looked),
// put it back. NotFound: it was gone already.
Status BreakIfSame(FileSystem& files, const std::string& path, const std::string& raw) {
  const std::string broken = path + ".broken-" + RandomToken();
  if (files.Rename(path.c_str(), broken.c_str()) != 0) {
    if (errno == ENOENT) return Status::NotFound(path, ": already gone");
    return Status::IOError("cannot break the lock ", path, ": rename to ", broken, ": ", std::strerror(errno));
  }
  KillPoint("rename", broken);
  auto moved = Look(files, broken);
  if (moved.ok() && moved->exists && moved->raw != raw) {
    // Link back, not rename: link never replaces a lock someone took meanwhile.
    (void)files.Link(broken.c_str(), path.c_str());
    files.Unlink(broken.c_str());
    return Status::AlreadyExists(path, ": taken by another holder meanwhile; not broken");
  }
  if (files.Unlink(broken.c_str()) != 0 && errno != ENOENT) {
    return Status::IOError("cannot remove the broken lock ", broken, ": ", std::strerror(errno));
  }
  KillPoint("remove", broken);
  return Status::OK();
}

}  // namespace

std::string DescribeLockOwner(const LockOwner& o) {
  std::string out = "host " + (o.host.empty() ? std::string("?") : o.host) + " pid " + std::to_string(o.pid);
  std::string extra;
  if (!o.job.empty()) extra = "job " + o.job;
  if (o.started > 0) extra += (extra.empty() ? "" : ", ") + std::string("taken at ") + io_internal::UtcTimestamp(o.started);
  return extra.empty() ? out : out + " (" + extra + ")";
}

namespace {

// `record` in the new file `pending`, fsync'ed; its descriptor in `*fd_out`.
// On failure the file is gone.
Status WritePending(FileSystem& files, const std::string& pending, const std::string& record, int* fd_out) {
  const int fd = files.Open(pending.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) return Status::IOError("cannot create ", pending, ": ", std::strerror(errno));
  KillPoint("create", pending);
  auto drop_pending = [&] {
    files.Close(fd);
    files.Unlink(pending.c_str());
  };
  std::size_t done = 0;
  while (done < record.size()) {
    const ssize_t n = files.Write(fd, record.data() + done, record.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int err = errno;
      drop_pending();
      return Status::IOError("cannot write ", pending, ": ", std::strerror(err));
    }
    done += static_cast<std::size_t>(n);
  }
  if (files.Fsync(fd) != 0) {
    const int err = errno;
    drop_pending();
    return Status::IOError("cannot fsync ", pending, ": ", std::strerror(err));
  }
  *fd_out = fd;
  return Status::OK();
}

}  // namespace

struct LockFile::Beat {
  std::mutex mu;
  std::condition_variable cv;
  bool stop = false;
  std::thread thread;
};

Result<std::unique_ptr<LockFile>> LockFile::Acquire(const std::string& path, const LockFileOptions& options) {
  FileSystem& files = FileSystemOr(options.file_system);
  std::unique_ptr<LockFile> lock(new LockFile());
  lock->path_ = path;
  lock->fs_ = options.file_system;
  LockOwner& me = lock->owner_;
  me = Self();
  me.token = RandomToken();
  me.pid = static_cast<long>(::getpid());
  me.pid_start = ProcessStart(me.pid);
  me.job = options.job.empty() ? JobFromEnvironment() : options.job;
  me.started = static_cast<std::int64_t>(std::time(nullptr));
  const std::string record = Serialize(me);

  // The record goes to a private file first, so the lock name only ever names
  // a complete record.
  const std::string pending = path + ".pending-" + me.token;
  int fd = -1;
  SEDPACK_RETURN_NOT_OK(WritePending(files, pending, record, &fd));
  auto drop_pending = [&] {
    files.Close(fd);
    files.Unlink(pending.c_str());
  };

  const auto start = std::chrono::steady_clock::now();
  const auto deadline = start + options.wait_timeout;
  auto backoff = std::chrono::milliseconds(5);
  std::mt19937 jitter(std::random_device{}());
  // The other-host rule: the holder's record and heartbeat as last seen, and since when.
  std::string watched_key;
  auto watched_since = start;
  for (;;) {
    const int rc = files.Link(pending.c_str(), path.c_str());
    const int err = errno;
    struct stat st {};
    // A link() whose reply was lost (NFS retransmission) reports an error yet
    // was done: the pending file then has two names.
    if (rc == 0 || (::fstat(fd, &st) == 0 && st.st_nlink == 2)) break;
    if (err != EEXIST) {
      drop_pending();
      return Status::IOError("cannot create the lock ", path, ": ", std::strerror(err));
    }
    auto seen = Look(files, path);
    if (!seen.ok()) {
      drop_pending();
      return seen.status();
    }
    if (!seen->exists) continue;  // released between our link and our look
    const auto now = std::chrono::steady_clock::now();
    std::string stale;
    if (seen->raw.empty()) {
      // Never a lock of ours (its record is written before the link): the
      // empty file that versions locking with flock(2) left in place.
      stale = "an empty lock file, as older versions (flock) left it";
    } else if (seen->owner && SameHost(*seen->owner)) {
      stale = DeadReason(*seen->owner);
    } else {
      const std::string key = seen->raw + "\n" + std::to_string(seen->st.st_ino) + ":" +
                              std::to_string(seen->st.st_mtim.tv_sec) + "." +
                              std::to_string(seen->st.st_mtim.tv_nsec);
      if (key != watched_key) {
        watched_key = key;
        watched_since = now;
      } else if (now - watched_since >= options.stale_timeout) {
        stale = "its heartbeat has not changed for " + Seconds(now - watched_since);
      }
    }
    if (!stale.empty()) {
      Status broke = BreakIfSame(files, path, seen->raw);
      if (broke.ok()) {
        const std::string message =
            "sedpack: breaking the stale lock " + path + " of " + Holder(*seen) + ": " + stale;
        if (options.on_break) {
          options.on_break(message);
        } else {
          std::cerr << message << "\n" << std::flush;
        }
      } else if (broke.code() != StatusCode::kNotFound && broke.code() != StatusCode::kAlreadyExists) {
        drop_pending();
        return broke;
      }
      watched_key.clear();
      continue;
    }
    if (now >= deadline) {
      drop_pending();
      if (options.wait_timeout.count() == 0) {
        return Status::AlreadyExists(path, " is held by ", Holder(*seen));
      }
      return Status::IOError(path, " is held by ", Holder(*seen), "; gave up waiting after ",
                             Seconds(now - start), " (the lock wait timeout)");
    }
    const std::chrono::steady_clock::duration sleep = std::min<std::chrono::steady_clock::duration>(
        backoff + std::chrono::milliseconds(jitter() % (backoff.count() + 1)), deadline - now);
    std::this_thread::sleep_for(sleep);
    ::futimens(fd, nullptr);  // a waiter's pending record is not a dead job's leftover
    backoff = std::min(backoff * 2, std::chrono::milliseconds(200));
  }
  KillPoint("lock", path);
  files.Unlink(pending.c_str());
  KillPoint("remove", pending);
  lock->fd_ = fd;
  auto interval = options.heartbeat_interval.count() > 0 ? options.heartbeat_interval : options.stale_timeout / 6;
  lock->Heartbeat(std::max(interval, std::chrono::milliseconds(10)));
  return lock;
}

void LockFile::Heartbeat(std::chrono::milliseconds interval) {
  beat_ = std::make_unique<Beat>();
  Beat* b = beat_.get();
  const int fd = fd_;
  b->thread = std::thread([b, fd, interval] {
    std::unique_lock<std::mutex> lk(b->mu);
    while (!b->cv.wait_for(lk, interval, [b] { return b->stop; })) {
      ::futimens(fd, nullptr);  // the mtime is the heartbeat
    }
  });
}

Status LockFile::StillHeld() const {
  auto seen = Look(FileSystemOr(fs_), path_);
  if (!seen.ok()) return seen.status();
  if (!seen->exists || !seen->owner || seen->owner->token != owner_.token) {
    return Status::IOError("lost the lock ", path_, ": another process broke it (it judged it stale)",
                           seen->exists ? "; it is now held by " + Holder(*seen) : std::string());
  }
  return Status::OK();
}

Status LockFile::Release() {
  if (fd_ < 0) return Status::OK();
  if (beat_) {
    {
      std::lock_guard<std::mutex> lk(beat_->mu);
      beat_->stop = true;
    }
    beat_->cv.notify_all();
    beat_->thread.join();
    beat_.reset();
  }
  FileSystem& files = FileSystemOr(fs_);
  Status st = StillHeld();
  if (st.ok()) {
    if (files.Unlink(path_.c_str()) != 0 && errno != ENOENT) {
      st = Status::IOError("cannot remove the lock ", path_, ": ", std::strerror(errno));
    } else {
      KillPoint("remove", path_);
    }
  }
  files.Close(fd_);
  fd_ = -1;
  return st;
}

LockFile::~LockFile() { (void)Release(); }

LockInspection InspectLockFile(const std::string& path, std::chrono::milliseconds stale_timeout, FileSystem* fs) {
  LockInspection out;
  auto seen = Look(FileSystemOr(fs), path);
  if (!seen.ok()) {
    out.state = LockInspection::State::kUnknown;
    out.reason = seen.status().message();
    return out;
  }
  if (!seen->exists) return out;
  if (seen->raw.empty()) {
    out.state = LockInspection::State::kStale;
    out.reason = "an empty lock file, as older versions (flock) left it";
    return out;
  }
  if (seen->owner) out.owner = *seen->owner;
  if (seen->owner && SameHost(*seen->owner)) {
    out.reason = DeadReason(*seen->owner);
    out.state = out.reason.empty() ? LockInspection::State::kLive : LockInspection::State::kStale;
    if (out.reason.empty()) out.reason = "its process is running";
    return out;
  }
  const auto mtime = std::chrono::system_clock::time_point(
      std::chrono::duration_cast<std::chrono::system_clock::duration>(
          std::chrono::seconds(seen->st.st_mtim.tv_sec) + std::chrono::nanoseconds(seen->st.st_mtim.tv_nsec)));
  const auto age = std::chrono::system_clock::now() - mtime;
  if (age > stale_timeout) {
    out.state = LockInspection::State::kStale;
    out.reason = "its heartbeat is " + Seconds(age) + " old";
  } else {
    out.state = LockInspection::State::kUnknown;
    out.reason = "its heartbeat is recent (" + Seconds(age) + " old)";
  }
  return out;
}

Status BreakLockFile(const std::string& path, const LockOwner& seen, FileSystem* fs) {
  FileSystem& files = FileSystemOr(fs);
  auto now = Look(files, path);
  if (!now.ok()) return now.status();
  if (!now->exists) return Status::NotFound(path, ": already gone");
  if (now->raw.empty() && seen.token.empty()) return BreakIfSame(files, path, now->raw);
  if (!now->owner || now->owner->token != seen.token) {
    return Status::AlreadyExists(path, ": held by another holder now (", Holder(*now), "); not broken");
  }
  return BreakIfSame(files, path, now->raw);
}

bool IsLockLeftoverName(std::string_view name) {
  for (std::string_view mark : {std::string_view(".lock.pending-"), std::string_view(".lock.broken-")}) {
    const std::size_t at = name.rfind(mark);
    if (at == std::string_view::npos || at == 0) continue;
    const std::string_view hex = name.substr(at + mark.size());
    if (hex.size() == 32 && std::all_of(hex.begin(), hex.end(), [](char c) {
          return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
        })) {
      return true;
    }
  }
  return false;
}

}  // namespace sedpack
