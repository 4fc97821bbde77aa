// SPDX-License-Identifier: Apache-2.0
// The FileSystem interface (sedpack/io/file_system.h): the in-memory file
// system the tests run jobs on, the forwarding base, and the careful file
// functions of sedpack/io/file.h on top of both.
#include "sedpack/io/file_system.h"

#include <gtest/gtest.h>
#include <fcntl.h>

#include <cerrno>
#include <string>
#include <vector>

#include "io/beneath.h"
#include "io/file_internal.h"
#include "sedpack/io/file.h"
#include "support/fault_fs.h"
#include "support/memory_fs.h"
#include "support/test_support.h"

namespace sedpack {
namespace {

using testing::FaultFileSystem;
using testing::FaultOp;
using testing::FaultPlan;
using testing::MemoryFileSystem;

std::string Text(const std::vector<std::byte>& bytes) {
  return std::string(reinterpret_cast<const char*>(bytes.data()), bytes.size());
}

std::vector<std::string> Names(const std::vector<DirEntry>& entries) {
  std::vector<std::string> out;
  for (const DirEntry& e : entries) out.push_back(e.name);
  return out;
}

TEST(MemoryFileSystemTest, FilesAndFoldersFollowPosix) {
  MemoryFileSystem m;
  EXPECT_EQ(m.Mkdir("/a", 0777), 0);
  EXPECT_EQ(m.Mkdir("/a", 0777), -1);
  EXPECT_EQ(errno, EEXIST);
  EXPECT_EQ(m.Mkdir("/x/y", 0777), -1);
  EXPECT_EQ(errno, ENOENT);

  const int fd = m.Open("/a/f", O_WRONLY | O_CREAT | O_EXCL, 0644);
  ASSERT_GE(fd, 0);
  EXPECT_EQ(m.Write(fd, "hello", 5), 5);
  EXPECT_EQ(m.Read(fd, nullptr, 0), -1);  // write-only
  EXPECT_EQ(errno, EBADF);
  EXPECT_EQ(m.Close(fd), 0);
  EXPECT_EQ(m.Close(fd), -1);
  EXPECT_EQ(m.Open("/a/f", O_WRONLY | O_CREAT | O_EXCL, 0644), -1);
  EXPECT_EQ(errno, EEXIST);

  FileStat st;
  ASSERT_EQ(m.Stat("/a/f", &st), 0);
  EXPECT_EQ(st.type, FileType::kRegular);
  EXPECT_EQ(st.size, 5u);
  ASSERT_EQ(m.Stat("/a", &st), 0);
  EXPECT_EQ(st.type, FileType::kDirectory);
  EXPECT_TRUE(m.Exists("/a/f"));
  EXPECT_FALSE(m.Exists("/a/g"));
  EXPECT_EQ(m.Stat("/a/f/g", &st), -1);
  EXPECT_EQ(errno, ENOTDIR);

  const int r = m.Open("/a/f", O_RDONLY);
  char buf[8] = {};
  EXPECT_EQ(m.Pread(r, buf, sizeof(buf), 1), 4);
  EXPECT_EQ(std::string(buf, 4), "ello");
  EXPECT_EQ(m.Read(r, buf, 2), 2);
  EXPECT_EQ(m.Read(r, buf + 2, 8), 3);
  EXPECT_EQ(m.Read(r, buf, 8), 0);
  EXPECT_EQ(std::string(buf, 5), "hello");
  ASSERT_EQ(m.Fstat(r, &st), 0);
  EXPECT_EQ(st.size, 5u);
  EXPECT_EQ(m.Close(r), 0);
  EXPECT_EQ(m.open_files(), 0u);

  EXPECT_EQ(m.Rmdir("/a"), -1);
  EXPECT_EQ(errno, ENOTEMPTY);
  EXPECT_EQ(m.Unlink("/a"), -1);
  EXPECT_EQ(errno, EISDIR);
  EXPECT_EQ(m.Unlink("/a/f"), 0);
  EXPECT_EQ(m.Rmdir("/a"), 0);
  EXPECT_FALSE(m.Exists("/a"));
}

TEST(MemoryFileSystemTest, RenamesLinksAndListing) {
  MemoryFileSystem m;
  ASSERT_EQ(m.Mkdir("/d", 0777), 0);
  for (const char* p : {"/d/b", "/d/a", "/d/c"}) {
    const int fd = m.Open(p, O_WRONLY | O_CREAT, 0644);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(m.Write(fd, p, 4), 4);
    ASSERT_EQ(m.Close(fd), 0);
  }
  ASSERT_EQ(m.Mkdir("/d/sub", 0777), 0);
  ASSERT_EQ(m.Symlink("sub", "/d/link"), 0);
  std::vector<DirEntry> entries;
  ASSERT_EQ(m.ListDir("/d", &entries), 0);
  EXPECT_EQ(Names(entries), (std::vector<std::string>{"a", "b", "c", "link", "sub"}));
  EXPECT_EQ(entries[3].type, FileType::kSymlink);
  EXPECT_EQ(entries[4].type, FileType::kDirectory);
  ASSERT_EQ(m.ListDir("/d/link", &entries), 0);  // the link is followed
  EXPECT_TRUE(entries.empty());

  std::string target;
  ASSERT_EQ(m.ReadLink("/d/link", &target), 0);
  EXPECT_EQ(target, "sub");
  EXPECT_EQ(m.ReadLink("/d/a", &target), -1);
  EXPECT_EQ(errno, EINVAL);
  FileStat st;
  ASSERT_EQ(m.Lstat("/d/link", &st), 0);
  EXPECT_EQ(st.type, FileType::kSymlink);
  ASSERT_EQ(m.Stat("/d/link", &st), 0);
  EXPECT_EQ(st.type, FileType::kDirectory);
  ASSERT_EQ(m.RealPath("/d/link/../a", &target), 0);
  EXPECT_EQ(target, "/d/a");

  EXPECT_EQ(m.RenameNoReplace("/d/a", "/d/b"), -1);
  EXPECT_EQ(errno, EEXIST);
  EXPECT_EQ(m.Rename("/d/a", "/d/b"), 0);
  EXPECT_FALSE(m.Exists("/d/a"));
  EXPECT_EQ(Text(ReadFileBytes("/d/b", 1 << 20, &m).value()), "/d/a");
  EXPECT_EQ(m.RenameExchange("/d/b", "/d/c"), 0);
  EXPECT_EQ(Text(ReadFileBytes("/d/b", 1 << 20, &m).value()), "/d/c");
  EXPECT_EQ(m.Rename("/d", "/d/sub/inside"), -1);
  EXPECT_EQ(errno, EINVAL);

  ASSERT_EQ(m.Link("/d/b", "/d/hard"), 0);
  ASSERT_EQ(m.Unlink("/d/b"), 0);
  EXPECT_EQ(Text(ReadFileBytes("/d/hard", 1 << 20, &m).value()), "/d/c");
  EXPECT_EQ(m.Link("/d/sub", "/d/dirlink"), -1);
  EXPECT_EQ(errno, EPERM);
}

TEST(MemoryFileSystemTest, OpenAt2StaysBeneath) {
  MemoryFileSystem m;
  ASSERT_TRUE(CreateDirectories("/root/in", &m).ok());
  ASSERT_TRUE(WriteFileAtomic("/root/in/f", std::string_view("inside"), {.file_system = &m}).ok());
  ASSERT_TRUE(WriteFileAtomic("/secret", std::string_view("outside"), {.file_system = &m}).ok());
  ASSERT_EQ(m.Symlink("../secret", "/root/up"), 0);
  ASSERT_EQ(m.Symlink("/root/in/f", "/root/abs_in"), 0);
  ASSERT_EQ(m.Symlink("in/f", "/root/rel_in"), 0);

  EXPECT_EQ(Text(ReadFileBytesBeneath("/root", "in/f", 100, &m).value()), "inside");
  EXPECT_EQ(Text(ReadFileBytesBeneath("/root", "rel_in", 100, &m).value()), "inside");
  // An absolute link back inside is refused by RESOLVE_BENEATH and then
  // allowed by the canonical comparison, as on the kernel.
  EXPECT_EQ(Text(ReadFileBytesBeneath("/root", "abs_in", 100, &m).value()), "inside");
  for (const char* rel : {"up", "../secret", "/secret", "in/../../secret"}) {
    const auto r = ReadFileBytesBeneath("/root", rel, 100, &m);
    ASSERT_FALSE(r.ok()) << rel;
    EXPECT_TRUE(IsOutsideRoot(r.status())) << rel << ": " << r.status().ToString();
  }
  EXPECT_EQ(ReadFileBytesBeneath("/root", "missing", 100, &m).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(ReadFileBytesBeneath("/root", "in", 100, &m).status().code(), StatusCode::kIOError);
  EXPECT_TRUE(CheckStaysBeneath("/root", "in/new/file", &m).ok());
  EXPECT_TRUE(IsOutsideRoot(CheckStaysBeneath("/root", "up/file", &m)));
  EXPECT_EQ(m.open_files(), 0u);
}

TEST(MemoryFileSystemTest, FallbackWithoutOpenAt2StaysBeneath) {
  MemoryFileSystem m;
  ASSERT_TRUE(WriteFileAtomic("/root/in/f", std::string_view("inside"), {.file_system = &m}).ok());
  ASSERT_TRUE(WriteFileAtomic("/secret", std::string_view("outside"), {.file_system = &m}).ok());
  ASSERT_EQ(m.Symlink("/secret", "/root/out"), 0);
  io_internal::SetOpenBeneathFallbackForTesting(true);
  EXPECT_EQ(Text(ReadFileBytesBeneath("/root", "in/f", 100, &m).value()), "inside");
  EXPECT_TRUE(IsOutsideRoot(ReadFileBytesBeneath("/root", "out", 100, &m).status()));
  io_internal::SetOpenBeneathFallbackForTesting(false);
  EXPECT_EQ(m.open_files(), 0u);
}

TEST(MemoryFileSystemTest, FileFunctionsRunOnIt) {
  MemoryFileSystem m;
  ASSERT_TRUE(WriteFileAtomic("/ds/a/b/one", std::string_view("1"), {.sync = true, .file_system = &m}).ok());
  ASSERT_TRUE(WriteFileAtomic("/ds/a/two", std::string_view("22"), {.file_system = &m}).ok());
  EXPECT_EQ(WriteFileAtomic("/ds/a/two", std::string_view("x"), {.no_replace = true, .file_system = &m}).code(),
            StatusCode::kAlreadyExists);
  ASSERT_EQ(m.Symlink("b", "/ds/a/link"), 0);
  EXPECT_TRUE(PathExists("/ds/a/two", &m));
  EXPECT_TRUE(IsDirectory("/ds/a", &m));
  EXPECT_FALSE(IsDirectory("/ds/a/two", &m));
  EXPECT_FALSE(IsEmptyDirectory("/ds/a", &m));
  EXPECT_EQ(FileSize("/ds/a/two", &m).value(), 2u);
  EXPECT_EQ(ReadSymlink("/ds/a/link", &m).value(), "b");
  EXPECT_EQ(Names(ListDirectory("/ds/a", &m).value()), (std::vector<std::string>{"b", "link", "two"}));

  std::vector<std::string> seen;
  ASSERT_TRUE(WalkTree("/ds", [&](const TreeEntry& e, bool*) {
                seen.push_back(e.relative + ":" + std::to_string(e.depth));
                return Status::OK();
              }, &m).ok());
  // The link is visited, not entered.
  EXPECT_EQ(seen, (std::vector<std::string>{"a:0", "a/b:1", "a/b/one:2", "a/link:1", "a/two:1"}));
  seen.clear();
  ASSERT_TRUE(WalkTree("/ds", [&](const TreeEntry& e, bool* descend) {
                seen.push_back(e.relative);
                if (e.relative == "a/b") *descend = false;
                return Status::OK();
              }, &m).ok());
  EXPECT_EQ(seen, (std::vector<std::string>{"a", "a/b", "a/link", "a/two"}));
  EXPECT_EQ(WalkTree("/nothing", [](const TreeEntry&, bool*) { return Status::OK(); }, &m).code(),
            StatusCode::kNotFound);

  ASSERT_TRUE(WriteFileAtomic("/ds/tmp", std::string_view("new"), {.file_system = &m}).ok());
  ASSERT_TRUE(MoveIntoPlace("/ds/tmp", "/ds/a/two", "test", &m).ok());
  EXPECT_EQ(ReadFileText("/ds/a/two", 100, &m).value(), "new");
  EXPECT_FALSE(PathExists("/ds/tmp", &m));

  ASSERT_TRUE(RemoveTree("/ds/a", &m).ok());
  EXPECT_TRUE(IsEmptyDirectory("/ds", &m));
  EXPECT_TRUE(RemoveTree("/ds/a", &m).ok());  // missing is fine
  EXPECT_EQ(m.open_files(), 0u);
}

// The forwarding base passes every call on; the fault FS on top of the memory
// one fails the planned call there.
TEST(FileSystemWrapperTest, ForwardsAndFaultsStack) {
  MemoryFileSystem m;
  FileSystemWrapper plain(&m);
  ASSERT_TRUE(WriteFileAtomic("/x/f", std::string_view("abc"), {.file_system = &plain}).ok());
  EXPECT_EQ(ReadFileText("/x/f", 100, &m).value(), "abc");
  EXPECT_EQ(plain.target(), &m);

  FaultFileSystem faults(FaultPlan{.op = FaultOp::kRename, .at = 1, .error = EIO}, &m);
  const Status st = WriteFileAtomic("/x/g", std::string_view("abc"), {.file_system = &faults});
  EXPECT_EQ(st.code(), StatusCode::kIOError);
  EXPECT_TRUE(faults.fired());
  EXPECT_FALSE(PathExists("/x/g", &m));
  EXPECT_EQ(Names(ListDirectory("/x", &m).value()), (std::vector<std::string>{"f"}));  // temp removed
  EXPECT_EQ(m.open_files(), 0u);
}

TEST(FileSystemTest, DefaultIsTheKernel) {
  EXPECT_EQ(&CurrentFileSystem(), DefaultFileSystem());
  EXPECT_EQ(&FileSystemOr(nullptr), DefaultFileSystem());
  MemoryFileSystem m;
  EXPECT_EQ(&FileSystemOr(&m), &m);
  const sedpack::testing::TempDir tmp;
  const std::string dir = tmp.path();
  ASSERT_TRUE(WriteFileAtomic(dir + "/f", std::string_view("k")).ok());
  std::vector<DirEntry> entries;
  ASSERT_EQ(DefaultFileSystem()->ListDir(dir.c_str(), &entries), 0);
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0].name, "f");
  EXPECT_EQ(entries[0].type, FileType::kRegular);
  ASSERT_EQ(DefaultFileSystem()->Symlink("f", (dir + "/l").c_str()), 0);
  std::string target;
  ASSERT_EQ(DefaultFileSystem()->ReadLink((dir + "/l").c_str(), &target), 0);
  EXPECT_EQ(target, "f");
  EXPECT_FALSE(m.Exists((dir + "/f").c_str()));  // separate trees
}

}  // namespace
}  // namespace sedpack
