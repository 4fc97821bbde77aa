// SPDX-License-Identifier: Apache-2.0
// The index file's byte form, for the builders (the serial one in index.cc,
// the one over a Comm in sedpack_distributed) and tests. Project-private (src/
// include directory), not installed: users write an index with BuildIndexFile.
#pragma once

#include <bit>
#include <cstddef>
#include <cstring>
#include <span>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "journal/entries_internal.h"
#include "sedpack/io/file.h"
#include "sedpack/index/index.h"
#include "sedpack/status.h"

namespace sedpack {

/// Serialize (little-endian, see docs/format.md). InvalidArgument on contents that
/// cannot be represented (duplicate splits, a count overflowing uint64).
Result<std::vector<std::byte>> EncodeIndex(const IndexContents& contents);
/// The same bytes as a sequence of pieces handed to `sink`, each path byte
/// straight from `contents` (writing an index this way never holds a second
/// copy of it).
Status EncodeIndexTo(const IndexContents& contents, const ByteSink& sink);

/// Where this library puts a split's regions in an index file: its path
/// bytes at `strings` (right after the header, or the previous split's
/// tables), then, 8-aligned, its first-row table and its path-offset table.
/// Path bytes first let a journaled build write them as the walk goes and
/// the tables, whose size it learns last, at the split's end.
struct IndexSplitPlace {
  std::uint64_t strings = 0, strings_size = 0, rows = 0, offsets = 0, end = 0;
};
IndexSplitPlace PlaceIndexSplit(std::uint64_t at, std::uint64_t strings_size, std::uint64_t shards);
/// The header's size, split entries included: where the first split's path bytes start.
std::uint64_t IndexHeaderBytes(std::size_t splits);
struct IndexSplitHead {
  Split split = Split::kTrain;
  std::uint64_t shards = 0, examples = 0;
  IndexSplitPlace place;
};
std::vector<std::byte> EncodeIndexHeader(const DatasetInfoDigest& digest, const std::vector<IndexSplitHead>& splits,
                                         std::uint64_t file_size);

/// The n + 1 running sums 0, value(0), value(0) + value(1), ... as
/// little-endian u64, handed to `sink` a chunk at a time (a table of the
/// index: first rows, or path offsets).
template <typename Value, typename Sink>
Status PutRunningSums(std::size_t n, const Value& value, const Sink& sink) {
  // A chunk of 8-byte words, large enough that the sink writes it directly.
  constexpr std::size_t kChunkWords = 16 * 1024;
  std::vector<std::byte> chunk(8 * kChunkWords);
  std::uint64_t sum = 0;
  std::size_t at = 0;
  for (std::size_t i = 0; i <= n; ++i) {
    if (at == kChunkWords) {
      SEDPACK_RETURN_NOT_OK(sink(std::span<const std::byte>(chunk)));
      at = 0;
    }
    std::uint64_t le = sum;
    if constexpr (std::endian::native == std::endian::big) le = __builtin_bswap64(le);
    std::memcpy(chunk.data() + 8 * at++, &le, 8);
    if (i < n) sum += value(i);
  }
  return sink(std::span<const std::byte>(chunk.data(), 8 * at));
}

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
  /// Set instead of `record` for a unit of a journaled build's written prefix
  /// (PrefixUnit), read back from its partial index and checked.
  std::shared_ptr<const IndexedSplit> taken;
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

/// A sequence of counts as runs of equal ones (value, how many): a unit's path
/// lengths and example counts, which are mostly one value or a few. Kept so
/// from the walk to the tables: expanded, a build of millions of shards paid
/// more in fresh pages for them than for anything else it kept.
struct ValueRuns {
  std::vector<std::pair<std::uint64_t, std::uint64_t>> runs;  ///< (value, count > 0)
  std::uint64_t size = 0;  ///< the number of values
  void Add(std::uint64_t value, std::uint64_t count = 1) {
    if (count == 0) return;
    if (!runs.empty() && runs.back().first == value) {
      runs.back().second += count;
    } else {
      runs.emplace_back(value, count);
    }
    size += count;
  }
  void Append(const ValueRuns& other) {
    for (const auto& [v, n] : other.runs) Add(v, n);
  }
  bool operator==(const ValueRuns&) const = default;
};

/// One unit of a journaled index build, in walk order, as merged: its path
/// bytes went to the build's partial index file (PartialIndexPath) at
/// `offset`, where the finished index keeps them (PlaceIndexSplit), and the
/// record holds what the tables need (each shard's path length and example
/// count, run-length coded) and what checks the bytes (their size and
/// XXH3-64). A rerun whose plan starts with the same units keeps the prefix
/// of the file they cover, reads none of their lists, and writes only the
/// rest; the journal is a few bytes a unit, not a copy of the walk.
struct PrefixUnit {
  std::string list;       ///< the unit's shards_list.json
  std::size_t depth = 0;  ///< its depth below the split
  bool subtree = false;   ///< the list's subtree; false: the list's own shards (the planner read it)
  Split split = Split::kTrain;
  std::vector<std::string> visited;  ///< subtree: the lists walked, with their stamps
  std::vector<ListStamp> stamps;
  std::uint64_t offset = 0, bytes = 0;  ///< the path bytes in the partial file
  std::uint64_t hash = 0;               ///< XXH3-64 of those bytes
  ValueRuns lengths;   ///< per shard, in order
  ValueRuns examples;
};
journal_internal::JournalEntry EncodePrefixUnit(const PrefixUnit& unit);
/// The prefix units among `entries` (every journal of the job, in the order
/// read); records of another kind, or that do not decode, are skipped.
/// `partial_size` (the partial file's size) bounds what a record may claim.
std::vector<PrefixUnit> DecodePrefixUnits(const std::vector<journal_internal::EntryView>& entries,
                                          std::uint64_t partial_size);
/// `bytes` bytes of a partial index at `offset`, if their XXH3-64 is `hash`
/// (Corruption otherwise; IOError if they cannot be read).
Result<std::string> ReadPartialRange(FileSystem& fs, int fd, std::uint64_t offset, std::uint64_t bytes,
                                     std::uint64_t hash);
/// `.sedpack-hpc/jobs/<job_id>.index.partial`, relative to the root: the index
/// a journaled build writes as it walks, renamed into place when done.
std::string PartialIndexPath(const std::string& job_id);
/// Reads back the subtree units of `units` from the partial index of job
/// `job_id` under `root` (each checked against its size and hash; one that
/// fails is skipped) and adds them to `known`, so that a build whose plan
/// does not start with them (another number of threads or ranks) still
/// keeps them where its walk meets them.
void AddPrefixSubtrees(const std::string& root, const std::string& job_id, const std::vector<PrefixUnit>& units,
                       FileSystem* fs, std::map<std::string, WalkedSubtree>* known);

/// DecodePrefixUnits and AddPrefixSubtrees over the journal entries of job
/// `job_id` (the distributed builder's way to keep what a single-process
/// build journaled: it plans and walks by subtrees).
void AddJournaledPrefixSubtrees(const std::string& root, const std::string& job_id,
                                const std::vector<journal_internal::EntryView>& entries, FileSystem* fs,
                                std::map<std::string, WalkedSubtree>* known);

/// An index build that survives a stop (`sedpack index build`): each subtree
/// of the walk is journaled under the dataset's .sedpack-hpc/jobs/ (bound to
/// its dataset_info.json: the tree it hash-links is the same) as it is read,
/// and a rerun keeps the journaled subtrees and reads only the rest.
struct IndexJobOptions {
  bool restart = false;  ///< throw a stopped run's journal away first
};
struct IndexBuildJob {
  DatasetInfoDigest dataset_info_sha256{};
  std::vector<IndexSplitHead> splits;  ///< as written
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
