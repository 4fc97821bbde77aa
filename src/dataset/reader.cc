// SPDX-License-Identifier: Apache-2.0
#include "sedpack/dataset/reader.h"
#include "sedpack/io/file_system.h"

#include <unistd.h>

#include <algorithm>
#include <deque>
#include <future>
#include <map>
#include <new>
#include <random>
#include <unordered_set>
#include <utility>
#include <system_error>
#include <thread>

#include "dataset/shards_tree_internal.h"
#include "dataset/checks_write_internal.h"
#include "dataset/verified_read.h"
#include "sedpack/codecs/hash.h"
#include "io/beneath.h"
#include "sedpack/io/file.h"
#include "sedpack/metadata/paths.h"
#include "shard/shard_buffer.h"

namespace sedpack {
namespace {

std::string ToHex64(std::uint64_t v) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out(16, '0');
  for (int i = 15; i >= 0; --i, v >>= 4) out[static_cast<std::size_t>(i)] = kHex[v & 15];
  return out;
}

// ReadFileBytesBeneath (same checks and messages), but into pooled memory that
// is neither zero-filled nor freshly mapped for every shard.
// With `sum`, the bytes are also fed to it a piece at a time as they arrive,
// while the piece is still in the CPU's cache: checking then costs the hash's
// arithmetic only, not another trip through memory. A piece of 1 MiB still
// sits in a core's L2 (1-2 MiB on current x86) and needs 40 reads for a
// 41 MB shard, where 256 KiB pieces took 160 (their system-call overhead was
// about a third of what checking added to the read).
Status ReadFileInto(const Dataset& dataset, std::string_view relative, std::uint64_t max_bytes,
                    codecs_internal::ByteBuffer* out, codecs_internal::FastChecksummer* sum = nullptr) {
  SEDPACK_ASSIGN_OR_RETURN(BeneathFile file, OpenFileBeneath(dataset.root(), relative, dataset.file_system()));
  const std::uint64_t size = file.size;
  if (size > max_bytes) {
    return Status::ResourceExhausted("file ", file.path, " has ", size, " bytes, more than the limit of ",
                                     max_bytes);
  }
  try {
    out->resize(static_cast<std::size_t>(size));
  } catch (const std::bad_alloc&) {
    return Status::ResourceExhausted("out of memory reading ", file.path, " (", size, " bytes)");
  }
  if (!sum) {
    return ReadFully(file.fd.get(), std::span<std::byte>(out->data(), out->size()), file.path, std::nullopt,
                     dataset.file_system());
  }
  constexpr std::size_t kPiece = std::size_t{1} << 20;
  for (std::size_t at = 0; at < out->size(); at += kPiece) {
    const std::span<std::byte> piece(out->data() + at, std::min(kPiece, out->size() - at));
    SEDPACK_RETURN_NOT_OK(ReadFully(file.fd.get(), piece, file.path, std::nullopt, dataset.file_system()));
    sum->Update(piece);
  }
  return Status::OK();
}

}  // namespace

namespace dataset_internal {

Result<ShardReadForCheck> ReadHashAndDecode(const Dataset& dataset, std::string_view relative,
                                            const ShardReadLimits& limits) {
  codecs_internal::ByteBuffer bytes;
  if (dataset.pack()) {
    SEDPACK_ASSIGN_OR_RETURN(std::vector<std::byte> packed,
                             dataset.ReadBytes(relative, limits.max_decompressed_bytes));
    bytes = codecs_internal::ByteBuffer(std::move(packed));
  } else {
    SEDPACK_RETURN_NOT_OK(ReadFileInto(dataset, relative, limits.max_decompressed_bytes, &bytes));
  }
  ShardReadForCheck out;
  out.size = bytes.size();
  SEDPACK_ASSIGN_OR_RETURN(out.hashes, HashBytes(dataset.info().dataset_structure.hash_checksum_algorithms,
                                                 std::span<const std::byte>(bytes.data(), bytes.size())));
  const auto& structure = dataset.info().dataset_structure;
  const std::uint64_t fast = codecs_internal::FastChecksum(bytes.span());
  auto points = structure.shard_file_type == ShardFileType::kFb
                    ? codecs_internal::FindDecodePoints(structure.compression, bytes.span())
                    : Result<std::vector<codecs_internal::DecodePoint>>(std::vector<codecs_internal::DecodePoint>{});
  auto decoded = shard_internal::DecodeShardBuffer(structure.shard_file_type, structure.compression,
                                                   dataset.schema(), std::move(bytes), limits);
  if (decoded.ok()) {
    out.num_examples = (*decoded)->num_examples();
    shard_internal::ShardWriteChecks learned = shard_internal::ChecksOfDecodedShard(**decoded);
    if (points.ok()) learned.decode_points = std::move(points).value();
    if (learned.decoded_size == 0) learned.decoded_size = out.size;
    out.checks = MakeShardChecks(std::string(relative), out.size, fast, std::move(learned));
  } else {
    out.decoded = decoded.status().WithPrefix(std::string(relative) + ": ");
  }
  return out;
}

}  // namespace dataset_internal

// The lists of a split in the one tree walk's order and checks, each loaded
// (and, with verify_hashes, checked against the hash its parent records) when
// reached. Holds the dataset the walk reads.
class ShardInfoIterator::ListWalk {
 public:
  ListWalk(std::shared_ptr<const Dataset> dataset, bool verify_hashes)
      : dataset_(std::move(dataset)), walk_(*dataset_, dataset_internal::ShardsTreeLimits{verify_hashes}) {}

  static Result<std::unique_ptr<ListWalk>> Make(std::shared_ptr<const Dataset> dataset, Split split,
                                                bool verify_hashes) {
    auto walk = std::make_unique<ListWalk>(std::move(dataset), verify_hashes);
    SEDPACK_RETURN_NOT_OK(walk->walk_.AddSplit(split));
    return walk;
  }

  // The next list and the file it was read from, or nullopt at the end.
  Result<std::optional<std::pair<FileInfo, ShardsList>>> Next() {
    SEDPACK_ASSIGN_OR_RETURN(std::optional<dataset_internal::ShardsTreeNode> node, walk_.Next());
    if (!node) return std::optional<std::pair<FileInfo, ShardsList>>();
    return std::optional<std::pair<FileInfo, ShardsList>>(std::in_place, std::move(node->entry.shard_list_info_file),
                                                          std::move(node->list));
  }

 private:
  std::shared_ptr<const Dataset> dataset_;
  dataset_internal::ShardsTreeWalk walk_;
};

Result<std::unique_ptr<ShardInfoIterator>> ShardInfoIterator::Make(
    std::shared_ptr<const Dataset> dataset, Split split, bool verify_hashes) {
  std::unique_ptr<ShardInfoIterator> it(new ShardInfoIterator());
  SEDPACK_ASSIGN_OR_RETURN(it->walk_, ListWalk::Make(std::move(dataset), split, verify_hashes));
  // The split's own list is read now: a missing or damaged one fails here.
  SEDPACK_ASSIGN_OR_RETURN(auto first, it->walk_->Next());
  if (first) it->list_ = std::move(first->second);
  return it;
}

ShardInfoIterator::~ShardInfoIterator() = default;

Result<std::optional<ShardInfo>> ShardInfoIterator::Next() {
  for (;;) {
    if (next_shard_ < list_.shard_files.size()) {
      const ShardInfo& shard = list_.shard_files[next_shard_++];
      if (shard.file_infos.empty()) {
        return Status::Corruption(list_.relative_path_self, ": shard_files[", next_shard_ - 1,
                                  "] has no file_infos");
      }
      return std::optional<ShardInfo>(shard);
    }
    SEDPACK_ASSIGN_OR_RETURN(auto next, walk_->Next());
    if (!next) return std::optional<ShardInfo>();
    list_ = std::move(next->second);
    next_shard_ = 0;
  }
}

Result<std::vector<ShardInfo>> ListShards(const std::shared_ptr<const Dataset>& dataset, Split split,
                                          bool verify_hashes) {
  SEDPACK_ASSIGN_OR_RETURN(auto it, ShardInfoIterator::Make(dataset, split, verify_hashes));
  std::vector<ShardInfo> out;
  for (;;) {
    SEDPACK_ASSIGN_OR_RETURN(std::optional<ShardInfo> next, it->Next());
    if (!next) break;
    out.push_back(std::move(*next));
  }
  return out;
}

Result<std::shared_ptr<const DecodedShard>> ReadShard(const Dataset& dataset, const ShardInfo& shard,
                                                      const ShardReadLimits& limits, bool verify_hashes) {
  return dataset_internal::ReadShardChecked(dataset, shard, limits, verify_hashes, nullptr);
}

namespace dataset_internal {

std::shared_ptr<const sidecar_internal::ChecksSidecar> ReaderChecks(const Dataset& dataset, bool verify, bool strict,
                                                                    const std::function<void(const std::string&)>& warn) {
  // A dataset recording no algorithms reads unchecked, as without the sidecar.
  if (!verify || strict || dataset.pack() || dataset.info().dataset_structure.hash_checksum_algorithms.empty()) {
    return nullptr;
  }
  return sidecar_internal::LoadFreshChecks(dataset.root(), warn, dataset.file_system());
}

Result<std::shared_ptr<const DecodedShard>> ReadShardChecked(const Dataset& dataset, const ShardInfo& shard,
                                                             const ShardReadLimits& limits, bool verify_hashes,
                                                             const sidecar_internal::ChecksSidecar* checks) {
  if (shard.file_infos.empty()) return Status::Corruption("shard entry without file_infos");
  const std::string& rel = shard.file_infos[0].file_path;
  SEDPACK_RETURN_NOT_OK(ValidateRelativePath(rel, "file_path"));
  const auto& structure = dataset.info().dataset_structure;
  // A compressed file can never be larger than what it decompresses to by much;
  // reading it is bounded by the same limit.
  const sidecar_internal::ShardChecksPtr record = verify_hashes && checks ? checks->Find(rel) : nullptr;
  codecs_internal::ByteBuffer bytes;
  std::optional<std::uint64_t> fast;
  if (dataset.pack()) {
    SEDPACK_ASSIGN_OR_RETURN(std::vector<std::byte> packed, dataset.ReadBytes(rel, limits.max_decompressed_bytes));
    bytes = codecs_internal::ByteBuffer(std::move(packed));
  } else if (record) {
    codecs_internal::FastChecksummer sum;
    SEDPACK_RETURN_NOT_OK(ReadFileInto(dataset, rel, limits.max_decompressed_bytes, &bytes, &sum));
    fast = sum.Digest();
  } else {
    SEDPACK_RETURN_NOT_OK(ReadFileInto(dataset, rel, limits.max_decompressed_bytes, &bytes));
  }
  // The bytes about to be decoded are the ones hashed: no second read, and no
  // window for the file to change between the check and the decode.
  if (record) {
    const std::span<const std::byte> stored(bytes.data(), bytes.size());
    if (stored.size() != record->stored_size()) {
      return Status::Corruption(dataset.PathOf(rel), ": ", stored.size(), " bytes, the checks sidecar records ",
                                record->stored_size())
          .WithDetail(StatusDetail::kHashMismatch);
    }
    const std::uint64_t sum = fast ? *fast : codecs_internal::FastChecksum(stored);
    if (sum != record->stored_checksum()) {
      return Status::Corruption(dataset.PathOf(rel), ": xxh3-64 mismatch (checks sidecar records ",
                                ToHex64(record->stored_checksum()), ", computed ", ToHex64(sum), ")")
          .WithDetail(StatusDetail::kHashMismatch);
    }
  } else if (verify_hashes) {
    SEDPACK_RETURN_NOT_OK(dataset_internal::CheckRecordedHash(
        dataset, rel, shard.file_infos[0].hash_checksums,
        std::span<const std::byte>(bytes.data(), bytes.size())));
  }
  auto decoded = shard_internal::DecodeShardBuffer(structure.shard_file_type, structure.compression,
                                                   dataset.schema(), std::move(bytes), limits);
  if (!decoded.ok()) return decoded.status().WithPrefix(rel + ": ");
  return std::shared_ptr<const DecodedShard>(std::move(decoded).value());
}

}  // namespace dataset_internal

// Where an ExampleReader's shards come from, one pass at a time, without
// holding the whole split in memory (reading a split of millions of shards
// costs one root-to-leaf path of lists, plus, when shuffling, one entry per
// list and the shards of a few lists):
//
//   in order   (shuffle_buffer == 0): the depth-first walk of ShardInfoIterator.
//   shuffled:  the lists that hold shards are found once (one entry each); every
//              pass visits them in a random order, kOpenLists at a time, taking
//              each next shard from a random open list, whose shards are
//              shuffled when it is opened. A balanced tree has a list per leaf
//              folder of up to 1000 shards, so shards far apart in the tree
//              still mix within a pass.
//   listed:    the whole shard list, shuffled as one (the reference's way): kept
//              for the filters whose result depends on the order of the whole
//              split (custom_metadata_type_limit, max_shards) when shuffling.
class ExampleReader::Impl {
 public:
  Impl(std::shared_ptr<const Dataset> dataset, ReadOptions options)
      : dataset_(std::move(dataset)), options_(std::move(options)), rng_(options_.seed) {}

  ~Impl() {
    // Futures from std::async block in their destructor until the decode ends.
    inflight_.clear();
  }

  Status Init(Split split) {
    split_ = split;
    checks_ = dataset_internal::ReaderChecks(*dataset_, options_.verify_hashes, options_.strict_hashes, options_.warn);
    const bool shuffle = options_.shuffle_buffer > 0;
    if (!shuffle) {
      mode_ = Mode::kInOrder;
    } else if (options_.custom_metadata_type_limit || options_.max_shards) {
      mode_ = Mode::kListed;
      SEDPACK_ASSIGN_OR_RETURN(shards_, ListFiltered());
      listed_ = true;
    } else {
      mode_ = Mode::kShuffled;
      SEDPACK_RETURN_NOT_OK(FindShardLists());
    }
    SEDPACK_RETURN_NOT_OK(StartPass());
    // The first shard is looked for now, so that an empty split (after the
    // filters) fails here, as it does when the whole list is read up front.
    SEDPACK_ASSIGN_OR_RETURN(lookahead_, NextShard());
    if (!lookahead_ && options_.repeat) {
      return Status::InvalidArgument("the list of shards is empty (split ", SplitName(split),
                                     " after filtering); cannot repeat");
    }
    return Status::OK();
  }

  Result<std::optional<Example>> Next() {
    if (options_.shuffle_buffer == 0) return NextInOrder();
    // Shuffle buffer: fill, then emit a random slot and refill it; drain at the end.
    while (!drained_ && buffer_.size() < options_.shuffle_buffer) {
      SEDPACK_ASSIGN_OR_RETURN(std::optional<Example> e, NextInOrder());
      if (!e) {
        drained_ = true;
        break;
      }
      buffer_.push_back(std::move(*e));
    }
    if (buffer_.empty()) return std::optional<Example>();
    std::uniform_int_distribution<std::size_t> pick(0, buffer_.size() - 1);
    const std::size_t i = pick(rng_);
    Example out = std::move(buffer_[i]);
    buffer_[i] = std::move(buffer_.back());
    buffer_.pop_back();
    return std::optional<Example>(std::move(out));
  }

  // Listed on first use when the reader streams: this is the one call that
  // holds every shard of the split in memory.
  const std::vector<ShardInfo>& shards() {
    if (!listed_) {
      auto all = ListFiltered();
      if (all.ok()) shards_ = std::move(all).value();
      listed_ = true;
    }
    return shards_;
  }

 private:
  enum class Mode { kInOrder, kShuffled, kListed };
  static constexpr std::size_t kOpenLists = 8;

  bool Keep(const ShardInfo& s, std::map<std::string, std::size_t>* per_type, std::size_t kept) const {
    if (options_.shard_filter && !options_.shard_filter(s)) return false;
    if (options_.custom_metadata_type_limit) {
      std::size_t& n = (*per_type)[s.custom_metadata.SortedKeysText()];
      if (n >= *options_.custom_metadata_type_limit) return false;
      ++n;
    }
    return !options_.max_shards || kept < *options_.max_shards;
  }

  Result<std::vector<ShardInfo>> ListFiltered() const {
    SEDPACK_ASSIGN_OR_RETURN(auto it, ShardInfoIterator::Make(dataset_, split_, options_.verify_hashes));
    std::vector<ShardInfo> out;
    std::map<std::string, std::size_t> per_type;
    for (;;) {
      SEDPACK_ASSIGN_OR_RETURN(std::optional<ShardInfo> s, it->Next());
      if (!s) break;
      if (options_.max_shards && out.size() >= *options_.max_shards) break;
      if (Keep(*s, &per_type, out.size())) out.push_back(std::move(*s));
    }
    return out;
  }

  // The lists of the split that name shards, in traversal order: their files
  // (path and recorded hashes, to load them again) only.
  Status FindShardLists() {
    SEDPACK_ASSIGN_OR_RETURN(auto walk, ShardInfoIterator::ListWalk::Make(dataset_, split_, options_.verify_hashes));
    for (;;) {
      SEDPACK_ASSIGN_OR_RETURN(auto next, walk->Next());
      if (!next) return Status::OK();
      if (!next->second.shard_files.empty()) shard_lists_.push_back(std::move(next->first));
    }
  }

  Result<ShardsList> LoadList(const FileInfo& file) const {
    return options_.verify_hashes ? dataset_internal::LoadShardsListVerified(*dataset_, file)
                                  : LoadShardsList(*dataset_, file.file_path);
  }

  Status StartPass() {
    pass_shards_ = 0;
    switch (mode_) {
      case Mode::kInOrder: {
        SEDPACK_ASSIGN_OR_RETURN(walk_, ShardInfoIterator::Make(dataset_, split_, options_.verify_hashes));
        per_type_.clear();
        break;
      }
      case Mode::kShuffled:
        list_order_.resize(shard_lists_.size());
        for (std::size_t i = 0; i < list_order_.size(); ++i) list_order_[i] = i;
        std::shuffle(list_order_.begin(), list_order_.end(), rng_);
        next_list_ = 0;
        open_.clear();
        break;
      case Mode::kListed:
        order_.resize(shards_.size());
        for (std::size_t i = 0; i < order_.size(); ++i) order_[i] = i;
        if (options_.shuffle_buffer > 0) std::shuffle(order_.begin(), order_.end(), rng_);
        next_to_schedule_ = 0;
        break;
    }
    return Status::OK();
  }

  // The next shard of this pass, or nullopt at its end.
  Result<std::optional<ShardInfo>> NextShard() {
    switch (mode_) {
      case Mode::kInOrder:
        for (;;) {
          if (options_.max_shards && pass_shards_ >= *options_.max_shards) return std::optional<ShardInfo>();
          SEDPACK_ASSIGN_OR_RETURN(std::optional<ShardInfo> s, walk_->Next());
          if (!s) return s;
          if (Keep(*s, &per_type_, pass_shards_)) {
            ++pass_shards_;
            return s;
          }
        }
      case Mode::kShuffled:
        for (;;) {
          while (open_.size() < kOpenLists && next_list_ < list_order_.size()) {
            SEDPACK_ASSIGN_OR_RETURN(ShardsList list, LoadList(shard_lists_[list_order_[next_list_++]]));
            std::shuffle(list.shard_files.begin(), list.shard_files.end(), rng_);
            open_.push_back(OpenList{std::move(list.shard_files), 0});
          }
          if (open_.empty()) return std::optional<ShardInfo>();
          std::uniform_int_distribution<std::size_t> pick(0, open_.size() - 1);
          const std::size_t k = pick(rng_);
          OpenList& o = open_[k];
          ShardInfo s = std::move(o.shards[o.next++]);
          if (o.next == o.shards.size()) {
            open_[k] = std::move(open_.back());
            open_.pop_back();
          }
          if (s.file_infos.empty()) return Status::Corruption("a shard entry without file_infos");
          if (options_.shard_filter && !options_.shard_filter(s)) continue;
          ++pass_shards_;
          return std::optional<ShardInfo>(std::move(s));
        }
      case Mode::kListed:
        if (next_to_schedule_ >= order_.size()) return std::optional<ShardInfo>();
        ++pass_shards_;
        return std::optional<ShardInfo>(shards_[order_[next_to_schedule_++]]);
    }
    return std::optional<ShardInfo>();
  }

  Status Schedule() {
    const std::size_t depth = static_cast<std::size_t>(std::max(1, options_.prefetch_shards));
    while (inflight_.size() < depth) {
      std::optional<ShardInfo> next = std::move(lookahead_);
      lookahead_.reset();
      if (!next) {
        if (ended_) return Status::OK();
        SEDPACK_ASSIGN_OR_RETURN(next, NextShard());
      }
      if (!next) {
        // End of a pass: another one only when repeating and the pass was not empty.
        if (!options_.repeat || pass_shards_ == 0) {
          ended_ = true;
          return Status::OK();
        }
        SEDPACK_RETURN_NOT_OK(StartPass());
        continue;
      }
      auto dataset = dataset_;
      auto limits = options_.limits;
      const bool verify = options_.verify_hashes;
      if (options_.prefetch_shards <= 0) {
        std::promise<Result<std::shared_ptr<const DecodedShard>>> p;
        p.set_value(dataset_internal::ReadShardChecked(*dataset, *next, limits, verify, checks_.get()));
        inflight_.push_back(p.get_future());
      } else {
        // The fast (or recorded-hash) check runs here, on the prefetch thread,
        // with the read and the decode.
        auto task = [dataset, shard = std::move(*next), limits, verify, checks = checks_] {
          return dataset_internal::ReadShardChecked(*dataset, shard, limits, verify, checks.get());
        };
        try {
          inflight_.push_back(std::async(std::launch::async, task));
        } catch (const std::system_error&) {
          // No thread for the prefetch (a thread limit, or an address-space cap
          // with no room for a stack): decode it when it is needed, here.
          inflight_.push_back(std::async(std::launch::deferred, std::move(task)));
        }
      }
    }
    return Status::OK();
  }

  Result<std::optional<Example>> NextInOrder() {
    while (!current_ || pos_ >= current_->num_examples()) {
      SEDPACK_RETURN_NOT_OK(Schedule());
      if (inflight_.empty()) return std::optional<Example>();
      auto decoded = inflight_.front().get();
      inflight_.pop_front();
      if (!decoded.ok()) return decoded.status();
      current_ = std::move(decoded).value();
      pos_ = 0;
    }
    Example e{current_, pos_++};
    return std::optional<Example>(std::move(e));
  }

  struct OpenList {
    std::vector<ShardInfo> shards;
    std::size_t next = 0;
  };

  std::shared_ptr<const Dataset> dataset_;
  ReadOptions options_;
  std::mt19937_64 rng_;
  Split split_ = Split::kTrain;
  Mode mode_ = Mode::kInOrder;
  std::size_t pass_shards_ = 0;  // shards handed out in this pass
  std::optional<ShardInfo> lookahead_;
  bool ended_ = false;
  // kInOrder
  std::unique_ptr<ShardInfoIterator> walk_;
  std::map<std::string, std::size_t> per_type_;
  // kShuffled
  std::vector<FileInfo> shard_lists_;
  std::vector<std::size_t> list_order_;
  std::size_t next_list_ = 0;
  std::vector<OpenList> open_;
  // kListed (and shards())
  bool listed_ = false;
  std::vector<ShardInfo> shards_;
  std::vector<std::size_t> order_;
  std::size_t next_to_schedule_ = 0;

  std::shared_ptr<const sidecar_internal::ChecksSidecar> checks_;  // fresh, or null
  std::deque<std::future<Result<std::shared_ptr<const DecodedShard>>>> inflight_;
  std::shared_ptr<const DecodedShard> current_;
  std::size_t pos_ = 0;
  std::vector<Example> buffer_;
  bool drained_ = false;
};

Result<std::unique_ptr<ExampleReader>> ExampleReader::Make(std::shared_ptr<const Dataset> dataset,
                                                           Split split, ReadOptions options) {
  if (!dataset) return Status::InvalidArgument("ExampleReader::Make: null dataset");
  auto impl = std::make_unique<Impl>(std::move(dataset), std::move(options));
  SEDPACK_RETURN_NOT_OK(impl->Init(split));
  return std::unique_ptr<ExampleReader>(new ExampleReader(std::move(impl)));
}

ExampleReader::ExampleReader(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
ExampleReader::~ExampleReader() = default;

Result<std::optional<Example>> ExampleReader::Next() { return impl_->Next(); }

Result<std::vector<Example>> ExampleReader::NextBatch(std::size_t batch_size) {
  std::vector<Example> out;
  out.reserve(batch_size);
  while (out.size() < batch_size) {
    SEDPACK_ASSIGN_OR_RETURN(std::optional<Example> e, impl_->Next());
    if (!e) break;
    out.push_back(std::move(*e));
  }
  return out;
}

const std::vector<ShardInfo>& ExampleReader::shards() const { return impl_->shards(); }

}  // namespace sedpack
