// SPDX-License-Identifier: Apache-2.0
#include "sedpack/dataset/filler.h"

#include <atomic>
#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <new>
#include <optional>
#include <set>
#include <thread>

#include "dataset/checks_write_internal.h"
#include "parallel/worker_pool.h"
#include "sidecar/checks_spool_internal.h"
#include "sidecar/sidecar_internal.h"
#include "sedpack/cancel.h"
#include "sedpack/codecs/hash.h"
#include "sedpack/io/file.h"
#include "sedpack/io/file_system.h"
#include "sedpack/metadata/paths.h"
#include "sedpack/shard/shard.h"
#include "codecs/byte_buffer.h"
#include "io/kill_point.h"
#include "shard/shard_buffer.h"

namespace sedpack {

namespace {
constexpr std::string_view kListName = "shards_list.json";
}  // namespace

class Filler::Impl {
 public:
  Impl(std::shared_ptr<Dataset> dataset, FillerOptions options)
      : dataset_(std::move(dataset)), options_(std::move(options)) {}

  ~Impl() {
    // Let queued shard writes end before the buffers they use go away. (Nothing
    // is left in io_queue_: workers hand writes over only while this thread
    // waits in WaitInFlightBelow, which drains the queue before it returns.)
    pool_.reset();
    // Dropped without a successful Finish: what was written is referenced by no
    // metadata and never will be (unless a job journal keeps it for a rerun).
    if (!handed_over_ && !on_written_) RemoveUncommitted();
  }

  Status Init() {
    SEDPACK_RETURN_NOT_OK(Dataset::ValidateStructure(dataset_->info().dataset_structure));
    const std::string& rel = options_.relative_path_from_split;
    if (rel.empty()) return Status::InvalidArgument("relative_path_from_split is empty");
    SEDPACK_RETURN_NOT_OK(ValidateRelativePath(rel, "relative_path_from_split"));
    rel_components_ = PathComponents(rel);
    if (options_.max_branching < 2) {
      return Status::InvalidArgument("max_branching must be at least 2, got ", options_.max_branching);
    }
    paths_ = PathGenerator(4, options_.max_branching);
    SEDPACK_RETURN_NOT_OK(
        ValidateCodecLevel(dataset_->info().dataset_structure.compression, options_.codec.level));
    if (options_.codec.threads < 1) {
      return Status::InvalidArgument("codec threads must be at least 1, got ", options_.codec.threads);
    }
    const int threads = ResolveThreads(options_.concurrency);
    int pending = options_.max_pending_shards > 0 ? options_.max_pending_shards : 2 * threads;
    pool_ = std::make_unique<internal::WorkerPool>(threads, pending);
    threads_ = threads;
    max_in_flight_ = std::max(1, pending);
    // The records an append carries over: only those of a sidecar bound to
    // the dataset_info.json this filler starts from (a stale one is replaced).
    FileSystem* fs = dataset_->file_system();
    if (auto digest = sidecar_internal::InfoDigest(dataset_->root(), fs); digest.ok()) {
      carried_ = sidecar_internal::LoadChecksFor(dataset_->root(), *digest, [](const std::string&) {}, fs);
    }
    spool_ = std::make_unique<sidecar_internal::ChecksSpool>(dataset_->root(), fs);
    return Status::OK();
  }

  Status WriteExample(Split split, std::span<const ValueView> values,
                      const JsonValue* custom_metadata) {
    SEDPACK_RETURN_NOT_OK(Sticky());
    if (finished_) return Status::InvalidArgument("the filler is finished");
    // Cancellation stops the filler like a failure: no more shards, nothing added
    // to the metadata.
    SEDPACK_RETURN_NOT_OK(SetSticky(CheckCancelled()));
    const auto& schema = dataset_->schema();
    if (values.size() != schema.size()) {
      return Status::InvalidArgument("example has ", values.size(), " values but the schema has ",
                                     schema.size(), " attributes");
    }
    // Validate everything before any state changes: a rejected example leaves the
    // filler exactly as it was.
    std::uint64_t raw_bytes = 0;
    for (std::size_t j = 0; j < schema.size(); ++j) {
      SEDPACK_RETURN_NOT_OK(ValidateValue(schema[j], values[j]));
      raw_bytes += values[j].data.size();
    }
    if (custom_metadata && !custom_metadata->IsObject()) {
      return Status::InvalidArgument("shard custom_metadata must be a JSON object, got ",
                                     custom_metadata->text());
    }
    const bool new_meta = custom_metadata && !custom_metadata->IsEmptyObject();

    SplitState& st = StateFor(split);
    const auto& structure = dataset_->info().dataset_structure;
    if (st.writer) {
      const bool full = st.writer->num_examples() >= static_cast<std::size_t>(structure.examples_per_shard);
      const bool meta_changed = new_meta && !st.metadata.IsEmptyObject() &&
                                !st.metadata.Equals(*custom_metadata);
      const bool over_budget =
          st.writer->num_examples() > 0 &&
          st.writer->buffered_bytes() + st.writer->EstimateAddedBytes(values) >
              options_.shard_byte_budget;
      if (full || meta_changed || over_budget) SEDPACK_RETURN_NOT_OK(CloseShard(split, st));
    }
    if (!st.writer) {
      SEDPACK_ASSIGN_OR_RETURN(st.writer, MakeShardWriter(structure.shard_file_type,
                                                          structure.compression, dataset_->schema(),
                                                          options_.codec));
      st.metadata = JsonValue();
    }
    if (st.writer->EstimateAddedBytes(values) > options_.shard_byte_budget &&
        structure.shard_file_type == ShardFileType::kFb) {
      return Status::InvalidArgument("one example needs about ", st.writer->EstimateAddedBytes(values),
                                     " bytes, more than the shard byte budget of ",
                                     options_.shard_byte_budget);
    }
    if (new_meta) st.metadata = *custom_metadata;  // retroactive, as the reference does
    SEDPACK_RETURN_NOT_OK(st.writer->Add(values));
    ++examples_;
    bytes_ += raw_bytes;
    return Status::OK();
  }

  Status Finish() {
    if (finished_) return Status::InvalidArgument("Finish called twice");
    Status st = FinishWrites();
    if (!st.ok()) {
      // No worker may write after this, then nothing of this filler stays.
      WaitInFlightBelow(1);
      pool_->Wait();
      if (!on_written_) RemoveUncommitted();
    }
    return st;
  }

  void KeepWrittenShards(std::function<Status(const FilledShard&)> on_written) {
    on_written_ = std::move(on_written);
  }

  Status ResumeFrom(const std::vector<FilledShard>& kept) {
    for (const FilledShard& k : kept) {
      if (k.info.file_infos.empty()) return Status::InvalidArgument("a kept shard has no file");
      SplitState& st = StateFor(k.split);
      const std::string dir = ParentOf(k.info.file_infos[0].file_path);
      // Kept shards stay in their leaf folders; a leaf is complete once the
      // next kept shard (or the first new one) is in another folder.
      if (!st.results.empty() && dir != st.leaf_dir) SEDPACK_RETURN_NOT_OK(WriteLeafList(st));
      st.leaf_dir = dir;
      st.results.push_back(std::make_shared<ShardInfo>(k.info));
      st.next_first = k.first + static_cast<std::uint64_t>(k.info.number_of_examples);
      next_seq_ = std::max(next_seq_, k.seq + 1);
      std::lock_guard<std::mutex> lock(io_mu_);
      SpoolChecks(k.checks);
    }
    return Status::OK();
  }

  Status FinishWrites() {
    SEDPACK_RETURN_NOT_OK(Sticky());
    finished_ = true;
    // The last shards are compressed while nothing else runs: each may use
    // every thread (ISA-L GZIP/ZLIB), so the job does not end on one core.
    tail_threads_ = threads_;
    for (auto& [split, st] : splits_) {
      if (st.writer && st.writer->num_examples() > 0) SEDPACK_RETURN_NOT_OK(CloseShard(split, st));
      st.writer.reset();
    }
    WaitInFlightBelow(1);  // Doing the last file writes on this thread.
    pool_->Wait();
    SEDPACK_RETURN_NOT_OK(Sticky());
    SEDPACK_RETURN_NOT_OK(SetSticky(CheckCancelled()));

    for (Split split : split_order_) SEDPACK_RETURN_NOT_OK(WriteLeafList(splits_[split]));
    if (options_.auto_update_dataset && !updated_.empty()) {
      // WriteConfig either commits or leaves the metadata as it was.
      SEDPACK_RETURN_NOT_OK(SetSticky(dataset_->WriteConfig(updated_).status()));
      if (auto runs = checks_runs(); runs.ok()) {
        dataset_internal::CommitChecks(dataset_->root(), carried_.get(), *runs, dataset_->file_system());
      }
    }
    // Committed, or (without auto_update_dataset) the caller's to commit.
    handed_over_ = true;
    return Status::OK();
  }

  // Remove the shards and leaf lists this filler wrote (putting back a list it
  // extended), then the folders that leaves empty below the split folders. Best
  // effort: a file that cannot be removed is an orphan for `sedpack fix --gc`.
  void RemoveUncommitted() {
    std::vector<std::string> files;
    {
      std::lock_guard<std::mutex> lock(io_mu_);
      files.swap(written_shards_);
    }
    for (const std::string& rel : written_lists_) {
      // The shards of a leaf whose list was written are named by that list only.
      std::set<std::string> before;
      auto previous = previous_lists_.find(rel);
      if (previous != previous_lists_.end()) {
        if (auto old = ParseShardsList(previous->second, rel); old.ok()) {
          for (const auto& shard : old->shard_files) {
            for (const auto& f : shard.file_infos) before.insert(f.file_path);
          }
        }
      }
      if (auto text = dataset_->ReadText(rel, 1ULL << 32); text.ok()) {
        if (auto list = ParseShardsList(*text, rel); list.ok()) {
          for (const auto& shard : list->shard_files) {
            for (const auto& f : shard.file_infos) {
              if (!before.count(f.file_path)) files.push_back(f.file_path);
            }
          }
        }
      }
      if (previous != previous_lists_.end()) {
        (void)dataset_->WriteFile(rel, previous->second);
      } else {
        files.push_back(rel);
      }
    }
    written_lists_.clear();
    std::set<std::string> folders;
    for (const std::string& rel : files) {
      (void)RemoveTree(dataset_->PathOf(rel), dataset_->file_system());
      for (std::string dir = ParentOf(rel); dir.find('/') != std::string::npos; dir = ParentOf(dir)) {
        folders.insert(dir);
      }
    }
    // Deepest first; a folder still holding something stays.
    for (auto it = folders.rbegin(); it != folders.rend(); ++it) {
      (void)FileSystemOr(dataset_->file_system()).Rmdir(dataset_->PathOf(*it).c_str());
    }
  }

  static std::string ParentOf(const std::string& rel) {
    const std::size_t slash = rel.rfind('/');
    return slash == std::string::npos ? std::string() : rel.substr(0, slash);
  }

  const std::vector<ShardListInfo>& updated() const { return updated_; }
  // Every record spooled, as runs to merge; an error if the spool could not
  // keep them all (then no sidecar is written: reads check the hashes).
  Result<std::vector<sidecar_internal::ChecksRun>> checks_runs() {
    std::lock_guard<std::mutex> lock(io_mu_);
    if (spool_status_.ok()) spool_status_ = spool_->Flush();
    if (!spool_status_.ok()) return spool_status_;
    return spool_->runs();
  }
  const sidecar_internal::ChecksSidecar* carried() const { return carried_.get(); }
  std::uint64_t examples() const { return examples_; }
  std::uint64_t bytes() const { return bytes_; }

 private:
  struct SplitState {
    std::unique_ptr<ShardWriter> writer;
    JsonValue metadata;
    std::string leaf_dir;  // folder of the open leaf: its shards and its list
    // One slot per submitted shard of the open leaf, in submission order;
    // filled by the workers.
    std::vector<std::shared_ptr<ShardInfo>> results;
    std::uint64_t next_first = 0;  // first example of the next shard closed, in this split
  };

  SplitState& StateFor(Split split) {
    auto it = splits_.find(split);
    if (it == splits_.end()) {
      split_order_.push_back(split);
      it = splits_.emplace(split, SplitState{}).first;
    }
    return it->second;
  }

  // Write the list of the split's open leaf folder (every shard of it written:
  // the caller has drained the workers) and record its ShardListInfo. The
  // folder's shards are then forgotten: memory holds one leaf per split.
  Status WriteLeafList(SplitState& st) {
    if (st.results.empty()) return Status::OK();
    const auto& algos = dataset_->info().dataset_structure.hash_checksum_algorithms;
    ShardsList list;
    const std::string list_path = st.leaf_dir + "/" + std::string(kListName);
    if (PathExists(dataset_->PathOf(list_path), dataset_->file_system())) {
      // A folder this filler did not make (a fixed relative_path_from_split
      // reused): extend its list, and keep the old text to put back on failure.
      SEDPACK_ASSIGN_OR_RETURN(std::string previous, dataset_->ReadText(list_path, 1ULL << 32));
      SEDPACK_ASSIGN_OR_RETURN(list, ParseShardsList(previous, list_path));
      previous_lists_[list_path] = std::move(previous);
    } else {
      list.relative_path_self = list_path;
    }
    for (auto& shard : st.results) {
      list.number_of_examples += shard->number_of_examples;
      list.shard_files.push_back(std::move(*shard));
    }
    st.results.clear();
    const std::string text = SerializeShardsList(list);
    AtomicWriteOptions wopts;
    wopts.sync = options_.sync;
    written_lists_.push_back(list_path);
    SEDPACK_RETURN_NOT_OK(SetSticky(dataset_->WriteFile(list_path, text, wopts)));
    {
      // The list names them now; RemoveUncommitted finds them through it.
      std::lock_guard<std::mutex> lock(io_mu_);
      const std::string prefix = st.leaf_dir + "/";
      std::erase_if(written_shards_, [&](const std::string& p) {
        return p.compare(0, prefix.size(), prefix) == 0 && p.find('/', prefix.size()) == std::string::npos;
      });
    }
    ShardListInfo info;
    info.shard_list_info_file.file_path = list_path;
    SEDPACK_ASSIGN_OR_RETURN(
        info.shard_list_info_file.hash_checksums,
        HashBytes(algos, std::as_bytes(std::span<const char>(text.data(), text.size()))));
    info.number_of_examples = list.number_of_examples;
    std::int64_t shards = static_cast<std::int64_t>(list.shard_files.size());
    for (const auto& c : list.children_shard_lists) shards += c.number_of_shards;
    info.number_of_shards = shards;
    updated_.push_back(std::move(info));
    return Status::OK();
  }

  Status CloseShard(Split split, SplitState& st) {
    std::vector<std::string> comps = {std::string(SplitName(split))};
    comps.insert(comps.end(), rel_components_.begin(), rel_components_.end());
    for (auto& c : PathComponents(paths_.Next())) comps.push_back(std::move(c));
    const auto& structure = dataset_->info().dataset_structure;
    const std::string rel_path =
        JoinPath(comps) + "." + std::string(ShardFileTypeName(structure.shard_file_type));
    comps.pop_back();
    std::string dir = JoinPath(comps);
    if (!st.results.empty() && dir != st.leaf_dir) {
      // The path generator moved on to a new leaf folder: the old one is full.
      // Its list needs every shard of it written, so let the workers drain
      // (a pause of a few shards once every max_branching shards).
      WaitInFlightBelow(1);
      pool_->Wait();
      SEDPACK_RETURN_NOT_OK(Sticky());
      SEDPACK_RETURN_NOT_OK(WriteLeafList(st));
    }
    st.leaf_dir = std::move(dir);
    auto slot = std::make_shared<ShardInfo>();
    slot->number_of_examples = static_cast<std::int64_t>(st.writer->num_examples());
    const Unit unit{split, next_seq_++, st.next_first};
    st.next_first += st.writer->num_examples();
    slot->custom_metadata = st.metadata;
    slot->file_infos.push_back(FileInfo{rel_path, {}});
    st.results.push_back(slot);

    // The job owns the writer; std::function needs a copyable callable.
    auto writer = std::shared_ptr<ShardWriter>(std::move(st.writer));
    const std::string abs_path = dataset_->PathOf(rel_path);
    const auto algos = structure.hash_checksum_algorithms;
    // Wait for a free slot here (not inside Submit) so that this thread can do
    // finished shards' file writes meanwhile.
    WaitInFlightBelow(max_in_flight_);
    {
      std::lock_guard<std::mutex> lock(io_mu_);
      ++in_flight_;
    }
    const int codec_threads = tail_threads_;
    pool_->Submit([this, writer, slot, rel_path, abs_path, algos, codec_threads, unit] {
      PendingWrite w{rel_path, abs_path, {}, {}, slot, {}, unit, 0};
      if (!Sticky().ok()) return ShardDone();  // another shard already failed: do no more work
      if (Status c = CheckCancelled(); !c.ok()) {
        (void)SetSticky(c);
        return ShardDone();
      }
      if (shard_internal::ShardFinishStreams(*writer)) {
        return StreamShard(*writer, std::move(w), algos, codec_threads);
      }
      // Compressed straight into pooled memory, hashed from it once; the
      // write() then goes from the same memory, without any copy.
      Status st = shard_internal::FinishShardToBuffer(*writer, &w.bytes);
      if (!st.ok()) {
        (void)SetSticky(st.WithPrefix(abs_path + ": "));
        return ShardDone();
      }
      auto hashes = HashBytes(algos, w.bytes.span());
      if (!hashes.ok()) {
        (void)SetSticky(hashes.status());
        return ShardDone();
      }
      w.hashes = std::move(*hashes);
      w.checks = dataset_internal::MakeShardChecks(rel_path, w.bytes.size(), codecs_internal::FastChecksum(w.bytes.span()),
                                                   shard_internal::TakeShardWriteChecks(*writer));
      {
        // If the filling thread is idle, blocked until a worker frees a slot,
        // it does the file write, and this worker goes on compressing.
        std::lock_guard<std::mutex> lock(io_mu_);
        if (caller_waiting_ > 0 && io_queue_.empty()) {
          try {
            io_queue_.push_back(std::move(w));  // Strong guarantee: `w` intact if it throws.
            io_cv_.notify_all();
            return;
          } catch (const std::bad_alloc&) {
            // Write it here instead.
          }
        }
      }
      WriteShard(std::move(w));
    });
    return Sticky();
  }

  // Where a shard stands in the filler's output, for a job journal.
  struct Unit {
    Split split;
    std::uint64_t seq;
    std::uint64_t first;
  };

  // A shard whose bytes are ready (compressed and hashed) but not yet written.
  struct PendingWrite {
    std::string rel_path;
    std::string path;
    codecs_internal::ByteBuffer bytes;
    std::vector<std::string> hashes;
    std::shared_ptr<ShardInfo> slot;
    sidecar_internal::ShardChecks checks;
    Unit unit;
    std::uint64_t size;
  };

  AtomicWriteOptions ShardWriteOptions() const {
    AtomicWriteOptions wopts;
    wopts.sync = options_.sync;
    wopts.no_replace = true;  // random names never collide in practice; never clobber
    wopts.file_system = dataset_->file_system();
    return wopts;
  }

  // After a shard's write: on success its hashes go into its slot and its path
  // into written_shards_; a failure becomes the sticky status.
  void RecordShardWrite(const Status& s, PendingWrite& w, std::vector<std::string> hashes) {
    if (!s.ok()) {
      (void)SetSticky(s);
      return;
    }
    w.slot->file_infos[0].hash_checksums = std::move(hashes);
    if (on_written_) {
      const FilledShard done{w.unit.split, w.unit.seq, w.unit.first, w.size, *w.slot, w.checks};
      if (Status j = on_written_(done); !j.ok()) (void)SetSticky(j);
    }
    TestShardWritten();  // a signal test's handshake (io/kill_point.h)
    std::lock_guard<std::mutex> lock(io_mu_);
    written_shards_.push_back(w.rel_path);
    SpoolChecks(w.checks);
  }

  // Under io_mu_. The sidecar is an aid, not the data: a record that cannot be
  // spooled (a full disk) only means that this job writes no sidecar.
  void SpoolChecks(const sidecar_internal::ShardChecks& checks) {
    if (spool_status_.ok()) spool_status_ = spool_->Add(checks);
  }

  void WriteShard(PendingWrite w) {
    if (Sticky().ok()) {
      // The split folder (or the writer's sub-folder) may be a symbolic link
      // leading out of the dataset; shards are not written through it.
      Status s = CheckStaysBeneath(dataset_->root(), w.rel_path, dataset_->file_system());
      if (s.ok()) s = WriteFileAtomic(w.path, w.bytes.span(), ShardWriteOptions());
      w.size = w.bytes.size();
      RecordShardWrite(s, w, std::move(w.hashes));
    }
    w.bytes = {};  // Back to the pool before the slot is freed.
    ShardDone();
  }

  // Compress, hash and write in one pass, piece by piece (a 4 MiB input segment
  // at a time at ISA-L levels, 1 MiB of output for zlib's), on this worker: no
  // buffer for the whole compressed file.
  void StreamShard(ShardWriter& writer, PendingWrite w, const std::vector<HashAlgorithm>& algos,
                   int codec_threads) {
    Status s = CheckStaysBeneath(dataset_->root(), w.rel_path, dataset_->file_system());
    Result<MultiHasher> hasher = MultiHasher::Make(algos);
    if (s.ok()) s = hasher.status();
    codecs_internal::FastChecksummer fast;
    std::uint64_t stored = 0;
    if (s.ok()) {
      s = WriteFileAtomicStreamed(
          w.path,
          [&](const ByteSink& file) -> Status {
            Status sink_status;
            Status st = shard_internal::FinishShardToSink(
                writer,
                [&](std::span<const std::byte> piece) {
                  hasher->Update(piece);
                  fast.Update(piece);
                  stored += piece.size();
                  sink_status = file(piece);
                  return sink_status;
                },
                codec_threads);
            // The file's own errors name it; the encoder's get the shard's path.
            if (!st.ok() && sink_status.ok()) return st.WithPrefix(w.path + ": ");
            return st;
          },
          ShardWriteOptions());
    }
    w.size = stored;
    if (s.ok()) {
      w.checks = dataset_internal::MakeShardChecks(w.rel_path, stored, fast.Digest(),
                                                   shard_internal::TakeShardWriteChecks(writer));
    }
    RecordShardWrite(s, w, s.ok() ? hasher->FinishHex() : std::vector<std::string>{});
    ShardDone();
  }

  void ShardDone() {
    std::lock_guard<std::mutex> lock(io_mu_);
    --in_flight_;
    io_cv_.notify_all();
  }

  // Block (on the filling thread) until fewer than `limit` shards are in
  // flight, doing the file writes workers hand over meanwhile. Returns with
  // no handed-over write left behind.
  void WaitInFlightBelow(int limit) {
    std::unique_lock<std::mutex> lock(io_mu_);
    for (;;) {
      if (!io_queue_.empty()) {
        PendingWrite w = std::move(io_queue_.front());
        io_queue_.pop_front();
        lock.unlock();
        WriteShard(std::move(w));
        lock.lock();
        continue;
      }
      if (in_flight_ < limit) return;
      ++caller_waiting_;
      io_cv_.wait(lock);
      --caller_waiting_;
    }
  }

  Status Sticky() {
    std::lock_guard<std::mutex> lock(status_mu_);
    return status_;
  }
  Status SetSticky(Status s) {
    if (!s.ok()) {
      std::lock_guard<std::mutex> lock(status_mu_);
      if (status_.ok()) status_ = s;
    }
    return s;
  }

  std::shared_ptr<Dataset> dataset_;
  FillerOptions options_;
  std::vector<std::string> rel_components_;
  PathGenerator paths_;  // levels 4, options_.max_branching: set in Init
  std::map<Split, SplitState> splits_;
  std::vector<Split> split_order_;
  std::vector<ShardListInfo> updated_;
  std::unique_ptr<internal::WorkerPool> pool_;
  // Shards submitted and not yet written (or failed), at most max_in_flight_;
  // writes handed to the filling thread; whether it is waiting. All under io_mu_.
  std::mutex io_mu_;
  std::condition_variable io_cv_;
  int in_flight_ = 0;
  int max_in_flight_ = 1;
  int threads_ = 1;       // The pool's.
  int tail_threads_ = 1;  // Codec threads per shard: threads_ once Finish closes the last shards.
  int caller_waiting_ = 0;
  std::deque<PendingWrite> io_queue_;
  // Dataset-relative paths of the shards written so far (under io_mu_) and the
  // leaf lists written by Finish, with the previous text of a list it extended.
  std::vector<std::string> written_shards_;
  // The checks records of the shards written, on disk in sorted runs (under io_mu_).
  std::unique_ptr<sidecar_internal::ChecksSpool> spool_;
  Status spool_status_;
  std::shared_ptr<const sidecar_internal::ChecksSidecar> carried_;
  std::vector<std::string> written_lists_;
  std::map<std::string, std::string> previous_lists_;
  bool handed_over_ = false;
  std::uint64_t next_seq_ = 0;  // close order of the next shard
  std::function<Status(const FilledShard&)> on_written_;  // set: journaled, written shards are kept
  std::mutex status_mu_;
  Status status_;
  bool finished_ = false;
  std::uint64_t examples_ = 0;
  std::uint64_t bytes_ = 0;
};

Result<std::unique_ptr<Filler>> Filler::Make(std::shared_ptr<Dataset> dataset, FillerOptions options) {
  if (!dataset) return Status::InvalidArgument("Filler::Make: null dataset");
  if (dataset->pack()) {
    return Status::InvalidArgument(dataset->root(), ": a packed dataset is read-only (sedpack unpack it first)");
  }
  auto impl = std::make_unique<Impl>(std::move(dataset), std::move(options));
  SEDPACK_RETURN_NOT_OK(impl->Init());
  return std::unique_ptr<Filler>(new Filler(std::move(impl)));
}

Filler::Filler(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Filler::~Filler() = default;

Status Filler::WriteExample(Split split, std::span<const ValueView> values,
                            const JsonValue* custom_metadata) {
  return impl_->WriteExample(split, values, custom_metadata);
}
Status Filler::Finish() { return impl_->Finish(); }
const std::vector<ShardListInfo>& Filler::updated_infos() const { return impl_->updated(); }
std::uint64_t Filler::examples_written() const { return impl_->examples(); }
std::uint64_t Filler::bytes_written() const { return impl_->bytes(); }

}  // namespace sedpack

namespace sedpack {

Result<std::vector<sidecar_internal::ChecksRun>> FillerAccess::ChecksRuns(Filler& filler) {
  return filler.impl_->checks_runs();
}
const sidecar_internal::ChecksSidecar* FillerAccess::Carried(const Filler& filler) { return filler.impl_->carried(); }
void FillerAccess::KeepWrittenShards(Filler& filler, std::function<Status(const FilledShard&)> on_written) {
  filler.impl_->KeepWrittenShards(std::move(on_written));
}
Status FillerAccess::ResumeFrom(Filler& filler, const std::vector<FilledShard>& kept) {
  return filler.impl_->ResumeFrom(kept);
}

}  // namespace sedpack
