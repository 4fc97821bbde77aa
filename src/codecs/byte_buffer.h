// SPDX-License-Identifier: Apache-2.0
// Large, uninitialized byte buffers for whole shards (internal; not public API).
//
// A shard is tens of MiB. Fresh anonymous memory of that size costs far more
// to page-fault in 4 KiB steps than to fill (on some VMs more than compressing
// it), and glibc serves such sizes with a new mmap every time. So buffers of at
// least kPooledMinBytes come from a small process-wide pool of recently
// released blocks (already faulted in), or else from a fresh 2 MiB-aligned
// mapping marked MADV_HUGEPAGE (where THP is allowed, 512x fewer faults).
// The pool keeps at most 8 idle blocks and 512 MiB; a request takes the
// smallest idle block that fits (and is at most 4x too large). Smaller
// buffers, and all buffers under ASan/MSan (so that overflows stay visible),
// use operator new[]. Nothing is ever zero-filled.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <utility>
#include <vector>

#include "sedpack/codecs/compress.h"
#include "sedpack/status.h"
#include "sedpack/types.h"

namespace sedpack::codecs_internal {

struct DecodePoint;  // decode_points_internal.h

/// Requests from this size up use the pool / huge-page mappings.
inline constexpr std::size_t kPooledMinBytes = std::size_t{1} << 20;

/// One owned block of uninitialized bytes. Move-only; releasing it (destructor,
/// reset, move-assignment) hands pooled memory back to the pool.
class PooledBlock {
 public:
  PooledBlock() = default;
  /// At least `n` bytes (capacity() may be larger). Throws std::bad_alloc.
  static PooledBlock Allocate(std::size_t n);

  ~PooledBlock() { reset(); }
  PooledBlock(PooledBlock&& o) noexcept : data_(o.data_), capacity_(o.capacity_), mapped_(o.mapped_) {
    o.data_ = nullptr;
    o.capacity_ = 0;
    o.mapped_ = false;
  }
  PooledBlock& operator=(PooledBlock&& o) noexcept {
    if (this != &o) {
      reset();
      data_ = o.data_;
      capacity_ = o.capacity_;
      mapped_ = o.mapped_;
      o.data_ = nullptr;
      o.capacity_ = 0;
      o.mapped_ = false;
    }
    return *this;
  }
  PooledBlock(const PooledBlock&) = delete;
  PooledBlock& operator=(const PooledBlock&) = delete;

  std::byte* data() const { return data_; }
  std::size_t capacity() const { return capacity_; }
  void reset();

 private:
  std::byte* data_ = nullptr;
  std::size_t capacity_ = 0;
  bool mapped_ = false;  // From the pool / mmap (else operator new[]).
};

/// A byte vector without value-initialization, backed by PooledBlock; it can
/// also adopt a std::vector<std::byte> (bytes that arrived through a public API).
/// Offers the subset of the std::vector interface the codecs use.
class ByteBuffer {
 public:
  ByteBuffer() = default;
  explicit ByteBuffer(std::vector<std::byte> v) : vec_(std::move(v)), adopted_(true) {}
  /// The first `size` bytes of `block` (size <= block.capacity()).
  ByteBuffer(PooledBlock block, std::size_t size) : block_(std::move(block)), size_(size) {}
  ByteBuffer(ByteBuffer&& o) noexcept
      : block_(std::move(o.block_)), size_(o.size_), vec_(std::move(o.vec_)), adopted_(o.adopted_) {
    o.size_ = 0;
    o.vec_.clear();
    o.adopted_ = false;
  }
  ByteBuffer& operator=(ByteBuffer&& o) noexcept {
    if (this != &o) {
      block_ = std::move(o.block_);
      size_ = o.size_;
      vec_ = std::move(o.vec_);
      adopted_ = o.adopted_;
      o.size_ = 0;
      o.vec_.clear();
      o.adopted_ = false;
    }
    return *this;
  }

  std::byte* data() { return adopted_ ? vec_.data() : block_.data(); }
  const std::byte* data() const { return adopted_ ? vec_.data() : block_.data(); }
  std::size_t size() const { return adopted_ ? vec_.size() : size_; }
  bool empty() const { return size() == 0; }
  std::size_t capacity() const { return adopted_ ? vec_.capacity() : block_.capacity(); }
  std::size_t max_size() const { return static_cast<std::size_t>(PTRDIFF_MAX); }
  std::span<const std::byte> span() const { return {data(), size()}; }

  /// Capacity of at least `n`; keeps the contents.
  void reserve(std::size_t n);
  /// New bytes (if growing) are uninitialized.
  void resize(std::size_t n);
  void clear();

  /// The bytes as a std::vector (moved out if adopted, else copied).
  std::vector<std::byte> ToVector() &&;

 private:
  PooledBlock block_;
  std::size_t size_ = 0;
  std::vector<std::byte> vec_;
  bool adopted_ = false;
};

/// Receives finished bytes; they are valid only during the call.
using ByteSink = std::function<Status(std::span<const std::byte>)>;

/// Compress exactly as MakeCodec(c, options)->Compress(input, ...) would (same
/// bytes, same errors) into `*out`. LZ4 and ZSTD reuse per-thread contexts and
/// write straight into pooled memory that `*out` then owns: the result is never copied.
/// `points`, if given, receives the decode points the codec wrote
/// (options.block_bytes; empty for codecs without them, and for block_bytes 0).
Status CompressToBuffer(Compression c, const CodecOptions& options, std::span<const std::byte> input,
                        ByteBuffer* out, std::vector<DecodePoint>* points = nullptr);
inline Status CompressToBuffer(Compression c, std::span<const std::byte> input, ByteBuffer* out) {
  return CompressToBuffer(c, CodecOptions{}, input, out);
}

/// The bytes CompressToBuffer would make, handed to `sink` (kNone: `input`
/// itself) in one or more pieces: GZIP/ZLIB stream in pieces, without a buffer
/// for the whole output (at ISA-L levels on up to options.threads threads); the
/// other codecs in one.
Status CompressTo(Compression c, const CodecOptions& options, std::span<const std::byte> input,
                  const ByteSink& sink, std::vector<DecodePoint>* points = nullptr);
inline Status CompressTo(Compression c, std::span<const std::byte> input, const ByteSink& sink) {
  return CompressTo(c, CodecOptions{}, input, sink);
}
/// Whether CompressTo streams `c` (kNone, GZIP, ZLIB) rather than handing over
/// one buffer.
inline bool CompressStreams(Compression c) {
  return c == Compression::kNone || c == Compression::kGzip || c == Compression::kZlib;
}

/// Decompress exactly as MakeCodec(c)->Decompress(input, max_output, ...) would
/// (same checks, same Status), into `*out` (pooled, not zero-filled, for LZ4 and ZSTD).
Status DecompressTo(Compression c, std::span<const std::byte> input, std::uint64_t max_output,
                    ByteBuffer* out);

}  // namespace sedpack::codecs_internal
