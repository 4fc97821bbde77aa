// SPDX-License-Identifier: Apache-2.0
// The checks on decode points every codec shares, and the dispatch to the
// codec that knows its block structure (lz4_codec.cc, gzip_codec.cc).
#include "codecs/decode_points_internal.h"

#include <xxhash.h>
#if defined(SEDPACK_XXH3_DISPATCH)
#include <xxh_x86dispatch.h>
#endif

#include <algorithm>
#include <new>

#include "codecs/codec_internal.h"

namespace sedpack::codecs_internal {
namespace {

XXH64_hash_t Xxh3(const void* data, std::size_t size) {
#if defined(SEDPACK_XXH3_DISPATCH)
  return XXH3_64bits_dispatch(data, size);
#else
  return XXH3_64bits(data, size);
#endif
}

void Xxh3Update(XXH3_state_t* state, const void* data, std::size_t size) {
#if defined(SEDPACK_XXH3_DISPATCH)
  (void)XXH3_64bits_update_dispatch(state, data, size);
#else
  (void)XXH3_64bits_update(state, data, size);
#endif
}

}  // namespace

std::uint64_t FastChecksum(std::span<const std::byte> bytes) {
  return Xxh3(bytes.data(), bytes.size());
}

FastChecksummer::FastChecksummer() : state_(XXH3_createState()) {
  if (state_ == nullptr) throw std::bad_alloc();
  XXH3_64bits_reset(static_cast<XXH3_state_t*>(state_));
}

FastChecksummer::~FastChecksummer() { XXH3_freeState(static_cast<XXH3_state_t*>(state_)); }

void FastChecksummer::Update(std::span<const std::byte> bytes) {
  Xxh3Update(static_cast<XXH3_state_t*>(state_), bytes.data(), bytes.size());
}

std::uint64_t FastChecksummer::Digest() const {
  return XXH3_64bits_digest(static_cast<const XXH3_state_t*>(state_));
}

// ZSTD is not among them: a run of frames is what zstd itself offers, but the
// reference's zstandard.decompress (and so our reader, which matches it)
// returns the first frame only, silently dropping the rest.
bool SupportsDecodePoints(Compression compression) {
  return compression == Compression::kLz4 || compression == Compression::kGzip ||
         compression == Compression::kZlib;
}

Result<std::vector<DecodePoint>> FindDecodePoints(Compression compression,
                                                  std::span<const std::byte> stored) {
  if (compression == Compression::kLz4) return Lz4FindDecodePoints(stored);
  // GZIP/ZLIB: a full flush leaves no mark in the stream; finding one means
  // inflating the whole file. Other codecs have no points.
  return std::vector<DecodePoint>{};
}

Result<std::span<const std::byte>> StoredWindow::Get(std::uint64_t offset, std::uint64_t n,
                                                     std::uint64_t ahead) {
  if (offset > file_size_ || n > file_size_ - offset) {
    return Status::Corruption(label_, " shard: a block at stored offset ", offset, " of ", n,
                              " bytes runs past the end of the file (", file_size_, " bytes)");
  }
  if (buf_.size() > 0 && offset >= start_ && offset + n <= start_ + buf_.size()) {
    return std::span<const std::byte>(buf_.data() + (offset - start_), static_cast<std::size_t>(n));
  }
  const std::uint64_t len = std::min(file_size_ - offset, std::max(n, ahead));
  buf_.clear();  // Nothing to keep: resize would copy the old bytes over.
  buf_.resize(static_cast<std::size_t>(len));
  start_ = offset;
  const Status st = read_at_(offset, std::span<std::byte>(buf_.data(), buf_.size()));
  if (!st.ok()) {
    buf_.clear();
    return st;
  }
  return std::span<const std::byte>(buf_.data(), static_cast<std::size_t>(n));
}

RangeScratch& RangeScratch::ForThisThread() {
  thread_local RangeScratch scratch;
  return scratch;
}

void RangeScratch::Trim() {
  constexpr std::size_t kKeep = 16u << 20;  // Four of LZ4's largest blocks.
  if (window.capacity() > kKeep) window = ByteBuffer();
  block.Trim();
}

namespace {

Status CheckDecodePoints(Compression compression, std::span<const DecodePoint> points,
                         std::uint64_t file_size, std::uint64_t decoded_size) {
  const std::string_view label = CodecLabel(compression);
  if (points.empty()) return Status::InvalidArgument(label, " shard: no decode points to start from");
  if (points.front().decoded_offset != 0) {
    return Status::Corruption(label, " shard: the first decode point is at decoded offset ",
                              points.front().decoded_offset, ", not 0");
  }
  for (std::size_t i = 0; i < points.size(); ++i) {
    const DecodePoint& p = points[i];
    if (p.compressed_offset >= file_size || p.decoded_offset >= decoded_size) {
      return Status::Corruption(label, " shard: decode point ", i, " (stored ", p.compressed_offset,
                                ", decoded ", p.decoded_offset, ") is outside the file of ", file_size,
                                " stored and ", decoded_size, " decoded bytes");
    }
    if (i > 0 && (p.compressed_offset <= points[i - 1].compressed_offset ||
                  p.decoded_offset <= points[i - 1].decoded_offset)) {
      return Status::Corruption(label, " shard: decode point ", i, " does not follow point ", i - 1);
    }
  }
  return Status::OK();
}

}  // namespace

Result<ByteBuffer> DecodeRangeAt(Compression compression, std::span<const DecodePoint> points,
                                 std::uint64_t file_size, std::uint64_t decoded_size,
                                 const ReadStoredAt& read_at, std::uint64_t offset, std::uint64_t size) {
  const std::string_view label = CodecLabel(compression);
  if (!SupportsDecodePoints(compression)) {
    return Status::NotImplemented("decoding a range of a ", label, " shard");
  }
  if (offset > decoded_size || size > decoded_size - offset) {
    return Status::InvalidArgument(label, " shard: range [", offset, ", +", size,
                                   ") is outside its ", decoded_size, " decoded bytes");
  }
  SEDPACK_RETURN_NOT_OK(CheckDecodePoints(compression, points, file_size, decoded_size));
  ByteBuffer out;
  if (size == 0) return out;
  // The last point at or before `offset`: decoding starts there.
  const auto after = std::upper_bound(points.begin(), points.end(), offset,
                                      [](std::uint64_t o, const DecodePoint& p) { return o < p.decoded_offset; });
  const RangeRequest request{points, static_cast<std::size_t>(after - points.begin() - 1), file_size,
                             decoded_size, offset, size};
  out.resize(static_cast<std::size_t>(size));
  const Status st = compression == Compression::kLz4
                        ? Lz4DecodeRange(request, read_at, out.data())
                        : DeflateDecodeRange(compression, request, read_at, out.data());
  RangeScratch::ForThisThread().Trim();
  SEDPACK_RETURN_NOT_OK(st);
  return out;
}

}  // namespace sedpack::codecs_internal
