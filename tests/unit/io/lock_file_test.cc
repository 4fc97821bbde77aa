// SPDX-License-Identifier: Apache-2.0
// The cluster-safe lock file (io/lock_file.h): mutual exclusion, waiting,
// timeouts, and breaking the stale lock of a dead process or a silent host.
#include "io/lock_file.h"

#include <gtest/gtest.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>
#include <vector>

#include "sedpack/io/file.h"
#include "support/test_support.h"

namespace sedpack {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;

LockFileOptions Quick(milliseconds wait, milliseconds stale = milliseconds(60000)) {
  LockFileOptions o;
  o.wait_timeout = wait;
  o.stale_timeout = stale;
  return o;
}

// A lock record as another host writes it.
void WriteForeignLock(const std::string& path, const std::string& token) {
  std::ofstream(path) << "sedpack-hpc lock 1\ntoken " << token
                      << "\nhost some-other-node\nboot_id 00000000-0000-0000-0000-000000000000\npid 4242\n"
                         "pid_start 1\njob 777\nstarted 1700000000\n";
}

TEST(LockFileTest, StaleLockOfADeadProcessIsBrokenWithAMessage) {
  testing::TempDir dir;
  const std::string path = dir.path() + "/commit.lock";
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    auto lock = LockFile::Acquire(path, Quick(milliseconds(1000)));
    // _exit: no destructor runs, so the lock stays behind as after a SIGKILL.
    ::_exit(lock.ok() ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  ASSERT_TRUE(fs::exists(path));
  EXPECT_EQ(InspectLockFile(path, milliseconds(60000)).state, LockInspection::State::kStale);

  std::vector<std::string> messages;
  LockFileOptions o = Quick(milliseconds(2000));
  o.on_break = [&](const std::string& m) { messages.push_back(m); };
  const auto start = std::chrono::steady_clock::now();
  auto lock = LockFile::Acquire(path, o);
  ASSERT_TRUE(lock.ok()) << lock.status().ToString();
  EXPECT_LT(std::chrono::steady_clock::now() - start, milliseconds(1000)) << "a dead pid needs no timeout";
  ASSERT_EQ(messages.size(), 1u);
  EXPECT_NE(messages[0].find("breaking the stale lock " + path), std::string::npos) << messages[0];
  EXPECT_NE(messages[0].find("pid " + std::to_string(child)), std::string::npos) << messages[0];
  EXPECT_NE(messages[0].find("not running"), std::string::npos) << messages[0];
  EXPECT_EQ(InspectLockFile(path, milliseconds(60000)).state, LockInspection::State::kLive);
  EXPECT_TRUE((*lock)->StillHeld().ok());
  EXPECT_TRUE((*lock)->Release().ok());
  EXPECT_FALSE(fs::exists(path));
  // Nothing of the breaking or the taking is left beside it.
  EXPECT_TRUE(fs::is_empty(dir.path()));
}

TEST(LockFileTest, ALiveHolderMakesTheNextOneWaitUntilReleased) {
  testing::TempDir dir;
  const std::string path = dir.path() + "/commit.lock";
  auto first = LockFile::Acquire(path, Quick(milliseconds(0)));
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  std::atomic<bool> got{false};
  Status second_status;
  const auto start = std::chrono::steady_clock::now();
  std::chrono::steady_clock::duration waited{};
  std::thread second([&] {
    auto lock = LockFile::Acquire(path, Quick(milliseconds(10000)));
    waited = std::chrono::steady_clock::now() - start;
    second_status = lock.status();
    got = lock.ok();
  });
  std::this_thread::sleep_for(milliseconds(400));
  EXPECT_FALSE(got.load()) << "took a lock that is held";
  ASSERT_TRUE((*first)->Release().ok());
  second.join();
  EXPECT_TRUE(got.load()) << second_status.ToString();
  EXPECT_GE(waited, milliseconds(400));
  EXPECT_LT(waited, milliseconds(5000));
}

TEST(LockFileTest, TimeoutNamesTheHolder) {
  testing::TempDir dir;
  const std::string path = dir.path() + "/commit.lock";
  auto first = LockFile::Acquire(path, Quick(milliseconds(0)));
  ASSERT_TRUE(first.ok());
  const auto start = std::chrono::steady_clock::now();
  auto second = LockFile::Acquire(path, Quick(milliseconds(300)));
  const auto waited = std::chrono::steady_clock::now() - start;
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), StatusCode::kIOError);
  const std::string& m = second.status().message();
  EXPECT_NE(m.find(path + " is held by host "), std::string::npos) << m;
  EXPECT_NE(m.find("pid " + std::to_string(::getpid())), std::string::npos) << m;
  EXPECT_NE(m.find("gave up waiting"), std::string::npos) << m;
  EXPECT_GE(waited, milliseconds(300));
  EXPECT_LT(waited, milliseconds(3000));
  // A zero wait tries once.
  auto once = LockFile::Acquire(path, Quick(milliseconds(0)));
  ASSERT_FALSE(once.ok());
  EXPECT_EQ(once.status().code(), StatusCode::kAlreadyExists) << once.status().ToString();
  EXPECT_TRUE((*first)->StillHeld().ok());
  // The waiters left no pending record behind.
  std::size_t files = 0;
  for (const auto& e : fs::directory_iterator(dir.path())) files += e.is_regular_file() ? 1 : 0;
  EXPECT_EQ(files, 1u);
}

TEST(LockFileTest, AnotherHostsSilentLockIsBrokenAfterTheStaleTimeout) {
  testing::TempDir dir;
  const std::string path = dir.path() + "/commit.lock";
  WriteForeignLock(path, "0123456789abcdef0123456789abcdef");
  std::vector<std::string> messages;
  LockFileOptions o = Quick(milliseconds(5000), milliseconds(300));
  o.on_break = [&](const std::string& m) { messages.push_back(m); };
  const auto start = std::chrono::steady_clock::now();
  auto lock = LockFile::Acquire(path, o);
  ASSERT_TRUE(lock.ok()) << lock.status().ToString();
  EXPECT_GE(std::chrono::steady_clock::now() - start, milliseconds(300));
  ASSERT_EQ(messages.size(), 1u);
  EXPECT_NE(messages[0].find("host some-other-node pid 4242 (job 777"), std::string::npos) << messages[0];
  EXPECT_NE(messages[0].find("heartbeat has not changed"), std::string::npos) << messages[0];
}

TEST(LockFileTest, AnotherHostsLockWithAHeartbeatIsNotBroken) {
  testing::TempDir dir;
  const std::string path = dir.path() + "/commit.lock";
  WriteForeignLock(path, "0123456789abcdef0123456789abcdef");
  std::atomic<bool> stop{false};
  std::thread beat([&] {
    while (!stop) {
      ::utimensat(AT_FDCWD, path.c_str(), nullptr, 0);
      std::this_thread::sleep_for(milliseconds(40));
    }
  });
  auto lock = LockFile::Acquire(path, Quick(milliseconds(1200), milliseconds(400)));
  stop = true;
  beat.join();
  ASSERT_FALSE(lock.ok()) << "broke a lock whose heartbeat was alive";
  EXPECT_NE(lock.status().message().find("held by host some-other-node pid 4242"), std::string::npos)
      << lock.status().ToString();
  EXPECT_EQ(InspectLockFile(path, milliseconds(60000)).state, LockInspection::State::kUnknown);
  // A one-shot look calls it stale once its mtime is old.
  const struct timespec old[2] = {{std::time(nullptr) - 3600, 0}, {std::time(nullptr) - 3600, 0}};
  ASSERT_EQ(::utimensat(AT_FDCWD, path.c_str(), old, 0), 0);
  const LockInspection look = InspectLockFile(path, milliseconds(60000));
  EXPECT_EQ(look.state, LockInspection::State::kStale) << look.reason;
  EXPECT_TRUE(BreakLockFile(path, look.owner).ok());
  EXPECT_FALSE(fs::exists(path));
}

TEST(LockFileTest, TheHolderRefreshesItsHeartbeat) {
  testing::TempDir dir;
  const std::string path = dir.path() + "/commit.lock";
  LockFileOptions o = Quick(milliseconds(0), milliseconds(600));
  o.heartbeat_interval = milliseconds(30);
  auto lock = LockFile::Acquire(path, o);
  ASSERT_TRUE(lock.ok());
  const struct timespec old[2] = {{1000, 0}, {1000, 0}};
  ASSERT_EQ(::utimensat(AT_FDCWD, path.c_str(), old, 0), 0);
  std::this_thread::sleep_for(milliseconds(200));
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_GT(st.st_mtim.tv_sec, 1000) << "no heartbeat";
}

TEST(LockFileTest, ABrokenHolderKnowsItLostTheLock) {
  testing::TempDir dir;
  const std::string path = dir.path() + "/commit.lock";
  auto lock = LockFile::Acquire(path, Quick(milliseconds(0)));
  ASSERT_TRUE(lock.ok());
  ASSERT_TRUE(BreakLockFile(path, (*lock)->owner()).ok());
  auto other = LockFile::Acquire(path, Quick(milliseconds(0)));
  ASSERT_TRUE(other.ok());
  Status held = (*lock)->StillHeld();
  EXPECT_FALSE(held.ok());
  EXPECT_NE(held.message().find("lost the lock"), std::string::npos) << held.ToString();
  // Releasing the lost lock leaves the new holder's alone.
  EXPECT_FALSE((*lock)->Release().ok());
  EXPECT_TRUE((*other)->StillHeld().ok());
  // Breaking with a stale view of the owner does not touch the new holder.
  EXPECT_EQ(BreakLockFile(path, (*lock)->owner()).code(), StatusCode::kAlreadyExists);
  EXPECT_TRUE((*other)->StillHeld().ok());
}

TEST(LockFileTest, MutualExclusionBetweenManyThreads) {
  testing::TempDir dir;
  const std::string path = dir.path() + "/commit.lock";
  const std::string counter = dir.path() + "/counter";
  ASSERT_TRUE(WriteFileAtomic(counter, std::string_view("0")).ok());
  constexpr int kThreads = 8, kRounds = 20;
  std::atomic<int> inside{0}, overlaps{0}, failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < kRounds; ++i) {
        auto lock = LockFile::Acquire(path, Quick(milliseconds(30000)));
        if (!lock.ok()) {
          ++failures;
          continue;
        }
        if (inside.fetch_add(1) != 0) ++overlaps;
        auto text = ReadFileText(counter);
        const int n = text.ok() ? std::stoi(*text) : -1000000;
        if (!WriteFileAtomic(counter, std::to_string(n + 1)).ok()) ++failures;
        inside.fetch_sub(1);
        if (!(*lock)->Release().ok()) ++failures;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(overlaps.load(), 0);
  auto text = ReadFileText(counter);
  ASSERT_TRUE(text.ok());
  EXPECT_EQ(*text, std::to_string(kThreads * kRounds));
}

TEST(LockFileTest, TheEmptyFileOfAnOlderVersionIsReplacedAtOnce) {
  testing::TempDir dir;
  const std::string path = dir.path() + "/commit.lock";
  std::ofstream(path).close();  // what flock-based versions left behind
  EXPECT_EQ(InspectLockFile(path, milliseconds(60000)).state, LockInspection::State::kStale);
  std::vector<std::string> messages;
  LockFileOptions o = Quick(milliseconds(0));
  o.on_break = [&](const std::string& m) { messages.push_back(m); };
  auto lock = LockFile::Acquire(path, o);
  ASSERT_TRUE(lock.ok()) << lock.status().ToString();
  ASSERT_EQ(messages.size(), 1u);
  EXPECT_NE(messages[0].find("older versions"), std::string::npos) << messages[0];
}

TEST(LockFileTest, LeftoverNames) {
  EXPECT_TRUE(IsLockLeftoverName("commit.lock.pending-0123456789abcdef0123456789abcdef"));
  EXPECT_TRUE(IsLockLeftoverName("a1b2.lock.broken-0123456789abcdef0123456789abcdef"));
  EXPECT_FALSE(IsLockLeftoverName("commit.lock"));
  EXPECT_FALSE(IsLockLeftoverName("commit.lock.pending-xyz"));
  EXPECT_FALSE(IsLockLeftoverName(".lock.broken-0123456789abcdef0123456789abcdef"));
  EXPECT_FALSE(IsLockLeftoverName("shard.fb"));
}

}  // namespace
}  // namespace sedpack
