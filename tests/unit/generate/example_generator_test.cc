// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <thread>
#include <vector>

#include "generate/aes128.h"
#include "sedpack/generate/generate.h"
#include "support/test_support.h"

namespace sedpack {
namespace {

GenerateConfig SmallConfig(std::int64_t trace_length = 1000) {
  GenerateConfig c = DefaultGenerateConfig();
  EXPECT_OK(SetTraceLength(&c, trace_length));
  c.params.seed = 7;
  c.params.key_group_size = 16;
  return c;
}

bool SameExample(const ExampleBuffers& a, const ExampleBuffers& b) {
  const auto va = a.Views(), vb = b.Views();
  if (va.size() != vb.size()) return false;
  for (std::size_t i = 0; i < va.size(); ++i) {
    if (va[i].data.size() != vb[i].data.size() ||
        std::memcmp(va[i].data.data(), vb[i].data.data(), va[i].data.size()) != 0) {
      return false;
    }
  }
  return true;
}

TEST(ExampleGeneratorTest, ViewsMatchSchema) {
  const GenerateConfig c = SmallConfig();
  ASSERT_OK_AND_ASSIGN(auto gen, ExampleGenerator::Make(c));
  ExampleBuffers ex;
  ASSERT_OK(gen->Generate(Split::kTrain, 3, &ex));
  ASSERT_OK_AND_ASSIGN(auto schema, c.structure.Schema());
  const auto views = ex.Views();
  ASSERT_EQ(views.size(), schema.size());
  for (std::size_t j = 0; j < views.size(); ++j) EXPECT_OK(ValidateValue(schema[j], views[j]));
  EXPECT_EQ(gen->example_bytes(), 1000u * 2 + 48);
}

TEST(ExampleGeneratorTest, SameInputsSameBytes) {
  const GenerateConfig c = SmallConfig();
  ASSERT_OK_AND_ASSIGN(auto gen, ExampleGenerator::Make(c));
  ExampleBuffers a, b, fresh;
  for (std::uint64_t i : {0ULL, 1ULL, 17ULL, 123456789ULL}) {
    ASSERT_OK(gen->Generate(Split::kTest, i, &a));
    ASSERT_OK(gen->Generate(Split::kTest, i, &b));
    ASSERT_OK(GenerateExample(c, Split::kTest, i, &fresh));
    EXPECT_TRUE(SameExample(a, b)) << i;
    EXPECT_TRUE(SameExample(a, fresh)) << i;
  }
}

TEST(ExampleGeneratorTest, IndependentOfThreads) {
  const GenerateConfig c = SmallConfig();
  ASSERT_OK_AND_ASSIGN(auto gen, ExampleGenerator::Make(c));
  constexpr int kN = 64;
  std::vector<ExampleBuffers> serial(kN), parallel(kN);
  for (int i = 0; i < kN; ++i) ASSERT_OK(gen->Generate(Split::kTrain, i, &serial[i]));
  std::vector<std::thread> threads;
  // Interleaved, in reverse: each thread takes every 4th index.
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = kN - 1 - t; i >= 0; i -= 4) {
        EXPECT_OK(gen->Generate(Split::kTrain, i, &parallel[i]));
      }
    });
  }
  for (auto& th : threads) th.join();
  for (int i = 0; i < kN; ++i) EXPECT_TRUE(SameExample(serial[i], parallel[i])) << i;
}

TEST(ExampleGeneratorTest, SeedsSplitsAndIndicesDiffer) {
  GenerateConfig c = SmallConfig();
  ASSERT_OK_AND_ASSIGN(auto gen, ExampleGenerator::Make(c));
  c.params.seed = 8;
  ASSERT_OK_AND_ASSIGN(auto gen8, ExampleGenerator::Make(c));
  ExampleBuffers a, b;
  ASSERT_OK(gen->Generate(Split::kTrain, 5, &a));
  ASSERT_OK(gen8->Generate(Split::kTrain, 5, &b));
  EXPECT_NE(a.plaintext, b.plaintext);
  EXPECT_NE(a.key, b.key);
  EXPECT_FALSE(SameExample(a, b));
  ASSERT_OK(gen->Generate(Split::kTest, 5, &b));
  EXPECT_NE(a.plaintext, b.plaintext);
  EXPECT_NE(a.key, b.key);
  ASSERT_OK(gen->Generate(Split::kTrain, 6, &b));
  EXPECT_NE(a.plaintext, b.plaintext);
  EXPECT_EQ(a.key, b.key);  // same key group
  // Traces of different examples share no long runs of identical samples.
  int equal = 0;
  for (std::size_t t = 0; t < a.trace_f16.size(); ++t) equal += a.trace_f16[t].bits == b.trace_f16[t].bits;
  EXPECT_LT(equal, 100);
}

TEST(ExampleGeneratorTest, KeyGroupsAndCiphertext) {
  const GenerateConfig c = SmallConfig();
  ASSERT_OK_AND_ASSIGN(auto gen, ExampleGenerator::Make(c));
  ExampleBuffers first, ex;
  ASSERT_OK(gen->Generate(Split::kTrain, 16, &first));
  EXPECT_EQ(first.key_index, 1u);
  for (std::uint64_t i = 16; i < 32; ++i) {
    ASSERT_OK(gen->Generate(Split::kTrain, i, &ex));
    EXPECT_EQ(ex.key_index, 1u);
    EXPECT_EQ(ex.key, first.key);
    EXPECT_EQ(ex.ciphertext, generate_internal::Aes128Encrypt(ex.key, ex.plaintext));
  }
  ASSERT_OK(gen->Generate(Split::kTrain, 32, &ex));
  EXPECT_EQ(ex.key_index, 2u);
  EXPECT_NE(ex.key, first.key);
}

double Correlation(const std::vector<double>& x, const std::vector<double>& y) {
  const double n = static_cast<double>(x.size());
  double mx = 0, my = 0;
  for (std::size_t i = 0; i < x.size(); ++i) mx += x[i], my += y[i];
  mx /= n;
  my /= n;
  double sxy = 0, sxx = 0, syy = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    sxy += (x[i] - mx) * (y[i] - my);
    sxx += (x[i] - mx) * (x[i] - mx);
    syy += (y[i] - my) * (y[i] - my);
  }
  return sxy / std::sqrt(sxx * syy);
}

// The data must not be noise only: a CPA-style correlation finds the S-box
// output's Hamming weight at the documented leak sample, and not elsewhere.
TEST(ExampleGeneratorTest, LeakageIsPresent) {
  for (std::int64_t length : {std::int64_t{256}, std::int64_t{5000}, kDefaultTraceLength}) {
    GenerateConfig c = SmallConfig(length);
    c.params.key_group_size = 1;
    ASSERT_OK_AND_ASSIGN(auto gen, ExampleGenerator::Make(c));
    constexpr int kN = 400;
    std::vector<std::vector<double>> hw(16), at_leak(16), at_quiet(16);
    ExampleBuffers ex;
    for (int n = 0; n < kN; ++n) {
      ASSERT_OK(gen->Generate(Split::kTrain, n, &ex));
      for (int i = 0; i < 16; ++i) {
        const std::uint8_t v = generate_internal::AesSbox(ex.plaintext[i] ^ ex.key[i]);
        hw[i].push_back(std::popcount(v));
        at_leak[i].push_back(ex.trace_f16[gen->LeakSample(LeakKind::kSubBytes, i)].ToFloat());
        at_quiet[i].push_back(ex.trace_f16[5].ToFloat());
      }
      for (const Float16& h : ex.trace_f16) ASSERT_LT(std::fabs(h.ToFloat()), 1.0f);
    }
    for (int i = 0; i < 16; ++i) {
      const double r = Correlation(hw[i], at_leak[i]);
      EXPECT_GT(r, 0.6) << "length " << length << " byte " << i;
      EXPECT_LT(std::fabs(Correlation(hw[i], at_quiet[i])), 0.2) << "length " << length;
    }
  }
}

TEST(ExampleGeneratorTest, LeakSamplesInsideTraceAndDistinct) {
  for (std::int64_t length : {std::int64_t{256}, std::int64_t{300}, std::int64_t{511}, std::int64_t{1000}, kDefaultTraceLength}) {
    ASSERT_OK_AND_ASSIGN(auto gen, ExampleGenerator::Make(SmallConfig(length)));
    std::vector<std::int64_t> all;
    for (LeakKind k : {LeakKind::kAddRoundKey, LeakKind::kSubBytes, LeakKind::kCiphertext}) {
      for (int i = 0; i < 16; ++i) {
        const std::int64_t s = gen->LeakSample(k, i);
        EXPECT_GE(s - 1, 0);
        EXPECT_LT(s + 2, length);
        for (std::int64_t o : all) EXPECT_GE(std::llabs(o - s), 4);
        all.push_back(s);
      }
    }
  }
}

TEST(ExampleGeneratorTest, Float32Traces) {
  GenerateConfig c = SmallConfig();
  c.structure.saved_data_description = TinyAesAttributes(512, DType::kFloat32);
  ASSERT_OK_AND_ASSIGN(auto gen, ExampleGenerator::Make(c));
  ExampleBuffers ex;
  ASSERT_OK(gen->Generate(Split::kHoldout, 0, &ex));
  ASSERT_EQ(ex.trace_f32.size(), 512u);
  EXPECT_EQ(ex.Views()[0].dtype, DType::kFloat32);
  EXPECT_EQ(gen->example_bytes(), 512u * 4 + 48);
}

TEST(ExampleGeneratorTest, SubsetAndOrderOfAttributes) {
  GenerateConfig c = SmallConfig();
  auto attrs = TinyAesAttributes(300);
  c.structure.saved_data_description = {attrs[2], attrs[0]};  // plaintext, trace1
  ASSERT_OK_AND_ASSIGN(auto gen, ExampleGenerator::Make(c));
  ExampleBuffers ex;
  ASSERT_OK(gen->Generate(Split::kTrain, 0, &ex));
  const auto views = ex.Views();
  ASSERT_EQ(views.size(), 2u);
  EXPECT_EQ(views[0].data.size(), 16u);
  EXPECT_EQ(views[1].data.size(), 600u);
}

TEST(ExampleGeneratorTest, ValidationErrors) {
  GenerateConfig c = SmallConfig();
  c.structure.saved_data_description.push_back({"extra", "uint8", {1}, {}});
  EXPECT_STATUS(StatusCode::kInvalidArgument, "extra", ExampleGenerator::Make(c));

  c = SmallConfig();
  c.structure.saved_data_description[1].dtype = "uint16";
  EXPECT_STATUS(StatusCode::kInvalidArgument, "key", ExampleGenerator::Make(c));

  c = SmallConfig();
  c.structure.saved_data_description[0].dtype = "int8";
  EXPECT_STATUS(StatusCode::kInvalidArgument, "trace1", ExampleGenerator::Make(c));

  c = SmallConfig();
  c.structure.saved_data_description.erase(c.structure.saved_data_description.begin());
  EXPECT_STATUS(StatusCode::kInvalidArgument, "trace1", ExampleGenerator::Make(c));

  c = SmallConfig();
  EXPECT_STATUS(StatusCode::kInvalidArgument, "trace_length", SetTraceLength(&c, 100));
  c.structure.saved_data_description[0].shape = {100};
  EXPECT_STATUS(StatusCode::kInvalidArgument, "trace_length", ExampleGenerator::Make(c));

  c = SmallConfig();
  c.params.key_group_size = 0;
  EXPECT_STATUS(StatusCode::kInvalidArgument, "key_group_size", ExampleGenerator::Make(c));

  c = SmallConfig();
  c.params.noise_std = -1;
  EXPECT_STATUS(StatusCode::kInvalidArgument, "noise_std", ExampleGenerator::Make(c));
}

}  // namespace
}  // namespace sedpack
