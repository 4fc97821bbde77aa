// SPDX-License-Identifier: Apache-2.0
// Writer round trips: every dtype x shard type x compression x hash algorithm,
// shard rollover, metadata rules, appending, and refusal of bad examples.
#include <algorithm>
#include <filesystem>
#include <map>
#include <regex>
#include <set>
#include <nlohmann/json.hpp>

#include "sedpack/check/check.h"
#include "sedpack/dataset/filler.h"
#include "sedpack/dataset/reader.h"
#include "support/fault_fs.h"
#include "support/memory_fs.h"
#include "support/test_support.h"

namespace sedpack {
namespace {

using testing::TempDir;

Attribute Attr(std::string name, std::string dtype, Shape shape) {
  Attribute a;
  a.name = std::move(name);
  a.dtype = std::move(dtype);
  a.shape = std::move(shape);
  return a;
}

// Owns the buffers of one example of the all-dtypes schema, derived from `k`.
struct AllTypesExample {
  explicit AllTypesExample(int k) {
    for (int j = 0; j < 3; ++j) f16.push_back(Float16::FromFloat((3 * k + j) * 0.125f - 2.0f));
    for (int j = 0; j < 12; ++j) f32.push_back((12 * k + j) * 0.25f - 1.5f);
    f64 = {k / 3.0, -(k * 0.001)};
    for (int j = 0; j < 5; ++j) i8.push_back(static_cast<std::int8_t>((7 * k + 31 * j) % 256 - 128));
    for (int j = 0; j < 6; ++j) i16.push_back(static_cast<std::int16_t>(997 * k + 211 * j));
    for (int j = 0; j < 4; ++j) i32.push_back(static_cast<std::int32_t>(2654435761u * k + 40503u * j));
    i64 = {static_cast<std::int64_t>((k + 1) * 0x9E3779B97F4A7C15ull), -k};
    for (int j = 0; j < 16; ++j) u8.push_back(static_cast<std::uint8_t>(16 * k + j));
    u16 = static_cast<std::uint16_t>(4099 * k);
    u32 = {2654435761u * k, 1u, 2u};
    u64 = {0xFFFFFFFFFFFFFFFFull - k, static_cast<std::uint64_t>(k)};
    for (int j = 0; j < 5; ++j) flag.push_back((k + j) % 3 == 0 ? 1 : 0);
    n = (k % 2 ? -1 : 1) * static_cast<std::int64_t>(k) * 123456789012345LL;
    text = (k % 7 == 3) ? "" : "ex" + std::to_string(k) + (k % 2 ? "\xc3\xa9" : "");
    for (int i = 0; i < k % 6; ++i) blob.push_back(static_cast<std::uint8_t>(13 * k + i));
    for (int j = 0; j < 8; ++j) fixed.push_back(static_cast<std::uint8_t>(8 * k + 3 * j));
  }
  std::vector<ValueView> Views() const {
    return {ValueView::Array(f16, {3}),
            ValueView::Array(f32, {3, 4}),
            ValueView::Array(f64, {2}),
            ValueView::Array(i8, {5}),
            ValueView::Array(i16, {2, 3}),
            ValueView::Array(i32, {4}),
            ValueView::Array(i64, {2}),
            ValueView::Array(u8, {16}),
            ValueView::Scalar(u16),
            ValueView::Array(u32, {3}),
            ValueView::Array(u64, {2}),
            ValueView{DType::kBool, {5}, std::as_bytes(std::span<const std::uint8_t>(flag))},
            ValueView::Int(n),
            ValueView::Str(text),
            ValueView::Bytes(std::span<const std::uint8_t>(blob)),
            ValueView::FixedBytes(fixed)};
  }
  std::vector<Float16> f16;
  std::vector<float> f32;
  std::vector<double> f64;
  std::vector<std::int8_t> i8;
  std::vector<std::int16_t> i16;
  std::vector<std::int32_t> i32;
  std::vector<std::int64_t> i64;
  std::vector<std::uint8_t> u8;
  std::uint16_t u16;
  std::vector<std::uint32_t> u32;
  std::vector<std::uint64_t> u64;
  std::vector<std::uint8_t> flag;
  std::int64_t n;
  std::string text;
  std::vector<std::uint8_t> blob;
  std::vector<std::uint8_t> fixed;
};

// Attributes of the all-dtypes schema that tfrec cannot store (bool, int16,
// uint16/32/64): left out of tfrec datasets.
bool InTfrec(std::size_t attribute) {
  return attribute != 4 && attribute != 8 && attribute != 9 && attribute != 10 && attribute != 11;
}

template <typename T>
std::vector<T> ForType(ShardFileType type, std::vector<T> all) {
  if (type != ShardFileType::kTfrec) return all;
  std::vector<T> kept;
  for (std::size_t j = 0; j < all.size(); ++j) {
    if (InTfrec(j)) kept.push_back(std::move(all[j]));
  }
  return kept;
}

DatasetStructure AllTypesStructure(ShardFileType type, Compression c, std::vector<HashAlgorithm> h) {
  DatasetStructure s;
  s.saved_data_description = {
      Attr("f16", "float16", {3}), Attr("f32", "float32", {3, 4}), Attr("f64", "float64", {2}),
      Attr("i8", "int8", {5}),     Attr("i16", "int16", {2, 3}),   Attr("i32", "int32", {4}),
      Attr("i64", "int64", {2}),   Attr("u8", "uint8", {16}),      Attr("u16", "uint16", {}),
      Attr("u32", "uint32", {3}),  Attr("u64", "uint64", {2}),     Attr("flag", "bool", {5}),
      Attr("n", "int", {}),        Attr("text", "str", {}),        Attr("blob", "bytes", {}),
      Attr("fixed", "bytes", {8})};
  s.saved_data_description = ForType(type, std::move(s.saved_data_description));
  s.compression = c;
  s.shard_file_type = type;
  s.examples_per_shard = 4;
  s.hash_checksum_algorithms = std::move(h);
  return s;
}

Split SplitOf(int k) { return k % 5 == 1 ? Split::kTest : (k % 7 == 6 ? Split::kHoldout : Split::kTrain); }

void ExpectSameValues(const std::vector<ValueView>& want, const Example& got, int k) {
  for (std::size_t j = 0; j < want.size(); ++j) {
    const ValueView g = got.Get(j);
    ASSERT_EQ(g.data.size(), want[j].data.size()) << "example " << k << " attribute " << j;
    if (got.shard->Get(got.index, j).dtype == DType::kFloat64 && want[j].dtype == DType::kFloat64 &&
        !std::equal(g.data.begin(), g.data.end(), want[j].data.begin())) {
      // tfrec stores float64 as float32: what comes back is that float32, widened.
      for (std::size_t i = 0; i < g.data.size() / 8; ++i) {
        EXPECT_EQ(g.At<double>(i), static_cast<double>(static_cast<float>(want[j].At<double>(i))))
            << "example " << k << " attribute " << j;
      }
      continue;
    }
    EXPECT_TRUE(std::equal(g.data.begin(), g.data.end(), want[j].data.begin()))
        << "example " << k << " attribute " << j;
  }
}

struct Combo {
  ShardFileType type;
  Compression compression;
  std::vector<HashAlgorithm> hashes;
};

class RoundTripTest : public ::testing::TestWithParam<Combo> {};

TEST_P(RoundTripTest, WritesReadsAndChecks) {
  const Combo& combo = GetParam();
  TempDir tmp;
  const std::string root = tmp.path() + "/ds";
  Metadata md;
  md.description = "round trip";
  ASSERT_OK_AND_ASSIGN(auto ds, Dataset::Create(root, md, AllTypesStructure(combo.type, combo.compression,
                                                                             combo.hashes)));
  FillerOptions fopts;
  fopts.concurrency = 2;
  ASSERT_OK_AND_ASSIGN(auto filler, Filler::Make(ds, fopts));
  std::vector<std::unique_ptr<AllTypesExample>> examples;
  for (int k = 0; k < 24; ++k) {
    examples.push_back(std::make_unique<AllTypesExample>(k));
    const auto views = ForType(combo.type, examples.back()->Views());
    ASSERT_OK(filler->WriteExample(SplitOf(k), views));
  }
  ASSERT_OK(filler->Finish());

  ASSERT_OK_AND_ASSIGN(auto reopened, Dataset::Open(root));
  std::map<Split, std::vector<int>> ids;
  for (int k = 0; k < 24; ++k) ids[SplitOf(k)].push_back(k);
  for (const auto& [split, want_ids] : ids) {
    ASSERT_OK_AND_ASSIGN(auto reader, ExampleReader::Make(reopened, split));
    for (int k : want_ids) {
      ASSERT_OK_AND_ASSIGN(auto ex, reader->Next());
      ASSERT_TRUE(ex.has_value());
      ExpectSameValues(ForType(combo.type, examples[k]->Views()), *ex, k);
    }
    ASSERT_OK_AND_ASSIGN(auto end, reader->Next());
    EXPECT_FALSE(end.has_value());
    EXPECT_EQ(reopened->info().FindSplit(split)->number_of_examples,
              static_cast<std::int64_t>(want_ids.size()));
  }
  CheckOptions copts;
  copts.deep = true;
  ASSERT_OK_AND_ASSIGN(copts.expected_root_checksums, reopened->MetadataChecksums());
  ASSERT_OK_AND_ASSIGN(CheckReport report, CheckDataset(root, copts));
  for (const auto& p : report.problems) ADD_FAILURE() << p.path << ": " << p.message;
  EXPECT_EQ(report.examples_checked, 24u);
}

std::vector<Combo> Combos() {
  std::vector<Combo> out;
  const std::vector<std::vector<HashAlgorithm>> hash_sets = {
      {HashAlgorithm::kSha256},
      {HashAlgorithm::kMd5, HashAlgorithm::kSha1, HashAlgorithm::kSha224, HashAlgorithm::kSha384},
      {HashAlgorithm::kSha512, HashAlgorithm::kSha3_224, HashAlgorithm::kSha3_256},
      {HashAlgorithm::kSha3_384, HashAlgorithm::kSha3_512, HashAlgorithm::kXxh32},
      {HashAlgorithm::kXxh64, HashAlgorithm::kXxh128},
      {}};
  std::size_t h = 0;
  for (Compression c : {Compression::kNone, Compression::kGzip, Compression::kZlib, Compression::kBz2,
                        Compression::kLzma, Compression::kLz4, Compression::kZstd}) {
    out.push_back({ShardFileType::kFb, c, hash_sets[h++ % hash_sets.size()]});
  }
  for (Compression c : {Compression::kNone, Compression::kZip}) {
    out.push_back({ShardFileType::kNpz, c, hash_sets[h++ % hash_sets.size()]});
  }
  for (Compression c : {Compression::kNone, Compression::kGzip, Compression::kZlib}) {
    out.push_back({ShardFileType::kTfrec, c, hash_sets[h++ % hash_sets.size()]});
  }
  return out;
}

TEST(TfrecDatasetTest, DTypesTfrecCannotStoreAreRefusedAtTheFirstWrite) {
  // As in the reference, the dataset is created and the first write refuses.
  TempDir tmp;
  DatasetStructure s = AllTypesStructure(ShardFileType::kFb, Compression::kGzip, {});
  s.shard_file_type = ShardFileType::kTfrec;
  ASSERT_OK_AND_ASSIGN(auto tf, Dataset::Create(tmp.path() + "/tf", Metadata{}, s));
  ASSERT_OK_AND_ASSIGN(auto filler, Filler::Make(tf));
  AllTypesExample ex(1);
  EXPECT_STATUS(StatusCode::kInvalidArgument,
                "attribute \"i16\" has dtype int16, which tfrec shards cannot store",
                filler->WriteExample(Split::kTrain, ex.Views()));
}

INSTANTIATE_TEST_SUITE_P(AllCombos, RoundTripTest, ::testing::ValuesIn(Combos()),
                         [](const auto& info) {
                           std::string c(CompressionName(info.param.compression));
                           return std::string(ShardFileTypeName(info.param.type)) + "_" +
                                  (c.empty() ? "none" : c) + "_" + std::to_string(info.index);
                         });

DatasetStructure SmallStructure(std::int64_t per_shard = 3) {
  DatasetStructure s;
  s.saved_data_description = {Attr("x", "int32", {2}), Attr("s", "str", {})};
  s.compression = Compression::kLz4;
  s.examples_per_shard = per_shard;
  return s;
}

Status WriteSmall(Filler& f, Split split, std::int32_t k, const JsonValue* meta = nullptr) {
  std::vector<std::int32_t> x = {k, -k};
  std::string s = "v" + std::to_string(k);
  std::vector<ValueView> views = {ValueView::Array(x, {2}), ValueView::Str(s)};
  return f.WriteExample(split, views, meta);
}

std::vector<std::int32_t> ReadXs(const std::shared_ptr<Dataset>& ds, Split split) {
  std::vector<std::int32_t> out;
  auto reader = ExampleReader::Make(ds, split);
  EXPECT_TRUE(reader.ok()) << reader.status().ToString();
  if (!reader.ok()) return out;
  for (;;) {
    auto ex = (*reader)->Next();
    EXPECT_TRUE(ex.ok());
    if (!ex.ok() || !ex->has_value()) break;
    out.push_back((*ex)->Get(0).At<std::int32_t>(0));
  }
  return out;
}

TEST(FillerTest, RolloverAndMetadataRules) {
  TempDir tmp;
  ASSERT_OK_AND_ASSIGN(auto ds, Dataset::Create(tmp.path(), Metadata{}, SmallStructure(3)));
  ASSERT_OK_AND_ASSIGN(auto filler, Filler::Make(ds));
  auto a = *JsonValue::Parse(R"({"group":"A"})");
  auto b = *JsonValue::Parse(R"({"group":"B"})");
  ASSERT_OK(WriteSmall(*filler, Split::kTrain, 0, nullptr));  // retroactively gets A
  ASSERT_OK(WriteSmall(*filler, Split::kTrain, 1, &a));
  ASSERT_OK(WriteSmall(*filler, Split::kTrain, 2, nullptr));  // keeps A
  ASSERT_OK(WriteSmall(*filler, Split::kTrain, 3, &a));       // full: new shard
  ASSERT_OK(WriteSmall(*filler, Split::kTrain, 4, &b));       // change closes early
  ASSERT_OK(WriteSmall(*filler, Split::kTrain, 5, &a));       // A again: a third shard
  ASSERT_OK(filler->Finish());
  ASSERT_OK_AND_ASSIGN(auto shards, ListShards(ds, Split::kTrain));
  ASSERT_EQ(shards.size(), 4u);
  EXPECT_EQ(shards[0].number_of_examples, 3);
  EXPECT_EQ(shards[0].custom_metadata.text(), R"({"group":"A"})");
  EXPECT_EQ(shards[1].number_of_examples, 1);
  EXPECT_EQ(shards[2].custom_metadata.text(), R"({"group":"B"})");
  EXPECT_EQ(shards[3].custom_metadata.text(), R"({"group":"A"})");
  EXPECT_EQ(ReadXs(ds, Split::kTrain), (std::vector<std::int32_t>{0, 1, 2, 3, 4, 5}));
  // Reference layout: <split>/<10hex>/<10hex>/<10hex>/<32hex>.fb
  const std::string& p = shards[0].file_infos[0].file_path;
  EXPECT_TRUE(std::regex_match(p, std::regex("train/[0-9a-f]{10}/[0-9a-f]{10}/[0-9a-f]{10}/[0-9a-f]{32}\\.fb")))
      << p;
}

TEST(FillerTest, RejectsBadExampleBeforeWriting) {
  TempDir tmp;
  ASSERT_OK_AND_ASSIGN(auto ds, Dataset::Create(tmp.path(), Metadata{}, SmallStructure()));
  ASSERT_OK_AND_ASSIGN(auto filler, Filler::Make(ds));
  std::vector<float> wrong = {1.0f, 2.0f};
  std::vector<ValueView> views = {ValueView::Array(wrong, {2}), ValueView::Str("x")};
  EXPECT_STATUS(StatusCode::kInvalidArgument, "\"x\" has dtype int32", filler->WriteExample(Split::kTrain, views));
  std::vector<std::int32_t> three = {1, 2, 3};
  views = {ValueView::Array(three, {3}), ValueView::Str("x")};
  EXPECT_STATUS(StatusCode::kInvalidArgument, "shape (3,), expected (2,)", filler->WriteExample(Split::kTrain, views));
  views = {ValueView::Array(three, {3})};
  EXPECT_STATUS(StatusCode::kInvalidArgument, "1 values", filler->WriteExample(Split::kTrain, views));
  // The filler is still usable and nothing bad was written.
  ASSERT_OK(WriteSmall(*filler, Split::kTrain, 7));
  ASSERT_OK(filler->Finish());
  EXPECT_EQ(ReadXs(ds, Split::kTrain), (std::vector<std::int32_t>{7}));
}

TEST(FillerTest, UnfinishedFillerLeavesMetadataUntouched) {
  TempDir tmp;
  ASSERT_OK_AND_ASSIGN(auto ds, Dataset::Create(tmp.path(), Metadata{}, SmallStructure()));
  ASSERT_OK_AND_ASSIGN(auto before, ds->MetadataChecksums());
  {
    ASSERT_OK_AND_ASSIGN(auto filler, Filler::Make(ds));
    for (int k = 0; k < 10; ++k) ASSERT_OK(WriteSmall(*filler, Split::kTrain, k));
  }  // destroyed without Finish: like a crashed job
  ASSERT_OK_AND_ASSIGN(auto after, ds->MetadataChecksums());
  EXPECT_EQ(before, after);
  ASSERT_OK_AND_ASSIGN(auto reopened, Dataset::Open(tmp.path()));
  EXPECT_TRUE(reopened->info().splits.empty());
}

TEST(FillerTest, AppendKeepsOldDataFirst) {
  TempDir tmp;
  {
    ASSERT_OK_AND_ASSIGN(auto ds, Dataset::Create(tmp.path(), Metadata{}, SmallStructure()));
    ASSERT_OK_AND_ASSIGN(auto filler, Filler::Make(ds));
    for (int k = 0; k < 5; ++k) ASSERT_OK(WriteSmall(*filler, Split::kTrain, k));
    ASSERT_OK(WriteSmall(*filler, Split::kTest, 100));
    ASSERT_OK(filler->Finish());
  }
  ASSERT_OK_AND_ASSIGN(auto ds, Dataset::Open(tmp.path()));
  ASSERT_OK_AND_ASSIGN(auto test_before, ListShards(ds, Split::kTest));
  ASSERT_OK_AND_ASSIGN(auto filler, Filler::Make(ds));
  for (int k = 5; k < 9; ++k) ASSERT_OK(WriteSmall(*filler, Split::kTrain, k));
  ASSERT_OK(filler->Finish());
  ASSERT_OK_AND_ASSIGN(auto reopened, Dataset::Open(tmp.path()));
  EXPECT_EQ(ReadXs(reopened, Split::kTrain), (std::vector<std::int32_t>{0, 1, 2, 3, 4, 5, 6, 7, 8}));
  EXPECT_EQ(reopened->info().FindSplit(Split::kTrain)->number_of_examples, 9);
  EXPECT_EQ(reopened->info().FindSplit(Split::kTrain)->number_of_shards, 4);
  EXPECT_EQ(reopened->info().FindSplit(Split::kTest)->number_of_examples, 1);
  ASSERT_OK_AND_ASSIGN(auto split_list, LoadShardsList(*reopened, "train/shards_list.json"));
  EXPECT_EQ(split_list.children_shard_lists.size(), 2u);
  ASSERT_OK_AND_ASSIGN(CheckReport report, CheckDataset(tmp.path()));
  for (const auto& p : report.problems) ADD_FAILURE() << p.path << ": " << p.message;
}

TEST(FillerTest, RelativePathFromSplitAndMerge) {
  TempDir tmp;
  ASSERT_OK_AND_ASSIGN(auto ds, Dataset::Create(tmp.path(), Metadata{}, SmallStructure()));
  std::vector<ShardListInfo> infos;
  for (int w = 0; w < 3; ++w) {
    FillerOptions o;
    o.relative_path_from_split = "job1-r" + std::to_string(w);
    o.auto_update_dataset = false;
    ASSERT_OK_AND_ASSIGN(auto filler, Filler::Make(ds, o));
    for (int k = 0; k < 4; ++k) ASSERT_OK(WriteSmall(*filler, w == 1 ? Split::kTest : Split::kTrain, 10 * w + k));
    ASSERT_OK(filler->Finish());
    for (const auto& i : filler->updated_infos()) infos.push_back(i);
  }
  ASSERT_OK(ds->WriteConfig(infos).status());
  ASSERT_OK_AND_ASSIGN(auto reopened, Dataset::Open(tmp.path()));
  EXPECT_EQ(ReadXs(reopened, Split::kTrain), (std::vector<std::int32_t>{0, 1, 2, 3, 20, 21, 22, 23}));
  EXPECT_EQ(ReadXs(reopened, Split::kTest), (std::vector<std::int32_t>{10, 11, 12, 13}));
  ASSERT_OK_AND_ASSIGN(auto split_list, LoadShardsList(*reopened, "train/shards_list.json"));
  ASSERT_EQ(split_list.children_shard_lists.size(), 2u);
  EXPECT_EQ(split_list.children_shard_lists[0].shard_list_info_file.file_path,
            "train/job1-r0/shards_list.json");
  ASSERT_OK_AND_ASSIGN(CheckReport report, CheckDataset(tmp.path()));
  for (const auto& p : report.problems) ADD_FAILURE() << p.path << ": " << p.message;
}

// Every list of the tree under `rel` (a shards_list.json path): each names only
// shards in its own folder and children exactly one folder deeper; adds the
// number of lists to *lists and checks no list below the split's names more
// than `max` entries (the split's own list is unbounded, as the reference's
// top folder level).
void ExpectBalancedTree(const std::shared_ptr<Dataset>& ds, const std::string& rel, std::size_t max,
                        int* lists) {
  ASSERT_OK_AND_ASSIGN(ShardsList list, LoadShardsList(*ds, rel));
  ++*lists;
  const std::string dir = rel.substr(0, rel.rfind('/'));
  EXPECT_LE(list.shard_files.size(), max) << rel;
  if (dir.find('/') != std::string::npos) {
    EXPECT_LE(list.children_shard_lists.size(), max) << rel;
  }
  EXPECT_TRUE(list.shard_files.empty() || list.children_shard_lists.empty()) << rel;
  for (const ShardInfo& s : list.shard_files) {
    const std::string& p = s.file_infos[0].file_path;
    EXPECT_EQ(p.substr(0, p.rfind('/')), dir) << rel << " names " << p;
  }
  for (const ShardListInfo& c : list.children_shard_lists) {
    const std::string& p = c.shard_list_info_file.file_path;
    const std::string child_dir = p.substr(0, p.rfind('/'));
    EXPECT_EQ(child_dir.substr(0, child_dir.rfind('/')), dir) << rel << " names " << p;
    ExpectBalancedTree(ds, p, max, lists);
  }
}

TEST(FillerTest, OneListPerLeafFolderWrittenAsItFills) {
  TempDir tmp;
  ASSERT_OK_AND_ASSIGN(auto ds, Dataset::Create(tmp.path(), Metadata{}, SmallStructure(1)));
  FillerOptions o;
  o.max_branching = 3;  // 3 shards per leaf, 3 leaves per folder above it
  o.concurrency = 2;
  ASSERT_OK_AND_ASSIGN(auto filler, Filler::Make(ds, o));
  std::vector<std::int32_t> train;
  for (int k = 0; k < 30; ++k) {
    ASSERT_OK(WriteSmall(*filler, Split::kTrain, k));
    train.push_back(k);
    if (k == 20) {
      // Full leaves have their lists on disk before Finish (shards 0-17 are in
      // six full leaves by now).
      int on_disk = 0;
      for (const auto& e : std::filesystem::recursive_directory_iterator(tmp.path() + "/train")) {
        on_disk += e.path().filename() == "shards_list.json";
      }
      EXPECT_GE(on_disk, 5);
    }
  }
  ASSERT_OK(filler->Finish());
  // 30 shards in leaves of 3: 10 leaf lists, all handed to the merge.
  EXPECT_EQ(filler->updated_infos().size(), 10u);
  ASSERT_OK_AND_ASSIGN(auto reopened, Dataset::Open(tmp.path()));
  EXPECT_EQ(ReadXs(reopened, Split::kTrain), train);
  EXPECT_EQ(reopened->info().FindSplit(Split::kTrain)->number_of_shards, 30);
  int lists = 0;
  ExpectBalancedTree(reopened, "train/shards_list.json", 3, &lists);
  // 10 leaves, 4 folders of up to 3 leaves, 2 folders above them, the split's list.
  EXPECT_EQ(lists, 10 + 4 + 2 + 1);
  ASSERT_OK_AND_ASSIGN(CheckReport report, CheckDataset(tmp.path()));
  for (const auto& p : report.problems) ADD_FAILURE() << p.path << ": " << p.message;
  EXPECT_EQ(report.shards_checked, 30u);
}

TEST(FillerTest, SplitsSharingLeafFoldersEachGetTheirOwnLists) {
  TempDir tmp;
  ASSERT_OK_AND_ASSIGN(auto ds, Dataset::Create(tmp.path(), Metadata{}, SmallStructure(2)));
  FillerOptions o;
  o.max_branching = 2;
  ASSERT_OK_AND_ASSIGN(auto filler, Filler::Make(ds, o));
  std::map<Split, std::vector<std::int32_t>> want;
  for (int k = 0; k < 41; ++k) {
    const Split split = k % 5 == 1 ? Split::kTest : (k % 7 == 3 ? Split::kHoldout : Split::kTrain);
    ASSERT_OK(WriteSmall(*filler, split, k));
    want[split].push_back(k);
  }
  ASSERT_OK(filler->Finish());
  ASSERT_OK_AND_ASSIGN(auto reopened, Dataset::Open(tmp.path()));
  for (const auto& [split, xs] : want) {
    EXPECT_EQ(ReadXs(reopened, split), xs) << SplitName(split);
    int lists = 0;
    ExpectBalancedTree(reopened, std::string(SplitName(split)) + "/shards_list.json", 2, &lists);
  }
  ASSERT_OK_AND_ASSIGN(CheckReport report, CheckDataset(tmp.path()));
  for (const auto& p : report.problems) ADD_FAILURE() << p.path << ": " << p.message;
}

TEST(FillerTest, AFailedFillerRemovesTheLeavesItFinished) {
  TempDir tmp;
  ASSERT_OK_AND_ASSIGN(auto ds, Dataset::Create(tmp.path(), Metadata{}, SmallStructure(1)));
  {
    FillerOptions o;
    o.max_branching = 2;
    ASSERT_OK_AND_ASSIGN(auto filler, Filler::Make(ds, o));
    for (int k = 0; k < 9; ++k) ASSERT_OK(WriteSmall(*filler, Split::kTrain, k));
  }  // dropped without Finish: four leaves had their lists written
  int files = 0;
  for (const auto& e : std::filesystem::recursive_directory_iterator(tmp.path())) {
    files += e.is_regular_file() && e.path().filename() != "dataset_info.json";
  }
  EXPECT_EQ(files, 0);
  // The split folder stays (it may have been there before); nothing is in it.
  EXPECT_TRUE(std::filesystem::is_empty(tmp.path() + "/train"));
}

// Options opening a dataset on `fs`.
OpenOptions OnFileSystem(FileSystem* fs) {
  OpenOptions o;
  o.file_system = fs;
  return o;
}

// A split of many leaf lists (two shards each) for the streaming readers.
std::shared_ptr<Dataset> ManyListsDataset(const std::string& root, int examples) {
  auto ds = Dataset::Create(root, Metadata{}, SmallStructure(1));
  EXPECT_TRUE(ds.ok()) << ds.status().ToString();
  FillerOptions o;
  o.max_branching = 2;
  auto filler = Filler::Make(*ds, o);
  EXPECT_TRUE(filler.ok());
  for (int k = 0; k < examples; ++k) EXPECT_TRUE(WriteSmall(**filler, Split::kTrain, k).ok());
  EXPECT_TRUE((*filler)->Finish().ok());
  auto reopened = Dataset::Open(root);
  EXPECT_TRUE(reopened.ok());
  return *reopened;
}

TEST(ReaderTest, InOrderReadingHoldsOnePathOfListsNotTheSplit) {
  TempDir tmp;
  auto ds = ManyListsDataset(tmp.path(), 64);  // 32 leaf lists, 63 lists in all
  testing::FaultFileSystem counting;
  {
    // The reader reads through the FileSystem the dataset was opened with.
    ASSERT_OK_AND_ASSIGN(auto counted, Dataset::Open(tmp.path(), OnFileSystem(&counting)));
    ReadOptions o;
    o.prefetch_shards = 0;
    o.verify_hashes = false;
    ASSERT_OK_AND_ASSIGN(auto reader, ExampleReader::Make(counted, Split::kTrain, o));
    ASSERT_OK_AND_ASSIGN(auto first, reader->Next());
    ASSERT_TRUE(first.has_value());
    EXPECT_EQ(first->Get(0).At<std::int32_t>(0), 0);
  }
  // The first example costs the lists on one root-to-leaf path (five) and one
  // shard, not the 63 lists of the split.
  EXPECT_LE(counting.count(testing::FaultOp::kRead), 14);
  // All of it, read in order, is every example in the order written.
  std::vector<std::int32_t> want(64);
  for (int k = 0; k < 64; ++k) want[k] = k;
  EXPECT_EQ(ReadXs(ds, Split::kTrain), want);
}

// A dataset written, read and checked on a FileSystem passed in: nothing
// reaches the process default (a counting FileSystem installed there), and
// nothing is on disk.
TEST(FileSystemTest, DatasetLivesOnTheFileSystemItIsGiven) {
  testing::MemoryFileSystem memory;
  testing::FaultFileSystem stray;
  testing::ScopedFileSystem installed(&stray);
  const std::string root = "/data/ds";
  {
    ASSERT_OK_AND_ASSIGN(auto ds, Dataset::Create(root, Metadata{}, SmallStructure(3), OnFileSystem(&memory)));
    EXPECT_EQ(ds->file_system(), &memory);
    FillerOptions o;
    o.max_branching = 2;
    o.concurrency = 2;
    o.sync = true;
    ASSERT_OK_AND_ASSIGN(auto filler, Filler::Make(ds, o));
    for (int k = 0; k < 20; ++k) ASSERT_OK(WriteSmall(*filler, k % 4 == 3 ? Split::kTest : Split::kTrain, k));
    ASSERT_OK(filler->Finish());
  }
  ASSERT_OK_AND_ASSIGN(auto ds, Dataset::Open(root, OnFileSystem(&memory)));
  std::vector<std::int32_t> train;
  for (int k = 0; k < 20; ++k) {
    if (k % 4 != 3) train.push_back(k);
  }
  EXPECT_EQ(ReadXs(ds, Split::kTrain), train);
  CheckOptions check;
  check.deep = true;
  check.file_system = &memory;
  ASSERT_OK_AND_ASSIGN(auto report, CheckDataset(root, check));
  EXPECT_TRUE(report.problems.empty()) << report.problems.front().path << ": " << report.problems.front().message;
  EXPECT_GT(report.shards_checked, 0u);

  for (testing::FaultOp op : testing::kAllFaultOps) {
    EXPECT_EQ(stray.count(op), 0) << testing::FaultOpName(op) << " calls bypassed the FileSystem passed in";
  }
  EXPECT_FALSE(std::filesystem::exists(root));
  EXPECT_EQ(memory.open_files(), 0u);
}

std::vector<std::int32_t> ReadShuffled(const std::shared_ptr<Dataset>& ds, std::uint64_t seed, bool repeat,
                                       std::size_t n) {
  ReadOptions o;
  o.shuffle_buffer = 4;
  o.seed = seed;
  o.repeat = repeat;
  std::vector<std::int32_t> out;
  auto reader = ExampleReader::Make(ds, Split::kTrain, o);
  EXPECT_TRUE(reader.ok()) << reader.status().ToString();
  if (!reader.ok()) return out;
  while (out.size() < n) {
    auto ex = (*reader)->Next();
    EXPECT_TRUE(ex.ok()) << ex.status().ToString();
    if (!ex.ok() || !ex->has_value()) break;
    out.push_back((*ex)->Get(0).At<std::int32_t>(0));
  }
  return out;
}

TEST(ReaderTest, ShuffledReadingOfManyListsIsCompleteSeededAndMixed) {
  TempDir tmp;
  auto ds = ManyListsDataset(tmp.path(), 64);
  const auto a = ReadShuffled(ds, 7, false, 1000);
  EXPECT_EQ(a, ReadShuffled(ds, 7, false, 1000));
  EXPECT_NE(a, ReadShuffled(ds, 8, false, 1000));
  auto sorted = a;
  std::sort(sorted.begin(), sorted.end());
  std::vector<std::int32_t> want(64);
  for (int k = 0; k < 64; ++k) want[k] = k;
  EXPECT_EQ(sorted, want);
  // Not one list after another: the first eight come from more than two
  // leaves (four examples).
  std::set<std::int32_t> leaves;
  for (int i = 0; i < 8; ++i) leaves.insert(a[i] / 2);
  EXPECT_GT(leaves.size(), 2u);
  // Repeating: each example comes about once per pass (the example buffer of
  // four may carry a few across a pass boundary), and the passes differ.
  const auto r = ReadShuffled(ds, 7, true, 192);
  ASSERT_EQ(r.size(), 192u);
  std::multiset<std::int32_t> all(r.begin(), r.end());
  for (int k = 0; k < 64; ++k) {
    EXPECT_GE(all.count(k), 2u) << k;
    EXPECT_LE(all.count(k), 4u) << k;
  }
  EXPECT_NE(std::vector<std::int32_t>(r.begin(), r.begin() + 32),
            std::vector<std::int32_t>(r.begin() + 64, r.begin() + 96));
}

TEST(ReaderTest, ShardsIsListedOnDemandWithTheFilters) {
  TempDir tmp;
  auto ds = ManyListsDataset(tmp.path(), 10);
  ReadOptions o;
  o.shard_filter = [](const ShardInfo& s) { return s.number_of_examples == 1; };
  o.max_shards = 4;
  ASSERT_OK_AND_ASSIGN(auto reader, ExampleReader::Make(ds, Split::kTrain, o));
  EXPECT_EQ(reader->shards().size(), 4u);
  std::vector<std::int32_t> xs;
  for (;;) {
    ASSERT_OK_AND_ASSIGN(auto ex, reader->Next());
    if (!ex) break;
    xs.push_back(ex->Get(0).At<std::int32_t>(0));
  }
  EXPECT_EQ(xs, (std::vector<std::int32_t>{0, 1, 2, 3}));
}

TEST(FillerTest, ByteBudgetClosesShardEarly) {
  TempDir tmp;
  DatasetStructure s;
  s.saved_data_description = {Attr("trace", "float16", {50000})};
  s.compression = Compression::kNone;
  s.examples_per_shard = 1000;
  ASSERT_OK_AND_ASSIGN(auto ds, Dataset::Create(tmp.path(), Metadata{}, s));
  FillerOptions o;
  o.shard_byte_budget = 350000;  // room for two 100 kB traces, not three
  ASSERT_OK_AND_ASSIGN(auto filler, Filler::Make(ds, o));
  std::vector<Float16> trace(50000);
  for (int k = 0; k < 7; ++k) {
    std::vector<ValueView> v = {ValueView::Array(trace, {50000})};
    ASSERT_OK(filler->WriteExample(Split::kTrain, v));
  }
  ASSERT_OK(filler->Finish());
  ASSERT_OK_AND_ASSIGN(auto shards, ListShards(ds, Split::kTrain));
  ASSERT_GE(shards.size(), 3u);
  for (const auto& sh : shards) EXPECT_LE(sh.number_of_examples, 3);
}

TEST(ReaderTest, SeededShuffleIsReproducibleAndComplete) {
  TempDir tmp;
  ASSERT_OK_AND_ASSIGN(auto ds, Dataset::Create(tmp.path(), Metadata{}, SmallStructure(4)));
  ASSERT_OK_AND_ASSIGN(auto filler, Filler::Make(ds));
  for (int k = 0; k < 40; ++k) ASSERT_OK(WriteSmall(*filler, Split::kTrain, k));
  ASSERT_OK(filler->Finish());
  auto read = [&](std::uint64_t seed) {
    ReadOptions o;
    o.shuffle_buffer = 8;
    o.seed = seed;
    std::vector<std::int32_t> out;
    auto r = ExampleReader::Make(ds, Split::kTrain, o);
    EXPECT_TRUE(r.ok());
    for (;;) {
      auto batch = (*r)->NextBatch(7);
      EXPECT_TRUE(batch.ok());
      if (batch->empty()) break;
      EXPECT_TRUE(batch->size() == 7 || out.size() + batch->size() == 40);
      for (const auto& e : *batch) out.push_back(e.Get(0).At<std::int32_t>(0));
    }
    return out;
  };
  const auto a = read(1), b = read(1), c = read(2);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  auto sorted = a;
  std::sort(sorted.begin(), sorted.end());
  for (int k = 0; k < 40; ++k) EXPECT_EQ(sorted[k], k);
}

TEST(ReaderTest, FiltersRepeatAndLimits) {
  TempDir tmp;
  ASSERT_OK_AND_ASSIGN(auto ds, Dataset::Create(tmp.path(), Metadata{}, SmallStructure(2)));
  ASSERT_OK_AND_ASSIGN(auto filler, Filler::Make(ds));
  auto a = *JsonValue::Parse(R"({"g":1})");
  auto b = *JsonValue::Parse(R"({"g":2})");
  for (int k = 0; k < 12; ++k) ASSERT_OK(WriteSmall(*filler, Split::kTrain, k, k < 6 ? &a : &b));
  ASSERT_OK(filler->Finish());
  ReadOptions o;
  o.shard_filter = [](const ShardInfo& s) { return s.custom_metadata.text() == R"({"g":2})"; };
  ASSERT_OK_AND_ASSIGN(auto r, ExampleReader::Make(ds, Split::kTrain, o));
  EXPECT_EQ(r->shards().size(), 3u);
  ReadOptions lim;
  lim.custom_metadata_type_limit = 1;
  ASSERT_OK_AND_ASSIGN(auto r2, ExampleReader::Make(ds, Split::kTrain, lim));
  EXPECT_EQ(r2->shards().size(), 2u);
  ReadOptions rep;
  rep.repeat = true;
  rep.max_shards = 1;
  ASSERT_OK_AND_ASSIGN(auto r3, ExampleReader::Make(ds, Split::kTrain, rep));
  ASSERT_OK_AND_ASSIGN(auto batch, r3->NextBatch(5));
  ASSERT_EQ(batch.size(), 5u);
  std::vector<std::int32_t> xs;
  for (auto& e : batch) xs.push_back(e.Get(0).At<std::int32_t>(0));
  EXPECT_EQ(xs, (std::vector<std::int32_t>{0, 1, 0, 1, 0}));
  EXPECT_STATUS(StatusCode::kNotFound, "no shard in holdout", ExampleReader::Make(ds, Split::kHoldout));
}

TEST(DatasetTest, CreateRefusesExistingAndBadStructure) {
  TempDir tmp;
  ASSERT_OK(Dataset::Create(tmp.path(), Metadata{}, SmallStructure()).status());
  EXPECT_STATUS(StatusCode::kAlreadyExists, "already exists", Dataset::Create(tmp.path(), Metadata{}, SmallStructure()));
  DatasetStructure s = SmallStructure();
  s.compression = Compression::kZip;
  EXPECT_STATUS(StatusCode::kInvalidArgument, "not allowed", Dataset::Create(tmp.path() + "/x", Metadata{}, s));
  s = SmallStructure();
  s.examples_per_shard = 0;
  EXPECT_STATUS(StatusCode::kInvalidArgument, "examples_per_shard", Dataset::Create(tmp.path() + "/y", Metadata{}, s));
  EXPECT_STATUS(StatusCode::kNotFound, "not a sedpack dataset", Dataset::Open(tmp.path() + "/nothing"));
}

TEST(DatasetTest, RefusesNewerSedpackVersion) {
  TempDir tmp;
  Metadata md;
  md.sedpack_version = "9.0.0";
  ASSERT_OK(Dataset::Create(tmp.path(), md, SmallStructure()).status());
  EXPECT_STATUS(StatusCode::kInvalidArgument, "sedpack_version", Dataset::Open(tmp.path()));
}

}  // namespace
}  // namespace sedpack
