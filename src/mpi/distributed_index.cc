// SPDX-License-Identifier: Apache-2.0
#include "sedpack/mpi/distributed_index.h"

#include <algorithm>
#include <charconv>
#include <optional>
#include <unordered_set>

#include "comm/status_wire.h"
#include "sedpack/metadata/models.h"
#include "sidecar/sidecar_files.h"
#include "sidecar/sidecar_internal.h"
#include "dataset/shards_tree_internal.h"
#include "index/index_internal.h"
#include "index/subtree_walk.h"
#include "io/kill_point.h"
#include "journal/entries_internal.h"
#include "sedpack/cancel.h"

namespace sedpack {
namespace {

using internal::DecodeStatus;
using internal::EncodeStatus;

// Length-prefixed fields ("<len>:<bytes>") so that paths may hold any byte.
void Put(std::string* out, std::string_view field) {
  out->append(std::to_string(field.size()));
  out->push_back(':');
  out->append(field);
}
void PutNumber(std::string* out, std::uint64_t v) { Put(out, std::to_string(v)); }

class Fields {
 public:
  explicit Fields(std::string_view in) : in_(in) {}
  bool done() const { return in_.empty(); }
  Result<std::string_view> Next() {
    const auto colon = in_.find(':');
    std::uint64_t len = 0;
    if (colon == std::string_view::npos ||
        std::from_chars(in_.data(), in_.data() + colon, len).ptr != in_.data() + colon ||
        len > in_.size() - colon - 1) {
      return Status::Corruption("malformed index message between ranks");
    }
    std::string_view f = in_.substr(colon + 1, len);
    in_.remove_prefix(colon + 1 + len);
    return f;
  }
  Result<std::uint64_t> Number() {
    SEDPACK_ASSIGN_OR_RETURN(std::string_view f, Next());
    std::uint64_t v = 0;
    if (f.empty() || std::from_chars(f.data(), f.data() + f.size(), v).ptr != f.data() + f.size()) {
      return Status::Corruption("malformed number in index message between ranks");
    }
    return v;
  }

 private:
  std::string_view in_;
};

// One piece of a split's read order (the planner's unit): shards rank 0 read
// itself from an expanded list, or a subtree some rank walks.
struct Unit {
  dataset_internal::ShardsTreeUnit plan;
  IndexedSplit shards;  // filled by rank 0 (own shards, or kept from a journal) or from the walking rank
  bool kept = false;    // a subtree a stopped run journaled: nobody walks it
  std::vector<std::string> kept_lists;
};

// The journal of a distributed build, as rank 0 hands it to the ranks.
struct JournalSpec {
  std::string id;  // empty: no journal
  std::string sha256_hex;
  int first_number = 0;  // rank r journals into number first_number + r
  // Stopped runs journaled subtrees that this run's plan holds inside its
  // own (they cut the tree finer: more ranks or threads): the walking ranks
  // read those journals (numbered below first_number) and keep them.
  bool look_inside = false;
  // Not sent: each rank's own (DistributedIndexOptions::file_system).
  FileSystem* fs = nullptr;
};

using KnownSubtrees = std::map<std::string, WalkedSubtree>;

// Rank 0: what the journals of the stopped runs hold (before the plan, which
// must not cut a journaled subtree), and the journal numbers this run takes.
Status ReadJournaled(const std::string& root, const IndexContents& contents, bool restart, JournalSpec* spec,
                     KnownSubtrees* known) {
  spec->sha256_hex = DigestHex(contents.dataset_info_sha256);
  const IndexJobIdentity job = IndexJobFor(root, spec->sha256_hex);
  spec->id = job.id;
  if (restart) SEDPACK_RETURN_NOT_OK(journal_internal::RemoveJobJournals(root, job.id, spec->fs));
  SEDPACK_ASSIGN_OR_RETURN(auto recorded,
                           journal_internal::ReadJobEntriesInPlace(root, job.id, job.parameters, "index build", spec->fs));
  // A single-process build's units are read back from its partial index.
  AddJournaledPrefixSubtrees(root, job.id, recorded.entries, spec->fs, known);
  std::map<std::string, WalkedSubtree> subtrees = DecodeSubtrees(std::move(recorded.entries));
  for (auto& [key, walked] : subtrees) (*known)[key] = std::move(walked);
  SEDPACK_ASSIGN_OR_RETURN(spec->first_number, FreshJournalNumber(root, job.id, spec->fs));
  return Status::OK();
}

// Rank 0: take over the planned subtrees the stopped runs journaled whole.
void KeepJournaled(const Dataset& ds, const IndexContents& contents, const KnownSubtrees& known,
                   std::vector<Unit>& units, JournalSpec* spec, std::uint64_t* kept) {
  std::size_t taken = 0;
  bool walked = false;
  for (Unit& u : units) {
    if (!u.plan.subtree) continue;
    const auto it = known.find(SubtreeKey(u.plan.entry.shard_list_info_file.file_path, u.plan.depth));
    // A record whose lists changed since, or whose shards do not decode, leaves its subtree to be walked.
    if (it == known.end() || !WalkedListsUnchanged(ds, it->second) ||
        !TakeWalkedSubtree(it->second, &u.shards, &u.kept_lists)) {
      walked = true;
      continue;
    }
    u.shards.split = contents.splits[u.plan.root].split;
    u.kept = true;
    ++*kept;
    ++taken;
  }
  spec->look_inside = walked && taken < known.size();
}

// A walking rank: the subtrees the stopped runs journaled (their journals are
// numbered below this run's), for IndexShardsSubtreeKeeping. Rank 0 checked
// their parameters; a journal that does not match them now is left alone.
Result<KnownSubtrees> ReadStoppedRuns(const std::string& root, const JournalSpec& spec) {
  const journal_internal::JobParameters parameters = IndexJobFor(root, spec.sha256_hex).parameters;
  SEDPACK_ASSIGN_OR_RETURN(std::vector<journal_internal::JournalFile> journals,
                           journal_internal::ListJournals(root, spec.fs));
  std::vector<journal_internal::JournalEntry> entries;
  for (const journal_internal::JournalFile& j : journals) {
    if (j.job_id != spec.id || j.rank >= spec.first_number) continue;
    auto read = journal_internal::ReadJournal(root, j.rel, spec.fs);
    if (!read.ok() || !journal_internal::DifferingParameter(read->parameters, parameters).empty()) continue;
    for (journal_internal::JournalEntry& e : read->entries) entries.push_back(std::move(e));
  }
  std::vector<journal_internal::EntryView> views;
  for (journal_internal::JournalEntry& e : entries) {
    auto file = std::make_shared<const std::string>(std::move(e.data));
    views.push_back({e.kind, *file, file});
  }
  KnownSubtrees known;
  AddJournaledPrefixSubtrees(root, spec.id, views, spec.fs, &known);
  std::map<std::string, WalkedSubtree> subtrees = DecodeSubtrees(std::move(views));
  for (auto& [key, walked] : subtrees) known[key] = std::move(walked);
  return known;
}

// Rank 0: read the top of every split's tree and cut it into units. One rank
// walks everything itself; otherwise the planner expands a few levels, each
// read by rank 0 alone.
// With a journal one rank cuts the tree too: its subtrees are what a stopped
// run keeps. A subtree a stopped run journaled (`known`) is never cut.
Status PlanUnits(const Dataset& ds, int ranks, int per_rank, const KnownSubtrees* known, IndexContents* contents,
                 std::vector<Unit>* units, std::vector<std::string>* visited) {
  std::vector<ShardListInfo> roots;
  for (Split split : AllSplits()) {
    const ShardListInfo* top = ds.info().FindSplit(split);
    if (!top) continue;
    IndexedSplit s;
    s.split = split;
    contents->splits.push_back(s);
    roots.push_back(*top);
  }
  const std::size_t want =
      ranks > 1 || known ? static_cast<std::size_t>(std::max(1, ranks) * std::max(1, per_rank)) : 1;
  SEDPACK_ASSIGN_OR_RETURN(
      std::vector<dataset_internal::ShardsTreeUnit> plan,
      dataset_internal::PlanShardsSubtrees(ds, roots, want, visited, [known](const std::string& path, std::size_t depth) {
        return known && known->count(SubtreeKey(path, depth)) > 0;
      }));
  for (dataset_internal::ShardsTreeUnit& p : plan) {
    Unit u;
    u.plan = std::move(p);
    if (!u.plan.subtree) {
      u.shards.split = contents->splits[u.plan.root].split;
      SEDPACK_RETURN_NOT_OK(AppendListShards(u.plan.list, &u.shards));
      u.plan.list = ShardsList{};
    }
    units->push_back(std::move(u));
  }
  return Status::OK();
}

// What a rank walked of one subtree unit: its shards in read order, the lists
// it read, and how many stopped runs' subtrees it kept inside.
struct WalkedUnit {
  std::uint64_t id = 0;
  IndexedSplit part;
  std::vector<std::string> seen;
  std::uint64_t kept = 0;
};

// A rank's walked units go to rank 0 in rounds of at most about kChunkBytes a
// rank, never as one message: at a million shards one message held the whole
// index three times over on rank 0 (the sender's text, MPI's receive buffer,
// the split copies), 548 MB at 2 ranks against the 129 MB of a one-process
// build (DistributedIndexOptions::message_bytes). Each message is a run of records, in walk order:
//   S <unit> <path> <examples>   a shard of the unit
//   L <path>                     a shards list the walk read
//   K <unit> <kept>              the unit's end (and its kept subtrees)
constexpr std::size_t kChunkBytes = std::size_t{2} << 20;

class ReplyChunks {
 public:
  ReplyChunks(const std::vector<WalkedUnit>& walked, std::size_t bytes)
      : walked_(walked), bytes_(bytes == 0 ? kChunkBytes : bytes) {}
  bool done() const { return unit_ >= walked_.size(); }
  std::string Next() {
    std::string out;
    while (!done() && out.size() < bytes_) {
      const WalkedUnit& w = walked_[unit_];
      if (shard_ < w.part.shard_paths.size()) {
        Put(&out, "S");
        PutNumber(&out, w.id);
        Put(&out, w.part.shard_paths[shard_]);
        PutNumber(&out, w.part.shard_examples[shard_]);
        ++shard_;
      } else if (list_ < w.seen.size()) {
        Put(&out, "L");
        Put(&out, w.seen[list_]);
        ++list_;
      } else {
        Put(&out, "K");
        PutNumber(&out, w.id);
        PutNumber(&out, w.kept);
        ++unit_;
        shard_ = list_ = 0;
      }
    }
    return out;
  }

 private:
  const std::vector<WalkedUnit>& walked_;
  std::size_t bytes_;
  std::size_t unit_ = 0, shard_ = 0, list_ = 0;
};

// Rank 0: the walked units joined into `units` as they arrive (a list reached
// from two subtrees, or already read by the planner, is the repeat the
// sequential reader refuses); then, in Finish, into `contents` in read order,
// encoded and, with options.write, written.
class ReplyJoiner {
 public:
  ReplyJoiner(const std::vector<std::string>& visited, std::vector<Unit>& units, IndexContents& contents)
      : lists_(visited.begin(), visited.end()), units_(units), contents_(contents) {
    for (const Unit& u : units_) {
      for (const std::string& p : u.kept_lists) {
        if (!lists_.insert(p).second) status_ = dataset_internal::RepeatedShardsList(p);
      }
    }
  }
  const Status& status() const { return status_; }
  std::uint64_t kept_inside() const { return kept_inside_; }
  void Fail(Status st) {
    if (status_.ok()) status_ = std::move(st);
  }

  // Rank 0's own walk, moved in without a copy.
  void AddOwn(std::vector<WalkedUnit>&& walked) {
    for (WalkedUnit& w : walked) {
      if (!status_.ok()) return;
      Unit* u = UnitFor(w.id);
      if (!u) return;
      w.part.split = u->shards.split;
      u->shards = std::move(w.part);
      for (const std::string& p : w.seen) SeeList(p);
      kept_inside_ += w.kept;
    }
  }

  // A message of records from another rank.
  void AddChunk(std::string_view chunk) {
    Fields in(chunk);
    while (status_.ok() && !in.done()) Fail(AddRecord(in));
  }

  Status Finish(const std::string& root, const DistributedIndexOptions& options) {
    SEDPACK_RETURN_NOT_OK(status_);
    for (Unit& u : units_) {
      IndexedSplit& s = contents_.splits[u.plan.root];
      SEDPACK_RETURN_NOT_OK(s.shard_paths.Append(std::move(u.shards.shard_paths)));
      s.shard_examples.insert(s.shard_examples.end(), u.shards.shard_examples.begin(),
                              u.shards.shard_examples.end());
      std::vector<std::uint64_t>().swap(u.shards.shard_examples);
    }
    SEDPACK_ASSIGN_OR_RETURN(DatasetInfoDigest after, DatasetInfoSha256(root));
    if (after != contents_.dataset_info_sha256) {
      return Status::IOError(root, "/dataset_info.json changed while the index was built");
    }
    // Streamed: the file is about as large as the paths, which are in memory once already.
    if (!options.write) return EncodeIndexTo(contents_, [](std::span<const std::byte>) { return Status::OK(); });
    return WriteSidecarStreamed(root, kIndexFileName,
                                [this](const ByteSink& sink) { return EncodeIndexTo(contents_, sink); });
  }

 private:
  Unit* UnitFor(std::uint64_t id) {
    if (id >= units_.size() || !units_[id].plan.subtree) {
      Fail(Status::Corruption("bad unit in index reply"));
      return nullptr;
    }
    Unit& u = units_[id];
    u.shards.split = contents_.splits[u.plan.root].split;
    return &u;
  }
  void SeeList(std::string_view p) {
    // Subtrees are walked apart; a list reached from two of them is the
    // repeat the sequential reader refuses.
    if (!lists_.insert(std::string(p)).second) Fail(dataset_internal::RepeatedShardsList(p));
  }
  Status AddRecord(Fields& in) {
    SEDPACK_ASSIGN_OR_RETURN(std::string_view kind, in.Next());
    if (kind == "L") {
      SEDPACK_ASSIGN_OR_RETURN(std::string_view p, in.Next());
      SeeList(p);
      return Status::OK();
    }
    SEDPACK_ASSIGN_OR_RETURN(std::uint64_t id, in.Number());
    Unit* u = UnitFor(id);
    if (!u) return status_;
    if (kind == "S") {
      SEDPACK_ASSIGN_OR_RETURN(std::string_view p, in.Next());
      SEDPACK_ASSIGN_OR_RETURN(std::uint64_t e, in.Number());
      SEDPACK_RETURN_NOT_OK(u->shards.shard_paths.Add(p));
      u->shards.shard_examples.push_back(e);
      return Status::OK();
    }
    if (kind != "K") return Status::Corruption("bad record in index reply");
    SEDPACK_ASSIGN_OR_RETURN(std::uint64_t k, in.Number());
    kept_inside_ += k;
    return Status::OK();
  }

  std::unordered_set<std::string> lists_;
  std::vector<Unit>& units_;
  IndexContents& contents_;
  Status status_;
  std::uint64_t kept_inside_ = 0;
};

// A rank's walk of the subtrees in its task message (after the journal
// spec); each one walked is journaled when `spec` names a job, and the
// subtrees of stopped runs found inside it are kept (`known`: rank 0's, which
// read them already; others read them when `spec` says there are some).
Status WalkTasks(const std::string& root, Fields& in, const JournalSpec& spec, int rank, const KnownSubtrees* known,
                 std::vector<WalkedUnit>* walked) {
  OpenOptions open_options;
  open_options.file_system = spec.fs;
  auto open = Dataset::Open(root, open_options);
  Status st = open.status();
  KnownSubtrees read;
  if (!spec.look_inside) {
    known = nullptr;
  } else if (!known && st.ok() && !in.done()) {
    auto stopped = ReadStoppedRuns(root, spec);
    st = stopped.status();
    if (stopped.ok()) read = std::move(stopped).value();
    known = &read;
  }
  std::unique_ptr<journal_internal::JournalWriter> writer;
  std::unique_ptr<journal_internal::JournalQueue> queue;
  if (st.ok() && !spec.id.empty() && !in.done()) {
    auto started = journal_internal::StartEntryJournal(root, spec.id, spec.first_number + rank,
                                                       IndexJobFor(root, spec.sha256_hex).parameters, {}, spec.fs);
    st = started.status();
    if (started.ok()) {
      writer = std::move(started).value();
      queue = std::make_unique<journal_internal::JournalQueue>(writer.get());
    }
  }
  while (st.ok() && !in.done()) {
    auto id = in.Number();
    auto path = id.ok() ? in.Next() : Result<std::string_view>(id.status());
    auto depth = path.ok() ? in.Number() : Result<std::uint64_t>(path.status());
    if (!depth.ok()) {
      st = depth.status();
      break;
    }
    if (queue) TestShardDelay();  // lets a signal test stop the walk mid-way
    st = CheckCancelled();
    if (!st.ok()) break;
    const std::string list(*path);
    WalkedUnit w;
    w.id = *id;
    std::vector<ListStamp> stamps;
    st = IndexShardsSubtreeKeeping(**open, list, static_cast<std::size_t>(*depth), known, &w.seen, &w.part, &w.kept,
                                   queue ? &stamps : nullptr);
    if (!st.ok()) break;
    if (queue) {
      st = queue->status();  // a journal that cannot be written stops the walk
      if (!st.ok()) break;
      queue->Push(EncodeSubtree(list, static_cast<std::size_t>(*depth), w.seen, stamps, w.part, queue->Spare()));
    }
    walked->push_back(std::move(w));
  }
  if (queue) {
    const Status journaled = queue->Finish();  // what was walked is journaled, whatever the outcome
    if (st.ok()) st = journaled;
  }
  if (!st.ok()) walked->clear();
  return st;
}

// Rank 0: hand the subtrees not kept to the ranks, largest first, each to the
// least-loaded rank; every task message starts with the journal spec.
std::vector<std::string> AssignTasks(const std::vector<Unit>& units, const JournalSpec& spec, int size) {
  std::vector<std::size_t> order;
  for (std::size_t i = 0; i < units.size(); ++i) {
    if (units[i].plan.subtree && !units[i].kept) order.push_back(i);
  }
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return units[a].plan.weight > units[b].plan.weight; });
  std::vector<std::uint64_t> load(static_cast<std::size_t>(size), 0);
  std::vector<std::string> tasks(static_cast<std::size_t>(size));
  for (int r = 0; r < size; ++r) {
    std::string& t = tasks[static_cast<std::size_t>(r)];
    Put(&t, spec.id);
    if (!spec.id.empty()) {
      Put(&t, spec.sha256_hex);
      PutNumber(&t, static_cast<std::uint64_t>(spec.first_number + r));
      PutNumber(&t, spec.look_inside ? 1 : 0);
    }
  }
  for (std::size_t i : order) {
    const auto r = static_cast<std::size_t>(std::min_element(load.begin(), load.end()) - load.begin());
    load[r] += std::max<std::uint64_t>(1, units[i].plan.weight);
    PutNumber(&tasks[r], i);
    Put(&tasks[r], units[i].plan.entry.shard_list_info_file.file_path);
    PutNumber(&tasks[r], units[i].plan.depth);
  }
  return tasks;
}

}  // namespace

Result<IndexContents> BuildIndexDistributed(Comm& comm, const std::string& root,
                                            const DistributedIndexOptions& options) {
  const int rank = comm.rank();
  const int size = comm.size();
  IndexContents contents;
  std::vector<Unit> units;
  std::vector<std::string> visited;
  std::vector<std::string> tasks;  // rank 0: per-rank task messages
  std::string opened;
  JournalSpec spec;
  spec.fs = options.file_system;
  KnownSubtrees known;
  std::uint64_t kept = 0;
  if (rank == 0) {
    Status st;
    auto digest = DatasetInfoSha256(root);
    st = digest.status();
    std::shared_ptr<Dataset> ds;
    if (st.ok()) {
      contents.dataset_info_sha256 = *digest;
      OpenOptions open_options;
      open_options.file_system = options.file_system;
      auto open = Dataset::Open(root, open_options);
      st = open.status();
      if (open.ok()) ds = std::move(open).value();
    }
    if (st.ok() && options.journal) st = ReadJournaled(root, contents, options.restart, &spec, &known);
    if (st.ok()) {
      st = PlanUnits(*ds, size, options.subtrees_per_rank, options.journal ? &known : nullptr, &contents, &units,
                     &visited);
    }
    if (st.ok() && options.journal) KeepJournaled(*ds, contents, known, units, &spec, &kept);
    if (st.ok()) tasks = AssignTasks(units, spec, size);
    opened = EncodeStatus(st);
  }
  SEDPACK_RETURN_NOT_OK(comm.Bcast(&opened, 0));
  SEDPACK_RETURN_NOT_OK(DecodeStatus(opened));
  if (rank != 0) tasks.clear();
  SEDPACK_ASSIGN_OR_RETURN(std::string mine, comm.Scatterv(tasks, 0));

  // Every rank walks its subtrees. Failures travel to rank 0 in a gathered
  // status, so that every rank takes part in every collective.
  std::vector<WalkedUnit> walked;
  Status walk;
  {
    Fields in(mine);
    JournalSpec mine_spec;
    mine_spec.fs = options.file_system;
    auto id = in.Next();
    walk = id.status();
    if (walk.ok() && !id->empty()) {
      mine_spec.id = std::string(*id);
      auto sha = in.Next();
      auto number = sha.ok() ? in.Number() : Result<std::uint64_t>(sha.status());
      auto inside = number.ok() ? in.Number() : Result<std::uint64_t>(number.status());
      walk = inside.status();
      if (walk.ok()) {
        mine_spec.sha256_hex = std::string(*sha);
        mine_spec.first_number = static_cast<int>(*number) - rank;
        mine_spec.look_inside = *inside != 0;
      }
    }
    if (walk.ok()) walk = WalkTasks(root, in, mine_spec, rank, rank == 0 ? &known : nullptr, &walked);
  }
  SEDPACK_RETURN_NOT_OK(comm.IdleBarrier());
  SEDPACK_ASSIGN_OR_RETURN(std::vector<std::string> statuses, comm.Gatherv(EncodeStatus(walk), 0));
  std::optional<ReplyJoiner> joiner;
  if (rank == 0) {
    joiner.emplace(visited, units, contents);
    for (std::size_t r = 0; r < statuses.size(); ++r) {
      const Status st = DecodeStatus(statuses[r]);
      if (!st.ok()) joiner->Fail(st.WithPrefix(size > 1 ? "rank " + std::to_string(r) + ": " : ""));
    }
    joiner->AddOwn(std::move(walked));
    walked.clear();
  }
  // The other ranks' walks, a bounded message a rank a round, until every
  // rank has sent all of its own (rank 0 keeps taking part after a failure).
  {
    ReplyChunks chunks(walked, options.message_bytes);
    while (true) {
      SEDPACK_ASSIGN_OR_RETURN(std::int64_t more, comm.AllreduceMax(chunks.done() ? 0 : 1));
      if (more == 0) break;
      SEDPACK_ASSIGN_OR_RETURN(std::vector<std::string> round, comm.Gatherv(chunks.Next(), 0));
      if (rank == 0) {
        for (std::string& m : round) {
          if (joiner->status().ok()) joiner->AddChunk(m);
          std::string().swap(m);
        }
      }
    }
  }
  walked.clear();

  std::string outcome;
  if (rank == 0) {
    const std::uint64_t kept_inside = joiner->kept_inside();
    Status st = joiner->Finish(root, options);
    if (st.ok() && !spec.id.empty()) {
      // The index is written: the journals' work is in it.
      st = journal_internal::RemoveJobJournals(root, spec.id, options.file_system);
      (void)FileSystemOr(options.file_system).Rmdir(JoinRoot(root, journal_internal::kJournalDir).c_str());
    }
    if (options.report) {
      std::uint64_t subtrees = 0;
      for (const Unit& u : units) subtrees += u.plan.subtree ? 1 : 0;
      // As the single-process build counts: a subtree walked, and each
      // stopped run's subtree kept inside it, are units.
      options.report->units = subtrees + kept_inside;
      options.report->units_kept = kept + kept_inside;
      options.report->resumed_job = kept + kept_inside > 0 ? spec.id : std::string();
    }
    outcome = EncodeStatus(st);
  }
  SEDPACK_RETURN_NOT_OK(comm.Bcast(&outcome, 0));
  SEDPACK_RETURN_NOT_OK(DecodeStatus(outcome));
  if (rank != 0) return IndexContents{};
  return contents;
}

}  // namespace sedpack
