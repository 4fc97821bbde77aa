// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "sedpack/dataset/check.h"
#include "sedpack/comm/comm.h"
#include "sedpack/status.h"

namespace sedpack {

/// Progress of a parallel verification, summed over all ranks.
struct VerifyProgress {
  std::uint64_t bytes_done = 0;
  std::uint64_t bytes_total = 0;
  std::uint64_t files_total = 0;
  double seconds = 0;
};

struct VerifyOptions {
  CheckOptions check;  ///< what to verify (its `progress` member is ignored)
  /// Called on rank 0 at most every `progress_interval_s` seconds, and once at the end.
  std::function<void(const VerifyProgress&)> progress;
  double progress_interval_s = 0.5;
};

/// Verify a dataset across all ranks of `comm` (DESIGN.md "MPI protocol
/// (verification)"): rank 0 reads dataset_info.json and every shards_list.json
/// (hashing them), cuts the shard files into per-rank sets balanced by bytes and
/// scatters them; each rank hashes (and with `deep`, decodes) its shards; the
/// reports are gathered and rank 0 returns one report with every problem, sorted
/// by path. Other ranks return their own part. Collective. The Status is non-OK
/// (on every rank) only when the verification could not run.
Result<CheckReport> VerifyDataset(Comm& comm, const std::string& root, const VerifyOptions& options);

}  // namespace sedpack
