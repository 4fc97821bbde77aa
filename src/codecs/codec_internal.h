// SPDX-License-Identifier: Apache-2.0
// Declarations shared by the codec backends; not part of the public API.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "sedpack/codecs/compress.h"
#include "sedpack/status.h"
#include "sedpack/types.h"

namespace sedpack::codecs_internal {

// One factory per backend file. Contexts are created lazily on first use, so
// a codec that only decompresses never pays for a compressor context.
std::unique_ptr<Codec> MakeIdentityCodec();
std::unique_ptr<Codec> MakeGzipCodec(Compression type);  // kGzip or kZlib.
std::unique_ptr<Codec> MakeBz2Codec();
std::unique_ptr<Codec> MakeLzmaCodec();
std::unique_ptr<Codec> MakeLz4Codec();
std::unique_ptr<Codec> MakeZstdCodec();

/// Display name of a codec in error messages ("GZIP", "ZSTD", ...).
inline std::string_view CodecLabel(Compression c) {
  std::string_view name = CompressionName(c);
  return name.empty() ? std::string_view("NONE") : name;
}

/// Uninitialized scratch memory reused across calls. Compressors write into it
/// instead of into a value-initialized std::vector of the worst-case bound, so a
/// call pays for neither zero-filling nor page-faulting the unused tail of the bound.
class ScratchBuffer {
 public:
  /// Return at least `n` writable bytes (contents unspecified).
  std::byte* Get(std::size_t n) {
    if (n > capacity_ || !data_) {
      data_.reset();  // Free first so old and new never coexist.
      capacity_ = std::max<std::size_t>(n, 1);
      data_ = std::make_unique_for_overwrite<std::byte[]>(capacity_);
    }
    return data_.get();
  }
  /// Drop the buffer if it is too large to keep around between calls.
  void Trim() {
    if (capacity_ > kMaxRetained) {
      data_.reset();
      capacity_ = 0;
    }
  }

 private:
  // Typical shards are a few MiB; keeping a multi-GiB scratch alive after one
  // huge shard would waste memory for the life of the codec.
  static constexpr std::size_t kMaxRetained = 64u << 20;
  std::unique_ptr<std::byte[]> data_;
  std::size_t capacity_ = 0;
};

/// Output of a streaming decompressor whose total size is not known up front.
/// Grows a window over `*out` geometrically, but never past `max_output + 1`
/// bytes: the one spare byte tells "exactly max_output" from "more than that"
/// without ever holding more than the cap (+1) in memory. Bytes `*out` already
/// holds (a vector reused across calls) are overwritten in place, so a reused
/// vector is neither reallocated nor zero-filled again.
class CappedOutput {
 public:
  /// `size_hint`: expected final size (only a hint; clamped to the cap).
  CappedOutput(std::vector<std::byte>* out, std::uint64_t max_output, std::uint64_t size_hint)
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
  std::vector<std::byte>* out_;
  std::size_t max_output_ = 0;
  std::size_t limit_ = 0;
  std::size_t initial_ = 0;
  std::size_t window_ = 0;  // Bytes of *out this call may write.
  std::size_t used_ = 0;
};

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

}  // namespace sedpack::codecs_internal
