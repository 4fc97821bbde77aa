// SPDX-License-Identifier: Apache-2.0
// What the zlib half (gzip_codec.cc) and the ISA-L half (isal_deflate.cc) of
// the GZIP/ZLIB codec share: where compressed bytes go, and the ISA-L entry
// points (declared only in builds with ISA-L).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "codecs/codec_internal.h"
#include "sedpack/config.h"
#include "sedpack/status.h"

namespace sedpack::codecs_internal {

// Where a compressor puts its output: either one buffer of the worst-case
// bound (filling it is an error), or a small buffer that is handed to a sink
// each time it fills, so a shard streams to its file without a shard-sized
// output buffer (which costs more to fault in than ISA-L takes to fill it).
class DeflateOutput {
 public:
  DeflateOutput(std::byte* dst, std::size_t capacity) : dst_(dst), capacity_(capacity) {}
  DeflateOutput(std::byte* buffer, std::size_t capacity, const ByteSink* sink)
      : dst_(buffer), capacity_(capacity), sink_(sink) {}

  std::byte* next() const { return dst_ + pos_; }
  std::size_t avail() const { return capacity_ - pos_; }
  void Advance(std::size_t n) { pos_ += n; }
  /// Bytes produced so far (streamed ones included).
  std::size_t total() const { return flushed_ + pos_; }

  /// Called when avail() is 0: a streamed output passes the full buffer on.
  Status MakeRoom(std::string_view label) {
    if (sink_ == nullptr) return Status::Internal(label, " compression: output bound exceeded");
    return Flush();
  }
  /// At the end: a streamed output passes the rest on.
  Status Finish() { return sink_ == nullptr ? Status::OK() : Flush(); }

 private:
  Status Flush() {
    if (pos_ > 0) SEDPACK_RETURN_NOT_OK((*sink_)(std::span<const std::byte>(dst_, pos_)));
    flushed_ += pos_;
    pos_ = 0;
    return Status::OK();
  }

  std::byte* dst_;
  std::size_t capacity_;
  const ByteSink* sink_ = nullptr;
  std::size_t pos_ = 0;
  std::size_t flushed_ = 0;
};

/// The gzip header CPython's gzip.compress writes (no name, extra or
/// comment): the DEFLATE data, and so the first decode point, start after it.
inline constexpr std::uint64_t kPythonGzipHeaderBytes = 10;

#ifdef SEDPACK_HAVE_ISAL
/// Worst case of a whole ISA-L gzip member of an `n`-byte input: header,
/// every segment, trailer (block_bytes: CodecOptions::block_bytes).
std::size_t IsalBound(std::size_t n, std::uint64_t block_bytes);

/// One gzip member (CPython's header, DEFLATE at `level` 1..3, CRC-32/ISIZE
/// trailer) into `out`, which holds IsalBound(input.size(), block_bytes)
/// bytes. block_bytes > 0: a decode point every block_bytes of input, into
/// `*points` if given.
Status IsalCompressMember(int level, std::uint64_t block_bytes, std::span<const std::byte> input,
                          DeflateOutput* out, std::string_view label, std::vector<DecodePoint>* points);

/// The same member handed to `sink` one segment at a time, compressed on up to
/// `threads` threads; the bytes are those of IsalCompressMember.
Status IsalCompressMemberStreamed(int level, std::uint64_t block_bytes, std::span<const std::byte> input,
                                  int threads, const ByteSink& sink, std::string_view label,
                                  std::vector<DecodePoint>* points);

/// ISA-L's inflate state (large, ~150 KiB: on the heap), reused across members.
class IsalInflater {
 public:
  IsalInflater();
  ~IsalInflater();
  IsalInflater(const IsalInflater&) = delete;
  IsalInflater& operator=(const IsalInflater&) = delete;

  /// Inflate one gzip member from the front of `*in` into `w` (header parsed
  /// and CRC-32/ISIZE checked); `*in` is advanced past the member.
  Status InflateMember(std::span<const std::byte>* in, CappedOutput* w, Compression c, std::string_view label);
  Status InflateMember(std::span<const std::byte>* in, BasicCappedOutput<ByteBuffer>* w, Compression c,
                       std::string_view label);

 private:
  struct State;
  std::unique_ptr<State> state_;
};
#endif  // SEDPACK_HAVE_ISAL

}  // namespace sedpack::codecs_internal
