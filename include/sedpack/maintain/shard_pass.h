// SPDX-License-Identifier: Apache-2.0
// Options of the read-only passes over every shard of a dataset (`sedpack
// stats`, `sedpack digest`): threads, and progress while the shards are read.
#pragma once

#include <cstdint>
#include <functional>

namespace sedpack {

/// Progress of a pass over the shards, summed over all ranks.
struct ShardPassProgress {
  std::uint64_t bytes_done = 0;   ///< shard file bytes read, checked, decoded and processed
  std::uint64_t bytes_total = 0;  ///< of every shard of the pass
  std::uint64_t shards_total = 0;
  double seconds = 0;     ///< since the pass started
  bool finished = false;  ///< the last call: every rank has finished its shards
};

struct ShardPassOptions {
  /// Threads per rank; 0 = hardware threads.
  int threads = 0;
  /// Called on rank 0, on the calling thread, at most every
  /// `progress_interval_s` seconds while the shards are read (bytes_done never
  /// decreases), and once more with `finished` when every rank is done; a pass
  /// that fails makes no finished call. Other ranks never call it.
  std::function<void(const ShardPassProgress&)> progress;
  double progress_interval_s = 0.5;
  /// Called on a worker thread of `rank` before each shard it takes (tests
  /// slow a pass down with it).
  std::function<void(int rank)> before_shard;
};

}  // namespace sedpack
