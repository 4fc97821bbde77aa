// SPDX-License-Identifier: Apache-2.0
#include "sedpack/maintain/restamp.h"

#include <nlohmann/json.hpp>
#include <unistd.h>

#include <chrono>
#include <ctime>
#include <fstream>
#include <map>

#include "io/timestamp.h"
#include "sedpack/codecs/hash.h"
#include "sedpack/dataset/commit.h"
#include "sedpack/dataset/dataset.h"
#include "sedpack/io/file.h"
#include "sedpack/metadata/paths.h"
#include "sidecar/sidecar_internal.h"
#include "sidecar/sidecar_files.h"
#include "dataset/commit_metadata.h"
#include "dataset/shards_tree_internal.h"

namespace sedpack {
namespace {

// Recomputes the hashes of a split's tree, children before parents; lists
// that change are queued in `writes` (children first) for one journaled commit.
class Restamper : public dataset_internal::ShardsTreeVisitor {
 public:
  Restamper(const Dataset& ds, RestampSummary* s, std::vector<MetadataWrite>* writes)
      : ds_(ds), s_(s), writes_(writes) {}

  Status Enter(dataset_internal::ShardsTreeNode& node) override {
    for (ShardInfo& shard : node.list.shard_files) {
      for (FileInfo& f : shard.file_infos) {
        SEDPACK_RETURN_NOT_OK(ValidateRelativePath(f.file_path, "file_path"));
        SEDPACK_ASSIGN_OR_RETURN(std::vector<std::string> h, ds_.HashOf(f.file_path));
        if (h != f.hash_checksums) {
          f.hash_checksums = std::move(h);
          ++s_->shards_changed;
          changed_[node.path()] = true;
        }
      }
    }
    return Status::OK();
  }

  Status Leave(dataset_internal::ShardsTreeNode& node) override {
    const std::string& rel = node.path();
    bool changed = changed_.erase(rel) > 0;
    for (ShardListInfo& child : node.list.children_shard_lists) {
      auto it = hashes_.find(child.shard_list_info_file.file_path);
      if (it == hashes_.end()) return Status::Internal(child.shard_list_info_file.file_path, ": not restamped");
      if (it->second != child.shard_list_info_file.hash_checksums) {
        child.shard_list_info_file.hash_checksums = std::move(it->second);
        changed = true;
      }
      hashes_.erase(it);
    }
    const auto& algos = ds_.info().dataset_structure.hash_checksum_algorithms;
    const std::string& before = node.text;
    if (!changed) {
      SEDPACK_ASSIGN_OR_RETURN(hashes_[rel],
                               HashBytes(algos, std::as_bytes(std::span<const char>(before.data(), before.size()))));
      return Status::OK();
    }
    std::string text = SerializeShardsList(node.list);
    SEDPACK_ASSIGN_OR_RETURN(hashes_[rel],
                             HashBytes(algos, std::as_bytes(std::span<const char>(text.data(), text.size()))));
    writes_->push_back(MetadataWrite{rel, std::move(text), std::move(node.text)});
    ++s_->lists_changed;
    return Status::OK();
  }

  /// The hashes of `rel`'s bytes as they will be after the commit (once its
  /// subtree is walked).
  std::vector<std::string> TakeHashes(const std::string& rel) {
    auto node = hashes_.extract(rel);
    return node ? std::move(node.mapped()) : std::vector<std::string>{};
  }

 private:
  const Dataset& ds_;
  RestampSummary* s_;
  std::vector<MetadataWrite>* writes_;
  std::map<std::string, bool> changed_;                     // lists whose shard hashes changed
  std::map<std::string, std::vector<std::string>> hashes_;  // walked lists whose parent is not done
};

std::string Now() { return io_internal::UtcTimestamp(static_cast<std::int64_t>(std::time(nullptr))); }

}  // namespace

Status AppendAudit(const std::string& root, const std::string& action, const std::string& reason,
                   const std::vector<std::string>& old_root, const std::vector<std::string>& new_root) {
  nlohmann::ordered_json j;
  j["time"] = Now();
  const char* user = std::getenv("USER");
  j["user"] = user ? user : std::to_string(::getuid());
  char host[256] = {0};
  ::gethostname(host, sizeof(host) - 1);
  j["host"] = host;
  j["action"] = action;
  j["reason"] = reason;
  j["dataset_info_before"] = old_root;
  j["dataset_info_after"] = new_root;
  // The audit log only grows: read what is there and write it back with the
  // new line, atomically, so a crash never leaves half a line.
  const std::string path = SidecarPath(root, kAuditSidecarName);
  std::string text;
  if (PathExists(path)) {
    SEDPACK_ASSIGN_OR_RETURN(text, ReadFileText(path, 1ULL << 30));
  }
  text += j.dump() + "\n";
  return WriteSidecar(root, kAuditSidecarName, std::as_bytes(std::span<const char>(text.data(), text.size())));
}

Result<RestampSummary> RestampHashes(const std::string& root, const std::string& reason) {
  if (reason.empty()) return Status::InvalidArgument("a reason is required to re-stamp hashes");
  SEDPACK_ASSIGN_OR_RETURN(std::shared_ptr<Dataset> ds, Dataset::Open(root));
  if (ds->pack()) return Status::InvalidArgument(root, ": a packed dataset is read-only");
  RestampSummary s;
  SEDPACK_ASSIGN_OR_RETURN(s.old_root, ds->MetadataChecksums());
  DatasetInfo info = ds->info();
  std::vector<MetadataWrite> writes;
  Restamper restamp(*ds, &s, &writes);
  dataset_internal::ShardsTreeLimits limits;
  limits.keep_text = true;
  for (auto& [split, list_info] : info.splits) {
    SEDPACK_RETURN_NOT_OK(dataset_internal::WalkShardsTree(*ds, split, restamp, limits));
    list_info.shard_list_info_file.hash_checksums = restamp.TakeHashes(list_info.shard_list_info_file.file_path);
  }
  const std::string info_text = SerializeDatasetInfo(info);
  SEDPACK_RETURN_NOT_OK(CommitMetadata(root, writes, &info_text));
  SEDPACK_RETURN_NOT_OK(ds->Reload());
  SEDPACK_ASSIGN_OR_RETURN(s.new_root, ds->MetadataChecksums());
  SEDPACK_RETURN_NOT_OK(AppendAudit(root, "rewrite-digests", reason, s.old_root, s.new_root));
  return s;
}

}  // namespace sedpack
