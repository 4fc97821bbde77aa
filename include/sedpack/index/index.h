// SPDX-License-Identifier: Apache-2.0
// The global sample index: for each split, the shards in the order the
// sequential reader visits them (ShardInfoIterator) and each shard's first
// global row, so that example i of a split maps to (shard, row) in
// O(log shards) without reading any shards_list.json. Stored as the sidecar
// `<root>/.sedpack-hpc/index.bin` (format: docs/format.md, "Sample index file").
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "sedpack/dataset/dataset.h"
#include "sedpack/status.h"
#include "sedpack/types.h"

namespace sedpack {

/// File name of the index inside the sidecar folder.
inline constexpr std::string_view kIndexFileName = "index.bin";
/// Format version written and read.
inline constexpr std::uint32_t kIndexFormatVersion = 1;

/// An append-only list of paths held packed: the bytes in blocks of 16 KiB
/// (a path never spans two), plus 12 bytes per path. A million 74-byte paths
/// take about 86 MB here against about 120 MB as std::string objects, and
/// Append() moves another list's blocks without copying a byte, so that lists
/// built by several threads are joined at no extra cost. The views returned
/// stay valid until the list is destroyed, moved from, or appended to a
/// list.
class ShardPathList {
 public:
  ShardPathList() = default;
  ShardPathList(ShardPathList&&) noexcept = default;
  ShardPathList& operator=(ShardPathList&&) noexcept = default;
  ShardPathList(const ShardPathList& other);
  ShardPathList& operator=(const ShardPathList& other);

  std::size_t size() const { return entries_.size(); }
  bool empty() const { return entries_.empty(); }
  std::string_view operator[](std::size_t i) const {
    const Entry& e = entries_[i];
    return {blocks_[e.block].data() + e.offset, e.size};
  }
  /// Sum of the paths' sizes.
  std::uint64_t total_bytes() const { return total_bytes_; }

  /// Adds `path` at the end. InvalidArgument (the list unchanged) for a path
  /// of 4 GiB or more, or past 2^32 blocks (64 TiB of paths); no dataset
  /// comes near either (a shards_list.json is read up to 1 GiB).
  Status Add(std::string_view path);
  /// Room for `n` paths' entries (not their bytes).
  void reserve(std::size_t n) { entries_.reserve(n); }
  /// Moves `other`'s paths to the end of this list; `other` is left empty.
  /// InvalidArgument (both lists unchanged) past 2^32 blocks.
  Status Append(ShardPathList&& other);
  /// Calls `f(bytes)` with the paths' bytes in order, in as few contiguous
  /// pieces as the blocks allow (the concatenation of every path).
  template <typename F>
  void ForEachRun(F&& f) const {
    std::size_t i = 0;
    while (i < entries_.size()) {
      const Entry& first = entries_[i];
      std::size_t end = first.offset + first.size;
      std::size_t j = i + 1;
      while (j < entries_.size() && entries_[j].block == first.block && entries_[j].offset == end) {
        end += entries_[j].size;
        ++j;
      }
      f(std::string_view(blocks_[first.block].data() + first.offset, end - first.offset));
      i = j;
    }
  }

  class const_iterator {
   public:
    using value_type = std::string_view;
    using difference_type = std::ptrdiff_t;
    const_iterator() = default;
    const_iterator(const ShardPathList* list, std::size_t i) : list_(list), i_(i) {}
    std::string_view operator*() const { return (*list_)[i_]; }
    const_iterator& operator++() {
      ++i_;
      return *this;
    }
    const_iterator operator++(int) {
      const_iterator before = *this;
      ++i_;
      return before;
    }
    bool operator==(const const_iterator& o) const { return i_ == o.i_; }

   private:
    const ShardPathList* list_ = nullptr;
    std::size_t i_ = 0;
  };
  const_iterator begin() const { return {this, 0}; }
  const_iterator end() const { return {this, entries_.size()}; }

 private:
  // Add() without the limit checks, for paths of a list that passed them.
  void AddUnchecked(std::string_view path);
  struct Entry {
    std::uint32_t block;
    std::uint32_t offset;
    std::uint32_t size;
  };
  std::vector<std::string> blocks_;  // each reserved once; never reallocated
  std::vector<Entry> entries_;
  std::uint64_t total_bytes_ = 0;
};

/// One split of an index being built: shard paths (dataset-relative, the
/// shard's file_infos[0]) and example counts in sequential read order.
struct IndexedSplit {
  Split split = Split::kTrain;
  ShardPathList shard_paths;
  std::vector<std::uint64_t> shard_examples;
};

/// Everything an index file holds.
struct IndexContents {
  DatasetInfoDigest dataset_info_sha256{};
  std::vector<IndexedSplit> splits;  ///< ascending Split order, each at most once
};

/// Walk the metadata of every split of `dataset` (the same walk the reader does)
/// and collect the index contents. The digest is of dataset_info.json as read
/// before the walk; if the file changes during the walk the build fails
/// (IOError) rather than record a tree it did not see. `threads` (0 = the
/// CPUs this process may use) read the lists of different subtrees at once;
/// the contents are the same for any number.
Result<IndexContents> BuildIndexContents(const std::shared_ptr<const Dataset>& dataset, int threads = 0);

/// Build the index of `dataset` and write it atomically to the sidecar folder.
Result<IndexContents> BuildIndexFile(const std::shared_ptr<const Dataset>& dataset, int threads = 0);

/// A validated, read-only index (memory-mapped when opened from a file).
/// Thread-safe (immutable).
class SampleIndex {
 public:
  ~SampleIndex();
  SampleIndex(const SampleIndex&) = delete;
  SampleIndex& operator=(const SampleIndex&) = delete;

  /// Map `path` read-only and validate every header field, table, offset,
  /// count and path (the file is untrusted). Corruption names what is wrong.
  /// The file is opened and stat'ed through `fs` (nullptr: the default) and
  /// mapped from that descriptor.
  static Result<std::shared_ptr<const SampleIndex>> OpenFile(const std::string& path, FileSystem* fs = nullptr);
  /// OpenFile of the dataset's sidecar `<root>/.sedpack-hpc/index.bin`, opened
  /// beneath the root (io/file.h): never through a link out of the root.
  static Result<std::shared_ptr<const SampleIndex>> OpenInDataset(const std::string& root, FileSystem* fs = nullptr);
  /// Validate bytes held in memory (e.g. an index built but not written).
  static Result<std::shared_ptr<const SampleIndex>> FromBytes(std::vector<std::byte> bytes);
  static Result<std::shared_ptr<const SampleIndex>> FromContents(const IndexContents& contents);

  const DatasetInfoDigest& dataset_info_sha256() const { return digest_; }
  /// Splits present, ascending.
  std::vector<Split> splits() const;
  bool HasSplit(Split split) const { return table(split) != nullptr; }
  /// 0 for a split that is not indexed.
  std::uint64_t num_examples(Split split) const;
  std::uint64_t num_shards(Split split) const;
  /// REQUIRES: shard < num_shards(split).
  std::string_view shard_path(Split split, std::uint64_t shard) const;
  std::uint64_t first_row(Split split, std::uint64_t shard) const;
  std::uint64_t shard_examples(Split split, std::uint64_t shard) const;

  struct Location {
    std::uint64_t shard = 0;  ///< ordinal in the split's read order
    std::uint64_t row = 0;    ///< example within the shard
    bool operator==(const Location&) const = default;
  };
  /// Example `example` of `split`: binary search over the first rows.
  /// NotFound for a split that is not indexed, InvalidArgument out of range.
  Result<Location> Locate(Split split, std::uint64_t example) const;

  /// The contents back (paths copied).
  Result<IndexContents> ToContents() const;

 private:
  struct Table {
    std::uint64_t shards = 0;
    std::uint64_t examples = 0;
    const std::byte* first_rows = nullptr;    // shards + 1 uint64
    const std::byte* path_offsets = nullptr;  // shards + 1 uint64
    const std::byte* strings = nullptr;
  };
  SampleIndex() = default;
  static Result<std::shared_ptr<const SampleIndex>> Validate(std::unique_ptr<SampleIndex> index);
  /// Map the open file `fd` (the caller closes it; the mapping outlives it).
  static Result<std::shared_ptr<const SampleIndex>> MapFile(int fd, const std::string& path, FileSystem* fs);
  const Table* table(Split split) const;

  std::vector<std::byte> owned_;
  void* map_ = nullptr;
  std::size_t map_size_ = 0;
  const std::byte* data_ = nullptr;
  std::size_t size_ = 0;
  DatasetInfoDigest digest_{};
  std::optional<Table> tables_[3];
};

/// What `sedpack index check` reports.
enum class IndexFreshness {
  kMissing,  ///< no index file
  kFresh,    ///< valid and derived from the current dataset_info.json
  kStale,    ///< valid, but dataset_info.json changed since it was built
  kInvalid,  ///< unreadable or malformed
};
std::string_view IndexFreshnessName(IndexFreshness f);

struct IndexCheck {
  IndexFreshness freshness = IndexFreshness::kMissing;
  std::string path;            ///< the index file
  std::string message;         ///< why, for stale / invalid
  std::string recorded_sha256; ///< hex, when the file could be read
  std::string current_sha256;  ///< hex of the dataset_info.json now
};
/// Classify the index of the dataset at `root`. The Status is non-OK only if
/// dataset_info.json itself cannot be read.
Result<IndexCheck> CheckIndex(const std::string& root);

/// How OpenIndex treats an index that is missing, stale or invalid.
struct IndexOpenOptions {
  /// false: warn and use an index built in memory from the metadata (nothing
  /// is written); true: rebuild the file (and warn that it did).
  bool rebuild = false;
  /// Receives one line per warning (stale or invalid index). Null: silent.
  std::function<void(const std::string&)> warn;
};

/// The index for reading `dataset`: the sidecar file if it is fresh, otherwise
/// as `options` says. A missing index is built in memory (or written with
/// `rebuild`) without a warning.
Result<std::shared_ptr<const SampleIndex>> OpenIndex(const std::shared_ptr<const Dataset>& dataset,
                                                     const IndexOpenOptions& options = {});

}  // namespace sedpack
