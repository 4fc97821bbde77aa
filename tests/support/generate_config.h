// SPDX-License-Identifier: Apache-2.0
// The small generated dataset the tests of whole jobs (fault/, mpi/) start from.
#pragma once

#include <cstdint>

#include "sedpack/generate/generate.h"

namespace sedpack::testing {

/// 256-sample traces, 4 examples a shard, 64 train and 12 test examples, one
/// thread: enough shards for a job to be stopped among them, in moments.
GenerateConfig SmallGenerateConfig(std::uint64_t seed);

}  // namespace sedpack::testing
