// SPDX-License-Identifier: Apache-2.0
// The journal entries of a resumable index build (index_internal.h).
#include <algorithm>
#include <array>
#include <bit>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <cerrno>
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include <fcntl.h>

#include "codecs/decode_points_internal.h"
#include "index/index_internal.h"
#include "sedpack/io/file.h"
#include "journal/journal_internal.h"
#include "journal/stats_internal.h"
#include "sedpack/dataset/dataset.h"
#include "sedpack/io/file_system.h"

namespace sedpack {
namespace {

// Records of another kind (an earlier form) are not read: their subtrees are walked again.
// Form 3 added each list's stamp (ListStamp): a form-2 record, which has none, is not kept.
// Form 4 packs the lowercase hex digits that start a path's rest two to a byte.
constexpr std::string_view kIndexKind = "index subtree 4";

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

// Shard files are named by 32 random lowercase hex digits (by sedpack and by
// the reference alike): after the folder a path shares with the one before,
// its rest is those digits and an extension. Packed two to a byte they take
// half the room; the journal of a build of such shards was 38 bytes a shard,
// as much as a twentieth of the index build's time spent writing it.
constexpr std::array<std::uint8_t, 256> MakeHexValues() {
  std::array<std::uint8_t, 256> v{};
  for (auto& x : v) x = 0xff;
  for (int c = '0'; c <= '9'; ++c) v[static_cast<std::size_t>(c)] = static_cast<std::uint8_t>(c - '0');
  for (int c = 'a'; c <= 'f'; ++c) v[static_cast<std::size_t>(c)] = static_cast<std::uint8_t>(c - 'a' + 10);
  return v;
}
constexpr std::array<std::uint8_t, 256> kHexValue = MakeHexValues();
constexpr char kHexDigits[] = "0123456789abcdef";
// At most this many pairs a shard: their count is one varint byte.
constexpr std::size_t kMaxHexPairs = 127;

// Packs the pairs of lowercase hex digits that start `in` (at most `n`
// characters, kMaxHexPairs pairs) into `out`; returns how many pairs.
inline std::size_t PackHexPairs(const char* in, std::size_t n, char* out) {
  const std::size_t most = std::min(n / 2, kMaxHexPairs);
  std::size_t k = 0;
#if defined(__SSE2__)
  // Sixteen digits at a time (SSE2, every x86-64): a name's 32 in two steps.
  const __m128i zero = _mm_setzero_si128(), nine = _mm_set1_epi8(9), five = _mm_set1_epi8(5);
  while (k + 8 <= most) {
    const __m128i c = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + 2 * k));
    const __m128i d = _mm_sub_epi8(c, _mm_set1_epi8('0'));
    const __m128i l = _mm_sub_epi8(c, _mm_set1_epi8('a'));
    const __m128i is_digit = _mm_cmpeq_epi8(_mm_min_epu8(d, nine), d);  // d <= 9, unsigned
    const __m128i is_letter = _mm_cmpeq_epi8(_mm_min_epu8(l, five), l);
    const unsigned valid = static_cast<unsigned>(_mm_movemask_epi8(_mm_or_si128(is_digit, is_letter)));
    const __m128i value = _mm_or_si128(_mm_and_si128(is_digit, d),
                                       _mm_and_si128(is_letter, _mm_add_epi8(l, _mm_set1_epi8(10))));
    // Each 16-bit lane holds a pair, its first digit in the low byte.
    const __m128i pair = _mm_or_si128(_mm_slli_epi16(_mm_and_si128(value, _mm_set1_epi16(0x00ff)), 4),
                                      _mm_srli_epi16(value, 8));
    _mm_storel_epi64(reinterpret_cast<__m128i*>(out + k), _mm_packus_epi16(pair, zero));
    if (valid != 0xffff) return k + static_cast<std::size_t>(std::countr_one(valid)) / 2;
    k += 8;
  }
#endif
  for (; k < most; ++k) {
    const std::uint8_t hi = kHexValue[static_cast<unsigned char>(in[2 * k])];
    const std::uint8_t lo = kHexValue[static_cast<unsigned char>(in[2 * k + 1])];
    if ((hi | lo) > 0x0f) break;
    out[k] = static_cast<char>((hi << 4) | lo);
  }
  return k;
}

inline void UnpackHexPairs(const char* in, std::size_t pairs, char* out) {
  for (std::size_t k = 0; k < pairs; ++k) {
    const auto b = static_cast<unsigned char>(in[k]);
    out[2 * k] = kHexDigits[b >> 4];
    out[2 * k + 1] = kHexDigits[b & 0x0f];
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
  // Each shard takes at least four bytes: a larger count is not this record's.
  if (!c.Count(&shards) || shards > (record.size() - c.at()) / 4) return false;
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
// path shares with the previous shard's, the number of pairs of lowercase hex
// digits that start the rest and those pairs packed a byte each, the length of
// what follows them and those bytes, and its example count. The paths of a
// subtree share their folders: so coded the journal is a fraction of the index
// it stands for (written in full it cost as much again as the index itself).
journal_internal::JournalEntry EncodeSubtree(const std::string& list_path, std::size_t depth,
                                             const std::vector<std::string>& visited,
                                             const std::vector<ListStamp>& stamps, const IndexedSplit& shards,
                                             std::string buffer) {
  journal_internal::JournalTimer timer;
  std::string data = std::move(buffer);
  data.clear();
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
  // One pass into a buffer of the thread's own, kept from one record to the
  // next and grown (doubling) as needed, then one copy into the record: grown
  // in the record itself, each record was zero-filled and faulted in afresh
  // at every doubling, which cost the walk more than the encoding itself.
  thread_local std::unique_ptr<char[]> scratch;
  thread_local std::size_t room = 0;
  const std::size_t n = shards.shard_paths.size();
  std::size_t at = 0;
  std::string_view previous;
  for (std::size_t i = 0; i < n; ++i) {
    const std::string_view path = shards.shard_paths[i];
    const std::size_t shared = SharedPrefix(path, previous);
    const std::size_t rest = path.size() - shared;
    // A shard takes at most 3 varints, the pairs' count and its rest.
    if (room - at < rest + 4 * kMaxVarint) {
      const std::size_t grown = std::max({2 * room, at + rest + 4 * kMaxVarint, std::size_t{64} << 10});
      auto bigger = std::make_unique_for_overwrite<char[]>(grown);
      if (at > 0) std::memcpy(bigger.get(), scratch.get(), at);
      scratch = std::move(bigger);
      room = grown;
    }
    char* p = scratch.get() + at;
    p = PutVarint(p, shared);
    const std::size_t pairs = PackHexPairs(path.data() + shared, rest, p + 1);
    *p = static_cast<char>(pairs);  // < 128: one varint byte
    p += 1 + pairs;
    const std::size_t tail = rest - 2 * pairs;
    p = PutVarint(p, tail);
    CopyShort(p, path.data() + shared + 2 * pairs, tail);
    p += tail;
    p = PutVarint(p, shards.shard_examples[i]);
    at = static_cast<std::size_t>(p - scratch.get());
    previous = path;
  }
  data.append(scratch.get(), at);
  return {std::string(kIndexKind), std::move(data)};
}

std::map<std::string, WalkedSubtree> DecodeSubtrees(std::vector<journal_internal::EntryView>&& entries) {
  std::map<std::string, WalkedSubtree> out;
  for (auto& e : entries) {
    std::string key;
    WalkedSubtree w;
    if (e.kind != kIndexKind || !DecodeSubtree(e.data, &key, &w)) continue;
    w.record = e.data;
    w.file = std::move(e.file);
    out[key] = std::move(w);
  }
  return out;
}

std::map<std::string, WalkedSubtree> DecodeSubtrees(std::vector<journal_internal::JournalEntry>&& entries) {
  std::vector<journal_internal::EntryView> views;
  views.reserve(entries.size());
  for (auto& e : entries) {
    auto file = std::make_shared<const std::string>(std::move(e.data));
    views.push_back({e.kind, *file, file});
  }
  return DecodeSubtrees(std::move(views));
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
  if (walked.taken) {  // read back from a partial index, already checked
    ShardPathList paths(walked.taken->shard_paths);
    if (!shards->shard_paths.Append(std::move(paths)).ok()) return false;
    shards->shard_examples.insert(shards->shard_examples.end(), walked.taken->shard_examples.begin(),
                                  walked.taken->shard_examples.end());
    visited->insert(visited->end(), walked.visited.begin(), walked.visited.end());
    if (stamps) stamps->insert(stamps->end(), walked.stamps.begin(), walked.stamps.end());
    return true;
  }
  IndexedSplit part;
  part.shard_paths.reserve(walked.shards);
  part.shard_examples.reserve(walked.shards);
  const char* p = walked.record.data() + walked.shards_at;
  const char* const end = walked.record.data() + walked.record.size();
  // The path rebuilt in place, each from the one before it: its room grows
  // only when a path is longer than any before (no string call per shard).
  std::string path(256, '\0');
  std::size_t size = 0;
  std::uint64_t shared = 0, pairs = 0, tail = 0, examples = 0;
  for (std::size_t i = 0; i < walked.shards; ++i) {
    if (!GetVarint(&p, end, &shared) || shared > size || !GetVarint(&p, end, &pairs) || pairs > kMaxHexPairs ||
        pairs > static_cast<std::uint64_t>(end - p)) {
      return false;
    }
    const char* packed = p;
    p += pairs;
    if (!GetVarint(&p, end, &tail) || tail > static_cast<std::uint64_t>(end - p)) return false;
    size = static_cast<std::size_t>(shared + 2 * pairs + tail);
    if (size > path.size()) path.resize(std::max(size, 2 * path.size()));
    UnpackHexPairs(packed, static_cast<std::size_t>(pairs), path.data() + shared);
    CopyShort(path.data() + shared + 2 * pairs, p, static_cast<std::size_t>(tail));
    p += tail;
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

// ---- The units of a written prefix ---------------------------------------------

namespace {

constexpr std::string_view kPrefixKind = "index prefix 1";

// Runs of equal values (value, count), as varints.
void PutRuns(std::string* out, const ValueRuns& values) {
  char buf[2 * kMaxVarint];
  out->append(buf, static_cast<std::size_t>(PutVarint(buf, values.runs.size()) - buf));
  for (const auto& [v, n] : values.runs) {
    char* p = PutVarint(buf, v);
    p = PutVarint(p, n);
    out->append(buf, static_cast<std::size_t>(p - buf));
  }
}

// Runs that add up to exactly `count` values, each at most `most`.
bool GetRuns(const char** p, const char* end, std::uint64_t count, std::uint64_t most, ValueRuns* out) {
  std::uint64_t runs = 0;
  if (!GetVarint(p, end, &runs) || runs > count) return false;
  for (std::uint64_t r = 0; r < runs; ++r) {
    std::uint64_t v = 0, n = 0;
    if (!GetVarint(p, end, &v) || !GetVarint(p, end, &n) || v > most || n == 0 || n > count - out->size) {
      return false;
    }
    out->Add(v, n);
  }
  return out->size == count;
}

std::optional<PrefixUnit> DecodePrefixUnit(std::string_view record, std::uint64_t partial_size) {
  FieldCursor c(record);
  PrefixUnit u;
  std::string_view list, field;
  std::uint64_t depth = 0, subtree = 0, split = 0, lists = 0, shards = 0;
  if (!c.Next(&list) || !c.Count(&depth) || !c.Count(&subtree) || subtree > 1 || !c.Count(&split) || split > 2 ||
      !c.Count(&lists) || lists > record.size()) {
    return std::nullopt;
  }
  u.list = std::string(list);
  u.depth = static_cast<std::size_t>(depth);
  u.subtree = subtree == 1;
  u.split = static_cast<Split>(split);
  for (std::uint64_t i = 0; i < lists; ++i) {
    std::uint64_t size = 0, mtime = 0;
    if (!c.Next(&field) || !c.Count(&size) || !c.Count(&mtime)) return std::nullopt;
    u.visited.emplace_back(field);
    u.stamps.push_back({size, static_cast<std::int64_t>(mtime)});
  }
  // Every path has a byte at least, and the bytes are in the file: what the
  // runs expand to is bounded by the file, not by what the record claims.
  if (!c.Count(&u.offset) || !c.Count(&u.bytes) || !c.Count(&u.hash) || !c.Count(&shards) ||
      u.offset > partial_size || u.bytes > partial_size - u.offset || shards > u.bytes) {
    return std::nullopt;
  }
  const char* p = record.data() + c.at();
  const char* const end = record.data() + record.size();
  if (!GetRuns(&p, end, shards, std::numeric_limits<std::uint32_t>::max(), &u.lengths) ||
      !GetRuns(&p, end, shards, std::numeric_limits<std::uint64_t>::max(), &u.examples) || p != end) {
    return std::nullopt;
  }
  std::uint64_t total = 0;
  for (const auto& [n, count] : u.lengths.runs) {
    std::uint64_t bytes = 0;
    // No path is empty; the lengths add up to the bytes.
    if (n == 0 || __builtin_mul_overflow(n, count, &bytes) || __builtin_add_overflow(total, bytes, &total)) {
      return std::nullopt;
    }
  }
  if (total != u.bytes) return std::nullopt;
  return u;
}

}  // namespace

// Fields: list path, depth, subtree (0/1), split id, number of lists visited,
// the lists (path, size, mtime_ns as for a subtree record), offset and size of
// the path bytes, their XXH3-64, the number of shards; then in binary the runs
// of path lengths and the runs of example counts (PutRuns).
journal_internal::JournalEntry EncodePrefixUnit(const PrefixUnit& u) {
  journal_internal::JournalTimer timer;
  std::string data;
  PutField(&data, u.list);
  PutField(&data, std::to_string(u.depth));
  PutField(&data, u.subtree ? "1" : "0");
  PutField(&data, std::to_string(static_cast<int>(u.split)));
  PutField(&data, std::to_string(u.visited.size()));
  for (std::size_t i = 0; i < u.visited.size(); ++i) {
    const ListStamp stamp = i < u.stamps.size() ? u.stamps[i] : ListStamp{};
    PutField(&data, u.visited[i]);
    PutField(&data, std::to_string(stamp.size));
    PutField(&data, std::to_string(static_cast<std::uint64_t>(stamp.mtime_ns)));
  }
  PutField(&data, std::to_string(u.offset));
  PutField(&data, std::to_string(u.bytes));
  PutField(&data, std::to_string(u.hash));
  PutField(&data, std::to_string(u.lengths.size));
  PutRuns(&data, u.lengths);
  PutRuns(&data, u.examples);
  return {std::string(kPrefixKind), std::move(data)};
}

std::vector<PrefixUnit> DecodePrefixUnits(const std::vector<journal_internal::EntryView>& entries,
                                          std::uint64_t partial_size) {
  std::vector<PrefixUnit> out;
  for (const journal_internal::EntryView& e : entries) {
    if (e.kind != kPrefixKind) continue;
    if (auto u = DecodePrefixUnit(e.data, partial_size)) out.push_back(std::move(*u));
  }
  return out;
}

std::string PartialIndexPath(const std::string& job_id) {
  std::string path(journal_internal::kJournalDir);
  path.append("/").append(job_id).append(".index.partial");
  return path;
}

Result<std::string> ReadPartialRange(FileSystem& fs, int fd, std::uint64_t offset, std::uint64_t bytes,
                                     std::uint64_t hash) {
  std::string data(static_cast<std::size_t>(bytes), '\0');
  std::size_t done = 0;
  while (done < data.size()) {
    const long n = fs.Pread(fd, data.data() + done, data.size() - done, static_cast<std::int64_t>(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return Status::IOError("partial index: cannot read ", bytes, " bytes at ", offset);
    done += static_cast<std::size_t>(n);
  }
  if (codecs_internal::FastChecksum(std::as_bytes(std::span<const char>(data))) != hash) {
    return Status::Corruption("partial index: the bytes at ", offset, " do not match their journal record");
  }
  return data;
}

void AddPrefixSubtrees(const std::string& root, const std::string& job_id, const std::vector<PrefixUnit>& units,
                       FileSystem* fs, std::map<std::string, WalkedSubtree>* known) {
  FileSystem& files = FileSystemOr(fs);
  if (std::none_of(units.begin(), units.end(), [](const PrefixUnit& u) { return u.subtree; })) return;
  const std::string path = JoinRoot(root, PartialIndexPath(job_id));
  const int fd = files.Open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return;  // nothing to read back: the subtrees are walked again
  for (const PrefixUnit& u : units) {
    if (!u.subtree) continue;
    auto bytes = ReadPartialRange(files, fd, u.offset, u.bytes, u.hash);
    if (!bytes.ok()) continue;
    auto split = std::make_shared<IndexedSplit>();
    split->split = u.split;
    std::size_t at = 0;
    bool ok = true;
    for (const auto& [n, count] : u.lengths.runs) {
      for (std::uint64_t i = 0; ok && i < count; ++i) {
        ok = split->shard_paths.Add(std::string_view(*bytes).substr(at, n)).ok();
        at += n;
      }
    }
    if (!ok) continue;
    split->shard_examples.reserve(u.examples.size);
    for (const auto& [v, n] : u.examples.runs) split->shard_examples.insert(split->shard_examples.end(), n, v);
    WalkedSubtree w;
    w.visited = u.visited;
    w.stamps = u.stamps;
    w.taken = std::move(split);
    (*known)[SubtreeKey(u.list, u.depth)] = std::move(w);
  }
  files.Close(fd);
}

void AddJournaledPrefixSubtrees(const std::string& root, const std::string& job_id,
                                const std::vector<journal_internal::EntryView>& entries, FileSystem* fs,
                                std::map<std::string, WalkedSubtree>* known) {
  FileStat st;
  const std::string partial = JoinRoot(root, PartialIndexPath(job_id));
  if (FileSystemOr(fs).Lstat(partial.c_str(), &st) != 0 || st.type != FileType::kRegular) return;
  AddPrefixSubtrees(root, job_id, DecodePrefixUnits(entries, st.size), fs, known);
}

}  // namespace sedpack
