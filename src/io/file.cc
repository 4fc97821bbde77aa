// SPDX-License-Identifier: Apache-2.0
#include "sedpack/io/file.h"

#include "io/kill_point.h"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <optional>
#include <random>
#include <system_error>
#include <vector>

#include "io/beneath.h"
#include "io/file_internal.h"
#include "sedpack/io/file_system.h"

namespace sedpack {
namespace {

Status ErrnoStatus(std::string_view what, const std::string& path, int err) {
  if (err == ENOENT) return Status::NotFound(what, " ", path, ": ", std::strerror(err));
  if (err == EEXIST) return Status::AlreadyExists(what, " ", path, ": ", std::strerror(err));
  return Status::IOError(what, " ", path, ": ", std::strerror(err));
}

constexpr std::string_view kOutsideRoot = "leads outside the dataset root";

// Set when openat2 answered ENOSYS or EPERM: it is not asked again.
std::atomic<bool> g_no_openat2{false};
std::atomic<bool> g_force_fallback{false};

long OpenAt2(FileSystem& files, int dirfd, const std::string& path, int flags, std::uint64_t resolve) {
  const auto how_flags = static_cast<std::uint64_t>(flags | O_CLOEXEC);
  for (int attempt = 0;; ++attempt) {
    const long fd = files.OpenAt2(dirfd, path.c_str(), how_flags, resolve);
    if (fd >= 0) return fd;
    // EAGAIN: a rename elsewhere raced with the lookup and the kernel could not
    // be sure a ".." stayed beneath; asking again settles it.
    if (errno == EINTR || (errno == EAGAIN && attempt < 16)) continue;
    return fd;
  }
}

std::optional<std::string> Canonical(FileSystem& files, const std::string& path) {
  std::string out;
  if (files.RealPath(path.c_str(), &out) != 0) return std::nullopt;
  return out;
}

bool IsBeneathCanonical(const std::string& path, const std::string& root) {
  if (root == "/" || path == root) return true;
  return path.size() > root.size() && path.compare(0, root.size(), root) == 0 &&
         path[root.size()] == '/';
}

Status OutsideRoot(const std::string& root, const std::string& path, const std::string& resolved) {
  return Status::InvalidArgument(
      path, " ", kOutsideRoot, " ", root.empty() ? "." : root, " (",
      resolved.empty() ? "through a symbolic link, an absolute path or \"..\""
                       : "it resolves to " + resolved,
      "); not followed")
      .WithDetail(StatusDetail::kOutsideRoot);
}

// A missing component and a component that is not a folder both mean the file
// is not there.
Status OpenError(const std::string& path, int err) {
  if (err == ENOENT || err == ENOTDIR) {
    return Status::NotFound("cannot open ", path, ": ", std::strerror(err));
  }
  return ErrnoStatus("cannot open", path, err);
}

// The fallback of OpenBeneath: resolve `path` completely, compare it with the
// canonical root, then open it by its canonical path (which names no link; with
// openat2 the kernel makes sure of that, so a link swapped in meanwhile fails).
Result<FileDescriptor> OpenCanonicalBeneath(FileSystem& files, int root_fd, const std::string& root,
                                            const std::string& path, int flags, bool have_openat2) {
  const auto canonical_root = Canonical(files, root.empty() ? "." : root);
  if (!canonical_root) return OpenError(root, errno);
  const auto canonical = Canonical(files, path);
  // realpath also fails (ENOENT) for a link whose target is missing: there is
  // nothing to open, wherever the link points.
  if (!canonical) return OpenError(path, errno);
  if (!IsBeneathCanonical(*canonical, *canonical_root)) return OutsideRoot(root, path, *canonical);
  std::string rel = ".";
  if (*canonical != *canonical_root) {
    rel = canonical->substr(*canonical_root == "/" ? 1 : canonical_root->size() + 1);
  }
  long fd;
  if (have_openat2) {
    fd = OpenAt2(files, root_fd, rel, flags, RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS);
  } else {
    do {
      fd = files.OpenAt(root_fd, rel.c_str(), flags | O_CLOEXEC | O_NOFOLLOW);
    } while (fd < 0 && errno == EINTR);
  }
  if (fd < 0) {
    // A link where realpath saw none: the tree changed under us.
    if (errno == ELOOP || errno == EXDEV) return OutsideRoot(root, path, "");
    return OpenError(path, errno);
  }
  return FileDescriptor(static_cast<int>(fd), &files);
}

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

}  // namespace

FileDescriptor& FileDescriptor::operator=(FileDescriptor&& other) noexcept {
  if (this != &other) {
    Reset();
    fs_ = other.fs_;
    fd_ = other.Release();
  }
  return *this;
}

void FileDescriptor::Reset() {
  if (fd_ >= 0) FileSystemOr(fs_).Close(fd_);
  fd_ = -1;
}

namespace io_internal {
void SetOpenBeneathFallbackForTesting(bool on) { g_force_fallback.store(on); }
std::string AtomicTempName(const std::string& path) { return TempNameFor(path); }

Status WriteAll(FileSystem& files, int fd, const std::byte* data, std::size_t size, const std::string& path) {
  while (size > 0) {
    const std::size_t chunk = std::min<std::size_t>(size, 1u << 30);
    const long n = files.Write(fd, data, chunk);
    if (n < 0) {
      if (errno == EINTR) continue;
      return ErrnoStatus("cannot write", path, errno);
    }
    data += n;
    size -= static_cast<std::size_t>(n);
  }
  return Status::OK();
}
}  // namespace io_internal

Result<FileDescriptor> OpenBeneath(const std::string& root, std::string_view relative, int flags,
                                   FileSystem* fs) {
  FileSystem& files = FileSystemOr(fs);
  const std::string path = JoinRoot(root, relative);
  if (relative.find('\0') != std::string_view::npos) {
    return Status::InvalidArgument(path, ": the path contains a NUL byte");
  }
  // An absolute `relative` is absolute for openat2 but would be joined under the
  // root by realpath: refuse it up front so both ways agree.
  if (!relative.empty() && relative.front() == '/') return OutsideRoot(root, path, "");
  const std::string rel = relative.empty() ? "." : std::string(relative);
  FileDescriptor dir(files.Open(root.empty() ? "." : root.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC), &files);
  if (!dir.valid()) return OpenError(root.empty() ? "." : root, errno);
  bool have_openat2 =
      !g_no_openat2.load(std::memory_order_relaxed) && !g_force_fallback.load(std::memory_order_relaxed);
  if (have_openat2) {
    const long fd = OpenAt2(files, dir.get(), rel, flags, RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS);
    if (fd >= 0) return FileDescriptor(static_cast<int>(fd), &files);
    const int err = errno;
    if (err == EXDEV || err == ELOOP) {
      // Leaves the root, or is an absolute link (refused by RESOLVE_BENEATH even
      // when it points back inside): the canonical path decides.
      return OpenCanonicalBeneath(files, dir.get(), root, path, flags, /*have_openat2=*/true);
    }
    if (err != ENOSYS && err != EPERM) return OpenError(path, err);
    // No openat2 here (an old kernel, or a seccomp filter refusing it).
    g_no_openat2.store(true, std::memory_order_relaxed);
    have_openat2 = false;
  }
  return OpenCanonicalBeneath(files, dir.get(), root, path, flags, have_openat2);
}

Result<BeneathFile> OpenFileBeneath(const std::string& root, std::string_view relative, FileSystem* fs) {
  BeneathFile file;
  file.path = JoinRoot(root, relative);
  // O_NONBLOCK: opening a FIFO planted in a dataset must not hang (it is then
  // refused below); for regular files the flag changes nothing.
  SEDPACK_ASSIGN_OR_RETURN(file.fd, OpenBeneath(root, relative, O_RDONLY | O_NONBLOCK, fs));
  FileStat st;
  if (FileSystemOr(fs).Fstat(file.fd.get(), &st) != 0) return ErrnoStatus("cannot stat", file.path, errno);
  if (st.type != FileType::kRegular) return Status::IOError("not a regular file: ", file.path);
  file.size = st.size;
  file.mtime_ns = st.mtime_ns;
  return file;
}

Result<std::vector<std::byte>> ReadFileBytesBeneath(const std::string& root, std::string_view relative,
                                                    std::uint64_t max_bytes, FileSystem* fs) {
  SEDPACK_ASSIGN_OR_RETURN(BeneathFile file, OpenFileBeneath(root, relative, fs));
  return ReadAllBytes(file.fd.get(), file.size, file.path, max_bytes, fs);
}

Result<std::string> ReadFileTextBeneath(const std::string& root, std::string_view relative,
                                        std::uint64_t max_bytes, FileSystem* fs) {
  SEDPACK_ASSIGN_OR_RETURN(BeneathFile file, OpenFileBeneath(root, relative, fs));
  if (file.size > max_bytes) {
    return Status::ResourceExhausted("file ", file.path, " has ", file.size, " bytes, more than the limit of ",
                                     max_bytes);
  }
  // Read into the string itself: a copy from a byte vector was a second pass
  // over fresh pages, which a rerun reading a journal of tens of MB paid in
  // page faults more than in the copy.
  std::string text(static_cast<std::size_t>(file.size), '\0');
  SEDPACK_RETURN_NOT_OK(ReadFully(file.fd.get(), std::as_writable_bytes(std::span<char>(text)), file.path,
                                  std::nullopt, fs));
  return text;
}

Result<std::uint64_t> FileSizeBeneath(const std::string& root, std::string_view relative, FileSystem* fs) {
  SEDPACK_ASSIGN_OR_RETURN(BeneathFile file, OpenFileBeneath(root, relative, fs));
  return file.size;
}

Status CheckStaysBeneath(const std::string& root, std::string_view relative, FileSystem* fs) {
  const std::string path = JoinRoot(root, relative);
  if (!relative.empty() && relative.front() == '/') return OutsideRoot(root, path, "");
  // The folders on the way, without the file itself.
  std::vector<std::string_view> parts;
  for (std::size_t start = 0; start <= relative.size();) {
    const std::size_t end = std::min(relative.find('/', start), relative.size());
    const std::string_view part = relative.substr(start, end - start);
    if (!part.empty() && part != ".") parts.push_back(part);
    start = end + 1;
  }
  if (!parts.empty()) parts.pop_back();
  // From the parent upwards, the first folder that exists decides: the ones
  // below it do not exist yet and will be created inside it.
  for (std::size_t n = parts.size();; --n) {
    std::string prefix;
    for (std::size_t i = 0; i < n; ++i) {
      if (i) prefix += '/';
      prefix += parts[i];
    }
    auto dir = OpenBeneath(root, prefix, O_PATH | O_DIRECTORY, fs);
    if (dir.ok()) return Status::OK();
    if (dir.status().code() != StatusCode::kNotFound || n == 0) {
      return dir.status().WithPrefix(path + ": ");
    }
  }
}

bool IsOutsideRoot(const Status& status) {
  return status.detail() == StatusDetail::kOutsideRoot;
}

Result<std::vector<std::byte>> ReadAllBytes(int fd, std::uint64_t size, const std::string& path,
                                            std::uint64_t max_bytes, FileSystem* fs) {
  if (size > max_bytes) {
    return Status::ResourceExhausted("file ", path, " has ", size, " bytes, more than the limit of ",
                                     max_bytes);
  }
  std::vector<std::byte> out(size);
  SEDPACK_RETURN_NOT_OK(ReadFully(fd, out, path, std::nullopt, fs));
  return out;
}

Status ReadFully(int fd, std::span<std::byte> out, const std::string& path, std::optional<std::uint64_t> offset,
                 FileSystem* fs) {
  FileSystem& files = FileSystemOr(fs);
  std::size_t done = 0;
  while (done < out.size()) {
    const std::size_t chunk = std::min<std::size_t>(out.size() - done, std::size_t{1} << 30);
    const long n = offset ? files.Pread(fd, out.data() + done, chunk, static_cast<std::int64_t>(*offset + done))
                          : files.Read(fd, out.data() + done, chunk);
    if (n < 0) {
      if (errno == EINTR) continue;
      return ErrnoStatus("cannot read", path, errno);
    }
    if (n == 0) return Status::IOError("file ", path, " shrank while being read");
    done += static_cast<std::size_t>(n);
  }
  return Status::OK();
}

Result<std::vector<std::byte>> ReadFileBytes(const std::string& path, std::uint64_t max_bytes, FileSystem* fs) {
  FileSystem& files = FileSystemOr(fs);
  FileDescriptor fd(files.Open(path.c_str(), O_RDONLY | O_CLOEXEC), &files);
  if (fd.get() < 0) return ErrnoStatus("cannot open", path, errno);
  FileStat st;
  if (files.Fstat(fd.get(), &st) != 0) return ErrnoStatus("cannot stat", path, errno);
  if (st.type != FileType::kRegular) return Status::IOError("not a regular file: ", path);
  return ReadAllBytes(fd.get(), st.size, path, max_bytes, &files);
}

Result<std::string> ReadFileText(const std::string& path, std::uint64_t max_bytes, FileSystem* fs) {
  SEDPACK_ASSIGN_OR_RETURN(std::vector<std::byte> bytes, ReadFileBytes(path, max_bytes, fs));
  return std::string(reinterpret_cast<const char*>(bytes.data()), bytes.size());
}

Status WriteFileAtomic(const std::string& path, std::span<const std::byte> data,
                       const AtomicWriteOptions& options) {
  return WriteFileAtomicStreamed(path, [data](const ByteSink& sink) { return sink(data); }, options);
}

Status WriteFileAtomicStreamed(const std::string& path, const std::function<Status(const ByteSink&)>& produce,
                               const AtomicWriteOptions& options) {
  FileSystem& files = FileSystemOr(options.file_system);
  const std::filesystem::path p(path);
  if (p.has_parent_path()) SEDPACK_RETURN_NOT_OK(CreateDirectories(p.parent_path().string(), &files));
  const std::string tmp = TempNameFor(path);
  FileDescriptor fd(files.Open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644), &files);
  if (fd.get() < 0) return ErrnoStatus("cannot create", tmp, errno);
  // Pieces below 64 KiB are gathered (an index hands over one path at a time).
  constexpr std::size_t kGather = std::size_t{1} << 20;
  std::vector<std::byte> pending;
  auto flush = [&]() -> Status {
    Status w = io_internal::WriteAll(files, fd.get(), pending.data(), pending.size(), tmp);
    pending.clear();
    return w;
  };
  const ByteSink sink = [&](std::span<const std::byte> piece) -> Status {
    if (piece.size() >= (kGather >> 4)) {
      SEDPACK_RETURN_NOT_OK(flush());
      return io_internal::WriteAll(files, fd.get(), piece.data(), piece.size(), tmp);
    }
    if (pending.capacity() < kGather) pending.reserve(kGather);
    if (pending.size() + piece.size() > kGather) SEDPACK_RETURN_NOT_OK(flush());
    pending.insert(pending.end(), piece.begin(), piece.end());
    return Status::OK();
  };
  Status st = produce(sink);
  if (st.ok()) st = flush();
  if (st.ok() && options.sync && files.Fsync(fd.get()) != 0) st = ErrnoStatus("cannot fsync", tmp, errno);
  if (st.ok() && files.Close(fd.Release()) != 0) st = ErrnoStatus("cannot close", tmp, errno);
  if (st.ok()) KillPoint("write-temp", tmp);
  if (st.ok()) {
    if (options.no_replace) {
      // Create-exclusive: a rename that refuses an existing target, or where the
      // file system has none (NFS: EINVAL), link(), which fails if the target
      // exists, and then removing the temporary name.
      if (files.RenameNoReplace(tmp.c_str(), path.c_str()) != 0) {
        if (errno == EINVAL || errno == ENOSYS) {
          if (files.Link(tmp.c_str(), path.c_str()) != 0) st = ErrnoStatus("cannot create", path, errno);
          files.Unlink(tmp.c_str());
        } else {
          st = ErrnoStatus("cannot create", path, errno);
        }
      }
    } else if (files.Rename(tmp.c_str(), path.c_str()) != 0) {
      st = ErrnoStatus("cannot rename onto", path, errno);
    }
  }
  if (!st.ok()) {
    files.Unlink(tmp.c_str());
    return st;
  }
  if (options.sync && p.has_parent_path()) {
    FileDescriptor dir(files.Open(p.parent_path().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC), &files);
    // Best effort: the file is in place by now, and an error here would report
    // a write as failed that readers already see.
    if (dir.get() >= 0) files.Fsync(dir.get());
  }
  KillPoint("rename", path);
  return Status::OK();
}

Status WriteFileAtomic(const std::string& path, std::string_view text,
                       const AtomicWriteOptions& options) {
  return WriteFileAtomic(path, std::as_bytes(std::span<const char>(text.data(), text.size())),
                         options);
}

bool IsAtomicWriteTempName(std::string_view file_name) {
  return file_name.starts_with("update_") && file_name.find("_of_") != std::string_view::npos;
}

Status MoveIntoPlace(const std::string& from, const std::string& to, std::string_view what, FileSystem* fs) {
  FileSystem& files = FileSystemOr(fs);
  const std::string prefix = what.empty() ? std::string() : std::string(what) + ": ";
  {
    FileDescriptor fd(files.Open(from.c_str(), O_RDONLY | O_CLOEXEC), &files);
    if (!fd.valid()) return ErrnoStatus(prefix + "cannot open", from, errno);
    if (files.Fsync(fd.get()) != 0) return ErrnoStatus(prefix + "cannot fsync", from, errno);
  }
  if (files.Rename(from.c_str(), to.c_str()) != 0) {
    return Status::IOError(prefix, "cannot rename ", from, " to ", to, ": ", std::strerror(errno));
  }
  const std::filesystem::path parent = std::filesystem::path(to).parent_path();
  const std::string dir_path = parent.empty() ? "." : parent.string();
  FileDescriptor dir(files.Open(dir_path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC), &files);
  // Best effort, as in WriteFileAtomic: the file is in place by now, and an
  // error here would report as failed a write that readers already see.
  if (dir.valid()) files.Fsync(dir.get());
  return Status::OK();
}

Status CreateDirectories(const std::string& path, FileSystem* fs) {
  FileSystem& files = FileSystemOr(fs);
  // mkdir of every missing component, parents first; one that exists (made by
  // someone else meanwhile, too) is fine if it is a folder.
  std::vector<std::string> missing;
  std::filesystem::path p = std::filesystem::path(path).lexically_normal();
  while (!p.empty() && p != p.root_path()) {
    FileStat st;
    if (files.Stat(p.c_str(), &st) == 0) {
      if (st.type != FileType::kDirectory) return Status::IOError("cannot create folder ", path, ": ", p.string(), " is not a folder");
      break;
    }
    if (errno != ENOENT) return ErrnoStatus("cannot create folder", path, errno);
    if (p.filename().empty()) {  // a trailing '/'
      p = p.parent_path();
      continue;
    }
    missing.push_back(p.string());
    p = p.parent_path();
  }
  // One kill point when `path` itself is made: however the threads of a job
  // (or the ranks, for shared parents) race to make the same folders, each
  // folder a job asks for is made once, so its count of disk changes is fixed.
  for (std::size_t i = missing.size(); i-- > 0;) {
    if (files.Mkdir(missing[i].c_str(), 0777) == 0) {
      if (i == 0) KillPoint("mkdir", path);
    } else if (errno != EEXIST) {
      return ErrnoStatus("cannot create folder", missing[i], errno);
    }
  }
  return Status::OK();
}

Status RemoveTree(const std::string& path, FileSystem* fs) {
  FileSystem& files = FileSystemOr(fs);
  FileStat st;
  if (files.Lstat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return Status::OK();
    return ErrnoStatus("cannot remove", path, errno);
  }
  if (st.type == FileType::kDirectory) {
    std::vector<DirEntry> entries;
    if (files.ListDir(path.c_str(), &entries) != 0) {
      return Status::IOError("cannot list ", path, ": ", std::strerror(errno));
    }
    for (const DirEntry& e : entries) SEDPACK_RETURN_NOT_OK(RemoveTree(JoinRoot(path, e.name), &files));
    if (files.Rmdir(path.c_str()) != 0 && errno != ENOENT) return ErrnoStatus("cannot remove", path, errno);
  } else if (files.Unlink(path.c_str()) != 0 && errno != ENOENT) {
    return ErrnoStatus("cannot remove", path, errno);
  }
  return Status::OK();
}

bool PathExists(const std::string& path, FileSystem* fs) { return FileSystemOr(fs).Exists(path.c_str()); }

bool IsDirectory(const std::string& path, FileSystem* fs) {
  FileStat st;
  return FileSystemOr(fs).Stat(path.c_str(), &st) == 0 && st.type == FileType::kDirectory;
}

bool IsRegularFile(const std::string& path, FileSystem* fs) {
  FileStat st;
  return FileSystemOr(fs).Stat(path.c_str(), &st) == 0 && st.type == FileType::kRegular;
}

bool IsEmptyDirectory(const std::string& path, FileSystem* fs) {
  std::vector<DirEntry> entries;
  return FileSystemOr(fs).ListDir(path.c_str(), &entries) == 0 && entries.empty();
}

Result<std::uint64_t> FileSize(const std::string& path, FileSystem* fs) {
  FileStat st;
  if (FileSystemOr(fs).Stat(path.c_str(), &st) != 0) return ErrnoStatus("cannot stat", path, errno);
  if (st.type != FileType::kRegular) return Status::IOError("not a regular file: ", path);
  return st.size;
}

Result<std::vector<DirEntry>> ListDirectory(const std::string& path, FileSystem* fs) {
  std::vector<DirEntry> entries;
  if (FileSystemOr(fs).ListDir(path.c_str(), &entries) != 0) return ErrnoStatus("cannot list", path, errno);
  return entries;
}

std::string WeaklyCanonical(const std::string& path, FileSystem* fs) {
  FileSystem& files = FileSystemOr(fs);
  // As std::filesystem::weakly_canonical: ".." in the part that exists is
  // resolved by the file system (after links), in the rest lexically.
  std::filesystem::path head(path);
  std::filesystem::path tail;
  for (;;) {
    std::string resolved;
    if (files.RealPath(head.c_str(), &resolved) == 0) {
      return (tail.empty() ? std::filesystem::path(resolved) : std::filesystem::path(resolved) / tail)
          .lexically_normal()
          .string();
    }
    if (!head.has_relative_path()) return std::filesystem::path(path).lexically_normal().string();
    tail = tail.empty() ? head.filename() : head.filename() / tail;
    head = head.parent_path();
  }
}

Result<std::string> ReadSymlink(const std::string& path, FileSystem* fs) {
  std::string target;
  if (FileSystemOr(fs).ReadLink(path.c_str(), &target) != 0) {
    return Status::IOError("cannot read the link ", path, ": ", std::strerror(errno));
  }
  return target;
}

namespace {
Status WalkFolder(FileSystem& files, const std::string& root, const std::string& relative, int depth,
                  const std::function<Status(const TreeEntry&, bool*)>& visit) {
  const std::string folder = relative.empty() ? root : JoinRoot(root, relative);
  std::vector<DirEntry> entries;
  if (files.ListDir(folder.c_str(), &entries) != 0) return ErrnoStatus("cannot list", folder, errno);
  for (DirEntry& e : entries) {
    TreeEntry entry{relative.empty() ? std::move(e.name) : relative + "/" + e.name, e.type, depth};
    bool descend = true;
    SEDPACK_RETURN_NOT_OK(visit(entry, &descend));
    if (entry.type == FileType::kDirectory && descend) {
      SEDPACK_RETURN_NOT_OK(WalkFolder(files, root, entry.relative, depth + 1, visit));
    }
  }
  return Status::OK();
}
}  // namespace

Status WalkTree(const std::string& root, const std::function<Status(const TreeEntry&, bool* descend)>& visit,
                FileSystem* fs) {
  return WalkFolder(FileSystemOr(fs), root, "", 0, visit);
}

std::string JoinRoot(const std::string& root, std::string_view relative) {
  if (root.empty()) return std::string(relative);
  std::string out = root;
  if (out.back() != '/') out += '/';
  out += relative;
  return out;
}

}  // namespace sedpack
