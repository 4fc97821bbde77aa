// SPDX-License-Identifier: Apache-2.0
// The index file's byte form, for the builders (the serial one in index.cc,
// the one over a Comm in sedpack_distributed) and tests. Project-private (src/
// include directory), not installed: users write an index with BuildIndexFile.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "journal/entries_internal.h"
#include "sedpack/index/index.h"
#include "sedpack/status.h"

namespace sedpack {

/// Serialize (little-endian, see docs/format.md). InvalidArgument on contents that
/// cannot be represented (duplicate splits, a count overflowing uint64).
Result<std::vector<std::byte>> EncodeIndex(const IndexContents& contents);

/// What a rerun compares a journaled list with before keeping its subtree: its
/// size and modification time when the walk read it (a stat, never a read: a
/// list edited or replaced in place changes one or both). kUnknown (the stat
/// failed) matches nothing, so that subtree is walked again.
struct ListStamp {
  static constexpr std::uint64_t kUnknown = ~std::uint64_t{0};
  std::uint64_t size = kUnknown;
  std::int64_t mtime_ns = 0;
  bool operator==(const ListStamp&) const = default;
};
/// The stamp of the list at `relative` in `dataset`, now (kUnknown if it is
/// not a regular file or cannot be stat'ed).
ListStamp StampList(const Dataset& dataset, const std::string& relative);

/// A subtree's walk as journaled: the lists it read (with their stamps), and its `shards` shards
/// in order (as the journal record holds them from `shards_at` on, not yet
/// checked: TakeWalkedSubtree checks them as it rebuilds each path from the
/// one before it).
struct WalkedSubtree {
  std::vector<std::string> visited;
  std::vector<ListStamp> stamps;  // one per visited list
  std::string_view record;  ///< in `file`: the journal's bytes as read
  std::shared_ptr<const std::string> file;
  std::size_t shards_at = 0;
  std::size_t shards = 0;
};
/// What identifies a subtree of the walk: its list and depth.
std::string SubtreeKey(const std::string& list_path, std::size_t depth);
/// `stamps` holds one stamp per `visited` list, in the same order. The record
/// is encoded into `buffer` (its contents dropped, its room reused:
/// JournalQueue::Spare).
journal_internal::JournalEntry EncodeSubtree(const std::string& list_path, std::size_t depth,
                                             const std::vector<std::string>& visited,
                                             const std::vector<ListStamp>& stamps, const IndexedSplit& shards,
                                             std::string buffer = {});
/// The journaled subtrees by SubtreeKey; entries of another kind (an earlier
/// form), or whose header does not parse, are ignored.
std::map<std::string, WalkedSubtree> DecodeSubtrees(std::vector<journal_internal::EntryView>&& entries);
std::map<std::string, WalkedSubtree> DecodeSubtrees(std::vector<journal_internal::JournalEntry>&& entries);

/// What names the journals of an index build of `root`: the parameters (the
/// dataset_info.json walked, hex SHA-256) and the job id, the same for the
/// serial and the distributed builder, so that either resumes the other's.
struct IndexJobIdentity {
  journal_internal::JobParameters parameters;
  std::string id;
};
IndexJobIdentity IndexJobFor(const std::string& root, const std::string& dataset_info_sha256_hex);
/// The first journal number (ListJournals' rank field) that no journal of job
/// `id` under `root` has: each run journals into files of its own (a rank of
/// it into this number plus its rank), so that a rerun leaves the records of a
/// stopped run where they are instead of copying them.
Result<int> FreshJournalNumber(const std::string& root, const std::string& id, FileSystem* fs);
/// Whether every list of a journaled subtree is still in `dataset` a regular
/// file of the size and modification time recorded (StampList; a stat each,
/// no read): a subtree with a list edited or replaced in place since it was
/// journaled is walked again. Checked before TakeWalkedSubtree.
bool WalkedListsUnchanged(const Dataset& dataset, const WalkedSubtree& walked);
/// A journaled subtree's shards and lists, appended to `shards` and `visited`
/// (and the lists' stamps to `stamps`, when given); false (all unchanged) if
/// its shards do not decode: the subtree is then walked again, as if it had
/// not been journaled.
bool TakeWalkedSubtree(const WalkedSubtree& walked, IndexedSplit* shards, std::vector<std::string>* visited,
                       std::vector<ListStamp>* stamps = nullptr);

/// An index build that survives a stop (`sedpack index build`): each subtree
/// of the walk is journaled under the dataset's .sedpack-hpc/jobs/ (bound to
/// its dataset_info.json: the tree it hash-links is the same) as it is read,
/// and a rerun keeps the journaled subtrees and reads only the rest.
struct IndexJobOptions {
  bool restart = false;  ///< throw a stopped run's journal away first
};
struct IndexBuildJob {
  IndexContents contents;  ///< as written
  std::string resumed_job;  ///< the stopped run's job id when subtrees were kept from it
  std::uint64_t units_kept = 0;
  std::uint64_t units = 0;  ///< subtrees walked or kept
};
/// BuildIndexFile, journaled; AlreadyExists (naming the difference,
/// suggesting --restart) if a stopped run's journal was made for another
/// dataset_info.json. The journal is removed once the index is written.
Result<IndexBuildJob> BuildIndexFileJournaled(const std::shared_ptr<const Dataset>& dataset, int threads,
                                              const IndexJobOptions& options);

}  // namespace sedpack
