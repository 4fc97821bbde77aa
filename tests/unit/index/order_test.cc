// SPDX-License-Identifier: Apache-2.0
// The elastic epoch order: a pure function of (seed, epoch); the same sequence
// for any number of readers; resuming continues exactly where a reader stopped.
#include <map>
#include <set>

#include "unit/index/index_test_util.h"
#include "sedpack/index/fetch.h"
#include "sedpack/index/order.h"

namespace sedpack {
namespace {

using testing::MakeTreeDataset;
using testing::TempDir;

std::uint64_t SpansSize(const std::vector<EpochSpan>& spans) {
  std::uint64_t n = 0;
  for (const EpochSpan& s : spans) n += s.end - s.begin;
  return n;
}

TEST(ShuffleTest, SplitMix64KnownValues) {
  // Reference outputs of splitmix64 from state 0 (Vigna's splitmix64.c).
  SplitMix64 g(0);
  EXPECT_EQ(g.Next(), 0xE220A8397B1DCDAFULL);
  EXPECT_EQ(g.Next(), 0x6E789E6AA1B965F4ULL);
  EXPECT_EQ(g.Next(), 0x06C45D188009454FULL);
  SplitMix64 b(42);
  for (int i = 0; i < 1000; ++i) EXPECT_LT(b.Below(7), 7u);
  EXPECT_EQ(b.Below(1), 0u);
}

TEST(ShuffleTest, SeededPermutationIsAPermutationAndAFunctionOfItsKey) {
  const auto p = SeededPermutation(1000, 5);
  EXPECT_EQ(std::set<std::uint64_t>(p.begin(), p.end()).size(), 1000u);
  EXPECT_EQ(*std::max_element(p.begin(), p.end()), 999u);
  EXPECT_EQ(SeededPermutation(1000, 5), p);
  EXPECT_NE(SeededPermutation(1000, 6), p);
  // Pinned values: the algorithm is documented and must not drift silently.
  const std::vector<std::uint64_t> small = SeededPermutation(8, ShuffleStreamKey(1, 2, 3));
  std::vector<std::uint64_t> again;
  {
    SplitMix64 rng(ShuffleStreamKey(1, 2, 3));
    std::vector<std::uint64_t> a = {0, 1, 2, 3, 4, 5, 6, 7};
    for (std::uint64_t i = 8; i > 1; --i) std::swap(a[i - 1], a[rng.Below(i)]);
    again = a;
  }
  EXPECT_EQ(small, again);
  EXPECT_NE(ShuffleStreamKey(1, 2, 3), ShuffleStreamKey(1, 3, 2));
  EXPECT_NE(ShuffleStreamKey(0, 0, 0), ShuffleStreamKey(0, 0, 1));
}

class OrderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto ds = MakeTreeDataset(tmp_.path() + "/ds");
    ASSERT_TRUE(ds.ok()) << ds.status().ToString();
    ds_ = *ds;
    auto contents = BuildIndexContents(ds_);
    ASSERT_TRUE(contents.ok());
    auto index = SampleIndex::FromContents(*contents);
    ASSERT_TRUE(index.ok());
    index_ = *index;
  }

  // Every example a reader yields: (position, location, id value bytes).
  struct Item {
    std::uint64_t epoch, position;
    SampleIndex::Location loc;
    std::string id;
    bool operator==(const Item&) const = default;
  };
  std::vector<Item> Drain(ElasticReader* r, std::size_t limit = SIZE_MAX) {
    std::vector<Item> out;
    while (out.size() < limit) {
      auto n = r->Next();
      EXPECT_TRUE(n.ok()) << n.status().ToString();
      if (!n.ok() || !n->has_value()) break;
      const OrderedExample& e = **n;
      out.push_back({e.epoch, e.position, e.location, testing::ValuesHex(e.example)[0]});
    }
    return out;
  }
  std::unique_ptr<ElasticReader> Reader(ElasticReadOptions o) {
    auto r = ElasticReader::Make(ds_, index_, Split::kTrain, o);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? std::move(r).value() : nullptr;
  }

  TempDir tmp_;
  std::shared_ptr<Dataset> ds_;
  std::shared_ptr<const SampleIndex> index_;
};

TEST_F(OrderTest, EpochOrderCoversEveryExampleOnceAndDependsOnSeedAndEpoch) {
  ASSERT_OK_AND_ASSIGN(EpochOrder o, EpochOrder::Make(*index_, Split::kTrain, 7, 0, 3));
  EXPECT_EQ(o.size(), 29u);
  EXPECT_EQ(o.num_blocks(), 4u);  // 11 shards in blocks of 3
  std::vector<SampleIndex::Location> all;
  for (std::uint64_t b = 0; b < o.num_blocks(); ++b) {
    EXPECT_LE(o.block_shards(b).size(), 3u);
    auto seq = o.BlockSequence(*index_, Split::kTrain, b);
    EXPECT_EQ(seq.size(), o.block_size(b));
    for (const auto& l : seq) {
      // Shard-local: every example of the block comes from the block's shards.
      const auto shards = o.block_shards(b);
      EXPECT_NE(std::find(shards.begin(), shards.end(), l.shard), shards.end());
      all.push_back(l);
    }
  }
  std::set<std::pair<std::uint64_t, std::uint64_t>> distinct;
  for (const auto& l : all) distinct.insert({l.shard, l.row});
  EXPECT_EQ(distinct.size(), 29u);
  for (std::uint64_t p = 0; p < o.size(); ++p) {
    ASSERT_OK_AND_ASSIGN(SampleIndex::Location l, o.At(*index_, Split::kTrain, p));
    EXPECT_EQ(l, all[p]) << p;
  }
  // Same (seed, epoch): same order. Another epoch or seed: another order.
  ASSERT_OK_AND_ASSIGN(EpochOrder same, EpochOrder::Make(*index_, Split::kTrain, 7, 0, 3));
  ASSERT_OK_AND_ASSIGN(EpochOrder next, EpochOrder::Make(*index_, Split::kTrain, 7, 1, 3));
  ASSERT_OK_AND_ASSIGN(EpochOrder other, EpochOrder::Make(*index_, Split::kTrain, 8, 0, 3));
  std::vector<SampleIndex::Location> s, n, t;
  for (std::uint64_t p = 0; p < 29; ++p) {
    s.push_back(*same.At(*index_, Split::kTrain, p));
    n.push_back(*next.At(*index_, Split::kTrain, p));
    t.push_back(*other.At(*index_, Split::kTrain, p));
  }
  EXPECT_EQ(s, all);
  EXPECT_NE(n, all);
  EXPECT_NE(t, all);
}

// "Concatenated" means: merge the outputs of readers 0..R-1 by global position
// (every example carries its position in the epoch sequence). The merged
// sequence must equal the one-reader sequence, every reader's positions must
// increase, and the readers' parts must be disjoint and cover the epoch.
TEST_F(OrderTest, SameSequenceForOneToFourReaders) {
  ElasticReadOptions o;
  o.seed = 1234;
  o.shards_per_block = 2;
  auto one = Reader(o);
  ASSERT_NE(one, nullptr);
  const std::vector<Item> want = Drain(one.get());
  ASSERT_EQ(want.size(), 29u);
  for (std::uint64_t p = 0; p < want.size(); ++p) EXPECT_EQ(want[p].position, p);
  // The values are the ones a fetch by sequential number returns at that location.
  ASSERT_OK_AND_ASSIGN(auto fetcher, ExampleFetcher::Make(ds_, index_));
  for (const Item& it : want) {
    const std::uint64_t global = index_->first_row(Split::kTrain, it.loc.shard) + it.loc.row;
    ASSERT_OK_AND_ASSIGN(Example ex, fetcher->Get(Split::kTrain, global));
    EXPECT_EQ(testing::ValuesHex(ex)[0], it.id);
  }
  for (std::uint32_t readers : {1u, 2u, 3u, 4u}) {
    std::map<std::uint64_t, Item> merged;
    std::size_t total = 0;
    for (std::uint32_t r = 0; r < readers; ++r) {
      o.rank = r;
      o.num_readers = readers;
      o.prefetch_shards = static_cast<int>(r % 3);  // prefetching must not change the order
      auto reader = Reader(o);
      ASSERT_NE(reader, nullptr);
      const auto part = Drain(reader.get());
      EXPECT_EQ(part.size(), reader->epoch_size());
      for (std::size_t i = 1; i < part.size(); ++i) EXPECT_LT(part[i - 1].position, part[i].position);
      for (const Item& it : part) EXPECT_TRUE(merged.emplace(it.position, it).second) << it.position;
      total += part.size();
    }
    EXPECT_EQ(total, want.size()) << readers;
    std::vector<Item> got;
    for (auto& [p, it] : merged) got.push_back(it);
    EXPECT_EQ(got, want) << readers << " readers";
  }
}

TEST_F(OrderTest, ResumeAfterKExamplesYieldsTheTail) {
  for (std::uint32_t readers : {1u, 3u}) {
    for (std::uint32_t rank = 0; rank < readers; ++rank) {
      ElasticReadOptions o;
      o.seed = 99;
      o.epoch = 2;
      o.shards_per_block = 3;
      o.rank = rank;
      o.num_readers = readers;
      auto full_reader = Reader(o);
      ASSERT_NE(full_reader, nullptr);
      const auto full = Drain(full_reader.get());
      for (std::size_t k = 0; k <= full.size(); ++k) {
        auto r = Reader(o);
        ASSERT_NE(r, nullptr);
        const auto head = Drain(r.get(), k);
        ASSERT_EQ(head.size(), k);
        const std::string saved = r->state().Encode();
        ASSERT_OK_AND_ASSIGN(ReaderState st, ReaderState::Decode(saved));
        EXPECT_EQ(st, r->state());
        EXPECT_EQ(st.position, k);
        r.reset();
        ASSERT_OK_AND_ASSIGN(auto resumed, ElasticReader::Resume(ds_, index_, Split::kTrain, st));
        const auto tail = Drain(resumed.get());
        EXPECT_EQ(tail, std::vector<Item>(full.begin() + static_cast<std::ptrdiff_t>(k), full.end()))
            << "rank " << rank << "/" << readers << " k=" << k;
      }
    }
  }
}

TEST_F(OrderTest, RepeatGoesOnWithTheNextEpochAndResumesAcrossIt) {
  ElasticReadOptions o;
  o.seed = 5;
  o.repeat = true;
  auto r = Reader(o);
  ASSERT_NE(r, nullptr);
  const auto two = Drain(r.get(), 58);
  ASSERT_EQ(two.size(), 58u);
  EXPECT_EQ(two[28].epoch, 0u);
  EXPECT_EQ(two[29].epoch, 1u);
  EXPECT_EQ(two[29].position, 0u);
  EXPECT_EQ(r->state().epoch, 1u);
  EXPECT_EQ(r->state().position, 29u);
  // Epoch 1 alone, from a fresh reader, is the second half.
  o.epoch = 1;
  o.repeat = false;
  auto e1 = Reader(o);
  EXPECT_EQ(Drain(e1.get()), std::vector<Item>(two.begin() + 29, two.end()));
  // Resume in the middle of epoch 1.
  ReaderState st{5, 1, 10, 4, 0, 1};
  ElasticReadOptions ro;
  ro.repeat = true;
  ASSERT_OK_AND_ASSIGN(auto resumed, ElasticReader::Resume(ds_, index_, Split::kTrain, st, ro));
  const auto tail = Drain(resumed.get(), 19);
  EXPECT_EQ(tail, std::vector<Item>(two.begin() + 39, two.end()));
}

TEST(ReaderStateTest, EncodeDecodeAndRejects) {
  ReaderState s{7, 3, 12, 4, 1, 2};
  EXPECT_EQ(s.Encode(), "sedpack-order/1 seed=7 epoch=3 position=12 shards_per_block=4 rank=1 readers=2");
  ASSERT_OK_AND_ASSIGN(ReaderState d, ReaderState::Decode(s.Encode() + "\n"));
  EXPECT_EQ(d, s);
  EXPECT_FALSE(ReaderState::Decode("").ok());
  EXPECT_FALSE(ReaderState::Decode("sedpack-order/1 seed=7 epoch=3 position=12 shards_per_block=4 rank=2 readers=2").ok());
  EXPECT_FALSE(ReaderState::Decode("sedpack-order/1 seed=7 epoch=3 position=12 shards_per_block=0 rank=0 readers=2").ok());
  EXPECT_FALSE(ReaderState::Decode("sedpack-order/1 seed=x epoch=3 position=12 shards_per_block=4 rank=0 readers=2").ok());
  EXPECT_FALSE(ReaderState::Decode(s.Encode() + " extra").ok());
}

TEST_F(OrderTest, ResumePastTheEndIsRefused) {
  ReaderState st{1, 0, 30, 4, 0, 1};
  EXPECT_STATUS(StatusCode::kInvalidArgument, "past this reader's 29",
                ElasticReader::Resume(ds_, index_, Split::kTrain, st));
}

// Every layout splits the epoch exactly (none), or gives every group the same
// count (pad: each example at least once, at most one extra per group; drop:
// each at most once, at most one missing per group).
TEST_F(OrderTest, LayoutsSplitExactlyAndEqualiseGroups) {
  struct L { std::uint32_t readers, group; std::uint64_t unit; };
  for (const L l : {L{4, 1, 1}, L{4, 2, 1}, L{4, 2, 3}, L{6, 3, 2}, L{8, 4, 1}, L{32, 2, 1}}) {
    for (EqualCounts e : {EqualCounts::kNone, EqualCounts::kPad, EqualCounts::kDrop}) {
      std::map<std::uint64_t, int> seen;  // position -> times
      std::map<std::uint32_t, std::uint64_t> per_group;
      for (std::uint32_t r = 0; r < l.readers; ++r) {
        ElasticReadOptions o;
        o.seed = 21;
        o.shards_per_block = 4;
        o.rank = r;
        o.num_readers = l.readers;
        o.group_size = l.group;
        o.split_unit = l.unit;
        o.equal_counts = e;
        auto reader = Reader(o);
        ASSERT_NE(reader, nullptr);
        const auto part = Drain(reader.get());
        EXPECT_EQ(part.size(), reader->epoch_size());
        EXPECT_EQ(part.size(), SpansSize(ReaderPart(29, ReaderLayout{r, l.readers, l.group, l.unit, e})));
        per_group[r / l.group] += part.size();
        for (const Item& it : part) ++seen[it.position];
      }
      const std::uint64_t groups = l.readers / l.group;
      std::uint64_t lo = UINT64_MAX, hi = 0, total = 0;
      for (auto& [g, n] : per_group) {
        lo = std::min(lo, n);
        hi = std::max(hi, n);
        total += n;
      }
      const std::string what = std::to_string(l.readers) + "/" + std::to_string(l.group) + " " +
                               std::string(EqualCountsName(e));
      if (e == EqualCounts::kNone) {
        EXPECT_EQ(total, 29u) << what;
        EXPECT_LE(hi - lo, 1u) << what;
        EXPECT_EQ(seen.size(), 29u) << what;
        for (auto& [p, n] : seen) EXPECT_EQ(n, 1) << what << " position " << p;
      } else {
        EXPECT_EQ(lo, hi) << what;
        EXPECT_EQ(lo, e == EqualCounts::kPad ? (29 + groups - 1) / groups : 29 / groups) << what;
        if (e == EqualCounts::kPad) {
          EXPECT_EQ(seen.size(), 29u) << what;
        } else {
          EXPECT_GE(seen.size(), 29u - groups) << what;
        }
        for (auto& [p, n] : seen) EXPECT_LE(n, e == EqualCounts::kPad ? 2 : 1) << what;
      }
    }
  }
}

// Readers of a 2 x 2 layout stop at several points; their states merge into
// one epoch position from which 4, 2 or 1 readers produce exactly the rest.
TEST_F(OrderTest, MergedStatesResumeOnAnotherLayout) {
  for (std::size_t stop : {0u, 1u, 3u, 5u, 100u}) {
    std::vector<ReaderState> states;
    std::map<std::uint64_t, int> seen;
    for (std::uint32_t r = 0; r < 4; ++r) {
      ElasticReadOptions o;
      o.seed = 8;
      o.shards_per_block = 3;
      o.rank = r;
      o.num_readers = 4;
      o.group_size = 2;
      auto reader = Reader(o);
      ASSERT_NE(reader, nullptr);
      for (const Item& it : Drain(reader.get(), stop + r)) ++seen[it.position];
      states.push_back(reader->state());
    }
    ASSERT_OK_AND_ASSIGN(ReaderState merged, MergeReaderStates(states));
    EXPECT_EQ(merged.position, 0u);
    ASSERT_TRUE(merged.remaining.has_value());
    ASSERT_OK_AND_ASSIGN(ReaderState again, ReaderState::Decode(merged.Encode()));
    EXPECT_EQ(again, merged);
    for (std::uint32_t readers : {4u, 2u, 1u}) {
      std::map<std::uint64_t, int> all = seen;
      for (std::uint32_t r = 0; r < readers; ++r) {
        ReaderState st = merged;
        st.rank = r;
        st.num_readers = readers;
        st.group_size = readers == 4 ? 2 : 1;
        ASSERT_OK_AND_ASSIGN(auto resumed, ElasticReader::Resume(ds_, index_, Split::kTrain, st));
        for (const Item& it : Drain(resumed.get())) ++all[it.position];
        // A resumed reader's own state goes on from the merged spans.
        EXPECT_EQ(resumed->state().remaining, merged.remaining);
      }
      EXPECT_EQ(all.size(), 29u) << "stop " << stop << ", " << readers << " readers";
      for (auto& [p, n] : all) EXPECT_EQ(n, 1) << "stop " << stop << " position " << p;
    }
  }
  // States of different layouts, or missing a reader, do not merge.
  ReaderState a{1, 0, 0, 4, 0, 2}, b{1, 0, 0, 4, 1, 2}, c{1, 1, 0, 4, 1, 2};
  EXPECT_FALSE(MergeReaderStates(std::vector<ReaderState>{a}, 29).ok());
  EXPECT_FALSE(MergeReaderStates(std::vector<ReaderState>{a, c}, 29).ok());
  EXPECT_FALSE(MergeReaderStates(std::vector<ReaderState>{a, a}, 29).ok());
  EXPECT_FALSE(MergeReaderStates(std::vector<ReaderState>{a, b}).ok());  // whole epoch, size unknown
  ASSERT_OK_AND_ASSIGN(ReaderState whole, MergeReaderStates(std::vector<ReaderState>{a, b}, 29));
  EXPECT_EQ(whole.remaining, (std::vector<EpochSpan>{{0, 29}}));
}

TEST(ReaderStateTest, VersionTwoCarriesTheLayoutAndTheRemainingSpans) {
  ReaderState s{7, 3, 2, 4, 1, 4, EqualCounts::kPad, 2, 64, false, std::vector<EpochSpan>{{0, 10}, {20, 25}}};
  EXPECT_EQ(s.Encode(),
            "sedpack-order/2 seed=7 epoch=3 position=2 shards_per_block=4 rank=1 readers=4 group_size=2 "
            "split_unit=64 shuffle=0 equal_counts=pad remaining=0-10,20-25");
  ASSERT_OK_AND_ASSIGN(ReaderState d, ReaderState::Decode(s.Encode()));
  EXPECT_EQ(d, s);
  s.remaining = std::vector<EpochSpan>{};
  ASSERT_OK_AND_ASSIGN(d, ReaderState::Decode(s.Encode()));
  EXPECT_EQ(d, s);
  const std::string head = "sedpack-order/2 seed=7 epoch=3 position=2 shards_per_block=4 rank=1 readers=4 ";
  EXPECT_FALSE(ReaderState::Decode(head + "group_size=3 split_unit=1 shuffle=1 equal_counts=pad remaining=all").ok());
  EXPECT_FALSE(ReaderState::Decode(head + "group_size=2 split_unit=0 shuffle=1 equal_counts=pad remaining=all").ok());
  EXPECT_FALSE(ReaderState::Decode(head + "group_size=2 split_unit=1 shuffle=1 equal_counts=even remaining=all").ok());
  EXPECT_FALSE(ReaderState::Decode(head + "group_size=2 split_unit=1 shuffle=1 equal_counts=pad remaining=5-3").ok());
  EXPECT_FALSE(ReaderState::Decode(head + "group_size=2 split_unit=1 shuffle=1 equal_counts=pad remaining=0-5,4-9").ok());
  EXPECT_FALSE(ReaderState::Decode(head + "group_size=2 split_unit=1 shuffle=1 equal_counts=pad remaining=0-5,").ok());
}

TEST_F(OrderTest, UnshuffledIsTheIndexOrder) {
  ElasticReadOptions o;
  o.seed = 3;
  o.shuffle = false;
  o.shards_per_block = 4;
  o.num_readers = 2;
  std::vector<Item> both;
  for (std::uint32_t r = 0; r < 2; ++r) {
    o.rank = r;
    auto reader = Reader(o);
    ASSERT_NE(reader, nullptr);
    for (const Item& it : Drain(reader.get())) both.push_back(it);
  }
  ASSERT_EQ(both.size(), 29u);
  for (std::uint64_t p = 0; p < 29; ++p) {
    EXPECT_EQ(both[p].position, p);
    EXPECT_EQ(index_->first_row(Split::kTrain, both[p].loc.shard) + both[p].loc.row, p);
  }
}

TEST_F(OrderTest, RemainingSpansPastTheEpochAreRefused) {
  ReaderState st{1, 0, 0, 4, 0, 1, EqualCounts::kNone, 1, 1, true, std::vector<EpochSpan>{{0, 30}}};
  EXPECT_STATUS(StatusCode::kInvalidArgument, "past the epoch's 29",
                ElasticReader::Resume(ds_, index_, Split::kTrain, st));
}

}  // namespace
}  // namespace sedpack
