// SPDX-License-Identifier: Apache-2.0
#include "hdf5/fs_driver_internal.h"

#include <fcntl.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <functional>
#include <iterator>
#include <limits>
#include <mutex>
#include <string>
#include <utility>

namespace sedpack::h5 {
namespace {

// What a file access list carries for the driver: HDF5 copies it with the list.
struct DriverInfo {
  FileSystem* fs = nullptr;
};

// HDF5 hands the driver back the H5FD_t it returned from Open; the driver's
// own state follows it (HDF5 fills in `pub` after Open returns).
struct FsFile {
  H5FD_t pub;
  FileSystem* fs;
  int fd;
  std::string name;      // as opened, for messages
  haddr_t eoa;           // end of the space HDF5 has allocated
  haddr_t eof;           // end of the file as written
  bool write_failed;     // a write or truncate failed (its error went back)
  bool abandoned;        // CloseFile gave up on it: writes are dropped
};

FsFile* Of(H5FD_t* file) { return reinterpret_cast<FsFile*>(file); }
const FsFile* Of(const H5FD_t* file) { return reinterpret_cast<const FsFile*>(file); }

// Offsets are off_t on the far side of the FileSystem.
constexpr haddr_t kMaxAddr = static_cast<haddr_t>(std::numeric_limits<std::int64_t>::max());

bool RegionOverflows(haddr_t addr, std::size_t size) {
  return addr == HADDR_UNDEF || addr > kMaxAddr || size > kMaxAddr || addr + size > kMaxAddr;
}

// Put `message` on HDF5's error stack, where h5::LastError() finds it as the
// innermost entry: the caller's Status then names the file and the errno text.
thread_local std::string t_io_error;

void Push(const char* function, hid_t minor, const std::string& message) {
  t_io_error = message;
  H5Epush2(H5E_DEFAULT, __FILE__, function, __LINE__, H5E_ERR_CLS, H5E_VFL, minor, "%s", message.c_str());
}

std::string At(const FsFile& f, const char* what, std::size_t size, haddr_t addr, int err) {
  return f.name + ": " + what + " of " + std::to_string(size) + " bytes at " + std::to_string(addr) + ": " +
         std::strerror(err);
}

void* InfoGet(H5FD_t* file) { return new DriverInfo{Of(file)->fs}; }
void* InfoCopy(const void* info) { return new DriverInfo(*static_cast<const DriverInfo*>(info)); }
herr_t InfoFree(void* info) {
  delete static_cast<DriverInfo*>(info);
  return 0;
}

H5FD_t* Open(const char* name, unsigned flags, hid_t fapl, haddr_t maxaddr) {
  if (name == nullptr || *name == '\0' || maxaddr == 0 || maxaddr == HADDR_UNDEF || maxaddr > kMaxAddr) {
    Push(__func__, H5E_BADVALUE, "invalid file name or address space");
    return nullptr;
  }
  const auto* info = static_cast<const DriverInfo*>(H5Pget_driver_info(fapl));
  FileSystem& fs = FileSystemOr(info != nullptr ? info->fs : nullptr);
  int oflags = ((flags & H5F_ACC_RDWR) != 0 ? O_RDWR : O_RDONLY) | O_CLOEXEC;
  if ((flags & H5F_ACC_TRUNC) != 0) oflags |= O_TRUNC;
  if ((flags & H5F_ACC_CREAT) != 0) oflags |= O_CREAT;
  if ((flags & H5F_ACC_EXCL) != 0) oflags |= O_EXCL;
  const int fd = fs.Open(name, oflags, 0666);
  if (fd < 0) {
    Push(__func__, H5E_CANTOPENFILE, std::string(name) + ": cannot open: " + std::strerror(errno));
    return nullptr;
  }
  FileStat st;
  if (fs.Fstat(fd, &st) != 0) {
    const int err = errno;
    fs.Close(fd);
    Push(__func__, H5E_BADFILE, std::string(name) + ": cannot stat: " + std::strerror(err));
    return nullptr;
  }
  auto* f = new FsFile{};
  f->fs = &fs;
  f->fd = fd;
  f->name = name;
  f->eof = static_cast<haddr_t>(st.size);
  return &f->pub;
}

herr_t Close(H5FD_t* file) {
  FsFile* f = Of(file);
  const int rc = f->fs->Close(f->fd);
  const int err = errno;
  const std::string name = f->name;
  delete f;
  if (rc != 0) {
    Push(__func__, H5E_CANTCLOSEFILE, name + ": cannot close: " + std::strerror(err));
    return -1;
  }
  return 0;
}

int Compare(const H5FD_t* a, const H5FD_t* b) {
  const FsFile* fa = Of(a);
  const FsFile* fb = Of(b);
  if (fa->fs != fb->fs) return std::less<const FileSystem*>()(fa->fs, fb->fs) ? -1 : 1;
  // By name, as given: resolving it costs each open more than sec2's whole
  // open, and a file opened under two names is only opened twice.
  const int c = fa->name.compare(fb->name);
  return c < 0 ? -1 : (c > 0 ? 1 : 0);
}

herr_t Query(const H5FD_t*, unsigned long* flags) {
  // The library may gather metadata and small raw data into larger blocks and
  // sieve partial reads: the FileSystem sees few, large calls (as sec2 does).
  if (flags != nullptr) {
    *flags = H5FD_FEAT_AGGREGATE_METADATA | H5FD_FEAT_ACCUMULATE_METADATA | H5FD_FEAT_DATA_SIEVE |
             H5FD_FEAT_AGGREGATE_SMALLDATA | H5FD_FEAT_DEFAULT_VFD_COMPATIBLE;
  }
  return 0;
}

haddr_t GetEoa(const H5FD_t* file, H5FD_mem_t) { return Of(file)->eoa; }

herr_t SetEoa(H5FD_t* file, H5FD_mem_t, haddr_t addr) {
  Of(file)->eoa = addr;
  return 0;
}

haddr_t GetEof(const H5FD_t* file, H5FD_mem_t) { return Of(file)->eof; }

// The handle is the driver's own state (a FileSystem descriptor is no kernel one).
herr_t GetHandle(H5FD_t* file, hid_t, void** handle) {
  if (handle == nullptr) return -1;
  *handle = Of(file);
  return 0;
}

herr_t Read(H5FD_t* file, H5FD_mem_t, hid_t, haddr_t addr, std::size_t size, void* buffer) {
  FsFile* f = Of(file);
  if (RegionOverflows(addr, size)) {
    Push(__func__, H5E_OVERFLOW, At(*f, "read", size, addr, EOVERFLOW));
    return -1;
  }
  auto* p = static_cast<unsigned char*>(buffer);
  while (size > 0) {
    const long n = f->fs->Pread(f->fd, p, size, static_cast<std::int64_t>(addr));
    if (n < 0) {
      if (errno == EINTR) continue;
      Push(__func__, H5E_READERROR, At(*f, "read", size, addr, errno));
      return -1;
    }
    if (n == 0) {
      // Past the end of the file: HDF5 expects zeros (space allocated, not yet written).
      std::memset(p, 0, size);
      break;
    }
    p += n;
    addr += static_cast<haddr_t>(n);
    size -= static_cast<std::size_t>(n);
  }
  return 0;
}

herr_t Write(H5FD_t* file, H5FD_mem_t, hid_t, haddr_t addr, std::size_t size, const void* buffer) {
  FsFile* f = Of(file);
  if (f->abandoned) return 0;
  if (RegionOverflows(addr, size)) {
    Push(__func__, H5E_OVERFLOW, At(*f, "write", size, addr, EOVERFLOW));
    return -1;
  }
  const auto* p = static_cast<const unsigned char*>(buffer);
  while (size > 0) {
    const long n = f->fs->Pwrite(f->fd, p, size, static_cast<std::int64_t>(addr));
    if (n <= 0) {
      if (n < 0 && errno == EINTR) continue;
      f->write_failed = true;
      Push(__func__, H5E_WRITEERROR, At(*f, "write", size, addr, n < 0 ? errno : EIO));
      return -1;
    }
    p += n;
    addr += static_cast<haddr_t>(n);
    size -= static_cast<std::size_t>(n);
  }
  f->eof = std::max(f->eof, addr);
  return 0;
}

herr_t Truncate(H5FD_t* file, hid_t, hbool_t) {
  FsFile* f = Of(file);
  if (f->abandoned || f->eoa == f->eof) return 0;
  if (f->fs->Ftruncate(f->fd, static_cast<std::int64_t>(f->eoa)) != 0) {
    f->write_failed = true;
    Push(__func__, H5E_SEEKERROR,
         f->name + ": cannot set the size to " + std::to_string(f->eoa) + ": " + std::strerror(errno));
    return -1;
  }
  f->eof = f->eoa;
  return 0;
}

H5FD_class_t MakeClass() {
  H5FD_class_t c{};
  c.name = "sedpack_file_system";
  c.maxaddr = kMaxAddr;
  c.fc_degree = H5F_CLOSE_WEAK;
  c.fapl_size = sizeof(DriverInfo);
  c.fapl_get = InfoGet;
  c.fapl_copy = InfoCopy;
  c.fapl_free = InfoFree;
  c.open = Open;
  c.close = Close;
  c.cmp = Compare;
  c.query = Query;
  c.get_eoa = GetEoa;
  c.set_eoa = SetEoa;
  c.get_eof = GetEof;
  c.get_handle = GetHandle;
  c.read = Read;
  c.write = Write;
  c.truncate = Truncate;
  // No lock/unlock: a FileSystem has no flock, and the readers turn HDF5's
  // locking off anyway (captures sit on shared file systems).
  const H5FD_mem_t map[H5FD_MEM_NTYPES] = H5FD_FLMAP_DICHOTOMY;
  std::copy(std::begin(map), std::end(map), std::begin(c.fl_map));
  return c;
}

const H5FD_class_t kClass = MakeClass();

}  // namespace

hid_t FileSystemDriver() {
  static std::mutex mu;
  static hid_t id = H5I_INVALID_HID;
  std::lock_guard<std::mutex> lock(mu);
  // Registered again if the library was closed and reopened (H5close) meanwhile.
  if (id < 0 || H5Iis_valid(id) <= 0) id = H5FDregister(&kClass);
  return id;
}

std::string TakeIoError() { return std::exchange(t_io_error, std::string()); }

void CloseFile(hid_t file) {
  unsigned intent = 0;
  if (H5Fget_intent(file, &intent) >= 0 && (intent & H5F_ACC_RDWR) != 0) {
    // A failure of the flush shows here, before the close, which writes more.
    H5Fflush(file, H5F_SCOPE_LOCAL);
    const hid_t fapl = H5Fget_access_plist(file);
    void* handle = nullptr;
    if (fapl >= 0 && H5Pget_driver(fapl) == FileSystemDriver() && H5Fget_vfd_handle(file, fapl, &handle) >= 0 &&
        handle != nullptr) {
      auto* f = static_cast<FsFile*>(handle);
      f->abandoned = f->write_failed;
    }
    if (fapl >= 0) H5Pclose(fapl);
    LastError();  // the flush's error, if any, went back to the caller already
  }
  H5Fclose(file);
}

Result<Handle> FileAccessFor(FileSystem* fs) {
  const hid_t driver = FileSystemDriver();
  if (driver < 0) return Status::Internal("HDF5: cannot register the file driver: ", LastError());
  Handle fapl(H5Pcreate(H5P_FILE_ACCESS));
  if (!fapl.valid()) return Status::Internal("HDF5: cannot create a file access list: ", LastError());
  const DriverInfo info{&FileSystemOr(fs)};
  if (H5Pset_driver(fapl.get(), driver, &info) < 0) {
    return Status::Internal("HDF5: cannot set the file driver: ", LastError());
  }
  return fapl;
}

}  // namespace sedpack::h5
