// SPDX-License-Identifier: Apache-2.0
// An exclusive lock that works across the hosts of a cluster: a lock file
// created atomically, naming its owner, kept fresh by a heartbeat while held.
//
// Why a file created by link() and not flock/fcntl: flock(2) is not coherent
// between NFS clients (Linux emulates it with fcntl locks over NFS, other
// clients and older kernels do not see it at all), fcntl(2) locks on NFSv3
// depend on lockd/statd being up on every client and the server, and on Lustre
// or GPFS they need a mount option (flock / localflock) that sites often leave
// off, so either may silently lock nothing. Creating a name that must not
// exist is atomic on every file system we meet (local, NFSv3/v4, Lustre,
// GPFS): the owner's record is written to a private temporary file first and
// then link()ed to the lock name, which fails with EEXIST if the lock is held,
// so a lock file is never seen half written (the classic NFS-safe lock; a
// link() whose reply was lost is recognised by the temporary's link count).
//
// A lock whose owner died stays on disk, so every waiter decides whether it is
// stale:
//   * same host (same host name and boot id): stale if the owner's pid is not
//     alive or is now another process (its start time differs);
//   * another host: stale if its heartbeat (the file's mtime, which the holder
//     touches every heartbeat_interval) has not changed for stale_timeout as
//     observed by the waiter's own monotonic clock, so clocks that differ
//     between hosts do not matter.
// A stale lock is broken race-free: it is renamed to a unique name (only one
// breaker can win that rename), the renamed file is checked to be the very lock
// judged stale (same token), and only then removed; had a new holder taken the
// lock in between, its file is linked back. Breaking prints a line on stderr
// naming the lock and its owner. A waiter retries with exponential backoff (5 ms
// doubling up to 200 ms, plus jitter) until its wait timeout.
// Project-private (src/io, not installed).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "sedpack/io/file_system.h"
#include "sedpack/status.h"

namespace sedpack {

/// Who holds a lock (the lock file's content).
struct LockOwner {
  std::string token;    ///< random, unique to one acquisition
  std::string host;     ///< host name
  std::string boot_id;  ///< /proc/sys/kernel/random/boot_id ("" if unknown)
  long pid = 0;
  std::uint64_t pid_start = 0;  ///< start time of pid in clock ticks since boot (0 if unknown)
  std::string job;              ///< SLURM_JOB_ID (with _SLURM_ARRAY_TASK_ID) if set, else ""
  std::int64_t started = 0;     ///< wall clock, seconds since the epoch, when taken
};

/// "host H pid P (job J, taken at <UTC time>)".
std::string DescribeLockOwner(const LockOwner& owner);

/// Options for LockFile::Acquire.
struct LockFileOptions {
  /// How long to wait for a live holder in total; then an error naming the
  /// holder. Zero: try once.
  std::chrono::milliseconds wait_timeout{std::chrono::minutes(10)};
  /// A holder on another host whose heartbeat did not change for this long is
  /// dead.
  std::chrono::milliseconds stale_timeout{std::chrono::seconds(60)};
  /// How often the holder refreshes its heartbeat; 0 = stale_timeout / 6.
  std::chrono::milliseconds heartbeat_interval{0};
  /// What the owner record calls the job; empty: from SLURM_JOB_ID.
  std::string job;
  /// Where a message about a broken stale lock goes; null = stderr.
  std::function<void(const std::string&)> on_break;
  /// The FileSystem the lock file is made, read and removed through (nullptr:
  /// CurrentFileSystem()).
  FileSystem* file_system = nullptr;
};

/// A held lock. Releasing it (Release or the destructor) removes the lock file
/// if it is still this holder's.
class LockFile {
 public:
  /// Take the lock at `path` (its folder must exist). On timeout: IOError
  /// "<path> is held by host ... pid ... ; gave up after N s". With a zero
  /// wait_timeout a held lock gives AlreadyExists naming the holder.
  static Result<std::unique_ptr<LockFile>> Acquire(const std::string& path, const LockFileOptions& options);
  ~LockFile();
  LockFile(const LockFile&) = delete;
  LockFile& operator=(const LockFile&) = delete;

  /// OK if the lock file at path() is still this holder's (it was not broken
  /// by someone who wrongly judged it stale). Reads the file, so that on NFS
  /// close-to-open consistency makes the answer current.
  Status StillHeld() const;
  /// Stop the heartbeat and remove the lock file (if still ours).
  Status Release();

  const std::string& path() const { return path_; }
  const LockOwner& owner() const { return owner_; }
  /// The FileSystem it was taken through (LockFileOptions::file_system).
  FileSystem* file_system() const { return fs_; }

 private:
  LockFile() = default;
  void Heartbeat(std::chrono::milliseconds interval);
  struct Beat;
  std::string path_;
  LockOwner owner_;
  int fd_ = -1;
  FileSystem* fs_ = nullptr;  // LockFileOptions::file_system
  std::unique_ptr<Beat> beat_;
};

/// What a look at a lock file found (for `sedpack fix`).
struct LockInspection {
  enum class State {
    kAbsent,
    kLive,     ///< same host, the owner process is alive
    kUnknown,  ///< another host (or an unreadable record) with a recent heartbeat: presumed live
    kStale,    ///< provably dead: same host and the pid is gone, or the heartbeat is older than the stale timeout
  };
  State state = State::kAbsent;
  LockOwner owner;
  std::string reason;  ///< why it is stale, or why it is presumed live
};

/// Look at the lock at `path` once, without waiting. A lock of another host
/// counts as stale when its mtime is older than `stale_timeout` by this host's
/// wall clock (a one-shot look cannot watch the heartbeat; cluster clocks are
/// kept in step far closer than any sensible timeout).
LockInspection InspectLockFile(const std::string& path, std::chrono::milliseconds stale_timeout,
                               FileSystem* fs = nullptr);

/// Break the lock at `path` if it is still the one `seen` describes (same
/// token), race-free as above. NotFound if it is gone, AlreadyExists if another
/// lock is there now.
Status BreakLockFile(const std::string& path, const LockOwner& seen, FileSystem* fs = nullptr);

/// True for the names lock handling leaves for a moment beside a lock
/// "<name>.lock" ("<name>.lock.pending-<32hex>" before the link,
/// "<name>.lock.broken-<32hex>" while a stale lock is broken): what a process
/// killed at that moment leaves behind.
bool IsLockLeftoverName(std::string_view file_name);

}  // namespace sedpack
