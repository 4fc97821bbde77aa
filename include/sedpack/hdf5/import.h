// SPDX-License-Identifier: Apache-2.0
// Bulk conversion of HDF5 captures (ASCAD, lascar-style, ...) into one sedpack
// dataset, serially or on many ranks.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "sedpack/hdf5/mapping.h"
#include "sedpack/comm/comm.h"
#include "sedpack/import/import.h"
#include "sedpack/io/file_system.h"
#include "sedpack/status.h"

namespace sedpack {

/// Progress and summary of an import (sedpack/import/import.h).
using Hdf5ImportProgress = ImportProgress;
using Hdf5ImportSummary = ImportSummary;

struct Hdf5ImportOptions {
  /// Called on rank 0 only, from its importing thread, at most a few times a
  /// second, with the totals of all ranks (the other ranks send theirs).
  std::function<void(const Hdf5ImportProgress&)> progress;
  /// Job id for the rank folders; empty: a fresh random one.
  std::string job_id;
  /// The FileSystem the inputs are checked and read (HDF5's reads included),
  /// and the output checked, written and cleaned up, through (nullptr:
  /// CurrentFileSystem()).
  FileSystem* file_system = nullptr;
  /// Keep the finished shards of a stopped job and resume it when the same
  /// import is run again (inputs with their sizes and modification times, the
  /// config, ranks and shard options must be the same; `config_digest`
  /// identifies the config). `restart` throws an earlier run's work away.
  bool resumable = false;
  bool restart = false;
  std::string config_digest;
};

/// Import `inputs` (in row order) into the new dataset `out` with the mapping
/// of `config`. Collective over `comm`: every rank calls it with the same
/// arguments.
///
/// 1. Every rank opens every input and resolves every source; a missing file,
///    dataset or field, a type the attribute cannot take, a shape that does not match the
///    schema, or inconsistent row counts fail the job on all ranks before
///    anything is created. So does an existing, non-empty `out`.
/// 2. Per split, rows are numbered across the inputs in the order given, each
///    input contributing its rows [first, last) in ascending order. Rank r takes
///    the r-th contiguous range of that numbering, cut at chunk boundaries of
///    the largest source, and writes through the DistributedWriter, whose merge
///    lists rank subtrees in rank order: the dataset's order within a split is
///    the source row order.
/// 3. Each rank reads blocks of whole chunks sized by the memory budget, with
///    hyperslabs (the column window applied by HDF5), converts values exactly
///    (or fails naming file, dataset, field, row and value), and writes them.
/// 4. On any failure on any rank, every rank removes its own shards and `out`
///    is removed if this job created it: nothing half-written stays visible.
Result<Hdf5ImportSummary> ImportHdf5(Comm& comm, const Hdf5ImportConfig& config,
                                     const std::vector<std::string>& inputs, const std::string& out,
                                     const Hdf5ImportOptions& options = {});

}  // namespace sedpack
