// SPDX-License-Identifier: Apache-2.0
// The index build's journal records: a subtree round-trips through its record
// (paths sharing their start, long paths, large counts), and a record whose
// shards do not decode is left to be walked again, taking nothing.
#include <cstdio>
#include <memory>
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

// Shards named as sedpack and the reference name them (32 random lowercase hex
// digits) are recorded in about half their names' room; names of any other
// make round-trip as they are: upper case, odd runs, runs past the pairs' cap.
TEST(IndexJournalTest, HexNamedShardsRoundTripPacked) {
  std::vector<std::pair<std::string, std::uint64_t>> paths;
  std::uint64_t x = 0x9e3779b97f4a7c15ull;
  for (int i = 0; i < 1000; ++i) {
    std::string name;
    for (int k = 0; k < 2; ++k) {
      x ^= x << 13, x ^= x >> 7, x ^= x << 17;
      char hex[17];
      std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(x));
      name += hex;
    }
    paths.emplace_back("train/0a1b2c3d4e/" + name + ".fb", 256);
  }
  const auto packed = EncodeSubtree("l.json", 0, {"l.json"}, {}, Shards(paths));
  // Per shard 24 bytes: shared length, pairs, 16 packed bytes, tail length,
  // ".fb", the count (two bytes); 39 with the digits as they are.
  EXPECT_LT(packed.data.size(), 1000u * 25);
  const std::vector<std::pair<std::string, std::uint64_t>> others = {
           {"train/ABCDEF0123.fb", 1},       // upper case: not packed
           {"train/abc.fb", 2},              // an odd run: its last digit stays in the tail
           {"train/" + std::string(300, 'e'), 3},  // past 127 pairs
           {"train/" + std::string(300, 'e') + "0", 4},
           {"train/1234", 5},                // nothing after the digits
           {"train/12345", 6},
           {"train/fb", 7},
           {"train/f", 8},
           {"train/0g", 9}};
  for (const auto& shards : {paths, others}) {
    const auto known = Decode(EncodeSubtree("l.json", 0, {"l.json"}, {}, Shards(shards)));
    ASSERT_EQ(known.size(), 1u);
    IndexedSplit out;
    std::vector<std::string> visited;
    ASSERT_TRUE(TakeWalkedSubtree(known.begin()->second, &out, &visited));
    ASSERT_EQ(out.shard_paths.size(), shards.size());
    for (std::size_t i = 0; i < shards.size(); ++i) {
      EXPECT_EQ(out.shard_paths[i], shards[i].first) << i;
      EXPECT_EQ(out.shard_examples[i], shards[i].second) << i;
    }
  }
}

TEST(IndexJournalTest, ARecordWhoseShardsDoNotDecodeTakesNothing) {
  const journal_internal::JournalEntry good = EncodeSubtree("l.json", 0, {"l.json"}, {}, Shards(kShards));
  std::vector<std::string> damaged;
  damaged.push_back(good.data.substr(0, good.data.size() - 1));  // the last count cut off
  damaged.push_back(good.data + "\x01");                          // bytes past the shards the count gives
  std::string bad_shared = good.data;
  // The first shard's shared length, the first byte after the shard count's
  // field (it has no path before it to share with).
  const std::string count = "1:6";
  const std::size_t shards_at = good.data.find(count, good.data.find("l.json", 8)) + count.size();
  ASSERT_EQ(bad_shared[shards_at], 0);
  bad_shared[shards_at] = 5;
  std::string bad_pairs = good.data;
  bad_pairs[shards_at + 1] = static_cast<char>(0x7f);  // more packed pairs than the record holds
  damaged.push_back(bad_pairs);
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
  too_many.replace(too_many.find(count, too_many.find("l.json", 8)), count.size(), "4:9999");
  EXPECT_TRUE(Decode({good.kind, too_many}).empty());
  EXPECT_TRUE(Decode({"index subtree", good.data}).empty());
}

// ---- The units of a written prefix (a single-process build's journal) ----

std::vector<PrefixUnit> DecodePrefix(const journal_internal::JournalEntry& e, std::uint64_t partial_size) {
  auto file = std::make_shared<const std::string>(e.data);
  std::vector<journal_internal::EntryView> views = {{e.kind, *file, file}};
  return DecodePrefixUnits(views, partial_size);
}

PrefixUnit SomeUnit() {
  PrefixUnit u;
  u.list = "train/a/shards_list.json";
  u.depth = 2;
  u.subtree = true;
  u.split = Split::kHoldout;
  u.visited = {"train/a/shards_list.json", "train/a/b/shards_list.json"};
  u.stamps = {{120, 1764762000123456789}, {7, -5}};
  u.offset = 320;
  // Runs of one value, of several, and single values between them.
  for (int i = 0; i < 1000; ++i) {
    const std::uint64_t length = i < 990 ? 43u : 40u + i % 3;
    u.lengths.Add(length);
    u.examples.Add(i == 500 ? (1ull << 40) : (i < 999 ? 16u : 3u));
    u.bytes += length;
  }
  EXPECT_EQ(u.lengths.runs.size(), 11u);
  EXPECT_EQ(u.examples.runs.size(), 4u);
  u.hash = 0xfedcba9876543210ull;
  return u;
}

TEST(IndexJournalTest, APrefixUnitRoundTripsThroughItsRecord) {
  const PrefixUnit u = SomeUnit();
  const journal_internal::JournalEntry e = EncodePrefixUnit(u);
  // Run-length coded: a few bytes for a thousand shards, not bytes a shard.
  EXPECT_LT(e.data.size(), 250u);
  const std::vector<PrefixUnit> back = DecodePrefix(e, u.offset + u.bytes);
  ASSERT_EQ(back.size(), 1u);
  const PrefixUnit& b = back[0];
  EXPECT_EQ(b.list, u.list);
  EXPECT_EQ(b.depth, u.depth);
  EXPECT_TRUE(b.subtree);
  EXPECT_EQ(b.split, Split::kHoldout);
  EXPECT_EQ(b.visited, u.visited);
  EXPECT_EQ(b.stamps, u.stamps);
  EXPECT_EQ(b.offset, u.offset);
  EXPECT_EQ(b.bytes, u.bytes);
  EXPECT_EQ(b.hash, u.hash);
  EXPECT_EQ(b.lengths, u.lengths);
  EXPECT_EQ(b.examples, u.examples);
  // An own-shards unit of no shards (a list with children only) round-trips too.
  PrefixUnit empty;
  empty.list = "test/shards_list.json";
  empty.offset = 64;
  const std::vector<PrefixUnit> none = DecodePrefix(EncodePrefixUnit(empty), 64);
  ASSERT_EQ(none.size(), 1u);
  EXPECT_FALSE(none[0].subtree);
  EXPECT_EQ(none[0].lengths.size, 0u);
}

// A record is refused, not trusted, when it claims bytes past the partial
// file (what its runs expand to is bounded by the file), when its lengths do
// not add up to its bytes, when a path is empty, or when it is cut short.
TEST(IndexJournalTest, APrefixUnitThatDoesNotAddUpIsRefused) {
  const PrefixUnit u = SomeUnit();
  EXPECT_TRUE(DecodePrefix(EncodePrefixUnit(u), u.offset + u.bytes - 1).empty());
  PrefixUnit wrong = u;
  wrong.bytes += 1;
  EXPECT_TRUE(DecodePrefix(EncodePrefixUnit(wrong), 1 << 20).empty());
  PrefixUnit zero = u;
  zero.lengths.runs.insert(zero.lengths.runs.begin(), {0, 1});
  zero.lengths.size += 1;
  zero.examples.Add(16);
  EXPECT_TRUE(DecodePrefix(EncodePrefixUnit(zero), 1 << 20).empty());
  journal_internal::JournalEntry cut = EncodePrefixUnit(u);
  for (std::size_t n = 0; n < cut.data.size(); ++n) {
    journal_internal::JournalEntry e{cut.kind, cut.data.substr(0, n)};
    EXPECT_TRUE(DecodePrefix(e, 1 << 20).empty()) << n;
  }
  // A subtree record is not a prefix unit, nor the other way round.
  EXPECT_TRUE(DecodePrefix(EncodeSubtree("a/shards_list.json", 1, {}, {}, Shards(kShards)), 1 << 20).empty());
  EXPECT_TRUE(Decode(EncodePrefixUnit(u)).empty());
}

}  // namespace
}  // namespace sedpack
