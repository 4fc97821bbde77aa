// SPDX-License-Identifier: Apache-2.0
// The index build that survives a stop (`sedpack index build`, journaled by
// default): the walk's units are merged in walk order into a partial index
// file, their path bytes where the finished index keeps them, and each merged
// unit is journaled as a PrefixUnit (index_internal.h). A rerun whose plan
// starts with the journaled units keeps the prefix of the file they cover
// (checked by size and hash), walks only the rest, and writes the tables and
// the header last; then the file is renamed into place.
#include <fcntl.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cerrno>
#include <cstring>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <unordered_set>
#include <vector>

#include "codecs/decode_points_internal.h"
#include "index/index_internal.h"
#include "index/subtree_walk.h"
#include "io/beneath.h"
#include "io/kill_point.h"
#include "journal/entries_internal.h"
#include "journal/stats_internal.h"
#include "parallel/worker_pool.h"
#include "sedpack/cancel.h"
#include "sedpack/io/file.h"
#include "sedpack/io/file_system.h"
#include "sidecar/sidecar_internal.h"

namespace sedpack {
namespace {

namespace journal = journal_internal;

std::string ErrnoText(int e) { return std::strerror(e); }

// Writes a file's bytes at increasing offsets, gathered into 1 MiB pieces.
class GatheredWriter {
 public:
  GatheredWriter(FileSystem& fs, int fd, std::string path) : fs_(fs), fd_(fd), path_(std::move(path)) {
    buffer_.reserve(kGather);
  }
  // Feed what is written from now on to `sum` (nullptr: none); only with
  // nothing gathered.
  void HashInto(codecs_internal::FastChecksummer* sum) { sum_ = sum; }
  // Where the next byte goes; only with nothing gathered.
  void Seek(std::uint64_t at) { at_ = at; }
  std::uint64_t at() const { return at_ + buffer_.size(); }
  Status Append(std::span<const std::byte> piece) {
    if (buffer_.size() + piece.size() > kGather) SEDPACK_RETURN_NOT_OK(Flush());
    if (piece.size() >= kGather) return WriteAt(piece);
    buffer_.insert(buffer_.end(), piece.begin(), piece.end());
    return Status::OK();
  }
  Status Flush() {
    const Status st = WriteAt(buffer_);
    buffer_.clear();
    return st;
  }

 private:
  static constexpr std::size_t kGather = std::size_t{1} << 20;
  Status WriteAt(std::span<const std::byte> bytes) {
    if (sum_ != nullptr && !bytes.empty()) {
      journal::JournalComputeTimer timer;  // the hash is the journal's share; the bytes are the index's
      sum_->Update(bytes);
    }
    while (!bytes.empty()) {
      const long n = fs_.Pwrite(fd_, bytes.data(), bytes.size(), static_cast<std::int64_t>(at_));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return Status::IOError(path_, ": cannot write the partial index: ", ErrnoText(n < 0 ? errno : ENOSPC));
      at_ += static_cast<std::uint64_t>(n);
      bytes = bytes.subspan(static_cast<std::size_t>(n));
    }
    return Status::OK();
  }
  FileSystem& fs_;
  int fd_;
  std::string path_;
  std::uint64_t at_ = 0;
  std::vector<std::byte> buffer_;
  codecs_internal::FastChecksummer* sum_ = nullptr;
};

// Where each split's path bytes go as units are added in walk order, and
// what its tables will hold (a path length and an example count a shard).
class PrefixLayout {
 public:
  explicit PrefixLayout(const std::vector<Split>& splits) : splits_(splits.size()) {
    for (std::size_t k = 0; k < splits.size(); ++k) splits_[k].split = splits[k];
    cursor_ = IndexHeaderBytes(splits.size());
    if (!splits_.empty()) splits_[0].strings_at = cursor_;
  }
  // The offset of split `r`'s next path bytes (the splits before it are
  // finished: their tables' room follows their path bytes).
  std::uint64_t At(std::size_t r) {
    while (current_ < r) {
      cursor_ = Place(current_).end;
      splits_[++current_].strings_at = cursor_;
    }
    return cursor_;
  }
  void Add(std::size_t r, const ValueRuns& lengths, const ValueRuns& examples, std::uint64_t bytes) {
    (void)At(r);
    Split& s = splits_[r];
    s.lengths.Append(lengths);
    s.examples.Append(examples);
    s.strings_size += bytes;
    cursor_ += bytes;
  }
  std::uint64_t cursor() const { return cursor_; }
  // Every split finished: their header entries and the file's size.
  Result<std::vector<IndexSplitHead>> Finish(std::uint64_t* size) {
    if (!splits_.empty()) (void)At(splits_.size() - 1);
    std::vector<IndexSplitHead> heads;
    for (std::size_t k = 0; k < splits_.size(); ++k) {
      IndexSplitHead h;
      h.split = splits_[k].split;
      h.shards = splits_[k].lengths.size;
      for (const auto& [e, n] : splits_[k].examples.runs) {
        std::uint64_t all = 0;
        if (__builtin_mul_overflow(e, n, &all) || __builtin_add_overflow(h.examples, all, &h.examples)) {
          return Status::InvalidArgument("index split ", SplitName(h.split), ": example count overflows");
        }
      }
      h.place = Place(k);
      heads.push_back(h);
    }
    *size = heads.empty() ? cursor_ : heads.back().place.end;
    return heads;
  }
  const ValueRuns& lengths(std::size_t k) const { return splits_[k].lengths; }
  const ValueRuns& examples(std::size_t k) const { return splits_[k].examples; }

 private:
  struct Split {
    sedpack::Split split = sedpack::Split::kTrain;
    std::uint64_t strings_at = 0, strings_size = 0;
    ValueRuns lengths;
    ValueRuns examples;
  };
  IndexSplitPlace Place(std::size_t k) const {
    return PlaceIndexSplit(splits_[k].strings_at, splits_[k].strings_size, splits_[k].lengths.size);
  }
  std::vector<Split> splits_;
  std::size_t current_ = 0;
  std::uint64_t cursor_ = 0;
};

// The XXH3-64 of `bytes` bytes of the file at `offset`, read through
// `buffer` (kept from one call to the next: no fresh pages a unit).
Result<std::uint64_t> HashRange(FileSystem& fs, int fd, std::uint64_t offset, std::uint64_t bytes,
                                std::vector<std::byte>* buffer) {
  buffer->resize(std::size_t{1} << 20);
  codecs_internal::FastChecksummer sum;
  while (bytes > 0) {
    const std::size_t want = static_cast<std::size_t>(std::min<std::uint64_t>(bytes, buffer->size()));
    const long n = fs.Pread(fd, buffer->data(), want, static_cast<std::int64_t>(offset));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return Status::IOError("partial index: cannot read ", want, " bytes at ", offset);
    sum.Update(std::span<const std::byte>(buffer->data(), static_cast<std::size_t>(n)));
    offset += static_cast<std::uint64_t>(n);
    bytes -= static_cast<std::uint64_t>(n);
  }
  return sum.Digest();
}

// A unit's path lengths and example counts, as runs.
void UnitRuns(const IndexedSplit& s, ValueRuns* lengths, ValueRuns* examples) {
  const std::size_t n = s.shard_paths.size();
  for (std::size_t i = 0; i < n;) {
    const std::size_t length = s.shard_paths[i].size();
    std::size_t j = i + 1;
    while (j < n && s.shard_paths[j].size() == length) ++j;
    lengths->Add(length, j - i);
    i = j;
  }
  const std::vector<std::uint64_t>& e = s.shard_examples;
  for (std::size_t i = 0; i < e.size();) {
    std::size_t j = i + 1;
    // Eight at a time without a branch each (the loop vectorizes): a unit's
    // counts are mostly one long run.
    while (j + 8 <= e.size()) {
      std::uint64_t differ = 0;
      for (std::size_t k = 0; k < 8; ++k) differ |= e[j + k] ^ e[i];
      if (differ != 0) break;
      j += 8;
    }
    while (j < e.size() && e[j] == e[i]) ++j;
    examples->Add(e[i], j - i);
    i = j;
  }
}

// The n + 1 running sums of the values `runs` holds (a table of the index),
// handed to `sink` a chunk at a time.
template <typename Sink>
Status PutRunSums(const ValueRuns& runs, const Sink& sink) {
  constexpr std::size_t kChunkWords = 16 * 1024;
  std::vector<std::byte> chunk(8 * kChunkWords);
  std::size_t at = 0;
  std::uint64_t sum = 0;
  auto put = [&](std::uint64_t v) -> Status {
    if (at == kChunkWords) {
      SEDPACK_RETURN_NOT_OK(sink(std::span<const std::byte>(chunk)));
      at = 0;
    }
    if constexpr (std::endian::native == std::endian::big) v = __builtin_bswap64(v);
    std::memcpy(chunk.data() + 8 * at++, &v, 8);
    return Status::OK();
  };
  SEDPACK_RETURN_NOT_OK(put(0));
  for (const auto& [v, n] : runs.runs) {
    for (std::uint64_t i = 0; i < n; ++i) {
      sum += v;
      SEDPACK_RETURN_NOT_OK(put(sum));
    }
  }
  return sink(std::span<const std::byte>(chunk.data(), 8 * at));
}

bool ListsUnchanged(const Dataset& ds, const PrefixUnit& u) {
  WalkedSubtree w;
  w.visited = u.visited;
  w.stamps = u.stamps;
  return WalkedListsUnchanged(ds, w);
}

// A planned unit of a list's own shards against a journaled one: the
// planner read the list again, so its shards must be the journaled ones.
bool SameOwnShards(const WalkUnit& u, const PrefixUnit& p) {
  const IndexedSplit& s = u.shards;
  ValueRuns lengths, examples;
  UnitRuns(s, &lengths, &examples);
  if (lengths != p.lengths || examples != p.examples) return false;
  codecs_internal::FastChecksummer sum;
  s.shard_paths.ForEachRun([&](std::string_view run) { sum.Update(std::as_bytes(std::span<const char>(run.data(), run.size()))); });
  return sum.Digest() == p.hash;
}

struct KeptPrefix {
  std::size_t units = 0;        // the plan's first units kept
  std::size_t subtrees = 0;     // of them, subtrees
  std::vector<bool> used;       // per journaled unit
  std::vector<std::size_t> of;  // per kept unit, the journaled unit it keeps
};

// Whether journaled unit `p`'s lists are as it walked them (a subtree) and its
// bytes in the file are the ones journaled.
bool KeptUnitHolds(const Dataset& ds, const PrefixUnit& p, FileSystem& fs, int fd, std::vector<std::byte>* buffer) {
  if (p.subtree && !ListsUnchanged(ds, p)) return false;
  auto hash = HashRange(fs, fd, p.offset, p.bytes, buffer);
  return hash.ok() && *hash == p.hash;
}

// How many of the plan's first units the journaled units and the partial
// file give: each must be the same unit (list, depth, kind, split) at the
// offset the layout reaches, a list's own unit with the shards the planner
// read again, and, with `check`, its lists unchanged (a subtree) and its
// bytes in the file as journaled. Several runs' records may name one offset
// (each rerun journals into a file of its own): the first that checks is
// taken. Without `check` the first of the same unit is taken, for
// CheckKeptPrefix to confirm while the rest is walked.
Result<KeptPrefix> KeepPrefix(const Dataset& ds, std::vector<WalkUnit>& units, const std::vector<Split>& splits,
                              const std::vector<PrefixUnit>& journaled, FileSystem& fs, int fd,
                              std::uint64_t file_size, bool check, PrefixLayout* layout) {
  KeptPrefix kept;
  kept.used.assign(journaled.size(), false);
  if (journaled.empty() || fd < 0) return kept;
  std::multimap<std::uint64_t, std::size_t> at;
  for (std::size_t j = 0; j < journaled.size(); ++j) at.emplace(journaled[j].offset, j);
  std::vector<std::byte> buffer;
  for (WalkUnit& u : units) {
    const std::size_t r = u.plan.root;
    const std::uint64_t offset = layout->At(r);
    const std::string& list = u.plan.entry.shard_list_info_file.file_path;
    std::optional<std::size_t> match;
    for (auto [it, end] = at.equal_range(offset); it != end && !match; ++it) {
      const PrefixUnit& p = journaled[it->second];
      if (p.list != list || p.depth != u.plan.depth || p.subtree != u.plan.subtree || p.split != splits[r] ||
          p.bytes > file_size - std::min(file_size, p.offset)) {
        continue;
      }
      if (!p.subtree && !SameOwnShards(u, p)) continue;
      if (check && !KeptUnitHolds(ds, p, fs, fd, &buffer)) continue;
      match = it->second;
    }
    if (!match) break;
    const PrefixUnit& p = journaled[*match];
    kept.used[*match] = true;
    kept.of.push_back(*match);
    u.visited = p.visited;
    u.stamps = p.stamps;
    layout->Add(r, p.lengths, p.examples, p.bytes);
    ++kept.units;
    if (u.plan.subtree) ++kept.subtrees;
  }
  return kept;
}

// The check KeepPrefix left out, on a thread of its own while the rest of the
// tree is walked (on a rerun it reads back the whole kept prefix, a twentieth
// of a build's time, which the walk's threads would otherwise wait for). The
// walk writes only past the prefix. `holds` turns false at the first kept
// unit that fails; `stop` ends the check early (the walk failed).
class CheckKeptPrefix {
 public:
  CheckKeptPrefix(const Dataset& ds, const std::vector<PrefixUnit>& journaled, const KeptPrefix& kept,
                  FileSystem& fs, int fd) {
    if (kept.units == 0) return;
    thread_ = std::thread([this, &ds, &journaled, &kept, &fs, fd] {
      std::vector<std::byte> buffer;
      for (std::size_t j : kept.of) {
        if (stop_.load(std::memory_order_relaxed)) return;
        if (!KeptUnitHolds(ds, journaled[j], fs, fd, &buffer)) {
          holds_ = false;
          return;
        }
      }
    });
  }
  ~CheckKeptPrefix() { Stop(); }
  // Waits for the check; whether every kept unit held (false when stopped).
  bool Holds() {
    if (thread_.joinable()) thread_.join();
    return holds_ && !stop_.load();
  }
  void Stop() {
    stop_.store(true);
    if (thread_.joinable()) thread_.join();
  }

 private:
  std::atomic<bool> stop_{false};
  bool holds_ = true;
  std::thread thread_;
};

// The journaled build's merge: a unit's path bytes into the partial file at
// the layout's place, its record into the journal once they are durable.
class PrefixWriter {
 public:
  PrefixWriter(FileSystem& fs, int fd, const std::string& path, const std::vector<Split>& splits,
               PrefixLayout* layout, journal::JournalWriter* journal)
      : fs_(fs), fd_(fd), splits_(splits), layout_(layout), journal_(journal), out_(fs, fd, path) {}

  Status Merge(WalkUnit& u) {
    const std::size_t r = u.plan.root;
    PrefixUnit rec;
    rec.list = u.plan.entry.shard_list_info_file.file_path;
    rec.depth = u.plan.depth;
    rec.subtree = u.plan.subtree;
    rec.split = splits_[r];
    if (u.plan.subtree) {
      rec.visited = std::move(u.visited);
      rec.stamps = std::move(u.stamps);
    }
    rec.offset = layout_->At(r);
    out_.Seek(rec.offset);
    const ShardPathList& paths = u.shards.shard_paths;
    // The unit's hash is fed with each gathered piece as it is written,
    // while it is in cache (hashed from the unit's own blocks afterwards it
    // ran at a third of the speed).
    codecs_internal::FastChecksummer sum;
    out_.HashInto(&sum);
    Status st;
    paths.ForEachRun([&](std::string_view run) {
      if (st.ok()) st = out_.Append(std::as_bytes(std::span<const char>(run.data(), run.size())));
    });
    if (st.ok()) st = out_.Flush();
    out_.HashInto(nullptr);
    {
      journal::JournalTimer timer;
      rec.hash = sum.Digest();
    }
    SEDPACK_RETURN_NOT_OK(st);
    rec.bytes = paths.total_bytes();
    UnitRuns(u.shards, &rec.lengths, &rec.examples);
    u.shards = IndexedSplit{};
    // Appended here, in walk order, a few bytes a unit. The bytes are not
    // synced first: a record whose bytes a lost node did not keep fails its
    // hash on the rerun, which walks that unit again.
    SEDPACK_RETURN_NOT_OK(journal_->Append(EncodePrefixUnit(rec)));
    layout_->Add(r, rec.lengths, rec.examples, rec.bytes);
    return Status::OK();
  }

  // The tables of every split and the header; the file is then complete.
  Status Finish(const DatasetInfoDigest& digest, std::vector<IndexSplitHead>* heads) {
    std::uint64_t size = 0;
    SEDPACK_ASSIGN_OR_RETURN(*heads, layout_->Finish(&size));
    static constexpr std::byte kZeros[8] = {};
    for (std::size_t k = 0; k < heads->size(); ++k) {
      const IndexSplitPlace& p = (*heads)[k].place;
      out_.Seek(p.strings + p.strings_size);
      SEDPACK_RETURN_NOT_OK(out_.Append(std::span<const std::byte>(kZeros, p.rows - (p.strings + p.strings_size))));
      const auto& lengths = layout_->lengths(k);
      const auto& examples = layout_->examples(k);
      auto sink = [this](std::span<const std::byte> piece) { return out_.Append(piece); };
      SEDPACK_RETURN_NOT_OK(PutRunSums(examples, sink));
      SEDPACK_RETURN_NOT_OK(PutRunSums(lengths, sink));
      SEDPACK_RETURN_NOT_OK(out_.Flush());
    }
    out_.Seek(0);
    SEDPACK_RETURN_NOT_OK(out_.Append(EncodeIndexHeader(digest, *heads, size)));
    SEDPACK_RETURN_NOT_OK(out_.Flush());
    if (fs_.Ftruncate(fd_, static_cast<std::int64_t>(size)) != 0) {
      return Status::IOError("partial index: cannot set its size: ", ErrnoText(errno));
    }
    if (fs_.Fsync(fd_) != 0) return Status::IOError("partial index: cannot fsync: ", ErrnoText(errno));
    return Status::OK();
  }

 private:
  FileSystem& fs_;
  int fd_;
  const std::vector<Split>& splits_;
  PrefixLayout* layout_;
  journal::JournalWriter* journal_;
  GatheredWriter out_;
};

// One attempt at the journaled build. With `check_first` false the kept
// prefix is checked while the rest is walked; if it fails the check, the
// attempt ends with `*redo` set and `*walked` the subtrees it walked (its
// journal and file stay: the next attempt keeps what of them holds).
Result<IndexBuildJob> BuildJournaledOnce(const std::shared_ptr<const Dataset>& dataset, int threads,
                                         const IndexJobOptions& options, bool check_first, bool* redo,
                                         std::uint64_t* walked) {
  *redo = false;
  if (!dataset) return Status::InvalidArgument("BuildIndexFileJournaled: null dataset");
  const Dataset& ds = *dataset;
  const std::string& root = ds.root();
  FileSystem* fs = ds.file_system();
  FileSystem& files = FileSystemOr(fs);
  SEDPACK_ASSIGN_OR_RETURN(DatasetInfoDigest sha, DatasetInfoSha256(root));
  const IndexJobIdentity identity = IndexJobFor(root, DigestHex(sha));
  const std::string& id = identity.id;
  if (options.restart) SEDPACK_RETURN_NOT_OK(journal::RemoveJobJournals(root, id, fs));
  SEDPACK_ASSIGN_OR_RETURN(auto recorded, journal::ReadJobEntriesInPlace(root, id, identity.parameters, "index build", fs));

  // The partial index: never through a link out of the dataset, never a
  // link itself; kept as it is until the plan says how much of it is kept.
  const std::string partial_rel = PartialIndexPath(id);
  const std::string partial = JoinRoot(root, partial_rel);
  SEDPACK_RETURN_NOT_OK(CheckStaysBeneath(root, partial_rel, fs));
  SEDPACK_RETURN_NOT_OK(CreateDirectories(JoinRoot(root, journal::kJournalDir), fs));
  const int fd = files.Open(partial.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0) return Status::IOError(partial, ": cannot open the partial index: ", ErrnoText(errno));
  FileDescriptor closer(fd, &files);
  FileStat st;
  if (files.Fstat(fd, &st) != 0 || st.type != FileType::kRegular) {
    return Status::IOError(partial, ": the partial index is not a regular file");
  }

  WalkKeeping keep;
  keep.stamp = true;
  keep.known = DecodeSubtrees(std::vector<journal::EntryView>(recorded.entries));  // a distributed run's
  const std::vector<PrefixUnit> journaled = DecodePrefixUnits(recorded.entries, st.size);
  std::unordered_set<std::string> whole;
  for (const PrefixUnit& p : journaled) {
    if (p.subtree) whole.insert(SubtreeKey(p.list, p.depth));
  }

  std::vector<Split> splits;
  for (Split split : AllSplits()) {
    if (ds.info().FindSplit(split)) splits.push_back(split);
  }
  const int n = std::max(1, ResolveThreads(threads));
  std::vector<std::string> planned;
  SEDPACK_ASSIGN_OR_RETURN(std::vector<WalkUnit> units,
                           PlanWalkUnits(ds, splits, n, &planned, [&](const std::string& path, std::size_t depth) {
                             const std::string key = SubtreeKey(path, depth);
                             return keep.known.count(key) > 0 || whole.count(key) > 0;
                           }));
  PrefixLayout layout(splits);
  SEDPACK_ASSIGN_OR_RETURN(KeptPrefix kept,
                           KeepPrefix(ds, units, splits, journaled, files, fd, st.size, check_first, &layout));
  // Journaled subtrees the plan does not start with (another number of
  // threads or ranks cut the tree otherwise, or a unit before them changed)
  // are read back before the file is cut, for the walk to keep where it meets them.
  std::vector<PrefixUnit> elsewhere;
  for (std::size_t j = 0; j < journaled.size(); ++j) {
    if (!kept.used[j] && journaled[j].subtree) elsewhere.push_back(journaled[j]);
  }
  AddPrefixSubtrees(root, id, elsewhere, fs, &keep.known);
  if (files.Ftruncate(fd, static_cast<std::int64_t>(kept.units > 0 ? layout.cursor() : 0)) != 0) {
    return Status::IOError(partial, ": cannot cut the partial index: ", ErrnoText(errno));
  }
  std::unordered_set<std::string> seen(planned.begin(), planned.end());
  for (std::size_t i = 0; i < kept.units; ++i) {
    for (std::string& list : units[i].visited) {
      if (!seen.insert(list).second) return dataset_internal::RepeatedShardsList(list);
    }
    units[i] = WalkUnit{};
  }

  SEDPACK_ASSIGN_OR_RETURN(const int number, FreshJournalNumber(root, id, fs));
  SEDPACK_ASSIGN_OR_RETURN(auto writer, journal::StartEntryJournal(root, id, number, identity.parameters, {}, fs));
  PrefixWriter prefix(files, fd, partial, splits, &layout, writer.get());
  {
    CheckKeptPrefix checking(ds, journaled, kept, files, fd);
    const Status walk = WalkUnits(ds, n, units, kept.units, std::move(seen), &keep,
                                  [&prefix](WalkUnit& u) { return prefix.Merge(u); });
    if (!walk.ok()) return walk;  // `checking` stops
    if (!checking.Holds()) {
      *redo = true;
      *walked = keep.walked.load();
      return Status::IOError(partial, ": a kept unit failed its check");
    }
  }
  SEDPACK_RETURN_NOT_OK(CheckCancelled());

  IndexBuildJob out;
  out.dataset_info_sha256 = sha;
  SEDPACK_RETURN_NOT_OK(prefix.Finish(sha, &out.splits));
  SEDPACK_ASSIGN_OR_RETURN(DatasetInfoDigest after, DatasetInfoSha256(root));
  if (after != sha) return Status::IOError(root, "/dataset_info.json changed while the index was built");
  if (files.Close(closer.Release()) != 0) return Status::IOError(partial, ": cannot close: ", ErrnoText(errno));
  KillPoint("write-temp", partial);
  const std::string index_rel = std::string(kSidecarDirName) + "/" + std::string(kIndexFileName);
  SEDPACK_RETURN_NOT_OK(CheckStaysBeneath(root, index_rel, fs));
  const std::string index = JoinRoot(root, index_rel);
  if (files.Rename(partial.c_str(), index.c_str()) != 0) {
    return Status::IOError(index, ": cannot rename the index into place: ", ErrnoText(errno));
  }
  {
    FileDescriptor dir(files.Open(SidecarDir(root).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC), &files);
    if (dir.get() >= 0) files.Fsync(dir.get());  // best effort: the index is in place
  }
  KillPoint("rename", index);
  // The index is written: the journals' work is in it (this run's and the stopped runs').
  SEDPACK_RETURN_NOT_OK(writer->Remove());
  SEDPACK_RETURN_NOT_OK(journal::RemoveJobJournals(root, id, fs));
  (void)files.Rmdir(JoinRoot(root, journal::kJournalDir).c_str());  // an empty one says nothing
  out.units_kept = kept.subtrees + keep.kept.load();
  out.units = out.units_kept + keep.walked.load();
  if (out.units_kept > 0) out.resumed_job = id;
  return out;
}

}  // namespace

Result<IndexBuildJob> BuildIndexFileJournaled(const std::shared_ptr<const Dataset>& dataset, int threads,
                                              const IndexJobOptions& options) {
  bool redo = false;
  std::uint64_t walked = 0;
  auto built = BuildJournaledOnce(dataset, threads, options, /*check_first=*/false, &redo, &walked);
  if (!redo) return built;
  // A kept unit's list changed or its bytes did not hash as journaled: the
  // prefix is decided again, each unit checked before it is kept. What the
  // first attempt walked is kept from its journal, and not counted as kept
  // from the stopped runs.
  IndexJobOptions again = options;
  again.restart = false;
  built = BuildJournaledOnce(dataset, threads, again, /*check_first=*/true, &redo, &walked);
  if (built.ok()) {
    built->units_kept -= std::min<std::uint64_t>(built->units_kept, walked);
    if (built->units_kept == 0) built->resumed_job.clear();
  }
  return built;
}

}  // namespace sedpack
