// SPDX-License-Identifier: Apache-2.0
// VerifyDataset: a check spread over the ranks of a Comm (sedpack::check; the
// MPI communicator itself is sedpack::mpi).
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "sedpack/check/check.h"
#include "sedpack/comm/comm.h"
#include "sedpack/status.h"

namespace sedpack {

/// Progress of a parallel verification, summed over all ranks.
struct VerifyProgress {
  std::uint64_t bytes_done = 0;
  /// Whole checks: an estimate until the end (the recorded shard count times
  /// the mean file size so far), then equal to bytes_done.
  std::uint64_t bytes_total = 0;
  /// Shard files the metadata records (whole checks) or lists (partial ones).
  std::uint64_t files_total = 0;
  double seconds = 0;
};

struct VerifyOptions {
  CheckOptions check;  ///< what to verify (its `progress` member is ignored)
  /// Called on rank 0 at most every `progress_interval_s` seconds, and once at the end.
  std::function<void(const VerifyProgress&)> progress;
  double progress_interval_s = 0.5;
  /// Called on a worker thread of `rank` before each unit of work it takes
  /// (tests and benchmarks slow one rank down with it). Whole checks only.
  std::function<void(int rank)> before_unit;
};

/// Verify a dataset across all ranks of `comm`, each with check.threads
/// threads. A whole check streams: rank 0 checks dataset_info.json and the top
/// of the list tree until it is cut into units (subtrees, or ranges of one
/// huge list's shards), and every rank takes units from a shared counter until
/// none is left, so the metadata walk is spread too and a slow rank takes fewer
/// units. A partial check (check.partial) has rank 0 walk the lists down to
/// the parts and scatter their shards, balanced by bytes. Reports are gathered:
/// rank 0 returns one report with every problem, sorted by path (and
/// work_by_rank); other ranks return their own part. Collective. The Status is
/// non-OK (on every rank) only when the verification could not run.
Result<CheckReport> VerifyDataset(Comm& comm, const std::string& root, const VerifyOptions& options);

}  // namespace sedpack
