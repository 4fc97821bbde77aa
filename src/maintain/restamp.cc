// SPDX-License-Identifier: Apache-2.0
#include "sedpack/maintain/restamp.h"

#include <nlohmann/json.hpp>
#include <unistd.h>

#include <chrono>
#include <ctime>
#include <fstream>

#include "sedpack/codecs/hash.h"
#include "sedpack/dataset/commit.h"
#include "sedpack/dataset/dataset.h"
#include "sedpack/io/file.h"
#include "sedpack/metadata/paths.h"
#include "sidecar/sidecar_internal.h"
#include "sidecar/sidecar_files.h"
#include "dataset/commit_metadata.h"

namespace sedpack {
namespace {

constexpr int kMaxDepth = 64;

// Recomputes the hashes below `rel`; lists that change are queued in `writes`
// (children first) for one journaled commit. Returns the hashes of `rel`'s bytes
// as they will be after that commit.
Result<std::vector<std::string>> RestampList(const Dataset& ds, const std::string& rel, int depth,
                                             RestampSummary* s, std::vector<MetadataWrite>* writes) {
  if (depth > kMaxDepth) return Status::Corruption(rel, ": shards_list tree deeper than ", kMaxDepth, " levels");
  SEDPACK_RETURN_NOT_OK(ValidateRelativePath(rel, "shard_list_info_file.file_path"));
  SEDPACK_ASSIGN_OR_RETURN(std::string before, ds.ReadText(rel, 1ULL << 30));
  SEDPACK_ASSIGN_OR_RETURN(ShardsList list, ParseShardsList(before, rel));
  bool changed = false;
  for (ShardInfo& shard : list.shard_files) {
    for (FileInfo& f : shard.file_infos) {
      SEDPACK_RETURN_NOT_OK(ValidateRelativePath(f.file_path, "file_path"));
      SEDPACK_ASSIGN_OR_RETURN(std::vector<std::string> h, ds.HashOf(f.file_path));
      if (h != f.hash_checksums) {
        f.hash_checksums = std::move(h);
        ++s->shards_changed;
        changed = true;
      }
    }
  }
  for (ShardListInfo& child : list.children_shard_lists) {
    SEDPACK_ASSIGN_OR_RETURN(std::vector<std::string> h,
                             RestampList(ds, child.shard_list_info_file.file_path, depth + 1, s, writes));
    if (h != child.shard_list_info_file.hash_checksums) {
      child.shard_list_info_file.hash_checksums = std::move(h);
      changed = true;
    }
  }
  const auto& algos = ds.info().dataset_structure.hash_checksum_algorithms;
  if (!changed) return HashBytes(algos, std::as_bytes(std::span<const char>(before.data(), before.size())));
  std::string text = SerializeShardsList(list);
  auto hashes = HashBytes(algos, std::as_bytes(std::span<const char>(text.data(), text.size())));
  writes->push_back(MetadataWrite{rel, std::move(text), std::move(before)});
  ++s->lists_changed;
  return hashes;
}

std::string Now() {
  const std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

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
  for (auto& [split, list_info] : info.splits) {
    SEDPACK_ASSIGN_OR_RETURN(list_info.shard_list_info_file.hash_checksums,
                             RestampList(*ds, list_info.shard_list_info_file.file_path, 0, &s, &writes));
  }
  const std::string info_text = SerializeDatasetInfo(info);
  SEDPACK_RETURN_NOT_OK(CommitMetadata(root, writes, &info_text));
  SEDPACK_RETURN_NOT_OK(ds->Reload());
  SEDPACK_ASSIGN_OR_RETURN(s.new_root, ds->MetadataChecksums());
  SEDPACK_RETURN_NOT_OK(AppendAudit(root, "rewrite-digests", reason, s.old_root, s.new_root));
  return s;
}

}  // namespace sedpack
