// SPDX-License-Identifier: Apache-2.0
// A seeded epoch order that does not depend on the number of readers, readers
// that each take a disjoint part of it, and a tiny resumable reader state.
//
// The order of epoch e of a split (docs/library.md, "Elastic epoch order"):
//  1. the split's shards (index order) are permuted by a Fisher-Yates shuffle
//     driven by splitmix64 keyed with (seed, e);
//  2. the permuted shards are cut into blocks of `shards_per_block` consecutive
//     shards (the last block may be shorter);
//  3. the examples of block b (its shards' rows, concatenated in the permuted
//     shard order) are permuted by a second Fisher-Yates keyed with (seed, e, b).
// The epoch's sequence is block 0's permuted examples, then block 1's, and so
// on; global position p is the p-th example of that sequence. It is a pure
// function of (seed, epoch, shards_per_block, the index contents).
//
// Readers split what remains of the epoch (the whole sequence, or the spans a
// resumed epoch still has to produce, concatenated: M examples) into
// contiguous parts (docs/library.md, "Splits and equal counts"): R readers in
// G = R / group_size groups (a group is one training rank, its readers the
// rank's loader workers); group g takes [floor(g M / G), floor((g + 1) M / G)),
// padded or cut to the same count for every group (EqualCounts), and its
// readers split that in whole units of `split_unit` examples. Reads stay
// shard-local: a reader decodes only the blocks its part touches.
// Merging the readers' outputs by global position gives the one-reader sequence.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "sedpack/dataset/reader.h"
#include "sedpack/index/index.h"
#include "sedpack/status.h"

namespace sedpack {

/// splitmix64 (Steele, Lea, Flood 2014): the generator behind every shuffle here.
class SplitMix64 {
 public:
  explicit SplitMix64(std::uint64_t state) : state_(state) {}
  std::uint64_t Next();
  /// Uniform in [0, n) for n >= 1 (Lemire's multiply-shift with rejection: unbiased).
  std::uint64_t Below(std::uint64_t n);
  /// The splitmix64 output function applied to `x` (a strong 64-bit mixer).
  static std::uint64_t Mix(std::uint64_t x);

 private:
  std::uint64_t state_;
};

/// Initial splitmix64 state of a stream: Key(seed, epoch, stream) with stream 0
/// for the shard permutation and 1 + b for block b.
std::uint64_t ShuffleStreamKey(std::uint64_t seed, std::uint64_t epoch, std::uint64_t stream);

/// Fisher-Yates over 0..n-1: for i = n-1 down to 1, swap a[i] with a[Below(i + 1)].
std::vector<std::uint64_t> SeededPermutation(std::uint64_t n, std::uint64_t key);

/// The order of one epoch of one split. Immutable; cheap (one entry per shard).
class EpochOrder {
 public:
  /// `shuffle` false: both permutations are the identity (the index order, cut into blocks).
  static Result<EpochOrder> Make(const SampleIndex& index, Split split, std::uint64_t seed,
                                 std::uint64_t epoch, std::uint64_t shards_per_block, bool shuffle = true);

  std::uint64_t seed() const { return seed_; }
  std::uint64_t epoch() const { return epoch_; }
  std::uint64_t size() const { return block_start_.back(); }
  std::uint64_t num_blocks() const { return block_start_.size() - 1; }
  /// Global position of block b's first example; block_begin(num_blocks()) == size().
  std::uint64_t block_begin(std::uint64_t b) const { return block_start_[b]; }
  std::uint64_t block_size(std::uint64_t b) const { return block_start_[b + 1] - block_start_[b]; }
  /// Shard ordinals (index order) of block b, in the permuted order.
  std::span<const std::uint64_t> block_shards(std::uint64_t b) const;
  /// The block holding global position p (binary search). REQUIRES p < size().
  std::uint64_t BlockOf(std::uint64_t position) const;

  /// Where each example of block b comes from, in the block's emitted order.
  std::vector<SampleIndex::Location> BlockSequence(const SampleIndex& index, Split split,
                                                   std::uint64_t b) const;
  /// The order of block b's rows (indices into its shards' concatenated rows).
  std::vector<std::uint64_t> BlockPermutation(std::uint64_t b) const;
  /// The example at global position p (computes its block's permutation).
  Result<SampleIndex::Location> At(const SampleIndex& index, Split split, std::uint64_t position) const;

 private:
  std::uint64_t seed_ = 0, epoch_ = 0, shards_per_block_ = 1;
  bool shuffle_ = true;
  std::vector<std::uint64_t> shards_;       // permuted shard ordinals
  std::vector<std::uint64_t> block_start_;  // num_blocks + 1 global positions
};

/// Whether every group (training rank) yields the same number of examples.
enum class EqualCounts {
  kNone,  ///< exact: each example once, counts differ by at most one
  kPad,   ///< the shorter groups repeat examples of their own part (DistributedSampler's rule)
  kDrop,  ///< the longer groups leave out their last example
};
std::string_view EqualCountsName(EqualCounts e);  ///< "none", "pad", "drop"
Result<EqualCounts> ParseEqualCounts(std::string_view name);

/// Global positions [begin, end) of an epoch's sequence.
struct EpochSpan {
  std::uint64_t begin = 0, end = 0;
  bool operator==(const EpochSpan&) const = default;
};

/// How a reader's part of the remaining examples is chosen (see the file comment).
struct ReaderLayout {
  std::uint32_t rank = 0;  ///< reader id, 0 <= rank < num_readers
  std::uint32_t num_readers = 1;
  std::uint32_t group_size = 1;  ///< readers per group; divides num_readers
  std::uint64_t split_unit = 1;  ///< a group's readers take whole units (batches) of its part
  EqualCounts equal_counts = EqualCounts::kNone;
  bool operator==(const ReaderLayout&) const = default;
};

/// Reader `layout.rank`'s part of `remaining` examples: indices into the
/// remaining sequence, in the order the reader yields them (a padded part ends
/// with a repeat of the group's first examples).
std::vector<EpochSpan> ReaderPart(std::uint64_t remaining, const ReaderLayout& layout);

/// A reader's whole position: enough to continue exactly where it stopped.
struct ReaderState {
  std::uint64_t seed = 0;
  std::uint64_t epoch = 0;
  /// Examples this reader has produced in `epoch`.
  std::uint64_t position = 0;
  /// The order and the reader's part of it (must match when resuming).
  std::uint64_t shards_per_block = 4;
  std::uint32_t rank = 0;
  std::uint32_t num_readers = 1;
  EqualCounts equal_counts = EqualCounts::kNone;
  std::uint32_t group_size = 1;
  std::uint64_t split_unit = 1;
  bool shuffle = true;
  /// What the layout splits: the spans of the epoch not produced before it
  /// started, increasing and disjoint; nullopt: the whole epoch.
  std::optional<std::vector<EpochSpan>> remaining = std::nullopt;

  ReaderLayout layout() const { return {rank, num_readers, group_size, split_unit, equal_counts}; }
  bool operator==(const ReaderState&) const = default;
  /// One text line, e.g. "sedpack-order/1 seed=7 epoch=0 position=12 shards_per_block=4 rank=0 readers=1";
  /// with a layout, no shuffle or remaining spans "sedpack-order/2 ... group_size=2
  /// split_unit=64 shuffle=1 equal_counts=pad remaining=0-100,250-300".
  std::string Encode() const;
  static Result<ReaderState> Decode(std::string_view text);
};

/// The position of a whole epoch from the states of all readers of one layout
/// (one state per rank 0..R-1, same seed, epoch, block size, layout and
/// remaining spans): a ReaderState for one reader at position 0 whose
/// `remaining` holds exactly the examples none of them produced (examples a
/// "drop" layout left out count as not produced). Each reader of a new layout
/// resumes from it with its own rank, num_readers, group_size, split_unit and
/// equal_counts: the rest of the epoch is split over the new readers, each
/// example once. `epoch_size` is needed only when `remaining` is nullopt.
Result<ReaderState> MergeReaderStates(std::span<const ReaderState> states,
                                      std::optional<std::uint64_t> epoch_size = std::nullopt);

struct ElasticReadOptions {
  std::uint64_t seed = 0;
  std::uint64_t epoch = 0;
  std::uint64_t shards_per_block = 4;
  std::uint32_t rank = 0;
  std::uint32_t num_readers = 1;
  std::uint32_t group_size = 1;
  std::uint64_t split_unit = 1;
  EqualCounts equal_counts = EqualCounts::kNone;
  /// false: the index order, unpermuted (a pass over a validation split).
  bool shuffle = true;
  /// Go on to epoch + 1 (a new order) at the end of an epoch instead of stopping.
  bool repeat = false;
  /// Shards of the coming blocks read and decoded ahead, each on its own thread
  /// (0: decode on the caller's thread).
  int prefetch_shards = 2;
  ShardReadLimits limits;
  /// Check each shard against the hash checksum the metadata records
  /// (FetchOptions::verify_hashes; the lists are walked on the caller's thread),
  /// or, when the fresh checks sidecar records it, against its fast checksum
  /// (ReadOptions::verify_hashes) unless strict_hashes.
  bool verify_hashes = true;
  bool strict_hashes = false;
};

/// One example of an elastic reader, with where it sits in the epoch order.
struct OrderedExample {
  Example example;
  std::uint64_t epoch = 0;
  std::uint64_t position = 0;  ///< global position in the epoch's sequence
  SampleIndex::Location location;
};

/// Reads this reader's part of the epoch order, block by block (a block's
/// shards are decoded once, the block's examples emitted in permuted order).
class ElasticReader {
 public:
  static Result<std::unique_ptr<ElasticReader>> Make(std::shared_ptr<const Dataset> dataset,
                                                     std::shared_ptr<const SampleIndex> index,
                                                     Split split, ElasticReadOptions options);
  /// Continue from a saved state (its seed, epoch, position, block size,
  /// layout and remaining spans override those of `options`).
  static Result<std::unique_ptr<ElasticReader>> Resume(std::shared_ptr<const Dataset> dataset,
                                                       std::shared_ptr<const SampleIndex> index,
                                                       Split split, const ReaderState& state,
                                                       ElasticReadOptions options = {});
  ~ElasticReader();

  /// The next example, or nullopt at the end (never with `repeat`).
  Result<std::optional<OrderedExample>> Next();
  /// The state after the examples produced so far.
  ReaderState state() const;
  /// Examples this reader produces in the current epoch (from its start or
  /// from the remaining spans it resumed with; padding included).
  std::uint64_t epoch_size() const;

  class Impl;

 private:
  explicit ElasticReader(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace sedpack
