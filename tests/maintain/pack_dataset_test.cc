// SPDX-License-Identifier: Apache-2.0
// A packed dataset is read and verified in place (serially and with the
// parallel verifier), damage inside the pack is found with the shard's path,
// and writing to it is refused.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <memory>

#include "mpi/shared_dir.h"
#include "mpi/test_comm.h"
#include "sedpack/check/check.h"
#include "sedpack/dataset/dataset.h"
#include "sedpack/dataset/filler.h"
#include "sedpack/dataset/reader.h"
#include "sedpack/io/pack.h"
#include "sedpack/check/verify.h"
#include "support/test_support.h"

namespace sedpack {
namespace {

using testing::TestComm;

std::string AllValues(const std::string& root) {
  auto ds = Dataset::Open(root);
  if (!ds.ok()) return ds.status().ToString();
  std::string out;
  for (Split s : {Split::kTrain, Split::kTest}) {
    auto r = ExampleReader::Make(*ds, s);
    if (!r.ok()) return r.status().ToString();
    for (;;) {
      auto ex = (*r)->Next();
      if (!ex.ok()) return ex.status().ToString();
      if (!ex->has_value()) break;
      for (std::size_t a = 0; a < 2; ++a) {
        const ValueView v = (*ex)->Get(a);
        out += testing::ToHex(v.data.data(), v.data.size()) + ";";
      }
    }
  }
  return out;
}

TEST(PackedDataset, ReadAndVerifiedInPlace) {
  testing::SharedDir dir;
  const std::string dir_path = dir.path();
  if (TestComm().rank() == 0) {
    DatasetStructure st;
    st.compression = Compression::kZstd;
    st.examples_per_shard = 4;
    st.saved_data_description = {{"x", "int32", {8}, {}}, {"s", "str", {}, {}}};
    auto ds = Dataset::Create(dir_path + "/ds", Metadata{}, st);
    ASSERT_TRUE(ds.ok());
    auto f = Filler::Make(*ds);
    ASSERT_TRUE(f.ok());
    for (int i = 0; i < 30; ++i) {
      std::vector<std::int32_t> x(8, i);
      const std::string s = "example " + std::to_string(i);
      std::vector<ValueView> v = {ValueView::Array(x, {8}), ValueView::Str(s)};
      ASSERT_OK((*f)->WriteExample(i % 3 ? Split::kTrain : Split::kTest, v));
    }
    ASSERT_OK((*f)->Finish());
    ASSERT_OK(PackTree(dir_path + "/ds", dir_path + "/ds.pack").status());
    EXPECT_EQ(AllValues(dir_path + "/ds.pack"), AllValues(dir_path + "/ds"));
    CheckOptions co;
    co.deep = true;
    co.find_orphans = true;
    auto report = CheckDataset(dir_path + "/ds.pack", co);
    ASSERT_TRUE(report.ok()) << report.status().ToString();
    EXPECT_TRUE(report->ok() && report->problems.empty());
    EXPECT_EQ(report->examples_checked, 30u);
    // Read-only.
    auto packed = Dataset::Open(dir_path + "/ds.pack");
    ASSERT_TRUE(packed.ok());
    EXPECT_EQ(Filler::Make(*packed).status().code(), StatusCode::kInvalidArgument);
  }
  VerifyOptions vo;
  vo.check.deep = true;
  // The full report is rank 0's.
  ASSERT_OK_AND_ASSIGN(CheckReport clean, VerifyDataset(TestComm(), dir_path + "/ds.pack", vo));
  if (TestComm().rank() == 0) {
    EXPECT_TRUE(clean.ok());
  }
  // Damage one shard's bytes inside the pack: the verifier names that shard.
  std::string victim;
  if (TestComm().rank() == 0) {
    auto r = PackReader::Open(dir_path + "/ds.pack");
    ASSERT_TRUE(r.ok());
    for (const auto& [rel, e] : (*r)->entries()) {
      if (rel.ends_with(".fb")) {
        victim = rel;
        std::fstream f(dir_path + "/ds.pack", std::ios::in | std::ios::out | std::ios::binary);
        f.seekp(static_cast<std::streamoff>(e.offset + e.size / 2));
        f.put('\x55');
        break;
      }
    }
  }
  ASSERT_OK(TestComm().Bcast(&victim, 0));
  ASSERT_OK_AND_ASSIGN(CheckReport bad, VerifyDataset(TestComm(), dir_path + "/ds.pack", vo));
  if (TestComm().rank() == 0) {
    EXPECT_FALSE(bad.ok());
    bool named = false;
    for (const CheckProblem& p : bad.problems) named |= p.path == victim && p.kind == CheckProblem::Kind::kHashMismatch;
    EXPECT_TRUE(named) << victim;
  }
  EXPECT_OK(TestComm().Barrier());
}

}  // namespace
}  // namespace sedpack
