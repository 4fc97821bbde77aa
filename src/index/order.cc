// SPDX-License-Identifier: Apache-2.0
#include "sedpack/index/order.h"

#include <algorithm>
#include <charconv>
#include <deque>
#include <future>
#include <map>
#include <system_error>

#include "dataset/verified_read.h"
#include "index/recorded_shards.h"

namespace sedpack {

using ShardResult = Result<std::shared_ptr<const DecodedShard>>;

// ---- Randomness ----------------------------------------------------------------

std::uint64_t SplitMix64::Mix(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

std::uint64_t SplitMix64::Next() {
  state_ += 0x9E3779B97F4A7C15ULL;
  return Mix(state_);
}

std::uint64_t SplitMix64::Below(std::uint64_t n) {
  unsigned __int128 m = static_cast<unsigned __int128>(Next()) * n;
  auto low = static_cast<std::uint64_t>(m);
  if (low < n) {
    const std::uint64_t threshold = (0 - n) % n;
    while (low < threshold) {
      m = static_cast<unsigned __int128>(Next()) * n;
      low = static_cast<std::uint64_t>(m);
    }
  }
  return static_cast<std::uint64_t>(m >> 64);
}

std::uint64_t ShuffleStreamKey(std::uint64_t seed, std::uint64_t epoch, std::uint64_t stream) {
  // Each input goes through the mixer before the next is folded in, so nearby
  // (seed, epoch, stream) triples give unrelated streams.
  constexpr std::uint64_t kGamma = 0x9E3779B97F4A7C15ULL;
  std::uint64_t k = SplitMix64::Mix(seed + kGamma);
  k = SplitMix64::Mix(k ^ (epoch + kGamma));
  return SplitMix64::Mix(k ^ (stream + kGamma));
}

std::vector<std::uint64_t> SeededPermutation(std::uint64_t n, std::uint64_t key) {
  std::vector<std::uint64_t> a(n);
  for (std::uint64_t i = 0; i < n; ++i) a[i] = i;
  SplitMix64 rng(key);
  for (std::uint64_t i = n; i > 1; --i) std::swap(a[i - 1], a[rng.Below(i)]);
  return a;
}

// ---- EpochOrder ----------------------------------------------------------------

Result<EpochOrder> EpochOrder::Make(const SampleIndex& index, Split split, std::uint64_t seed,
                                    std::uint64_t epoch, std::uint64_t shards_per_block, bool shuffle) {
  if (!index.HasSplit(split)) return Status::NotFound("the index has no split ", SplitName(split));
  if (shards_per_block == 0) return Status::InvalidArgument("shards_per_block must be at least 1");
  EpochOrder o;
  o.seed_ = seed;
  o.epoch_ = epoch;
  o.shards_per_block_ = shards_per_block;
  o.shuffle_ = shuffle;
  if (shuffle) {
    o.shards_ = SeededPermutation(index.num_shards(split), ShuffleStreamKey(seed, epoch, 0));
  } else {
    o.shards_.resize(index.num_shards(split));
    for (std::uint64_t i = 0; i < o.shards_.size(); ++i) o.shards_[i] = i;
  }
  o.block_start_.push_back(0);
  std::uint64_t pos = 0;
  for (std::size_t i = 0; i < o.shards_.size(); ++i) {
    pos += index.shard_examples(split, o.shards_[i]);
    if ((i + 1) % shards_per_block == 0 || i + 1 == o.shards_.size()) o.block_start_.push_back(pos);
  }
  return o;
}

std::span<const std::uint64_t> EpochOrder::block_shards(std::uint64_t b) const {
  const std::uint64_t begin = b * shards_per_block_;
  const std::uint64_t end = std::min<std::uint64_t>(begin + shards_per_block_, shards_.size());
  return std::span<const std::uint64_t>(shards_).subspan(begin, end - begin);
}

std::uint64_t EpochOrder::BlockOf(std::uint64_t position) const {
  // Last block whose start is <= position (empty blocks share their start with the next).
  auto it = std::upper_bound(block_start_.begin(), block_start_.end() - 1, position);
  return static_cast<std::uint64_t>(it - block_start_.begin()) - 1;
}

std::vector<SampleIndex::Location> EpochOrder::BlockSequence(const SampleIndex& index, Split split,
                                                             std::uint64_t b) const {
  const auto shards = block_shards(b);
  std::vector<SampleIndex::Location> rows;
  rows.reserve(block_size(b));
  for (std::uint64_t s : shards) {
    const std::uint64_t n = index.shard_examples(split, s);
    for (std::uint64_t r = 0; r < n; ++r) rows.push_back({s, r});
  }
  const auto perm = BlockPermutation(b);
  std::vector<SampleIndex::Location> out(rows.size());
  for (std::size_t i = 0; i < rows.size(); ++i) out[i] = rows[perm[i]];
  return out;
}

std::vector<std::uint64_t> EpochOrder::BlockPermutation(std::uint64_t b) const {
  if (shuffle_) return SeededPermutation(block_size(b), ShuffleStreamKey(seed_, epoch_, 1 + b));
  std::vector<std::uint64_t> identity(block_size(b));
  for (std::uint64_t i = 0; i < identity.size(); ++i) identity[i] = i;
  return identity;
}

Result<SampleIndex::Location> EpochOrder::At(const SampleIndex& index, Split split,
                                             std::uint64_t position) const {
  if (position >= size()) {
    return Status::InvalidArgument("position ", position, " is past the epoch's ", size(), " examples");
  }
  const std::uint64_t b = BlockOf(position);
  return BlockSequence(index, split, b)[position - block_begin(b)];
}

// ---- Splits ------------------------------------------------------------------

namespace {

// floor(a * b / c) without overflow (a * b may pass 2^64).
std::uint64_t MulDiv(std::uint64_t a, std::uint64_t b, std::uint64_t c) {
  return static_cast<std::uint64_t>(static_cast<unsigned __int128>(a) * b / c);
}

Status CheckLayout(const ReaderLayout& l) {
  if (l.num_readers == 0 || l.rank >= l.num_readers) {
    return Status::InvalidArgument("reader rank ", l.rank, " of ", l.num_readers, " readers");
  }
  if (l.group_size == 0 || l.num_readers % l.group_size != 0) {
    return Status::InvalidArgument("group_size ", l.group_size, " does not divide ", l.num_readers, " readers");
  }
  if (l.split_unit == 0) return Status::InvalidArgument("split_unit must be at least 1");
  return Status::OK();
}

// Group g's part of m remaining examples: [first, first + raw) of the remaining
// sequence, yielding `count` (raw, padded or cut).
struct GroupPart {
  std::uint64_t first = 0, raw = 0, count = 0;
};

GroupPart GroupOf(std::uint64_t m, const ReaderLayout& l) {
  const std::uint64_t groups = l.num_readers / l.group_size;
  const std::uint64_t g = l.rank / l.group_size;
  GroupPart p;
  p.first = MulDiv(g, m, groups);
  p.raw = MulDiv(g + 1, m, groups) - p.first;
  p.count = p.raw;
  if (l.equal_counts == EqualCounts::kPad) p.count = m / groups + (m % groups != 0 ? 1 : 0);
  if (l.equal_counts == EqualCounts::kDrop) p.count = m / groups;
  return p;
}

// The reader's indices [a, b) into its group's (padded or cut) sequence: whole
// units, dealt contiguously, so that only the group's last unit is short.
std::pair<std::uint64_t, std::uint64_t> InGroup(std::uint64_t count, const ReaderLayout& l) {
  const std::uint64_t units = count / l.split_unit + (count % l.split_unit != 0 ? 1 : 0);
  const std::uint64_t w = l.rank % l.group_size;
  const std::uint64_t a = std::min(MulDiv(w, units, l.group_size) * l.split_unit, count);
  const std::uint64_t b = std::min(MulDiv(w + 1, units, l.group_size) * l.split_unit, count);
  return {a, b};
}

void AppendSpan(std::vector<EpochSpan>& out, std::uint64_t begin, std::uint64_t end) {
  if (begin >= end) return;
  if (!out.empty() && out.back().end == begin) {
    out.back().end = end;
  } else {
    out.push_back({begin, end});
  }
}

// Ranges of indices into the concatenation of `spans` as global positions.
std::vector<EpochSpan> ToGlobal(const std::vector<EpochSpan>& spans, const std::vector<EpochSpan>& ranges) {
  std::vector<std::uint64_t> first(spans.size() + 1, 0);
  for (std::size_t i = 0; i < spans.size(); ++i) first[i + 1] = first[i] + (spans[i].end - spans[i].begin);
  std::vector<EpochSpan> out;
  for (EpochSpan r : ranges) {
    while (r.begin < r.end) {
      const std::size_t i =
          static_cast<std::size_t>(std::upper_bound(first.begin(), first.end(), r.begin) - first.begin()) - 1;
      const std::uint64_t n = std::min(r.end, first[i + 1]) - r.begin;
      const std::uint64_t g = spans[i].begin + (r.begin - first[i]);
      AppendSpan(out, g, g + n);
      r.begin += n;
    }
  }
  return out;
}

Status CheckSpans(const std::vector<EpochSpan>& spans, std::uint64_t epoch_size) {
  std::uint64_t prev = 0;
  for (std::size_t i = 0; i < spans.size(); ++i) {
    const EpochSpan& s = spans[i];
    if (s.begin >= s.end || (i > 0 && s.begin < prev) || s.end > epoch_size) {
      return Status::InvalidArgument("remaining span ", s.begin, "-", s.end, " is empty, out of order or past the epoch's ",
                                     epoch_size, " examples");
    }
    prev = s.end;
  }
  return Status::OK();
}

std::uint64_t SpansSize(const std::vector<EpochSpan>& spans) {
  std::uint64_t n = 0;
  for (const EpochSpan& s : spans) n += s.end - s.begin;
  return n;
}

}  // namespace

std::string_view EqualCountsName(EqualCounts e) {
  switch (e) {
    case EqualCounts::kPad:
      return "pad";
    case EqualCounts::kDrop:
      return "drop";
    default:
      return "none";
  }
}

Result<EqualCounts> ParseEqualCounts(std::string_view name) {
  if (name == "none") return EqualCounts::kNone;
  if (name == "pad") return EqualCounts::kPad;
  if (name == "drop") return EqualCounts::kDrop;
  return Status::InvalidArgument("equal_counts must be none, pad or drop, not \"", name, "\"");
}

std::vector<EpochSpan> ReaderPart(std::uint64_t m, const ReaderLayout& l) {
  std::vector<EpochSpan> out;
  if (!CheckLayout(l).ok() || m == 0) return out;
  const GroupPart g = GroupOf(m, l);
  const auto [a, b] = InGroup(g.count, l);
  AppendSpan(out, g.first + std::min(a, g.raw), g.first + std::min(b, g.raw));
  // Padding: the group's sequence goes on with the remaining sequence from the
  // group's own first example (at most one repeat per group, since parts differ by one).
  for (std::uint64_t i = std::max(a, g.raw); i < b; ++i) {
    const std::uint64_t k = (g.first + (i - g.raw)) % m;
    AppendSpan(out, k, k + 1);
  }
  return out;
}

Result<ReaderState> MergeReaderStates(std::span<const ReaderState> states, std::optional<std::uint64_t> epoch_size) {
  if (states.empty()) return Status::InvalidArgument("merge: no reader states");
  const ReaderState& f = states[0];
  if (states.size() != f.num_readers) {
    return Status::InvalidArgument("merge: ", states.size(), " states for a layout of ", f.num_readers, " readers");
  }
  std::vector<EpochSpan> spans;
  if (f.remaining) {
    spans = *f.remaining;
  } else if (epoch_size) {
    if (*epoch_size > 0) spans.push_back({0, *epoch_size});
  } else {
    return Status::InvalidArgument("merge: the states cover a whole epoch and its size is not given");
  }
  const std::uint64_t m = SpansSize(spans);
  std::vector<bool> seen(f.num_readers, false);
  // Per group: the indices of its raw part that its readers produced.
  std::map<std::uint64_t, std::vector<EpochSpan>> produced;
  std::map<std::uint64_t, GroupPart> parts;
  for (const ReaderState& s : states) {
    ReaderState same = s;
    same.rank = f.rank;
    same.position = f.position;
    if (!(same == f)) {
      return Status::InvalidArgument("merge: the state of reader ", s.rank,
                                     " has another seed, epoch, layout or remaining spans than reader ", f.rank, "'s");
    }
    SEDPACK_RETURN_NOT_OK(CheckLayout(s.layout()));
    if (seen[s.rank]) return Status::InvalidArgument("merge: two states of reader ", s.rank);
    seen[s.rank] = true;
    const GroupPart g = GroupOf(m, s.layout());
    const auto [a, b] = InGroup(g.count, s.layout());
    if (s.position > b - a) {
      return Status::InvalidArgument("merge: reader ", s.rank, " is at position ", s.position, ", past its ", b - a,
                                     " examples");
    }
    const std::uint64_t g_id = s.rank / s.group_size;
    parts[g_id] = g;
    if (a < g.raw) produced[g_id].push_back({a, std::min(a + s.position, g.raw)});
  }
  std::vector<EpochSpan> left;  // indices into the remaining sequence
  for (const auto& [g_id, g] : parts) {
    auto& done = produced[g_id];
    std::sort(done.begin(), done.end(), [](const EpochSpan& x, const EpochSpan& y) { return x.begin < y.begin; });
    std::uint64_t at = 0;
    for (const EpochSpan& d : done) {
      AppendSpan(left, g.first + at, g.first + std::max(at, d.begin));
      at = std::max(at, d.end);
    }
    AppendSpan(left, g.first + at, g.first + g.raw);
  }
  ReaderState out;
  out.seed = f.seed;
  out.epoch = f.epoch;
  out.shards_per_block = f.shards_per_block;
  out.equal_counts = f.equal_counts;
  out.shuffle = f.shuffle;
  out.remaining = ToGlobal(spans, left);
  return out;
}

// ---- ReaderState ---------------------------------------------------------------

std::string ReaderState::Encode() const {
  const bool v2 = remaining || equal_counts != EqualCounts::kNone || group_size != 1 || split_unit != 1 || !shuffle;
  // Appended to, not `std::string(...) + " seed="`: gcc 12 -O1 (the TSan tree)
  // gives a false -Warray-bounds on that.
  std::string s(v2 ? "sedpack-order/2" : "sedpack-order/1");
  s += " seed=" + std::to_string(seed) + " epoch=" + std::to_string(epoch) + " position=" + std::to_string(position) +
       " shards_per_block=" + std::to_string(shards_per_block) + " rank=" + std::to_string(rank) +
       " readers=" + std::to_string(num_readers);
  if (!v2) return s;
  s += " group_size=" + std::to_string(group_size) + " split_unit=" + std::to_string(split_unit) +
       " shuffle=" + (shuffle ? "1" : "0") + " equal_counts=" + std::string(EqualCountsName(equal_counts)) + " remaining=";
  if (!remaining) return s + "all";
  for (std::size_t i = 0; i < remaining->size(); ++i) {
    if (i > 0) s += ",";
    s += std::to_string((*remaining)[i].begin) + "-" + std::to_string((*remaining)[i].end);
  }
  return s;
}

namespace {

// The fields of an encoded state, in their fixed order.
class StateText {
 public:
  explicit StateText(std::string_view text) : text_(text) {}

  Status Number(std::string_view name, std::uint64_t* dst) {
    SEDPACK_RETURN_NOT_OK(Key(name));
    return NumberHere(name, dst);
  }

  Status Word(std::string_view name, std::string_view* dst) {
    SEDPACK_RETURN_NOT_OK(Key(name));
    const std::size_t n = std::min(text_.find(' '), text_.size());
    *dst = text_.substr(0, n);
    text_.remove_prefix(n);
    return Status::OK();
  }

  Status Spans(std::optional<std::vector<EpochSpan>>* dst) {
    std::string_view word;
    SEDPACK_RETURN_NOT_OK(Word("remaining", &word));
    if (word == "all") return Status::OK();
    dst->emplace();
    StateText list(word);
    while (!list.text_.empty()) {
      EpochSpan sp;
      SEDPACK_RETURN_NOT_OK(list.NumberHere("remaining", &sp.begin));
      if (!list.Skip('-')) return Status::InvalidArgument("reader state: expected \"-\" in remaining");
      SEDPACK_RETURN_NOT_OK(list.NumberHere("remaining", &sp.end));
      if (!list.text_.empty() && (!list.Skip(',') || list.text_.empty())) {
        return Status::InvalidArgument("reader state: expected a span after \",\" in remaining");
      }
      (*dst)->push_back(sp);
    }
    return Status::OK();
  }

  bool done() const { return text_.empty(); }

 private:
  Status Key(std::string_view name) {
    const std::string prefix = " " + std::string(name) + "=";
    if (text_.substr(0, prefix.size()) != prefix) {
      return Status::InvalidArgument("reader state: expected \"", name, "=\"");
    }
    text_.remove_prefix(prefix.size());
    return Status::OK();
  }

  Status NumberHere(std::string_view name, std::uint64_t* dst) {
    const char* end = text_.data() + text_.size();
    const auto [p, ec] = std::from_chars(text_.data(), end, *dst);
    if (ec != std::errc() || p == text_.data()) {
      return Status::InvalidArgument("reader state: bad number for ", name);
    }
    text_.remove_prefix(static_cast<std::size_t>(p - text_.data()));
    return Status::OK();
  }

  bool Skip(char c) {
    if (text_.empty() || text_[0] != c) return false;
    text_.remove_prefix(1);
    return true;
  }

  std::string_view text_;
};

}  // namespace

Result<ReaderState> ReaderState::Decode(std::string_view text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.remove_suffix(1);
  constexpr std::string_view kTag1 = "sedpack-order/1", kTag2 = "sedpack-order/2";
  const bool v2 = text.substr(0, kTag2.size()) == kTag2;
  if (!v2 && text.substr(0, kTag1.size()) != kTag1) {
    return Status::InvalidArgument("reader state does not start with \"", kTag1, "\" or \"", kTag2, "\"");
  }
  StateText t(text.substr(kTag1.size()));
  ReaderState s;
  std::uint64_t rank = 0, readers = 0, group = 1, shuffle = 1;
  SEDPACK_RETURN_NOT_OK(t.Number("seed", &s.seed));
  SEDPACK_RETURN_NOT_OK(t.Number("epoch", &s.epoch));
  SEDPACK_RETURN_NOT_OK(t.Number("position", &s.position));
  SEDPACK_RETURN_NOT_OK(t.Number("shards_per_block", &s.shards_per_block));
  SEDPACK_RETURN_NOT_OK(t.Number("rank", &rank));
  SEDPACK_RETURN_NOT_OK(t.Number("readers", &readers));
  if (v2) {
    std::string_view equal;
    SEDPACK_RETURN_NOT_OK(t.Number("group_size", &group));
    SEDPACK_RETURN_NOT_OK(t.Number("split_unit", &s.split_unit));
    SEDPACK_RETURN_NOT_OK(t.Number("shuffle", &shuffle));
    if (shuffle > 1) return Status::InvalidArgument("reader state: shuffle is 0 or 1");
    s.shuffle = shuffle == 1;
    SEDPACK_RETURN_NOT_OK(t.Word("equal_counts", &equal));
    SEDPACK_ASSIGN_OR_RETURN(s.equal_counts, ParseEqualCounts(equal));
    SEDPACK_RETURN_NOT_OK(t.Spans(&s.remaining));
  }
  if (!t.done()) return Status::InvalidArgument("reader state: unexpected text after the fields");
  if (readers == 0 || readers > UINT32_MAX || rank >= readers || group > UINT32_MAX) {
    return Status::InvalidArgument("reader state: rank ", rank, " of ", readers, " readers");
  }
  if (s.shards_per_block == 0) return Status::InvalidArgument("reader state: shards_per_block is 0");
  s.rank = static_cast<std::uint32_t>(rank);
  s.num_readers = static_cast<std::uint32_t>(readers);
  s.group_size = static_cast<std::uint32_t>(group);
  SEDPACK_RETURN_NOT_OK(CheckLayout(s.layout()));
  if (s.remaining) SEDPACK_RETURN_NOT_OK(CheckSpans(*s.remaining, UINT64_MAX));
  return s;
}

// ---- ElasticReader -------------------------------------------------------------

class ElasticReader::Impl {
 public:
  Impl(std::shared_ptr<const Dataset> dataset, std::shared_ptr<const SampleIndex> index, Split split,
       ElasticReadOptions options)
      : dataset_(std::move(dataset)),
        index_(std::move(index)),
        split_(split),
        options_(options),
        recorded_(index_internal::MakeRecordedShards(dataset_, options_.verify_hashes)),
        checks_(dataset_internal::ReaderChecks(*dataset_, options_.verify_hashes, options_.strict_hashes, nullptr)) {}

  ~Impl() { pending_.clear(); }  // futures of std::async wait for their decode

  ReaderLayout layout() const {
    return {options_.rank, options_.num_readers, options_.group_size, options_.split_unit, options_.equal_counts};
  }

  Status Start(std::uint64_t epoch, std::optional<std::vector<EpochSpan>> remaining, std::uint64_t position) {
    if (options_.shards_per_block == 0) return Status::InvalidArgument("shards_per_block must be at least 1");
    SEDPACK_RETURN_NOT_OK(CheckLayout(layout()));
    SEDPACK_ASSIGN_OR_RETURN(order_,
                             EpochOrder::Make(*index_, split_, options_.seed, epoch, options_.shards_per_block,
                                              options_.shuffle));
    std::vector<EpochSpan> spans;
    if (remaining) {
      SEDPACK_RETURN_NOT_OK(CheckSpans(*remaining, order_->size()));
      spans = *remaining;
    } else if (order_->size() > 0) {
      spans.push_back({0, order_->size()});
    }
    pending_.clear();
    runs_.clear();
    loads_.clear();
    prefix_.assign(1, 0);
    for (const EpochSpan& r : ToGlobal(spans, ReaderPart(SpansSize(spans), layout()))) AddRuns(r);
    remaining_ = std::move(spans);
    if (position > prefix_.back()) {
      return Status::InvalidArgument("position ", position, " is past this reader's ", prefix_.back(),
                                     " examples of epoch ", epoch);
    }
    // The run holding `position` (the end: past the last run).
    k_ = static_cast<std::size_t>(std::upper_bound(prefix_.begin(), prefix_.end(), position) - prefix_.begin()) - 1;
    in_run_ = k_ < runs_.size() ? position - prefix_[k_] : 0;
    position_ = position;
    loaded_ = SIZE_MAX;
    sched_load_ = k_ < runs_.size() ? runs_[k_].load : loads_.size();
    sched_shard_ = 0;
    return Status::OK();
  }

  Result<std::optional<OrderedExample>> Next() {
    for (;;) {
      if (k_ >= runs_.size()) {
        if (!options_.repeat || prefix_.back() == 0) return std::optional<OrderedExample>();
        SEDPACK_RETURN_NOT_OK(Start(order_->epoch() + 1, std::nullopt, 0));
        continue;
      }
      const Run& run = runs_[k_];
      if (loaded_ != run.load) SEDPACK_RETURN_NOT_OK(LoadBlock(run.load));
      if (in_run_ < run.end - run.begin) {
        const std::uint64_t i = run.begin + in_run_;
        const auto& [local, row] = seq_[i];
        const std::uint64_t b = loads_[run.load];
        OrderedExample out;
        out.example = Example{decoded_[local], static_cast<std::size_t>(row)};
        out.epoch = order_->epoch();
        out.position = order_->block_begin(b) + i;
        out.location = {order_->block_shards(b)[local], row};
        ++in_run_;
        ++position_;
        return std::optional<OrderedExample>(std::move(out));
      }
      ++k_;
      in_run_ = 0;
    }
  }

  ReaderState state() const {
    ReaderState s;
    s.seed = options_.seed;
    s.epoch = order_->epoch();
    s.position = position_;
    s.shards_per_block = options_.shards_per_block;
    s.rank = options_.rank;
    s.num_readers = options_.num_readers;
    s.equal_counts = options_.equal_counts;
    s.group_size = options_.group_size;
    s.split_unit = options_.split_unit;
    s.shuffle = options_.shuffle;
    s.remaining = remaining_;
    return s;
  }

  std::uint64_t epoch_size() const { return prefix_.back(); }

 private:
  // Positions [begin, end) of one block, taken from its decode `load`.
  struct Run {
    std::uint64_t begin = 0, end = 0;  // indices into the block's permuted sequence
    std::size_t load = 0;              // index into loads_
  };

  // Global positions [r.begin, r.end) as runs within blocks; consecutive runs
  // of one block share its decode.
  void AddRuns(EpochSpan r) {
    while (r.begin < r.end) {
      const std::uint64_t b = order_->BlockOf(r.begin);
      const std::uint64_t stop = std::min(r.end, order_->block_begin(b + 1));
      if (loads_.empty() || loads_.back() != b) loads_.push_back(b);
      const std::uint64_t first = order_->block_begin(b);
      runs_.push_back({r.begin - first, stop - first, loads_.size() - 1});
      prefix_.push_back(prefix_.back() + (stop - r.begin));
      r.begin = stop;
    }
  }

  // Launch reads of the upcoming loads' shards (in order) until `count` are pending.
  void Schedule(std::size_t count) {
    while (pending_.size() < count && sched_load_ < loads_.size()) {
      const auto shards = order_->block_shards(loads_[sched_load_]);
      if (sched_shard_ >= shards.size()) {
        ++sched_load_;
        sched_shard_ = 0;
        continue;
      }
      pending_.push_back(StartRead(shards[sched_shard_++]));
    }
  }

  std::future<ShardResult> StartRead(std::uint64_t s) {
    ShardInfo info;
    bool verify = false;
    if (checks_ && checks_->Find(index_->shard_path(split_, s))) {
      // Checked against the sidecar's fast checksum on the prefetch thread.
      info.file_infos.push_back(FileInfo{std::string(index_->shard_path(split_, s)), {}});
      verify = true;
    } else if (recorded_) {
      // The recorded entry (walking the lists as far as needed) here, on the
      // caller's thread; only the read, hash and decode go to the prefetch.
      auto found = recorded_->Lookup(split_, s, index_->shard_path(split_, s));
      if (!found.ok()) {
        std::promise<ShardResult> p;
        p.set_value(found.status());
        return p.get_future();
      }
      info = std::move(found).value();
      verify = true;
    } else {
      info.file_infos.push_back(FileInfo{std::string(index_->shard_path(split_, s)), {}});
    }
    auto dataset = dataset_;
    auto limits = options_.limits;
    if (options_.prefetch_shards <= 0) {
      std::promise<ShardResult> p;
      p.set_value(dataset_internal::ReadShardChecked(*dataset, info, limits, verify, checks_.get()));
      return p.get_future();
    }
    auto task = [dataset, info = std::move(info), limits, verify, checks = checks_] {
      return dataset_internal::ReadShardChecked(*dataset, info, limits, verify, checks.get());
    };
    try {
      return std::async(std::launch::async, task);
    } catch (const std::system_error&) {
      // No thread for the prefetch (a thread limit, or an address-space cap
      // with no room for a stack): decode it when it is needed, here.
      return std::async(std::launch::deferred, std::move(task));
    }
  }

  Status LoadBlock(std::size_t load) {
    const std::uint64_t b = loads_[load];
    const auto shards = order_->block_shards(b);
    // pending_ always starts at this load's first shard. The previous
    // block's shards go first, so that its buffers serve the reads of this
    // one; as many reads run as the sequential reader runs (prefetch_shards),
    // which also bounds the buffers they hold at once.
    decoded_.clear();
    const std::size_t in_flight = static_cast<std::size_t>(std::max(1, options_.prefetch_shards));
    std::vector<std::uint64_t> first(shards.size() + 1, 0);
    for (std::size_t i = 0; i < shards.size(); ++i) {
      Schedule(in_flight);
      ShardResult r = pending_.front().get();
      pending_.pop_front();
      if (!r.ok()) return r.status();
      const std::uint64_t want = index_->shard_examples(split_, shards[i]);
      if ((*r)->num_examples() != want) {
        return Status::Corruption(index_->shard_path(split_, shards[i]), " holds ", (*r)->num_examples(),
                                  " examples, the metadata records ", want);
      }
      decoded_.push_back(std::move(r).value());
      first[i + 1] = first[i] + want;
    }
    Schedule(static_cast<std::size_t>(std::max(0, options_.prefetch_shards)));
    // The block's rows in permuted order, as (shard within block, row).
    const std::uint64_t n = first.back();
    const auto perm = order_->BlockPermutation(b);
    seq_.resize(n);
    for (std::uint64_t i = 0; i < n; ++i) {
      const std::uint64_t j = perm[i];
      const std::size_t local =
          static_cast<std::size_t>(std::upper_bound(first.begin(), first.end(), j) - first.begin()) - 1;
      seq_[i] = {local, j - first[local]};
    }
    loaded_ = load;
    return Status::OK();
  }

  std::shared_ptr<const Dataset> dataset_;
  std::shared_ptr<const SampleIndex> index_;
  Split split_;
  ElasticReadOptions options_;
  std::shared_ptr<index_internal::RecordedShards> recorded_;  // null: reads unchecked
  std::shared_ptr<const sidecar_internal::ChecksSidecar> checks_;  // fresh checks sidecar, or null
  std::optional<EpochOrder> order_;
  std::vector<EpochSpan> remaining_;   // what the layout splits
  std::vector<Run> runs_;              // my part, in order
  std::vector<std::uint64_t> loads_;   // the blocks my runs decode, in order
  std::vector<std::uint64_t> prefix_;  // my examples before each run
  std::size_t k_ = 0;                  // current run
  std::uint64_t in_run_ = 0;
  std::uint64_t position_ = 0;
  std::size_t loaded_ = SIZE_MAX;      // the load decoded_ and seq_ hold
  std::vector<std::shared_ptr<const DecodedShard>> decoded_;
  std::vector<std::pair<std::size_t, std::uint64_t>> seq_;
  std::deque<std::future<ShardResult>> pending_;
  std::size_t sched_load_ = 0, sched_shard_ = 0;
};

Result<std::unique_ptr<ElasticReader>> ElasticReader::Make(std::shared_ptr<const Dataset> dataset,
                                                           std::shared_ptr<const SampleIndex> index,
                                                           Split split, ElasticReadOptions options) {
  if (!dataset || !index) return Status::InvalidArgument("ElasticReader::Make: null dataset or index");
  auto impl = std::make_unique<Impl>(std::move(dataset), std::move(index), split, options);
  SEDPACK_RETURN_NOT_OK(impl->Start(options.epoch, std::nullopt, 0));
  return std::unique_ptr<ElasticReader>(new ElasticReader(std::move(impl)));
}

Result<std::unique_ptr<ElasticReader>> ElasticReader::Resume(std::shared_ptr<const Dataset> dataset,
                                                             std::shared_ptr<const SampleIndex> index,
                                                             Split split, const ReaderState& state,
                                                             ElasticReadOptions options) {
  if (!dataset || !index) return Status::InvalidArgument("ElasticReader::Resume: null dataset or index");
  options.seed = state.seed;
  options.epoch = state.epoch;
  options.shards_per_block = state.shards_per_block;
  options.rank = state.rank;
  options.num_readers = state.num_readers;
  options.group_size = state.group_size;
  options.split_unit = state.split_unit;
  options.equal_counts = state.equal_counts;
  options.shuffle = state.shuffle;
  auto impl = std::make_unique<Impl>(std::move(dataset), std::move(index), split, options);
  SEDPACK_RETURN_NOT_OK(impl->Start(state.epoch, state.remaining, state.position));
  return std::unique_ptr<ElasticReader>(new ElasticReader(std::move(impl)));
}

ElasticReader::ElasticReader(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
ElasticReader::~ElasticReader() = default;
Result<std::optional<OrderedExample>> ElasticReader::Next() { return impl_->Next(); }
ReaderState ElasticReader::state() const { return impl_->state(); }
std::uint64_t ElasticReader::epoch_size() const { return impl_->epoch_size(); }

}  // namespace sedpack
