// SPDX-License-Identifier: Apache-2.0
// The sample index: lookups agree with sequential reading for every example,
// the file format round-trips and rejects malformed bytes, stale indexes are found.
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <thread>

#include "index/index_internal.h"
#include "unit/index/index_test_util.h"
#include "sedpack/dataset/filler.h"
#include "support/fault_fs.h"
#include "sedpack/index/fetch.h"
#include "sedpack/index/order.h"
#include "sedpack/io/file.h"
#include "sidecar/sidecar_internal.h"

namespace sedpack {
namespace {

using testing::GoldenDir;
using testing::MakeTreeDataset;
using testing::ReadSequentially;
using testing::SequentialRead;
using testing::TempDir;

std::vector<std::string> GoldenFixtures() {
  std::vector<std::string> out;
  std::error_code ec;
  if (!std::filesystem::is_directory(GoldenDir(), ec)) return out;
  for (const auto& e : std::filesystem::directory_iterator(GoldenDir())) {
    if (std::filesystem::exists(e.path() / "dataset" / "dataset_info.json")) {
      out.push_back(e.path().filename().string());
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

// For every split: Locate(i) is the sequential reader's (shard, row) and Get(i)
// returns the same value bytes; returns the number of examples compared.
std::size_t ExpectLookupsAgree(const std::shared_ptr<const Dataset>& ds,
                               const std::shared_ptr<const SampleIndex>& index, const std::string& name) {
  std::size_t compared = 0;
  auto fetcher = ExampleFetcher::Make(ds, index);
  EXPECT_TRUE(fetcher.ok());
  if (!fetcher.ok()) return 0;
  for (const auto& [split, info] : ds->info().splits) {
    auto seq = ReadSequentially(ds, split);
    EXPECT_TRUE(seq.ok()) << seq.status().ToString();
    if (!seq.ok()) continue;
    EXPECT_EQ(index->num_examples(split), seq->values.size()) << name << " " << SplitName(split);
    EXPECT_EQ(static_cast<std::int64_t>(index->num_examples(split)), info.number_of_examples);
    for (std::size_t i = 0; i < seq->values.size(); ++i) {
      auto loc = index->Locate(split, i);
      EXPECT_TRUE(loc.ok()) << loc.status().ToString();
      if (!loc.ok()) continue;
      EXPECT_EQ(loc->shard, seq->locations[i].shard) << name << " " << SplitName(split) << " #" << i;
      EXPECT_EQ(loc->row, seq->locations[i].row) << name << " " << SplitName(split) << " #" << i;
      auto ex = (*fetcher)->Get(split, i);
      EXPECT_TRUE(ex.ok()) << ex.status().ToString();
      if (!ex.ok()) continue;
      EXPECT_EQ(testing::ValuesHex(*ex), seq->values[i]) << name << " " << SplitName(split) << " #" << i;
      ++compared;
    }
    EXPECT_EQ(index->Locate(split, seq->values.size()).status().code(), StatusCode::kInvalidArgument);
  }
  return compared;
}

// A split of the index contents from literal paths and counts.
IndexedSplit MakeSplit(Split split, std::initializer_list<std::string_view> paths,
                       std::vector<std::uint64_t> examples) {
  IndexedSplit s;
  s.split = split;
  for (std::string_view p : paths) EXPECT_TRUE(s.shard_paths.Add(p).ok()) << p;
  s.shard_examples = std::move(examples);
  return s;
}

TEST(ShardPathListTest, PathsSurviveBlocksAppendAndCopy) {
  // Enough paths to fill several 256 KiB blocks, one path larger than a block,
  // and lists joined by Append: every path reads back in order, and the runs
  // ForEachRun hands out concatenate to exactly the paths' bytes.
  std::vector<std::string> want;
  ShardPathList a, b, c;
  for (int i = 0; i < 9000; ++i) {
    want.push_back("train/chunk_" + std::to_string(i / 1000) + "/shard_" + std::to_string(i) + ".fb");
    ASSERT_TRUE((i < 6000 ? a : b).Add(want.back()).ok());
  }
  const std::string huge(300 * 1024, 'x');
  want.push_back(huge);
  ASSERT_TRUE(c.Add(huge).ok());
  want.push_back("last");
  ASSERT_TRUE(c.Add("last").ok());
  const std::string_view first_view = a[0];
  ASSERT_TRUE(a.Append(std::move(b)).ok());
  ASSERT_TRUE(a.Append(std::move(c)).ok());
  EXPECT_TRUE(b.empty());
  EXPECT_EQ(first_view.data(), a[0].data());  // blocks were moved, not copied
  ASSERT_EQ(a.size(), want.size());
  std::uint64_t total = 0;
  std::string all;
  for (std::size_t i = 0; i < want.size(); ++i) {
    ASSERT_EQ(a[i], want[i]) << i;
    total += want[i].size();
    all += want[i];
  }
  EXPECT_EQ(a.total_bytes(), total);
  std::string runs;
  std::size_t pieces = 0;
  a.ForEachRun([&](std::string_view run) {
    runs += run;
    ++pieces;
  });
  EXPECT_EQ(runs, all);
  EXPECT_LT(pieces, 100u);  // whole blocks, not one piece per path (9,002 paths)
  const ShardPathList copy = a;
  EXPECT_TRUE(std::equal(copy.begin(), copy.end(), want.begin(), want.end()));
}

TEST(ShardPathListTest, RefusesAPathOf4GiBWithAStatus) {
  // A view of 4 GiB over a 1-byte buffer: Add must refuse it from its size
  // alone, before touching its bytes, and leave the list as it was.
  ShardPathList list;
  ASSERT_TRUE(list.Add("train/a.fb").ok());
  const char one = 'x';
  const std::string_view huge(&one, std::size_t{1} << 32);
  const Status st = list.Add(huge);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << st.ToString();
  EXPECT_EQ(list.size(), 1u);
  EXPECT_EQ(list.total_bytes(), 10u);
}

TEST(IndexTest, GoldenLookupsAgreeWithSequentialReading) {
  const auto fixtures = GoldenFixtures();
  ASSERT_GE(fixtures.size(), 12u) << "golden fixtures missing under " << GoldenDir();
  std::size_t total = 0;
  for (const std::string& f : fixtures) {
    ASSERT_OK_AND_ASSIGN(std::shared_ptr<Dataset> ds, Dataset::Open(GoldenDir() + "/" + f + "/dataset"));
    // Built in memory: the golden tree is read-only and must not gain a sidecar.
    ASSERT_OK_AND_ASSIGN(IndexContents contents, BuildIndexContents(ds));
    ASSERT_OK_AND_ASSIGN(auto index, SampleIndex::FromContents(contents));
    total += ExpectLookupsAgree(ds, index, f);
  }
  EXPECT_GT(total, 100u);
}

TEST(IndexTest, TreeDatasetLookupsAgreeFromTheMappedFile) {
  TempDir tmp;
  ASSERT_OK_AND_ASSIGN(std::shared_ptr<Dataset> ds, MakeTreeDataset(tmp.path() + "/ds"));
  ASSERT_OK_AND_ASSIGN(IndexContents contents, BuildIndexFile(ds));
  ASSERT_TRUE(std::filesystem::exists(tmp.path() + "/ds/.sedpack-hpc/index.bin"));
  ASSERT_OK_AND_ASSIGN(auto index, SampleIndex::OpenFile(tmp.path() + "/ds/.sedpack-hpc/index.bin"));
  EXPECT_EQ(index->num_examples(Split::kTrain), 29u);
  EXPECT_EQ(index->num_examples(Split::kTest), 6u);
  EXPECT_FALSE(index->HasSplit(Split::kHoldout));
  // 7 = 4+1+2, 13 = 4+1+4+1+3, 9 = 4+1+4: shards of uneven sizes over three lists.
  EXPECT_EQ(index->num_shards(Split::kTrain), 11u);
  ASSERT_OK_AND_ASSIGN(std::vector<ShardInfo> shards, ListShards(ds, Split::kTrain));
  ASSERT_EQ(shards.size(), 11u);
  for (std::size_t i = 0; i < shards.size(); ++i) {
    EXPECT_EQ(index->shard_path(Split::kTrain, i), shards[i].file_infos[0].file_path);
  }
  EXPECT_EQ(ExpectLookupsAgree(ds, index, "tree"), 35u);
  ASSERT_OK_AND_ASSIGN(IndexContents back, index->ToContents());
  EXPECT_EQ(back.splits.size(), 2u);
  ASSERT_OK_AND_ASSIGN(DatasetInfoDigest digest, DatasetInfoSha256(ds->root()));
  EXPECT_EQ(index->dataset_info_sha256(), digest);
}

TEST(IndexTest, EmptyShardsAndKnownLocations) {
  IndexContents c;
  c.splits.push_back(MakeSplit(Split::kTest, {"test/a", "test/b", "test/c", "test/d"}, {3, 0, 0, 2}));
  ASSERT_OK_AND_ASSIGN(auto index, SampleIndex::FromContents(c));
  const SampleIndex::Location want[] = {{0, 0}, {0, 1}, {0, 2}, {3, 0}, {3, 1}};
  for (std::uint64_t i = 0; i < 5; ++i) {
    ASSERT_OK_AND_ASSIGN(SampleIndex::Location loc, index->Locate(Split::kTest, i));
    EXPECT_EQ(loc, want[i]) << i;
  }
  EXPECT_EQ(index->first_row(Split::kTest, 3), 3u);
  EXPECT_EQ(index->Locate(Split::kTrain, 0).status().code(), StatusCode::kNotFound);
}

// Known bytes of a tiny index: the documented layout, field by field.
TEST(IndexFormatTest, LayoutIsTheDocumentedOne) {
  IndexContents c;
  c.dataset_info_sha256[0] = std::byte{0xAB};
  c.splits.push_back(MakeSplit(Split::kTest, {"test/x.fb", "test/yy.fb"}, {5, 7}));
  ASSERT_OK_AND_ASSIGN(std::vector<std::byte> b, EncodeIndex(c));
  auto u64 = [&](std::size_t at) {
    std::uint64_t v = 0;
    for (int i = 7; i >= 0; --i) v = (v << 8) | std::to_integer<std::uint64_t>(b[at + i]);
    return v;
  };
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(b.data()), 8), "SPHPCIDX");
  EXPECT_EQ(u64(8) & 0xFFFFFFFF, 1u);     // version
  EXPECT_EQ(u64(8) >> 32, 1u);            // split count
  EXPECT_EQ(u64(16), b.size());           // file size
  EXPECT_EQ(b[24], std::byte{0xAB});      // digest
  EXPECT_EQ(u64(64) & 0xFFFFFFFF, 1u);    // split id: test
  EXPECT_EQ(u64(72), 2u);                 // shards
  EXPECT_EQ(u64(80), 12u);                // examples
  // Path bytes right after the one entry, then (8-aligned) the first-row
  // table and the path-offset table.
  EXPECT_EQ(u64(104), 128u);              // strings
  EXPECT_EQ(u64(112), 19u);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(b.data() + 128), 19), "test/x.fbtest/yy.fb");
  EXPECT_EQ(b[147], std::byte{0});        // padding up to the tables
  EXPECT_EQ(u64(88), 152u);               // first rows
  EXPECT_EQ(u64(152), 0u);
  EXPECT_EQ(u64(160), 5u);
  EXPECT_EQ(u64(168), 12u);
  EXPECT_EQ(u64(96), 176u);               // path offsets
  EXPECT_EQ(u64(176), 0u);
  EXPECT_EQ(u64(184), 9u);
  EXPECT_EQ(u64(192), 19u);
  EXPECT_EQ(b.size(), 200u);
}

TEST(IndexFormatTest, RejectsMalformedBytesWithoutCrashing) {
  IndexContents c;
  c.splits.push_back(MakeSplit(Split::kTrain, {"train/a", "train/b", "train/c"}, {4, 4, 2}));
  c.splits.push_back(MakeSplit(Split::kHoldout, {"holdout/a"}, {1}));
  ASSERT_OK_AND_ASSIGN(std::vector<std::byte> good, EncodeIndex(c));
  ASSERT_OK(SampleIndex::FromBytes(good).status());
  // Every truncation fails.
  for (std::size_t n = 0; n < good.size(); ++n) {
    std::vector<std::byte> cut(good.begin(), good.begin() + static_cast<std::ptrdiff_t>(n));
    EXPECT_EQ(SampleIndex::FromBytes(cut).status().code(), StatusCode::kCorruption) << n;
  }
  // Every single-byte change either fails validation or yields an index whose
  // lookups stay inside its own tables.
  std::size_t rejected = 0;
  for (std::size_t i = 0; i < good.size(); ++i) {
    for (std::uint8_t x : {0x01, 0x80, 0xFF}) {
      std::vector<std::byte> bad = good;
      bad[i] ^= std::byte{x};
      auto index = SampleIndex::FromBytes(bad);
      if (!index.ok()) {
        ++rejected;
        continue;
      }
      for (Split s : (*index)->splits()) {
        for (std::uint64_t e = 0; e < (*index)->num_examples(s); ++e) {
          ASSERT_OK_AND_ASSIGN(SampleIndex::Location loc, (*index)->Locate(s, e));
          ASSERT_LT(loc.shard, (*index)->num_shards(s));
          ASSERT_LT(loc.row, (*index)->shard_examples(s, loc.shard));
          EXPECT_FALSE((*index)->shard_path(s, loc.shard).empty());
        }
      }
    }
  }
  EXPECT_GT(rejected, good.size());
  // Specific fields.
  auto with = [&](std::size_t at, std::uint64_t v, int width) {
    std::vector<std::byte> b = good;
    for (int k = 0; k < width; ++k) b[at + k] = static_cast<std::byte>((v >> (8 * k)) & 0xFF);
    return SampleIndex::FromBytes(b).status();
  };
  EXPECT_STATUS(StatusCode::kCorruption, "magic", with(0, 0x58444943504850ULL, 8));
  EXPECT_STATUS(StatusCode::kCorruption, "version 2", with(8, 2, 4));
  EXPECT_STATUS(StatusCode::kCorruption, "splits", with(12, 4, 4));
  EXPECT_STATUS(StatusCode::kCorruption, "bytes", with(16, good.size() + 8, 8));
  EXPECT_STATUS(StatusCode::kCorruption, "unknown split id", with(64, 7, 4));
  EXPECT_STATUS(StatusCode::kCorruption, "past the end", with(72, 1ULL << 61, 8));
  EXPECT_STATUS(StatusCode::kCorruption, "header says", with(80, 11, 8));
  // Absolute and escaping paths are refused like in metadata.
  IndexContents evil;
  evil.splits.push_back(MakeSplit(Split::kTrain, {"../etc/passwd"}, {1}));
  ASSERT_OK_AND_ASSIGN(std::vector<std::byte> eb, EncodeIndex(evil));
  EXPECT_EQ(SampleIndex::FromBytes(eb).status().code(), StatusCode::kCorruption);
  // ... and still say that the path escapes the dataset.
  EXPECT_EQ(SampleIndex::FromBytes(eb).status().detail(), StatusDetail::kPathEscape);
  evil.splits[0].shard_paths = ShardPathList();
  ASSERT_TRUE(evil.splits[0].shard_paths.Add("/abs").ok());
  ASSERT_OK_AND_ASSIGN(eb, EncodeIndex(evil));
  EXPECT_FALSE(SampleIndex::FromBytes(eb).ok());
}

TEST(IndexFreshnessTest, MissingFreshStaleInvalid) {
  TempDir tmp;
  ASSERT_OK_AND_ASSIGN(std::shared_ptr<Dataset> ds, MakeTreeDataset(tmp.path() + "/ds"));
  ASSERT_OK_AND_ASSIGN(IndexCheck c, CheckIndex(ds->root()));
  EXPECT_EQ(c.freshness, IndexFreshness::kMissing);
  ASSERT_OK(BuildIndexFile(ds).status());
  ASSERT_OK_AND_ASSIGN(c, CheckIndex(ds->root()));
  EXPECT_EQ(c.freshness, IndexFreshness::kFresh);
  EXPECT_EQ(c.recorded_sha256, c.current_sha256);

  // Add examples: dataset_info.json changes, the index is stale.
  {
    ASSERT_OK_AND_ASSIGN(auto filler, Filler::Make(ds));
    const std::string text = "late";
    const std::int64_t id = 999;  // the view refers to it: it must outlive WriteExample
    const ValueView values[] = {ValueView::Int(id), ValueView::Str(text)};
    ASSERT_OK(filler->WriteExample(Split::kTrain, values));
    ASSERT_OK(filler->Finish());
  }
  ASSERT_OK_AND_ASSIGN(c, CheckIndex(ds->root()));
  EXPECT_EQ(c.freshness, IndexFreshness::kStale);
  EXPECT_NE(c.recorded_sha256, c.current_sha256);
  EXPECT_NE(c.message.find(c.recorded_sha256), std::string::npos);

  // A stale index is ignored with a warning: lookups see the new example.
  ASSERT_OK(ds->Reload());
  std::vector<std::string> warnings;
  IndexOpenOptions o;
  o.warn = [&](const std::string& w) { warnings.push_back(w); };
  ASSERT_OK_AND_ASSIGN(auto index, OpenIndex(ds, o));
  EXPECT_EQ(index->num_examples(Split::kTrain), 30u);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("stale"), std::string::npos) << warnings[0];
  EXPECT_NE(warnings[0].find("ignoring"), std::string::npos) << warnings[0];
  ASSERT_OK_AND_ASSIGN(c, CheckIndex(ds->root()));
  EXPECT_EQ(c.freshness, IndexFreshness::kStale);  // nothing was written
  EXPECT_EQ(ExpectLookupsAgree(ds, index, "stale-ignored"), 36u);

  // ... or rebuilt.
  o.rebuild = true;
  warnings.clear();
  ASSERT_OK_AND_ASSIGN(index, OpenIndex(ds, o));
  EXPECT_EQ(index->num_examples(Split::kTrain), 30u);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("rebuilding"), std::string::npos) << warnings[0];
  ASSERT_OK_AND_ASSIGN(c, CheckIndex(ds->root()));
  EXPECT_EQ(c.freshness, IndexFreshness::kFresh);

  // A fresh index opens silently.
  warnings.clear();
  o.rebuild = false;
  ASSERT_OK_AND_ASSIGN(index, OpenIndex(ds, o));
  EXPECT_TRUE(warnings.empty());

  // Garbage in place of the index is invalid (and ignored with a warning).
  ASSERT_OK(WriteFileAtomic(c.path, std::string(100, 'x')));
  ASSERT_OK_AND_ASSIGN(c, CheckIndex(ds->root()));
  EXPECT_EQ(c.freshness, IndexFreshness::kInvalid);
  EXPECT_NE(c.message.find("magic"), std::string::npos) << c.message;
  ASSERT_OK_AND_ASSIGN(index, OpenIndex(ds, o));
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("invalid"), std::string::npos);
}

TEST(FetchTest, CacheCountsHitsMissesAndStaysUnderItsBound) {
  TempDir tmp;
  ASSERT_OK_AND_ASSIGN(std::shared_ptr<Dataset> ds, MakeTreeDataset(tmp.path() + "/ds"));
  ASSERT_OK_AND_ASSIGN(IndexContents contents, BuildIndexContents(ds));
  ASSERT_OK_AND_ASSIGN(auto index, SampleIndex::FromContents(contents));
  // Shard 0 of train holds examples 0..3.
  ASSERT_EQ(index->shard_examples(Split::kTrain, 0), 4u);
  {
    ASSERT_OK_AND_ASSIGN(auto f, ExampleFetcher::Make(ds, index));
    for (int rep = 0; rep < 2; ++rep) {
      for (std::uint64_t i = 0; i < 4; ++i) ASSERT_OK(f->Get(Split::kTrain, i).status());
    }
    EXPECT_EQ(f->stats().misses, 1u);
    EXPECT_EQ(f->stats().hits, 7u);
    EXPECT_EQ(f->stats().cached_shards, 1u);
    ASSERT_OK_AND_ASSIGN(auto shard, f->Shard(Split::kTrain, 0));
    EXPECT_EQ(f->stats().cached_bytes, DecodedShardBytes(*shard));
  }
  {
    FetchOptions off;
    off.cache_bytes = 0;
    ASSERT_OK_AND_ASSIGN(auto f, ExampleFetcher::Make(ds, index, off));
    for (std::uint64_t i = 0; i < 4; ++i) ASSERT_OK(f->Get(Split::kTrain, i).status());
    EXPECT_EQ(f->stats().misses, 4u);
    EXPECT_EQ(f->stats().hits, 0u);
    EXPECT_EQ(f->stats().cached_bytes, 0u);
  }
  {
    ASSERT_OK_AND_ASSIGN(auto f0, ExampleFetcher::Make(ds, index));
    ASSERT_OK_AND_ASSIGN(auto s0, f0->Shard(Split::kTrain, 0));
    const std::uint64_t one = DecodedShardBytes(*s0);
    FetchOptions small;
    small.cache_bytes = 2 * one;  // two full shards
    ASSERT_OK_AND_ASSIGN(auto f, ExampleFetcher::Make(ds, index, small));
    for (std::uint64_t i = 0; i < index->num_examples(Split::kTrain); ++i) {
      ASSERT_OK(f->Get(Split::kTrain, i).status());
      EXPECT_LE(f->stats().cached_bytes, small.cache_bytes);
    }
    EXPECT_EQ(f->stats().misses, 11u);
    EXPECT_GT(f->stats().evictions, 0u);
    // The most recent shard is kept: fetching its last example again is a hit.
    const auto misses = f->stats().misses;
    ASSERT_OK(f->Get(Split::kTrain, index->num_examples(Split::kTrain) - 1).status());
    EXPECT_EQ(f->stats().misses, misses);
  }
  {
    // Least recently used goes first: with room for two shards, a shard hit
    // again stays while the one not hit is dropped.
    ASSERT_OK_AND_ASSIGN(auto f0, ExampleFetcher::Make(ds, index));
    std::uint64_t b[3];
    for (std::uint64_t s = 0; s < 3; ++s) {
      ASSERT_OK_AND_ASSIGN(auto sh, f0->Shard(Split::kTrain, s));
      b[s] = DecodedShardBytes(*sh);
    }
    FetchOptions two;
    two.cache_bytes = b[0] + std::max(b[1], b[2]);  // shard 0 and one other
    ASSERT_OK_AND_ASSIGN(auto f, ExampleFetcher::Make(ds, index, two));
    ASSERT_OK(f->Shard(Split::kTrain, 0).status());
    ASSERT_OK(f->Shard(Split::kTrain, 1).status());
    ASSERT_OK(f->Shard(Split::kTrain, 0).status());  // hit
    ASSERT_OK(f->Shard(Split::kTrain, 2).status());  // drops shard 1
    EXPECT_EQ(f->stats().misses, 3u);
    EXPECT_EQ(f->stats().evictions, 1u);
    ASSERT_OK(f->Shard(Split::kTrain, 0).status());
    ASSERT_OK(f->Shard(Split::kTrain, 2).status());
    EXPECT_EQ(f->stats().misses, 3u);
    ASSERT_OK(f->Shard(Split::kTrain, 1).status());
    EXPECT_EQ(f->stats().misses, 4u);
    // A shard larger than the whole cache is served but not kept.
    FetchOptions tiny;
    tiny.cache_bytes = 1;
    ASSERT_OK_AND_ASSIGN(auto t, ExampleFetcher::Make(ds, index, tiny));
    ASSERT_OK(t->Shard(Split::kTrain, 0).status());
    ASSERT_OK(t->Shard(Split::kTrain, 0).status());
    EXPECT_EQ(t->stats().misses, 2u);
    EXPECT_EQ(t->stats().cached_bytes, 0u);
  }
}

TEST(FetchTest, ManyThreadsFetchTheRightExamples) {
  TempDir tmp;
  ASSERT_OK_AND_ASSIGN(std::shared_ptr<Dataset> ds, MakeTreeDataset(tmp.path() + "/ds"));
  ASSERT_OK_AND_ASSIGN(IndexContents contents, BuildIndexContents(ds));
  ASSERT_OK_AND_ASSIGN(auto index, SampleIndex::FromContents(contents));
  ASSERT_OK_AND_ASSIGN(SequentialRead seq, ReadSequentially(ds, Split::kTrain));
  for (std::uint64_t cache : {std::uint64_t{0}, std::uint64_t{300}, std::uint64_t{1} << 30}) {
    FetchOptions o;
    o.cache_bytes = cache;
    ASSERT_OK_AND_ASSIGN(auto f, ExampleFetcher::Make(ds, index, o));
    std::atomic<int> wrong{0}, failed{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 6; ++t) {
      threads.emplace_back([&, t] {
        std::mt19937_64 rng(static_cast<std::uint64_t>(t));
        for (int k = 0; k < 400; ++k) {
          const std::uint64_t i = rng() % seq.values.size();
          auto ex = f->Get(Split::kTrain, i);
          if (!ex.ok()) {
            ++failed;
          } else if (testing::ValuesHex(*ex) != seq.values[i]) {
            ++wrong;
          }
        }
      });
    }
    for (auto& th : threads) th.join();
    EXPECT_EQ(failed.load(), 0) << cache;
    EXPECT_EQ(wrong.load(), 0) << cache;
    EXPECT_EQ(f->stats().hits + f->stats().misses, 2400u);
  }
}

TEST(FetchTest, ShardWithFewerExamplesThanRecordedIsCorruption) {
  TempDir tmp;
  ASSERT_OK_AND_ASSIGN(std::shared_ptr<Dataset> ds, MakeTreeDataset(tmp.path() + "/ds"));
  ASSERT_OK_AND_ASSIGN(IndexContents contents, BuildIndexContents(ds));
  contents.splits[0].shard_examples[0] = 5;  // the shard holds 4
  ASSERT_OK_AND_ASSIGN(auto index, SampleIndex::FromContents(contents));
  ASSERT_OK_AND_ASSIGN(auto f, ExampleFetcher::Make(ds, index));
  EXPECT_STATUS(StatusCode::kCorruption, "the metadata records 5", f->Get(Split::kTrain, 0));
}

// Fetches through the index check what they read against the recorded hashes
// (the index holds none: they come from the lists, themselves checked).
TEST(IndexVerifyTest, FetcherAndElasticReaderRefuseCorruptFiles) {
  const std::string fixture = GoldenDir() + "/fb_none/dataset";
  for (const bool flip_list : {false, true}) {
    SCOPED_TRACE(flip_list ? "changed child list" : "flipped shard byte");
    TempDir tmp;
    const std::string root = tmp.path() + "/ds";
    testing::CopyTree(fixture, root);
    ASSERT_OK_AND_ASSIGN(std::shared_ptr<Dataset> ds, Dataset::Open(root));
    ASSERT_OK_AND_ASSIGN(IndexContents contents, BuildIndexContents(ds));
    ASSERT_OK_AND_ASSIGN(auto index, SampleIndex::FromContents(contents));
    const Split split = ds->info().splits.front().first;
    ASSERT_OK_AND_ASSIGN(std::vector<ShardInfo> shards, ListShards(ds, split));
    const std::uint64_t last = shards.size() - 1;
    std::string damaged;
    if (flip_list) {
      ASSERT_OK_AND_ASSIGN(ShardsList top,
                           LoadShardsList(*ds, ds->info().splits.front().second.shard_list_info_file.file_path));
      ASSERT_FALSE(top.children_shard_lists.empty());
      damaged = top.children_shard_lists.front().shard_list_info_file.file_path;
      std::ofstream(root + "/" + damaged, std::ios::app | std::ios::binary) << "\n";
    } else {
      damaged = shards[last].file_infos[0].file_path;
      const std::string path = root + "/" + damaged;
      std::string bytes;
      {
        std::ifstream in(path, std::ios::binary);
        bytes.assign(std::istreambuf_iterator<char>(in), {});
      }
      ASSERT_FALSE(bytes.empty());
      bytes[bytes.size() / 2] ^= 0x20;
      std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
    }
    auto expect_refused = [&](const Status& st) {
      EXPECT_EQ(st.code(), StatusCode::kCorruption) << st.ToString();
      EXPECT_EQ(st.detail(), StatusDetail::kHashMismatch) << st.ToString();
      EXPECT_EQ(st.message().rfind(damaged + ": xxh128 mismatch (recorded ", 0), 0u) << st.message();
    };
    ASSERT_OK_AND_ASSIGN(auto fetcher, ExampleFetcher::Make(ds, index));
    expect_refused(fetcher->Shard(split, last).status());
    FetchOptions off;
    off.verify_hashes = false;
    ASSERT_OK_AND_ASSIGN(auto unchecked, ExampleFetcher::Make(ds, index, off));
    auto r = unchecked->Shard(split, last);
    if (!r.ok()) {
      EXPECT_NE(r.status().detail(), StatusDetail::kHashMismatch) << r.status().ToString();
    }

    for (const bool verify : {true, false}) {
      ElasticReadOptions o;
      o.verify_hashes = verify;
      ASSERT_OK_AND_ASSIGN(auto reader, ElasticReader::Make(ds, index, split, o));
      Status st;
      std::uint64_t n = 0;
      for (;;) {
        auto next = reader->Next();
        if (!next.ok()) {
          st = next.status();
          break;
        }
        if (!next->has_value()) break;
        ++n;
      }
      if (verify) {
        expect_refused(st);
      } else if (!st.ok()) {
        EXPECT_NE(st.detail(), StatusDetail::kHashMismatch) << st.ToString();
      } else {
        EXPECT_EQ(n, index->num_examples(split));
      }
    }
  }
}


// A verified fetch finds the recorded hash of shard k by descending the tree
// (the children's recorded shard counts say where k is), reading one
// root-to-leaf path of lists, not every list before k.
TEST(IndexVerifyTest, AVerifiedFetchReadsOnePathOfLists) {
  TempDir tmp;
  DatasetStructure s;
  Attribute id;
  id.name = "id";
  id.dtype = "int64";
  id.shape = {};
  s.saved_data_description = {id};
  s.examples_per_shard = 1;
  s.hash_checksum_algorithms = {HashAlgorithm::kXxh64};
  ASSERT_OK_AND_ASSIGN(auto created, Dataset::Create(tmp.path(), Metadata{}, s));
  FillerOptions fo;
  fo.max_branching = 2;  // 64 shards: 32 leaf lists, 57 lists in all
  ASSERT_OK_AND_ASSIGN(auto filler, Filler::Make(created, fo));
  for (std::int64_t k = 0; k < 64; ++k) {
    std::vector<ValueView> v = {ValueView::Int(k)};
    ASSERT_OK(filler->WriteExample(Split::kTrain, v));
  }
  ASSERT_OK(filler->Finish());
  ASSERT_OK_AND_ASSIGN(std::shared_ptr<Dataset> ds, Dataset::Open(tmp.path()));
  ASSERT_OK_AND_ASSIGN(IndexContents contents, BuildIndexContents(ds));
  ASSERT_OK_AND_ASSIGN(auto index, SampleIndex::FromContents(contents));
  for (const std::uint64_t k : {std::uint64_t{63}, std::uint64_t{0}, std::uint64_t{37}}) {
    SCOPED_TRACE(k);
    sedpack::testing::FaultFileSystem counting;
    sedpack::testing::ScopedFileSystem use(&counting);
    FetchOptions o;
    o.cache_bytes = 0;
    ASSERT_OK_AND_ASSIGN(auto fetcher, ExampleFetcher::Make(ds, index, o));
    ASSERT_OK_AND_ASSIGN(Example e, fetcher->Get(Split::kTrain, k));
    EXPECT_EQ(e.Get(0).At<std::int64_t>(0), static_cast<std::int64_t>(k));
    // Four lists on the path (the split's, two folders', the leaf's) and one
    // shard, each a read or two; walking to shard 63 would read all 57 lists.
    EXPECT_LE(counting.count(sedpack::testing::FaultOp::kRead), 20);
  }
}

}  // namespace
}  // namespace sedpack
