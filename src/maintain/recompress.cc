// SPDX-License-Identifier: Apache-2.0
#include "sedpack/maintain/recompress.h"
#include "sedpack/io/file_system.h"

#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <filesystem>
#include <map>
#include <optional>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>

#include "codecs/decode_points_internal.h"
#include "comm/progress_internal.h"
#include "dataset/checks_write_internal.h"
#include "shard/shard_buffer.h"
#include "sidecar/checks_internal.h"
#include "sidecar/sidecar_files.h"
#include "parallel/worker_pool.h"
#include "check/check_wire_internal.h"
#include "sedpack/check/steps.h"
#include "dataset/shards_tree_internal.h"
#include "sedpack/codecs/hash.h"
#include "sedpack/check/check.h"
#include "sedpack/dataset/dataset.h"
#include "sedpack/io/file.h"
#include "io/kill_point.h"
#include "journal/entries_internal.h"
#include "sidecar/sidecar_internal.h"
#include "io/output_folder.h"
#include "sedpack/cancel.h"
#include "sedpack/maintain/content.h"
#include "sedpack/metadata/paths.h"
#include "sedpack/shard/shard.h"

namespace sedpack {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

// Levels: hot and general are the reference's defaults; hot-archive is
// LZ4HC's default level 9 (level 12 writes ~4x slower for ~1% less);
// portable is GZIP's measured default (ISA-L level 1: ~20x zlib -9's speed for
// ~2% more bytes, docs/performance.md, "Compression").
constexpr CodecProfile kProfiles[] = {
    {"hot", "training path: fastest decompression (LZ4)", Compression::kLz4, Compression::kNone,
     Compression::kNone, 0},
    {"hot-archive", "training path, kept long: LZ4HC level 9, read as fast as hot, smaller, slow to write",
     Compression::kLz4, Compression::kNone, Compression::kNone, 9},
    {"general", "general use: ZSTD level 3, good ratio at high speed", Compression::kZstd, Compression::kZip,
     Compression::kGzip, 3},
    {"archive", "archive: LZMA (.xz), smallest files, slow to write", Compression::kLzma, Compression::kZip,
     Compression::kGzip, 6},
    {"portable", "portability: GZIP, read by every sedpack reader (also the Rust one)", Compression::kGzip,
     Compression::kZip, Compression::kGzip, kDefaultCodecLevel},
};


std::string EncodeHashes(const std::map<std::string, std::vector<std::string>>& m) {
  std::string out;
  for (const auto& [path, hashes] : m) {
    out += path;
    for (const auto& h : hashes) out += "\t" + h;
    out += "\n";
  }
  return out;
}

void DecodeHashes(const std::string& text, std::map<std::string, std::vector<std::string>>* m) {
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    std::vector<std::string> fields;
    std::size_t pos = 0;
    for (;;) {
      const std::size_t tab = line.find('\t', pos);
      fields.push_back(line.substr(pos, tab == std::string::npos ? std::string::npos : tab - pos));
      if (tab == std::string::npos) break;
      pos = tab + 1;
    }
    const std::string path = fields.front();
    fields.erase(fields.begin());
    (*m)[path] = std::move(fields);
  }
}

namespace journal = journal_internal;
constexpr std::string_view kRecompressedKind = "recompressed shard";

// What identifies a recompress job's output: the same call finds its stopped
// run again, and a call that would write other bytes is refused.
struct RecompressJob {
  std::string id;
  journal::JobParameters parameters;
};

Result<RecompressJob> RecompressJobFor(const Dataset& ds, const std::string& staging, const RecompressOptions& o,
                                       int ranks) {
  SEDPACK_ASSIGN_OR_RETURN(DatasetInfoDigest sha, DatasetInfoSha256(ds.root()));
  std::string algos;
  for (HashAlgorithm h : ds.info().dataset_structure.hash_checksum_algorithms) {
    algos += (algos.empty() ? "" : ",") + std::string(HashAlgorithmName(h));
  }
  RecompressJob job;
  job.parameters = {{"job", "recompress"},
                    {"source dataset_info.json sha256", DigestHex(sha)},
                    {"compression", o.compression == Compression::kNone ? "none" : std::string(CompressionName(o.compression))},
                    {"level", o.codec.level == kDefaultCodecLevel ? "default" : std::to_string(o.codec.level)},
                    {"codec threads", std::to_string(o.codec.threads)},
                    {"hash checksums", algos},
                    {"ranks", std::to_string(ranks)}};
  job.id = journal::JobIdFor("recompress\n" + fs::absolute(ds.root()).lexically_normal().string() + "\n" +
                             fs::absolute(staging).lexically_normal().string());
  return job;
}

// One rewritten shard as journaled: enough to put it into the new tree
// without reading its source again.
struct RewrittenShard {
  std::string path;
  std::uint64_t size = 0;
  std::uint64_t checksum = 0;  // codecs_internal::FastChecksum of its bytes
  std::string digest;
  std::string checks;  // its encoded checks sidecar record
  std::vector<std::string> hashes;
};

bool IsCount(const std::string& s) {
  return !s.empty() && s.size() <= 20 && s.find_first_not_of("0123456789") == std::string::npos;
}

journal::JournalEntry EncodeRewritten(const RewrittenShard& r) {
  std::vector<std::string> fields = {r.path, std::to_string(r.size), std::to_string(r.checksum), r.digest, r.checks};
  fields.insert(fields.end(), r.hashes.begin(), r.hashes.end());
  return journal::JournalEntry{std::string(kRecompressedKind), journal::PackFields(fields)};
}

std::optional<RewrittenShard> DecodeRewritten(const journal::JournalEntry& e) {
  std::vector<std::string> f;
  if (e.kind != kRecompressedKind || !journal::UnpackFields(e.data, &f) || f.size() < 6 || f[0].empty() ||
      !IsCount(f[1]) || !IsCount(f[2])) {
    return std::nullopt;
  }
  RewrittenShard r{f[0], std::stoull(f[1]), std::stoull(f[2]), f[3], f[4], {f.begin() + 5, f.end()}};
  return r;
}

// A journaled shard is kept only if its file in the staging tree still has the
// recorded size and checksum (a later edit, a torn disk, a stale entry: it is
// rewritten). The fast checksum of the checks sidecar, not the recorded hashes:
// a resume reads the kept bytes once at memory speed.
bool StillRewritten(const std::string& staging, const RewrittenShard& r) {
  auto bytes = ReadFileBytes(JoinRoot(staging, r.path));
  return bytes.ok() && bytes->size() == r.size && codecs_internal::FastChecksum(*bytes) == r.checksum;
}

// A stopped run's staging tree keeps only what its journals name under the
// splits (a shard written but not journaled, a temporary file of a cut write,
// the lists of a cut step 3 go: step 3 writes the lists again), and no
// temporary file anywhere, so that nothing of it ends up in the new dataset.
Status PruneStaging(FileSystem& files, const std::string& staging, const std::vector<journal::JournalEntry>& entries) {
  std::set<std::string> keep, splits;
  for (const auto& e : entries) {
    if (auto r = DecodeRewritten(e)) keep.insert(r->path);
  }
  for (Split s : AllSplits()) splits.insert(std::string(SplitName(s)));
  std::vector<std::string> remove;
  SEDPACK_RETURN_NOT_OK(WalkTree(staging, [&](const TreeEntry& e, bool*) -> Status {
    if (e.type != FileType::kRegular) return Status::OK();
    const std::string top = e.relative.substr(0, e.relative.find('/'));
    const bool in_split = splits.count(top) && top != e.relative;
    if ((in_split && !keep.count(e.relative)) || IsAtomicWriteTempName(fs::path(e.relative).filename().string())) {
      remove.push_back(e.relative);
    }
    return Status::OK();
  }));
  for (const std::string& rel : remove) {
    const std::string path = JoinRoot(staging, rel);
    if (files.Unlink(path.c_str()) != 0 && errno != ENOENT) {
      return Status::IOError(path, ": cannot remove: ", std::strerror(errno));
    }
  }
  return Status::OK();
}

// Rewrites one shard into the staging tree; returns its new hashes.
Result<std::vector<std::string>> RecompressShard(const Dataset& ds, const ShardCheckTask& task,
                                                 Compression to, const CodecOptions& codec,
                                                 const std::string& staging, std::uint64_t* bytes_after,
                                                 std::string* content_digest, sidecar_internal::ShardChecks* checks) {
  const DatasetStructure& st = ds.info().dataset_structure;
  const auto& algos = st.hash_checksum_algorithms;
  SEDPACK_ASSIGN_OR_RETURN(std::vector<std::byte> bytes, ds.ReadBytes(task.path));
  SEDPACK_ASSIGN_OR_RETURN(std::vector<std::string> old_hashes, HashBytes(algos, bytes));
  if (old_hashes != task.expected) {
    return Status::Corruption(task.path, ": the file does not match its recorded hashes (",
                              task.list_path, "); recompress refuses to re-stamp corrupt data");
  }
  auto decoded_or = DecodeShard(st.shard_file_type, st.compression, ds.schema(), std::move(bytes));
  if (!decoded_or.ok()) return decoded_or.status().WithPrefix(task.path + ": ");
  auto decoded = std::move(decoded_or).value();
  if (static_cast<std::int64_t>(decoded->num_examples()) != task.number_of_examples) {
    return Status::Corruption(task.path, ": holds ", decoded->num_examples(), " examples, ", task.list_path,
                              " says ", task.number_of_examples);
  }
  *content_digest = ShardContentDigest(ds.schema(), *decoded);
  SEDPACK_ASSIGN_OR_RETURN(auto writer, MakeShardWriter(st.shard_file_type, to, ds.schema(), codec));
  std::vector<ValueView> values(decoded->num_attributes());
  for (std::size_t e = 0; e < decoded->num_examples(); ++e) {
    for (std::size_t a = 0; a < values.size(); ++a) values[a] = decoded->Get(e, a);
    SEDPACK_RETURN_NOT_OK(writer->Add(values).WithPrefix(task.path + ": "));
  }
  SEDPACK_ASSIGN_OR_RETURN(std::vector<std::byte> out, writer->Finish());
  *bytes_after += out.size();
  *checks = dataset_internal::MakeShardChecks(task.path, out.size(), codecs_internal::FastChecksum(out),
                                              shard_internal::TakeShardWriteChecks(*writer));
  const std::string target = JoinRoot(staging, task.path);
  SEDPACK_RETURN_NOT_OK(CreateDirectories(fs::path(target).parent_path().string()));
  // Not synced, journaled or not: a journaled entry is checked against this file before a rerun keeps it.
  SEDPACK_RETURN_NOT_OK(WriteFileAtomic(target, out));
  return HashBytes(algos, out);
}

// Rewrites a split's lists into the staging tree with new shard and child
// hashes, children before parents.
class ListRewriter : public dataset_internal::ShardsTreeVisitor {
 public:
  ListRewriter(const Dataset& ds, const std::map<std::string, std::vector<std::string>>& shard_hashes,
               const std::string& staging, const RecompressOptions& o)
      : ds_(ds), shard_hashes_(shard_hashes), staging_(staging), o_(o) {}

  Status Enter(dataset_internal::ShardsTreeNode& node) override {
    for (ShardInfo& shard : node.list.shard_files) {
      if (shard.file_infos.empty()) continue;
      const auto it = shard_hashes_.find(shard.file_infos[0].file_path);
      if (it == shard_hashes_.end()) {
        return Status::Internal(shard.file_infos[0].file_path, ": no new hashes");
      }
      shard.file_infos[0].hash_checksums = it->second;
    }
    return Status::OK();
  }

  Status Leave(dataset_internal::ShardsTreeNode& node) override {
    const std::string& rel = node.path();
    for (ShardListInfo& child : node.list.children_shard_lists) {
      SEDPACK_ASSIGN_OR_RETURN(child.shard_list_info_file.hash_checksums,
                               TakeHashes(child.shard_list_info_file.file_path));
    }
    if (o_.fault) SEDPACK_RETURN_NOT_OK(o_.fault("list " + rel));
    const std::string text = SerializeShardsList(node.list);
    const std::string target = JoinRoot(staging_, rel);
    SEDPACK_RETURN_NOT_OK(CreateDirectories(fs::path(target).parent_path().string()));
    SEDPACK_RETURN_NOT_OK(WriteFileAtomic(target, text));
    SEDPACK_ASSIGN_OR_RETURN(new_list_hashes_[rel],
                             HashBytes(ds_.info().dataset_structure.hash_checksum_algorithms,
                                       std::as_bytes(std::span<const char>(text.data(), text.size()))));
    return Status::OK();
  }

  /// The hashes of the new text of the list `rel` (once its subtree is walked).
  Result<std::vector<std::string>> TakeHashes(const std::string& rel) {
    auto node = new_list_hashes_.extract(rel);
    if (!node) return Status::Internal(rel, ": not rewritten");
    return std::move(node.mapped());
  }

 private:
  const Dataset& ds_;
  const std::map<std::string, std::vector<std::string>>& shard_hashes_;
  const std::string& staging_;
  const RecompressOptions& o_;
  std::map<std::string, std::vector<std::string>> new_list_hashes_;  // lists whose parent is not done
};

// Files outside the split folders (and not dataset_info.json) come along:
// hard links where possible, else copies.
Status CarryOver(const Dataset& ds, const std::string& staging) {
  std::set<std::string> splits;
  for (Split s : AllSplits()) splits.insert(std::string(SplitName(s)));
  FileSystem& files = FileSystemOr(ds.file_system());
  Status carried;
  // A folder that cannot be listed ends the walk without an error, as it always
  // has; a file that cannot be carried over fails it.
  (void)WalkTree(ds.root(), [&](const TreeEntry& e, bool* descend) -> Status {
    if (e.depth == 0 && (splits.count(e.relative) || e.relative == "dataset_info.json")) {
      *descend = false;
      return Status::OK();
    }
    const std::string source = JoinRoot(ds.root(), e.relative);
    const fs::path target = fs::path(staging) / e.relative;
    const auto carry_error = [&](const std::string& why) {
      carried = Status::IOError(source, ": cannot carry over: ", why);
      return carried;
    };
    const auto fail = [&](Status st) {
      carried = std::move(st);
      return carried;
    };
    if (e.type == FileType::kSymlink) {
      // Carried over as the link it is: copying what it points to could read a
      // file outside the dataset into it.
      if (Status st = CreateDirectories(target.parent_path().string()); !st.ok()) return fail(st);
      std::string link_target;
      if (files.ReadLink(source.c_str(), &link_target) != 0) return carry_error(std::strerror(errno));
      if (files.Symlink(link_target.c_str(), target.c_str()) != 0) return carry_error(std::strerror(errno));
    } else if (e.type == FileType::kDirectory) {
      if (Status st = CreateDirectories(target.string()); !st.ok()) return fail(st);
    } else if (e.type == FileType::kRegular) {
      if (Status st = CreateDirectories(target.parent_path().string()); !st.ok()) return fail(st);
      if (files.Link(source.c_str(), target.c_str()) != 0) {
        // Another file system under the staging folder: copy.
        auto bytes = ReadFileBytes(source);
        if (!bytes.ok()) return fail(bytes.status());
        if (Status st = WriteFileAtomic(target.string(), *bytes); !st.ok()) return fail(st);
      }
    }
    return Status::OK();
  });
  return carried;
}

Status Exchange(FileSystem& files, const std::string& a, const std::string& b) {
  if (files.RenameExchange(a.c_str(), b.c_str()) != 0) {
    const int err = errno;
    return Status::IOError("cannot swap ", a, " and ", b, " atomically (renameat2 RENAME_EXCHANGE: ",
                           std::strerror(err), "); use --out DIR to write a recompressed copy instead");
  }
  return Status::OK();
}

}  // namespace

std::span<const CodecProfile> CodecProfiles() { return kProfiles; }

Result<CodecProfile> FindCodecProfile(std::string_view name) {
  std::string names;
  for (const CodecProfile& p : kProfiles) {
    if (p.name == name) return p;
    names += (names.empty() ? "" : ", ") + std::string(p.name);
  }
  return Status::InvalidArgument("unknown codec profile \"", name, "\" (profiles: ", names, ")");
}

std::string RecompressStagingPath(const std::string& root) {
  fs::path p = fs::absolute(root).lexically_normal();
  if (!p.has_filename()) p = p.parent_path();
  return (p.parent_path() / ("." + p.filename().string() + ".recompress")).string();
}

namespace {

// What Recompress made on rank 0 that a failed or interrupted run must take away.
struct StagingState {
  bool ours = false;       // the staging folder was prepared by this run
  bool existed = false;    // ... and was there (empty) before it
  bool exchanged = false;  // the new tree is in place: nothing to undo
};

// Step 1 of a recompress, on rank 0: open, walk the metadata (it must check
// clean), prepare the staging folder and cut the shards into one part per rank.
Status PrepareRecompress(const std::string& root, const RecompressOptions& o, const std::string& staging,
                         int ranks, std::shared_ptr<Dataset>& ds, MetadataWalk& walk, RecompressSummary& summary,
                         StagingState* state, std::vector<std::string>& parts) {
  const bool in_place = o.out.empty();
  OpenOptions open;
  open.file_system = o.file_system;
  SEDPACK_ASSIGN_OR_RETURN(ds, Dataset::Open(root, open));
  // A stopped run of the same job keeps its staging tree; one with other
  // parameters is refused before anything is removed.
  bool resuming = false;
  if (o.journal && PathExists(staging)) {
    SEDPACK_ASSIGN_OR_RETURN(RecompressJob job, RecompressJobFor(*ds, staging, o, ranks));
    if (o.restart) {
      SEDPACK_ASSIGN_OR_RETURN(auto journals, journal::ListJournals(staging, o.file_system));
      for (const auto& j : journals) {
        if (j.job_id == job.id) {
          SEDPACK_RETURN_NOT_OK(RemoveTree(staging));
          break;
        }
      }
    } else {
      SEDPACK_ASSIGN_OR_RETURN(auto recorded,
                               journal::ReadJobEntries(staging, job.id, job.parameters, "recompress", o.file_system));
      if (recorded.found) SEDPACK_RETURN_NOT_OK(PruneStaging(FileSystemOr(o.file_system), staging, recorded.entries));
      resuming = recorded.found;
    }
  }
  DatasetStructure next = ds->info().dataset_structure;
  next.compression = o.compression;
  SEDPACK_RETURN_NOT_OK(Dataset::ValidateStructure(next).WithPrefix("recompress: "));
  SEDPACK_RETURN_NOT_OK(ValidateCodecLevel(o.compression, o.codec.level).WithPrefix("recompress: "));
  if (o.codec.threads < 1) {
    return Status::InvalidArgument("recompress: codec threads must be at least 1, got ", o.codec.threads);
  }
  SEDPACK_ASSIGN_OR_RETURN(walk, WalkMetadata(*ds, CheckOptions{}));
  for (const CheckProblem& p : walk.report.problems) {
    if (!p.warning()) {
      return Status::Corruption(root, ": the metadata does not check clean (", p.path, ": ", p.message,
                                "); run `sedpack verify` first");
    }
    if (p.kind == CheckProblem::Kind::kOrphan) ++summary.orphans_dropped;
  }
  if (resuming) {
  } else if (in_place) {
    SEDPACK_RETURN_NOT_OK(RemoveTree(staging));  // left by an interrupted run
  } else if (PathExists(staging) && !IsEmptyDirectory(staging)) {
    return Status::AlreadyExists(staging, " already exists; choose a new or empty folder");
  }
  SEDPACK_RETURN_NOT_OK(CheckCancelled());
  state->existed = io_internal::OutputExists(staging);
  state->ours = true;
  SEDPACK_RETURN_NOT_OK(CreateDirectories(staging));
  for (auto& p : PartitionShardTasks(walk.shards, ranks)) parts.push_back(EncodeShardTasks(p));
  return Status::OK();
}

Status WriteRecompressedChecks(const std::string& staging, const std::string& info_text,
                               const std::vector<std::string>& gathered) {
  std::vector<sidecar_internal::ShardChecks> all;
  for (const std::string& g : gathered) {
    SEDPACK_ASSIGN_OR_RETURN(auto records, sidecar_internal::DecodeShardChecksList(
                                               std::as_bytes(std::span<const char>(g.data(), g.size()))));
    for (auto& r : records) all.push_back(std::move(r));
  }
  const DatasetInfoDigest digest = Sha256Of(std::as_bytes(std::span<const char>(info_text.data(), info_text.size())));
  return sidecar_internal::WriteChecks(staging, digest, nullptr, all);
}

// Step 3 of a recompress, on rank 0: the new metadata tree from every rank's
// new hashes, the files that come along, the content digests; then the swap.
Status WriteRecompressedTree(const Dataset& dataset, const std::string& root, const RecompressOptions& o,
                             const std::string& staging, const std::vector<std::string>& gathered,
                             const std::vector<std::string>& gathered_digests,
                             const std::vector<std::string>& gathered_checks, const std::string& job_id,
                             StagingState* state) {
  const Dataset* ds = &dataset;
  const bool in_place = o.out.empty();
  std::map<std::string, std::vector<std::string>> all;
  for (const std::string& g : gathered) DecodeHashes(g, &all);
  DatasetInfo info = ds->info();
  info.dataset_structure.compression = o.compression;
  ListRewriter rewrite(*ds, all, staging, o);
  for (auto& [split, list_info] : info.splits) {
    SEDPACK_RETURN_NOT_OK(dataset_internal::WalkShardsTree(*ds, split, rewrite));
    SEDPACK_ASSIGN_OR_RETURN(list_info.shard_list_info_file.hash_checksums,
                             rewrite.TakeHashes(list_info.shard_list_info_file.file_path));
  }
  if (o.fault) SEDPACK_RETURN_NOT_OK(o.fault("dataset_info"));
  SEDPACK_RETURN_NOT_OK(CheckCancelled());
  SEDPACK_RETURN_NOT_OK(CarryOver(*ds, staging));
  const std::string info_text = SerializeDatasetInfo(info);
  SEDPACK_RETURN_NOT_OK(WriteFileAtomic(JoinRoot(staging, "dataset_info.json"), info_text));
  // The checks sidecar of the shards just written (the old one, carried over,
  // describes the old bytes): replaced, bound to the new dataset_info.json.
  SEDPACK_RETURN_NOT_OK(WriteRecompressedChecks(staging, info_text, gathered_checks));
  // Content digests survive recompression: check them against the sidecar
  // (if any) and re-stamp it for the new dataset_info.json.
  std::map<std::string, std::vector<std::string>> by_path;
  for (const std::string& g : gathered_digests) DecodeHashes(g, &by_path);
  ContentDigests content;
  for (auto& [path, d] : by_path) content.shards[path] = d.at(0);
  if (auto old = ReadContentDigests(ds->root()); old.ok()) {
    for (const auto& [path, digest] : content.shards) {
      const auto it = old->shards.find(path);
      if (it != old->shards.end() && it->second != digest) {
        return Status::Internal(path, ": content digest changed in recompression (", it->second, " -> ",
                                digest, "); nothing was replaced");
      }
    }
    SEDPACK_ASSIGN_OR_RETURN(content.content_id, ContentIdOf(*ds, content.shards));
    SEDPACK_RETURN_NOT_OK(WriteContentDigests(staging, content));
  }
  if (!job_id.empty()) {
    // The new tree is complete: its journals go before it becomes the dataset
    // (a stop between here and the swap costs a full rerun, never a journal in
    // the dataset).
    SEDPACK_RETURN_NOT_OK(journal::RemoveJobJournals(staging, job_id, o.file_system));
    // The jobs folder goes too if the job made it (empty), as a run without a journal would leave none.
    if (!PathExists(JoinRoot(ds->root(), journal::kJournalDir))) {
      (void)FileSystemOr(o.file_system).Rmdir(JoinRoot(staging, journal::kJournalDir).c_str());
    }
    KillPoint("recompress journals removed", staging);
  }
  if (!in_place) return Status::OK();
  if (o.fault) SEDPACK_RETURN_NOT_OK(o.fault("exchange"));
  // The last moment to stop: after the exchange the job is done.
  SEDPACK_RETURN_NOT_OK(CheckCancelled());
  SEDPACK_RETURN_NOT_OK(Exchange(FileSystemOr(o.file_system), staging, fs::absolute(root).lexically_normal().string()));
  state->exchanged = true;
  KillPoint("exchange", root);
  (void)RemoveTree(staging);  // now the old tree
  KillPoint("remove", staging);
  return Status::OK();
}

// Step 2 of a recompress on one rank: the state its worker threads share, and
// their loop (each takes this rank's next shard until none is left, one fails,
// or `stop` says another rank failed).
struct RecompressWork {
  RecompressWork(const Dataset& ds, const RecompressOptions& o, const std::string& staging,
                 const std::vector<ShardCheckTask>& mine, int threads)
      : ds(ds), o(o), staging(staging), mine(mine), running(threads) {}

  void Work() {
    for (;;) {
      const std::size_t i = next.fetch_add(1);
      if (i >= mine.size() || stop.load(std::memory_order_relaxed)) break;
      {
        std::lock_guard<std::mutex> lock(mu);
        if (!first_error.ok()) break;
      }
      Status st = CheckCancelled();
      if (st.ok() && queue) st = queue->status();  // a journal that cannot be written stops the job
      if (st.ok() && !recorded.empty() && recorded[i] && StillRewritten(staging, *recorded[i])) {
        ++kept;
        Take(i, *recorded[i]);
        continue;
      }
      TestShardDelay();  // lets a signal test stop the pass mid-way
      if (st.ok()) st = CheckCancelled();
      if (st.ok() && o.fault) st = o.fault("shard " + mine[i].path);
      RewrittenShard r;
      r.path = mine[i].path;
      sidecar_internal::ShardChecks record;
      Result<std::vector<std::string>> h =
          st.ok() ? RecompressShard(ds, mine[i], o.compression, o.codec, staging, &r.size, &r.digest, &record)
                  : Result<std::vector<std::string>>(st);
      if (h.ok()) {
        r.hashes = std::move(h).value();
        r.checksum = record.stored_checksum;
        if (auto e = sidecar_internal::EncodeShardChecks(record); e.ok()) {
          r.checks.assign(reinterpret_cast<const char*>(e->data()), e->size());
        }
        // Not forced to disk before its entry: a rerun keeps a journaled shard
        // only if its staged file still has the recorded size and checksum
        // (StillRewritten), so one a power cut lost is rewritten: a sync of
        // the file and its folder per shard bought nothing the check lacks.
        if (queue) queue->Push(EncodeRewritten(r));
      }
      if (!h.ok()) {
        std::lock_guard<std::mutex> lock(mu);
        if (first_error.ok()) first_error = h.status();
        break;
      }
      Take(i, r);
    }
    std::lock_guard<std::mutex> lock(mu);
    --running;
    done.notify_all();
  }

  // Every shard written is journaled before the ranks agree on the pass.
  void FinishJournal() {
    if (!queue) return;
    Status q = queue->Finish();
    std::lock_guard<std::mutex> lock(mu);
    if (first_error.ok() && !q.ok()) first_error = q;
  }

  // Shard `i` is done (rewritten now or kept from a stopped run).
  void Take(std::size_t i, const RewrittenShard& r) {
    std::lock_guard<std::mutex> lock(mu);
    new_hashes[r.path] = r.hashes;
    digests[r.path] = {r.digest};
    checks += r.checks;
    my_bytes += mine[i].size;
    my_after += r.size;
    ++my_files;
  }

  const Dataset& ds;
  const RecompressOptions& o;
  const std::string& staging;
  const std::vector<ShardCheckTask>& mine;
  std::vector<std::optional<RewrittenShard>> recorded;  // by task: what a stopped run journaled
  journal::JournalQueue* queue = nullptr;               // null: not journaled
  std::atomic<std::uint64_t> kept{0};
  std::map<std::string, std::vector<std::string>> new_hashes, digests;
  std::string checks;  // the checks sidecar records of the shards rewritten, encoded
  std::mutex mu;
  std::atomic<std::size_t> next{0};
  std::atomic<std::uint64_t> my_bytes{0}, my_after{0}, my_files{0};
  Status first_error;
  std::atomic<int> running;
  std::condition_variable done;  // with mu: `running` reached 0
  std::atomic<bool> stop{false};
};

// This rank's part of a journaled job: what every rank of a stopped run
// journaled for this rank's shards (checked by the workers before it is
// kept), and the entries its journal starts again with, so that a stop before
// they are checked loses none of them (a stale one is rewritten).
Status ReadRecompressJournals(const Dataset& ds, const RecompressOptions& o, const std::string& staging, int ranks,
                              RecompressWork* w, std::vector<journal::JournalEntry>* keep, RecompressJob* out) {
  SEDPACK_ASSIGN_OR_RETURN(RecompressJob job, RecompressJobFor(ds, staging, o, ranks));
  SEDPACK_ASSIGN_OR_RETURN(auto recorded,
                           journal::ReadJobEntries(staging, job.id, job.parameters, "recompress", o.file_system));
  std::map<std::string, RewrittenShard> by_path;
  for (const auto& e : recorded.entries) {
    if (auto r = DecodeRewritten(e)) by_path[r->path] = std::move(*r);  // the last entry of a path counts
  }
  w->recorded.assign(w->mine.size(), std::nullopt);
  for (std::size_t i = 0; i < w->mine.size(); ++i) {
    const auto it = by_path.find(w->mine[i].path);
    if (it == by_path.end()) continue;
    keep->push_back(EncodeRewritten(it->second));
    w->recorded[i] = std::move(it->second);
  }
  *out = std::move(job);
  return Status::OK();
}

// Collective: this rank's journal, started again with what it takes over.
Status OpenRecompressJournal(Comm& comm, const Dataset& ds, const RecompressOptions& o, const std::string& staging,
                             RecompressWork* w, std::unique_ptr<journal::JournalWriter>* writer, std::string* job_id) {
  RecompressJob job;
  std::vector<journal::JournalEntry> keep;
  Status local = ReadRecompressJournals(ds, o, staging, comm.size(), w, &keep, &job);
  // Every rank has read the journals before any is replaced.
  SEDPACK_RETURN_NOT_OK(AgreeOnStatus(comm, local));
  *job_id = job.id;
  auto started = journal::StartEntryJournal(staging, job.id, comm.rank(), job.parameters, keep, o.file_system);
  local = started.status();
  if (started.ok()) *writer = std::move(started).value();
  return AgreeOnStatus(comm, local);
}

// Collective: the counts of every rank.
Status SumCounts(Comm& comm, const RecompressWork& w, RecompressSummary* summary) {
  const auto sum = [&](std::uint64_t mine, std::uint64_t* all) -> Status {
    SEDPACK_ASSIGN_OR_RETURN(std::int64_t total, comm.AllreduceSum(static_cast<std::int64_t>(mine)));
    *all = static_cast<std::uint64_t>(total);
    return Status::OK();
  };
  SEDPACK_RETURN_NOT_OK(sum(w.my_after.load(), &summary->bytes_after));
  SEDPACK_RETURN_NOT_OK(sum(w.my_bytes.load(), &summary->bytes_before));
  SEDPACK_RETURN_NOT_OK(sum(w.my_files.load(), &summary->files));
  return sum(w.kept.load(), &summary->shards_kept);
}

Result<RecompressSummary> RecompressSteps(Comm& comm, const std::string& root, const RecompressOptions& o,
                                          StagingState* state) {
  const auto start = Clock::now();
  const int rank = comm.rank();
  RecompressSummary summary;
  const bool in_place = o.out.empty();
  const std::string staging = in_place ? RecompressStagingPath(root) : o.out;
  summary.staging = staging;

  // 1. Rank 0: open, walk the metadata (it must check clean), prepare the staging folder.
  std::shared_ptr<Dataset> ds;
  MetadataWalk walk;
  std::vector<std::string> parts;
  Status local;
  if (rank == 0) local = PrepareRecompress(root, o, staging, comm.size(), ds, walk, summary, state, parts);
  SEDPACK_RETURN_NOT_OK(AgreeOnStatus(comm, local));
  if (rank != 0) {
    OpenOptions open_options;
    open_options.file_system = o.file_system;
    auto open = Dataset::Open(root, open_options);
    local = open.status();
    if (open.ok()) ds = std::move(open).value();
  }
  SEDPACK_RETURN_NOT_OK(AgreeOnStatus(comm, local));
  std::uint64_t bytes_total = 0, files_total = walk.shards.size();
  for (const auto& t : walk.shards) bytes_total += t.size;

  // 2. Every rank recompresses its share of the shards with a few threads.
  if (rank != 0) parts.clear();
  SEDPACK_ASSIGN_OR_RETURN(std::string mine_text, comm.Scatterv(parts, 0));
  SEDPACK_ASSIGN_OR_RETURN(std::vector<ShardCheckTask> mine, DecodeShardTasks(mine_text));
  const int threads = ResolveThreads(o.threads);
  RecompressWork w(*ds, o, staging, mine, threads);
  std::unique_ptr<journal::JournalWriter> journal;
  std::unique_ptr<journal::JournalQueue> queue;
  std::string job_id;
  if (o.journal) {
    SEDPACK_RETURN_NOT_OK(OpenRecompressJournal(comm, *ds, o, staging, &w, &journal, &job_id));
    queue = std::make_unique<journal::JournalQueue>(journal.get());
    w.queue = queue.get();
  }
  auto work = [&w] { w.Work(); };
  // Rank 0's own threads work while its caller thread folds in progress.
  std::vector<std::thread> pool = internal::StartThreads(threads, [&work](int) { work(); });
  // Threads the system refused never count down `running`.
  w.running.fetch_sub(threads - static_cast<int>(pool.size()));
  if (pool.empty()) {
    w.running.fetch_add(1);
    work();
  }
  internal::RankProgress collector(comm);
  auto progress = [&](bool finished) {
    if (rank != 0) return;
    (void)collector.Poll();  // a lost progress message only delays the numbers
    if (!o.progress) return;
    RecompressProgress rp;
    rp.bytes_done = collector.Total(w.my_bytes);
    rp.bytes_total = bytes_total;
    rp.files_total = files_total;
    rp.seconds = std::chrono::duration<double>(Clock::now() - start).count();
    rp.finished = finished;
    o.progress(rp);
  };
  bool notified = false;
  auto relay_failures = [&] {
    bool failed;
    {
      std::lock_guard<std::mutex> lock(w.mu);
      failed = !w.first_error.ok();
    }
    if (failed && !notified) {
      comm.NotifyFailure();
      notified = true;
    }
    if (comm.PeerFailed()) w.stop.store(true, std::memory_order_relaxed);
  };
  // Wakes when the last worker ends (a 50 ms sleep here cost every run up to
  // 50 ms at its end, a tenth of a short rerun); otherwise every 50 ms for
  // progress and peers' failures.
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(w.mu);
      if (w.done.wait_for(lock, std::chrono::milliseconds(50), [&] { return w.running.load() <= 0; })) break;
    }
    relay_failures();
    if (rank == 0) {
      progress(false);
    } else {
      collector.Send(w.my_bytes.load(), false);
    }
  }
  for (auto& t : pool) t.join();
  w.FinishJournal();
  relay_failures();  // a failure in the last 50 ms
  if (rank != 0) {
    collector.Send(w.my_bytes.load(), true);
  } else {
    if (comm.size() > 1) collector.WaitForOthersFinal([&] { progress(false); });
  }
  SEDPACK_RETURN_NOT_OK(comm.IdleBarrier());
  Status agreed = AgreeOnStatus(comm, w.first_error);
  SEDPACK_RETURN_NOT_OK(comm.DrainFailureNotices());
  SEDPACK_RETURN_NOT_OK(agreed);

  // 3. Rank 0 gathers the new hashes, writes the new metadata tree and swaps.
  SEDPACK_ASSIGN_OR_RETURN(std::vector<std::string> gathered, comm.Gatherv(EncodeHashes(w.new_hashes), 0));
  SEDPACK_ASSIGN_OR_RETURN(std::vector<std::string> gathered_digests, comm.Gatherv(EncodeHashes(w.digests), 0));
  SEDPACK_ASSIGN_OR_RETURN(std::vector<std::string> gathered_checks, comm.Gatherv(w.checks, 0));
  SEDPACK_RETURN_NOT_OK(SumCounts(comm, w, &summary));
  if (rank == 0) {
    local = WriteRecompressedTree(*ds, root, o, staging, gathered, gathered_digests, gathered_checks, job_id, state);
  }
  SEDPACK_RETURN_NOT_OK(AgreeOnStatus(comm, local));
  if (summary.shards_kept > 0) summary.resumed_job = job_id;
  summary.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  if (rank == 0) progress(true);
  return summary;
}

}  // namespace

Result<RecompressSummary> Recompress(Comm& comm, const std::string& root, const RecompressOptions& o) {
  StagingState state;
  auto summary = RecompressSteps(comm, root, o, &state);
  // Every rank's workers have ended before any step returns after the staging
  // folder was made (they are joined before the agreement on step 2), so rank 0
  // can put it back: the dataset stays as it was, a new --out folder goes.
  if (!summary.ok() && state.ours && !state.exchanged) {
    const std::string staging = o.out.empty() ? RecompressStagingPath(root) : o.out;
    // A journaled job keeps its staging tree for the rerun, once its journals are in it.
    const bool kept = o.journal && !journal::ListJournals(staging, o.file_system).ValueOr({}).empty();
    if (!kept) io_internal::RestoreOutputFolder(staging, state.existed);
  }
  return summary;
}

}  // namespace sedpack
