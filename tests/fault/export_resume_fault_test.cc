// SPDX-License-Identifier: Apache-2.0
// A journaled export-trs stopped by a full disk (ENOSPC from the n-th write
// on, support/fault_fs.h): the export fails, leaves its journal and
// unfinished file, and the same export on a healthy disk keeps the journaled
// rows and ends with exactly the bytes of an uninterrupted export. A rerun
// checks the kept rows beside the export of the rest: a kept range found bad
// sends it back there, whether the check ends before or after the rest is written.
#include <cstdlib>
#include <gtest/gtest.h>

#include <fcntl.h>

#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <mutex>
#include <fstream>
#include <iterator>
#include <cstdint>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "sedpack/capture/export.h"
#include "sedpack/dataset/filler.h"
#include "support/fault_fs.h"
#include "support/test_support.h"

namespace sedpack {
namespace {

using testing::FaultFileSystem;
using testing::FaultOp;
using testing::FaultPlan;
using testing::TempDir;

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// 64 traces of 1024 float32 samples and a byte label, 4 a shard.
void MakeDataset(const std::string& root) {
  {
    DatasetStructure st;
    st.examples_per_shard = 4;
    st.saved_data_description = {{"trace", "float32", {1024}, {}}, {"label", "uint8", {}, {}}};
    ASSERT_OK_AND_ASSIGN(auto created, Dataset::Create(root, Metadata{}, st));
    ASSERT_OK_AND_ASSIGN(auto f, Filler::Make(created));
    for (int e = 0; e < 64; ++e) {
      std::vector<float> trace(1024);
      for (int i = 0; i < 1024; ++i) trace[i] = static_cast<float>((e * 31 + i * 7) % 101) / 8;
      const std::vector<std::uint8_t> label = {static_cast<std::uint8_t>(e)};
      const std::vector<ValueView> v = {ValueView::Array(trace, {1024}), ValueView::Array(label, {})};
      ASSERT_OK(f->WriteExample(Split::kTrain, v));
    }
    ASSERT_OK(f->Finish());
  }
}

TEST(ExportResumeFaultTest, FullDiskStopsTheTrsExportAndTheRerunFinishesIt) {
  TempDir dir;
  const std::string root = dir.path() + "/ds";
  MakeDataset(root);
  ASSERT_OK_AND_ASSIGN(auto ds, Dataset::Open(root));
  const std::string reference = dir.path() + "/ref.trs";
  TrsExportOptions plain;
  plain.journal = false;
  ASSERT_OK(ExportTrs(ds, Split::kTrain, reference, plain).status());
  const std::string want = Slurp(reference);
  ASSERT_GT(want.size(), 64u * 1024);

  // A record for every row range (export-trs records at most once a second by
  // default; a sticky full disk refuses the record of the ranges since the last).
  ::setenv("SEDPACK_TEST_RECORD_MS", "0", 1);
  // Count the writes of a whole journaled export, then fill the disk at a third and two thirds of them.
  std::int64_t writes = 0;
  {
    FaultFileSystem counting;
    TrsExportOptions o;
    o.file_system = &counting;
    ASSERT_OK_AND_ASSIGN(TrsExportSummary s, ExportTrs(ds, Split::kTrain, dir.path() + "/count.trs", o));
    EXPECT_EQ(s.units, 16u);
    EXPECT_FALSE(s.resumed);
    writes = counting.count(FaultOp::kWrite);
  }
  ASSERT_GT(writes, 16);
  for (std::int64_t at : {writes / 3, 2 * writes / 3}) {
    SCOPED_TRACE("ENOSPC from write " + std::to_string(at));
    const std::string out = dir.path() + "/out" + std::to_string(at) + ".trs";
    {
      FaultFileSystem full(FaultPlan{FaultOp::kWrite, at, ENOSPC, /*sticky=*/true});
      TrsExportOptions o;
      o.file_system = &full;
      auto stopped = ExportTrs(ds, Split::kTrain, out, o);
      ASSERT_FALSE(stopped.ok());
      EXPECT_EQ(stopped.status().code(), StatusCode::kIOError) << stopped.status().ToString();
      EXPECT_TRUE(full.fired());
    }
    EXPECT_FALSE(std::filesystem::exists(out));
    EXPECT_TRUE(std::filesystem::exists(out + ".sedpack-journal"));
    ASSERT_OK_AND_ASSIGN(TrsExportSummary resumed, ExportTrs(ds, Split::kTrain, out));
    EXPECT_TRUE(resumed.resumed);
    EXPECT_GT(resumed.kept_units, 0u);
    EXPECT_LT(resumed.kept_units, resumed.units);
    EXPECT_EQ(resumed.traces, 64u);
    EXPECT_EQ(Slurp(out), want);
    EXPECT_FALSE(std::filesystem::exists(out + ".sedpack-journal"));
  }
}

// Orders a rerun's check of the kept ranges (the reads of an fd another thread
// opened read-only on the unfinished file) against the export's writes (an fd
// opened for writing on it): kCheckLast holds the check's first read until the
// export has written every row (the file has reached `final_size`);
// kCheckFirst holds the export's first write until the check has closed its fd.
// Counts the bytes the export wrote to the file before it cut it.
class OrderingFileSystem : public FileSystemWrapper {
 public:
  enum class Order { kCheckLast, kCheckFirst };
  OrderingFileSystem(Order order, std::int64_t final_size)
      : FileSystemWrapper(DefaultFileSystem()),
        order_(order),
        final_size_(final_size),
        export_thread_(std::this_thread::get_id()) {}

  int Open(const char* path, int flags, unsigned mode) override {
    const int fd = FileSystemWrapper::Open(path, flags, mode);
    if (fd >= 0 && std::string_view(path).ends_with(".sedpack-partial")) {
      std::lock_guard<std::mutex> lock(mu_);
      if ((flags & O_ACCMODE) != O_RDONLY) {
        export_fd_ = fd;
      } else if (std::this_thread::get_id() != export_thread_) {
        check_fd_ = fd;
      }
    }
    return fd;
  }
  long Pread(int fd, void* buffer, std::size_t size, std::int64_t offset) override {
    if (order_ == Order::kCheckLast && IsCheck(fd)) WaitFor(&written_all_);
    return FileSystemWrapper::Pread(fd, buffer, size, offset);
  }
  int Close(int fd) override {
    const bool check = IsCheck(fd);
    const int r = FileSystemWrapper::Close(fd);
    if (check) Release(&check_done_);
    return r;
  }
  long Write(int fd, const void* data, std::size_t size) override {
    if (IsExport(fd)) {
      if (order_ == Order::kCheckFirst) WaitFor(&check_done_);
      const long r = FileSystemWrapper::Write(fd, data, size);
      std::lock_guard<std::mutex> lock(mu_);
      if (r > 0 && !cut_) {
        written_before_cut_ += r;
        if (opened_at_ + written_before_cut_ >= final_size_) {
          written_all_ = true;
          cv_.notify_all();
        }
      }
      return r;
    }
    return FileSystemWrapper::Write(fd, data, size);
  }
  int Ftruncate(int fd, std::int64_t size) override {
    if (IsExport(fd)) {
      std::lock_guard<std::mutex> lock(mu_);
      if (written_before_cut_ > 0) {
        cut_ = true;  // the cut of a rerun going back
      } else {
        opened_at_ = size;  // the open's: the kept ranges' end
      }
    }
    return FileSystemWrapper::Ftruncate(fd, size);
  }

  bool waited_too_long() const { return waited_too_long_; }
  bool cut() const { return cut_; }
  std::int64_t written_before_cut() const { return written_before_cut_; }

 private:
  bool IsCheck(int fd) {
    std::lock_guard<std::mutex> lock(mu_);
    return fd == check_fd_ && std::this_thread::get_id() != export_thread_;
  }
  bool IsExport(int fd) {
    std::lock_guard<std::mutex> lock(mu_);
    return fd == export_fd_;
  }
  void Release(bool* gate) {
    std::lock_guard<std::mutex> lock(mu_);
    *gate = true;
    cv_.notify_all();
  }
  // A bounded wait: an export that never opens the gate fails the test instead of hanging it.
  void WaitFor(bool* gate) {
    std::unique_lock<std::mutex> lock(mu_);
    if (!cv_.wait_for(lock, std::chrono::seconds(20), [gate] { return *gate; })) waited_too_long_ = true;
  }

  const Order order_;
  const std::int64_t final_size_;
  const std::thread::id export_thread_;
  std::mutex mu_;
  std::condition_variable cv_;
  int check_fd_ = -1, export_fd_ = -1;
  bool written_all_ = false, check_done_ = false, cut_ = false, waited_too_long_ = false;
  std::int64_t written_before_cut_ = 0, opened_at_ = 0;
};

TEST(ExportResumeFaultTest, AKeptRangeFoundBadBesideTheExportIsWrittenAgainWithWhatFollows) {
  TempDir dir;
  const std::string root = dir.path() + "/ds";
  MakeDataset(root);
  ASSERT_OK_AND_ASSIGN(auto ds, Dataset::Open(root));
  const std::string reference = dir.path() + "/ref.trs";
  TrsExportOptions plain;
  plain.journal = false;
  ASSERT_OK(ExportTrs(ds, Split::kTrain, reference, plain).status());
  const std::string want = Slurp(reference);
  // Records of 4096 bytes of samples and the label's byte; 16 ranges of 4 rows.
  const std::size_t record = 4096 + 1;
  ASSERT_GT(want.size(), 64 * record);
  const std::size_t header = want.size() - 64 * record;

  ::setenv("SEDPACK_TEST_RECORD_MS", "0", 1);
  std::int64_t writes = 0;
  {
    FaultFileSystem counting;
    TrsExportOptions o;
    o.file_system = &counting;
    ASSERT_OK(ExportTrs(ds, Split::kTrain, dir.path() + "/count.trs", o).status());
    writes = counting.count(FaultOp::kWrite);
  }
  ::unsetenv("SEDPACK_TEST_RECORD_MS");
  for (const auto order : {OrderingFileSystem::Order::kCheckLast, OrderingFileSystem::Order::kCheckFirst}) {
    const bool check_last = order == OrderingFileSystem::Order::kCheckLast;
    SCOPED_TRACE(check_last ? "the check ends after the export's last row" : "the check ends before its first");
    const std::string out = dir.path() + (check_last ? "/last.trs" : "/first.trs");
    {
      ::setenv("SEDPACK_TEST_RECORD_MS", "0", 1);
      FaultFileSystem full(FaultPlan{FaultOp::kWrite, writes / 3, ENOSPC, /*sticky=*/true});
      TrsExportOptions o;
      o.file_system = &full;
      ASSERT_FALSE(ExportTrs(ds, Split::kTrain, out, o).ok());
      ::unsetenv("SEDPACK_TEST_RECORD_MS");
    }
    // One byte of the second row range (rows 4 to 7) changed after it was journaled.
    const std::string partial = dir.path() + (check_last ? "/.last.trs" : "/.first.trs") + ".sedpack-partial";
    {
      std::fstream f(partial, std::ios::in | std::ios::out | std::ios::binary);
      ASSERT_TRUE(f.good());
      f.seekg(static_cast<std::streamoff>(header + 5 * record + 17));
      char b = 0;
      f.read(&b, 1);
      f.seekp(static_cast<std::streamoff>(header + 5 * record + 17));
      b = static_cast<char>(b ^ 0x5a);
      f.write(&b, 1);
      ASSERT_TRUE(f.good());
    }
    OrderingFileSystem ordering(order, static_cast<std::int64_t>(want.size()));
    TrsExportOptions o;
    o.file_system = &ordering;
    ASSERT_OK_AND_ASSIGN(TrsExportSummary resumed, ExportTrs(ds, Split::kTrain, out, o));
    EXPECT_FALSE(ordering.waited_too_long());
    EXPECT_TRUE(resumed.resumed);
    EXPECT_EQ(resumed.kept_units, 1u);  // the first range only: the second is bad
    EXPECT_EQ(resumed.traces, 64u);
    EXPECT_EQ(Slurp(out), want);
    EXPECT_FALSE(std::filesystem::exists(out + ".sedpack-journal"));
    EXPECT_FALSE(std::filesystem::exists(partial));
    // The export went back once: after every row when the check ended last, at
    // the end of its first row range (4 records) when the check ended first.
    EXPECT_TRUE(ordering.cut());
    if (check_last) {
      EXPECT_GT(ordering.written_before_cut(), static_cast<std::int64_t>(4 * record));
    } else {
      EXPECT_EQ(ordering.written_before_cut(), static_cast<std::int64_t>(4 * record));
    }
  }
}

}  // namespace
}  // namespace sedpack
