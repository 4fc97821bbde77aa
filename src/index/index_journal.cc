// SPDX-License-Identifier: Apache-2.0
// The journal entries of a resumable index build (index_internal.h).
#include <algorithm>
#include <charconv>
#include <filesystem>
#include <string>
#include <vector>

#include "index/index_internal.h"
#include "journal/journal_internal.h"
#include "journal/stats_internal.h"

namespace sedpack {
namespace {

// Records of another kind (an earlier form) are not read: their subtrees are walked again.
constexpr std::string_view kIndexKind = "index subtree";

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

void PutDigits(std::string* out, std::uint64_t v) {
  char digits[20];
  const auto end = std::to_chars(digits, digits + sizeof(digits), v).ptr;
  out->append(digits, static_cast<std::size_t>(end - digits));
}

void PutField(std::string* out, std::string_view field) {
  PutDigits(out, field.size());
  out->push_back(':');
  out->append(field);
}

// A count as a field, without a string made for it (three fields a shard).
void PutCount(std::string* out, std::uint64_t v) {
  if (v < 100) {  // most counts: a shared length, a shard's examples
    const char two[5] = {'2', ':', static_cast<char>('0' + v / 10), static_cast<char>('0' + v % 10), 0};
    const char one[4] = {'1', ':', static_cast<char>('0' + v), 0};
    out->append(v < 10 ? one : two, v < 10 ? 3 : 4);
    return;
  }
  char digits[20];
  const auto end = std::to_chars(digits, digits + sizeof(digits), v).ptr;
  PutDigits(out, static_cast<std::uint64_t>(end - digits));
  out->push_back(':');
  out->append(digits, static_cast<std::size_t>(end - digits));
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
  std::uint64_t shared = 0, previous = 0;
  while (!c.done()) {
    if (!c.Count(&shared) || shared > previous || !c.Next(&field) || !c.Count(&examples)) return false;
    previous = shared + field.size();
  }
  *key = SubtreeKey(std::string(list), static_cast<std::size_t>(depth));
  return true;
}

}  // namespace

std::string SubtreeKey(const std::string& list_path, std::size_t depth) {
  return list_path + "\t" + std::to_string(depth);
}

// Fields: list path, depth, number of lists visited, the lists, then per
// shard the length of the start its path shares with the previous shard's,
// the rest of its path, and its example count. The paths of a subtree share
// their folders: so coded the journal is a fraction of the index it stands
// for (written in full it cost as much again as the index itself).
journal_internal::JournalEntry EncodeSubtree(const std::string& list_path, std::size_t depth,
                                             const std::vector<std::string>& visited, const IndexedSplit& shards) {
  journal_internal::JournalTimer timer;
  std::string data;
  data.reserve(64 + 16 * shards.shard_paths.size());
  PutField(&data, list_path);
  PutField(&data, std::to_string(depth));
  PutField(&data, std::to_string(visited.size()));
  for (const std::string& v : visited) PutField(&data, v);
  std::string_view previous;
  for (std::size_t i = 0; i < shards.shard_paths.size(); ++i) {
    const std::string_view path = shards.shard_paths[i];
    const std::size_t most = std::min(path.size(), previous.size());
    const std::size_t shared =
        static_cast<std::size_t>(std::mismatch(path.begin(), path.begin() + static_cast<std::ptrdiff_t>(most),
                                               previous.begin()).first - path.begin());
    PutCount(&data, shared);
    PutField(&data, path.substr(shared));
    PutCount(&data, shards.shard_examples[i]);
    previous = path;
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
  std::string_view rest;
  std::string path;
  std::uint64_t shared = 0, examples = 0;
  while (!c.done()) {
    // DecodeSubtrees checked every shared length against the path before it.
    if (!c.Count(&shared) || shared > path.size() || !c.Next(&rest) || !c.Count(&examples)) {
      return Status::Corruption("malformed index build journal record");
    }
    path.resize(static_cast<std::size_t>(shared));
    path.append(rest);
    SEDPACK_RETURN_NOT_OK(shards->shard_paths.Add(path));
    shards->shard_examples.push_back(examples);
  }
  return Status::OK();
}

}  // namespace sedpack
