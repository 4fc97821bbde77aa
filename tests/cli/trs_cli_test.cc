// SPDX-License-Identifier: Apache-2.0
// export-trs and import-trs from the command line on the TinyAES layout:
// generate -> export-trs (no --trace) -> import-trs, every value compared with
// the generated dataset; and the samples export-trs refuses, with their exit
// code and message.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "sedpack/dataset/dataset.h"
#include "sedpack/dataset/filler.h"
#include "sedpack/dataset/reader.h"
#include "sedpack/value.h"
#include "cli/tool_run.h"
#include "support/test_support.h"

namespace sedpack {
namespace {

using testing::Outcome;
using testing::RunTool;
using testing::Slurp;

std::size_t IndexOf(const Dataset& ds, const std::string& name) {
  for (std::size_t i = 0; i < ds.schema().size(); ++i) {
    if (ds.schema()[i].name == name) return i;
  }
  ADD_FAILURE() << "no attribute " << name << " in " << ds.root();
  return 0;
}

class TrsCli : public ::testing::Test {
 protected:
  std::string At(const std::string& name) const { return dir_.path() + "/" + name; }
  Outcome Tool(std::vector<std::string> args) { return RunTool(dir_.path(), std::move(args)); }

  // configs/generate_tinyaes.json with `examples` train examples in shards of 10.
  std::string TinyAes(int examples) {
    nlohmann::json c = nlohmann::json::parse(Slurp(std::string(SEDPACK_CONFIGS_DIR) + "/generate_tinyaes.json"));
    c["generate"]["examples"] = {{"train", examples}, {"test", 4}, {"holdout", 0}};
    c["dataset_structure"]["examples_per_shard"] = 10;
    std::ofstream(At("tinyaes.json")) << c.dump();
    const Outcome g = Tool({"generate", At("tinyaes.json"), At("aes"), "-q"});
    EXPECT_EQ(g.code, 0) << g.err;
    return At("aes");
  }

  testing::TempDir dir_;
};

TEST_F(TrsCli, TinyAesExportImportGivesEveryValueBack) {
  constexpr int kExamples = 30;
  const std::string aes = TinyAes(kExamples);
  Outcome r = Tool({"export-trs", aes, "-o", At("aes.trs")});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("wrote 30 traces"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("samples from \"trace1\" (80000 float16 as float32, the largest 1-D numeric attribute)"),
            std::string::npos)
      << r.out;
  r = Tool({"inspect-trs", At("aes.trs")});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("30 traces of 80000 float32 samples"), std::string::npos) << r.out;
  r = Tool({"import-trs", At("aes.trs"), "-o", At("back"), "-q"});
  ASSERT_EQ(r.code, 0) << r.err;

  ASSERT_OK_AND_ASSIGN(auto orig, Dataset::Open(aes));
  ASSERT_OK_AND_ASSIGN(auto back, Dataset::Open(At("back")));
  ASSERT_EQ(back->schema().size(), 4u);
  const std::size_t trace = IndexOf(*back, "trace1");
  EXPECT_EQ(back->schema()[trace].dtype, DType::kFloat32);
  ASSERT_OK_AND_ASSIGN(auto a, ExampleReader::Make(orig, Split::kTrain));
  ASSERT_OK_AND_ASSIGN(auto b, ExampleReader::Make(back, Split::kTrain));
  int examples = 0;
  std::uint64_t values = 0;
  for (;; ++examples) {
    ASSERT_OK_AND_ASSIGN(auto x, a->Next());
    ASSERT_OK_AND_ASSIGN(auto y, b->Next());
    ASSERT_EQ(x.has_value(), y.has_value()) << "after " << examples << " examples";
    if (!x) break;
    const ValueView half = x->Get(IndexOf(*orig, "trace1")), single = y->Get(trace);
    ASSERT_EQ(half.dtype, DType::kFloat16);
    ASSERT_EQ(single.data.size(), 2 * half.data.size());
    for (std::size_t i = 0; i < half.data.size() / 2; ++i, ++values) {
      Float16 h;
      std::memcpy(&h.bits, half.data.data() + 2 * i, 2);
      const float want = h.ToFloat(), got = single.At<float>(i);
      ASSERT_EQ(std::memcmp(&want, &got, 4), 0) << "example " << examples << " sample " << i << ": " << got
                                                 << " != " << want;
    }
    for (const char* name : {"key", "plaintext", "ciphertext"}) {
      const ValueView u = x->Get(IndexOf(*orig, name)), w = y->Get(IndexOf(*back, name));
      ASSERT_EQ(w.dtype, DType::kUInt8) << name;
      ASSERT_EQ(w.data.size(), u.data.size()) << name;
      EXPECT_EQ(std::memcmp(u.data.data(), w.data.data(), u.data.size()), 0) << name << ", example " << examples;
      values += u.data.size();
    }
  }
  EXPECT_EQ(examples, kExamples);
  EXPECT_EQ(values, kExamples * (80000u + 3 * 16));
  // The test split too, by name.
  r = Tool({"export-trs", aes, "-s", "test", "-o", At("test.trs"), "-q"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "");
}

TEST_F(TrsCli, SamplesNoCodingHoldsAreRefusedWithExit2) {
  const std::string aes = TinyAes(3);
  // The 16-byte key as the samples leaves trace1 for the 65535-byte trace data.
  Outcome r = Tool({"export-trs", aes, "--trace", "key", "-o", At("key.trs")});
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("attribute \"trace1\" (float16 (80000,), 320000 bytes) does not fit the trace data"),
            std::string::npos)
      << r.err;
  EXPECT_FALSE(std::ifstream(At("key.trs")).good());
  {
    DatasetStructure st;
    st.examples_per_shard = 5;
    st.saved_data_description = {{"counts", "uint32", {4}, {}}, {"text", "str", {}, {}}, {"grid", "int16", {2, 2}, {}}};
    ASSERT_OK_AND_ASSIGN(auto ds, Dataset::Create(At("odd"), Metadata{}, st));
    ASSERT_OK_AND_ASSIGN(auto f, Filler::Make(ds));
    for (std::uint32_t e = 0; e < 7; ++e) {
      const std::vector<std::uint32_t> counts = {e, 7, e == 6 ? 4000000000u : 9, 1};
      const std::vector<std::int16_t> grid = {1, 2, 3, static_cast<std::int16_t>(e)};
      const std::vector<ValueView> v = {ValueView::Array(counts, {4}), ValueView::Str("t"),
                                        ValueView::Array(grid, {2, 2})};
      ASSERT_OK(f->WriteExample(Split::kTrain, v));
    }
    ASSERT_OK(f->Finish());
  }
  r = Tool({"export-trs", At("odd"), "--trace", "text", "-o", At("text.trs")});
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("attribute \"text\" is str ()"), std::string::npos) << r.err;
  r = Tool({"export-trs", At("odd"), "--trace", "grid", "-o", At("grid.trs")});
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("attribute \"grid\" is int16 (2, 2)"), std::string::npos) << r.err;
  // The default (counts, the only 1-D numeric attribute) fails on the value
  // past int32, naming it; nothing is left behind.
  r = Tool({"export-trs", At("odd"), "-o", At("counts.trs")});
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("example 6 of \"counts\": uint32 sample 4000000000 (element 2) does not fit the int32"),
            std::string::npos)
      << r.err;
  for (const auto& e : std::filesystem::directory_iterator(dir_.path())) {
    EXPECT_EQ(e.path().filename().string().find("counts.trs"), std::string::npos) << e.path();
  }
}

}  // namespace
}  // namespace sedpack
