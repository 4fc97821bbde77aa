// SPDX-License-Identifier: Apache-2.0
// export-hdf5 of a split of many shards: the per-shard attributes of a split
// (shard_examples, shard_first_row: 8 bytes a shard each) outgrow the 64 KiB
// an attribute may take in an object header at about 8000 shards. A split of
// 10000 one-example shards of one byte is exported, stopped half way and
// resumed, and every attribute reads back whole.
// And the check of what a stopped export left: a row changed in the kept part
// of the unfinished file (a numeric attribute, read back whole chunks at a
// time, or a str one, read through HDF5) is found, and the rerun keeps only
// the records before it and writes the rest again.
#include <hdf5.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "sedpack/cancel.h"
#include "sedpack/comm/comm.h"
#include "sedpack/dataset/dataset.h"
#include "sedpack/dataset/filler.h"
#include "sedpack/hdf5/export.h"
#include "journal/exports_internal.h"
#include "sedpack/value.h"
#include "support/test_support.h"

namespace sedpack {
namespace {

using testing::TempDir;

constexpr int kShards = 10000;

// The u64 array attribute `name` of `object` in `file` (empty if absent or not one).
std::vector<std::uint64_t> ReadU64Attribute(const std::string& file, const char* object, const char* name) {
  std::vector<std::uint64_t> values;
  const hid_t f = H5Fopen(file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  if (f < 0) return values;
  const hid_t a = H5Aopen_by_name(f, object, name, H5P_DEFAULT, H5P_DEFAULT);
  if (a >= 0) {
    const hid_t space = H5Aget_space(a);
    const hssize_t n = H5Sget_simple_extent_npoints(space);
    values.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
    if (H5Aread(a, H5T_NATIVE_UINT64, values.data()) < 0) values.clear();
    H5Sclose(space);
    H5Aclose(a);
  }
  H5Fclose(f);
  return values;
}

// The first dimension of dataset `path` in `file` (0 if absent).
hsize_t Rows(const std::string& file, const char* path) {
  hsize_t dims[2] = {0, 0};
  const hid_t f = H5Fopen(file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  if (f < 0) return 0;
  const hid_t d = H5Dopen2(f, path, H5P_DEFAULT);
  if (d >= 0) {
    const hid_t space = H5Dget_space(d);
    H5Sget_simple_extent_dims(space, dims, nullptr);
    H5Sclose(space);
    H5Dclose(d);
  }
  H5Fclose(f);
  return dims[0];
}

TEST(Hdf5ExportShards, TenThousandShardsExportResumeAndReadBack) {
  // A journal record after every shard (not once a second): the stop below
  // leaves records to resume from on any machine.
  ::setenv("SEDPACK_TEST_RECORD_MS", "0", 1);
  TempDir tmp;
  DatasetStructure st;
  st.saved_data_description = {Attribute{"v", "uint8", {1}}};
  st.compression = Compression::kNone;
  st.examples_per_shard = 1;
  st.hash_checksum_algorithms = {HashAlgorithm::kXxh64};
  ASSERT_OK_AND_ASSIGN(auto ds, Dataset::Create(tmp.path() + "/ds", Metadata{}, st));
  {
    ASSERT_OK_AND_ASSIGN(auto filler, Filler::Make(ds));
    for (int k = 0; k < kShards; ++k) {
      const std::vector<std::uint8_t> v = {static_cast<std::uint8_t>(k)};
      const ValueView values[] = {ValueView::Array(v, {1})};
      ASSERT_OK(filler->WriteExample(Split::kTrain, values));
    }
    ASSERT_OK(filler->Finish());
  }
  ASSERT_OK_AND_ASSIGN(ds, Dataset::Open(tmp.path() + "/ds"));
  SerialComm comm;
  const std::string out = tmp.path() + "/many.h5";

  // Stopped half way (as by SIGTERM), then resumed: the kept file is reopened
  // and checked, the rest written.
  Hdf5ExportOptions stopping;
  stopping.progress = [](const Hdf5ExportProgress& p) {
    if (p.examples_done >= kShards / 2) RequestCancellation();
  };
  auto stopped = ExportHdf5(comm, ds, out, stopping);
  ResetCancellation();
  ASSERT_FALSE(stopped.ok());
  ASSERT_TRUE(IsCancelled(stopped.status())) << stopped.status().ToString();
  ASSERT_OK_AND_ASSIGN(Hdf5ExportSummary resumed, ExportHdf5(comm, ds, out));
  EXPECT_TRUE(resumed.resumed);
  EXPECT_EQ(resumed.units, static_cast<std::uint64_t>(kShards));
  EXPECT_GT(resumed.kept_units, 0u);
  EXPECT_LT(resumed.kept_units, static_cast<std::uint64_t>(kShards));

  EXPECT_EQ(Rows(out, "/train/v"), static_cast<hsize_t>(kShards));
  const std::vector<std::uint64_t> examples = ReadU64Attribute(out, "/train", "shard_examples");
  const std::vector<std::uint64_t> first_row = ReadU64Attribute(out, "/train", "shard_first_row");
  ASSERT_EQ(examples.size(), static_cast<std::size_t>(kShards));
  ASSERT_EQ(first_row.size(), static_cast<std::size_t>(kShards));
  for (int k = 0; k < kShards; ++k) {
    ASSERT_EQ(examples[k], 1u) << "shard " << k;
    ASSERT_EQ(first_row[k], static_cast<std::uint64_t>(k)) << "shard " << k;
  }
}

constexpr int kDamageShards = 64;
constexpr int kDamageRows = 4;  // a shard
constexpr int kSamples = 100;

std::int16_t Sample(int row, int i) { return static_cast<std::int16_t>(row * 31 + i * 7 - 5000); }
std::string Name(int row) { return "row " + std::to_string(row); }

// Rows of int16[kSamples] "trace" and str "name", kDamageRows a shard.
Result<std::shared_ptr<Dataset>> MakeTracesAndNames(const std::string& root) {
  DatasetStructure st;
  st.saved_data_description = {Attribute{"trace", "int16", {kSamples}}, Attribute{"name", "str", {}}};
  st.compression = Compression::kNone;
  st.examples_per_shard = kDamageRows;
  st.hash_checksum_algorithms = {HashAlgorithm::kXxh64};
  SEDPACK_ASSIGN_OR_RETURN(auto ds, Dataset::Create(root, Metadata{}, st));
  SEDPACK_ASSIGN_OR_RETURN(auto filler, Filler::Make(ds));
  for (int row = 0; row < kDamageShards * kDamageRows; ++row) {
    std::vector<std::int16_t> trace(kSamples);
    for (int i = 0; i < kSamples; ++i) trace[i] = Sample(row, i);
    const std::string name = Name(row);
    const ValueView values[] = {ValueView::Array(trace, {kSamples}), ValueView::Str(name)};
    SEDPACK_RETURN_NOT_OK(filler->WriteExample(Split::kTrain, values));
  }
  SEDPACK_RETURN_NOT_OK(filler->Finish());
  return Dataset::Open(root);
}

// Overwrite row `row` of "/train/trace" (with `trace`) or of "/train/name" in `file`.
void Damage(const std::string& file, int row, bool trace) {
  const hid_t f = H5Fopen(file.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  ASSERT_GE(f, 0) << file;
  const hid_t d = H5Dopen2(f, trace ? "/train/trace" : "/train/name", H5P_DEFAULT);
  ASSERT_GE(d, 0);
  const hid_t space = H5Dget_space(d);
  const hsize_t start[2] = {static_cast<hsize_t>(row), 0}, count[2] = {1, kSamples};
  ASSERT_GE(H5Sselect_hyperslab(space, H5S_SELECT_SET, start, nullptr, count, nullptr), 0);
  const hid_t mem = H5Screate_simple(trace ? 2 : 1, count, nullptr);
  if (trace) {
    std::vector<std::int16_t> other(kSamples, 1);
    ASSERT_GE(H5Dwrite(d, H5T_NATIVE_INT16, mem, space, H5P_DEFAULT, other.data()), 0);
  } else {
    const hid_t type = H5Dget_type(d);
    const char* other = "not this row";
    ASSERT_GE(H5Dwrite(d, type, mem, space, H5P_DEFAULT, &other), 0);
    H5Tclose(type);
  }
  H5Sclose(mem);
  H5Sclose(space);
  H5Dclose(d);
  H5Fclose(f);
}

// Whether `file` holds every row of MakeTracesAndNames.
void ExpectAllRows(const std::string& file) {
  const int rows = kDamageShards * kDamageRows;
  const hid_t f = H5Fopen(file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  ASSERT_GE(f, 0) << file;
  const hid_t trace = H5Dopen2(f, "/train/trace", H5P_DEFAULT);
  std::vector<std::int16_t> samples(static_cast<std::size_t>(rows) * kSamples);
  ASSERT_GE(H5Dread(trace, H5T_NATIVE_INT16, H5S_ALL, H5S_ALL, H5P_DEFAULT, samples.data()), 0);
  const hid_t name = H5Dopen2(f, "/train/name", H5P_DEFAULT);
  const hid_t type = H5Dget_type(name);
  std::vector<char*> names(rows);
  ASSERT_GE(H5Dread(name, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, names.data()), 0);
  for (int row = 0; row < rows; ++row) {
    for (int i = 0; i < kSamples; ++i) ASSERT_EQ(samples[row * kSamples + i], Sample(row, i)) << "row " << row;
    ASSERT_EQ(std::string(names[row] ? names[row] : ""), Name(row)) << "row " << row;
  }
  const hid_t space = H5Dget_space(name);
  H5Dvlen_reclaim(type, space, H5P_DEFAULT, names.data());
  H5Sclose(space);
  H5Tclose(type);
  H5Dclose(name);
  H5Dclose(trace);
  H5Fclose(f);
}

TEST(Hdf5ExportShards, AChangedKeptRowIsFoundAndWrittenAgain) {
  ::setenv("SEDPACK_TEST_RECORD_MS", "0", 1);
  TempDir tmp;
  ASSERT_OK_AND_ASSIGN(auto ds, MakeTracesAndNames(tmp.path() + "/ds"));
  SerialComm comm;
  const std::string out = tmp.path() + "/t.h5";
  const auto paths = journal_internal::ExportPathsFor(out);
  const std::string journal = paths.folder + "/" + paths.journal;
  // Chunks of 6 rows across shards of 4: a shard's rows lie in two chunks, a
  // chunk serves two or three shards.
  Hdf5ExportOptions options;
  options.chunk_rows = 6;
  Hdf5ExportOptions stopping = options;
  stopping.progress = [](const Hdf5ExportProgress& p) {
    if (p.examples_done >= kDamageShards * kDamageRows * 6 / 10) RequestCancellation();
  };
  auto stopped = ExportHdf5(comm, ds, out, stopping);
  ResetCancellation();
  ASSERT_TRUE(IsCancelled(stopped.status())) << stopped.status().ToString();
  namespace fs = std::filesystem;
  fs::copy_file(paths.partial, tmp.path() + "/partial");
  fs::copy_file(journal, tmp.path() + "/journal");
  auto restore = [&] {
    fs::remove(out);
    fs::copy_file(tmp.path() + "/partial", paths.partial, fs::copy_options::overwrite_existing);
    fs::copy_file(tmp.path() + "/journal", journal, fs::copy_options::overwrite_existing);
  };

  // As left: the rerun keeps every record.
  ASSERT_OK_AND_ASSIGN(Hdf5ExportSummary whole, ExportHdf5(comm, ds, out, options));
  ASSERT_TRUE(whole.resumed);
  ASSERT_GT(whole.kept_units, kDamageShards / 2u);
  ASSERT_LT(whole.kept_units, static_cast<std::uint64_t>(kDamageShards));
  ExpectAllRows(out);

  // Row 50 (shard 12, chunk 8) changed: the records from the one holding it on are written again.
  for (const bool trace : {true, false}) {
    SCOPED_TRACE(trace ? "trace changed" : "name changed");
    restore();
    Damage(paths.partial, 50, trace);
    ASSERT_OK_AND_ASSIGN(Hdf5ExportSummary resumed, ExportHdf5(comm, ds, out, options));
    EXPECT_TRUE(resumed.resumed);
    EXPECT_LE(resumed.kept_units, 12u);
    EXPECT_LT(resumed.kept_units, whole.kept_units);
    ExpectAllRows(out);
  }
}

}  // namespace
}  // namespace sedpack
