// SPDX-License-Identifier: Apache-2.0
// Verifying a dataset (module sedpack::check): its hash tree and counts, every
// problem reported. sedpack/check/verify.h runs it over a Comm; report.h
// renders the report; steps.h has its steps for code that runs them apart.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sedpack/dataset/dataset.h"
#include "sedpack/shard/shard.h"
#include "sedpack/status.h"

namespace sedpack {

/// One problem found by a check.
struct CheckProblem {
  enum class Kind {
    kHashMismatch,     ///< file bytes do not match a recorded hash
    kMissingFile,      ///< a listed file does not exist
    kMalformed,        ///< metadata or shard cannot be parsed/decoded
    kCountMismatch,    ///< recorded counts do not add up
    kPathEscape,       ///< a path leaves the dataset root or is otherwise invalid
    kIOError,          ///< a file could not be read
    kOrphan,           ///< (warning) a file no metadata lists
    kLargeList,        ///< (warning) a shards_list.json readers must parse whole is very large
    kResumableJob,     ///< (warning) a stopped resumable job: its journal keeps its shards for a rerun;
                       ///< path `.sedpack-hpc/jobs/<job-id>`, `found` the number of files it keeps
  };
  Kind kind = Kind::kMalformed;
  std::string path;       ///< dataset-relative path of the file concerned
  std::string algorithm;  ///< for kHashMismatch
  std::string expected;   ///< recorded value
  std::string found;      ///< computed value
  std::string message;    ///< human-readable description
  bool warning() const {
    return kind == Kind::kOrphan || kind == Kind::kLargeList || kind == Kind::kResumableJob;
  }
};
std::string_view CheckProblemKindName(CheckProblem::Kind kind);

/// Options for CheckDataset.
struct CheckOptions {
  /// If not empty: the trusted hashes of dataset_info.json (algorithm order).
  std::vector<std::string> expected_root_checksums;
  /// Also decode every shard and check example counts and value sizes.
  bool deep = false;
  /// With `deep`, a whole check of a dataset folder without a fresh checks
  /// sidecar (.sedpack-hpc/checks.bin) writes one, from the shards whose
  /// recorded hashes matched in the read it decoded (best effort: a folder
  /// that cannot be written is left as it is). `sedpack check --deep` and
  /// `verify --deep` set it.
  bool record_checks = false;
  /// Only these splits (empty = all).
  std::vector<Split> splits;
  ShardReadLimits limits;
  /// Only these parts (dataset-relative): a shards_list.json or a folder (its
  /// subtree) or a shard file. Every list from the split down is still hashed,
  /// so the chain from each part up to dataset_info.json is verified. Empty = all.
  std::vector<std::string> partial;
  /// Report files under the checked splits that no metadata lists (warnings).
  /// Ignored (off) when `partial` is set.
  bool find_orphans = true;
  /// A shards_list.json of more bytes or more entries (shard_files plus
  /// children_shard_lists) than this gets a kLargeList warning: every reader of
  /// its folder reads and parses it whole (a reference writer lists a whole
  /// split in one list).
  std::uint64_t large_list_bytes = std::uint64_t{64} << 20;
  std::uint64_t large_list_entries = 100000;
  /// Threads hashing and decoding files (per rank under VerifyDataset).
  /// 0 = the CPUs this process may run on (its affinity mask: under mpirun or
  /// srun, the cores given to the rank).
  int threads = 0;
  /// Called after each file with the bytes just hashed (progress reporting).
  /// Partial checks only (`partial` set); may be called from any thread.
  std::function<void(std::uint64_t bytes, std::uint64_t files)> progress;
  /// The FileSystem CheckDataset opens and reads the dataset through (nullptr:
  /// CurrentFileSystem()).
  FileSystem* file_system = nullptr;
};

/// The share of a check one rank did (balance reports, tests).
struct CheckWork {
  std::uint64_t units = 0;  ///< subtrees or shard ranges taken
  std::uint64_t files = 0;  ///< files hashed
  std::uint64_t bytes = 0;  ///< bytes hashed
};

/// Result of a check: every problem found, not only the first.
struct CheckReport {
  std::vector<CheckProblem> problems;
  std::uint64_t files_checked = 0;
  std::uint64_t bytes_checked = 0;
  std::uint64_t shards_checked = 0;
  std::uint64_t examples_checked = 0;
  /// What each rank did, in rank order (one entry for CheckDataset; empty for
  /// a partial check).
  std::vector<CheckWork> work_by_rank;
  /// No problem other than warnings.
  bool ok() const;
  std::size_t error_count() const;
};

/// Verify the whole Merkle tree: dataset_info.json (against the expected root if
/// given) -> every shards_list.json -> every shard file, with every configured
/// algorithm; counts are checked too. Returns a report; the Status is non-OK only
/// when the check could not run (dataset_info.json unreadable).
Result<CheckReport> CheckDataset(const std::string& root, const CheckOptions& options = {});

}  // namespace sedpack
