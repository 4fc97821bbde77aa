// SPDX-License-Identifier: Apache-2.0
// Reads are checked against the recorded hashes: a flipped byte in a shard or a
// changed shards_list.json stops the reader with an error naming the file and
// the algorithm (the fastest recorded one), before anything is decoded.
#include <filesystem>
#include <fstream>
#include <iterator>

#include "sedpack/dataset/reader.h"
#include "support/test_support.h"

namespace sedpack {
namespace {

using testing::CopyTree;
using testing::GoldenDir;
using testing::TempDir;

// XOR one byte of `path` in place (the middle one unless `offset` is given).
void FlipByte(const std::string& path, std::optional<std::uint64_t> offset = std::nullopt) {
  const auto size = std::filesystem::file_size(path);
  ASSERT_GT(size, 0u) << path;
  ASSERT_TRUE(testing::FlipBitAt(path, offset.value_or(size / 2))) << path;
}

// A copy of golden fixture `name` under `tmp`.
std::string CopyFixture(const TempDir& tmp, const std::string& name) {
  const std::string dst = tmp.path() + "/" + name;
  CopyTree(GoldenDir() + "/" + name + "/dataset", dst);
  return dst;
}

// Read every example of `split`; the first error, or the number read.
Result<std::size_t> ReadAll(const std::string& root, Split split, bool verify, int prefetch = 2) {
  SEDPACK_ASSIGN_OR_RETURN(std::shared_ptr<Dataset> ds, Dataset::Open(root));
  ReadOptions o;
  o.verify_hashes = verify;
  o.prefetch_shards = prefetch;
  SEDPACK_ASSIGN_OR_RETURN(auto reader, ExampleReader::Make(ds, split, o));
  std::size_t n = 0;
  for (;;) {
    SEDPACK_ASSIGN_OR_RETURN(std::optional<Example> e, reader->Next());
    if (!e) return n;
    for (std::size_t j = 0; j < e->shard->num_attributes(); ++j) (void)e->Get(j);
    ++n;
  }
}

struct FlipCase {
  const char* fixture;
  const char* algorithm;  // the fastest of the fixture's recorded algorithms
};

class FlippedShardTest : public ::testing::TestWithParam<FlipCase> {};

TEST_P(FlippedShardTest, ReaderNamesShardAndFastestAlgorithm) {
  TempDir tmp;
  const std::string root = CopyFixture(tmp, GetParam().fixture);
  ASSERT_OK_AND_ASSIGN(std::shared_ptr<Dataset> ds, Dataset::Open(root));
  const Split split = ds->info().splits.front().first;
  ASSERT_OK_AND_ASSIGN(std::vector<ShardInfo> shards, ListShards(ds, split));
  ASSERT_FALSE(shards.empty());
  ASSERT_OK_AND_ASSIGN(const std::size_t intact, ReadAll(root, split, true));
  const std::string shard = shards.back().file_infos[0].file_path;
  FlipByte(root + "/" + shard);

  for (int prefetch : {0, 2}) {
    auto read = ReadAll(root, split, true, prefetch);
    ASSERT_FALSE(read.ok()) << "read " << *read << " examples of a corrupt shard";
    EXPECT_EQ(read.status().code(), StatusCode::kCorruption);
    EXPECT_EQ(read.status().detail(), StatusDetail::kHashMismatch);
    const std::string& m = read.status().message();
    EXPECT_EQ(m.rfind(shard + ": " + GetParam().algorithm + " mismatch (recorded ", 0), 0u) << m;
    EXPECT_NE(m.find(", computed "), std::string::npos) << m;
  }
  // ReadShard alone checks the same way, and only when asked to.
  EXPECT_EQ(ReadShard(*ds, shards.back()).status().detail(), StatusDetail::kHashMismatch);
  auto unchecked = ReadShard(*ds, shards.back(), {}, /*verify_hashes=*/false);
  if (!unchecked.ok()) {
    EXPECT_NE(unchecked.status().detail(), StatusDetail::kHashMismatch);
  }

  // Without the check: the reader reads (maybe wrong values) or fails in the
  // decode, never with a hash error, and does not crash.
  auto read = ReadAll(root, split, false);
  if (read.ok()) {
    EXPECT_EQ(*read, intact);
  } else {
    EXPECT_NE(read.status().detail(), StatusDetail::kHashMismatch) << read.status().ToString();
    EXPECT_EQ(read.status().message().find("mismatch (recorded"), std::string::npos);
  }
}

INSTANTIATE_TEST_SUITE_P(Golden, FlippedShardTest,
                         ::testing::Values(FlipCase{"fb_none", "xxh128"},  // six algorithms
                                           FlipCase{"fb_bz2", "xxh64"},    // sha384, xxh64
                                           FlipCase{"fb_lz4", "xxh32"},    // sha3_224, xxh32
                                           FlipCase{"fb_gzip", "xxh128"},  // sha1, xxh128
                                           FlipCase{"npz_none", "md5"},    // md5, sha256
                                           FlipCase{"fb_zstd", "sha3_384"},
                                           FlipCase{"fb_minimal", "sha256"}),
                         [](const auto& info) { return std::string(info.param.fixture); });

// A shards_list.json that still parses but is not the one recorded: the root
// list of a split (recorded in dataset_info.json) and a child list (recorded
// in its parent) are both refused, by name.
TEST(VerifiedReadTest, ChangedShardsListIsNamed) {
  for (const bool child : {false, true}) {
    SCOPED_TRACE(child ? "child list" : "split list");
    TempDir tmp;
    const std::string root = CopyFixture(tmp, "fb_none");
    ASSERT_OK_AND_ASSIGN(std::shared_ptr<Dataset> ds, Dataset::Open(root));
    const auto& [split, info] = ds->info().splits.front();
    std::string list = info.shard_list_info_file.file_path;
    if (child) {
      ASSERT_OK_AND_ASSIGN(ShardsList top, LoadShardsList(*ds, list));
      ASSERT_FALSE(top.children_shard_lists.empty());
      list = top.children_shard_lists.front().shard_list_info_file.file_path;
    }
    ASSERT_OK_AND_ASSIGN(const std::size_t intact, ReadAll(root, split, true));
    std::ofstream(root + "/" + list, std::ios::app | std::ios::binary) << "\n";

    auto read = ReadAll(root, split, true);
    ASSERT_FALSE(read.ok());
    EXPECT_EQ(read.status().detail(), StatusDetail::kHashMismatch);
    EXPECT_EQ(read.status().message().rfind(list + ": xxh128 mismatch (recorded ", 0), 0u)
        << read.status().message();
    // The walk itself checks only when asked to.
    EXPECT_EQ(ListShards(ds, split, /*verify_hashes=*/true).status().detail(), StatusDetail::kHashMismatch);
    EXPECT_TRUE(ListShards(ds, split).ok());
    // Unchecked, the list still parses to the same tree.
    ASSERT_OK_AND_ASSIGN(const std::size_t unchecked, ReadAll(root, split, false));
    EXPECT_EQ(unchecked, intact);
  }
}

// A recorded checksum list that does not hold one entry per algorithm is refused too.
TEST(VerifiedReadTest, WrongNumberOfRecordedChecksums) {
  TempDir tmp;
  const std::string root = CopyFixture(tmp, "fb_bz2");
  ASSERT_OK_AND_ASSIGN(std::shared_ptr<Dataset> ds, Dataset::Open(root));
  ASSERT_OK_AND_ASSIGN(std::vector<ShardInfo> shards, ListShards(ds, ds->info().splits.front().first));
  ShardInfo shard = shards.front();
  shard.file_infos[0].hash_checksums.pop_back();
  auto r = ReadShard(*ds, shard);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().detail(), StatusDetail::kHashMismatch);
  EXPECT_NE(r.status().message().find("records 1 hash checksums for 2 algorithms"), std::string::npos)
      << r.status().message();
}

// A dataset recording no hash algorithms (npz_zip) reads as it always did.
TEST(VerifiedReadTest, DatasetWithoutAlgorithmsReads) {
  const std::string root = GoldenDir() + "/npz_zip/dataset";
  ASSERT_OK_AND_ASSIGN(std::shared_ptr<Dataset> ds, Dataset::Open(root));
  ASSERT_TRUE(ds->info().dataset_structure.hash_checksum_algorithms.empty());
  for (const auto& [split, info] : ds->info().splits) {
    ASSERT_OK_AND_ASSIGN(const std::size_t checked, ReadAll(root, split, true));
    ASSERT_OK_AND_ASSIGN(const std::size_t unchecked, ReadAll(root, split, false));
    EXPECT_GT(checked, 0u);
    EXPECT_EQ(checked, unchecked);
  }
}

}  // namespace
}  // namespace sedpack
