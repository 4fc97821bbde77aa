// SPDX-License-Identifier: Apache-2.0
// The HDF5 file driver over a FileSystem (src/hdf5/fs_driver_internal.h):
// files live wholly on the FileSystem given (an in-memory one here, so a
// byte reaching the disk would show), reads past the end give zeros, the
// size follows HDF5's end of allocation on truncate, and an errno from the
// FileSystem comes back naming the file with errno's text.
#include <gtest/gtest.h>

#include <fcntl.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "hdf5/fs_driver_internal.h"
#include "hdf5/h5_internal.h"
#include "support/fault_fs.h"
#include "support/memory_fs.h"
#include "support/test_support.h"

namespace sedpack {
namespace {

using h5::Handle;
using testing::FaultFileSystem;
using testing::FaultOp;
using testing::FaultPlan;
using testing::MemoryFileSystem;

// A file of one int32 dataset "/v" of `n` values 0, 3, 6, ... made through `fs`.
Status WriteFile(FileSystem* fs, const std::string& path, hsize_t n) {
  h5::SilenceLibraryErrors();
  SEDPACK_ASSIGN_OR_RETURN(Handle fapl, h5::FileAccessFor(fs));
  Handle file(H5Fcreate(path.c_str(), H5F_ACC_EXCL, H5P_DEFAULT, fapl.get()));
  if (!file.valid()) return Status::IOError("create: ", h5::LastError());
  std::vector<std::int32_t> v(n);
  for (hsize_t i = 0; i < n; ++i) v[i] = static_cast<std::int32_t>(3 * i);
  Handle space(H5Screate_simple(1, &n, nullptr));
  Handle dset(H5Dcreate2(file.get(), "/v", H5T_NATIVE_INT32, space.get(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
  if (!dset.valid()) return Status::IOError("dataset: ", h5::LastError());
  if (H5Dwrite(dset.get(), H5T_NATIVE_INT32, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data()) < 0) {
    return Status::IOError("write: ", h5::LastError());
  }
  dset = Handle();
  if (H5Fflush(file.get(), H5F_SCOPE_GLOBAL) < 0) return Status::IOError("flush: ", h5::LastError());
  return Status::OK();
}

TEST(Hdf5FsDriver, CreatesWritesReopensAndReadsOnTheFileSystemGiven) {
  MemoryFileSystem memory;
  ASSERT_EQ(memory.Mkdir("/d", 0755), 0);
  ASSERT_OK(WriteFile(&memory, "/d/a.h5", 1000));
  EXPECT_EQ(memory.open_files(), 0u);
  FileStat st;
  ASSERT_EQ(memory.Stat("/d/a.h5", &st), 0);
  EXPECT_GT(st.size, 4000u);
  EXPECT_FALSE(std::filesystem::exists("/d/a.h5"));  // nothing went to the disk

  ASSERT_OK_AND_ASSIGN(Handle file, h5::OpenFile("/d/a.h5", &memory));
  Handle dset(H5Dopen2(file.get(), "/v", H5P_DEFAULT));
  ASSERT_TRUE(dset.valid());
  std::vector<std::int32_t> back(1000);
  ASSERT_GE(H5Dread(dset.get(), H5T_NATIVE_INT32, H5S_ALL, H5S_ALL, H5P_DEFAULT, back.data()), 0);
  for (int i = 0; i < 1000; ++i) ASSERT_EQ(back[i], 3 * i) << i;
  dset = Handle();
  file = Handle();
  EXPECT_EQ(memory.open_files(), 0u);
}

TEST(Hdf5FsDriver, ReadsPastTheEndAsZerosAndTruncatesToTheAllocatedEnd) {
  MemoryFileSystem memory;
  ASSERT_OK_AND_ASSIGN(Handle fapl, h5::FileAccessFor(&memory));
  H5FD_t* f = H5FDopen("/raw", H5F_ACC_RDWR | H5F_ACC_CREAT | H5F_ACC_TRUNC, fapl.get(), static_cast<haddr_t>(INT64_MAX));
  ASSERT_NE(f, nullptr) << h5::LastError();
  EXPECT_EQ(H5FDget_eof(f, H5FD_MEM_DRAW), 0u);
  ASSERT_GE(H5FDset_eoa(f, H5FD_MEM_DRAW, 100), 0);
  const char text[] = "0123456789";
  ASSERT_GE(H5FDwrite(f, H5FD_MEM_DRAW, H5P_DEFAULT, 0, 10, text), 0);
  EXPECT_EQ(H5FDget_eof(f, H5FD_MEM_DRAW), 10u);
  std::vector<char> back(100, 'x');
  ASSERT_GE(H5FDread(f, H5FD_MEM_DRAW, H5P_DEFAULT, 0, back.size(), back.data()), 0);
  EXPECT_EQ(std::string(back.data(), 10), "0123456789");
  for (std::size_t i = 10; i < back.size(); ++i) ASSERT_EQ(back[i], '\0') << i;

  ASSERT_GE(H5FDtruncate(f, H5P_DEFAULT, false), 0);
  FileStat st;
  ASSERT_EQ(memory.Stat("/raw", &st), 0);
  EXPECT_EQ(st.size, 100u);
  ASSERT_GE(H5FDset_eoa(f, H5FD_MEM_DRAW, 4), 0);
  ASSERT_GE(H5FDtruncate(f, H5P_DEFAULT, true), 0);
  ASSERT_EQ(memory.Stat("/raw", &st), 0);
  EXPECT_EQ(st.size, 4u);
  EXPECT_EQ(H5FDget_eof(f, H5FD_MEM_DRAW), 4u);
  ASSERT_GE(H5FDclose(f), 0);
  EXPECT_EQ(memory.open_files(), 0u);
}

TEST(Hdf5FsDriver, AFullDiskComesBackNamingTheFileAndTheErrno) {
  MemoryFileSystem memory;
  FaultFileSystem full(FaultPlan{FaultOp::kWrite, 1, ENOSPC, /*sticky=*/true}, &memory);
  const Status st = WriteFile(&full, "/full.h5", 100000);
  ASSERT_FALSE(st.ok());
  EXPECT_TRUE(full.fired());
  EXPECT_NE(st.message().find("/full.h5"), std::string::npos) << st.ToString();
  EXPECT_NE(st.message().find(std::strerror(ENOSPC)), std::string::npos) << st.ToString();
  EXPECT_EQ(memory.open_files(), 0u);
}

TEST(Hdf5FsDriver, AReadErrorComesBackAsAnIOErrorNamingTheFile) {
  MemoryFileSystem memory;
  ASSERT_OK(WriteFile(&memory, "/r.h5", 10));
  FaultFileSystem broken(FaultPlan{FaultOp::kRead, 1, EIO, /*sticky=*/true}, &memory);
  auto opened = h5::OpenFile("/r.h5", &broken);
  ASSERT_FALSE(opened.ok());
  EXPECT_EQ(opened.status().code(), StatusCode::kIOError) << opened.status().ToString();
  EXPECT_NE(opened.status().message().find("/r.h5"), std::string::npos) << opened.status().ToString();
  EXPECT_NE(opened.status().message().find(std::strerror(EIO)), std::string::npos) << opened.status().ToString();
  EXPECT_EQ(memory.open_files(), 0u);
}

TEST(Hdf5FsDriver, OpenTellsAMissingFileFromOneThatIsNotHdf5) {
  MemoryFileSystem memory;
  const int fd = memory.Open("/text", O_WRONLY | O_CREAT, 0644);
  ASSERT_GE(fd, 0);
  const std::string junk(4096, 'j');
  ASSERT_EQ(memory.Write(fd, junk.data(), junk.size()), static_cast<long>(junk.size()));
  memory.Close(fd);
  auto text = h5::OpenFile("/text", &memory);
  ASSERT_FALSE(text.ok());
  EXPECT_EQ(text.status().code(), StatusCode::kInvalidArgument) << text.status().ToString();
  EXPECT_NE(text.status().message().find("not an HDF5 file"), std::string::npos) << text.status().ToString();
  auto missing = h5::OpenFile("/nothing.h5", &memory);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound) << missing.status().ToString();
  EXPECT_EQ(memory.open_files(), 0u);
}

}  // namespace
}  // namespace sedpack
