// SPDX-License-Identifier: Apache-2.0
// Output paths the user names: "-", links, FIFOs and devices are written
// through, regular files replaced atomically, bad paths refused by name.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "sedpack/io/file.h"
#include "sedpack/io/pack.h"
#include "io/user_output_internal.h"
#include "support/test_support.h"

namespace sedpack {
namespace {

namespace fs = std::filesystem;

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void Spit(const std::string& path, const std::string& bytes) { std::ofstream(path, std::ios::binary) << bytes; }

std::vector<std::string> Names(const std::string& dir) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) out.push_back(e.path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

struct stat LStat(const std::string& path) {
  struct stat st {};
  EXPECT_EQ(::lstat(path.c_str(), &st), 0) << path;
  return st;
}

// Everything read from a FIFO until its writer closes it, on another thread.
class FifoReader {
 public:
  explicit FifoReader(std::string path)
      : thread_([this, path] {
          const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
          if (fd < 0) return;
          char buf[4096];
          for (ssize_t n; (n = ::read(fd, buf, sizeof(buf))) > 0;) bytes_.append(buf, static_cast<std::size_t>(n));
          ::close(fd);
        }) {}
  std::string Join() {
    thread_.join();
    return bytes_;
  }

 private:
  std::string bytes_;
  std::thread thread_;
};

TEST(UserOutput, NewFileIsWrittenWithNoTemporaryLeft) {
  testing::TempDir dir;
  const std::string path = dir.path() + "/report.json";
  ASSERT_OK(WriteUserOutput(path, "{\"ok\": true}\n"));
  EXPECT_EQ(Slurp(path), "{\"ok\": true}\n");
  EXPECT_TRUE(S_ISREG(LStat(path).st_mode));
  EXPECT_EQ(Names(dir.path()), std::vector<std::string>{"report.json"});
}

TEST(UserOutput, ExistingFileIsReplacedAtomically) {
  testing::TempDir dir;
  const std::string path = dir.path() + "/report.json";
  Spit(path, "old report");
  ASSERT_EQ(::chmod(path.c_str(), 0600), 0);
  const ino_t old_inode = LStat(path).st_ino;
  {
    ASSERT_OK_AND_ASSIGN(UserOutput out, UserOutput::Open(path));
    EXPECT_TRUE(out.atomic());
    ASSERT_OK(out.Write("new report"));
    // Until Commit the bytes sit in a temporary file beside it.
    EXPECT_EQ(Slurp(path), "old report");
    EXPECT_EQ(Names(dir.path()).size(), 2u);
    ASSERT_OK(out.Commit());
  }
  EXPECT_EQ(Slurp(path), "new report");
  // Renamed over, not rewritten in place; the permissions are kept.
  EXPECT_NE(LStat(path).st_ino, old_inode);
  EXPECT_EQ(LStat(path).st_mode & 07777, 0600u);
  EXPECT_EQ(Names(dir.path()), std::vector<std::string>{"report.json"});
}

TEST(UserOutput, AbandonedWriteLeavesTheOldFile) {
  testing::TempDir dir;
  const std::string path = dir.path() + "/report.json";
  Spit(path, "old report");
  {
    ASSERT_OK_AND_ASSIGN(UserOutput out, UserOutput::Open(path));
    ASSERT_OK(out.Write("half a rep"));
  }  // no Commit: a failure elsewhere
  EXPECT_EQ(Slurp(path), "old report");
  EXPECT_EQ(Names(dir.path()), std::vector<std::string>{"report.json"});
}

TEST(UserOutput, SymbolicLinkIsWrittenThroughAndStaysALink) {
  testing::TempDir dir;
  const std::string target = dir.path() + "/target.json", link = dir.path() + "/link.json";
  Spit(target, "a much longer old report than the new one");
  const ino_t target_inode = LStat(target).st_ino;
  ASSERT_EQ(::symlink("target.json", link.c_str()), 0);
  ASSERT_OK(WriteUserOutput(link, "new"));
  EXPECT_TRUE(S_ISLNK(LStat(link).st_mode));
  EXPECT_EQ(fs::read_symlink(link), "target.json");
  EXPECT_EQ(Slurp(target), "new");  // truncated, then written
  EXPECT_EQ(LStat(target).st_ino, target_inode);
  EXPECT_EQ(Names(dir.path()), (std::vector<std::string>{"link.json", "target.json"}));
}

TEST(UserOutput, LinkToNothingYetCreatesItsTarget) {
  testing::TempDir dir;
  const std::string link = dir.path() + "/link.json";
  ASSERT_EQ(::symlink("made.json", link.c_str()), 0);
  ASSERT_OK(WriteUserOutput(link, "x"));
  EXPECT_TRUE(S_ISLNK(LStat(link).st_mode));
  EXPECT_EQ(Slurp(dir.path() + "/made.json"), "x");
}

TEST(UserOutput, FifoIsWrittenThrough) {
  testing::TempDir dir;
  const std::string fifo = dir.path() + "/pipe";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  // Not opened by the check, so it does not wait for a reader.
  ASSERT_OK(CheckUserOutput(fifo));
  std::string big(300000, 'r');  // more than a pipe holds: the reader must be there
  big += "end";
  FifoReader reader(fifo);
  ASSERT_OK(WriteUserOutput(fifo, big));
  EXPECT_EQ(reader.Join(), big);
  EXPECT_TRUE(S_ISFIFO(LStat(fifo).st_mode));
  EXPECT_EQ(Names(dir.path()), std::vector<std::string>{"pipe"});
}

TEST(UserOutput, DevNullIsWrittenThrough) {
  if (::access("/dev/null", W_OK) != 0) GTEST_SKIP() << "no /dev/null";
  ASSERT_OK_AND_ASSIGN(UserOutput out, UserOutput::Open("/dev/null"));
  EXPECT_FALSE(out.atomic());
  ASSERT_OK(out.Write("discarded"));
  ASSERT_OK(out.Commit());
  EXPECT_TRUE(S_ISCHR(LStat("/dev/null").st_mode));
}

TEST(UserOutput, DashIsStandardOutput) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  std::fflush(stdout);
  const int saved = ::dup(STDOUT_FILENO);
  ASSERT_GE(saved, 0);
  ASSERT_EQ(::dup2(fds[1], STDOUT_FILENO), STDOUT_FILENO);
  ::close(fds[1]);
  const Status st = WriteUserOutput("-", "to stdout\n");
  // Standard output is not closed by it: still writable.
  const bool still_open = ::fcntl(STDOUT_FILENO, F_GETFD) != -1;
  ::dup2(saved, STDOUT_FILENO);  // also closes the pipe's last write end
  ::close(saved);
  std::string got;
  char buf[256];
  for (ssize_t n; (n = ::read(fds[0], buf, sizeof(buf))) > 0;) got.append(buf, static_cast<std::size_t>(n));
  ::close(fds[0]);
  ASSERT_OK(st);
  EXPECT_TRUE(still_open);
  EXPECT_EQ(got, "to stdout\n");
}

TEST(UserOutput, MissingParentFolderIsAnErrorAndNothingIsCreated) {
  testing::TempDir dir;
  const std::string path = dir.path() + "/no/such/report.json";
  EXPECT_STATUS(StatusCode::kNotFound, "no such folder: " + dir.path() + "/no/such", WriteUserOutput(path, "x"));
  EXPECT_STATUS(StatusCode::kNotFound, "no such folder", CheckUserOutput(path));
  EXPECT_TRUE(Names(dir.path()).empty());
  // A file where a folder should be.
  Spit(dir.path() + "/file", "");
  EXPECT_STATUS(StatusCode::kNotFound, "not a folder: " + dir.path() + "/file",
                WriteUserOutput(dir.path() + "/file/report.json", "x"));
  EXPECT_EQ(Names(dir.path()), std::vector<std::string>{"file"});
}

TEST(UserOutput, FolderIsAnError) {
  testing::TempDir dir;
  EXPECT_STATUS(StatusCode::kInvalidArgument, dir.path() + " is a folder", WriteUserOutput(dir.path(), "x"));
  EXPECT_STATUS(StatusCode::kInvalidArgument, "is a folder", CheckUserOutput(dir.path()));
  const std::string link = dir.path() + "/to_folder";
  ASSERT_EQ(::symlink(".", link.c_str()), 0);
  EXPECT_STATUS(StatusCode::kInvalidArgument, link, WriteUserOutput(link, "x"));
  EXPECT_EQ(Names(dir.path()), std::vector<std::string>{"to_folder"});
}

TEST(UserOutput, DevFullIsAnIOErrorNamingIt) {
  if (::access("/dev/full", W_OK) != 0) GTEST_SKIP() << "no /dev/full";
  EXPECT_STATUS(StatusCode::kIOError, "/dev/full", WriteUserOutput("/dev/full", "x"));
}

TEST(UserOutput, BrokenPipeIsAnIOErrorNotASignal) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  ::close(fds[0]);  // no reader
  const std::string path = "/proc/self/fd/" + std::to_string(fds[1]);
  if (::access(path.c_str(), F_OK) != 0) {
    ::close(fds[1]);
    GTEST_SKIP() << "no /proc/self/fd";
  }
  // Without SIGPIPE blocked this would kill the test process.
  EXPECT_STATUS(StatusCode::kIOError, path, WriteUserOutput(path, "x"));
  ::close(fds[1]);
  sigset_t pending;
  sigemptyset(&pending);
  ASSERT_EQ(::sigpending(&pending), 0);
  EXPECT_FALSE(sigismember(&pending, SIGPIPE));
}

TEST(UserOutput, NoReplaceRefusesExistingFilesAlsoThroughALink) {
  testing::TempDir dir;
  const std::string path = dir.path() + "/x", link = dir.path() + "/link";
  Spit(path, "keep");
  ASSERT_EQ(::symlink("x", link.c_str()), 0);
  UserOutputOptions options;
  options.replace_existing = false;
  EXPECT_STATUS(StatusCode::kAlreadyExists, path, WriteUserOutput(path, "y", options));
  EXPECT_STATUS(StatusCode::kAlreadyExists, link, WriteUserOutput(link, "y", options));
  EXPECT_EQ(Slurp(path), "keep");
  ASSERT_OK(WriteUserOutput(dir.path() + "/new", "y", options));
  EXPECT_EQ(Slurp(dir.path() + "/new"), "y");
}

TEST(UserOutput, PackGoesThroughAFifoAndUnpacksIdentically) {
  testing::TempDir dir;
  const std::string src = dir.path() + "/src";
  fs::create_directories(src + "/train");
  Spit(src + "/dataset_info.json", "{}");
  Spit(src + "/train/0.fb", std::string(200000, 's'));
  const std::string fifo = dir.path() + "/pack.fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  FifoReader reader(fifo);
  ASSERT_OK_AND_ASSIGN(PackSummary p, PackTree(src, fifo));
  EXPECT_EQ(p.files, 2u);
  const std::string bytes = reader.Join();
  EXPECT_TRUE(S_ISFIFO(LStat(fifo).st_mode));
  Spit(dir.path() + "/copy.pack", bytes);
  ASSERT_OK(UnpackTree(dir.path() + "/copy.pack", dir.path() + "/back").status());
  EXPECT_EQ(Slurp(dir.path() + "/back/train/0.fb"), std::string(200000, 's'));
  EXPECT_EQ(Slurp(dir.path() + "/back/dataset_info.json"), "{}");
}

TEST(UserOutput, PackOutputPathErrors) {
  testing::TempDir dir;
  const std::string src = dir.path() + "/src";
  fs::create_directories(src);
  Spit(src + "/dataset_info.json", "{}");
  EXPECT_STATUS(StatusCode::kNotFound, "no such folder", PackTree(src, dir.path() + "/no/x.pack"));
  EXPECT_FALSE(fs::exists(dir.path() + "/no"));
  EXPECT_STATUS(StatusCode::kInvalidArgument, "is a folder", PackTree(src, dir.path()));
  if (::access("/dev/full", W_OK) == 0) {
    EXPECT_STATUS(StatusCode::kIOError, "/dev/full", PackTree(src, "/dev/full"));
  }
  EXPECT_EQ(Names(dir.path()), std::vector<std::string>{"src"});
}

}  // namespace
}  // namespace sedpack
