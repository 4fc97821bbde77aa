// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "sedpack/index/index.h"
#include "sedpack/comm/comm.h"
#include "sedpack/status.h"

namespace sedpack {

class FileSystem;  // sedpack/io/file_system.h

/// What a journaled distributed build kept (rank 0).
struct DistributedIndexReport {
  std::string resumed_job;  ///< the stopped run's job id when subtrees were kept from it
  std::uint64_t units_kept = 0;
  std::uint64_t units = 0;  ///< subtrees walked or kept
};

struct DistributedIndexOptions {
  /// Rank 0 writes `<root>/.sedpack-hpc/index.bin`.
  bool write = true;
  /// Rank 0 expands the top of each split's tree until it has about this many
  /// subtrees per rank to hand out (more: better balance, more work on rank 0).
  int subtrees_per_rank = 4;
  /// Journal every subtree walked under `<root>/.sedpack-hpc/jobs/` (each rank
  /// into a file of its own), as the serial journaled build does and as the
  /// same job: a rerun on any number of ranks, or serial, keeps the subtrees a
  /// stopped run journaled and walks only the rest; a journal made for another
  /// dataset_info.json is refused (AlreadyExists). The journals go once the
  /// index is written.
  bool journal = false;
  /// Throw a stopped run's journals away first.
  bool restart = false;
  /// Filled on rank 0 when journaling.
  DistributedIndexReport* report = nullptr;
  /// The ranks send rank 0 what they walked in rounds of at most about this
  /// many bytes a rank (at least one record), so that rank 0 holds the index
  /// and one round, never every rank's whole walk as text. 0: 2 MiB.
  std::size_t message_bytes = 0;
  /// The FileSystem the dataset, its lists and the journals are read and
  /// written through (nullptr: the default). dataset_info.json's digest and
  /// the index file itself still go through the default.
  FileSystem* file_system = nullptr;
};

/// Build the sample index from the metadata alone, the shards_list.json walk
/// spread over the ranks of `comm`: rank 0 reads dataset_info.json and the top
/// lists of each split, hands the subtrees below them to the ranks (balanced by
/// their recorded shard counts), every rank walks its subtrees, and rank 0
/// joins the parts in the reader's order (the same bytes as the serial
/// BuildIndexContents) and writes the file. Collective; the Status is the same
/// on every rank. Rank 0 returns the contents, other ranks empty contents.
Result<IndexContents> BuildIndexDistributed(Comm& comm, const std::string& root,
                                            const DistributedIndexOptions& options = {});

}  // namespace sedpack
