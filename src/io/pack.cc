// SPDX-License-Identifier: Apache-2.0
#include "sedpack/io/pack.h"
#include "io/output_folder.h"
#include "sedpack/io/file_system.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "io/beneath.h"
#include "sedpack/cancel.h"
#include "sedpack/io/file.h"
#include "io/user_output_internal.h"

namespace sedpack {
namespace {

namespace fs = std::filesystem;

constexpr char kMagic[17] = "SEDPACK-PACK\0v01";
constexpr char kEndMagic[17] = "SEDPACK-PACK-END";
constexpr std::uint64_t kAlign = 64;
constexpr std::uint64_t kFooterSize = 32;
// An index larger than this is not a pack we wrote (1M files of 1 KiB paths).
constexpr std::uint64_t kMaxIndexBytes = 1ULL << 30;

void PutU32(std::string* s, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) s->push_back(static_cast<char>(v >> (8 * i)));
}
void PutU64(std::string* s, std::uint64_t v) {
  for (int i = 0; i < 8; ++i) s->push_back(static_cast<char>(v >> (8 * i)));
}
std::uint64_t GetU64(const unsigned char* p) {
  std::uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}
std::uint32_t GetU32(const unsigned char* p) {
  std::uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

Status PRead(int fd, void* buf, std::uint64_t size, std::uint64_t offset, const std::string& what,
             FileSystem* fs = nullptr) {
  auto* p = static_cast<char*>(buf);
  while (size > 0) {
    const ssize_t n = FileSystemOr(fs).Pread(fd, p, std::min<std::uint64_t>(size, 1ULL << 30), static_cast<off_t>(offset));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return Status::IOError(what, ": short read at offset ", offset);
    p += n;
    size -= static_cast<std::uint64_t>(n);
    offset += static_cast<std::uint64_t>(n);
  }
  return Status::OK();
}

Status WriteAll(int fd, const void* buf, std::size_t size, const std::string& what) {
  const auto* p = static_cast<const char*>(buf);
  while (size > 0) {
    const ssize_t n = CurrentFileSystem().Write(fd, p, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return Status::IOError(what, ": write failed: ", std::strerror(errno));
    p += n;
    size -= static_cast<std::size_t>(n);
  }
  return Status::OK();
}

// Copy `size` bytes from `in` at `in_off` to the current position of `out`:
// in the kernel where possible (no user-space buffer, no page faults on fresh
// memory), else through a reused buffer handed to `write` (errors of reading
// name `what`; `write` names its own file). copy_file_range refuses pipes and
// devices (EINVAL), which then take the buffer.
template <typename WriteFn>
Status CopyRange(int in, std::uint64_t in_off, int out, std::uint64_t size, const std::string& what,
                 const std::string& out_path, const WriteFn& write) {
  std::int64_t off = static_cast<std::int64_t>(in_off);
  while (size > 0) {
    // In steps of 64 MiB, so that a cancellation is seen within moments.
    SEDPACK_RETURN_NOT_OK(CheckCancelled());
    const long n = CurrentFileSystem().CopyFileRange(in, &off, out, std::min<std::uint64_t>(size, 64ULL << 20));
    if (n < 0 && errno == EINTR) continue;
    // Out of space is final; anything else may just be a pair of files the
    // kernel cannot copy between, for which the buffer below is the way.
    if (n < 0 && (errno == ENOSPC || errno == EDQUOT || errno == EIO)) {
      return Status::IOError("cannot write to ", out_path, ": ", std::strerror(errno));
    }
    if (n <= 0) break;
    size -= static_cast<std::uint64_t>(n);
  }
  if (size == 0) return Status::OK();
  std::vector<char> buf(std::min<std::uint64_t>(size, 4ULL << 20));
  while (size > 0) {
    SEDPACK_RETURN_NOT_OK(CheckCancelled());
    const std::uint64_t want = std::min<std::uint64_t>(size, buf.size());
    SEDPACK_RETURN_NOT_OK(PRead(in, buf.data(), want, static_cast<std::uint64_t>(off), what));
    SEDPACK_RETURN_NOT_OK(write(buf.data(), want));
    off += static_cast<std::int64_t>(want);
    size -= want;
  }
  return Status::OK();
}

// A relative path inside the tree: no "..", ".", empty components or leading '/'.
bool SafeRelative(std::string_view p) {
  if (p.empty() || p.front() == '/' || p.size() > 4096) return false;
  std::size_t pos = 0;
  while (pos <= p.size()) {
    const std::size_t next = std::min(p.find('/', pos), p.size());
    const std::string_view part = p.substr(pos, next - pos);
    if (part.empty() || part == "." || part == ".." || part.find('\0') != std::string_view::npos) return false;
    pos = next + 1;
  }
  return true;
}

}  // namespace

PackReader::~PackReader() {
  if (fd_ >= 0) FileSystemOr(fs_).Close(fd_);
}

bool PackReader::IsPack(const std::string& path, FileSystem* fs) {
  FileSystem& files = FileSystemOr(fs);
  const int fd = files.Open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  char buf[16];
  const bool ok = files.Pread(fd, buf, 16, 0) == 16 && std::memcmp(buf, kMagic, 16) == 0;
  files.Close(fd);
  return ok;
}

Result<std::unique_ptr<PackReader>> PackReader::Open(const std::string& path, FileSystem* fs) {
  FileSystem& files = FileSystemOr(fs);
  std::unique_ptr<PackReader> r(new PackReader());
  r->path_ = path;
  r->fs_ = fs;
  r->fd_ = files.Open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (r->fd_ < 0) {
    if (errno == ENOENT) return Status::NotFound(path, ": no such file");
    return Status::IOError(path, ": cannot open: ", std::strerror(errno));
  }
  FileStat st;
  if (files.Fstat(r->fd_, &st) != 0) return Status::IOError(path, ": cannot stat");
  const std::uint64_t file_size = st.size;
  if (file_size < 16 + kFooterSize) return Status::Corruption(path, ": too small to be a pack");
  char magic[16];
  SEDPACK_RETURN_NOT_OK(PRead(r->fd_, magic, 16, 0, path, fs));
  if (std::memcmp(magic, kMagic, 16) != 0) return Status::Corruption(path, ": not a sedpack pack (bad magic)");
  unsigned char footer[kFooterSize];
  SEDPACK_RETURN_NOT_OK(PRead(r->fd_, footer, kFooterSize, file_size - kFooterSize, path, fs));
  if (std::memcmp(footer + 16, kEndMagic, 16) != 0) {
    return Status::Corruption(path, ": truncated or damaged pack (no end marker)");
  }
  const std::uint64_t index_offset = GetU64(footer), index_size = GetU64(footer + 8);
  const std::uint64_t data_end = file_size - kFooterSize;
  if (index_offset < 16 || index_offset > data_end || index_size != data_end - index_offset ||
      index_size > kMaxIndexBytes || index_size < 8) {
    return Status::Corruption(path, ": bad index position");
  }
  std::vector<unsigned char> index(index_size);
  SEDPACK_RETURN_NOT_OK(PRead(r->fd_, index.data(), index_size, index_offset, path, fs));
  const std::uint64_t count = GetU64(index.data());
  std::size_t pos = 8;
  // Each entry needs at least 21 bytes: bound the count before looping.
  if (count > (index_size - 8) / 21) return Status::Corruption(path, ": bad file count ", count);
  std::string previous;
  for (std::uint64_t i = 0; i < count; ++i) {
    if (index_size - pos < 4) return Status::Corruption(path, ": index truncated");
    const std::uint32_t len = GetU32(index.data() + pos);
    pos += 4;
    if (index_size - pos < static_cast<std::uint64_t>(len) + 16) return Status::Corruption(path, ": index truncated");
    std::string name(reinterpret_cast<const char*>(index.data() + pos), len);
    pos += len;
    PackEntry e{GetU64(index.data() + pos), GetU64(index.data() + pos + 8)};
    pos += 16;
    if (!SafeRelative(name)) return Status::Corruption(path, ": unsafe path in pack index: \"", name, "\"");
    if (!previous.empty() && name <= previous) return Status::Corruption(path, ": index not sorted at ", name);
    if (e.offset < 16 || e.offset > index_offset || e.size > index_offset - e.offset) {
      return Status::Corruption(path, ": ", name, " lies outside the data area");
    }
    previous = name;
    r->entries_.emplace(std::move(name), e);
  }
  if (pos != index_size) return Status::Corruption(path, ": trailing bytes in the index");
  return r;
}

bool PackReader::Contains(std::string_view rel) const { return entries_.count(std::string(rel)) > 0; }

Result<std::uint64_t> PackReader::Size(std::string_view rel) const {
  const auto it = entries_.find(std::string(rel));
  if (it == entries_.end()) return Status::NotFound(path_, ": no file ", rel, " in the pack");
  return it->second.size;
}

Result<std::vector<std::byte>> PackReader::Read(std::string_view rel, std::uint64_t max_bytes) const {
  const auto it = entries_.find(std::string(rel));
  if (it == entries_.end()) return Status::NotFound(path_, ": no file ", rel, " in the pack");
  if (it->second.size > max_bytes) {
    return Status::ResourceExhausted(path_, ": ", rel, " is ", it->second.size, " bytes, more than ", max_bytes);
  }
  std::vector<std::byte> out(it->second.size);
  SEDPACK_RETURN_NOT_OK(
      PRead(fd_, out.data(), out.size(), it->second.offset, path_ + ": " + std::string(rel), fs_));
  return out;
}

Result<PackSummary> PackTree(const std::string& root, const std::string& out) {
  std::error_code ec;
  if (!fs::is_directory(root, ec)) return Status::NotFound(root, ": not a folder");
  // The output path is the user's (io/user_output_internal.h): a new file is
  // written atomically, a FIFO, device or link to nothing yet is written
  // through (the pack is one sequential stream); a pack never overwrites a file.
  UserOutputOptions output_options;
  output_options.replace_existing = false;
  SEDPACK_RETURN_NOT_OK(CheckUserOutput(out, output_options));
  if (out != "-") {
    const fs::path abs_root = fs::weakly_canonical(root, ec), abs_out = fs::weakly_canonical(out, ec);
    const auto rel_out = abs_out.lexically_relative(abs_root);
    if (!rel_out.empty() && *rel_out.begin() != "..") {
      return Status::InvalidArgument(out, ": the pack cannot be written inside the tree it packs");
    }
  }
  std::vector<std::string> files;
  for (auto it = fs::recursive_directory_iterator(root, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    if (it->is_symlink()) {
      return Status::InvalidArgument(it->path().string(), ": symbolic links cannot be packed");
    }
    if (it->is_regular_file()) files.push_back(fs::relative(it->path(), root).generic_string());
  }
  if (ec) return Status::IOError(root, ": cannot list: ", ec.message());
  std::sort(files.begin(), files.end());
  SEDPACK_ASSIGN_OR_RETURN(UserOutput file, UserOutput::Open(out, output_options));
  // Standard output (or a link) may lead to a regular file inside the tree:
  // that file is the pack being written, not part of the dataset.
  struct stat out_st {};
  const bool out_regular = ::fstat(file.fd(), &out_st) == 0 && S_ISREG(out_st.st_mode);
  const auto write = [&file](const void* data, std::size_t size) { return file.Write(data, size); };
  PackSummary summary;
  SEDPACK_RETURN_NOT_OK(file.Write(kMagic, 16));
  std::uint64_t offset = 16;
  std::string index;
  PutU64(&index, files.size());
  const std::string zeros(kAlign, '\0');
  for (const std::string& rel : files) {
    SEDPACK_RETURN_NOT_OK(CheckCancelled());
    const std::uint64_t pad = (kAlign - offset % kAlign) % kAlign;
    SEDPACK_RETURN_NOT_OK(file.Write(zeros.data(), pad));
    offset += pad;
    // Links were refused while listing; opening beneath the root also covers
    // one swapped in since.
    SEDPACK_ASSIGN_OR_RETURN(BeneathFile in, OpenFileBeneath(root, rel));
    struct stat in_st {};
    if (out_regular && ::fstat(in.fd.get(), &in_st) == 0 && in_st.st_dev == out_st.st_dev &&
        in_st.st_ino == out_st.st_ino) {
      return Status::InvalidArgument(file.path(), ": the pack cannot be written inside the tree it packs (",
                                     in.path, ")");
    }
    const std::uint64_t size = in.size;
    SEDPACK_RETURN_NOT_OK(CopyRange(in.fd.get(), 0, file.fd(), size, in.path, file.path(), write));
    PutU32(&index, static_cast<std::uint32_t>(rel.size()));
    index += rel;
    PutU64(&index, offset);
    PutU64(&index, size);
    offset += size;
    summary.bytes += size;
    ++summary.files;
  }
  std::string footer;
  PutU64(&footer, offset);
  PutU64(&footer, index.size());
  footer.append(kEndMagic, 16);
  SEDPACK_RETURN_NOT_OK(CheckCancelled());
  SEDPACK_RETURN_NOT_OK(file.Write(index.data(), index.size()));
  SEDPACK_RETURN_NOT_OK(file.Write(footer.data(), footer.size()));
  SEDPACK_RETURN_NOT_OK(file.Commit());
  return summary;
}

Result<PackSummary> UnpackTree(const std::string& pack, const std::string& out) {
  SEDPACK_ASSIGN_OR_RETURN(std::unique_ptr<PackReader> r, PackReader::Open(pack));
  std::error_code ec;
  const bool existed = fs::exists(out, ec);
  if (existed && !(fs::is_directory(out, ec) && fs::is_empty(out, ec))) {
    return Status::AlreadyExists(out, " already exists; unpack into a new or empty folder");
  }
  PackSummary summary;
  Status st = [&]() -> Status {
    SEDPACK_RETURN_NOT_OK(CreateDirectories(out));
    const int in = CurrentFileSystem().Open(pack.c_str(), O_RDONLY | O_CLOEXEC);
    if (in < 0) return Status::IOError(pack, ": cannot open: ", std::strerror(errno));
    Status copied;
    for (const auto& [rel, e] : r->entries()) {
      copied = CheckCancelled();
      if (!copied.ok()) break;
      // Each file appears complete or not at all: a temporary name, then rename.
      const std::string target = JoinRoot(out, rel);
      copied = CreateDirectories(fs::path(target).parent_path().string());
      if (!copied.ok()) break;
      const std::string tmp = target + ".unpacking";
      const int fd = CurrentFileSystem().Open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
      if (fd < 0) {
        copied = Status::IOError(tmp, ": cannot create: ", std::strerror(errno));
        break;
      }
      copied = CopyRange(in, e.offset, fd, e.size, pack + ": " + rel, tmp,
                         [&](const void* data, std::size_t size) { return WriteAll(fd, data, size, tmp); });
      CurrentFileSystem().Close(fd);
      if (copied.ok() && CurrentFileSystem().Rename(tmp.c_str(), target.c_str()) != 0) {
        copied = Status::IOError(target, ": cannot rename into place: ", std::strerror(errno));
      }
      if (!copied.ok()) {
        CurrentFileSystem().Unlink(tmp.c_str());
        break;
      }
      summary.bytes += e.size;
      ++summary.files;
    }
    CurrentFileSystem().Close(in);
    SEDPACK_RETURN_NOT_OK(copied);
    return Status::OK();
  }();
  if (!st.ok()) {
    io_internal::RestoreOutputFolder(out, existed);
    return st;
  }
  return summary;
}

}  // namespace sedpack
