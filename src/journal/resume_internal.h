// SPDX-License-Identifier: Apache-2.0
// Resuming one rank of a journaled writing job (journal_internal.h): what an
// earlier run of the same job finished is checked and kept, the rest of the
// rank's folders is removed, and the journal starts again from what is kept.
// Project-private (src/ include directory), not installed.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "dataset/checks_write_internal.h"
#include "journal/journal_internal.h"
#include "sedpack/dataset/dataset.h"

namespace sedpack::journal_internal {

/// What a rank takes over from its journal.
struct RankResume {
  std::vector<FilledShard> kept;  ///< in close order
  std::uint64_t recorded = 0;     ///< shards the journal named
  std::array<std::uint64_t, 3> kept_examples{};  ///< per split
  std::unique_ptr<JournalWriter> journal;  ///< open for the shards this run writes
};

/// Rank `rank` of job `job_id`, writing into `<split>/<folder>/` of `dataset`:
/// reads its journal (none, or `restart`: start empty); InvalidArgument naming
/// the first parameter that differs from `parameters` (a rerun with other
/// inputs or options, or --restart); keeps the longest run of units in close
/// order whose files are there with their recorded size and hash; removes
/// everything else in the rank's folders; and rewrites the journal with the
/// kept units.
Result<RankResume> ResumeRank(const Dataset& dataset, const std::string& job_id, int rank,
                              const std::string& folder, const JobParameters& parameters, bool restart);

/// Remove every journal of `job_id` and its rank folders `<split>/<job_id>-r*`
/// (a restart, or `fix --remove-abandoned-jobs`), whatever the number of ranks.
Status DiscardJob(const std::string& root, const std::string& job_id, FileSystem* fs);

/// Whether the committed split lists name folders of `job_id` (its journal is then
/// left over from a job killed after its commit).
bool JobCommitted(const Dataset& dataset, const std::string& job_id);

}  // namespace sedpack::journal_internal
