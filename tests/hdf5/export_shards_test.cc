// SPDX-License-Identifier: Apache-2.0
// export-hdf5 of a split of many shards: the per-shard attributes of a split
// (shard_examples, shard_first_row: 8 bytes a shard each) outgrow the 64 KiB
// an attribute may take in an object header at about 8000 shards. A split of
// 10000 one-example shards of one byte is exported, stopped half way and
// resumed, and every attribute reads back whole.
#include <hdf5.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "sedpack/cancel.h"
#include "sedpack/comm/comm.h"
#include "sedpack/dataset/dataset.h"
#include "sedpack/dataset/filler.h"
#include "sedpack/hdf5/export.h"
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

}  // namespace
}  // namespace sedpack
