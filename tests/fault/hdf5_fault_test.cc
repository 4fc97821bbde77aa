// SPDX-License-Identifier: Apache-2.0
// HDF5 files under injected faults (support/fault_fs.h), now that HDF5 reads
// and writes through the FileSystem: a journaled export-hdf5 stopped by a full
// disk fails naming the file, leaves nothing at the output path, and the same
// export on a healthy disk resumes and ends with the values of an
// uninterrupted export; import-hdf5 on a failing read stops with an I/O error
// naming the input and leaves no dataset.
#include <gtest/gtest.h>

#include <hdf5.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "sedpack/comm/comm.h"
#include "sedpack/dataset/filler.h"
#include "sedpack/hdf5/export.h"
#include "sedpack/hdf5/import.h"
#include "sedpack/hdf5/mapping.h"
#include "support/fault_fs.h"
#include "support/full_disk.h"
#include "support/h5_fixtures.h"
#include "support/test_support.h"

namespace sedpack {
namespace {

using testing::FaultFileSystem;
using testing::FaultOp;
using testing::FaultPlan;

// The raw bytes of the dataset `name` of an HDF5 file, in its own type.
std::vector<unsigned char> ReadDataset(const std::string& path, const std::string& name) {
  std::vector<unsigned char> out;
  const hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  EXPECT_GE(file, 0) << path;
  if (file < 0) return out;
  const hid_t dset = H5Dopen2(file, name.c_str(), H5P_DEFAULT);
  EXPECT_GE(dset, 0) << path << ": " << name;
  if (dset >= 0) {
    const hid_t type = H5Dget_type(dset);
    const hid_t space = H5Dget_space(dset);
    out.resize(static_cast<std::size_t>(H5Sget_simple_extent_npoints(space)) * H5Tget_size(type));
    EXPECT_GE(H5Dread(dset, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, out.data()), 0);
    H5Sclose(space);
    H5Tclose(type);
    H5Dclose(dset);
  }
  H5Fclose(file);
  return out;
}

std::shared_ptr<Dataset> MakeDataset(const std::string& root) {
  // 64 traces of 1024 float32 samples and a byte label, 4 a shard.
  DatasetStructure st;
  st.examples_per_shard = 4;
  st.saved_data_description = {{"trace", "float32", {1024}, {}}, {"label", "uint8", {}, {}}};
  auto created = Dataset::Create(root, Metadata{}, st);
  EXPECT_TRUE(created.ok()) << created.status().ToString();
  auto f = Filler::Make(*created);
  EXPECT_TRUE(f.ok()) << f.status().ToString();
  for (int e = 0; e < 64; ++e) {
    std::vector<float> trace(1024);
    for (int i = 0; i < 1024; ++i) trace[i] = static_cast<float>((e * 31 + i * 7) % 101) / 8;
    const std::vector<std::uint8_t> label = {static_cast<std::uint8_t>(e)};
    const std::vector<ValueView> v = {ValueView::Array(trace, {1024}), ValueView::Array(label, {})};
    EXPECT_OK((*f)->WriteExample(Split::kTrain, v));
  }
  EXPECT_OK((*f)->Finish());
  auto ds = Dataset::Open(root);
  EXPECT_TRUE(ds.ok()) << ds.status().ToString();
  return *ds;
}

TEST(Hdf5FaultTest, FullDiskStopsTheHdf5ExportAndTheRerunFinishesIt) {
  // A record after every unit (not once a second): the faults below land
  // between records however fast the machine is.
  ::setenv("SEDPACK_TEST_RECORD_MS", "0", 1);
  testing::TempDir dir;
  auto ds = MakeDataset(dir.path() + "/ds");
  ASSERT_NE(ds, nullptr);
  auto comm = MakeSerialComm();
  const std::string reference = dir.path() + "/ref.h5";
  Hdf5ExportOptions plain;
  plain.journal = false;
  ASSERT_OK(ExportHdf5(*comm, ds, reference, plain).status());
  const auto want_trace = ReadDataset(reference, "/train/trace");
  const auto want_label = ReadDataset(reference, "/train/label");
  ASSERT_EQ(want_trace.size(), 64u * 1024 * 4);
  ASSERT_EQ(want_label.size(), 64u);

  // Every write of the job goes through the fault file system: the HDF5
  // file's (options.file_system) and the journal's (the process default).
  std::int64_t writes = 0;
  {
    FaultFileSystem counting;
    testing::ScopedFileSystem installed(&counting);
    Hdf5ExportOptions o;
    o.file_system = &counting;
    ASSERT_OK_AND_ASSIGN(Hdf5ExportSummary s, ExportHdf5(*comm, ds, dir.path() + "/count.h5", o));
    EXPECT_EQ(s.units, 16u);
    EXPECT_FALSE(s.resumed);
    writes = counting.count(FaultOp::kWrite);
  }
  ASSERT_GT(writes, 16);
  for (std::int64_t at : {writes / 3, 2 * writes / 3}) {
    SCOPED_TRACE("ENOSPC from write " + std::to_string(at) + " of " + std::to_string(writes));
    const std::string name = "out" + std::to_string(at) + ".h5";
    const std::string out = dir.path() + "/" + name;
    {
      FaultFileSystem full(FaultPlan{FaultOp::kWrite, at, ENOSPC, /*sticky=*/true});
      testing::ScopedFileSystem installed(&full);
      Hdf5ExportOptions o;
      o.file_system = &full;
      auto stopped = ExportHdf5(*comm, ds, out, o);
      ASSERT_FALSE(stopped.ok());
      EXPECT_TRUE(full.fired());
      EXPECT_EQ(stopped.status().code(), StatusCode::kIOError) << stopped.status().ToString();
      EXPECT_NE(stopped.status().message().find(name), std::string::npos) << stopped.status().ToString();
      EXPECT_NE(stopped.status().message().find(std::strerror(ENOSPC)), std::string::npos)
          << stopped.status().ToString();
    }
    EXPECT_FALSE(std::filesystem::exists(out));
    EXPECT_TRUE(std::filesystem::exists(out + ".sedpack-journal"));
    ASSERT_OK_AND_ASSIGN(Hdf5ExportSummary resumed, ExportHdf5(*comm, ds, out));
    EXPECT_TRUE(resumed.resumed) << resumed.journal_note;
    EXPECT_LT(resumed.kept_units, resumed.units);
    EXPECT_EQ(resumed.examples, 64u);
    EXPECT_EQ(ReadDataset(out, "/train/trace"), want_trace);
    EXPECT_EQ(ReadDataset(out, "/train/label"), want_label);
    EXPECT_FALSE(std::filesystem::exists(out + ".sedpack-journal"));
  }
}

// An ASCAD v1 capture of `profiling` + `attack` rows at `path`, and the
// mapping that imports it in shards of 8.
Result<Hdf5ImportConfig> WriteCapture(const std::string& path, std::uint64_t profiling, std::uint64_t attack) {
  testing::H5FixtureSpec spec;
  spec.trace_len = 700;  // the shape import_ascad_v1_fixed.json expects
  spec.profiling_rows = profiling;
  spec.attack_rows = attack;
  spec.fixed_key = true;
  testing::WriteAscadV1(path, spec);
  SEDPACK_ASSIGN_OR_RETURN(Hdf5ImportConfig config,
                           LoadHdf5ImportConfig(std::string(SEDPACK_CONFIGS_DIR) + "/import_ascad_v1_fixed.json"));
  config.structure.examples_per_shard = 8;
  return config;
}

// Counts the hints that send a written file's pages to the device.
class WritebackCountingFileSystem : public FileSystemWrapper {
 public:
  WritebackCountingFileSystem() : FileSystemWrapper(DefaultFileSystem()) {}
  int StartWriteback(int fd, std::int64_t offset, std::int64_t bytes) override {
    return ++writebacks, FileSystemWrapper::StartWriteback(fd, offset, bytes);
  }
  std::atomic<int> writebacks{0};
};

TEST(Hdf5FaultTest, EachRoundOfTheExportGoesToTheDiskAsItIsWritten) {
  testing::TempDir dir;
  auto ds = MakeDataset(dir.path() + "/ds");
  ASSERT_NE(ds, nullptr);
  auto comm = MakeSerialComm();
  for (const bool journal : {false, true}) {
    WritebackCountingFileSystem fs;
    Hdf5ExportOptions o;
    o.journal = journal;
    o.file_system = &fs;
    const std::string out = dir.path() + (journal ? "/journaled.h5" : "/plain.h5");
    ASSERT_OK_AND_ASSIGN(Hdf5ExportSummary s, ExportHdf5(*comm, ds, out, o));
    EXPECT_EQ(s.shards, 16u);
    // One writeback started after each round (one shard on one rank), with or
    // without the journal: else the whole file waits for the fsync before the
    // rename, or, written collectively, for the sync of the first record.
    EXPECT_EQ(fs.writebacks.load(), 16) << (journal ? "journaled" : "--no-journal");
    EXPECT_EQ(ReadDataset(out, "/train/trace").size(), 64u * 1024 * 4);
  }
}

TEST(Hdf5FaultTest, AFailingReadStopsTheImportNamingTheInput) {
  testing::TempDir dir;
  const std::string input = dir.path() + "/ascad.h5";
  ASSERT_OK_AND_ASSIGN(Hdf5ImportConfig config, WriteCapture(input, 60, 20));
  auto comm = MakeSerialComm();
  FaultFileSystem counting;
  Hdf5ImportOptions o;
  o.file_system = &counting;
  ASSERT_OK(ImportHdf5(*comm, config, {input}, dir.path() + "/healthy", o).status());
  const std::int64_t reads = counting.count(FaultOp::kRead);
  ASSERT_GT(reads, 4);
  // Points among the reads of the input (the last reads are of the new
  // dataset, after its commit).
  for (std::int64_t at : {std::int64_t{1}, reads / 4, reads / 2}) {
    SCOPED_TRACE("EIO at read " + std::to_string(at) + " of " + std::to_string(reads));
    const std::string out = dir.path() + "/out" + std::to_string(at);
    FaultFileSystem broken(FaultPlan{FaultOp::kRead, at, EIO});
    o.file_system = &broken;
    auto st = ImportHdf5(*comm, config, {input}, out, o).status();
    ASSERT_TRUE(broken.fired());
    ASSERT_FALSE(st.ok());
    EXPECT_EQ(st.code(), StatusCode::kIOError) << st.ToString();
    EXPECT_NE(st.message().find("ascad.h5"), std::string::npos) << st.ToString();
    EXPECT_NE(st.message().find(std::strerror(EIO)), std::string::npos) << st.ToString();
    EXPECT_FALSE(std::filesystem::exists(out));
  }
}

// import-hdf5 stopped by a full disk (its shards and journal written through
// the process's FileSystem) keeps its finished shards; the rerun does the rest.
TEST(Hdf5FaultTest, FullDiskStopsTheHdf5ImportAndTheRerunFinishesIt) {
  testing::TempDir dir;
  const std::string input = dir.path() + "/ascad.h5";
  ASSERT_OK_AND_ASSIGN(Hdf5ImportConfig config, WriteCapture(input, 300, 40));
  auto comm = MakeSerialComm();
  ASSERT_OK(ImportHdf5(*comm, config, {input}, dir.path() + "/ref").status());
  const std::vector<std::string> want = testing::ReadAll(dir.path() + "/ref");
  ASSERT_EQ(want.size(), 340u);
  Hdf5ImportOptions o;
  o.resumable = true;
  testing::FullDiskThenResume(
      dir.path(),
      [&](const std::string& out) { return testing::ResultOf(ImportHdf5(*comm, config, {input}, out, o)); }, want);
}

}  // namespace
}  // namespace sedpack
