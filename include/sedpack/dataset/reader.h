// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sedpack/dataset/dataset.h"
#include "sedpack/shard/shard.h"
#include "sedpack/status.h"
#include "sedpack/value.h"

namespace sedpack {

/// Walks a split's tree of `shards_list.json` lazily in the reference's order:
/// depth-first, pre-order (a list's own shards, then its children in order).
/// Each list is read only when reached. Guards against cycles and runaway depth.
/// With `verify_hashes`, each list is checked against the hash its parent
/// records (the split entry of dataset_info.json, or the parent list's
/// children entry) before it is parsed: Corruption (StatusDetail::kHashMismatch)
/// naming the list and the algorithm on a mismatch. The fastest recorded
/// algorithm is used; a dataset that records none is walked unchecked.
class ShardInfoIterator {
 public:
  static Result<std::unique_ptr<ShardInfoIterator>> Make(std::shared_ptr<const Dataset> dataset,
                                                         Split split, bool verify_hashes = false);
  ~ShardInfoIterator();
  /// The next shard, or nullopt at the end.
  Result<std::optional<ShardInfo>> Next();

  class ListWalk;  // the walk over the lists themselves (reader.cc)

 private:
  ShardInfoIterator() = default;
  std::unique_ptr<ListWalk> walk_;
  ShardsList list_;  // the list whose shards are being handed out
  std::size_t next_shard_ = 0;
};

/// All shards of a split, in traversal order (`verify_hashes`: as ShardInfoIterator).
Result<std::vector<ShardInfo>> ListShards(const std::shared_ptr<const Dataset>& dataset, Split split,
                                          bool verify_hashes = false);

/// One example: values are views into a decoded shard kept alive by this object.
struct Example {
  std::shared_ptr<const DecodedShard> shard;
  std::size_t index = 0;
  /// Attribute `j` (schema order).
  ValueView Get(std::size_t j) const { return shard->Get(index, j); }
};

/// How to read a split.
struct ReadOptions {
  /// Keep only shards for which this returns true.
  std::function<bool(const ShardInfo&)> shard_filter;
  /// Keep the first K shards of each distinct custom_metadata (sorted-keys identity).
  std::optional<std::size_t> custom_metadata_type_limit;
  /// Keep the first N shards (after the filters).
  std::optional<std::size_t> max_shards;
  /// Cycle forever (reshuffling the shard order on every pass when shuffling).
  bool repeat = false;
  /// 0: deterministic reference order. >0: shuffle the shard order and pass
  /// examples through a buffer of this many examples, both seeded by `seed`.
  std::size_t shuffle_buffer = 0;
  std::uint64_t seed = 0;
  /// Shards read and decoded ahead of the consumer, each on its own thread
  /// (0 = decode inline on the caller's thread).
  int prefetch_shards = 2;
  ShardReadLimits limits;
  /// Check every shards_list.json and shard file against the hash its parent
  /// records before parsing or decoding it (the fastest recorded algorithm;
  /// the bytes read for decoding are hashed, the file is not read twice).
  /// A mismatch is Corruption (StatusDetail::kHashMismatch) naming the file
  /// and the algorithm. Datasets recording no algorithms read unchecked.
  ///
  /// A shard the checks sidecar (`.sedpack-hpc/checks.bin`, bound to this
  /// dataset_info.json) describes is checked against its size and fast
  /// checksum (XXH3-64) instead: it catches bit rot, torn writes and
  /// truncation at memory speed, not someone who rewrites both the shard and
  /// the sidecar (docs/library.md, "What a verified read protects").
  bool verify_hashes = true;
  /// With verify_hashes: always check the recorded hash, never the sidecar.
  bool strict_hashes = false;
  /// Receives the one warning about a stale or damaged checks sidecar (then
  /// ignored); null: written to stderr.
  std::function<void(const std::string&)> warn;
};

/// Iterates the examples of one split.
class ExampleReader {
 public:
  static Result<std::unique_ptr<ExampleReader>> Make(std::shared_ptr<const Dataset> dataset,
                                                     Split split, ReadOptions options = {});
  ~ExampleReader();
  /// The next example, or nullopt at the end.
  Result<std::optional<Example>> Next();
  /// Up to `batch_size` examples (fewer only at the end; empty at the end).
  Result<std::vector<Example>> NextBatch(std::size_t batch_size);
  /// The shards this reader visits (after filters, before shuffling).
  const std::vector<ShardInfo>& shards() const;

  class Impl;

 private:
  explicit ExampleReader(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

/// Read and decode one shard file named by `shard` (file_infos[0]). With
/// `verify_hashes`, the bytes read are first checked against
/// file_infos[0].hash_checksums (as ReadOptions::verify_hashes says; the
/// checks sidecar is not used here).
Result<std::shared_ptr<const DecodedShard>> ReadShard(const Dataset& dataset, const ShardInfo& shard,
                                                      const ShardReadLimits& limits = {},
                                                      bool verify_hashes = true);

}  // namespace sedpack
