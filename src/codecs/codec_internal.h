// SPDX-License-Identifier: Apache-2.0
// Declarations shared by the codec backends; not part of the public API.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <mutex>
#include <span>
#include <string_view>
#include <vector>

#include "codecs/byte_buffer.h"
#include "codecs/decode_points_internal.h"
#include "sedpack/codecs/compress.h"
#include "sedpack/status.h"
#include "sedpack/types.h"

namespace sedpack::codecs_internal {

// One factory per backend file. Contexts are created lazily on first use, so
// a codec that only decompresses never pays for a compressor context. Levels
// are resolved (never kDefaultCodecLevel) and validated by the caller.
std::unique_ptr<Codec> MakeIdentityCodec();
// kGzip or kZlib; block_bytes: CodecOptions::block_bytes.
std::unique_ptr<Codec> MakeGzipCodec(Compression type, int level, std::uint64_t block_bytes);
// kGzip or kZlib; level: zlib's, or Z_DEFAULT_COMPRESSION.
std::unique_ptr<Codec> MakeTfRecordGzipCodec(Compression type, int level);
std::unique_ptr<Codec> MakeBz2Codec(int level);
std::unique_ptr<Codec> MakeLzmaCodec(int preset);
std::unique_ptr<Codec> MakeLz4Codec(int level, std::uint64_t block_bytes);
std::unique_ptr<Codec> MakeZstdCodec(const CodecOptions& options);

// The pooled, copy-free paths behind CompressToBuffer / DecompressTo (byte_buffer.h):
// same bytes and Status as the codec classes, per-thread contexts. Where a
// codec writes decode points (CodecOptions::block_bytes), `points` (if not
// null) receives them; it is left empty otherwise.
Status Lz4CompressToBuffer(std::span<const std::byte> input, int level, std::uint64_t block_bytes,
                           ByteBuffer* out, std::vector<DecodePoint>* points);
Status Lz4DecompressTo(std::span<const std::byte> input, std::uint64_t max_output, ByteBuffer* out);
Status ZstdCompressToBuffer(std::span<const std::byte> input, const CodecOptions& options,
                            ByteBuffer* out);
// fb GZIP/ZLIB (any level) into pooled memory.
Status GzipCompressToBuffer(Compression type, int level, std::uint64_t block_bytes,
                            std::span<const std::byte> input, ByteBuffer* out,
                            std::vector<DecodePoint>* points);
// The same bytes handed to `sink` in pieces (no shard-sized buffer); ISA-L
// levels compress on up to `threads` threads (the bytes do not depend on it).
Status GzipCompressStreamed(Compression type, int level, std::uint64_t block_bytes, int threads,
                            std::span<const std::byte> input, const ByteSink& sink,
                            std::vector<DecodePoint>* points);
// Decompression into pooled memory: only where the build has ISA-L.
bool GzipDecompressToAvailable();
Status GzipDecompressTo(Compression type, std::span<const std::byte> input, std::uint64_t max_output,
                        ByteBuffer* out);
Status ZstdDecompressTo(std::span<const std::byte> input, std::uint64_t max_output, ByteBuffer* out);

// DecodeRangeAt after the checks every codec shares (decode_points.cc): the
// points are ascending and inside the file, the range inside the decoded bytes.
struct RangeRequest {
  std::span<const DecodePoint> points;
  std::size_t first = 0;  // The point decoding starts at (the last at or before `offset`).
  std::uint64_t file_size = 0;
  std::uint64_t decoded_size = 0;
  std::uint64_t offset = 0;
  std::uint64_t size = 0;  // > 0
  // Where the blocks after point `i` end: the next point, or the file's end.
  std::uint64_t StoredEnd(std::size_t i) const {
    return i + 1 < points.size() ? points[i + 1].compressed_offset : file_size;
  }
  std::uint64_t DecodedEnd(std::size_t i) const {
    return i + 1 < points.size() ? points[i + 1].decoded_offset : decoded_size;
  }
};
// Decode the request's range into `dst` (size bytes).
Status Lz4DecodeRange(const RangeRequest& request, const ReadStoredAt& read_at, std::byte* dst);
Status DeflateDecodeRange(Compression type, const RangeRequest& request, const ReadStoredAt& read_at,
                          std::byte* dst);
Result<std::vector<DecodePoint>> Lz4FindDecodePoints(std::span<const std::byte> stored);

/// The stored bytes a range decoder needs, read through ReadStoredAt in
/// pieces of at least `ahead` bytes into `*buf` and kept until a read falls
/// outside. The buffer is the caller's, so that a thread's fetches reuse one
/// (a fresh block-sized allocation per fetch costs more than the decode).
class StoredWindow {
 public:
  StoredWindow(const ReadStoredAt& read_at, std::uint64_t file_size, std::string_view label, ByteBuffer* buf)
      : read_at_(read_at), file_size_(file_size), label_(label), buf_(*buf) {
    buf_.clear();
  }
  /// The bytes [offset, offset + n): Corruption if they pass the file's end.
  Result<std::span<const std::byte>> Get(std::uint64_t offset, std::uint64_t n, std::uint64_t ahead);

 private:
  const ReadStoredAt& read_at_;
  std::uint64_t file_size_;
  std::string_view label_;
  ByteBuffer& buf_;
  std::uint64_t start_ = 0;
};


/// CodecOptions::block_bytes with kDefaultBlockBytes resolved.
inline std::uint64_t ResolveBlockBytes(Compression c, std::uint64_t block_bytes) {
  return block_bytes == kDefaultBlockBytes ? DefaultBlockBytes(c) : block_bytes;
}

/// Display name of a codec in error messages ("GZIP", "ZSTD", ...).
inline std::string_view CodecLabel(Compression c) {
  std::string_view name = CompressionName(c);
  return name.empty() ? std::string_view("NONE") : name;
}

/// Uninitialized scratch memory reused across calls. Compressors write into it
/// instead of into a value-initialized std::vector of the worst-case bound, so a
/// call pays for neither zero-filling nor page-faulting the unused tail of the bound.
/// Large blocks come from (and go back to) the PooledBlock pool, so even a
/// short-lived codec gets memory that is already faulted in.
class ScratchBuffer {
 public:
  /// Return at least `n` writable bytes (contents unspecified).
  std::byte* Get(std::size_t n) {
    if (n > block_.capacity() || block_.data() == nullptr) {
      block_.reset();  // Free first so old and new never coexist.
      block_ = PooledBlock::Allocate(std::max<std::size_t>(n, 1));
    }
    return block_.data();
  }
  /// What the last Get returned (nullptr before any).
  std::byte* data() const { return block_.data(); }
  /// Hand the memory over (the scratch is empty afterwards).
  PooledBlock Release() { return std::move(block_); }
  /// Drop the buffer if it is too large to keep around between calls.
  void Trim() {
    if (block_.capacity() > kMaxRetained) block_.reset();
  }

 private:
  // Typical shards are a few MiB; keeping a multi-GiB scratch alive after one
  // huge shard would waste memory for the life of the codec.
  static constexpr std::size_t kMaxRetained = 64u << 20;
  PooledBlock block_;
};

/// Per-thread buffers of the range decoders, reused across calls; those that
/// grew past a few blocks are dropped after the call.
struct RangeScratch {
  ByteBuffer window;
  ScratchBuffer block;
  static RangeScratch& ForThisThread();
  void Trim();
};

/// Idle codec contexts shared process-wide (at most kMaxIdle kept). Filler
/// workers and reader prefetch threads are short-lived, so per-thread contexts
/// would rarely be warm. `Free`'s return value is ignored.
template <class Ctx, Ctx* (*Create)(), auto Free>
class ContextPool {
 public:
  // A context owned by the caller until Put(); nullptr if it cannot be made.
  Ctx* Get() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!idle_.empty()) {
        Ctx* c = idle_.back();
        idle_.pop_back();
        return c;
      }
    }
    return Create();
  }
  void Put(Ctx* c) {
    if (c == nullptr) return;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (idle_.size() < kMaxIdle) {
        idle_.push_back(c);
        return;
      }
    }
    Free(c);
  }

 private:
  static constexpr std::size_t kMaxIdle = 8;
  std::mutex mu_;
  std::vector<Ctx*> idle_;
};

/// Output of a streaming decompressor whose total size is not known up front.
/// Grows a window over `*out` geometrically, but never past `max_output + 1`
/// bytes: the one spare byte tells "exactly max_output" from "more than that"
/// without ever holding more than the cap (+1) in memory. Bytes `*out` already
/// holds (a vector reused across calls) are overwritten in place, so a reused
/// vector is neither reallocated nor zero-filled again. `Vec` is
/// std::vector<std::byte> or ByteBuffer (which never zero-fills).
template <class Vec>
class BasicCappedOutput {
 public:
  /// `size_hint`: expected final size (only a hint; clamped to the cap).
  BasicCappedOutput(Vec* out, std::uint64_t max_output, std::uint64_t size_hint)
      : out_(out) {
    // size_t and vector::max_size bound what can be held in memory at all.
    const std::uint64_t hard_max =
        std::min<std::uint64_t>(out->max_size() - 1, std::numeric_limits<std::size_t>::max() - 1);
    max_output_ = static_cast<std::size_t>(std::min(max_output, hard_max));
    limit_ = max_output_ + 1;
    initial_ = static_cast<std::size_t>(
        std::min<std::uint64_t>(std::max<std::uint64_t>(size_hint, 1), limit_));
  }

  /// Make room for more output. Returns false when the window is already at
  /// its hard limit, i.e. the output has exceeded max_output.
  bool Grow() {
    if (window_ >= limit_) return false;
    std::size_t next = window_ == 0 ? initial_ : window_ + std::max(window_, kMinStep);
    if (next < window_ || next > limit_) next = limit_;  // Overflow or past the cap.
    if (next > out_->size()) {
      // reserve() allocates exactly `next`; a bare resize() may round the
      // capacity up to twice the old size, past the cap.
      if (next > out_->capacity()) out_->reserve(next);
      out_->resize(next);
    }
    window_ = next;
    return true;
  }

  std::byte* next() { return out_->data() + used_; }
  std::size_t avail() const { return window_ - used_; }
  void Advance(std::size_t n) { used_ += n; }
  std::size_t used() const { return used_; }
  bool Exceeded() const { return used_ > max_output_; }
  std::size_t max_output() const { return max_output_; }

  /// Forget everything produced after the first `n` bytes.
  void Rewind(std::size_t n) { used_ = std::min(used_, n); }
  /// Shrink `*out` to the bytes actually produced.
  void Finish() { out_->resize(used_); }

 private:
  static constexpr std::size_t kMinStep = 64u << 10;
  Vec* out_;
  std::size_t max_output_ = 0;
  std::size_t limit_ = 0;
  std::size_t initial_ = 0;
  std::size_t window_ = 0;  // Bytes of *out this call may write.
  std::size_t used_ = 0;
};
using CappedOutput = BasicCappedOutput<std::vector<std::byte>>;

/// Default first allocation for streaming decoders without a size hint:
/// a few times the input, at least 64 KiB.
inline std::uint64_t DefaultSizeHint(std::size_t input_size) {
  return std::max<std::uint64_t>(std::uint64_t{input_size} * 4, 64u << 10);
}

inline Status ExceededStatus(Compression c, std::uint64_t max_output) {
  return Status::ResourceExhausted(CodecLabel(c), " decompression: output exceeds the limit of ",
                                   max_output, " bytes");
}
inline Status TruncatedStatus(Compression c) {
  return Status::Corruption(CodecLabel(c),
                            " decompression: truncated input (end of stream not reached)");
}
inline Status EmptyInputStatus(Compression c) {
  return Status::Corruption(CodecLabel(c), " decompression: empty input");
}

/// Decode concatenated streams as CPython's bz2/lzma.decompress do: every stream
/// in turn; data after the first stream that is not a valid stream is ignored,
/// but a stream that is cut short is an error. `decode_stream(&rest, &w,
/// &data_error)` decodes one stream from the front of `rest` and sets
/// `data_error` when the bytes are not a stream at all.
template <typename DecodeStreamFn>
Status DecodeConcatenatedStreams(Compression c, std::span<const std::byte> input,
                                 std::uint64_t max_output, std::vector<std::byte>* out,
                                 DecodeStreamFn decode_stream) {
  if (input.empty()) return EmptyInputStatus(c);
  CappedOutput w(out, max_output, DefaultSizeHint(input.size()));
  std::span<const std::byte> rest = input;
  for (bool first = true; !rest.empty(); first = false) {
    const std::size_t mark = w.used();
    bool data_error = false;
    Status st = decode_stream(&rest, &w, &data_error);
    if (!st.ok()) {
      if (!first && data_error) {
        w.Rewind(mark);
        break;
      }
      return st;
    }
  }
  w.Finish();
  return Status::OK();
}

}  // namespace sedpack::codecs_internal
