// SPDX-License-Identifier: Apache-2.0
// Sidecar helpers, and the orphan finder leaving sidecar folders alone.
#include <filesystem>
#include <fstream>

#include "sedpack/check/check.h"
#include "sedpack/dataset/filler.h"
#include "sedpack/io/file.h"
#include "sidecar/sidecar_internal.h"
#include "support/test_support.h"
#include "sidecar/sidecar_files.h"

namespace sedpack {
namespace {

using testing::TempDir;

TEST(SidecarTest, PathsAndNames) {
  EXPECT_EQ(SidecarDir("/d"), "/d/.sedpack-hpc");
  EXPECT_EQ(SidecarPath("/d", "index.bin"), "/d/.sedpack-hpc/index.bin");
  EXPECT_TRUE(IsSidecarPath(".sedpack-hpc/index.bin"));
  EXPECT_TRUE(IsSidecarPath("train/.sedpack-hpc/x"));
  EXPECT_TRUE(IsSidecarPath(".sedpack-hpc"));
  EXPECT_FALSE(IsSidecarPath("train/shard_0.fb"));
  EXPECT_FALSE(IsSidecarPath("train/x.sedpack-hpc"));
  EXPECT_FALSE(IsSidecarPath(".sedpack-hpcx/a"));
}

TEST(SidecarTest, DigestOfDatasetInfoBytes) {
  TempDir tmp;
  ASSERT_OK(WriteFileAtomic(tmp.path() + "/dataset_info.json", std::string_view("abc")));
  ASSERT_OK_AND_ASSIGN(DatasetInfoDigest d, DatasetInfoSha256(tmp.path()));
  // FIPS 180-2 test vector for "abc".
  EXPECT_EQ(DigestHex(d), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(DatasetInfoSha256(tmp.path() + "/none").status().code(), StatusCode::kNotFound);
}

TEST(SidecarTest, WriteCreatesTheFolderAndReplacesAtomically) {
  TempDir tmp;
  const std::byte a[] = {std::byte{1}, std::byte{2}};
  ASSERT_OK(WriteSidecar(tmp.path(), "x.bin", a));
  ASSERT_OK_AND_ASSIGN(std::vector<std::byte> back, ReadFileBytes(tmp.path() + "/.sedpack-hpc/x.bin"));
  EXPECT_EQ(back, std::vector<std::byte>(a, a + 2));
  const std::byte b[] = {std::byte{3}};
  ASSERT_OK(WriteSidecar(tmp.path(), "x.bin", b));
  ASSERT_OK_AND_ASSIGN(back, ReadFileBytes(tmp.path() + "/.sedpack-hpc/x.bin"));
  EXPECT_EQ(back, std::vector<std::byte>(b, b + 1));
  // No temporary file is left behind.
  std::size_t files = 0;
  for (const auto& e : std::filesystem::directory_iterator(tmp.path() + "/.sedpack-hpc")) {
    (void)e;
    ++files;
  }
  EXPECT_EQ(files, 1u);
}

TEST(SidecarTest, OrphanFinderIgnoresSidecarFolders) {
  TempDir tmp;
  DatasetStructure s;
  Attribute x;
  x.name = "x";
  x.dtype = "int64";
  x.shape = {};
  s.saved_data_description = {x};
  s.compression = Compression::kNone;
  ASSERT_OK_AND_ASSIGN(auto ds, Dataset::Create(tmp.path() + "/ds", Metadata{}, s));
  {
    ASSERT_OK_AND_ASSIGN(auto filler, Filler::Make(ds));
    const std::int64_t one = 1;  // the view refers to it
    const ValueView v[] = {ValueView::Int(one)};
    ASSERT_OK(filler->WriteExample(Split::kTrain, v));
    ASSERT_OK(filler->Finish());
  }
  const std::byte b[] = {std::byte{0}};
  ASSERT_OK(WriteSidecar(ds->root(), "index.bin", b));
  // A sidecar folder inside a split too (e.g. a split copied with its sidecars).
  ASSERT_OK(WriteSidecar(ds->root() + "/train", "digests.bin", b));
  ASSERT_OK(WriteFileAtomic(ds->root() + "/train/stray.fb", std::string_view("x")));
  ASSERT_OK_AND_ASSIGN(CheckReport report, CheckDataset(ds->root()));
  ASSERT_EQ(report.problems.size(), 1u);
  EXPECT_EQ(report.problems[0].path, "train/stray.fb");
  EXPECT_TRUE(report.ok());
}

}  // namespace
}  // namespace sedpack
