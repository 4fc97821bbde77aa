// SPDX-License-Identifier: Apache-2.0
#include "sedpack/check/check.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <string>
#include <unordered_set>

#include "check/check_internal.h"
#include "check/check_wire_internal.h"
#include "dataset/shards_tree_internal.h"
#include "sedpack/codecs/hash.h"
#include "sedpack/dataset/reader.h"
#include "io/beneath.h"
#include "journal/journal_internal.h"
#include "sedpack/io/file.h"
#include "sedpack/metadata/paths.h"
#include "sidecar/sidecar_internal.h"

namespace sedpack {
namespace check_internal {

std::string JoinHashes(const std::vector<std::string>& h) {
  std::string out = "(";
  for (std::size_t i = 0; i < h.size(); ++i) {
    if (i) out += ", ";
    out += h[i];
  }
  return out + ")";
}

void AddProblem(CheckReport* report, CheckProblem::Kind kind, std::string path, std::string message,
                std::string algorithm, std::string expected, std::string found) {
  CheckProblem p;
  p.kind = kind;
  p.path = std::move(path);
  p.message = std::move(message);
  p.algorithm = std::move(algorithm);
  p.expected = std::move(expected);
  p.found = std::move(found);
  report->problems.push_back(std::move(p));
}

void CompareHashes(const std::vector<HashAlgorithm>& algos, const std::string& path,
                   const std::vector<std::string>& expected, const std::vector<std::string>& found,
                   CheckReport* report) {
  if (expected.size() != found.size()) {
    AddProblem(report, CheckProblem::Kind::kHashMismatch, path,
               "the metadata records " + std::to_string(expected.size()) + " hash checksums " +
                   JoinHashes(expected) + " for " + std::to_string(found.size()) + " algorithms",
               "", JoinHashes(expected), JoinHashes(found));
    return;
  }
  for (std::size_t i = 0; i < found.size(); ++i) {
    if (expected[i] != found[i]) {
      const std::string algo(HashAlgorithmName(algos[i]));
      AddProblem(report, CheckProblem::Kind::kHashMismatch, path,
                 "hash checksum mismatch (" + algo + "): expected " + expected[i] + ", found " + found[i],
                 algo, expected[i], found[i]);
    }
  }
}

// What a failure to open or read a listed file is.
CheckProblem::Kind ProblemKindOf(const Status& status) {
  if (status.code() == StatusCode::kNotFound) return CheckProblem::Kind::kMissingFile;
  if (IsOutsideRoot(status)) return CheckProblem::Kind::kPathEscape;
  return CheckProblem::Kind::kIOError;
}

// Hash a listed file and compare. False if the file could not be read. The
// file's size goes to `size_out` when given.
bool HashAndCompare(const Dataset& ds, const std::string& rel, const std::vector<std::string>& expected,
                    const CheckOptions& options, CheckReport* report, std::uint64_t* size_out) {
  const auto& algos = ds.info().dataset_structure.hash_checksum_algorithms;
  auto size = ds.SizeOf(rel);
  if (!size.ok()) {
    AddProblem(report, ProblemKindOf(size.status()), rel, size.status().message());
    return false;
  }
  auto found = ds.HashOf(rel);
  if (!found.ok()) {
    AddProblem(report, ProblemKindOf(found.status()), rel, found.status().message());
    return false;
  }
  if (size_out != nullptr) *size_out = *size;
  report->files_checked++;
  report->bytes_checked += *size;
  if (options.progress) options.progress(*size, 1);
  CompareHashes(algos, rel, expected, *found, report);
  return true;
}

// A kLargeList warning for a list above either bound of `options`. Cheap: the
// size comes from the hash step, the entries from the parsed list.
void WarnIfLarge(const std::string& rel, std::uint64_t bytes, const ShardsList& list, const CheckOptions& options,
                 CheckReport* report) {
  const std::uint64_t entries = list.shard_files.size() + list.children_shard_lists.size();
  if (bytes <= options.large_list_bytes && entries <= options.large_list_entries) return;
  const std::uint64_t mib = (bytes + (std::uint64_t{1} << 19)) >> 20;
  AddProblem(report, CheckProblem::Kind::kLargeList, rel,
             "a large shards_list.json (" + std::to_string(bytes) + " bytes, about " + std::to_string(mib) +
                 " MiB, " + std::to_string(entries) +
                 " entries): every reader of this folder must read and parse it whole");
}

void CheckListCounts(const ShardListInfo& entry, const ShardsList& list, const std::string& rel,
                     CheckReport* report) {
  // Sums are done in unsigned 64-bit with overflow checks: each count is at
  // most 2^62, but four of them wrap around to 0 and would match a hostile 0.
  std::uint64_t examples = 0;
  std::uint64_t shards = list.shard_files.size();
  bool overflow = false;
  auto add = [&overflow](std::uint64_t* sum, std::int64_t count) {
    overflow = __builtin_add_overflow(*sum, static_cast<std::uint64_t>(count), sum) || overflow;
  };
  for (const ShardInfo& shard : list.shard_files) add(&examples, shard.number_of_examples);
  for (const ShardListInfo& child : list.children_shard_lists) {
    add(&examples, child.number_of_examples);
    add(&shards, child.number_of_shards);
  }
  if (overflow) {
    AddProblem(report, CheckProblem::Kind::kCountMismatch, rel,
               "the number_of_examples / number_of_shards of the entries add up to more than 2^64 - 1");
    return;
  }
  auto count = [&](const std::string& what, std::int64_t recorded, std::uint64_t actual) {
    if (static_cast<std::uint64_t>(recorded) == actual) return;
    AddProblem(report, CheckProblem::Kind::kCountMismatch, rel,
               what + " is " + std::to_string(recorded) + " but the subtree adds up to " + std::to_string(actual),
               "", std::to_string(recorded), std::to_string(actual));
  };
  count("number_of_examples", list.number_of_examples, examples);
  count("the parent's number_of_examples", entry.number_of_examples,
        static_cast<std::uint64_t>(list.number_of_examples));
  count("the parent's number_of_shards", entry.number_of_shards, shards);
}

void AddTreeRefusal(CheckReport* report, const std::string& path, dataset_internal::ShardsTreeRefusal why,
                    const Status& error) {
  switch (why) {
    case dataset_internal::ShardsTreeRefusal::kBadPath:
      AddProblem(report, CheckProblem::Kind::kPathEscape, path, error.message());
      return;
    case dataset_internal::ShardsTreeRefusal::kTooDeep:
      AddProblem(report, CheckProblem::Kind::kMalformed, path,
                 "shards_list tree deeper than " + std::to_string(dataset_internal::kMaxShardsListDepth) +
                     " levels; not followed");
      return;
    case dataset_internal::ShardsTreeRefusal::kRepeated:
      AddProblem(report, CheckProblem::Kind::kMalformed, path,
                 "listed more than once (a cycle or a repeated child); not followed again");
      return;
  }
}

}  // namespace check_internal

namespace {

using namespace check_internal;

// What part of the tree a partial check covers.
struct Target {
  std::string path;  // as given, normalised
  bool subtree = false;  // a list or folder (else a shard file)
  std::string dir;   // for subtrees: the folder whose list roots it
  bool found = false;
};

std::string DirOf(const std::string& path) {
  const auto slash = path.rfind('/');
  return slash == std::string::npos ? "" : path.substr(0, slash);
}

// A folder of the dataset (for a pack: a prefix of some file's path).
bool IsFolder(const Dataset& ds, const std::string& rel) {
  if (const PackReader* pack = ds.pack()) {
    const std::string prefix = rel + "/";
    const auto it = pack->entries().lower_bound(prefix);
    return it != pack->entries().end() && it->first.compare(0, prefix.size(), prefix) == 0;
  }
  return IsDirectory(ds.PathOf(rel), ds.file_system());
}

class Walker {
 public:
  Walker(const Dataset& ds, const CheckOptions& options) : ds_(ds), options_(options) {}

  Status Init() {
    for (const std::string& p : options_.partial) {
      SEDPACK_RETURN_NOT_OK(ValidateRelativePath(p, "partial path"));
      Target t;
      t.path = JoinPath(PathComponents(p));
      if (t.path.size() >= 16 && t.path.ends_with("shards_list.json")) {
        t.subtree = true;
        t.dir = DirOf(t.path);
      } else if (IsFolder(ds_, t.path)) {
        t.subtree = true;
        t.dir = t.path;
      }
      SEDPACK_ASSIGN_OR_RETURN(Split split, ParseSplit(PathComponents(t.path).front()));
      if (!ds_.info().FindSplit(split)) {
        return Status::InvalidArgument("partial path ", p, ": the dataset has no split ",
                                       SplitName(split));
      }
      targets_.push_back(std::move(t));
    }
    return Status::OK();
  }

  void Run() {
    ListChecker checker(*this);
    // One walk over every split: a list named from two splits is a repeat too.
    dataset_internal::ShardsTreeWalk walk(ds_, {}, &checker);
    if (!options_.expected_root_checksums.empty()) {
      walk_.listed.push_back("dataset_info.json");
      HashAndCompare(ds_, "dataset_info.json", options_.expected_root_checksums, options_, &walk_.report);
    }
    for (const auto& [split, entry] : ds_.info().splits) {
      if (!Wanted(split)) continue;
      const std::string expected_path = std::string(SplitName(split)) + "/shards_list.json";
      if (entry.shard_list_info_file.file_path != expected_path) {
        AddProblem(&walk_.report, CheckProblem::Kind::kMalformed, entry.shard_list_info_file.file_path,
                   "the split entry should point at " + expected_path);
      }
      walk.Add(entry, 0);
      // The checker reports every failure as a problem: the walk itself cannot fail.
      (void)dataset_internal::VisitShardsTree(walk, checker);
    }
    for (const Target& t : targets_) {
      if (!t.found) {
        AddProblem(&walk_.report, CheckProblem::Kind::kMissingFile, t.path,
                   "not listed by any metadata of the dataset");
      }
    }
  }

  MetadataWalk Take() { return std::move(walk_); }

 private:
  bool Wanted(Split split) const {
    if (!targets_.empty()) {
      for (const Target& t : targets_) {
        if (PathComponents(t.path).front() == SplitName(split)) return true;
      }
      return false;
    }
    return options_.splits.empty() ||
           std::find(options_.splits.begin(), options_.splits.end(), split) != options_.splits.end();
  }

  // Whether the list at `list_path` roots a target subtree.
  bool ListIsTarget(const std::string& list_path) {
    bool hit = false;
    for (Target& t : targets_) {
      if (t.subtree && DirOf(list_path) == t.dir) {
        t.found = true;
        hit = true;
      }
    }
    return hit;
  }

  bool ShardIsTarget(const std::string& shard_path) {
    bool hit = false;
    for (Target& t : targets_) {
      if (!t.subtree && t.path == shard_path) {
        t.found = true;
        hit = true;
      }
    }
    return hit;
  }

  // The one tree walk, every refusal and unreadable list a problem: the
  // check goes on with the rest of the tree.
  class ListChecker : public dataset_internal::ShardsTreeVisitor {
   public:
    explicit ListChecker(Walker& w) : w_(w) {}

    Status Refused(const dataset_internal::ShardsTreeNode& node, dataset_internal::ShardsTreeRefusal why,
                   const Status& error) override {
      AddTreeRefusal(&w_.walk_.report, node.path(), why, error);
      return Status::OK();
    }

    Result<bool> Load(const Dataset& ds, const dataset_internal::ShardsTreeLimits&,
                      dataset_internal::ShardsTreeNode& node) override {
      CheckReport* report = &w_.walk_.report;
      const std::string& rel = node.path();
      const bool parent_inside = inside_.empty() ? w_.targets_.empty() : inside_.back();
      inside_now_ = w_.ListIsTarget(rel) || parent_inside;
      w_.walk_.listed.push_back(rel);
      if (!HashAndCompare(ds, rel, node.entry.shard_list_info_file.hash_checksums, w_.options_, report,
                          &list_bytes_)) {
        return false;
      }
      auto list = LoadShardsList(ds, rel);
      if (!list.ok()) {
        // A path in the list that leaves the root (ValidateRelativePath) or the
        // list file itself resolving outside it.
        const bool escape = list.status().detail() == StatusDetail::kPathEscape || IsOutsideRoot(list.status());
        AddProblem(report, escape ? CheckProblem::Kind::kPathEscape : CheckProblem::Kind::kMalformed, rel,
                   list.status().message());
        return false;
      }
      node.list = std::move(list).value();
      return true;
    }

    Status Enter(dataset_internal::ShardsTreeNode& node) override {
      CheckReport* report = &w_.walk_.report;
      const std::string& rel = node.path();
      const ShardsList& list = node.list;
      WarnIfLarge(rel, list_bytes_, list, w_.options_, report);
      if (list.relative_path_self != rel) {
        AddProblem(report, CheckProblem::Kind::kMalformed, rel,
                   "relative_path_self is \"" + list.relative_path_self + "\" but the file is at \"" + rel + "\"");
      }
      for (std::size_t i = 0; i < list.shard_files.size(); ++i) {
        const ShardInfo& shard = list.shard_files[i];
        if (shard.file_infos.empty()) {
          AddProblem(report, CheckProblem::Kind::kMalformed, rel,
                     "shard_files[" + std::to_string(i) + "] has no file_infos");
          continue;
        }
        for (const FileInfo& f : shard.file_infos) w_.AddShardTask(f, shard, rel, inside_now_);
      }
      inside_.push_back(inside_now_);
      return Status::OK();
    }

    Status Leave(dataset_internal::ShardsTreeNode& node) override {
      CheckListCounts(node.entry, node.list, node.path(), &w_.walk_.report);
      inside_.pop_back();
      return Status::OK();
    }

   private:
    Walker& w_;
    std::vector<bool> inside_;  // along the path: whether each list is inside a target
    bool inside_now_ = false;   // the list just read
    std::uint64_t list_bytes_ = 0;
  };

  void AddShardTask(const FileInfo& f, const ShardInfo& shard, const std::string& rel, bool inside) {
    walk_.listed.push_back(f.file_path);
    if (!inside && !ShardIsTarget(f.file_path)) return;
    ShardCheckTask task;
    task.path = f.file_path;
    task.expected = f.hash_checksums;
    task.number_of_examples = shard.number_of_examples;
    task.list_path = rel;
    auto size = ds_.SizeOf(f.file_path);
    task.size = size.ok() ? *size : 0;
    walk_.shards.push_back(std::move(task));
  }

  const Dataset& ds_;
  const CheckOptions& options_;
  MetadataWalk walk_;
  std::vector<Target> targets_;
};

}  // namespace

namespace check_internal {

// Length-prefixed fields: "<decimal length>:<bytes>".
void PutField(std::string* out, std::string_view v) {
  *out += std::to_string(v.size());
  *out += ':';
  out->append(v);
}

Result<std::string> FieldReader::Next() {
  const auto colon = in_.find(':');
  if (colon == std::string_view::npos || colon == 0 || colon > 12) {
    return Status::Corruption("malformed check message");
  }
  std::uint64_t n = 0;
  for (char c : in_.substr(0, colon)) {
    if (c < '0' || c > '9') return Status::Corruption("malformed check message");
    n = n * 10 + static_cast<std::uint64_t>(c - '0');
  }
  if (n > in_.size() - colon - 1) return Status::Corruption("truncated check message");
  std::string v(in_.substr(colon + 1, n));
  in_.remove_prefix(colon + 1 + n);
  return v;
}

Result<std::uint64_t> FieldReader::NextNumber() {
  SEDPACK_ASSIGN_OR_RETURN(std::string s, Next());
  std::uint64_t n = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return Status::Corruption("malformed number in check message");
    n = n * 10 + static_cast<std::uint64_t>(c - '0');
  }
  return n;
}

}  // namespace check_internal

using namespace check_internal;

std::string_view CheckProblemKindName(CheckProblem::Kind kind) {
  switch (kind) {
    case CheckProblem::Kind::kHashMismatch: return "hash_mismatch";
    case CheckProblem::Kind::kMissingFile: return "missing_file";
    case CheckProblem::Kind::kMalformed: return "malformed";
    case CheckProblem::Kind::kCountMismatch: return "count_mismatch";
    case CheckProblem::Kind::kPathEscape: return "path_escape";
    case CheckProblem::Kind::kIOError: return "io_error";
    case CheckProblem::Kind::kOrphan: return "orphan";
    case CheckProblem::Kind::kLargeList: return "large_list";
    case CheckProblem::Kind::kResumableJob: return "resumable_job";
  }
  return "unknown";
}

bool CheckReport::ok() const { return error_count() == 0; }

std::size_t CheckReport::error_count() const {
  std::size_t n = 0;
  for (const auto& p : problems) n += p.warning() ? 0 : 1;
  return n;
}

Result<MetadataWalk> WalkMetadata(const Dataset& dataset, const CheckOptions& options) {
  Walker walker(dataset, options);
  SEDPACK_RETURN_NOT_OK(walker.Init());
  walker.Run();
  return walker.Take();
}

void CheckShardFiles(const Dataset& dataset, const std::vector<ShardCheckTask>& shards,
                     const CheckOptions& options, CheckReport* report) {
  for (const ShardCheckTask& task : shards) {
    Status valid = ValidateRelativePath(task.path, "file_path");
    if (!valid.ok()) {
      AddProblem(report, CheckProblem::Kind::kPathEscape, task.path, valid.message());
      continue;
    }
    const bool readable = HashAndCompare(dataset, task.path, task.expected, options, report);
    report->shards_checked++;
    if (!options.deep || !readable) continue;
    ShardInfo shard;
    shard.file_infos.push_back(FileInfo{task.path, task.expected});
    // Hashed just above with every algorithm; a mismatch is reported there.
    auto decoded = ReadShard(dataset, shard, options.limits, /*verify_hashes=*/false);
    if (!decoded.ok()) {
      AddProblem(report,
                 IsOutsideRoot(decoded.status()) ? CheckProblem::Kind::kPathEscape : CheckProblem::Kind::kMalformed,
                 task.path, decoded.status().message());
      continue;
    }
    const auto n = static_cast<std::int64_t>((*decoded)->num_examples());
    report->examples_checked += static_cast<std::uint64_t>(n);
    if (n != task.number_of_examples) {
      AddProblem(report, CheckProblem::Kind::kCountMismatch, task.path,
                 "the shard holds " + std::to_string(n) + " examples but " + task.list_path +
                     " records " + std::to_string(task.number_of_examples),
                 "", std::to_string(task.number_of_examples), std::to_string(n));
    }
  }
}

void FindOrphans(const Dataset& dataset, const CheckOptions& options,
                 const std::vector<std::string>& listed, CheckReport* report) {
  const std::unordered_set<std::string> known(listed.begin(), listed.end());
  FindOrphans(dataset, options, [&known](const std::string& rel) { return known.count(rel) != 0; }, report);
}

namespace {

// The job a file below a split belongs to if it is in a rank folder
// (`<split>/<job-id>-r<rank>/...`) of a job that has a journal; empty otherwise.
std::string JournaledJobOf(const std::string& rel, const std::map<std::string, std::uint64_t>& jobs) {
  const std::size_t a = rel.find('/');
  const std::size_t b = a == std::string::npos ? a : rel.find('/', a + 1);
  if (b == std::string::npos) return {};
  const std::string folder = rel.substr(a + 1, b - a - 1);
  const std::size_t r = folder.rfind("-r");
  if (r == std::string::npos || r + 2 >= folder.size() ||
      folder.find_first_not_of("0123456789", r + 2) != std::string::npos) {
    return {};
  }
  std::string job = folder.substr(0, r);
  return jobs.count(job) ? job : std::string();
}

}  // namespace

void FindOrphans(const Dataset& dataset, const CheckOptions& options,
                 const std::function<bool(const std::string&)>& is_listed, CheckReport* report) {
  namespace fs = std::filesystem;
  // The unlisted files of a stopped resumable job are kept on purpose: one
  // note per job instead of an orphan per file, and `fix --gc` leaves them.
  std::map<std::string, std::uint64_t> journaled;
  if (!dataset.pack()) {
    for (const auto& j : journal_internal::ListJournals(dataset.root(), dataset.file_system()).ValueOr({})) {
      journaled.emplace(j.job_id, 0);
    }
  }
  if (const PackReader* pack = dataset.pack()) {
    for (const auto& [rel, entry] : pack->entries()) {
      auto split = ParseSplit(rel.substr(0, rel.find('/')));
      if (!split.ok() || rel.find('/') == std::string::npos || IsSidecarPath(rel)) continue;
      if (!options.splits.empty() &&
          std::find(options.splits.begin(), options.splits.end(), *split) == options.splits.end()) {
        continue;
      }
      if (!is_listed(rel)) {
        AddProblem(report, CheckProblem::Kind::kOrphan, rel, "file not listed by any metadata");
      }
    }
    return;
  }
  const std::string root_prefix = dataset.PathOf("");
  for (Split split : AllSplits()) {
    if (!options.splits.empty() &&
        std::find(options.splits.begin(), options.splits.end(), split) == options.splits.end()) {
      continue;
    }
    // The walk below does not follow links to folders, except the one it starts
    // from: a split folder that is a link out of the root is not scanned
    // (listing it would offer files elsewhere to `fix --gc` for removal).
    if (auto dir = OpenBeneath(dataset.root(), SplitName(split), O_PATH | O_DIRECTORY, dataset.file_system());
        !dir.ok()) {
      if (IsOutsideRoot(dir.status())) {
        AddProblem(report, CheckProblem::Kind::kPathEscape, std::string(SplitName(split)),
                   dir.status().message());
      }
      continue;
    }
    // A folder that cannot be listed ends the scan of its split.
    const std::string split_name(SplitName(split));
    (void)WalkTree(dataset.PathOf(split_name), [&](const TreeEntry& e, bool* descend) {
      const std::string rel = split_name + "/" + e.relative;
      // A link is judged by what it leads to (it is not entered, though).
      const bool link = e.type == FileType::kSymlink;
      // Sidecar folders (.sedpack-hpc) hold our own derived files, never shards:
      // not orphans, and `fix --remove-orphans` must leave them alone.
      if ((e.type == FileType::kDirectory || (link && IsDirectory(root_prefix + rel, dataset.file_system()))) &&
          fs::path(e.relative).filename() == kSidecarDirName) {
        *descend = false;
        return Status::OK();
      }
      if (e.type != FileType::kRegular && !(link && IsRegularFile(root_prefix + rel, dataset.file_system()))) {
        return Status::OK();
      }
      if (IsSidecarPath(rel)) return Status::OK();
      if (is_listed(rel)) return Status::OK();
      if (std::string job = JournaledJobOf(rel, journaled); !job.empty()) {
        ++journaled[job];
      } else {
        AddProblem(report, CheckProblem::Kind::kOrphan, rel, "file not listed by any metadata");
      }
      return Status::OK();
    }, dataset.file_system());
  }
  for (const auto& [job, files] : journaled) {
    AddProblem(report, CheckProblem::Kind::kResumableJob, std::string(journal_internal::kJournalDir) + "/" + job,
               "resumable job " + job + ": " + std::to_string(files) +
                   " files of a stopped run are kept for its rerun (run the same command again to finish it, "
                   "or sedpack fix --remove-abandoned-jobs to remove them)",
               "", "", std::to_string(files));
  }
}

namespace check_internal {

void NoteStoppedRecompress(const Dataset& dataset, CheckReport* report) {
  if (dataset.pack()) return;
  // Recompress's staging folder, <parent>/.<name>.recompress (RecompressStagingPath
  // in maintain, which builds on this module and so cannot be called from here).
  std::filesystem::path p = std::filesystem::absolute(dataset.root()).lexically_normal();
  if (!p.has_filename()) p = p.parent_path();
  const std::string staging = (p.parent_path() / ("." + p.filename().string() + ".recompress")).string();
  const auto staged = journal_internal::ListJournals(staging, dataset.file_system()).ValueOr({});
  if (staged.empty()) return;
  const std::string& job = staged.front().job_id;
  AddProblem(report, CheckProblem::Kind::kResumableJob, staging + "/" + std::string(journal_internal::kJournalDir) +
                                                            "/" + job,
             "resumable job " + job + ": a stopped in-place recompress keeps its staging folder " + staging +
                 " for its rerun (run the same command again to finish it, or sedpack fix "
                 "--remove-abandoned-jobs to remove it); the dataset itself is whole");
}

}  // namespace check_internal

std::string EncodeCheckReport(const CheckReport& report) {
  std::string out;
  PutField(&out, std::to_string(report.files_checked));
  PutField(&out, std::to_string(report.bytes_checked));
  PutField(&out, std::to_string(report.shards_checked));
  PutField(&out, std::to_string(report.examples_checked));
  for (const CheckProblem& p : report.problems) {
    PutField(&out, std::to_string(static_cast<int>(p.kind)));
    for (const std::string* f : {&p.path, &p.algorithm, &p.expected, &p.found, &p.message}) {
      PutField(&out, *f);
    }
  }
  return out;
}

Result<CheckReport> DecodeCheckReport(std::string_view bytes) {
  FieldReader in(bytes);
  CheckReport r;
  SEDPACK_ASSIGN_OR_RETURN(r.files_checked, in.NextNumber());
  SEDPACK_ASSIGN_OR_RETURN(r.bytes_checked, in.NextNumber());
  SEDPACK_ASSIGN_OR_RETURN(r.shards_checked, in.NextNumber());
  SEDPACK_ASSIGN_OR_RETURN(r.examples_checked, in.NextNumber());
  while (!in.done()) {
    CheckProblem p;
    SEDPACK_ASSIGN_OR_RETURN(std::uint64_t kind, in.NextNumber());
    if (kind > static_cast<std::uint64_t>(CheckProblem::Kind::kResumableJob)) {
      return Status::Corruption("unknown problem kind in check message");
    }
    p.kind = static_cast<CheckProblem::Kind>(kind);
    for (std::string* f : {&p.path, &p.algorithm, &p.expected, &p.found, &p.message}) {
      SEDPACK_ASSIGN_OR_RETURN(*f, in.Next());
    }
    r.problems.push_back(std::move(p));
  }
  return r;
}

std::string EncodeShardTasks(const std::vector<ShardCheckTask>& tasks) {
  std::string out;
  for (const ShardCheckTask& t : tasks) {
    PutField(&out, t.path);
    PutField(&out, t.list_path);
    PutField(&out, std::to_string(t.number_of_examples));
    PutField(&out, std::to_string(t.size));
    PutField(&out, std::to_string(t.expected.size()));
    for (const auto& h : t.expected) PutField(&out, h);
  }
  return out;
}

Result<std::vector<ShardCheckTask>> DecodeShardTasks(std::string_view bytes) {
  FieldReader in(bytes);
  std::vector<ShardCheckTask> out;
  while (!in.done()) {
    ShardCheckTask t;
    SEDPACK_ASSIGN_OR_RETURN(t.path, in.Next());
    SEDPACK_ASSIGN_OR_RETURN(t.list_path, in.Next());
    SEDPACK_ASSIGN_OR_RETURN(std::uint64_t n, in.NextNumber());
    t.number_of_examples = static_cast<std::int64_t>(n);
    SEDPACK_ASSIGN_OR_RETURN(t.size, in.NextNumber());
    SEDPACK_ASSIGN_OR_RETURN(std::uint64_t hashes, in.NextNumber());
    if (hashes > 64) return Status::Corruption("too many hashes in check message");
    for (std::uint64_t i = 0; i < hashes; ++i) {
      SEDPACK_ASSIGN_OR_RETURN(std::string h, in.Next());
      t.expected.push_back(std::move(h));
    }
    out.push_back(std::move(t));
  }
  return out;
}

Result<CheckReport> CheckDataset(const std::string& root, const CheckOptions& options) {
  OpenOptions open;
  open.file_system = options.file_system;
  SEDPACK_ASSIGN_OR_RETURN(std::shared_ptr<Dataset> ds, Dataset::Open(root, open));
  if (options.partial.empty()) {
    SerialComm comm;
    CheckRunOptions run;
    run.check = options;
    return RunCheck(comm, *ds, run);
  }
  // A partial check walks every list from the split down (the chain to each
  // part), then checks the parts' shards.
  SEDPACK_ASSIGN_OR_RETURN(MetadataWalk walk, WalkMetadata(*ds, options));
  CheckShardFiles(*ds, walk.shards, options, &walk.report);
  return std::move(walk.report);
}

// Longest-processing-time first: biggest files to the least-loaded part.
std::vector<std::vector<ShardCheckTask>> PartitionShardTasks(std::vector<ShardCheckTask> tasks, int parts) {
  std::sort(tasks.begin(), tasks.end(), [](const auto& a, const auto& b) {
    return a.size != b.size ? a.size > b.size : a.path < b.path;
  });
  std::vector<std::vector<ShardCheckTask>> out(static_cast<std::size_t>(std::max(parts, 1)));
  std::vector<std::uint64_t> load(out.size(), 0);
  for (auto& t : tasks) {
    const auto r = static_cast<std::size_t>(std::min_element(load.begin(), load.end()) - load.begin());
    load[r] += std::max<std::uint64_t>(t.size, 1);
    out[r].push_back(std::move(t));
  }
  // Within a part, go in path order: neighbouring files, friendlier to the disk.
  for (auto& p : out) {
    std::sort(p.begin(), p.end(), [](const auto& a, const auto& b) { return a.path < b.path; });
  }
  return out;
}

}  // namespace sedpack
