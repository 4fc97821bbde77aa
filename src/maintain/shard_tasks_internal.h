// SPDX-License-Identifier: Apache-2.0
// The common skeleton of the read-only maintenance passes (stats, content
// digests): rank 0 walks the metadata (it must check clean), the shard files
// are spread over the ranks by bytes, each rank reads, hash-checks and decodes
// its shards on a few threads, and all ranks agree on the outcome.
#pragma once

#include <functional>

#include "sedpack/check/steps.h"
#include "sedpack/dataset/dataset.h"
#include "sedpack/comm/comm.h"
#include "sedpack/maintain/shard_pass.h"
#include "sedpack/shard/shard.h"
#include "sedpack/status.h"

namespace sedpack::maintain_internal {

/// Called for each of this rank's shards from one of `threads` threads
/// (`thread` in [0, threads)); returning an error stops every rank.
using ShardFn = std::function<Status(int thread, const ShardCheckTask& task, const DecodedShard& shard)>;

/// Whether a shard's result is known already (from a stopped run's journal):
/// it is then neither read nor passed to the ShardFn. Called from the threads.
using ShardSkipFn = std::function<bool(const ShardCheckTask& task)>;

/// Collective. `walk` selects the splits; `pass.threads` <= 0 means hardware
/// threads (the number used is returned through `threads_used` before any
/// call); `pass.progress` is called on rank 0 as ShardPassOptions says, the
/// other ranks sending their counts over the Comm's progress channel.
Status ForEachShard(Comm& comm, const Dataset& ds, const CheckOptions& walk, const ShardPassOptions& pass,
                    int* threads_used, const ShardFn& fn, const ShardSkipFn& skip = {});

}  // namespace sedpack::maintain_internal
