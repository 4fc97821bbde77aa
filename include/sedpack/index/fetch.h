// SPDX-License-Identifier: Apache-2.0
// Fetch any example of a split by its number, from many threads at once.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <memory>

#include "sedpack/dataset/dataset.h"
#include "sedpack/dataset/reader.h"
#include "sedpack/index/index.h"
#include "sedpack/shard/shard.h"
#include "sedpack/status.h"

namespace sedpack {

struct FetchOptions {
  /// Bound on the decoded bytes of shards kept for later fetches (least recently
  /// used shards are dropped first). 0 turns the cache off: every fetch reads
  /// and decodes its shard. A shard larger than the bound is not kept.
  std::uint64_t cache_bytes = std::uint64_t{256} << 20;
  ShardReadLimits limits;
  /// Check each shard read against the hash checksum the metadata records, as
  /// ReadOptions::verify_hashes does. The index holds no hashes: they are taken
  /// from the split's shards_list.json tree (each list checked against its
  /// parent), walked once per fetcher and only as far as the shards fetched.
  /// Corruption (StatusDetail::kHashMismatch) names the file and algorithm.
  bool verify_hashes = true;
  /// With verify_hashes and a fresh checks sidecar (ReadOptions::verify_hashes)
  /// recording the shard: the shard's bytes are checked against its fast
  /// checksum, and with the cache off and positioned_reads a fetch from an fb
  /// shard reads only the example's value bytes (uncompressed; compressed
  /// ones from their decode points) and checks them against the example's
  /// checksum. A mismatch is Corruption (StatusDetail::kHashMismatch) naming
  /// the shard and the example. strict_hashes: the recorded hashes only.
  bool strict_hashes = false;
  /// Receives the one warning about a stale or damaged checks sidecar; null: stderr.
  std::function<void(const std::string&)> warn;
  /// With the cache off and hashes not verified (verify_hashes false, or a
  /// dataset recording none), a fetch from an uncompressed fb shard in a
  /// dataset folder reads only that example: its offsets from the FlatBuffer,
  /// then its attribute bytes, by positioned reads (each offset and length
  /// checked against the file size, each value against the schema, as a
  /// whole-shard read checks them). A compressed fb shard that a fresh checks
  /// sidecar records with decode points is read the same way from the points
  /// (the example's ranges come from the sidecar, nothing is checked against
  /// its checksums). Without a fresh sidecar, a verified fetch needs the whole
  /// file to check its hash, so it reads and decodes the shard; so do other
  /// compressed shards, npz, tfrec and packs. False: always the whole shard.
  bool positioned_reads = true;
};

/// Thread-safe random access to examples through a SampleIndex. Threads asking
/// for the same uncached shard at the same time share one decode.
class ExampleFetcher {
 public:
  static Result<std::unique_ptr<ExampleFetcher>> Make(std::shared_ptr<const Dataset> dataset,
                                                      std::shared_ptr<const SampleIndex> index,
                                                      FetchOptions options = {});
  ~ExampleFetcher();

  /// Example `example` of `split` (its number in sequential read order).
  /// InvalidArgument out of range; Corruption if the shard does not hold the
  /// number of examples the metadata records, or (verify_hashes) its bytes or a
  /// list on the way to it do not match the recorded hash. An example read
  /// alone (FetchOptions::positioned_reads) comes as a shard of one example
  /// (Example::index 0) holding only its own bytes.
  Result<Example> Get(Split split, std::uint64_t example);
  /// Shard `shard` (ordinal in read order) of `split`, decoded (from the cache if there).
  Result<std::shared_ptr<const DecodedShard>> Shard(Split split, std::uint64_t shard);

  const SampleIndex& index() const;

  struct Stats {
    std::uint64_t hits = 0;       ///< fetches served from the cache (or a decode in flight)
    std::uint64_t misses = 0;     ///< shards read and decoded
    std::uint64_t example_reads = 0;  ///< fetches that read their example alone (positioned_reads)
    std::uint64_t evictions = 0;  ///< shards dropped to stay under the bound
    std::uint64_t cached_bytes = 0;
    std::uint64_t cached_shards = 0;
  };
  Stats stats() const;

  class Impl;

 private:
  explicit ExampleFetcher(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

/// Whether, with the cache off (cache_bytes 0) and positioned_reads, fetches
/// from `dataset` with `options` read their example alone rather than its
/// shard: an fb dataset read unverified and uncompressed, or with a checks
/// sidecar present (used when fresh) read verified (not strict) or, with a
/// codec that has decode points, unverified. Callers fetching
/// scattered examples turn the cache off when this holds.
bool FetchReadsExamplesAlone(const Dataset& dataset, const FetchOptions& options);

/// Decoded bytes of a shard (the sum of its value sizes), the measure the cache bound uses.
std::uint64_t DecodedShardBytes(const DecodedShard& shard);

}  // namespace sedpack
