// SPDX-License-Identifier: Apache-2.0
// The index build's journal records: a subtree round-trips through its record
// (paths sharing their start, long paths, large counts), and a record whose
// shards do not decode is left to be walked again, taking nothing.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "index/index_internal.h"

namespace sedpack {
namespace {

IndexedSplit Shards(const std::vector<std::pair<std::string, std::uint64_t>>& shards) {
  IndexedSplit s;
  for (const auto& [path, examples] : shards) {
    EXPECT_TRUE(s.shard_paths.Add(path).ok());
    s.shard_examples.push_back(examples);
  }
  return s;
}

const std::vector<std::pair<std::string, std::uint64_t>> kShards = {
    {"train/a/00000000.fb", 16},
    {"train/a/00000001.fb", 0},
    {"train/a/b/00000000.fb", 127},
    {"train/a/b/00000000.fb.zst", 128},  // a longer path with all of the one before as its start
    {"train/c", 1ull << 40},
    {std::string(300, 'x'), 18446744073709551615ull},  // a rest of more than one varint byte
};

std::map<std::string, WalkedSubtree> Decode(journal_internal::JournalEntry e) {
  std::vector<journal_internal::JournalEntry> entries;
  entries.push_back(std::move(e));
  return DecodeSubtrees(std::move(entries));
}

TEST(IndexJournalTest, ASubtreeRoundTripsThroughItsRecord) {
  const IndexedSplit shards = Shards(kShards);
  // A negative mtime (before 1970) keeps its sign through the record.
  const std::vector<ListStamp> stamps = {{120, 1764762000123456789}, {7, -5}};
  const auto known = Decode(EncodeSubtree("train/a/shards_list.json", 2, {"train/a/shards_list.json", "train/a/b/s.json"},
                                          stamps, shards));
  ASSERT_EQ(known.size(), 1u);
  const auto it = known.find(SubtreeKey("train/a/shards_list.json", 2));
  ASSERT_NE(it, known.end());
  IndexedSplit out = Shards({{"before/00.fb", 3}});
  std::vector<std::string> visited = {"before.json"};
  EXPECT_EQ(it->second.stamps, stamps);
  ASSERT_TRUE(TakeWalkedSubtree(it->second, &out, &visited));
  ASSERT_EQ(out.shard_paths.size(), kShards.size() + 1);
  EXPECT_EQ(out.shard_paths[0], "before/00.fb");
  for (std::size_t i = 0; i < kShards.size(); ++i) {
    EXPECT_EQ(out.shard_paths[i + 1], kShards[i].first);
    EXPECT_EQ(out.shard_examples[i + 1], kShards[i].second);
  }
  EXPECT_EQ(visited, (std::vector<std::string>{"before.json", "train/a/shards_list.json", "train/a/b/s.json"}));
}

// Every length of the part of a path after the start it shares with the one
// before (0 to 40 bytes: each branch of the short copies, and memcpy past
// them), each path followed by one of another length, round-trips.
TEST(IndexJournalTest, EveryLengthOfAPathsRestRoundTrips) {
  std::vector<std::pair<std::string, std::uint64_t>> paths;
  const std::string base = "train/a/";
  std::string previous;
  for (std::size_t rest = 0; rest <= 40; ++rest) {
    // The first path shares "train/a/" with the one before, then `rest` bytes follow.
    std::string p = base;
    for (std::size_t k = 0; k < rest; ++k) p.push_back(static_cast<char>('a' + (k * 7 + rest) % 26));
    if (p == previous) p += "z";
    paths.emplace_back(p, rest);
    paths.emplace_back(p, rest + 1);  // the same path again: nothing after the shared start
    previous = p;
  }
  const auto known = Decode(EncodeSubtree("l.json", 0, {"l.json"}, {}, Shards(paths)));
  ASSERT_EQ(known.size(), 1u);
  IndexedSplit out;
  std::vector<std::string> visited;
  ASSERT_TRUE(TakeWalkedSubtree(known.begin()->second, &out, &visited));
  ASSERT_EQ(out.shard_paths.size(), paths.size());
  for (std::size_t i = 0; i < paths.size(); ++i) {
    EXPECT_EQ(out.shard_paths[i], paths[i].first) << i;
    EXPECT_EQ(out.shard_examples[i], paths[i].second) << i;
  }
}

TEST(IndexJournalTest, ARecordWhoseShardsDoNotDecodeTakesNothing) {
  const journal_internal::JournalEntry good = EncodeSubtree("l.json", 0, {"l.json"}, {}, Shards(kShards));
  std::vector<std::string> damaged;
  damaged.push_back(good.data.substr(0, good.data.size() - 1));  // the last count cut off
  damaged.push_back(good.data + "\x01");                          // bytes past the shards the count gives
  std::string bad_shared = good.data;
  // The first shard's shared length (it has no path before it to share with).
  bad_shared[good.data.find("train/a/00000000.fb") - 2] = 5;
  damaged.push_back(bad_shared);
  for (const std::string& data : damaged) {
    const auto known = Decode({good.kind, data});
    ASSERT_EQ(known.size(), 1u);
    IndexedSplit out;
    std::vector<std::string> visited;
    EXPECT_FALSE(TakeWalkedSubtree(known.begin()->second, &out, &visited));
    EXPECT_TRUE(out.shard_paths.empty());
    EXPECT_TRUE(out.shard_examples.empty());
    EXPECT_TRUE(visited.empty());
  }
  // A shard count past what the record can hold, or a record of another kind: not kept at all.
  std::string too_many = good.data;
  const std::string count = "1:6";
  too_many.replace(too_many.find(count, too_many.find("l.json", 8)), count.size(), "4:9999");
  EXPECT_TRUE(Decode({good.kind, too_many}).empty());
  EXPECT_TRUE(Decode({"index subtree", good.data}).empty());
}

}  // namespace
}  // namespace sedpack
