// SPDX-License-Identifier: Apache-2.0
// Content digests: independent of compression, sensitive to values, shapes and
// names; recompress keeps them and re-stamps the sidecar; a changed shard is
// named. Serially and under mpirun with 1, 2 and 4 ranks.
#include <gtest/gtest.h>

#include <filesystem>
#include <memory>

#include "mpi/shared_dir.h"
#include "mpi/test_comm.h"
#include "sedpack/dataset/dataset.h"
#include "sedpack/dataset/filler.h"
#include "sedpack/dataset/reader.h"
#include "sedpack/io/file.h"
#include "sedpack/maintain/content.h"
#include "sedpack/maintain/recompress.h"
#include "sidecar/sidecar_internal.h"
#include "support/test_support.h"

namespace sedpack {
namespace {

using testing::SharedDir;
using testing::TestComm;

// `shape` of x is {4} or {2, 2}; `bump` changes one value of example 5.
void Make(const std::string& root, Compression c, Shape shape, int bump = 0, const char* name = "x") {
  if (TestComm().rank() == 0) {
    DatasetStructure st;
    st.compression = c;
    st.examples_per_shard = 3;
    st.saved_data_description = {{name, "int32", shape, {}}};
    auto ds = Dataset::Create(root, Metadata{}, st);
    ASSERT_TRUE(ds.ok()) << ds.status().ToString();
    auto f = Filler::Make(*ds);
    ASSERT_TRUE(f.ok());
    for (int i = 0; i < 20; ++i) {
      std::vector<std::int32_t> x = {i, i + 1, i + 2, i == 5 ? i + 3 + bump : i + 3};
      std::vector<ValueView> v = {ValueView::Array(x, shape)};
      ASSERT_OK((*f)->WriteExample(i % 4 ? Split::kTrain : Split::kTest, v));
    }
    ASSERT_OK((*f)->Finish());
  }
  EXPECT_OK(TestComm().Barrier());
}

TEST(ContentDigests, SameContentSameIdWhateverTheCompression) {
  SharedDir shared;
  const std::string dir = shared.path();
  Make(dir + "/lz4", Compression::kLz4, {4});
  Make(dir + "/none", Compression::kNone, {4});
  Make(dir + "/bumped", Compression::kLz4, {4}, 1);
  Make(dir + "/reshaped", Compression::kLz4, {2, 2});
  Make(dir + "/renamed", Compression::kLz4, {4}, 0, "y");
  ASSERT_OK_AND_ASSIGN(ContentDigests a, ComputeContentDigests(TestComm(), dir + "/lz4"));
  ASSERT_OK_AND_ASSIGN(ContentDigests b, ComputeContentDigests(TestComm(), dir + "/none"));
  EXPECT_EQ(a.content_id, b.content_id);
  EXPECT_EQ(a.shards.size(), 7u);  // 15 train in 5 shards, 5 test in 2
  for (const char* other : {"/bumped", "/reshaped", "/renamed"}) {
    ASSERT_OK_AND_ASSIGN(ContentDigests c, ComputeContentDigests(TestComm(), dir + other));
    EXPECT_NE(c.content_id, a.content_id) << other;
  }
  EXPECT_EQ(ReadContentDigests(dir + "/lz4").status().code(), StatusCode::kNotFound);
}

TEST(ContentDigests, RecompressKeepsThemAndChangedContentIsSeen) {
  SharedDir shared;
  const std::string dir = shared.path();
  const std::string root = dir + "/ds";
  Make(root, Compression::kGzip, {4});
  ASSERT_OK_AND_ASSIGN(ContentDigests d, ComputeContentDigests(TestComm(), root));
  if (TestComm().rank() == 0) ASSERT_OK(WriteContentDigests(root, d));
  EXPECT_OK(TestComm().Barrier());
  ASSERT_OK_AND_ASSIGN(ContentCheck clean, CheckContentDigests(TestComm(), root));
  EXPECT_TRUE(clean.ok());
  EXPECT_FALSE(clean.sidecar_stale);

  RecompressOptions o;
  o.compression = Compression::kZstd;
  ASSERT_OK(Recompress(TestComm(), root, o).status());
  ASSERT_OK_AND_ASSIGN(ContentCheck after, CheckContentDigests(TestComm(), root));
  EXPECT_TRUE(after.ok());
  EXPECT_FALSE(after.sidecar_stale) << "rank " << TestComm().rank();  // re-stamped for the new dataset_info.json
  EXPECT_EQ(after.current_id, d.content_id);
  EXPECT_OK(TestComm().Barrier());  // every rank is done with the dataset before rank 0 replaces it

  // Replace the data by a dataset with one value changed (same layout): the
  // file hashes are valid (it is a real dataset), but the content is not.
  const std::string sidecar = SidecarPath(root, kContentSidecarName);
  std::string saved;
  if (TestComm().rank() == 0) {
    saved = *ReadFileText(sidecar);
    std::filesystem::remove_all(root);
  }
  EXPECT_OK(TestComm().Barrier());
  Make(root, Compression::kZstd, {4}, 7);
  if (TestComm().rank() == 0) ASSERT_OK(WriteFileAtomic(sidecar, saved));
  EXPECT_OK(TestComm().Barrier());
  ASSERT_OK_AND_ASSIGN(ContentCheck bad, CheckContentDigests(TestComm(), root));
  EXPECT_FALSE(bad.ok());
  EXPECT_TRUE(bad.sidecar_stale);
  EXPECT_NE(bad.current_id, bad.recorded_id);
}

}  // namespace
}  // namespace sedpack
