// SPDX-License-Identifier: Apache-2.0
#include "sedpack/index/order.h"

#include <algorithm>
#include <charconv>
#include <deque>
#include <future>
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
                                    std::uint64_t epoch, std::uint64_t shards_per_block) {
  if (!index.HasSplit(split)) return Status::NotFound("the index has no split ", SplitName(split));
  if (shards_per_block == 0) return Status::InvalidArgument("shards_per_block must be at least 1");
  EpochOrder o;
  o.seed_ = seed;
  o.epoch_ = epoch;
  o.shards_per_block_ = shards_per_block;
  o.shards_ = SeededPermutation(index.num_shards(split), ShuffleStreamKey(seed, epoch, 0));
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
  const auto perm = SeededPermutation(rows.size(), ShuffleStreamKey(seed_, epoch_, 1 + b));
  std::vector<SampleIndex::Location> out(rows.size());
  for (std::size_t i = 0; i < rows.size(); ++i) out[i] = rows[perm[i]];
  return out;
}

Result<SampleIndex::Location> EpochOrder::At(const SampleIndex& index, Split split,
                                             std::uint64_t position) const {
  if (position >= size()) {
    return Status::InvalidArgument("position ", position, " is past the epoch's ", size(), " examples");
  }
  const std::uint64_t b = BlockOf(position);
  return BlockSequence(index, split, b)[position - block_begin(b)];
}

// ---- ReaderState ---------------------------------------------------------------

std::string ReaderState::Encode() const {
  return "sedpack-order/1 seed=" + std::to_string(seed) + " epoch=" + std::to_string(epoch) +
         " position=" + std::to_string(position) + " shards_per_block=" +
         std::to_string(shards_per_block) + " rank=" + std::to_string(rank) +
         " readers=" + std::to_string(num_readers);
}

Result<ReaderState> ReaderState::Decode(std::string_view text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.remove_suffix(1);
  constexpr std::string_view kTag = "sedpack-order/1";
  if (text.substr(0, kTag.size()) != kTag) {
    return Status::InvalidArgument("reader state does not start with \"", kTag, "\"");
  }
  text.remove_prefix(kTag.size());
  ReaderState s;
  const std::pair<std::string_view, std::uint64_t*> fields[] = {
      {"seed", &s.seed}, {"epoch", &s.epoch}, {"position", &s.position},
      {"shards_per_block", &s.shards_per_block}};
  std::uint64_t rank = 0, readers = 0;
  const std::pair<std::string_view, std::uint64_t*> all[] = {
      fields[0], fields[1], fields[2], fields[3], {"rank", &rank}, {"readers", &readers}};
  for (const auto& [name, dst] : all) {
    const std::string prefix = " " + std::string(name) + "=";
    if (text.substr(0, prefix.size()) != prefix) {
      return Status::InvalidArgument("reader state: expected \"", name, "=\"");
    }
    text.remove_prefix(prefix.size());
    const char* end = text.data() + text.size();
    const auto [p, ec] = std::from_chars(text.data(), end, *dst);
    if (ec != std::errc() || p == text.data()) {
      return Status::InvalidArgument("reader state: bad number for ", name);
    }
    text.remove_prefix(static_cast<std::size_t>(p - text.data()));
  }
  if (!text.empty()) return Status::InvalidArgument("reader state: unexpected text after the fields");
  if (readers == 0 || readers > UINT32_MAX || rank >= readers) {
    return Status::InvalidArgument("reader state: rank ", rank, " of ", readers, " readers");
  }
  if (s.shards_per_block == 0) return Status::InvalidArgument("reader state: shards_per_block is 0");
  s.rank = static_cast<std::uint32_t>(rank);
  s.num_readers = static_cast<std::uint32_t>(readers);
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

  Status Start(std::uint64_t epoch, std::uint64_t position) {
    if (options_.shards_per_block == 0) return Status::InvalidArgument("shards_per_block must be at least 1");
    if (options_.num_readers == 0 || options_.rank >= options_.num_readers) {
      return Status::InvalidArgument("reader rank ", options_.rank, " of ", options_.num_readers,
                                     " readers");
    }
    SEDPACK_ASSIGN_OR_RETURN(order_,
                             EpochOrder::Make(*index_, split_, options_.seed, epoch, options_.shards_per_block));
    pending_.clear();
    mine_.clear();
    prefix_.assign(1, 0);
    for (std::uint64_t b = options_.rank; b < order_->num_blocks(); b += options_.num_readers) {
      mine_.push_back(b);
      prefix_.push_back(prefix_.back() + order_->block_size(b));
    }
    if (position > prefix_.back()) {
      return Status::InvalidArgument("position ", position, " is past this reader's ", prefix_.back(),
                                     " examples of epoch ", epoch);
    }
    // Last of my blocks starting at or before `position` (skips empty blocks).
    k_ = static_cast<std::size_t>(std::upper_bound(prefix_.begin(), prefix_.end() - 1, position) -
                                  prefix_.begin()) - 1;
    if (position == prefix_.back()) k_ = mine_.size();
    in_block_ = k_ < mine_.size() ? position - prefix_[k_] : 0;
    position_ = position;
    loaded_ = false;
    sched_block_ = k_;
    sched_shard_ = 0;
    return Status::OK();
  }

  Result<std::optional<OrderedExample>> Next() {
    for (;;) {
      if (k_ >= mine_.size()) {
        if (!options_.repeat || prefix_.back() == 0) return std::optional<OrderedExample>();
        SEDPACK_RETURN_NOT_OK(Start(order_->epoch() + 1, 0));
        continue;
      }
      if (!loaded_) SEDPACK_RETURN_NOT_OK(LoadBlock());
      if (in_block_ < seq_.size()) {
        const auto& [local, row] = seq_[in_block_];
        OrderedExample out;
        out.example = Example{decoded_[local], static_cast<std::size_t>(row)};
        out.epoch = order_->epoch();
        out.position = order_->block_begin(mine_[k_]) + in_block_;
        out.location = {order_->block_shards(mine_[k_])[local], row};
        ++in_block_;
        ++position_;
        return std::optional<OrderedExample>(std::move(out));
      }
      ++k_;
      in_block_ = 0;
      loaded_ = false;
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
    return s;
  }

  std::uint64_t epoch_size() const { return prefix_.back(); }

 private:
  // Launch reads of my upcoming shards (in order) until `count` are pending.
  void Schedule(std::size_t count) {
    while (pending_.size() < count && sched_block_ < mine_.size()) {
      const auto shards = order_->block_shards(mine_[sched_block_]);
      if (sched_shard_ >= shards.size()) {
        ++sched_block_;
        sched_shard_ = 0;
        continue;
      }
      const std::uint64_t s = shards[sched_shard_++];
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
          pending_.push_back(p.get_future());
          continue;
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
        pending_.push_back(p.get_future());
      } else {
        auto task = [dataset, info = std::move(info), limits, verify, checks = checks_] {
          return dataset_internal::ReadShardChecked(*dataset, info, limits, verify, checks.get());
        };
        try {
          pending_.push_back(std::async(std::launch::async, task));
        } catch (const std::system_error&) {
          // No thread for the prefetch (a thread limit, or an address-space cap
          // with no room for a stack): decode it when it is needed, here.
          pending_.push_back(std::async(std::launch::deferred, std::move(task)));
        }
      }
    }
  }

  Status LoadBlock() {
    const std::uint64_t b = mine_[k_];
    const auto shards = order_->block_shards(b);
    // pending_ always starts at block k_'s first shard. Only this block's shards
    // are started now; the next ones start once it is decoded, so that no more
    // decodes compete for the cores than the sequential reader runs.
    Schedule(shards.size());
    decoded_.clear();
    std::vector<std::uint64_t> first(shards.size() + 1, 0);
    for (std::size_t i = 0; i < shards.size(); ++i) {
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
    const auto perm = SeededPermutation(n, ShuffleStreamKey(options_.seed, order_->epoch(), 1 + b));
    seq_.resize(n);
    for (std::uint64_t i = 0; i < n; ++i) {
      const std::uint64_t j = perm[i];
      const std::size_t local =
          static_cast<std::size_t>(std::upper_bound(first.begin(), first.end(), j) - first.begin()) - 1;
      seq_[i] = {local, j - first[local]};
    }
    loaded_ = true;
    return Status::OK();
  }

  std::shared_ptr<const Dataset> dataset_;
  std::shared_ptr<const SampleIndex> index_;
  Split split_;
  ElasticReadOptions options_;
  std::shared_ptr<index_internal::RecordedShards> recorded_;  // null: reads unchecked
  std::shared_ptr<const sidecar_internal::ChecksSidecar> checks_;  // fresh checks sidecar, or null
  std::optional<EpochOrder> order_;
  std::vector<std::uint64_t> mine_;    // my blocks, increasing
  std::vector<std::uint64_t> prefix_;  // my examples before each of my blocks
  std::size_t k_ = 0;                  // current entry of mine_
  std::uint64_t in_block_ = 0;
  std::uint64_t position_ = 0;
  bool loaded_ = false;
  std::vector<std::shared_ptr<const DecodedShard>> decoded_;
  std::vector<std::pair<std::size_t, std::uint64_t>> seq_;
  std::deque<std::future<ShardResult>> pending_;
  std::size_t sched_block_ = 0, sched_shard_ = 0;
};

Result<std::unique_ptr<ElasticReader>> ElasticReader::Make(std::shared_ptr<const Dataset> dataset,
                                                           std::shared_ptr<const SampleIndex> index,
                                                           Split split, ElasticReadOptions options) {
  if (!dataset || !index) return Status::InvalidArgument("ElasticReader::Make: null dataset or index");
  auto impl = std::make_unique<Impl>(std::move(dataset), std::move(index), split, options);
  SEDPACK_RETURN_NOT_OK(impl->Start(options.epoch, 0));
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
  auto impl = std::make_unique<Impl>(std::move(dataset), std::move(index), split, options);
  SEDPACK_RETURN_NOT_OK(impl->Start(state.epoch, state.position));
  return std::unique_ptr<ElasticReader>(new ElasticReader(std::move(impl)));
}

ElasticReader::ElasticReader(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
ElasticReader::~ElasticReader() = default;
Result<std::optional<OrderedExample>> ElasticReader::Next() { return impl_->Next(); }
ReaderState ElasticReader::state() const { return impl_->state(); }
std::uint64_t ElasticReader::epoch_size() const { return impl_->epoch_size(); }

}  // namespace sedpack
