// SPDX-License-Identifier: Apache-2.0
// The journal entries of a resumable index build (index_internal.h).
#include <charconv>
#include <filesystem>
#include <string>
#include <vector>

#include "index/index_internal.h"
#include "journal/journal_internal.h"

namespace sedpack {
namespace {

constexpr std::string_view kIndexKind = "index entries";

// Walks the length-prefixed fields of a journal record (journal_internal::PackFields's form).
class FieldCursor {
 public:
  explicit FieldCursor(std::string_view data) : data_(data), size_(data.size()) {}
  bool done() const { return data_.empty(); }
  std::size_t at() const { return size_ - data_.size(); }
  bool Next(std::string_view* field) {
    const std::size_t colon = data_.find(':');
    if (colon == std::string_view::npos || colon == 0 || colon > 12) return false;
    std::uint64_t n = 0;
    if (!Digits(data_.substr(0, colon), &n)) return false;
    data_.remove_prefix(colon + 1);
    if (n > data_.size()) return false;
    *field = data_.substr(0, static_cast<std::size_t>(n));
    data_.remove_prefix(static_cast<std::size_t>(n));
    return true;
  }
  // A field holding a decimal count (at most 19 digits).
  bool Count(std::uint64_t* n) {
    std::string_view f;
    return Next(&f) && f.size() <= 19 && Digits(f, n);
  }

 private:
  static bool Digits(std::string_view f, std::uint64_t* n) {
    if (f.empty()) return false;
    const auto [end, ec] = std::from_chars(f.data(), f.data() + f.size(), *n);
    return ec == std::errc() && end == f.data() + f.size();
  }
  std::string_view data_;
  std::size_t size_;
};

void PutField(std::string* out, std::string_view field) {
  out->append(std::to_string(field.size()));
  out->push_back(':');
  out->append(field);
}

// The record's lists into `w` and where its shards start; false if its fields do not add up.
bool DecodeSubtree(std::string_view record, std::string* key, WalkedSubtree* w) {
  FieldCursor c(record);
  std::string_view list, field;
  std::uint64_t depth = 0, lists = 0, examples = 0;
  if (!c.Next(&list) || !c.Count(&depth) || !c.Count(&lists)) return false;
  for (std::uint64_t i = 0; i < lists; ++i) {
    if (!c.Next(&field)) return false;
    w->visited.emplace_back(field);
  }
  w->shards_at = c.at();
  while (!c.done()) {
    if (!c.Next(&field) || !c.Count(&examples)) return false;
  }
  *key = SubtreeKey(std::string(list), static_cast<std::size_t>(depth));
  return true;
}

}  // namespace

std::string SubtreeKey(const std::string& list_path, std::size_t depth) {
  return list_path + "\t" + std::to_string(depth);
}

// Fields: list path, depth, number of lists visited, the lists, then a path
// and an example count per shard; written straight into the record (the
// paths are most of a build's memory: no copy of them in between).
journal_internal::JournalEntry EncodeSubtree(const std::string& list_path, std::size_t depth,
                                             const std::vector<std::string>& visited, const IndexedSplit& shards) {
  std::string data;
  PutField(&data, list_path);
  PutField(&data, std::to_string(depth));
  PutField(&data, std::to_string(visited.size()));
  for (const std::string& v : visited) PutField(&data, v);
  for (std::size_t i = 0; i < shards.shard_paths.size(); ++i) {
    PutField(&data, shards.shard_paths[i]);
    PutField(&data, std::to_string(shards.shard_examples[i]));
  }
  return {std::string(kIndexKind), std::move(data)};
}

std::map<std::string, WalkedSubtree> DecodeSubtrees(std::vector<journal_internal::JournalEntry>&& entries) {
  std::map<std::string, WalkedSubtree> out;
  for (auto& e : entries) {
    std::string key;
    WalkedSubtree w;
    if (e.kind != kIndexKind || !DecodeSubtree(e.data, &key, &w)) continue;
    w.record = std::move(e.data);
    out[key] = std::move(w);
  }
  return out;
}

IndexJobIdentity IndexJobFor(const std::string& root, const std::string& dataset_info_sha256_hex) {
  IndexJobIdentity job;
  job.parameters = {{"job", "index build"}, {"dataset_info.json sha256", dataset_info_sha256_hex}};
  job.id = journal_internal::JobIdFor("index build\n" + std::filesystem::absolute(root).lexically_normal().string());
  return job;
}

Result<int> FreshJournalNumber(const std::string& root, const std::string& id, FileSystem* fs) {
  SEDPACK_ASSIGN_OR_RETURN(std::vector<journal_internal::JournalFile> journals, journal_internal::ListJournals(root, fs));
  int next = 0;
  for (const journal_internal::JournalFile& j : journals) {
    if (j.job_id == id) next = std::max(next, j.rank + 1);
  }
  return next;
}

Status TakeWalkedSubtree(const WalkedSubtree& walked, IndexedSplit* shards, std::vector<std::string>* visited) {
  visited->insert(visited->end(), walked.visited.begin(), walked.visited.end());
  FieldCursor c(std::string_view(walked.record).substr(walked.shards_at));
  std::string_view path;
  std::uint64_t examples = 0;
  while (!c.done()) {
    if (!c.Next(&path) || !c.Count(&examples)) return Status::Corruption("malformed index build journal record");
    SEDPACK_RETURN_NOT_OK(shards->shard_paths.Add(path));
    shards->shard_examples.push_back(examples);
  }
  return Status::OK();
}

}  // namespace sedpack
