// SPDX-License-Identifier: Apache-2.0
// The full-disk resume check that the fault tests of every resumable writing
// job share: count a job's writes, fill the disk from a third and from two
// thirds of them, rerun on a healthy disk, compare with an uninterrupted run.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "sedpack/status.h"

namespace sedpack::testing {

/// Every example of every split of the dataset at `root`, in read order, as
/// raw bytes prefixed by the split's name.
std::vector<std::string> ReadAll(const std::string& root);

/// What the check needs of one run of a resumable job into `out`.
struct RunResult {
  Status status;
  std::uint64_t kept_shards = 0, journal_shards = 0;
};
using Job = std::function<RunResult(const std::string& out)>;

/// A job's summary (anything with kept_shards and journal_shards) as a RunResult.
template <typename Summary>
RunResult ResultOf(const Result<Summary>& r) {
  RunResult out{r.status()};
  if (r.ok()) {
    out.kept_shards = r->kept_shards;
    out.journal_shards = r->journal_shards;
  }
  return out;
}

/// Runs `job` with every write of the process counted, then twice more with the
/// disk full from a third and from two thirds of those writes; each stopped job
/// is run again on a healthy disk and must end with `want`, keeping shards the
/// first time and none the second, when every shard left on disk was damaged.
void FullDiskThenResume(const std::string& dir, const Job& job, const std::vector<std::string>& want);

}  // namespace sedpack::testing
