// SPDX-License-Identifier: Apache-2.0
#include "sedpack/index/index.h"
#include "sedpack/io/file_system.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <iterator>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <limits>
#include <map>
#include <mutex>
#include <unordered_map>
#include <unordered_set>

#include "sedpack/dataset/reader.h"
#include "io/beneath.h"
#include "sedpack/cancel.h"
#include "sedpack/io/file.h"
#include "sedpack/metadata/paths.h"
#include "sidecar/sidecar_files.h"
#include "dataset/shards_tree_internal.h"
#include "dataset/verified_read.h"
#include "index/index_internal.h"
#include "index/subtree_walk.h"
#include "io/kill_point.h"
#include "journal/entries_internal.h"
#include "sidecar/sidecar_internal.h"
#include "parallel/worker_pool.h"

namespace sedpack {
namespace {

// Layout constants: docs/format.md, "Sample index file". Every region starts 8-aligned.
constexpr char kMagic[8] = {'S', 'P', 'H', 'P', 'C', 'I', 'D', 'X'};
constexpr std::size_t kHeaderSize = 64;
constexpr std::size_t kSplitEntrySize = 64;

std::uint64_t Load64(const std::byte* p) {
  std::uint64_t v;
  std::memcpy(&v, p, 8);
  if constexpr (std::endian::native == std::endian::big) v = __builtin_bswap64(v);
  return v;
}
std::uint32_t Load32(const std::byte* p) {
  std::uint32_t v;
  std::memcpy(&v, p, 4);
  if constexpr (std::endian::native == std::endian::big) v = __builtin_bswap32(v);
  return v;
}
void Put64(std::vector<std::byte>* out, std::size_t at, std::uint64_t v) {
  if constexpr (std::endian::native == std::endian::big) v = __builtin_bswap64(v);
  std::memcpy(out->data() + at, &v, 8);
}
void Put32(std::vector<std::byte>* out, std::size_t at, std::uint32_t v) {
  if constexpr (std::endian::native == std::endian::big) v = __builtin_bswap32(v);
  std::memcpy(out->data() + at, &v, 4);
}
std::size_t Align8(std::size_t n) { return (n + 7) & ~std::size_t{7}; }

// a + b and a * b without wrapping; false on overflow.
bool AddOk(std::uint64_t a, std::uint64_t b, std::uint64_t* r) { return !__builtin_add_overflow(a, b, r); }
bool MulOk(std::uint64_t a, std::uint64_t b, std::uint64_t* r) { return !__builtin_mul_overflow(a, b, r); }

}  // namespace

// ---- Encoding ------------------------------------------------------------------

std::uint64_t IndexHeaderBytes(std::size_t splits) { return kHeaderSize + kSplitEntrySize * splits; }

IndexSplitPlace PlaceIndexSplit(std::uint64_t at, std::uint64_t strings_size, std::uint64_t shards) {
  IndexSplitPlace p;
  p.strings = at;
  p.strings_size = strings_size;
  p.rows = Align8(at + strings_size);
  p.offsets = p.rows + 8 * (shards + 1);
  p.end = p.offsets + 8 * (shards + 1);
  return p;
}

std::vector<std::byte> EncodeIndexHeader(const DatasetInfoDigest& digest, const std::vector<IndexSplitHead>& splits,
                                         std::uint64_t file_size) {
  std::vector<std::byte> head(IndexHeaderBytes(splits.size()), std::byte{0});
  std::memcpy(head.data(), kMagic, 8);
  Put32(&head, 8, kIndexFormatVersion);
  Put32(&head, 12, static_cast<std::uint32_t>(splits.size()));
  Put64(&head, 16, file_size);
  std::memcpy(head.data() + 24, digest.data(), 32);
  for (std::size_t k = 0; k < splits.size(); ++k) {
    const IndexSplitHead& s = splits[k];
    const std::size_t e = kHeaderSize + kSplitEntrySize * k;
    Put32(&head, e, static_cast<std::uint32_t>(s.split));
    Put64(&head, e + 8, s.shards);
    Put64(&head, e + 16, s.examples);
    Put64(&head, e + 24, s.place.rows);
    Put64(&head, e + 32, s.place.offsets);
    Put64(&head, e + 40, s.place.strings);
    Put64(&head, e + 48, s.place.strings_size);
  }
  return head;
}

// The header, then per split its path bytes as they are in `contents` (so
// that writing it never needs a second copy of every path) and its rows and
// offsets arrays (built here, 16 bytes per shard). The journaled build writes
// the same bytes in the same places (index_build_journaled.cc).
Status EncodeIndexTo(const IndexContents& contents, const ByteSink& sink) {
  bool seen[3] = {false, false, false};
  int last = -1;
  for (const IndexedSplit& s : contents.splits) {
    const int id = static_cast<int>(s.split);
    if (id < 0 || id > 2 || seen[id] || id < last) {
      return Status::InvalidArgument("index splits must be distinct and in ascending order");
    }
    seen[id] = true;
    last = id;
    if (s.shard_paths.size() != s.shard_examples.size()) {
      return Status::InvalidArgument("index split ", SplitName(s.split), ": ", s.shard_paths.size(),
                                     " paths but ", s.shard_examples.size(), " counts");
    }
  }
  // The totals go into the header, which is written first: one pass adds up
  // the rows, and the arrays are then built and handed over a chunk at a time
  // (each split's whole arrays, 16 bytes a shard, cost a resumed build more in
  // zero-filled pages than in the writing itself).
  std::vector<IndexSplitHead> heads;
  std::uint64_t at = IndexHeaderBytes(contents.splits.size());
  for (const IndexedSplit& s : contents.splits) {
    IndexSplitHead h;
    h.split = s.split;
    h.shards = s.shard_paths.size();
    for (const std::uint64_t examples : s.shard_examples) {
      if (!AddOk(h.examples, examples, &h.examples)) {
        return Status::InvalidArgument("index split ", SplitName(s.split), ": example count overflows");
      }
    }
    h.place = PlaceIndexSplit(at, s.shard_paths.total_bytes(), h.shards);
    at = h.place.end;
    heads.push_back(h);
  }
  SEDPACK_RETURN_NOT_OK(sink(EncodeIndexHeader(contents.dataset_info_sha256, heads, at)));
  static constexpr std::byte kZeros[8] = {};
  for (std::size_t k = 0; k < contents.splits.size(); ++k) {
    const IndexedSplit& s = contents.splits[k];
    const IndexSplitPlace& p = heads[k].place;
    Status piece_status;
    s.shard_paths.ForEachRun([&](std::string_view run) {
      if (piece_status.ok()) piece_status = sink(std::as_bytes(std::span<const char>(run.data(), run.size())));
    });
    SEDPACK_RETURN_NOT_OK(piece_status);
    SEDPACK_RETURN_NOT_OK(sink(std::span<const std::byte>(kZeros, p.rows - (p.strings + p.strings_size))));
    const std::size_t n = s.shard_paths.size();
    SEDPACK_RETURN_NOT_OK(PutRunningSums(n, [&s](std::size_t i) { return s.shard_examples[i]; }, sink));
    SEDPACK_RETURN_NOT_OK(
        PutRunningSums(n, [&s](std::size_t i) { return std::uint64_t{s.shard_paths[i].size()}; }, sink));
  }
  return Status::OK();
}

Result<std::vector<std::byte>> EncodeIndex(const IndexContents& contents) {
  std::vector<std::byte> out;
  SEDPACK_RETURN_NOT_OK(EncodeIndexTo(contents, [&out](std::span<const std::byte> piece) {
    // The header, first, holds the file size.
    if (out.empty() && piece.size() >= 24) out.reserve(static_cast<std::size_t>(Load64(piece.data() + 16)));
    out.insert(out.end(), piece.begin(), piece.end());
    return Status::OK();
  }));
  return out;
}

// ---- Building ------------------------------------------------------------------

Status AppendListShards(const ShardsList& list, IndexedSplit* out) {
  for (std::size_t i = 0; i < list.shard_files.size(); ++i) {
    const ShardInfo& s = list.shard_files[i];
    if (s.file_infos.empty()) {
      return Status::Corruption(list.relative_path_self, ": shard_files[", i, "] has no file_infos");
    }
    if (s.number_of_examples < 0) {
      return Status::Corruption(list.relative_path_self, ": shard_files[", i,
                                "] has a negative number_of_examples");
    }
    SEDPACK_RETURN_NOT_OK(out->shard_paths.Add(s.file_infos[0].file_path));
    out->shard_examples.push_back(static_cast<std::uint64_t>(s.number_of_examples));
  }
  return Status::OK();
}

Status IndexShardsSubtreeKeeping(const Dataset& dataset, const std::string& list_path, std::size_t depth,
                                 const std::map<std::string, WalkedSubtree>* known, std::vector<std::string>* visited,
                                 IndexedSplit* out, std::uint64_t* kept, std::vector<ListStamp>* stamps) {
  struct Collect : dataset_internal::ShardsTreeVisitor {
    IndexedSplit* out = nullptr;
    const std::map<std::string, WalkedSubtree>* known = nullptr;
    std::vector<std::string> kept_lists;  // below the kept lists, which the walk itself records
    bool stamp = false;
    std::unordered_map<std::string, ListStamp> stamped;  // every list read or kept, with stamp
    std::uint64_t kept = 0;
    Result<bool> Load(const Dataset& ds, const dataset_internal::ShardsTreeLimits& limits,
                      dataset_internal::ShardsTreeNode& node) override {
      const auto it = known ? known->find(SubtreeKey(node.path(), node.depth))
                            : std::map<std::string, WalkedSubtree>::const_iterator();
      // Taken here, in the walk's pre-order, where the walk would read it;
      // a record whose lists changed or whose shards do not decode is walked again instead.
      std::vector<std::string> lists;
      std::vector<ListStamp> list_stamps;
      if (known && it != known->end() && WalkedListsUnchanged(ds, it->second) &&
          TakeWalkedSubtree(it->second, out, &lists, &list_stamps)) {
        for (std::size_t i = 0; i < lists.size(); ++i) {
          if (stamp) stamped[lists[i]] = list_stamps[i];
          if (lists[i] != node.path()) kept_lists.push_back(std::move(lists[i]));
        }
        ++kept;
        return false;
      }
      if (!stamp || ds.pack() != nullptr || limits.verify_hashes || limits.keep_text) {
        if (stamp) stamped[node.path()] = StampList(ds, node.path());
        return ShardsTreeVisitor::Load(ds, limits, node);
      }
      // The stamp from the list's own open (no call of its own), taken
      // before the bytes are read, so a list changed while it is read
      // mismatches on a rerun (it is walked again) instead of being kept.
      FileStat st;
      SEDPACK_ASSIGN_OR_RETURN(node.list, dataset_internal::LoadShardsListStamped(ds, node.path(), &st));
      stamped[node.path()] = ListStamp{st.size, st.mtime_ns};
      return true;
    }
    Status Enter(dataset_internal::ShardsTreeNode& node) override { return AppendListShards(node.list, out); }
  } collect;
  collect.out = out;
  collect.known = known;
  collect.stamp = stamps != nullptr && visited != nullptr;
  const std::size_t first = visited ? visited->size() : 0;
  Status st = dataset_internal::WalkShardsSubtree(dataset, ShardListInfo{FileInfo{list_path, {}}, 0, 0}, depth,
                                                  collect, {}, visited);
  if (visited) visited->insert(visited->end(), collect.kept_lists.begin(), collect.kept_lists.end());
  if (collect.stamp) {
    for (std::size_t i = first; i < visited->size(); ++i) {
      const auto found = collect.stamped.find((*visited)[i]);
      stamps->push_back(found != collect.stamped.end() ? found->second : ListStamp{});
    }
  }
  if (kept) *kept += collect.kept;
  return st;
}

Status IndexShardsSubtree(const Dataset& dataset, const std::string& list_path, std::size_t depth,
                          std::vector<std::string>* visited, IndexedSplit* out) {
  return IndexShardsSubtreeKeeping(dataset, list_path, depth, nullptr, visited, out, nullptr);
}

namespace {

// The serial walk: the reader's own iterator, so the index order is the
// sequential order by construction.
Status WalkSplitSerial(const std::shared_ptr<const Dataset>& dataset, IndexedSplit* s) {
  SEDPACK_ASSIGN_OR_RETURN(auto it, ShardInfoIterator::Make(dataset, s->split));
  for (;;) {
    SEDPACK_RETURN_NOT_OK(CheckCancelled());
    SEDPACK_ASSIGN_OR_RETURN(std::optional<ShardInfo> shard, it->Next());
    if (!shard) break;
    if (shard->number_of_examples < 0) {
      return Status::Corruption(shard->file_infos[0].file_path, ": negative number_of_examples");
    }
    SEDPACK_RETURN_NOT_OK(s->shard_paths.Add(shard->file_infos[0].file_path));
    s->shard_examples.push_back(static_cast<std::uint64_t>(shard->number_of_examples));
  }
  return Status::OK();
}

namespace journal = journal_internal;

// A subtree unit of the parallel walk: kept from a stopped run, or walked.
Status WalkSubtreeUnit(const Dataset& ds, WalkUnit& u, WalkKeeping* keep) {
  const std::string& list_path = u.plan.entry.shard_list_info_file.file_path;
  if (keep) {
    const auto it = keep->known.find(SubtreeKey(list_path, u.plan.depth));
    if (it != keep->known.end() && WalkedListsUnchanged(ds, it->second) &&
        TakeWalkedSubtree(it->second, &u.shards, &u.visited, keep->stamp ? &u.stamps : nullptr)) {
      ++keep->kept;
      return Status::OK();
    }
    TestShardDelay();  // lets a signal test stop the walk mid-way
  }
  SEDPACK_RETURN_NOT_OK(CheckCancelled());
  std::uint64_t kept_below = 0;
  SEDPACK_RETURN_NOT_OK(IndexShardsSubtreeKeeping(ds, list_path, u.plan.depth, keep ? &keep->known : nullptr,
                                                  &u.visited, &u.shards, &kept_below,
                                                  keep && keep->stamp ? &u.stamps : nullptr));
  if (keep) {
    keep->kept += kept_below;
    ++keep->walked;
  }
  return Status::OK();
}

}  // namespace

Result<std::vector<WalkUnit>> PlanWalkUnits(const Dataset& ds, const std::vector<Split>& splits, int threads,
                                            std::vector<std::string>* planned,
                                            const std::function<bool(const std::string&, std::size_t)>& whole) {
  std::vector<ShardListInfo> roots;
  for (const Split split : splits) roots.push_back(*ds.info().FindSplit(split));
  SEDPACK_RETURN_NOT_OK(CheckCancelled());
  SEDPACK_ASSIGN_OR_RETURN(std::vector<dataset_internal::ShardsTreeUnit> plan,
                           dataset_internal::PlanShardsSubtrees(ds, roots, 4 * static_cast<std::size_t>(threads),
                                                                planned, whole));
  std::vector<WalkUnit> units(plan.size());
  for (std::size_t i = 0; i < plan.size(); ++i) {
    units[i].plan = std::move(plan[i]);
    units[i].shards.split = splits[units[i].plan.root];
    if (!units[i].plan.subtree) {
      SEDPACK_RETURN_NOT_OK(AppendListShards(units[i].plan.list, &units[i].shards));
      units[i].plan.list = ShardsList{};
    }
  }
  return units;
}

// `threads` threads walk the subtrees; every list path must appear once
// overall, as in the serial walk. Each unit is merged, in walk order, as soon
// as it and every unit before it are walked, by the thread that walked the
// last of them: the merge runs beside the walk instead of after it, and a
// unit's memory is freed while later units still allocate theirs. (Merged
// after the walk, a resumed build, which walks few units, paid as long a
// serial merge as a full build, and fresh pages for every unit.)
Status WalkUnits(const Dataset& ds, int threads, std::vector<WalkUnit>& units, std::size_t first,
                 std::unordered_set<std::string> seen, WalkKeeping* keep, const MergeWalkUnit& merge_unit) {
  auto merge = [&](WalkUnit& u) -> Status {
    for (const std::string& path : u.visited) {
      if (!seen.insert(path).second) return dataset_internal::RepeatedShardsList(path);
    }
    return merge_unit(u);
  };
  std::mutex merge_mu;
  std::vector<char> walked(units.size(), 0);  // a list's own shards are there from the start
  for (std::size_t i = 0; i < units.size(); ++i) walked[i] = i < first || !units[i].plan.subtree ? 1 : 0;
  std::size_t merged = first;
  Status merge_status;  // the first repeated list, or failed merge, in walk order
  // Merges what is ready; stops at a failed unit (the build fails).
  auto merge_ready = [&] {
    while (merge_status.ok() && merged < units.size() && walked[merged] && units[merged].status.ok()) {
      merge_status = merge(units[merged]);
      ++merged;
    }
  };
  std::atomic<std::size_t> next_unit{first};
  std::atomic<bool> stop{false};
  auto work = [&](int) {
    for (std::size_t i; !stop.load() && (i = next_unit.fetch_add(1)) < units.size();) {
      WalkUnit& u = units[i];
      if (!u.plan.subtree) continue;
      u.status = WalkSubtreeUnit(ds, u, keep);
      if (!u.status.ok()) stop.store(true);
      std::lock_guard<std::mutex> lock(merge_mu);
      walked[i] = 1;
      merge_ready();
      if (!merge_status.ok()) stop.store(true);  // a journal or partial index that cannot be written
    }
  };
  std::vector<std::thread> pool = internal::StartThreads(threads, work);
  if (pool.empty()) work(0);
  for (auto& t : pool) t.join();
  // The first failure in walk order, as the serial walk would report it;
  // then the first repeated list.
  for (std::size_t i = first; i < units.size(); ++i) SEDPACK_RETURN_NOT_OK(units[i].status);
  merge_ready();  // units of a list's own shards after the last subtree
  SEDPACK_RETURN_NOT_OK(merge_status);
  if (merged != units.size()) return Status::Internal("index build: ", units.size() - merged, " units not merged");
  return Status::OK();
}

namespace {

// The parallel walk into `contents`.
Status WalkParallel(const Dataset& ds, int threads, IndexContents* contents) {
  std::vector<Split> splits;
  for (const IndexedSplit& s : contents->splits) splits.push_back(s.split);
  std::vector<std::string> planned;
  SEDPACK_ASSIGN_OR_RETURN(std::vector<WalkUnit> units, PlanWalkUnits(ds, splits, threads, &planned));
  return WalkUnits(ds, threads, units, 0, std::unordered_set<std::string>(planned.begin(), planned.end()), nullptr,
                   [contents](WalkUnit& u) -> Status {
                     std::vector<std::string>().swap(u.visited);
                     // The paths' blocks are moved, not copied, and each unit's counts freed as
                     // soon as they are taken: the paths are most of the memory of a build.
                     IndexedSplit& s = contents->splits[u.plan.root];
                     SEDPACK_RETURN_NOT_OK(s.shard_paths.Append(std::move(u.shards.shard_paths)));
                     s.shard_examples.insert(s.shard_examples.end(), u.shards.shard_examples.begin(),
                                             u.shards.shard_examples.end());
                     std::vector<std::uint64_t>().swap(u.shards.shard_examples);
                     return Status::OK();
                   });
}

Result<IndexContents> BuildContents(const std::shared_ptr<const Dataset>& dataset, int threads) {
  if (!dataset) return Status::InvalidArgument("BuildIndexContents: null dataset");
  IndexContents contents;
  SEDPACK_ASSIGN_OR_RETURN(contents.dataset_info_sha256, DatasetInfoSha256(dataset->root()));
  for (Split split : AllSplits()) {
    if (!dataset->info().FindSplit(split)) continue;
    IndexedSplit s;
    s.split = split;
    // Room for the recorded number of shards up front (capped: the count is
    // untrusted), so that the vectors do not double, and copy, as they grow.
    const std::int64_t recorded = dataset->info().FindSplit(split)->number_of_shards;
    const auto room = static_cast<std::size_t>(std::clamp<std::int64_t>(recorded, 0, std::int64_t{1} << 24));
    s.shard_paths.reserve(room);
    s.shard_examples.reserve(room);
    contents.splits.push_back(std::move(s));
  }
  const int n = ResolveThreads(threads);
  if (n <= 1) {
    for (IndexedSplit& s : contents.splits) SEDPACK_RETURN_NOT_OK(WalkSplitSerial(dataset, &s));
  } else {
    SEDPACK_RETURN_NOT_OK(WalkParallel(*dataset, n, &contents));
  }
  SEDPACK_ASSIGN_OR_RETURN(DatasetInfoDigest after, DatasetInfoSha256(dataset->root()));
  if (after != contents.dataset_info_sha256) {
    return Status::IOError(dataset->root(), "/dataset_info.json changed while the index was built");
  }
  return contents;
}

Status WriteIndexSidecar(const Dataset& dataset, const IndexContents& contents) {
  SEDPACK_RETURN_NOT_OK(CheckCancelled());
  // Streamed: the file is about as large as the paths it lists, which are
  // already in memory once.
  return WriteSidecarStreamed(dataset.root(), kIndexFileName,
                              [&contents](const ByteSink& sink) { return EncodeIndexTo(contents, sink); });
}

}  // namespace

Result<IndexContents> BuildIndexContents(const std::shared_ptr<const Dataset>& dataset, int threads) {
  return BuildContents(dataset, threads);
}

Result<IndexContents> BuildIndexFile(const std::shared_ptr<const Dataset>& dataset, int threads) {
  SEDPACK_ASSIGN_OR_RETURN(IndexContents contents, BuildIndexContents(dataset, threads));
  SEDPACK_RETURN_NOT_OK(WriteIndexSidecar(*dataset, contents));
  return contents;
}

// ---- Loading -------------------------------------------------------------------

SampleIndex::~SampleIndex() {
  if (map_) ::munmap(map_, map_size_);
}

Result<std::shared_ptr<const SampleIndex>> SampleIndex::OpenFile(const std::string& path, FileSystem* fs) {
  const int fd = FileSystemOr(fs).Open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    if (err == ENOENT) return Status::NotFound("cannot open ", path, ": ", std::strerror(err));
    return Status::IOError("cannot open ", path, ": ", std::strerror(err));
  }
  const FileDescriptor owned(fd, fs);
  return MapFile(owned.get(), path, fs);
}

Result<std::shared_ptr<const SampleIndex>> SampleIndex::OpenInDataset(const std::string& root, FileSystem* fs) {
  const std::string rel = std::string(kSidecarDirName) + "/" + std::string(kIndexFileName);
  SEDPACK_ASSIGN_OR_RETURN(FileDescriptor fd, OpenBeneath(root, rel, O_RDONLY | O_NONBLOCK, fs));
  return MapFile(fd.get(), JoinRoot(root, rel), fs);
}

Result<std::shared_ptr<const SampleIndex>> SampleIndex::MapFile(int fd, const std::string& path, FileSystem* fs) {
  FileStat st;
  if (FileSystemOr(fs).Fstat(fd, &st) != 0 || st.type != FileType::kRegular) {
    return Status::IOError("not a readable regular file: ", path);
  }
  std::unique_ptr<SampleIndex> index(new SampleIndex());
  index->size_ = static_cast<std::size_t>(st.size);
  if (index->size_ > 0) {
    // Mapped by the kernel (FileSystem has no mmap): the index is read in
    // place, never copied, which a FileSystem without kernel descriptors
    // cannot offer.
    void* m = ::mmap(nullptr, index->size_, PROT_READ, MAP_PRIVATE, fd, 0);
    if (m == MAP_FAILED) {
      const int err = errno;
      return Status::IOError("cannot map ", path, ": ", std::strerror(err));
    }
    index->map_ = m;
    index->map_size_ = index->size_;
    index->data_ = static_cast<const std::byte*>(m);
  }
  auto validated = Validate(std::move(index));
  if (!validated.ok()) return validated.status().WithPrefix(path + ": ");
  return validated;
}

Result<std::shared_ptr<const SampleIndex>> SampleIndex::FromBytes(std::vector<std::byte> bytes) {
  std::unique_ptr<SampleIndex> index(new SampleIndex());
  index->owned_ = std::move(bytes);
  index->data_ = index->owned_.data();
  index->size_ = index->owned_.size();
  return Validate(std::move(index));
}

Result<std::shared_ptr<const SampleIndex>> SampleIndex::FromContents(const IndexContents& contents) {
  SEDPACK_ASSIGN_OR_RETURN(std::vector<std::byte> bytes, EncodeIndex(contents));
  return FromBytes(std::move(bytes));
}

Result<std::shared_ptr<const SampleIndex>> SampleIndex::Validate(std::unique_ptr<SampleIndex> index) {
  const std::byte* d = index->data_;
  const std::uint64_t size = index->size_;
  if (size < kHeaderSize) return Status::Corruption("index file too short (", size, " bytes)");
  if (std::memcmp(d, kMagic, 8) != 0) return Status::Corruption("not a sedpack-hpc index (bad magic)");
  const std::uint32_t version = Load32(d + 8);
  if (version != kIndexFormatVersion) {
    return Status::Corruption("index format version ", version, " (this build reads ",
                              kIndexFormatVersion, ")");
  }
  const std::uint32_t nsplits = Load32(d + 12);
  if (nsplits > 3) return Status::Corruption("index lists ", nsplits, " splits (at most 3)");
  if (Load64(d + 16) != size) {
    return Status::Corruption("index header says ", Load64(d + 16), " bytes, the file has ", size);
  }
  if (Load64(d + 56) != 0) return Status::Corruption("index header: reserved field is not zero");
  std::memcpy(index->digest_.data(), d + 24, 32);
  if (kHeaderSize + kSplitEntrySize * nsplits > size) {
    return Status::Corruption("index split table runs past the end of the file");
  }
  // A region [offset, offset + count*8) must lie inside the file and be 8-aligned.
  auto region = [&](std::uint64_t offset, std::uint64_t count, std::uint64_t unit) -> bool {
    std::uint64_t bytes, end;
    return offset >= kHeaderSize && offset % 8 == 0 && MulOk(count, unit, &bytes) &&
           AddOk(offset, bytes, &end) && end <= size;
  };
  int last = -1;
  for (std::uint32_t k = 0; k < nsplits; ++k) {
    const std::byte* e = d + kHeaderSize + kSplitEntrySize * k;
    const std::uint32_t id = Load32(e);
    if (id > 2) return Status::Corruption("index split entry ", k, ": unknown split id ", id);
    if (static_cast<int>(id) <= last) {
      return Status::Corruption("index split entries are not distinct and ascending");
    }
    last = static_cast<int>(id);
    const std::string name(SplitName(static_cast<Split>(id)));
    if (Load32(e + 4) != 0 || Load64(e + 56) != 0) {
      return Status::Corruption("index split ", name, ": reserved field is not zero");
    }
    Table t;
    t.shards = Load64(e + 8);
    t.examples = Load64(e + 16);
    const std::uint64_t rows_at = Load64(e + 24), offsets_at = Load64(e + 32);
    const std::uint64_t strings_at = Load64(e + 40), strings_size = Load64(e + 48);
    std::uint64_t entries;
    if (!AddOk(t.shards, 1, &entries) || !region(rows_at, entries, 8) ||
        !region(offsets_at, entries, 8)) {
      return Status::Corruption("index split ", name, ": shard tables (", t.shards,
                                " shards) run past the end of the file or are misaligned");
    }
    if (strings_at < kHeaderSize || strings_size > size || strings_at > size - strings_size) {
      return Status::Corruption("index split ", name, ": path strings run past the end of the file");
    }
    t.first_rows = d + rows_at;
    t.path_offsets = d + offsets_at;
    t.strings = d + strings_at;
    // Rows start at 0, never decrease, and end at the split's example count;
    // path offsets start at 0, strictly increase (no empty path) and end at the
    // string area's size; every path is a valid dataset-relative path.
    if (Load64(t.first_rows) != 0 || Load64(t.path_offsets) != 0) {
      return Status::Corruption("index split ", name, ": tables do not start at 0");
    }
    std::uint64_t prev_row = 0, prev_off = 0;
    for (std::uint64_t i = 1; i <= t.shards; ++i) {
      const std::uint64_t row = Load64(t.first_rows + 8 * i), off = Load64(t.path_offsets + 8 * i);
      if (row < prev_row) {
        return Status::Corruption("index split ", name, ": first rows decrease at shard ", i);
      }
      if (off <= prev_off || off > strings_size) {
        return Status::Corruption("index split ", name, ": bad path offset for shard ", i - 1);
      }
      const std::string_view path(reinterpret_cast<const char*>(t.strings + prev_off), off - prev_off);
      if (path.find('\0') != std::string_view::npos) {
        return Status::Corruption("index split ", name, ": shard ", i - 1, " path contains NUL");
      }
      const Status ps = ValidateRelativePath(path, "index shard path");
      // A bad path in an index file is corrupt data whatever the rule it
      // breaks; the detail still says whether it escapes the dataset.
      if (!ps.ok()) return Status::Corruption("index split ", name, ": ", ps.message()).WithDetail(ps.detail());
      prev_row = row;
      prev_off = off;
    }
    if (prev_row != t.examples) {
      return Status::Corruption("index split ", name, ": rows add up to ", prev_row, ", header says ",
                                t.examples);
    }
    if (prev_off != strings_size) {
      return Status::Corruption("index split ", name, ": path offsets end at ", prev_off,
                                ", string area has ", strings_size, " bytes");
    }
    index->tables_[id] = t;
  }
  return std::shared_ptr<const SampleIndex>(std::move(index));
}

const SampleIndex::Table* SampleIndex::table(Split split) const {
  const auto id = static_cast<std::size_t>(split);
  return id < 3 && tables_[id] ? &*tables_[id] : nullptr;
}

std::vector<Split> SampleIndex::splits() const {
  std::vector<Split> out;
  for (Split s : AllSplits()) {
    if (HasSplit(s)) out.push_back(s);
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::uint64_t SampleIndex::num_examples(Split split) const {
  const Table* t = table(split);
  return t ? t->examples : 0;
}
std::uint64_t SampleIndex::num_shards(Split split) const {
  const Table* t = table(split);
  return t ? t->shards : 0;
}
std::string_view SampleIndex::shard_path(Split split, std::uint64_t shard) const {
  const Table* t = table(split);
  const std::uint64_t a = Load64(t->path_offsets + 8 * shard), b = Load64(t->path_offsets + 8 * (shard + 1));
  return {reinterpret_cast<const char*>(t->strings + a), static_cast<std::size_t>(b - a)};
}
std::uint64_t SampleIndex::first_row(Split split, std::uint64_t shard) const {
  return Load64(table(split)->first_rows + 8 * shard);
}
std::uint64_t SampleIndex::shard_examples(Split split, std::uint64_t shard) const {
  const Table* t = table(split);
  return Load64(t->first_rows + 8 * (shard + 1)) - Load64(t->first_rows + 8 * shard);
}

Result<SampleIndex::Location> SampleIndex::Locate(Split split, std::uint64_t example) const {
  const Table* t = table(split);
  if (!t) return Status::NotFound("the index has no split ", SplitName(split));
  if (example >= t->examples) {
    return Status::InvalidArgument("example ", example, " is out of range: split ", SplitName(split),
                                   " has ", t->examples, " examples");
  }
  // Largest k with first_rows[k] <= example; empty shards share their first row
  // with the next one, so the last of equal rows is the shard that holds it.
  std::uint64_t lo = 0, hi = t->shards;  // first_rows[lo] <= example < first_rows[hi]
  while (hi - lo > 1) {
    const std::uint64_t mid = lo + (hi - lo) / 2;
    if (Load64(t->first_rows + 8 * mid) <= example) {
      lo = mid;
    } else {
      hi = mid;
    }
  }
  return Location{lo, example - Load64(t->first_rows + 8 * lo)};
}

Result<IndexContents> SampleIndex::ToContents() const {
  IndexContents c;
  c.dataset_info_sha256 = digest_;
  for (Split s : splits()) {
    IndexedSplit is;
    is.split = s;
    for (std::uint64_t i = 0; i < num_shards(s); ++i) {
      SEDPACK_RETURN_NOT_OK(is.shard_paths.Add(shard_path(s, i)));
      is.shard_examples.push_back(shard_examples(s, i));
    }
    c.splits.push_back(std::move(is));
  }
  return c;
}

// ---- Freshness -----------------------------------------------------------------

std::string_view IndexFreshnessName(IndexFreshness f) {
  switch (f) {
    case IndexFreshness::kMissing: return "missing";
    case IndexFreshness::kFresh: return "fresh";
    case IndexFreshness::kStale: return "stale";
    case IndexFreshness::kInvalid: return "invalid";
  }
  return "?";
}

Result<IndexCheck> CheckIndex(const std::string& root) {
  IndexCheck c;
  c.path = SidecarPath(root, kIndexFileName);
  SEDPACK_ASSIGN_OR_RETURN(DatasetInfoDigest now, DatasetInfoSha256(root));
  c.current_sha256 = DigestHex(now);
  if (!PathExists(c.path)) {
    c.freshness = IndexFreshness::kMissing;
    c.message = "no index (build it with `sedpack index build`)";
    return c;
  }
  auto index = SampleIndex::OpenInDataset(root);
  if (!index.ok()) {
    c.freshness = IndexFreshness::kInvalid;
    c.message = index.status().message();
    return c;
  }
  c.recorded_sha256 = DigestHex((*index)->dataset_info_sha256());
  if ((*index)->dataset_info_sha256() != now) {
    c.freshness = IndexFreshness::kStale;
    c.message = "built from dataset_info.json sha256 " + c.recorded_sha256 + ", which is now " +
                c.current_sha256;
    return c;
  }
  c.freshness = IndexFreshness::kFresh;
  return c;
}

Result<std::shared_ptr<const SampleIndex>> OpenIndex(const std::shared_ptr<const Dataset>& dataset,
                                                     const IndexOpenOptions& options) {
  if (!dataset) return Status::InvalidArgument("OpenIndex: null dataset");
  SEDPACK_ASSIGN_OR_RETURN(IndexCheck check, CheckIndex(dataset->root()));
  if (check.freshness == IndexFreshness::kFresh) {
    auto index = SampleIndex::OpenInDataset(dataset->root(), dataset->file_system());
    // Still the same digest: the file may have been replaced since the check.
    if (index.ok() && (*index)->dataset_info_sha256() == DatasetInfoSha256(dataset->root()).ValueOr({})) {
      return index;
    }
    check.freshness = IndexFreshness::kStale;
    check.message = "changed while it was opened";
  }
  if (check.freshness != IndexFreshness::kMissing && options.warn) {
    options.warn("index " + check.path + " is " + std::string(IndexFreshnessName(check.freshness)) +
                 " (" + check.message + "); " +
                 (options.rebuild ? "rebuilding it" : "ignoring it and reading the metadata"));
  }
  if (options.rebuild) {
    SEDPACK_ASSIGN_OR_RETURN(IndexContents contents, BuildIndexFile(dataset));
    return SampleIndex::FromContents(contents);
  }
  SEDPACK_ASSIGN_OR_RETURN(IndexContents contents, BuildIndexContents(dataset));
  return SampleIndex::FromContents(contents);
}

}  // namespace sedpack
