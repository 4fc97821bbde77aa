// SPDX-License-Identifier: Apache-2.0
#include "sedpack/index/fetch.h"

#include <future>
#include <list>
#include <mutex>
#include <unordered_map>

namespace sedpack {

using ShardResult = Result<std::shared_ptr<const DecodedShard>>;

std::uint64_t DecodedShardBytes(const DecodedShard& shard) {
  std::uint64_t bytes = 0;
  for (std::size_t i = 0; i < shard.num_examples(); ++i) {
    for (std::size_t j = 0; j < shard.num_attributes(); ++j) bytes += shard.Get(i, j).data.size();
  }
  return bytes;
}

class ExampleFetcher::Impl {
 public:
  Impl(std::shared_ptr<const Dataset> dataset, std::shared_ptr<const SampleIndex> index,
       FetchOptions options)
      : dataset_(std::move(dataset)), index_(std::move(index)), options_(options) {}

  ShardResult Shard(Split split, std::uint64_t shard) {
    if (!index_->HasSplit(split)) return Status::NotFound("the index has no split ", SplitName(split));
    if (shard >= index_->num_shards(split)) {
      return Status::InvalidArgument("shard ", shard, " is out of range: split ", SplitName(split),
                                     " has ", index_->num_shards(split), " shards");
    }
    if (options_.cache_bytes == 0) {
      {
        std::lock_guard<std::mutex> lock(mu_);
        ++stats_.misses;
      }
      return Decode(split, shard);
    }
    const Key key = (static_cast<std::uint64_t>(split) << 60) | shard;
    std::shared_future<ShardResult> future;
    std::promise<ShardResult> promise;
    bool mine = false;
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = entries_.find(key);
      if (it != entries_.end()) {
        ++stats_.hits;
        lru_.splice(lru_.begin(), lru_, it->second.lru);
        future = it->second.future;
      } else {
        ++stats_.misses;
        mine = true;
        future = promise.get_future().share();
        lru_.push_front(key);
        entries_.emplace(key, Entry{future, 0, false, lru_.begin()});
      }
    }
    if (!mine) return future.get();
    // Decode outside the lock; other threads asking for this shard wait on the future.
    ShardResult decoded = Decode(split, shard);
    const std::uint64_t bytes = decoded.ok() ? DecodedShardBytes(**decoded) : 0;
    promise.set_value(decoded);
    std::lock_guard<std::mutex> lock(mu_);
    auto it = entries_.find(key);
    if (it != entries_.end()) {
      if (!decoded.ok()) {
        // Do not remember failures: the next fetch tries again.
        lru_.erase(it->second.lru);
        entries_.erase(it);
      } else {
        it->second.bytes = bytes;
        it->second.ready = true;
        cached_ += bytes;
        Evict();
      }
    }
    return decoded;
  }

  Result<Example> Get(Split split, std::uint64_t example) {
    SEDPACK_ASSIGN_OR_RETURN(SampleIndex::Location loc, index_->Locate(split, example));
    SEDPACK_ASSIGN_OR_RETURN(std::shared_ptr<const DecodedShard> shard, Shard(split, loc.shard));
    return Example{std::move(shard), static_cast<std::size_t>(loc.row)};
  }

  Stats stats() const {
    std::lock_guard<std::mutex> lock(mu_);
    Stats s = stats_;
    s.cached_bytes = cached_;
    s.cached_shards = 0;
    for (const auto& [k, e] : entries_) s.cached_shards += e.ready ? 1 : 0;
    return s;
  }

  const SampleIndex& index() const { return *index_; }

 private:
  using Key = std::uint64_t;
  struct Entry {
    std::shared_future<ShardResult> future;
    std::uint64_t bytes = 0;
    bool ready = false;
    std::list<Key>::iterator lru;
  };

  ShardResult Decode(Split split, std::uint64_t shard) {
    ShardInfo info;
    info.file_infos.push_back(FileInfo{std::string(index_->shard_path(split, shard)), {}});
    info.number_of_examples = static_cast<std::int64_t>(index_->shard_examples(split, shard));
    SEDPACK_ASSIGN_OR_RETURN(std::shared_ptr<const DecodedShard> decoded,
                             ReadShard(*dataset_, info, options_.limits));
    // Lookups are only right if the shard holds what the metadata (and so the
    // index) says; a mismatch would shift every later example.
    if (decoded->num_examples() != index_->shard_examples(split, shard)) {
      return Status::Corruption(info.file_infos[0].file_path, " holds ", decoded->num_examples(),
                                " examples, the metadata records ", index_->shard_examples(split, shard));
    }
    if (decoded->num_attributes() != dataset_->schema().size()) {
      return Status::Corruption(info.file_infos[0].file_path, " has ", decoded->num_attributes(),
                                " attributes, the schema ", dataset_->schema().size());
    }
    return decoded;
  }

  // REQUIRES: mu_ held. Drop least recently used finished shards until under the bound.
  void Evict() {
    auto it = lru_.end();
    while (cached_ > options_.cache_bytes && it != lru_.begin()) {
      --it;
      auto e = entries_.find(*it);
      if (!e->second.ready) continue;  // still decoding: its owner accounts for it
      cached_ -= e->second.bytes;
      ++stats_.evictions;
      entries_.erase(e);
      it = lru_.erase(it);
    }
  }

  std::shared_ptr<const Dataset> dataset_;
  std::shared_ptr<const SampleIndex> index_;
  FetchOptions options_;
  mutable std::mutex mu_;
  std::list<Key> lru_;  // most recent first
  std::unordered_map<Key, Entry> entries_;
  std::uint64_t cached_ = 0;
  Stats stats_;
};

Result<std::unique_ptr<ExampleFetcher>> ExampleFetcher::Make(std::shared_ptr<const Dataset> dataset,
                                                             std::shared_ptr<const SampleIndex> index,
                                                             FetchOptions options) {
  if (!dataset || !index) return Status::InvalidArgument("ExampleFetcher::Make: null dataset or index");
  return std::unique_ptr<ExampleFetcher>(
      new ExampleFetcher(std::make_unique<Impl>(std::move(dataset), std::move(index), options)));
}

ExampleFetcher::ExampleFetcher(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
ExampleFetcher::~ExampleFetcher() = default;
Result<Example> ExampleFetcher::Get(Split split, std::uint64_t example) { return impl_->Get(split, example); }
Result<std::shared_ptr<const DecodedShard>> ExampleFetcher::Shard(Split split, std::uint64_t shard) {
  return impl_->Shard(split, shard);
}
const SampleIndex& ExampleFetcher::index() const { return impl_->index(); }
ExampleFetcher::Stats ExampleFetcher::stats() const { return impl_->stats(); }

}  // namespace sedpack
