// SPDX-License-Identifier: Apache-2.0
#include "sedpack/index/fetch.h"

#include <cstring>
#include <future>
#include <list>
#include <atomic>
#include <mutex>
#include <shared_mutex>
#include <thread>
#include <unordered_map>

#include "index/recorded_shards.h"
#include "io/beneath.h"
#include "sedpack/io/file_system.h"
#include "sedpack/metadata/paths.h"
#include "codecs/decode_points_internal.h"
#include "dataset/verified_read.h"
#include "shard/example_read.h"
#include "sedpack/io/file.h"
#include "sidecar/sidecar_internal.h"

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
      : dataset_(std::move(dataset)),
        index_(std::move(index)),
        options_(options),
        recorded_(index_internal::MakeRecordedShards(dataset_, options_.verify_hashes)),
        checks_(dataset_internal::ReaderChecks(*dataset_, options_.verify_hashes, options_.strict_hashes,
                                               options_.warn)) {
    const auto& structure = dataset_->info().dataset_structure;
    // With the sidecar an example is checked on its own: verified fetches read
    // only its bytes too.
    checked_positioned_ = options_.positioned_reads && options_.cache_bytes == 0 && checks_ &&
                          structure.shard_file_type == ShardFileType::kFb;
    // A verified read hashes the whole file, so it cannot be partial: verified
    // fetches keep reading whole shards (recorded_ is set exactly when they verify).
    positioned_ = options_.positioned_reads && options_.cache_bytes == 0 && !recorded_ && !dataset_->pack() &&
                  structure.shard_file_type == ShardFileType::kFb && structure.compression == Compression::kNone;
    // Unverified fetches from compressed shards need the sidecar only for
    // where the example lies and where decoding can start; its checksums are
    // not used.
    const bool unverified = !options_.verify_hashes || structure.hash_checksum_algorithms.empty();
    if (unverified && options_.positioned_reads && options_.cache_bytes == 0 && !dataset_->pack() &&
        structure.shard_file_type == ShardFileType::kFb && codecs_internal::SupportsDecodePoints(structure.compression)) {
      points_ = sidecar_internal::LoadFreshChecks(dataset_->root(), options_.warn, dataset_->file_system());
    }
  }

  ShardResult Shard(Split split, std::uint64_t shard) {
    if (!index_->HasSplit(split)) return Status::NotFound("the index has no split ", SplitName(split));
    if (shard >= index_->num_shards(split)) {
      return Status::InvalidArgument("shard ", shard, " is out of range: split ", SplitName(split),
                                     " has ", index_->num_shards(split), " shards");
    }
    if (options_.cache_bytes == 0) {
      misses_.fetch_add(1, std::memory_order_relaxed);
      return Decode(split, shard);
    }
    const Key key = (static_cast<std::uint64_t>(split) << 60) | shard;
    // Hits only take the lock shared and stamp the entry; the LRU list is put
    // in order lazily when something must be evicted (second chance), so that
    // threads hitting the cache do not serialize on it.
    {
      std::shared_lock<std::shared_mutex> lock(mu_);
      auto it = entries_.find(key);
      if (it != entries_.end()) {
        // Read before writing: a line that is only read stays shared between cores.
        if (!it->second.referenced.load(std::memory_order_relaxed)) {
          it->second.referenced.store(true, std::memory_order_relaxed);
        }
        std::shared_future<ShardResult> future = it->second.future;
        lock.unlock();
        CountHit();
        return future.get();
      }
    }
    std::promise<ShardResult> promise;
    {
      std::unique_lock<std::shared_mutex> lock(mu_);
      auto it = entries_.find(key);
      if (it != entries_.end()) {  // another thread got here first
        std::shared_future<ShardResult> future = it->second.future;
        lock.unlock();
        CountHit();
        return future.get();
      }
      misses_.fetch_add(1, std::memory_order_relaxed);
      lru_.push_front(key);
      Entry& e = entries_[key];
      e.future = promise.get_future().share();
      e.lru = lru_.begin();
    }
    // Decode outside the lock; other threads asking for this shard wait on the future.
    ShardResult decoded = Decode(split, shard);
    const std::uint64_t bytes = decoded.ok() ? DecodedShardBytes(**decoded) : 0;
    promise.set_value(decoded);
    std::unique_lock<std::shared_mutex> lock(mu_);
    auto it = entries_.find(key);
    if (it != entries_.end()) {
      if (!decoded.ok()) {
        // Do not remember failures: the next fetch tries again.
        lru_.erase(it->second.lru);
        entries_.erase(it);
      } else if (bytes > options_.cache_bytes) {
        // Larger than the whole cache: keeping it would mean dropping everything else.
        lru_.erase(it->second.lru);
        entries_.erase(it);
      } else {
        it->second.bytes = bytes;
        it->second.ready = true;
        cached_ += bytes;
        Evict(key);
      }
    }
    return decoded;
  }

  Result<Example> Get(Split split, std::uint64_t example) {
    SEDPACK_ASSIGN_OR_RETURN(SampleIndex::Location loc, index_->Locate(split, example));
    if (checked_positioned_) {
      const sidecar_internal::ShardChecksPtr record = checks_->Find(index_->shard_path(split, loc.shard));
      if (record && record->num_examples() == index_->shard_examples(split, loc.shard) &&
          record->values_per_example() == dataset_->schema().size()) {
        auto one = ReadCheckedExample(split, example, loc, *record, /*check=*/true);
        // NotImplemented: the codec cannot decode a range; the whole shard is read.
        if (one.ok() || one.status().code() != StatusCode::kNotImplemented) return one;
      }
    } else if (points_) {
      const sidecar_internal::ShardChecksPtr record = points_->Find(index_->shard_path(split, loc.shard));
      if (record && record->num_examples() == index_->shard_examples(split, loc.shard) &&
          record->values_per_example() == dataset_->schema().size()) {
        auto one = ReadCheckedExample(split, example, loc, *record, /*check=*/false);
        if (one.ok() || one.status().code() != StatusCode::kNotImplemented) return one;
      }
    }
    if (positioned_) return ReadExample(split, loc);
    SEDPACK_ASSIGN_OR_RETURN(std::shared_ptr<const DecodedShard> shard, Shard(split, loc.shard));
    return Example{std::move(shard), static_cast<std::size_t>(loc.row)};
  }

  Stats stats() const {
    std::shared_lock<std::shared_mutex> lock(mu_);
    Stats s;
    for (const auto& h : hits_) s.hits += h.n.load();
    s.misses = misses_.load();
    s.example_reads = example_reads_.load();
    s.evictions = evictions_;
    s.cached_bytes = cached_;
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
    // Hit since it was last put at the list front.
    std::atomic<bool> referenced{false};
  };

  void CountHit() {
    // Striped by thread so that threads hitting the cache do not share a counter line.
    const std::size_t slot = std::hash<std::thread::id>()(std::this_thread::get_id()) % kStripes;
    hits_[slot].n.fetch_add(1, std::memory_order_relaxed);
  }

  // The example alone, by positioned reads of its shard (FetchOptions::positioned_reads).
  Result<Example> ReadExample(Split split, const SampleIndex::Location& loc) {
    example_reads_.fetch_add(1, std::memory_order_relaxed);
    const std::string_view rel = index_->shard_path(split, loc.shard);
    SEDPACK_RETURN_NOT_OK(ValidateRelativePath(rel, "file_path"));
    SEDPACK_ASSIGN_OR_RETURN(BeneathFile file, OpenFileBeneath(dataset_->root(), rel, dataset_->file_system()));
    // As the whole-shard read: a file larger than the limit is refused, even
    // though only a part of it would be read.
    if (file.size > options_.limits.max_decompressed_bytes) {
      return Status::ResourceExhausted("file ", file.path, " has ", file.size, " bytes, more than the limit of ",
                                       options_.limits.max_decompressed_bytes);
    }
    const int fd = file.fd.get();
    const shard_internal::ReadAt read_at = [fd, &file](std::uint64_t offset, std::span<std::byte> out) {
      return ReadFully(fd, out, file.path, offset);
    };
    auto one = shard_internal::ReadFbExample(dataset_->schema(), file.size, loc.row,
                                             index_->shard_examples(split, loc.shard), read_at);
    if (!one.ok()) return one.status().WithPrefix(std::string(rel) + ": ");
    return Example{std::shared_ptr<const DecodedShard>(std::move(one->values)), 0};
  }

  // The example alone, from the sidecar's record of its shard: its value
  // ranges read by positioned reads (uncompressed) or decoded from the
  // nearest decode point (compressed), then (`check`) its checksum.
  Result<Example> ReadCheckedExample(Split split, std::uint64_t example, const SampleIndex::Location& loc,
                                     const sidecar_internal::ShardChecksRef& record, bool check) {
    const Compression compression = dataset_->info().dataset_structure.compression;
    const bool plain = compression == Compression::kNone;
    if (!plain && (record.num_points() == 0 || !codecs_internal::SupportsDecodePoints(compression))) {
      return Status::NotImplemented("no decode points");
    }
    example_reads_.fetch_add(1, std::memory_order_relaxed);
    const std::string_view rel = index_->shard_path(split, loc.shard);
    SEDPACK_RETURN_NOT_OK(ValidateRelativePath(rel, "file_path"));
    SEDPACK_ASSIGN_OR_RETURN(BeneathFile file, OpenFileBeneath(dataset_->root(), rel, dataset_->file_system()));
    if (file.size > options_.limits.max_decompressed_bytes || record.decoded_size() > options_.limits.max_decompressed_bytes) {
      return Status::ResourceExhausted("file ", file.path, " has ", std::max(file.size, record.decoded_size()),
                                       " bytes, more than the limit of ", options_.limits.max_decompressed_bytes);
    }
    // A truncated or extended file is caught here, before any of it is read.
    if (file.size != record.stored_size() || (plain && record.decoded_size() != file.size)) {
      return Status::Corruption(file.path, ": ", file.size, " bytes, the checks sidecar records ", record.stored_size())
          .WithDetail(StatusDetail::kHashMismatch);
    }
    const int fd = file.fd.get();
    const shard_internal::ReadAt read_stored = [fd, &file](std::uint64_t offset, std::span<std::byte> out) {
      return ReadFully(fd, out, file.path, offset);
    };
    const std::vector<codecs_internal::DecodePoint> points = plain ? std::vector<codecs_internal::DecodePoint>{}
                                                                   : record.points();
    const shard_internal::ReadAt read_decoded = [&](std::uint64_t offset, std::span<std::byte> out) -> Status {
      if (plain) return read_stored(offset, out);
      SEDPACK_ASSIGN_OR_RETURN(codecs_internal::ByteBuffer range,
                               codecs_internal::DecodeRangeAt(compression, points, record.stored_size(),
                                                              record.decoded_size(), read_stored, offset, out.size()));
      if (range.size() != out.size()) return Status::Corruption("decoded ", range.size(), " bytes, asked for ", out.size());
      if (!out.empty()) std::memcpy(out.data(), range.data(), out.size());
      return Status::OK();
    };
    const std::size_t k = dataset_->schema().size();
    std::vector<shard_internal::ValueRange> ranges(k);
    for (std::size_t j = 0; j < k; ++j) {
      const sidecar_internal::CheckedRange r = record.value(static_cast<std::size_t>(loc.row), j);
      ranges[j] = {r.offset, r.size};
    }
    const std::optional<std::uint64_t> checksum =
        check ? std::optional<std::uint64_t>(record.example_checksum(static_cast<std::size_t>(loc.row)))
              : std::nullopt;
    auto one = shard_internal::ReadFbExampleByRanges(dataset_->schema(), loc.row, ranges, checksum, read_decoded);
    if (!one.ok()) {
      if (one.status().code() == StatusCode::kNotImplemented) return one.status();
      return one.status().WithPrefix(file.path + " (example " + std::to_string(example) + " of split " +
                                     std::string(SplitName(split)) + "): ");
    }
    return Example{std::shared_ptr<const DecodedShard>(std::move(one->values)), 0};
  }

  ShardResult Decode(Split split, std::uint64_t shard) {
    const std::string_view path = index_->shard_path(split, shard);
    SEDPACK_ASSIGN_OR_RETURN(
        std::shared_ptr<const DecodedShard> decoded,
        index_internal::ReadIndexedShard(*dataset_, *index_, recorded_.get(), checks_.get(), split, shard,
                                         options_.limits));
    // Lookups are only right if the shard holds what the metadata (and so the
    // index) says; a mismatch would shift every later example.
    if (decoded->num_examples() != index_->shard_examples(split, shard)) {
      return Status::Corruption(path, " holds ", decoded->num_examples(),
                                " examples, the metadata records ", index_->shard_examples(split, shard));
    }
    if (decoded->num_attributes() != dataset_->schema().size()) {
      return Status::Corruption(path, " has ", decoded->num_attributes(),
                                " attributes, the schema ", dataset_->schema().size());
    }
    return decoded;
  }

  // REQUIRES: mu_ held exclusively. Drop least recently used finished shards
  // until under the bound. An entry hit since it was placed gets a second
  // chance at the front (its place had not been updated on the hit); `keep`,
  // the shard just added, is never the one dropped.
  void Evict(Key keep) {
    std::size_t budget = 2 * lru_.size();  // every entry moves at most once per call
    while (cached_ > options_.cache_bytes && !lru_.empty() && budget-- > 0) {
      const Key key = lru_.back();
      Entry& e = entries_.find(key)->second;
      if (!e.ready || key == keep || e.referenced.load(std::memory_order_relaxed)) {
        e.referenced.store(false, std::memory_order_relaxed);
        lru_.splice(lru_.begin(), lru_, e.lru);
        continue;
      }
      cached_ -= e.bytes;
      ++evictions_;
      lru_.pop_back();
      entries_.erase(key);
    }
  }

  std::shared_ptr<const Dataset> dataset_;
  std::shared_ptr<const SampleIndex> index_;
  FetchOptions options_;
  std::shared_ptr<index_internal::RecordedShards> recorded_;  // null: reads unchecked
  std::shared_ptr<const sidecar_internal::ChecksSidecar> checks_;  // fresh checks sidecar, or null
  // Unverified fetches from compressed fb shards: the fresh sidecar, for its ranges and decode points.
  std::shared_ptr<const sidecar_internal::ChecksSidecar> points_;
  bool positioned_ = false;  // Get reads the example alone
  bool checked_positioned_ = false;  // Get reads the example alone when the sidecar records its shard
  std::atomic<std::uint64_t> example_reads_{0};
  mutable std::shared_mutex mu_;
  std::list<Key> lru_;  // front: most recently placed
  std::unordered_map<Key, Entry> entries_;
  std::uint64_t cached_ = 0;
  std::uint64_t evictions_ = 0;
  static constexpr std::size_t kStripes = 16;
  struct alignas(64) Counter {
    std::atomic<std::uint64_t> n{0};
  };
  Counter hits_[kStripes];
  std::atomic<std::uint64_t> misses_{0};
};

Result<std::unique_ptr<ExampleFetcher>> ExampleFetcher::Make(std::shared_ptr<const Dataset> dataset,
                                                             std::shared_ptr<const SampleIndex> index,
                                                             FetchOptions options) {
  if (!dataset || !index) return Status::InvalidArgument("ExampleFetcher::Make: null dataset or index");
  return std::unique_ptr<ExampleFetcher>(
      new ExampleFetcher(std::make_unique<Impl>(std::move(dataset), std::move(index), options)));
}

bool FetchReadsExamplesAlone(const Dataset& dataset, const FetchOptions& options) {
  const DatasetStructure& structure = dataset.info().dataset_structure;
  if (structure.shard_file_type != ShardFileType::kFb || !options.positioned_reads || dataset.pack()) return false;
  const bool sidecar = PathExists(SidecarPath(dataset.root(), sidecar_internal::kChecksFileName), dataset.file_system());
  if (!options.verify_hashes || structure.hash_checksum_algorithms.empty()) {
    return structure.compression == Compression::kNone ||
           (sidecar && codecs_internal::SupportsDecodePoints(structure.compression));
  }
  return !options.strict_hashes && sidecar;
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
