// SPDX-License-Identifier: Apache-2.0
// The report: the leakage-model language and its errors, SNR and per-sample
// profiles against a direct computation on a dataset with a known leak (on
// every rank count), statistics equal to `stats`, thread-count independence,
// the page (no external reference, every plot, decimation) and the JSON, and
// the SNR of generated TinyAES traces peaking where the generator leaks.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <bit>
#include <cmath>
#include <map>

#include "mpi/shared_dir.h"
#include "mpi/test_comm.h"
#include "sedpack/dataset/dataset.h"
#include "sedpack/dataset/filler.h"
#include "sedpack/generate/generate.h"
#include "sedpack/maintain/stats.h"
#include "sedpack/report/report.h"
#include "support/test_support.h"

namespace sedpack {
namespace {

using testing::SharedDir;
using testing::TestComm;

constexpr int kExamples = 200;
constexpr int kSamples = 40;
constexpr int kLeak = 17;

std::vector<AttributeSpec> Schema() {
  return {{"trace", DType::kFloat32, {kSamples}},
          {"plaintext", DType::kUInt8, {16}},
          {"key", DType::kUInt8, {16}},
          {"label", DType::kInt16, {}},
          {"note", DType::kStr, {}}};
}

std::uint8_t Plaintext(int i, int k) { return static_cast<std::uint8_t>((i * 37 + k * 11 + i / 7) % 256); }
// Integer-valued samples: every sum is exact in a double, so any split of the
// work gives the same bits.
float Trace(int i, int j) {
  const float noise = static_cast<float>((i * 7 + j * 3 + (i * j) % 5) % 11);
  return noise + (j == kLeak ? 4.0f * static_cast<float>(std::popcount(Plaintext(i, 0))) : 0.0f);
}

void MakeDataset(const std::string& root) {
  if (TestComm().rank() == 0) {
    DatasetStructure st;
    st.compression = Compression::kLz4;
    st.examples_per_shard = 16;
    st.saved_data_description = {{"trace", "float32", {kSamples}, {}}, {"plaintext", "uint8", {16}, {}},
                                 {"key", "uint8", {16}, {}}, {"label", "int16", {}, {}}, {"note", "str", {}, {}}};
    auto ds = Dataset::Create(root, Metadata{}, st);
    ASSERT_TRUE(ds.ok());
    FillerOptions fo;
    fo.concurrency = 1;
    auto f = Filler::Make(*ds, fo);
    ASSERT_TRUE(f.ok());
    for (int i = 0; i < kExamples; ++i) {
      std::vector<float> t(kSamples);
      for (int j = 0; j < kSamples; ++j) t[j] = Trace(i, j);
      std::vector<std::uint8_t> pt(16), key(16, 0);
      for (int k = 0; k < 16; ++k) pt[k] = Plaintext(i, k);
      const auto label = static_cast<std::int16_t>(i % 3);
      std::vector<ValueView> v = {ValueView::Array(t, {kSamples}), ValueView::Array(pt, {16}),
                                  ValueView::Array(key, {16}), ValueView::Scalar(label), ValueView::Str("x")};
      const JsonValue group = *JsonValue::Parse(i < 96 ? R"({"group":"a"})" : R"({"group":"b"})");
      ASSERT_OK((*f)->WriteExample(Split::kTrain, v, &group));
    }
    ASSERT_OK((*f)->Finish());
  }
  EXPECT_OK(TestComm().Barrier());
}

TEST(SnrExpression, EvaluatesTheLanguage) {
  const auto schema = Schema();
  std::vector<float> t(kSamples);
  std::vector<std::uint8_t> pt(16, 0), key(16, 0);
  pt[0] = 0x01;
  pt[3] = 0x53;
  key[3] = 0x00;
  const std::int16_t label = -5;
  const std::vector<ValueView> v = {ValueView::Array(t, {kSamples}), ValueView::Array(pt, {16}),
                                    ValueView::Array(key, {16}), ValueView::Scalar(label), ValueView::Str("")};
  auto eval = [&](std::string_view text) {
    auto e = SnrExpression::Parse(text, schema);
    EXPECT_OK(e.status());
    return e.ok() ? e->Evaluate(v) : -999;
  };
  EXPECT_EQ(eval("sbox(plaintext[0]^key[0])"), 0x7c);  // FIPS-197: S(01) = 7c
  EXPECT_EQ(eval("hw(sbox(plaintext[0]^key[0]))"), 5);
  EXPECT_EQ(eval("sbox(plaintext[3])"), 0xed);  // S(53) = ed
  EXPECT_EQ(eval("hw( plaintext[0] ^ key[0] )"), 1);
  EXPECT_EQ(eval("0x10 ^ 3"), 19);
  EXPECT_EQ(eval("label"), -5);
  EXPECT_EQ(eval("((plaintext[3]))"), 0x53);
  EXPECT_EQ(eval("hw(255) ^ 1 ^ 1"), 8);
}

TEST(SnrExpression, ErrorsNameTheProblem) {
  const auto schema = Schema();
  const std::pair<std::string, std::string> cases[] = {
      {"hw(", "ends"},
      {"plaintext[16]", "index 16 is out of range for \"plaintext\" (16 elements)"},
      {"trace[0]", "\"trace\" is float32, not an integer dtype"},
      {"note", "not an integer dtype"},
      {"foo[0]", "unknown attribute \"foo\""},
      {"md5(key[0])", "unknown function \"md5\""},
      {"key", "\"key\" has 16 elements"},
      {"key[0] ^", "ends"},
      {"key[0])", "unexpected ')'"},
      {"key[0] key[1]", "unexpected 'k'"},
      {"key[x]", "expected an integer"},
      {"99999999999999999999", "too large"},
      {"", "ends"},
      {std::string(100, '(') + "1" + std::string(100, ')'), "nested more than"},
  };
  for (const auto& [text, want] : cases) {
    auto e = SnrExpression::Parse(text, schema);
    ASSERT_FALSE(e.ok()) << text;
    EXPECT_EQ(e.status().code(), StatusCode::kInvalidArgument) << text;
    EXPECT_NE(e.status().message().find(want), std::string::npos) << text << ": " << e.status().message();
  }
}

// The SNR of `labels` over the trace samples, computed directly (two passes).
std::vector<double> DirectSnr(const std::function<std::int64_t(int)>& label, std::map<std::int64_t, int>* counts) {
  std::map<std::int64_t, std::vector<int>> classes;
  for (int i = 0; i < kExamples; ++i) classes[label(i)].push_back(i);
  std::vector<double> snr(kSamples);
  for (auto& [l, members] : classes) (*counts)[l] = static_cast<int>(members.size());
  for (int j = 0; j < kSamples; ++j) {
    std::vector<double> means, vars;
    for (auto& [l, members] : classes) {
      if (members.size() < 2) continue;
      double m = 0, v = 0;
      for (int i : members) m += Trace(i, j);
      m /= static_cast<double>(members.size());
      for (int i : members) v += (Trace(i, j) - m) * (Trace(i, j) - m);
      means.push_back(m);
      vars.push_back(v / static_cast<double>(members.size()));
    }
    double mm = 0, noise = 0, signal = 0;
    for (std::size_t c = 0; c < means.size(); ++c) mm += means[c], noise += vars[c];
    mm /= static_cast<double>(means.size());
    noise /= static_cast<double>(means.size());
    for (double m : means) signal += (m - mm) * (m - mm);
    snr[j] = signal / static_cast<double>(means.size()) / noise;
  }
  return snr;
}

TEST(BuildReport, MatchesADirectComputationOnEveryRankCount) {
  SharedDir dir;
  MakeDataset(dir / "ds");
  ReportOptions o;
  o.snr = {"hw(plaintext[0]^key[0])", "plaintext[0]"};
  o.pass.threads = 2;
  ASSERT_OK_AND_ASSIGN(Report r, BuildReport(TestComm(), dir / "ds", o));
  ASSERT_EQ(r.splits.size(), 1u);
  ASSERT_OK_AND_ASSIGN(SplitStats stats, ComputeSplitStats(TestComm(), dir / "ds", Split::kTrain, 2));
  if (TestComm().rank() != 0) return;
  const SplitReport& s = r.splits[0];
  EXPECT_EQ(s.stats.examples, static_cast<std::uint64_t>(kExamples));
  // Statistics: those of `stats`, to the bit.
  ASSERT_EQ(s.stats.attributes.size(), stats.attributes.size());
  for (std::size_t a = 0; a < stats.attributes.size(); ++a) {
    EXPECT_EQ(s.stats.attributes[a].moments.mean, stats.attributes[a].moments.mean) << a;
    EXPECT_EQ(s.stats.attributes[a].moments.m2, stats.attributes[a].moments.m2) << a;
    EXPECT_EQ(s.stats.attributes[a].moments.count, stats.attributes[a].moments.count) << a;
  }
  // Shards and their custom_metadata.
  EXPECT_EQ(s.shards.size(), 13u);
  std::uint64_t examples = 0;
  for (const ShardSummary& sh : s.shards) {
    examples += sh.examples;
    EXPECT_GT(sh.bytes, 0u);
  }
  EXPECT_EQ(examples, static_cast<std::uint64_t>(kExamples));
  ASSERT_EQ(s.custom_metadata.size(), 1u);
  EXPECT_EQ(s.custom_metadata[0].key, "group");
  EXPECT_EQ(s.custom_metadata[0].distinct, 2u);
  EXPECT_EQ(s.custom_metadata[0].shards, 13u);
  // Profile of the trace.
  ASSERT_EQ(s.profiles.size(), 1u);
  const SampleProfile& p = s.profiles[0];
  ASSERT_EQ(p.mean.size(), static_cast<std::size_t>(kSamples));
  for (int j = 0; j < kSamples; ++j) {
    double m = 0, v = 0, lo = INFINITY, hi = -INFINITY;
    for (int i = 0; i < kExamples; ++i) m += Trace(i, j), lo = std::min<double>(lo, Trace(i, j)), hi = std::max<double>(hi, Trace(i, j));
    m /= kExamples;
    for (int i = 0; i < kExamples; ++i) v += (Trace(i, j) - m) * (Trace(i, j) - m);
    EXPECT_NEAR(p.mean[j], m, 1e-12 * std::max(1.0, std::fabs(m))) << j;
    EXPECT_NEAR(p.std[j], std::sqrt(v / kExamples), 1e-9) << j;
    EXPECT_EQ(p.min[j], lo);
    EXPECT_EQ(p.max[j], hi);
  }
  // Histograms: plaintext, key and label (uint8/int16 of <= 16 elements).
  ASSERT_EQ(s.histograms.size(), 3u);
  EXPECT_EQ(s.histograms[0].attribute, "plaintext");
  std::map<std::int64_t, std::uint64_t> want;
  for (int i = 0; i < kExamples; ++i) {
    for (int k = 0; k < 16; ++k) ++want[Plaintext(i, k)];
  }
  for (std::size_t b = 0; b < s.histograms[0].counts.size(); ++b) {
    const auto value = s.histograms[0].first + static_cast<std::int64_t>(b);
    EXPECT_EQ(s.histograms[0].counts[b], want.count(value) ? want[value] : 0u) << value;
  }
  EXPECT_EQ(s.histograms[1].counts, std::vector<std::uint64_t>{kExamples * 16u});  // the key is all zero
  EXPECT_EQ(s.histograms[2].first, 0);
  EXPECT_EQ(s.histograms[2].counts.size(), 3u);
  // SNR: the leak at kLeak, the values of a direct computation, skipped classes.
  ASSERT_EQ(s.snrs.size(), 2u);
  std::map<std::int64_t, int> counts;
  const auto direct = DirectSnr([](int i) { return std::popcount(Plaintext(i, 0)); }, &counts);
  const SnrCurve& c = s.snrs[0];
  EXPECT_EQ(c.expression, "hw(plaintext[0]^key[0])");
  EXPECT_EQ(c.attribute, "trace");
  EXPECT_EQ(c.peak_sample, kLeak);
  ASSERT_EQ(c.snr.size(), static_cast<std::size_t>(kSamples));
  for (int j = 0; j < kSamples; ++j) EXPECT_NEAR(c.snr[j], direct[j], 1e-9 * std::max(1.0, direct[j])) << j;
  EXPECT_EQ(c.peak, c.snr[kLeak]);
  std::vector<double> sorted = direct;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_NEAR(c.median, (sorted[kSamples / 2 - 1] + sorted[kSamples / 2]) / 2, 1e-9);
  for (const SnrClass& k : c.classes) {
    EXPECT_EQ(static_cast<int>(k.examples), counts[k.value]);
    EXPECT_EQ(k.used, k.examples >= 2);
  }
  std::size_t skipped = 0;
  for (const SnrClass& k : s.snrs[1].classes) skipped += !k.used;
  EXPECT_GT(skipped, 0u);  // 256 plaintext values over 200 examples: some appear once
  EXPECT_EQ(s.snrs[1].peak_sample, kLeak);
}

TEST(BuildReport, OneAndTwoThreadsGiveTheSameBits) {
  SharedDir dir;
  MakeDataset(dir / "ds");
  ReportOptions o;
  o.snr = {"hw(plaintext[0])"};
  o.pass.threads = 1;
  ASSERT_OK_AND_ASSIGN(Report one, BuildReport(TestComm(), dir / "ds", o));
  o.pass.threads = 2;
  ASSERT_OK_AND_ASSIGN(Report two, BuildReport(TestComm(), dir / "ds", o));
  if (TestComm().rank() != 0) return;
  EXPECT_EQ(one.splits[0].profiles[0].mean, two.splits[0].profiles[0].mean);
  EXPECT_EQ(one.splits[0].profiles[0].std, two.splits[0].profiles[0].std);
  EXPECT_EQ(one.splits[0].snrs[0].snr, two.splits[0].snrs[0].snr);
  EXPECT_EQ(ReportToJson(one), ReportToJson(two));
}

TEST(BuildReport, MaxSamplesAndMaxClassesAndBadOptions) {
  SharedDir dir;
  MakeDataset(dir / "ds");
  ReportOptions o;
  o.snr = {"hw(plaintext[0])"};
  o.max_samples = 10;
  ASSERT_OK_AND_ASSIGN(Report r, BuildReport(TestComm(), dir / "ds", o));
  if (TestComm().rank() == 0) {
    EXPECT_EQ(r.splits[0].profiles[0].mean.size(), 10u);
    EXPECT_EQ(r.splits[0].profiles[0].length, static_cast<std::uint64_t>(kSamples));
    EXPECT_EQ(r.splits[0].snrs[0].snr.size(), 10u);
    EXPECT_EQ(r.splits[0].stats.attributes[0].moments.count, static_cast<std::uint64_t>(kExamples * kSamples));
  }
  o = {};
  o.snr = {"plaintext[0]"};
  o.max_classes = 4;
  Status st = BuildReport(TestComm(), dir / "ds", o).status();
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("more than 4 classes"), std::string::npos) << st.message();
  o = {};
  o.snr = {"hw(plaintext[99])"};
  EXPECT_EQ(BuildReport(TestComm(), dir / "ds", o).status().code(), StatusCode::kInvalidArgument);
  o = {};
  o.splits = {Split::kTest};
  EXPECT_EQ(BuildReport(TestComm(), dir / "ds", o).status().code(), StatusCode::kNotFound);
  o = {};
  o.snr_attribute = "plaintext";
  EXPECT_EQ(BuildReport(TestComm(), dir / "ds", o).status().code(), StatusCode::kInvalidArgument);
}

TEST(ReportPage, SelfContainedWithEveryPlotAndTheJsonSchema) {
  SharedDir dir;
  MakeDataset(dir / "ds");
  ReportOptions o;
  o.snr = {"hw(plaintext[0]^key[0])", "hw(plaintext[1])"};
  ASSERT_OK_AND_ASSIGN(Report r, BuildReport(TestComm(), dir / "ds", o));
  if (TestComm().rank() != 0) return;
  r.info.metadata.description = "see https://example.com/x <b>&";
  const std::string html = ReportToHtml(r);
  for (std::string_view id : {"shards-examples-train", "shards-bytes-train", "profile-train-trace",
                              "hist-train-plaintext", "hist-train-key", "hist-train-label", "snr-train-0",
                              "snr-train-1"}) {
    EXPECT_NE(html.find("id=\"" + std::string(id) + "\""), std::string::npos) << id;
  }
  for (std::string_view bad : {"<script", "http:", "https:", "://", "src=", "href=", "url(", "@import", "<b>"}) {
    EXPECT_EQ(html.find(bad), std::string::npos) << bad;
  }
  EXPECT_NE(html.find("peak "), std::string::npos);
  const auto j = nlohmann::json::parse(ReportToJson(r));
  EXPECT_EQ(j["schema"], "sedpack-hpc/report/1");
  EXPECT_EQ(j["snr"]["expression"], "hw(plaintext[0]^key[0])");
  EXPECT_EQ(j["snr"]["split"], "train");
  EXPECT_EQ(j["snr"]["peak_sample"], kLeak);
  EXPECT_EQ(j["snrs"].size(), 2u);
  EXPECT_EQ(j["splits"][0]["examples"], kExamples);
  EXPECT_EQ(j["splits"][0]["attributes"][0]["name"], "trace");
}

TEST(ReportPage, DecimatedPlotsKeepThePageSmallForLongTraces) {
  auto page = [](std::size_t samples) {
    Report r;
    r.root = "ds";
    SplitReport s;
    SampleProfile p;
    p.attribute = "trace1";
    p.length = samples;
    SnrCurve c;
    c.expression = "hw(key[0])";
    c.attribute = "trace1";
    for (std::size_t t = 0; t < samples; ++t) {
      const double x = std::sin(static_cast<double>(t) * 0.01) + (t == samples / 3 ? 5 : 0);
      p.mean.push_back(x);
      p.std.push_back(0.1);
      p.min.push_back(x - 1);
      p.max.push_back(x + 1);
      c.snr.push_back(std::fabs(x));
    }
    c.peak_sample = static_cast<std::int64_t>(samples / 3);
    c.peak = c.snr[samples / 3];
    s.profiles.push_back(p);
    s.snrs.push_back(c);
    r.splits.push_back(s);
    return ReportToHtml(r);
  };
  const std::string small = page(8000), large = page(80000);
  EXPECT_LT(large.size(), 300'000u);
  EXPECT_LT(large.size(), small.size() * 11 / 10);  // not proportional to the samples
  // The spike survives decimation: some column reaches the top of the plot
  // (y = 34, the frame's top) in the SNR plot.
  EXPECT_NE(large.find(" 34.0"), std::string::npos);
}

TEST(BuildReport, SnrOfGeneratedTinyAesTracesPeaksAtTheLeak) {
  SharedDir dir;
  GenerateConfig config = DefaultGenerateConfig();
  ASSERT_OK(SetTraceLength(&config, 2000));
  config.params.examples = {1024, 0, 0};
  config.params.threads = 2;
  if (TestComm().rank() == 0) ASSERT_OK(GenerateDataset(config, dir / "tinyaes").status());
  EXPECT_OK(TestComm().Barrier());
  ReportOptions o;
  o.snr = {"hw(sbox(plaintext[0]^key[0]))", "hw(plaintext[3]^key[3])"};
  ASSERT_OK_AND_ASSIGN(Report r, BuildReport(TestComm(), dir / "tinyaes", o));
  if (TestComm().rank() != 0) return;
  ASSERT_OK_AND_ASSIGN(auto gen, ExampleGenerator::Make(config));
  const SplitReport& s = r.splits[0];
  EXPECT_EQ(s.snrs[0].peak_sample, gen->LeakSample(LeakKind::kSubBytes, 0));
  EXPECT_EQ(s.snrs[1].peak_sample, gen->LeakSample(LeakKind::kAddRoundKey, 3));
  EXPECT_GT(s.snrs[0].peak, 100 * s.snrs[0].median);
}

}  // namespace
}  // namespace sedpack
