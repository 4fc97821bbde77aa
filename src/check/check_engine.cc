// SPDX-License-Identifier: Apache-2.0
// The check engine behind CheckDataset and VerifyDataset (check_internal.h,
// RunCheck). Memory does not grow with the number of shards: a worker holds one
// root-to-leaf path of lists; what every rank keeps for the orphan search is
// one 64-bit key per listed shard file.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <unordered_set>

#include "check/check_engine_internal.h"
#include "check/check_internal.h"
#include "check/check_wire_internal.h"
#include "dataset/shards_tree_internal.h"
#include "comm/progress_internal.h"
#include "dataset/verified_read.h"
#include "metadata/shards_list_parse.h"
#include "parallel/worker_pool.h"
#include "sedpack/codecs/hash.h"
#include "sedpack/metadata/paths.h"
#include "sidecar/checks_internal.h"
#include "sidecar/checks_spool_internal.h"
#include "sidecar/sidecar_internal.h"

namespace sedpack {
namespace {

using namespace check_internal;
using Clock = std::chrono::steady_clock;
using check_engine_internal::DecodeFindings;
using check_engine_internal::DecodeUnits;
using check_engine_internal::EncodeFindings;
using check_engine_internal::EncodeUnits;
using check_engine_internal::Findings;
using check_engine_internal::Unit;

// A deep check of a dataset without a fresh checks sidecar records one from
// the shards it read whose every recorded hash matched (thread-safe). The
// records go to a spool file under the dataset's .sedpack-hpc/ as they come,
// not to memory: a check of millions of shards holds a run of 1 MiB. A spool
// that fails (a read-only dataset) only means no sidecar.
struct ChecksCollector {
  std::mutex mu;
  std::unique_ptr<sidecar_internal::ChecksSpool> spool;
  Status status;
  void Start(const Dataset& ds) {
    spool = std::make_unique<sidecar_internal::ChecksSpool>(ds.root(), ds.file_system());
  }
  void Add(const sidecar_internal::ShardChecks& c) {
    std::lock_guard<std::mutex> lock(mu);
    if (spool && status.ok()) status = spool->Add(c);
  }
  // The runs to merge, or an error if not every record was kept.
  Result<std::vector<sidecar_internal::ChecksRun>> Runs() {
    std::lock_guard<std::mutex> lock(mu);
    if (!spool) return Status::InvalidArgument("no checks recorded");
    if (status.ok()) status = spool->Flush();
    if (!status.ok()) return status;
    return spool->runs();
  }
};

// FNV-1a, 64-bit: the key a listed shard path is known by in the orphan search.
// Two paths sharing a key (about one chance in 10^7 for ten million shards)
// can only hide an orphan warning, never an error.
std::uint64_t PathKey(std::string_view path) {
  std::uint64_t h = 14695981039346656037ULL;
  for (char c : path) {
    h ^= static_cast<unsigned char>(c);
    h *= 1099511628211ULL;
  }
  return h;
}

// The per-file and per-list checks, shared by every worker thread of a rank.
class TreeChecker {
 public:
  TreeChecker(const Dataset& ds, const CheckOptions& options, std::atomic<std::uint64_t>* bytes_done,
              std::atomic<std::uint64_t>* files_done)
      : ds_(ds), options_(options), algos_(ds.info().dataset_structure.hash_checksum_algorithms),
        bytes_done_(bytes_done), files_done_(files_done) {}

  void CollectChecks(ChecksCollector* collector) { collector_ = collector; }

  // Hash, parse and check the list `entry` names (its recorded hashes and
  // counts, relative_path_self, its own sums). The list, when its entries can
  // be followed.
  std::optional<ShardsList> CheckList(const ShardListInfo& entry, std::uint64_t depth, Findings* out) const {
    CheckReport* report = &out->report;
    const std::string& rel = entry.shard_list_info_file.file_path;
    Status valid = ValidateRelativePath(rel, "shard_list_info_file.file_path");
    if (!valid.ok()) {
      AddTreeRefusal(report, rel, dataset_internal::ShardsTreeRefusal::kBadPath, valid);
      return std::nullopt;
    }
    Status shallow = dataset_internal::CheckShardsListDepth(rel, static_cast<std::size_t>(depth));
    if (!shallow.ok()) {
      AddTreeRefusal(report, rel, dataset_internal::ShardsTreeRefusal::kTooDeep, shallow);
      return std::nullopt;
    }
    return ReadList(entry, out);
  }

  // CheckList for a list whose path and depth are checked already.
  std::optional<ShardsList> ReadList(const ShardListInfo& entry, Findings* out) const {
    CheckReport* report = &out->report;
    const std::string& rel = entry.shard_list_info_file.file_path;
    out->lists.push_back(rel);
    // One read: the bytes hashed are the bytes parsed.
    auto text = ds_.ReadText(rel, dataset_internal::kMaxMetadataBytes);
    if (!text.ok()) {
      const CheckProblem::Kind kind = text.status().code() == StatusCode::kResourceExhausted
                                          ? CheckProblem::Kind::kMalformed
                                          : ProblemKindOf(text.status());
      AddProblem(report, kind, rel, text.status().message());
      return std::nullopt;
    }
    const std::uint64_t bytes = text->size();
    auto found = HashBytes(algos_, std::span<const std::byte>(reinterpret_cast<const std::byte*>(text->data()),
                                                               text->size()));
    if (!found.ok()) {
      AddProblem(report, CheckProblem::Kind::kIOError, rel, found.status().message());
      return std::nullopt;
    }
    Counted(bytes, report);
    CompareHashes(algos_, rel, entry.shard_list_info_file.hash_checksums, *found, report);
    auto list = metadata_internal::ParseShardsListOwned(std::move(*text), rel);
    if (!list.ok()) {
      const bool escape = list.status().detail() == StatusDetail::kPathEscape || IsOutsideRoot(list.status());
      AddProblem(report, escape ? CheckProblem::Kind::kPathEscape : CheckProblem::Kind::kMalformed, rel,
                 list.status().message());
      return std::nullopt;
    }
    WarnIfLarge(rel, bytes, *list, options_, report);
    if (list->relative_path_self != rel) {
      AddProblem(report, CheckProblem::Kind::kMalformed, rel,
                 "relative_path_self is \"" + list->relative_path_self + "\" but the file is at \"" + rel + "\"");
    }
    CheckListCounts(entry, *list, rel, report);
    return std::move(list).value();
  }

  // shard_files[index] of the list at list_path: every file it names.
  void CheckShardEntry(const ShardInfo& shard, std::size_t index, const std::string& list_path,
                       Findings* out) const {
    if (shard.file_infos.empty()) {
      AddProblem(&out->report, CheckProblem::Kind::kMalformed, list_path,
                 "shard_files[" + std::to_string(index) + "] has no file_infos");
      return;
    }
    for (const FileInfo& f : shard.file_infos) {
      out->files.push_back(PathKey(f.file_path));
      CheckShardFile(f, shard.number_of_examples, list_path, &out->report);
    }
  }

  // A whole subtree, depth first, by the one tree walk: a list repeated
  // within it (a cycle, or a child named twice) is reported, not followed.
  void CheckSubtree(const ShardListInfo& entry, std::uint64_t depth, Findings* out) const {
    SubtreeChecker checker(*this, out);
    dataset_internal::ShardsTreeWalk walk(ds_, {}, &checker);
    walk.Add(entry, static_cast<std::size_t>(depth));
    // Every failure is a problem in `out`; an error here only means Stopped().
    (void)dataset_internal::VisitShardsTree(walk, checker);
  }

  // Shards [begin, end) of a list rank 0 has checked. The list is parsed again
  // here (cached, so the workers of a rank share one copy): only one giant
  // list written by another tool is ever cut into ranges.
  void CheckRange(const Unit& u, Findings* out) {
    auto list = CachedList(u.list_path);
    if (!list.ok()) {
      AddProblem(&out->report, CheckProblem::Kind::kIOError, u.list_path,
                 "cannot read it again: " + list.status().message());
      return;
    }
    const auto& shards = (*list)->shard_files;
    for (std::uint64_t i = u.begin; i < u.end && i < shards.size(); ++i) {
      if (Stopped()) return;
      CheckShardEntry(shards[i], static_cast<std::size_t>(i), u.list_path, out);
    }
  }

  // One unit, whole.
  void CheckUnit(const Unit& u, Findings* out) {
    if (u.subtree) {
      CheckSubtree(u.entry, u.depth, out);
    } else {
      CheckRange(u, out);
    }
    out->units++;
  }

  void Stop() { stop_.store(true); }
  bool Stopped() const { return stop_.load(std::memory_order_relaxed); }

 private:
  class SubtreeChecker : public dataset_internal::ShardsTreeVisitor {
   public:
    SubtreeChecker(const TreeChecker& c, Findings* out) : c_(c), out_(out) {}

    Status Refused(const dataset_internal::ShardsTreeNode& node, dataset_internal::ShardsTreeRefusal why,
                   const Status& error) override {
      AddTreeRefusal(&out_->report, node.path(), why, error);
      return Status::OK();
    }
    Result<bool> Load(const Dataset&, const dataset_internal::ShardsTreeLimits&,
                      dataset_internal::ShardsTreeNode& node) override {
      if (c_.Stopped()) return Stopping();
      std::optional<ShardsList> list = c_.ReadList(node.entry, out_);
      if (!list) return false;
      node.list = std::move(*list);
      return true;
    }
    Status Enter(dataset_internal::ShardsTreeNode& node) override {
      for (std::size_t i = 0; i < node.list.shard_files.size(); ++i) {
        if (c_.Stopped()) return Stopping();
        c_.CheckShardEntry(node.list.shard_files[i], i, node.path(), out_);
      }
      node.list = ShardsList{};  // only the children's entries stay on the path (in the walk)
      return Status::OK();
    }

   private:
    static Status Stopping() { return Status::Cancelled("check stopped"); }
    const TreeChecker& c_;
    Findings* out_;
  };

  void Counted(std::uint64_t bytes, CheckReport* report) const {
    report->files_checked++;
    report->bytes_checked += bytes;
    bytes_done_->fetch_add(bytes, std::memory_order_relaxed);
    files_done_->fetch_add(1, std::memory_order_relaxed);
  }

  void CheckShardFile(const FileInfo& file, std::int64_t recorded_examples, const std::string& list_path,
                      CheckReport* report) const {
    const std::string& rel = file.file_path;
    report->shards_checked++;
    Status valid = ValidateRelativePath(rel, "file_path");
    if (!valid.ok()) {
      AddProblem(report, CheckProblem::Kind::kPathEscape, rel, valid.message());
      return;
    }
    if (!options_.deep) {
      std::uint64_t size = 0;
      if (HashAndCompare(ds_, rel, file.hash_checksums, CheckOptions{}, report, &size)) {
        bytes_done_->fetch_add(size, std::memory_order_relaxed);
        files_done_->fetch_add(1, std::memory_order_relaxed);
      }
      return;
    }
    // Deep: one read, hashed and decoded from the same bytes.
    auto read = dataset_internal::ReadHashAndDecode(ds_, rel, options_.limits);
    if (!read.ok()) {
      AddProblem(report, ProblemKindOf(read.status()), rel, read.status().message());
      return;
    }
    Counted(read->size, report);
    CompareHashes(algos_, rel, file.hash_checksums, read->hashes, report);
    if (!read->decoded.ok()) {
      AddProblem(report,
                 IsOutsideRoot(read->decoded) ? CheckProblem::Kind::kPathEscape : CheckProblem::Kind::kMalformed,
                 rel, read->decoded.message());
      return;
    }
    const auto n = static_cast<std::int64_t>(read->num_examples);
    report->examples_checked += static_cast<std::uint64_t>(n);
    if (collector_ && n == recorded_examples && !algos_.empty() && read->hashes == file.hash_checksums) {
      collector_->Add(read->checks);
    }
    if (n != recorded_examples) {
      AddProblem(report, CheckProblem::Kind::kCountMismatch, rel,
                 "the shard holds " + std::to_string(n) + " examples but " + list_path + " records " +
                     std::to_string(recorded_examples),
                 "", std::to_string(recorded_examples), std::to_string(n));
    }
  }

  Result<std::shared_ptr<const ShardsList>> CachedList(const std::string& path) {
    std::lock_guard<std::mutex> lock(cache_mu_);
    for (auto it = cache_.begin(); it != cache_.end(); ++it) {
      if (it->first == path) {
        cache_.splice(cache_.begin(), cache_, it);
        return cache_.front().second;
      }
    }
    SEDPACK_ASSIGN_OR_RETURN(ShardsList list, LoadShardsList(ds_, path));
    cache_.emplace_front(path, std::make_shared<const ShardsList>(std::move(list)));
    if (cache_.size() > 2) cache_.pop_back();
    return cache_.front().second;
  }

  const Dataset& ds_;
  const CheckOptions& options_;
  const std::vector<HashAlgorithm>& algos_;
  std::atomic<std::uint64_t>* bytes_done_;
  std::atomic<std::uint64_t>* files_done_;
  std::atomic<bool> stop_{false};
  ChecksCollector* collector_ = nullptr;
  std::mutex cache_mu_;
  std::list<std::pair<std::string, std::shared_ptr<const ShardsList>>> cache_;
};

// Rank 0: check dataset_info.json and the top of the tree, and cut the rest
// into units: the heaviest subtree is opened (its list checked here, its
// children and its shards becoming units) until there are `target` units or
// none is heavier than a fair share.
std::vector<Unit> CutIntoUnits(const Dataset& ds, const CheckOptions& options, TreeChecker& checker,
                               std::size_t target, Findings* top) {
  std::vector<Unit> open;  // subtrees not cut further yet
  std::vector<Unit> done;  // ranges, and subtrees kept whole
  std::uint64_t total = 0;
  std::unordered_set<std::string> seen;
  for (const auto& [split, entry] : ds.info().splits) {
    if (!options.splits.empty() &&
        std::find(options.splits.begin(), options.splits.end(), split) == options.splits.end()) {
      continue;
    }
    const std::string expected_path = std::string(SplitName(split)) + "/shards_list.json";
    if (entry.shard_list_info_file.file_path != expected_path) {
      AddProblem(&top->report, CheckProblem::Kind::kMalformed, entry.shard_list_info_file.file_path,
                 "the split entry should point at " + expected_path);
    }
    Unit u;
    u.entry = entry;
    u.weight = static_cast<std::uint64_t>(std::max<std::int64_t>(entry.number_of_shards, 1));
    total += u.weight;
    open.push_back(std::move(u));
  }
  const std::uint64_t fair = std::max<std::uint64_t>(1, total / std::max<std::size_t>(target, 1));
  const std::uint64_t chunk = std::clamp<std::uint64_t>(fair, 1, 1024);
  // Each opening reads one list on rank 0 alone: bounded.
  std::size_t openings = 0;
  const std::size_t max_openings = 2 * target + 64;
  auto heaviest = [&open] {
    return std::max_element(open.begin(), open.end(),
                            [](const Unit& a, const Unit& b) { return a.weight < b.weight; });
  };
  while (!open.empty() && openings < max_openings) {
    auto it = heaviest();
    if (open.size() + done.size() >= target && it->weight <= fair) break;
    Unit u = std::move(*it);
    open.erase(it);
    ++openings;
    const std::string& rel = u.entry.shard_list_info_file.file_path;
    if (!seen.insert(rel).second) {
      AddTreeRefusal(&top->report, rel, dataset_internal::ShardsTreeRefusal::kRepeated,
                     dataset_internal::RepeatedShardsList(rel));
      continue;
    }
    std::optional<ShardsList> list = checker.CheckList(u.entry, u.depth, top);
    if (!list) continue;
    const std::uint64_t n = list->shard_files.size();
    for (std::uint64_t b = 0; b < n; b += chunk) {
      Unit r;
      r.subtree = false;
      r.list_path = rel;
      r.begin = b;
      r.end = std::min(n, b + chunk);
      r.weight = r.end - r.begin;
      done.push_back(std::move(r));
    }
    for (const ShardListInfo& child : list->children_shard_lists) {
      if (const std::string& path = child.shard_list_info_file.file_path; seen.count(path)) {
        AddTreeRefusal(&top->report, path, dataset_internal::ShardsTreeRefusal::kRepeated,
                       dataset_internal::RepeatedShardsList(path));
        continue;
      }
      Unit c;
      c.entry = child;
      c.depth = u.depth + 1;
      c.weight = static_cast<std::uint64_t>(std::max<std::int64_t>(child.number_of_shards, 1));
      open.push_back(std::move(c));
    }
  }
  for (Unit& u : open) done.push_back(std::move(u));
  // Heaviest first, so that the last units handed out are small.
  std::stable_sort(done.begin(), done.end(), [](const Unit& a, const Unit& b) { return a.weight > b.weight; });
  return done;
}

// A rank's worker threads take unit indexes from a local queue, which the
// rank's own thread (the only one that talks to the Comm) keeps filled from the
// shared counter.
class UnitQueue {
 public:
  void Push(std::size_t unit) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      queue_.push_back(unit);
    }
    cv_.notify_one();
  }
  void Close() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      closed_ = true;
    }
    cv_.notify_all();
  }
  // Next unit; nullopt once closed and empty.
  std::optional<std::size_t> Pop() {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [this] { return closed_ || !queue_.empty(); });
    if (queue_.empty()) return std::nullopt;
    const std::size_t u = queue_.front();
    queue_.pop_front();
    ++busy_;
    return u;
  }
  void Finished() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      --busy_;
    }
    done_cv_.notify_all();
  }
  // Units waiting or being worked on.
  std::size_t Load() {
    std::lock_guard<std::mutex> lock(mu_);
    return queue_.size() + busy_;
  }
  // Wait up to `timeout` for a worker to finish a unit.
  void WaitForProgress(std::chrono::milliseconds timeout, std::size_t below) {
    std::unique_lock<std::mutex> lock(mu_);
    done_cv_.wait_for(lock, timeout, [&] { return queue_.size() + busy_ < below; });
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_, done_cv_;
  std::deque<std::size_t> queue_;
  std::size_t busy_ = 0;
  bool closed_ = false;
};

// Step 1 of RunCheck, on rank 0: dataset_info.json against the expected
// hashes, the shard files the splits record, and the top of the tree cut into
// `target` units (their wire form).
std::string PlanCheckUnits(const Dataset& ds, const CheckOptions& co, TreeChecker& checker, std::size_t target,
                           Findings* mine, std::atomic<std::uint64_t>* bytes_done, std::uint64_t* files_total) {
  if (!co.expected_root_checksums.empty()) {
    std::uint64_t size = 0;
    if (HashAndCompare(ds, "dataset_info.json", co.expected_root_checksums, CheckOptions{}, &mine->report,
                       &size)) {
      *bytes_done += size;
    }
  }
  for (const auto& [split, entry] : ds.info().splits) {
    if (co.splits.empty() || std::find(co.splits.begin(), co.splits.end(), split) != co.splits.end()) {
      *files_total += static_cast<std::uint64_t>(std::max<std::int64_t>(entry.number_of_shards, 0));
    }
  }
  return EncodeUnits(CutIntoUnits(ds, co, checker, target, mine));
}

// Step 4 of RunCheck, on rank 0: every rank's findings merged, the lists
// reached from more than one unit and the orphans found, problems sorted.
Result<CheckReport> MergeFindings(const Dataset& ds, const CheckOptions& co, std::vector<std::string> gathered) {
  Findings all;
  for (std::size_t r = 0; r < gathered.size(); ++r) {
    auto f = DecodeFindings(gathered[r]);
    gathered[r].clear();
    gathered[r].shrink_to_fit();
    if (!f.ok()) return f.status().WithPrefix("findings of rank " + std::to_string(r) + ": ");
    all.report.work_by_rank.push_back(CheckWork{f->units, f->report.files_checked, f->report.bytes_checked});
    all.Merge(std::move(*f));
  }
  CheckReport out = std::move(all.report);
  // A list two parents name is checked twice (once per unit that reached it);
  // the tree is still wrong, as the reference's reader would read it twice.
  std::sort(all.lists.begin(), all.lists.end());
  for (std::size_t i = 1; i < all.lists.size(); ++i) {
    if (all.lists[i] == all.lists[i - 1] && (i + 1 == all.lists.size() || all.lists[i + 1] != all.lists[i])) {
      AddProblem(&out, CheckProblem::Kind::kMalformed, all.lists[i],
                 "listed more than once (by more than one parent list)");
    }
  }
  if (co.find_orphans) {
    const std::unordered_set<std::string> lists(all.lists.begin(), all.lists.end());
    std::sort(all.files.begin(), all.files.end());
    FindOrphans(ds, co,
                [&](const std::string& rel) {
                  return lists.count(rel) != 0 ||
                         std::binary_search(all.files.begin(), all.files.end(), PathKey(rel));
                },
                &out);
    NoteStoppedRecompress(ds, &out);
  }
  std::sort(out.problems.begin(), out.problems.end(), [](const CheckProblem& a, const CheckProblem& b) {
    if (a.warning() != b.warning()) return !a.warning();
    if (a.path != b.path) return a.path < b.path;
    if (a.kind != b.kind) return a.kind < b.kind;
    if (a.algorithm != b.algorithm) return a.algorithm < b.algorithm;
    return a.message < b.message;
  });
  return out;
}

// Step 2 of RunCheck: takes units from the shared counter until none is left
// or something failed (the failure), keeping `inflight` queued for the
// workers, or running each here (`run_here`) when no worker could start.
Status TakeUnits(Comm& comm, std::size_t units, UnitQueue& queue, std::size_t inflight, bool no_workers,
                 const std::function<void(std::size_t)>& run_here,
                 const std::function<Status(bool)>& report_progress) {
  bool exhausted = false;
  while (!exhausted) {
    if (comm.PeerFailed()) return Status::Internal("aborted: another rank failed during the check");
    if (queue.Load() < inflight) {
      auto next = comm.FetchAdd(1);
      if (!next.ok()) {
        comm.NotifyFailure();
        return next.status();
      }
      if (*next >= static_cast<std::int64_t>(units)) {
        exhausted = true;
      } else if (no_workers) {
        run_here(static_cast<std::size_t>(*next));  // no worker thread could start: do it here
      } else {
        queue.Push(static_cast<std::size_t>(*next));
      }
    } else {
      queue.WaitForProgress(std::chrono::milliseconds(20), inflight);
    }
    SEDPACK_RETURN_NOT_OK(report_progress(false));
  }
  return Status::OK();
}

// The digest of the dataset_info.json a deep check starts from, when it is to
// record the checks sidecar (none fresh for it); nullopt otherwise.
std::optional<DatasetInfoDigest> ChecksToRecord(const Dataset& ds, const CheckOptions& co) {
  if (!co.deep || !co.record_checks || ds.pack()) return std::nullopt;
  auto digest = sidecar_internal::InfoDigest(ds.root(), ds.file_system());
  if (!digest.ok() ||
      sidecar_internal::LoadChecksFor(ds.root(), *digest, [](const std::string&) {}, ds.file_system())) {
    return std::nullopt;
  }
  return *digest;
}

// After a deep check: every rank's records to rank 0, which writes the
// sidecar if dataset_info.json is still the one the check started from.
// Collective when `co.deep`.
Status GatherAndWriteChecks(Comm& comm, const Dataset& ds, const CheckOptions& co,
                            const std::optional<DatasetInfoDigest>& digest, ChecksCollector& collector) {
  if (!co.deep) return Status::OK();
  // Each rank sends where its records are, "+" and the runs, or "-" when it
  // has none to give (a failed spool, or no sidecar to record).
  const std::string mine = sidecar_internal::RunsMessage(collector.Runs());
  SEDPACK_ASSIGN_OR_RETURN(std::vector<std::string> gathered, comm.Gatherv(mine, 0));
  std::string done;
  if (comm.rank() == 0 && digest) {
    // A rank without records adds none (a sidecar may lack any record: that
    // shard's reads check its recorded hashes); a damaged message, no sidecar.
    std::vector<sidecar_internal::ChecksRun> all;
    bool complete = true;
    std::uint64_t bytes = 0;
    for (const std::string& g : gathered) {
      auto runs = sidecar_internal::ParseRunsMessage(g);
      if (!runs.ok()) {
        complete = false;
        break;
      }
      if (!runs->has_value()) continue;
      for (auto& r : **runs) {
        bytes += r.size;
        all.push_back(std::move(r));
      }
    }
    auto now = sidecar_internal::InfoDigest(ds.root(), ds.file_system());
    // Best effort: the check's outcome does not depend on it.
    if (complete && bytes > 0 && now.ok() && *now == *digest) {
      (void)sidecar_internal::WriteChecksFromRuns(ds.root(), *digest, nullptr, all, ds.file_system());
    }
  }
  // The ranks keep their spool files until rank 0 has read them.
  return comm.Bcast(&done, 0);
}

}  // namespace

Result<CheckReport> RunCheck(Comm& comm, const Dataset& ds, const CheckRunOptions& options) {
  const auto start = Clock::now();
  const int rank = comm.rank();
  const CheckOptions& co = options.check;
  const int threads = ResolveThreads(co.threads);
  std::atomic<std::uint64_t> bytes_done{0}, files_done{0};
  TreeChecker checker(ds, co, &bytes_done, &files_done);
  // Every rank decides for itself; only rank 0's decision writes.
  const std::optional<DatasetInfoDigest> record_checks = ChecksToRecord(ds, co);
  ChecksCollector verified_checks;
  if (record_checks) {
    verified_checks.Start(ds);
    checker.CollectChecks(&verified_checks);
  }

  // 1. Rank 0 checks the root and the top of the tree and cuts the rest into units.
  Findings mine;
  std::string units_wire;
  std::uint64_t files_total = 0;
  if (rank == 0) {
    const std::size_t target = std::max<std::size_t>(64, 8 * static_cast<std::size_t>(comm.size()) *
                                                             static_cast<std::size_t>(threads));
    units_wire = PlanCheckUnits(ds, co, checker, target, &mine, &bytes_done, &files_total);
  }
  SEDPACK_RETURN_NOT_OK(comm.Bcast(&units_wire, 0));
  SEDPACK_ASSIGN_OR_RETURN(const std::vector<Unit> units, DecodeUnits(units_wire));
  units_wire.clear();
  units_wire.shrink_to_fit();

  // 2. Take units until none is left.
  SEDPACK_RETURN_NOT_OK(comm.OpenCounter());
  UnitQueue queue;
  std::vector<Findings> per_worker(static_cast<std::size_t>(threads));
  auto run_unit = [&](std::size_t i, Findings* out) {
    if (checker.Stopped()) return;
    if (options.before_unit) options.before_unit(rank);
    checker.CheckUnit(units[i], out);
  };
  auto work = [&](int w) {
    while (auto i = queue.Pop()) {
      run_unit(*i, &per_worker[static_cast<std::size_t>(w)]);
      queue.Finished();
    }
  };
  std::vector<std::thread> pool = internal::StartThreads(threads, work);
  const std::size_t inflight = pool.empty() ? 1 : 2 * pool.size();

  // Progress: rank 0 folds in what the others send.
  internal::RankProgress collector(comm);
  auto others_done = [&] { return comm.size() == 1 || collector.others_final(); };
  auto last_report = Clock::now() - std::chrono::hours(1);
  auto report_progress = [&](bool final) -> Status {
    if (rank != 0) {
      collector.Send(bytes_done.load(), final);
      return Status::OK();
    }
    if (!others_done()) SEDPACK_RETURN_NOT_OK(collector.Poll());
    const auto now = Clock::now();
    const bool last = final && others_done();
    if (!options.progress ||
        (!last && std::chrono::duration<double>(now - last_report).count() < options.progress_interval_s)) {
      return Status::OK();
    }
    last_report = now;
    CheckRunProgress p;
    p.bytes_done = collector.Total(bytes_done.load());
    p.files_total = files_total;
    const std::uint64_t files = files_done.load();
    if (last) {
      p.bytes_total = p.bytes_done;
    } else if (files > 0) {
      p.bytes_total = std::max(p.bytes_done, bytes_done.load() / files * files_total);
    }
    p.seconds = std::chrono::duration<double>(now - start).count();
    options.progress(p);
    return Status::OK();
  };

  Status failed = TakeUnits(comm, units.size(), queue, inflight, pool.empty(),
                            [&](std::size_t i) { run_unit(i, &per_worker[0]); }, report_progress);
  if (!failed.ok()) checker.Stop();
  queue.Close();
  // Keep reporting while this rank's workers finish.
  while (queue.Load() > 0) {
    queue.WaitForProgress(std::chrono::milliseconds(50), 1);
    if (failed.ok()) {
      if (Status st = report_progress(false); !st.ok()) failed = st;
    }
  }
  for (auto& t : pool) t.join();
  if (!failed.ok()) return failed;
  for (auto& w : per_worker) mine.Merge(std::move(w));

  // 3. Final progress; rank 0 waits for everyone's last message.
  SEDPACK_RETURN_NOT_OK(report_progress(true));
  while (rank == 0 && !others_done()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    SEDPACK_RETURN_NOT_OK(report_progress(true));
  }
  SEDPACK_RETURN_NOT_OK(comm.IdleBarrier());
  SEDPACK_RETURN_NOT_OK(comm.CloseCounter());

  // 4. Gather; rank 0 merges, finds repeated lists and orphans, sorts.
  const std::uint64_t my_units = mine.units;
  SEDPACK_ASSIGN_OR_RETURN(std::vector<std::string> gathered, comm.Gatherv(EncodeFindings(mine), 0));
  SEDPACK_RETURN_NOT_OK(GatherAndWriteChecks(comm, ds, co, record_checks, verified_checks));
  if (rank != 0) {
    mine.report.work_by_rank = {CheckWork{my_units, mine.report.files_checked, mine.report.bytes_checked}};
    return std::move(mine.report);
  }
  return MergeFindings(ds, co, std::move(gathered));
}

}  // namespace sedpack
