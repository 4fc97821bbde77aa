// SPDX-License-Identifier: Apache-2.0
#include "support/memory_fs.h"

#include <fcntl.h>
#include <linux/openat2.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <deque>

namespace sedpack::testing {

struct MemoryFileSystem::Node {
  FileType type = FileType::kRegular;
  std::vector<std::byte> data;                                  // kRegular
  std::map<std::string, std::shared_ptr<Node>> children;        // kDirectory
  std::string target;                                           // kSymlink
};

struct MemoryFileSystem::OpenFile {
  std::shared_ptr<Node> node;
  std::string path;  // canonical, for descriptors used as dirfd
  std::uint64_t offset = 0;
  int flags = 0;
  bool readable() const { return (flags & O_PATH) == 0 && (flags & O_ACCMODE) != O_WRONLY; }
  bool writable() const { return (flags & O_PATH) == 0 && (flags & O_ACCMODE) != O_RDONLY; }
};

// What Resolve found: `node` is null when only the last component is missing
// (it can then be created in `parent` under `name`).
struct MemoryFileSystem::Lookup {
  int err = 0;
  std::shared_ptr<Node> parent;
  std::string name;
  std::shared_ptr<Node> node;
  std::string path;
};

namespace {

// Components of `path` without the empty ones and ".".
std::deque<std::string> Components(std::string_view path) {
  std::deque<std::string> out;
  std::size_t start = 0;
  while (start <= path.size()) {
    const std::size_t end = std::min(path.find('/', start), path.size());
    const std::string_view part = path.substr(start, end - start);
    if (!part.empty() && part != ".") out.emplace_back(part);
    start = end + 1;
  }
  return out;
}

std::string JoinComponents(const std::vector<std::string>& parts) {
  std::string out;
  for (const std::string& p : parts) out += "/" + p;
  return out.empty() ? "/" : out;
}

int Fail(int err) {
  errno = err;
  return -1;
}

// Links followed in one lookup at most, as the kernel's MAXSYMLINKS.
constexpr int kMaxLinks = 40;

}  // namespace

MemoryFileSystem::MemoryFileSystem() : root_(std::make_shared<Node>()), next_fd_(1 << 20) {
  // Descriptors far above the kernel's, so that one passed to the kernel by
  // mistake fails (EBADF) instead of touching a real file.
  root_->type = FileType::kDirectory;
}

MemoryFileSystem::~MemoryFileSystem() = default;

std::size_t MemoryFileSystem::open_files() const {
  std::lock_guard<std::mutex> lock(mu_);
  return files_.size();
}

MemoryFileSystem::Lookup MemoryFileSystem::Resolve(const std::string& base, std::string_view path,
                                                   bool follow_last, bool beneath, bool no_symlinks) const {
  Lookup out;
  if (path.empty()) {
    out.err = ENOENT;
    return out;
  }
  std::vector<std::string> stack;
  std::vector<std::shared_ptr<Node>> nodes{root_};
  std::size_t floor = 0;
  if (path.front() == '/') {
    if (beneath) {
      out.err = EXDEV;
      return out;
    }
  } else {
    for (const std::string& part : Components(base)) {
      const auto it = nodes.back()->children.find(part);
      if (it == nodes.back()->children.end()) {
        out.err = ENOENT;
        return out;
      }
      stack.push_back(part);
      nodes.push_back(it->second);
    }
    if (beneath) floor = stack.size();
  }
  std::deque<std::string> todo = Components(path);
  int links = 0;
  while (!todo.empty()) {
    const std::string part = std::move(todo.front());
    todo.pop_front();
    const std::shared_ptr<Node>& dir = nodes.back();
    if (dir->type != FileType::kDirectory) {
      out.err = ENOTDIR;
      return out;
    }
    if (part == "..") {
      if (beneath && stack.size() <= floor) {
        out.err = EXDEV;
        return out;
      }
      if (!stack.empty()) {
        stack.pop_back();
        nodes.pop_back();
      }
      continue;
    }
    const bool last = todo.empty();
    const auto it = dir->children.find(part);
    if (it == dir->children.end()) {
      if (!last) {
        out.err = ENOENT;
        return out;
      }
      out.parent = dir;
      out.name = part;
      stack.push_back(part);
      out.path = JoinComponents(stack);
      return out;
    }
    const std::shared_ptr<Node> child = it->second;
    if (child->type == FileType::kSymlink && (!last || follow_last)) {
      if (no_symlinks || ++links > kMaxLinks) {
        out.err = ELOOP;
        return out;
      }
      if (!child->target.empty() && child->target.front() == '/') {
        if (beneath) {
          out.err = EXDEV;
          return out;
        }
        stack.clear();
        nodes.resize(1);
      }
      std::deque<std::string> more = Components(child->target);
      todo.insert(todo.begin(), more.begin(), more.end());
      continue;
    }
    if (last) {
      out.parent = dir;
      out.name = part;
      out.node = child;
      stack.push_back(part);
      out.path = JoinComponents(stack);
      return out;
    }
    stack.push_back(part);
    nodes.push_back(child);
  }
  // The path ended in a folder reached by "..", "." or a link (or is "/").
  out.node = nodes.back();
  out.parent = nodes.size() >= 2 ? nodes[nodes.size() - 2] : nullptr;
  out.name = stack.empty() ? "" : stack.back();
  out.path = JoinComponents(stack);
  return out;
}

MemoryFileSystem::OpenFile* MemoryFileSystem::FileOf(int fd) {
  const auto it = files_.find(fd);
  if (it == files_.end()) {
    errno = EBADF;
    return nullptr;
  }
  return it->second.get();
}

bool MemoryFileSystem::Find(const char* path, bool follow, Lookup* out) const {
  *out = Resolve("/", path, follow, false, false);
  if (out->err == 0 && !out->node) out->err = ENOENT;
  if (out->err == 0) return true;
  errno = out->err;
  return false;
}

int MemoryFileSystem::AddLocked(const char* path, std::shared_ptr<Node> node) {
  const Lookup l = Resolve("/", path, false, false, false);
  if (l.err != 0) return Fail(l.err);
  if (l.node) return Fail(EEXIST);
  l.parent->children[l.name] = std::move(node);
  return 0;
}

int MemoryFileSystem::OpenLocked(int dirfd, const char* path, int flags, bool beneath, bool no_symlinks) {
  std::string base = "/";
  if (dirfd != AT_FDCWD) {
    const OpenFile* dir = FileOf(dirfd);
    if (dir == nullptr) return -1;
    if (dir->node->type != FileType::kDirectory) return Fail(ENOTDIR);
    base = dir->path;
  }
  const bool exclusive = (flags & O_CREAT) != 0 && (flags & O_EXCL) != 0;
  const bool follow = (flags & O_NOFOLLOW) == 0 && !exclusive;
  Lookup l = Resolve(base, path, follow, beneath, no_symlinks);
  if (l.err != 0) return Fail(l.err);
  const bool writes = (flags & O_PATH) == 0 && (flags & O_ACCMODE) != O_RDONLY;
  if (!l.node) {
    if ((flags & O_CREAT) == 0) return Fail(ENOENT);
    l.node = std::make_shared<Node>();
    l.parent->children[l.name] = l.node;
  } else {
    if (exclusive) return Fail(EEXIST);
    if (l.node->type == FileType::kSymlink) return Fail(ELOOP);
    if ((flags & O_DIRECTORY) != 0 && l.node->type != FileType::kDirectory) return Fail(ENOTDIR);
    if (l.node->type == FileType::kDirectory && writes) return Fail(EISDIR);
    if ((flags & O_TRUNC) != 0 && writes && l.node->type == FileType::kRegular) l.node->data.clear();
  }
  const int fd = next_fd_++;
  auto file = std::make_unique<OpenFile>();
  file->node = l.node;
  file->path = l.path;
  file->flags = flags;
  files_[fd] = std::move(file);
  return fd;
}

int MemoryFileSystem::Open(const char* path, int flags, unsigned /*mode*/) {
  std::lock_guard<std::mutex> lock(mu_);
  return OpenLocked(AT_FDCWD, path, flags, false, false);
}

int MemoryFileSystem::OpenAt(int dirfd, const char* path, int flags, unsigned /*mode*/) {
  std::lock_guard<std::mutex> lock(mu_);
  return OpenLocked(dirfd, path, flags, false, false);
}

long MemoryFileSystem::OpenAt2(int dirfd, const char* path, std::uint64_t how_flags, std::uint64_t resolve) {
  std::lock_guard<std::mutex> lock(mu_);
  return OpenLocked(dirfd, path, static_cast<int>(how_flags), (resolve & RESOLVE_BENEATH) != 0,
                    (resolve & RESOLVE_NO_SYMLINKS) != 0);
}

int MemoryFileSystem::Close(int fd) {
  std::lock_guard<std::mutex> lock(mu_);
  if (files_.erase(fd) == 0) return Fail(EBADF);
  return 0;
}

long MemoryFileSystem::Read(int fd, void* buffer, std::size_t size) {
  std::lock_guard<std::mutex> lock(mu_);
  OpenFile* f = FileOf(fd);
  if (f == nullptr) return -1;
  if (!f->readable()) return Fail(EBADF);
  if (f->node->type == FileType::kDirectory) return Fail(EISDIR);
  const std::vector<std::byte>& data = f->node->data;
  const std::size_t n = f->offset >= data.size() ? 0 : std::min<std::size_t>(size, data.size() - f->offset);
  if (n > 0) std::memcpy(buffer, data.data() + f->offset, n);
  f->offset += n;
  return static_cast<long>(n);
}

long MemoryFileSystem::Pread(int fd, void* buffer, std::size_t size, std::int64_t offset) {
  std::lock_guard<std::mutex> lock(mu_);
  OpenFile* f = FileOf(fd);
  if (f == nullptr) return -1;
  if (!f->readable() || offset < 0) return Fail(offset < 0 ? EINVAL : EBADF);
  if (f->node->type == FileType::kDirectory) return Fail(EISDIR);
  const std::vector<std::byte>& data = f->node->data;
  const auto at = static_cast<std::uint64_t>(offset);
  const std::size_t n = at >= data.size() ? 0 : std::min<std::size_t>(size, data.size() - at);
  if (n > 0) std::memcpy(buffer, data.data() + at, n);
  return static_cast<long>(n);
}

long MemoryFileSystem::Write(int fd, const void* data, std::size_t size) {
  std::lock_guard<std::mutex> lock(mu_);
  OpenFile* f = FileOf(fd);
  if (f == nullptr) return -1;
  if (!f->writable()) return Fail(EBADF);
  std::vector<std::byte>& bytes = f->node->data;
  if ((f->flags & O_APPEND) != 0) f->offset = bytes.size();
  if (bytes.size() < f->offset + size) bytes.resize(f->offset + size);
  if (size > 0) std::memcpy(bytes.data() + f->offset, data, size);
  f->offset += size;
  return static_cast<long>(size);
}

long MemoryFileSystem::Pwrite(int fd, const void* data, std::size_t size, std::int64_t offset) {
  std::lock_guard<std::mutex> lock(mu_);
  OpenFile* f = FileOf(fd);
  if (f == nullptr) return -1;
  if (!f->writable() || offset < 0) return Fail(offset < 0 ? EINVAL : EBADF);
  std::vector<std::byte>& bytes = f->node->data;
  // Linux appends a pwrite to a file opened O_APPEND, whatever the offset.
  const std::size_t at = (f->flags & O_APPEND) != 0 ? bytes.size() : static_cast<std::size_t>(offset);
  if (bytes.size() < at + size) bytes.resize(at + size);
  if (size > 0) std::memcpy(bytes.data() + at, data, size);
  return static_cast<long>(size);
}

long MemoryFileSystem::CopyFileRange(int in, std::int64_t* in_offset, int out, std::size_t size) {
  std::lock_guard<std::mutex> lock(mu_);
  OpenFile* from = FileOf(in);
  OpenFile* to = FileOf(out);
  if (from == nullptr || to == nullptr) return -1;
  if (!from->readable() || !to->writable()) return Fail(EBADF);
  const std::vector<std::byte>& src = from->node->data;
  const auto at = static_cast<std::uint64_t>(*in_offset);
  const std::size_t n = at >= src.size() ? 0 : std::min<std::size_t>(size, src.size() - at);
  // A copy within one file reads what is there before it writes.
  const std::vector<std::byte> piece(src.begin() + static_cast<std::ptrdiff_t>(at),
                                     src.begin() + static_cast<std::ptrdiff_t>(at + n));
  std::vector<std::byte>& dst = to->node->data;
  if (dst.size() < to->offset + n) dst.resize(to->offset + n);
  std::copy(piece.begin(), piece.end(), dst.begin() + static_cast<std::ptrdiff_t>(to->offset));
  to->offset += n;
  *in_offset += static_cast<std::int64_t>(n);
  return static_cast<long>(n);
}

int MemoryFileSystem::Fsync(int fd) {
  std::lock_guard<std::mutex> lock(mu_);
  return FileOf(fd) == nullptr ? -1 : 0;
}

int MemoryFileSystem::Ftruncate(int fd, std::int64_t size) {
  std::lock_guard<std::mutex> lock(mu_);
  OpenFile* f = FileOf(fd);
  if (f == nullptr) return -1;
  if (!f->writable() || f->node->type != FileType::kRegular || size < 0) return Fail(EINVAL);
  f->node->data.resize(static_cast<std::size_t>(size));
  return 0;
}

int MemoryFileSystem::AdviseSequential(int fd) {
  std::lock_guard<std::mutex> lock(mu_);
  return FileOf(fd) == nullptr ? -1 : 0;
}

int MemoryFileSystem::StartWriteback(int fd, std::int64_t, std::int64_t) {
  std::lock_guard<std::mutex> lock(mu_);
  return FileOf(fd) == nullptr ? -1 : 0;
}

int MemoryFileSystem::RenameLocked(const char* from, const char* to, Rename2 how) {
  const Lookup f = Resolve("/", from, false, false, false);
  if (f.err != 0) return Fail(f.err);
  const Lookup t = Resolve("/", to, false, false, false);
  if (t.err != 0) return Fail(t.err);
  if (!f.node) return Fail(ENOENT);
  if (!f.parent || !t.parent) return Fail(EBUSY);  // the root folder itself
  if (how == Rename2::kExchange) {
    if (!t.node) return Fail(ENOENT);
    std::swap(f.parent->children[f.name], t.parent->children[t.name]);
    return 0;
  }
  if (t.node) {
    if (how == Rename2::kNoReplace) return Fail(EEXIST);
    if (t.node == f.node) return 0;
    if (f.node->type == FileType::kDirectory) {
      if (t.node->type != FileType::kDirectory) return Fail(ENOTDIR);
      if (!t.node->children.empty()) return Fail(ENOTEMPTY);
    } else if (t.node->type == FileType::kDirectory) {
      return Fail(EISDIR);
    }
  }
  if (f.node->type == FileType::kDirectory && t.path.starts_with(f.path + "/")) return Fail(EINVAL);
  const std::shared_ptr<Node> moved = f.node;
  f.parent->children.erase(f.name);
  t.parent->children[t.name] = moved;
  return 0;
}

int MemoryFileSystem::Rename(const char* from, const char* to) {
  std::lock_guard<std::mutex> lock(mu_);
  return RenameLocked(from, to, Rename2::kReplace);
}

int MemoryFileSystem::RenameExchange(const char* a, const char* b) {
  std::lock_guard<std::mutex> lock(mu_);
  return RenameLocked(a, b, Rename2::kExchange);
}

int MemoryFileSystem::RenameNoReplace(const char* from, const char* to) {
  std::lock_guard<std::mutex> lock(mu_);
  return RenameLocked(from, to, Rename2::kNoReplace);
}

int MemoryFileSystem::Link(const char* existing, const char* new_path) {
  std::lock_guard<std::mutex> lock(mu_);
  Lookup e;
  if (!Find(existing, false, &e)) return -1;
  if (e.node->type == FileType::kDirectory) return Fail(EPERM);
  return AddLocked(new_path, e.node);
}

int MemoryFileSystem::Symlink(const char* target, const char* link_path) {
  std::lock_guard<std::mutex> lock(mu_);
  auto link = std::make_shared<Node>();
  link->type = FileType::kSymlink;
  link->target = target;
  return AddLocked(link_path, std::move(link));
}

int MemoryFileSystem::Unlink(const char* path) {
  std::lock_guard<std::mutex> lock(mu_);
  Lookup l;
  if (!Find(path, false, &l)) return -1;
  if (l.node->type == FileType::kDirectory) return Fail(EISDIR);
  l.parent->children.erase(l.name);
  return 0;
}

int MemoryFileSystem::Mkdir(const char* path, unsigned /*mode*/) {
  std::lock_guard<std::mutex> lock(mu_);
  auto dir = std::make_shared<Node>();
  dir->type = FileType::kDirectory;
  return AddLocked(path, std::move(dir));
}

int MemoryFileSystem::Rmdir(const char* path) {
  std::lock_guard<std::mutex> lock(mu_);
  Lookup l;
  if (!Find(path, false, &l)) return -1;
  if (l.node->type != FileType::kDirectory) return Fail(ENOTDIR);
  if (!l.parent) return Fail(EBUSY);
  if (!l.node->children.empty()) return Fail(ENOTEMPTY);
  l.parent->children.erase(l.name);
  return 0;
}

namespace {
int Describe(const MemoryFileSystem::Node& node, FileStat* out) {
  out->type = node.type;
  out->size = node.type == FileType::kRegular ? node.data.size()
              : node.type == FileType::kSymlink ? node.target.size()
                                                : 0;
  return 0;
}
}  // namespace

int MemoryFileSystem::Stat(const char* path, FileStat* out) {
  std::lock_guard<std::mutex> lock(mu_);
  Lookup l;
  if (!Find(path, true, &l)) return -1;
  return Describe(*l.node, out);
}

int MemoryFileSystem::Lstat(const char* path, FileStat* out) {
  std::lock_guard<std::mutex> lock(mu_);
  Lookup l;
  if (!Find(path, false, &l)) return -1;
  return Describe(*l.node, out);
}

int MemoryFileSystem::Fstat(int fd, FileStat* out) {
  std::lock_guard<std::mutex> lock(mu_);
  const OpenFile* f = FileOf(fd);
  if (f == nullptr) return -1;
  return Describe(*f->node, out);
}

int MemoryFileSystem::ListDir(const char* path, std::vector<DirEntry>* entries) {
  std::lock_guard<std::mutex> lock(mu_);
  Lookup l;
  if (!Find(path, true, &l)) return -1;
  if (l.node->type != FileType::kDirectory) return Fail(ENOTDIR);
  entries->clear();
  for (const auto& [name, child] : l.node->children) entries->push_back({name, child->type});
  return 0;
}

int MemoryFileSystem::ReadLink(const char* path, std::string* target) {
  std::lock_guard<std::mutex> lock(mu_);
  Lookup l;
  if (!Find(path, false, &l)) return -1;
  if (l.node->type != FileType::kSymlink) return Fail(EINVAL);
  *target = l.node->target;
  return 0;
}

int MemoryFileSystem::RealPath(const char* path, std::string* resolved) {
  std::lock_guard<std::mutex> lock(mu_);
  Lookup l;
  if (!Find(path, true, &l)) return -1;
  *resolved = l.path;
  return 0;
}


}  // namespace sedpack::testing
