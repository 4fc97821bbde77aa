// SPDX-License-Identifier: Apache-2.0
#include "codecs/byte_buffer.h"

#include <sys/mman.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <memory>
#include <mutex>
#include <new>
#include <utility>

#include "codecs/codec_internal.h"

#if defined(__SANITIZE_ADDRESS__)
#define SEDPACK_BYTE_BUFFER_NO_POOL 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(memory_sanitizer)
#define SEDPACK_BYTE_BUFFER_NO_POOL 1
#endif
#endif

namespace sedpack::codecs_internal {
namespace {

constexpr std::size_t kHugePage = std::size_t{2} << 20;
// Enough for a filler's or a reader's steady state (a builder, a compression
// scratch, a file and a decoded shard circulate; an elastic reader holds a
// block of 4 decoded shards and the next ones' reads); bounds what stays
// mapped while idle.
constexpr std::size_t kMaxIdleBlocks = 8;
constexpr std::size_t kMaxIdleBytes = std::size_t{512} << 20;
#ifdef MADV_POPULATE_WRITE
constexpr int kMadvPopulateWrite = MADV_POPULATE_WRITE;
#else
constexpr int kMadvPopulateWrite = 23;  // Linux 5.14 uapi value; EINVAL on older kernels.
#endif

struct Block {
  std::byte* data;
  std::size_t capacity;
};

class Pool {
 public:
  Pool() { idle_.reserve(kMaxIdleBlocks + 1); }

  // Capacity is rounded up to whole huge pages.
  Block Acquire(std::size_t n) {
    const std::size_t cap = (n + kHugePage - 1) & ~(kHugePage - 1);
    if (cap < n) throw std::bad_alloc();  // Overflow.
    {
      std::lock_guard<std::mutex> lock(mu_);
      // Best fit, the most recently released among equals; but never a block
      // more than 4x too large (the holder may keep it long, e.g. a decoded shard).
      std::size_t best = idle_.size();
      for (std::size_t i = idle_.size(); i-- > 0;) {
        const std::size_t c = idle_[i].capacity;
        if (c >= cap && c / 4 <= cap && (best == idle_.size() || c < idle_[best].capacity)) best = i;
      }
      if (best != idle_.size()) {
        const Block b = idle_[best];
        idle_.erase(idle_.begin() + static_cast<std::ptrdiff_t>(best));
        idle_bytes_ -= b.capacity;
        return b;
      }
    }
    return Block{Map(cap), cap};
  }

  // Never allocates (it runs in destructors): idle_ has room reserved for
  // kMaxIdleBlocks + 1 entries and never holds more.
  void Release(Block b) {
    std::array<Block, kMaxIdleBlocks + 1> evicted;
    std::size_t n_evicted = 0;
    {
      std::lock_guard<std::mutex> lock(mu_);
      idle_.push_back(b);
      idle_bytes_ += b.capacity;
      // Evict the smallest (then the oldest) first: a large block can still
      // serve a smaller request, not the other way round.
      while (!idle_.empty() && (idle_.size() > kMaxIdleBlocks || idle_bytes_ > kMaxIdleBytes)) {
        std::size_t victim = 0;
        for (std::size_t i = 1; i < idle_.size(); ++i) {
          if (idle_[i].capacity < idle_[victim].capacity) victim = i;
        }
        evicted[n_evicted++] = idle_[victim];
        idle_bytes_ -= idle_[victim].capacity;
        idle_.erase(idle_.begin() + static_cast<std::ptrdiff_t>(victim));
      }
    }
    for (std::size_t i = 0; i < n_evicted; ++i) ::munmap(evicted[i].data, evicted[i].capacity);
  }

 private:
  // A fresh mapping of `cap` bytes (a multiple of kHugePage), aligned to a huge
  // page so that transparent huge pages can back all of it.
  static std::byte* Map(std::size_t cap) {
    const std::size_t len = cap + kHugePage;
    void* p = ::mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) throw std::bad_alloc();
    const auto start = reinterpret_cast<std::uintptr_t>(p);
    const std::uintptr_t aligned = (start + kHugePage - 1) & ~std::uintptr_t{kHugePage - 1};
    if (aligned > start) ::munmap(p, aligned - start);
    const std::uintptr_t tail = start + len - (aligned + cap);
    if (tail > 0) ::munmap(reinterpret_cast<void*>(aligned + cap), tail);
#ifdef MADV_HUGEPAGE
    ::madvise(reinterpret_cast<void*>(aligned), cap, MADV_HUGEPAGE);  // A hint; may fail.
#endif
    // A block the pool may keep is faulted in whole, in one call: every idle
    // block is then equally warm, whichever part of it the next holder writes
    // (a builder fills from the end, a compressor from the start). Larger
    // blocks (never pooled) stay lazy, so a hostile size claim commits only
    // what is really written. Linux >= 5.14; elsewhere pages fault on use.
    if (cap <= kMaxIdleBytes) {
      ::madvise(reinterpret_cast<void*>(aligned), cap, kMadvPopulateWrite);
    }
    return reinterpret_cast<std::byte*>(aligned);
  }

  std::mutex mu_;
  std::vector<Block> idle_;  // In release order (oldest first).
  std::size_t idle_bytes_ = 0;
};

// Never destroyed: blocks may be released by static or thread_local
// destructors after main() returns.
Pool& GetPool() {
  static Pool* const pool = new Pool;
  return *pool;
}

}  // namespace

PooledBlock PooledBlock::Allocate(std::size_t n) {
  PooledBlock b;
#ifndef SEDPACK_BYTE_BUFFER_NO_POOL
  if (n >= kPooledMinBytes) {
    const Block block = GetPool().Acquire(n);
    b.data_ = block.data;
    b.capacity_ = block.capacity;
    b.mapped_ = true;
    return b;
  }
#endif
  b.capacity_ = std::max<std::size_t>(n, 1);
  b.data_ = new std::byte[b.capacity_];  // Default-initialized: not zeroed.
  return b;
}

void PooledBlock::reset() {
  if (data_ == nullptr) return;
  if (mapped_) {
    GetPool().Release(Block{data_, capacity_});
  } else {
    delete[] data_;
  }
  data_ = nullptr;
  capacity_ = 0;
  mapped_ = false;
}

void ByteBuffer::reserve(std::size_t n) {
  if (adopted_) {
    vec_.reserve(n);
    return;
  }
  if (n <= block_.capacity() && block_.data() != nullptr) return;
  PooledBlock bigger = PooledBlock::Allocate(n);
  if (size_ > 0) std::memcpy(bigger.data(), block_.data(), size_);
  block_ = std::move(bigger);
}

void ByteBuffer::resize(std::size_t n) {
  if (adopted_) {
    vec_.resize(n);
    return;
  }
  reserve(n);
  size_ = n;
}

void ByteBuffer::clear() {
  vec_ = {};
  adopted_ = false;
  size_ = 0;
}

std::vector<std::byte> ByteBuffer::ToVector() && {
  if (adopted_) {
    adopted_ = false;
    return std::move(vec_);
  }
  std::vector<std::byte> v(data(), data() + size_);
  block_.reset();
  size_ = 0;
  return v;
}

Status CompressToBuffer(Compression c, const CodecOptions& options, std::span<const std::byte> input,
                        ByteBuffer* out, std::vector<DecodePoint>* points) {
  out->clear();
  if (points != nullptr) points->clear();
  switch (c) {
    case Compression::kLz4: {
      SEDPACK_ASSIGN_OR_RETURN(const int level, ResolveCodecLevel(c, options.level));
      return Lz4CompressToBuffer(input, level, ResolveBlockBytes(c, options.block_bytes), out, points);
    }
    case Compression::kZstd: {
      CodecOptions resolved = options;
      SEDPACK_ASSIGN_OR_RETURN(resolved.level, ResolveCodecLevel(c, options.level));
      return ZstdCompressToBuffer(input, resolved, out);
    }
    case Compression::kGzip:
    case Compression::kZlib: {
      SEDPACK_ASSIGN_OR_RETURN(const int level, ResolveCodecLevel(c, options.level));
      return GzipCompressToBuffer(c, level, ResolveBlockBytes(c, options.block_bytes), input, out, points);
    }
    default: {
      SEDPACK_ASSIGN_OR_RETURN(std::unique_ptr<Codec> codec, MakeCodec(c, options));
      std::vector<std::byte> v;
      SEDPACK_RETURN_NOT_OK(codec->Compress(input, &v));
      *out = ByteBuffer(std::move(v));
      return Status::OK();
    }
  }
}

Status CompressTo(Compression c, const CodecOptions& options, std::span<const std::byte> input,
                  const ByteSink& sink, std::vector<DecodePoint>* points) {
  if (points != nullptr) points->clear();
  if (c == Compression::kNone) return sink(input);
  if (c == Compression::kGzip || c == Compression::kZlib) {
    SEDPACK_ASSIGN_OR_RETURN(const int level, ResolveCodecLevel(c, options.level));
    return GzipCompressStreamed(c, level, ResolveBlockBytes(c, options.block_bytes), options.threads, input, sink,
                                points);
  }
  ByteBuffer out;
  SEDPACK_RETURN_NOT_OK(CompressToBuffer(c, options, input, &out, points));
  return sink(out.span());
}

Status DecompressTo(Compression c, std::span<const std::byte> input, std::uint64_t max_output,
                    ByteBuffer* out) {
  out->clear();
  switch (c) {
    case Compression::kLz4:
      return Lz4DecompressTo(input, max_output, out);
    case Compression::kZstd:
      return ZstdDecompressTo(input, max_output, out);
    case Compression::kGzip:
    case Compression::kZlib:
      if (GzipDecompressToAvailable()) return GzipDecompressTo(c, input, max_output, out);
      [[fallthrough]];
    default: {
      SEDPACK_ASSIGN_OR_RETURN(std::unique_ptr<Codec> codec, MakeCodec(c));
      std::vector<std::byte> v;
      SEDPACK_RETURN_NOT_OK(codec->Decompress(input, max_output, &v));
      *out = ByteBuffer(std::move(v));
      return Status::OK();
    }
  }
}

}  // namespace sedpack::codecs_internal
