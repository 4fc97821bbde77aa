// SPDX-License-Identifier: Apache-2.0
// A generate job run by every rank of a communicator (the library half of
// `mpirun -n N sedpack generate` and of `generate --append`). Needs only the
// Comm interface: with a serial Comm it runs in one process, with an MPI Comm
// (sedpack::mpi) across ranks.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "sedpack/dataset/commit.h"
#include "sedpack/generate/generate.h"
#include "sedpack/comm/comm.h"
#include "sedpack/status.h"

namespace sedpack {

/// Make `out` ready for a new dataset: it must be missing or an empty folder.
/// A folder that holds only temporary files of a create that was killed
/// (update_*_of_*) counts as empty, and those files are removed, so the same job
/// can simply be run again. AlreadyExists if `out` holds a dataset or anything else.
Status PrepareGenerateOutput(const std::string& out);

/// Options for GenerateOverComm.
struct ParallelGenerateOptions {
  /// Called on rank 0 only, on its calling thread, with the progress of the
  /// whole job (every rank's examples: rank 0's own count plus the last count
  /// each other rank reported): after each of rank 0's batches, then while it
  /// waits for the others, and once with `finished` set when every rank has
  /// written its examples (before the merge).
  std::function<void(const GenerateProgress&)> progress;
  /// How often ranks other than 0 report their count to rank 0.
  std::chrono::milliseconds report_interval{200};
  /// DistributedWriteOptions::job_id: names the job's folders. Empty: random.
  std::string job_id;
  /// Waiting for the dataset's commit lock (many jobs may append at once) and
  /// when a holder counts as dead (sedpack/dataset/commit.h).
  CommitLockOptions commit_lock;
  /// Keep finished shards when the job stops, and resume an earlier run of the
  /// same job (DistributedWriteOptions::resume_parameters). The job id (if not
  /// given) is then derived from what identifies the job (see job_name), so
  /// that the same command finds its journal again; the rerun writes the same
  /// examples in the same order as an uninterrupted run. The number of
  /// ranks is a parameter: a rerun with another one is refused.
  bool resumable = false;
  /// With resumable: throw away an earlier run's journal and shards first.
  bool restart = false;
  /// With resumable and no job_id: the user's name for the job (`--job-id`).
  /// Runs with the same name are the same job; without one, under SLURM the
  /// job and array task ids and the parameters say which job a run is,
  /// elsewhere the parameters alone (seed, counts, the dataset's structure;
  /// never the counts an append finds, so that N identical appends give the
  /// same dataset whether they run one after another or at the same time).
  std::string job_name;
};

/// What a GenerateOverComm job did (the same on every rank).
struct ParallelGenerateSummary {
  std::uint64_t examples_total = 0;  ///< written by all ranks
  std::uint64_t bytes = 0;           ///< raw value bytes written by all ranks
  double seconds = 0;                ///< from the start of writing to the end of the merge
  int ranks = 1;
  bool appended = false;             ///< added to an existing dataset
  /// A resumable job: shards kept from an earlier run, and shards its journals named.
  std::uint64_t kept_shards = 0;
  std::uint64_t journal_shards = 0;
  std::string job_id;
  /// Hashes of dataset_info.json after the merge (empty if they could not be
  /// read), one per algorithm of the dataset's hash_checksum_algorithms.
  std::vector<std::string> root_checksums;
  std::vector<HashAlgorithm> checksum_algorithms;
};

/// Collective: every rank of `comm` calls it with the same config and `out`.
/// Without config.params.append, rank 0 prepares `out` (PrepareGenerateOutput)
/// and the dataset is created with the config's metadata and structure. With
/// append, the examples go into the existing dataset at `out` with that
/// dataset's own metadata and structure (the config's are replaced; it must be a
/// schema the generator can fill) and each split's indices continue from the
/// count it holds. Rank r generates the r-th contiguous block of every split's
/// new indices into `<split>/<job>-r<r>/` (DistributedWriter); rank 0 merges.
/// Example content depends only on (seed, split, index), so the dataset holds
/// the same examples whatever the number of ranks.
///
/// Every rank makes the same collective calls in the same order whatever fails,
/// so no rank hangs. On failure nothing is merged and the dataset's metadata is
/// as before; the rank whose own step failed gets its own error and every other
/// rank an error with StatusDetail::kPeerAborted ("aborted: rank N failed: ...").
Result<ParallelGenerateSummary> GenerateOverComm(Comm& comm, GenerateConfig config, const std::string& out,
                                                 const ParallelGenerateOptions& options = {});

}  // namespace sedpack
