// SPDX-License-Identifier: Apache-2.0
#include "sedpack/dataset/check.h"

#include <filesystem>
#include <set>
#include <string>
#include <unordered_set>

#include "sedpack/codecs/hash.h"
#include "sedpack/dataset/reader.h"
#include "sedpack/io/file.h"
#include "sedpack/metadata/paths.h"

namespace sedpack {
namespace {

constexpr std::size_t kMaxListDepth = 64;

std::string JoinHashes(const std::vector<std::string>& h) {
  std::string out = "(";
  for (std::size_t i = 0; i < h.size(); ++i) {
    if (i) out += ", ";
    out += h[i];
  }
  return out + ")";
}

class Checker {
 public:
  Checker(std::shared_ptr<const Dataset> ds, const CheckOptions& options)
      : ds_(std::move(ds)), options_(options),
        algos_(ds_->info().dataset_structure.hash_checksum_algorithms) {}

  void CheckRoot() {
    if (options_.expected_root_checksums.empty()) return;
    auto found = ds_->MetadataChecksums();
    if (!found.ok()) {
      Add(CheckProblem::Kind::kIOError, "dataset_info.json", found.status().ToString());
      return;
    }
    CompareHashes("dataset_info.json", options_.expected_root_checksums, *found);
  }

  void CheckSplit(Split split, const ShardListInfo& entry) {
    const std::string prefix = std::string(SplitName(split)) + "/";
    const std::string& path = entry.shard_list_info_file.file_path;
    if (path != prefix + "shards_list.json") {
      Add(CheckProblem::Kind::kMalformed, path,
          "the split entry " + std::string(SplitName(split)) + " should point at " + prefix +
              "shards_list.json");
    }
    CheckList(entry, 0);
    FindOrphans(split);
  }

  CheckReport TakeReport() { return std::move(report_); }

 private:
  void Add(CheckProblem::Kind kind, std::string path, std::string message,
           std::string algorithm = "", std::string expected = "", std::string found = "") {
    CheckProblem p;
    p.kind = kind;
    p.path = std::move(path);
    p.message = std::move(message);
    p.algorithm = std::move(algorithm);
    p.expected = std::move(expected);
    p.found = std::move(found);
    report_.problems.push_back(std::move(p));
  }

  void CompareHashes(const std::string& path, const std::vector<std::string>& expected,
                     const std::vector<std::string>& found) {
    if (expected.size() != found.size()) {
      Add(CheckProblem::Kind::kHashMismatch, path,
          "expected " + std::to_string(found.size()) + " hash checksums, the metadata records " +
              std::to_string(expected.size()) + " " + JoinHashes(expected),
          "", JoinHashes(expected), JoinHashes(found));
      return;
    }
    for (std::size_t i = 0; i < found.size(); ++i) {
      if (expected[i] != found[i]) {
        const std::string algo(HashAlgorithmName(algos_[i]));
        Add(CheckProblem::Kind::kHashMismatch, path,
            "hash checksum mismatch (" + algo + "): expected " + expected[i] + ", found " + found[i],
            algo, expected[i], found[i]);
      }
    }
  }

  // Hash a listed file and compare. Returns false if the file could not be read.
  bool HashAndCompare(const std::string& rel, const std::vector<std::string>& expected) {
    Status valid = ValidateRelativePath(rel, "file_path");
    if (!valid.ok()) {
      Add(CheckProblem::Kind::kPathEscape, rel, valid.message());
      return false;
    }
    listed_.insert(rel);
    const std::string abs = ds_->PathOf(rel);
    auto size = FileSize(abs);
    if (!size.ok()) {
      Add(size.status().code() == StatusCode::kNotFound ? CheckProblem::Kind::kMissingFile
                                                        : CheckProblem::Kind::kIOError,
          rel, size.status().message());
      return false;
    }
    auto found = HashFile(algos_, abs);
    if (!found.ok()) {
      Add(CheckProblem::Kind::kIOError, rel, found.status().message());
      return false;
    }
    report_.files_checked++;
    report_.bytes_checked += *size;
    if (options_.progress) options_.progress(*size, 1);
    CompareHashes(rel, expected, *found);
    return true;
  }

  void CheckList(const ShardListInfo& entry, std::size_t depth) {
    const std::string& rel = entry.shard_list_info_file.file_path;
    if (depth >= kMaxListDepth) {
      Add(CheckProblem::Kind::kMalformed, rel, "shards_list tree deeper than 64 levels");
      return;
    }
    if (!visited_lists_.insert(rel).second) {
      Add(CheckProblem::Kind::kMalformed, rel,
          "listed more than once (a cycle or a repeated child); not followed again");
      return;
    }
    if (!HashAndCompare(rel, entry.shard_list_info_file.hash_checksums)) return;
    auto list = LoadShardsList(*ds_, rel);
    if (!list.ok()) {
      const std::string& msg = list.status().message();
      const bool escape = msg.find("..") != std::string::npos || msg.find("absolute") != std::string::npos;
      Add(escape ? CheckProblem::Kind::kPathEscape : CheckProblem::Kind::kMalformed, rel, msg);
      return;
    }
    if (list->relative_path_self != rel) {
      Add(CheckProblem::Kind::kMalformed, rel,
          "relative_path_self is \"" + list->relative_path_self + "\" but the file is at \"" + rel + "\"");
    }
    std::int64_t examples = 0;
    std::int64_t shards = static_cast<std::int64_t>(list->shard_files.size());
    for (std::size_t i = 0; i < list->shard_files.size(); ++i) {
      const ShardInfo& shard = list->shard_files[i];
      examples += shard.number_of_examples;
      CheckShard(rel, i, shard);
    }
    for (const ShardListInfo& child : list->children_shard_lists) {
      examples += child.number_of_examples;
      shards += child.number_of_shards;
      CheckList(child, depth + 1);
    }
    if (examples != list->number_of_examples) {
      Add(CheckProblem::Kind::kCountMismatch, rel,
          "number_of_examples is " + std::to_string(list->number_of_examples) +
              " but its shards and children add up to " + std::to_string(examples),
          "", std::to_string(list->number_of_examples), std::to_string(examples));
    }
    if (entry.number_of_examples != list->number_of_examples) {
      Add(CheckProblem::Kind::kCountMismatch, rel,
          "the parent records number_of_examples " + std::to_string(entry.number_of_examples) +
              " but the list holds " + std::to_string(list->number_of_examples),
          "", std::to_string(entry.number_of_examples), std::to_string(list->number_of_examples));
    }
    if (entry.number_of_shards != shards) {
      Add(CheckProblem::Kind::kCountMismatch, rel,
          "the parent records number_of_shards " + std::to_string(entry.number_of_shards) +
              " but the subtree holds " + std::to_string(shards),
          "", std::to_string(entry.number_of_shards), std::to_string(shards));
    }
  }

  void CheckShard(const std::string& list_rel, std::size_t index, const ShardInfo& shard) {
    if (shard.file_infos.empty()) {
      Add(CheckProblem::Kind::kMalformed, list_rel,
          "shard_files[" + std::to_string(index) + "] has no file_infos");
      return;
    }
    bool readable = true;
    for (const FileInfo& f : shard.file_infos) {
      readable = HashAndCompare(f.file_path, f.hash_checksums) && readable;
    }
    report_.shards_checked++;
    if (!options_.deep || !readable) return;
    auto decoded = ReadShard(*ds_, shard, options_.limits);
    if (!decoded.ok()) {
      Add(CheckProblem::Kind::kMalformed, shard.file_infos[0].file_path, decoded.status().message());
      return;
    }
    const auto n = static_cast<std::int64_t>((*decoded)->num_examples());
    report_.examples_checked += static_cast<std::uint64_t>(n);
    if (n != shard.number_of_examples) {
      Add(CheckProblem::Kind::kCountMismatch, shard.file_infos[0].file_path,
          "the shard holds " + std::to_string(n) + " examples but " + list_rel + " records " +
              std::to_string(shard.number_of_examples),
          "", std::to_string(shard.number_of_examples), std::to_string(n));
    }
  }

  void FindOrphans(Split split) {
    namespace fs = std::filesystem;
    const std::string split_dir = ds_->PathOf(SplitName(split));
    std::error_code ec;
    fs::recursive_directory_iterator it(split_dir, fs::directory_options::none, ec), end;
    if (ec) return;
    const std::string root_prefix = ds_->PathOf("");
    for (; it != end; it.increment(ec)) {
      if (ec) break;
      if (!it->is_regular_file(ec)) continue;
      std::string full = it->path().string();
      std::string rel = full.substr(root_prefix.size());
      if (!listed_.count(rel)) {
        Add(CheckProblem::Kind::kOrphan, rel, "file not listed by any metadata");
      }
    }
  }

  std::shared_ptr<const Dataset> ds_;
  const CheckOptions& options_;
  std::vector<HashAlgorithm> algos_;
  CheckReport report_;
  std::unordered_set<std::string> listed_;
  std::unordered_set<std::string> visited_lists_;
};

}  // namespace

std::string_view CheckProblemKindName(CheckProblem::Kind kind) {
  switch (kind) {
    case CheckProblem::Kind::kHashMismatch: return "hash_mismatch";
    case CheckProblem::Kind::kMissingFile: return "missing_file";
    case CheckProblem::Kind::kMalformed: return "malformed";
    case CheckProblem::Kind::kCountMismatch: return "count_mismatch";
    case CheckProblem::Kind::kPathEscape: return "path_escape";
    case CheckProblem::Kind::kIOError: return "io_error";
    case CheckProblem::Kind::kOrphan: return "orphan";
  }
  return "unknown";
}

bool CheckReport::ok() const { return error_count() == 0; }

std::size_t CheckReport::error_count() const {
  std::size_t n = 0;
  for (const auto& p : problems) n += p.warning() ? 0 : 1;
  return n;
}

Result<CheckReport> CheckDataset(const std::string& root, const CheckOptions& options) {
  SEDPACK_ASSIGN_OR_RETURN(std::shared_ptr<Dataset> ds, Dataset::Open(root));
  Checker checker(ds, options);
  checker.CheckRoot();
  for (const auto& [split, entry] : ds->info().splits) {
    if (!options.splits.empty() &&
        std::find(options.splits.begin(), options.splits.end(), split) == options.splits.end()) {
      continue;
    }
    checker.CheckSplit(split, entry);
  }
  return checker.TakeReport();
}

}  // namespace sedpack
