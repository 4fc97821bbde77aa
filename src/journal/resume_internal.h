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

/// A shard a filler wrote as its journal record, and back: the one place
/// that knows how the two correspond (the checks sidecar record is stored
/// encoded; a record that does not decode leaves the shard to its hashes).
JournalUnit ToJournalUnit(const FilledShard& shard);
FilledShard ToFilledShard(const JournalUnit& unit);

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
/// The folders of a job that is committed (killed after its commit, before its
/// journals went) are the dataset's: then only the journals go.
Status DiscardJob(const std::string& root, const std::string& job_id, FileSystem* fs);

/// Whether the committed split lists under `root` name folders of `job_id`.
bool JobCommitted(const std::string& root, const std::string& job_id, FileSystem* fs);

/// Before a new resumable job creates its output: rank 0's journal with only
/// the job's parameters, so that a kill at any later point leaves a journal
/// the rerun finds (and not a bare dataset it would refuse to overwrite).
Status StartJournal(const std::string& root, const std::string& job_id, const JobParameters& parameters,
                    FileSystem* fs);
/// If `root` holds nothing but what a StartJournal killed before its rename
/// left (the jobs folder with temporary files at most), remove that, so the
/// folder counts as empty again.
void ClearUnstartedJournal(const std::string& root, FileSystem* fs);

}  // namespace sedpack::journal_internal
