// SPDX-License-Identifier: Apache-2.0
// The journal entries of a resumable index build (index_internal.h).
#include <algorithm>
#include <bit>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "index/index_internal.h"
#include "journal/journal_internal.h"
#include "journal/stats_internal.h"
#include "sedpack/dataset/dataset.h"
#include "sedpack/io/file_system.h"

namespace sedpack {
namespace {

// Records of another kind (an earlier form) are not read: their subtrees are walked again.
// Form 3 added each list's stamp (ListStamp): a form-2 record, which has none, is not kept.
constexpr std::string_view kIndexKind = "index subtree 3";

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
  // A field holding a decimal uint64 (at most 20 digits; from_chars refuses
  // one past 2^64 - 1): a list's stamp uses the whole range (kUnknown, a
  // negative mtime_ns's bits).
  bool Count(std::uint64_t* n) {
    std::string_view f;
    return Next(&f) && f.size() <= 20 && Digits(f, n);
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

// An unsigned LEB128 varint: the shards of a record are coded in binary, as a
// rerun decodes a kept subtree's shards for less than reading its lists costs
// (decimal fields cost about as much as the JSON they stood for).
// At `p`, which has room for kMaxVarint bytes; returns the end.
constexpr std::size_t kMaxVarint = 10;
inline char* PutVarint(char* p, std::uint64_t v) {
  if (v < 0x80) {  // the common case: a shared length, a short rest, a small count
    *p++ = static_cast<char>(v);
    return p;
  }
  while (v >= 0x80) {
    *p++ = static_cast<char>((v & 0x7f) | 0x80);
    v >>= 7;
  }
  *p++ = static_cast<char>(v);
  return p;
}

// Copies `n` bytes: up to 16 as two overlapping fixed-size moves that stay
// inside both ranges, past that through memcpy. The rest of a shard path after
// the start it shares with the previous one is a few bytes (a file number and
// its extension): a call into memcpy for it cost as much as the rest of the
// shard's encoding.
// The first and the last sizeof(Word) bytes of `n` (sizeof(Word) <= n <=
// 2 * sizeof(Word)), read before either is written.
template <typename Word>
inline void CopyHeadAndTail(char* to, const char* from, std::size_t n) {
  Word head, tail;
  std::memcpy(&head, from, sizeof(Word));
  std::memcpy(&tail, from + n - sizeof(Word), sizeof(Word));
  std::memcpy(to, &head, sizeof(Word));
  std::memcpy(to + n - sizeof(Word), &tail, sizeof(Word));
}

inline void CopyShort(char* to, const char* from, std::size_t n) {
  if (n > 16) {
    std::memcpy(to, from, n);
  } else if (n >= 8) {
    CopyHeadAndTail<std::uint64_t>(to, from, n);
  } else if (n >= 4) {
    CopyHeadAndTail<std::uint32_t>(to, from, n);
  } else if (n > 0) {  // 1 to 3 bytes: the first, the middle and the last cover them
    to[0] = from[0];
    to[n / 2] = from[n / 2];
    to[n - 1] = from[n - 1];
  }
}

// The length of the start `a` and `b` share, eight bytes at a time: the
// journal's share of an index build is mostly this and the copy of the rest.
std::size_t SharedPrefix(std::string_view a, std::string_view b) {
  const std::size_t most = std::min(a.size(), b.size());
  std::size_t i = 0;
  for (; i + 8 <= most; i += 8) {
    std::uint64_t x, y;
    std::memcpy(&x, a.data() + i, 8);
    std::memcpy(&y, b.data() + i, 8);
    // The first byte that differs, found in the word (little-endian: its lowest set bit).
    if (x != y) {
      if constexpr (std::endian::native == std::endian::little) return i + (__builtin_ctzll(x ^ y) >> 3);
      break;
    }
  }
  while (i < most && a[i] == b[i]) ++i;
  return i;
}

// Reads a varint at `*p` (below `end`); false if it is cut off or longer than 64 bits.
inline bool GetVarint(const char** p, const char* end, std::uint64_t* v) {
  if (*p < end && static_cast<unsigned char>(**p) < 0x80) {  // one byte: the common case
    *v = static_cast<unsigned char>(*(*p)++);
    return true;
  }
  std::uint64_t out = 0;
  for (int shift = 0; shift < 64 && *p < end; shift += 7) {
    const auto byte = static_cast<unsigned char>(*(*p)++);
    out |= static_cast<std::uint64_t>(byte & 0x7f) << shift;
    if (byte < 0x80) {
      *v = out;
      return true;
    }
  }
  return false;
}

// The record's header into `w` and where its shards start; false if it does
// not parse. The shards are checked as they are taken (TakeWalkedSubtree), on
// the walk's threads rather than here.
bool DecodeSubtree(std::string_view record, std::string* key, WalkedSubtree* w) {
  FieldCursor c(record);
  std::string_view list, field;
  std::uint64_t depth = 0, lists = 0, shards = 0;
  if (!c.Next(&list) || !c.Count(&depth) || !c.Count(&lists) || lists > record.size()) return false;
  w->visited.reserve(static_cast<std::size_t>(lists));
  w->stamps.reserve(static_cast<std::size_t>(lists));
  for (std::uint64_t i = 0; i < lists; ++i) {
    std::uint64_t size = 0, mtime = 0;
    if (!c.Next(&field) || !c.Count(&size) || !c.Count(&mtime)) return false;
    w->visited.emplace_back(field);
    w->stamps.push_back({size, static_cast<std::int64_t>(mtime)});
  }
  // Each shard takes at least three bytes: a larger count is not this record's.
  if (!c.Count(&shards) || shards > (record.size() - c.at()) / 3) return false;
  w->shards = static_cast<std::size_t>(shards);
  w->shards_at = c.at();
  *key = SubtreeKey(std::string(list), static_cast<std::size_t>(depth));
  return true;
}

}  // namespace

std::string SubtreeKey(const std::string& list_path, std::size_t depth) {
  return list_path + "\t" + std::to_string(depth);
}

// Fields: list path, depth, number of lists visited, the lists (each its path,
// size and mtime_ns, the latter as its two's-complement bits), the number
// of shards; then, in binary (varints), per shard the length of the start its
// path shares with the previous shard's, the length of the rest, the rest,
// and its example count. The paths of a subtree share their folders: so coded
// the journal is a fraction of the index it stands for (written in full it
// cost as much again as the index itself).
journal_internal::JournalEntry EncodeSubtree(const std::string& list_path, std::size_t depth,
                                             const std::vector<std::string>& visited,
                                             const std::vector<ListStamp>& stamps, const IndexedSplit& shards) {
  journal_internal::JournalTimer timer;
  std::string data;
  PutField(&data, list_path);
  PutField(&data, std::to_string(depth));
  PutField(&data, std::to_string(visited.size()));
  for (std::size_t i = 0; i < visited.size(); ++i) {
    // A list without a stamp gets kUnknown, which no stat matches.
    const ListStamp stamp = i < stamps.size() ? stamps[i] : ListStamp{};
    PutField(&data, visited[i]);
    PutField(&data, std::to_string(stamp.size));
    PutField(&data, std::to_string(static_cast<std::uint64_t>(stamp.mtime_ns)));
  }
  PutField(&data, std::to_string(shards.shard_paths.size()));
  // One pass, written through a pointer into room grown as it is needed
  // (doubling): sizing the string for the worst case (every path whole) had it
  // zero-filled and faulted in at about eight times the record's size, which
  // cost the walk more than the encoding itself. The first guess is what a
  // shard costs when its path shares its folder with the previous one's.
  const std::size_t n = shards.shard_paths.size();
  std::size_t at = data.size();
  data.resize(at + 8 * n + 64);
  std::string_view previous;
  for (std::size_t i = 0; i < n; ++i) {
    const std::string_view path = shards.shard_paths[i];
    const std::size_t shared = SharedPrefix(path, previous);
    const std::size_t rest = path.size() - shared;
    if (data.size() - at < rest + 3 * kMaxVarint) data.resize(std::max(2 * data.size(), at + rest + 3 * kMaxVarint));
    char* p = data.data() + at;
    p = PutVarint(p, shared);
    p = PutVarint(p, rest);
    CopyShort(p, path.data() + shared, rest);
    p += rest;
    p = PutVarint(p, shards.shard_examples[i]);
    at = static_cast<std::size_t>(p - data.data());
    previous = path;
  }
  data.resize(at);
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

ListStamp StampList(const Dataset& dataset, const std::string& relative) {
  FileStat st;
  const std::string path = dataset.PathOf(relative);
  // Stat follows a link, as the walk's open beneath the root does.
  if (FileSystemOr(dataset.file_system()).Stat(path.c_str(), &st) != 0 || st.type != FileType::kRegular) {
    return {};
  }
  return {st.size, st.mtime_ns};
}

bool WalkedListsUnchanged(const Dataset& dataset, const WalkedSubtree& walked) {
  // A stat each, no read: reading and hashing the lists cost as much as a
  // twentieth of the whole build.
  if (walked.stamps.size() != walked.visited.size()) return false;
  for (std::size_t i = 0; i < walked.visited.size(); ++i) {
    const ListStamp& was = walked.stamps[i];
    if (was.size == ListStamp::kUnknown || StampList(dataset, walked.visited[i]) != was) return false;
  }
  return true;
}

bool TakeWalkedSubtree(const WalkedSubtree& walked, IndexedSplit* shards, std::vector<std::string>* visited,
                       std::vector<ListStamp>* stamps) {
  IndexedSplit part;
  part.shard_paths.reserve(walked.shards);
  part.shard_examples.reserve(walked.shards);
  const char* p = walked.record.data() + walked.shards_at;
  const char* const end = walked.record.data() + walked.record.size();
  // The path rebuilt in place, each from the one before it: its room grows
  // only when a path is longer than any before (no string call per shard).
  std::string path(256, '\0');
  std::size_t size = 0;
  std::uint64_t shared = 0, rest = 0, examples = 0;
  for (std::size_t i = 0; i < walked.shards; ++i) {
    if (!GetVarint(&p, end, &shared) || shared > size || !GetVarint(&p, end, &rest) ||
        rest > static_cast<std::uint64_t>(end - p)) {
      return false;
    }
    size = static_cast<std::size_t>(shared + rest);
    if (size > path.size()) path.resize(std::max(size, 2 * path.size()));
    CopyShort(path.data() + shared, p, static_cast<std::size_t>(rest));
    p += rest;
    if (!GetVarint(&p, end, &examples) || !part.shard_paths.Add(std::string_view(path.data(), size)).ok()) {
      return false;
    }
    part.shard_examples.push_back(examples);
  }
  if (p != end) return false;  // the count and the shards disagree
  visited->insert(visited->end(), walked.visited.begin(), walked.visited.end());
  if (stamps) stamps->insert(stamps->end(), walked.stamps.begin(), walked.stamps.end());
  if (shards->shard_paths.empty()) {
    shards->shard_paths = std::move(part.shard_paths);
  } else if (!shards->shard_paths.Append(std::move(part.shard_paths)).ok()) {
    return false;
  }
  shards->shard_examples.insert(shards->shard_examples.end(), part.shard_examples.begin(), part.shard_examples.end());
  return true;
}

}  // namespace sedpack
