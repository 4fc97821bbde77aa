// SPDX-License-Identifier: Apache-2.0
// GZIP/ZLIB whole-file codecs: for fb both write one gzip member, as the
// reference's gzip.compress(data, 9) (the level is ours to choose, the format
// is the same); for tfrec they are TensorFlow's record stream wrappers (gzip
// member or zlib stream, default level). Plus the raw DEFLATE and CRC-32
// helpers used by npz.
//
// Which library: fb shards are compressed at levels 1..3 and decompressed
// with ISA-L's igzip where the build has it, and with zlib otherwise (and at
// levels 4..9, and always for tfrec streams and npz members). Measured on a
// 41 MB TinyAES fb shard (float16 traces, 2-core VM; bench/codec_bench and
// docs/performance.md have the table): zlib -9 compresses in 2.1 s, libdeflate -1 in 0.41 s
// (+1.0% size) and -6 in 0.79 s (-0.5%), ISA-L -1 in 0.09 s (+1.9%); all three
// decompress it in 0.12..0.13 s (libdeflate, ISA-L) against 0.38 s (zlib).
// Only ISA-L reaches 10x zlib -9 on writes, and its streaming inflate keeps
// the output cap exact (libdeflate needs the whole output buffer up front), so
// ISA-L is the one fast library used; libdeflate is only measured against.
// The ISA-L half (segmented members, threads) is isal_deflate.cc.
#include <zlib.h>

#include <algorithm>
#include <cstring>
#include <ctime>
#include <limits>
#include <memory>

#include "codecs/compress_internal.h"
#include "codecs/decode_points_internal.h"
#include "codecs/deflate_internal.h"
#include "sedpack/config.h"

namespace sedpack {
namespace codecs_internal {
namespace {

// zlib counts bytes in uInt; larger buffers are fed in slices of this size.
constexpr std::size_t kMaxZChunk = std::size_t{1} << 30;
// DEFLATE cannot expand data by more than ~1032:1; used to clamp size hints
// taken from untrusted trailers.
constexpr std::uint64_t kMaxDeflateRatio = 1032;
constexpr int kGzipWindowBits = 15 + 16;  // 32 KiB window, gzip wrapper only.
constexpr int kZlibWindowBits = 15;       // 32 KiB window, zlib (RFC 1950) wrapper.
constexpr int kRawWindowBits = -15;       // 32 KiB window, no wrapper.
constexpr int kMemLevel = 8;              // zlib's (and CPython's) default.

Bytef* InPtr(const std::byte* p) { return reinterpret_cast<Bytef*>(const_cast<std::byte*>(p)); }

std::string_view ZMessage(const z_stream& zs, int ret) {
  if (zs.msg != nullptr) return zs.msg;
  switch (ret) {
    case Z_DATA_ERROR:
      return "invalid data";
    case Z_NEED_DICT:
      return "a preset dictionary is required";
    case Z_MEM_ERROR:
      return "out of memory";
    default:
      return "zlib error";
  }
}

// Run deflate over the whole input with Z_FINISH. A fixed `out` must hold
// deflateBound bytes. With block_bytes > 0, a full flush (byte-aligned, no
// history kept) after every block_bytes of input makes a decode point there;
// `*points` (if given) gets them, the first one `header_bytes` in.
Status RunDeflate(z_stream* zs, std::span<const std::byte> input, DeflateOutput* out,
                  std::string_view label, std::uint64_t block_bytes = 0,
                  std::vector<DecodePoint>* points = nullptr, std::uint64_t header_bytes = 0) {
  const std::size_t step =
      block_bytes > 0 ? static_cast<std::size_t>(std::min<std::uint64_t>(block_bytes, kMaxZChunk)) : kMaxZChunk;
  const bool record = points != nullptr && block_bytes > 0 && !input.empty();
  if (record) points->push_back({header_bytes, 0});
  std::size_t pos = 0;
  for (;;) {
    const std::size_t n = std::min(step, input.size() - pos);
    const bool last = pos + n == input.size();
    // Once all remaining input is offered, every call must use Z_FINISH.
    const int flush = last ? Z_FINISH : block_bytes > 0 ? Z_FULL_FLUSH : Z_NO_FLUSH;
    zs->next_in = InPtr(input.data() + pos);
    zs->avail_in = static_cast<uInt>(n);
    for (;;) {
      if (out->avail() == 0) SEDPACK_RETURN_NOT_OK(out->MakeRoom(label));
      const auto out_chunk = static_cast<uInt>(std::min(out->avail(), kMaxZChunk));
      zs->next_out = reinterpret_cast<Bytef*>(out->next());
      zs->avail_out = out_chunk;
      const uInt in_before = zs->avail_in;
      const int ret = deflate(zs, flush);
      const std::size_t produced = out_chunk - zs->avail_out;
      out->Advance(produced);
      if (ret == Z_STREAM_END) break;
      if ((ret != Z_OK && ret != Z_BUF_ERROR) || (in_before == zs->avail_in && produced == 0)) {
        return Status::Internal(label, " compression failed: ", ZMessage(*zs, ret));
      }
      // The slice is taken (and flushed) once deflate stops short of the room it had.
      if (!last && zs->avail_in == 0 && zs->avail_out != 0) break;
    }
    pos += n;
    if (last) break;
    if (record) points->push_back({out->total(), pos});
  }
  return out->Finish();
}

// Inflate one stream (gzip member or raw DEFLATE) from `*in`, appending to `w`.
// On success `*in` is advanced past the stream's last byte.
Status InflateStream(z_stream* zs, std::span<const std::byte>* in, CappedOutput* w, Compression c,
                     std::string_view label) {
  for (;;) {
    if (w->avail() == 0 && !w->Grow()) return ExceededStatus(c, w->max_output());
    const auto in_chunk = static_cast<uInt>(std::min(in->size(), kMaxZChunk));
    const auto out_chunk = static_cast<uInt>(std::min(w->avail(), kMaxZChunk));
    zs->next_in = InPtr(in->data());
    zs->avail_in = in_chunk;
    zs->next_out = reinterpret_cast<Bytef*>(w->next());
    zs->avail_out = out_chunk;
    const int ret = inflate(zs, Z_NO_FLUSH);
    *in = in->subspan(in_chunk - zs->avail_in);
    w->Advance(out_chunk - zs->avail_out);
    if (w->Exceeded()) return ExceededStatus(c, w->max_output());
    if (ret == Z_STREAM_END) return Status::OK();
    if (ret == Z_MEM_ERROR) {
      return Status::ResourceExhausted(label, " decompression: out of memory");
    }
    if (ret != Z_OK && ret != Z_BUF_ERROR) {
      return Status::Corruption(label, " decompression: corrupt data (", ZMessage(*zs, ret), ")");
    }
    // All input consumed, room left for output, yet no end of stream: the
    // stream was cut short.
    if (in->empty() && zs->avail_out != 0) {
      return Status::Corruption(label,
                                " decompression: truncated input (end of stream not reached)");
    }
  }
}

// How one flavour of the codec frames and compresses its stream.
struct DeflateFormat {
  Compression type;
  bool zlib_wrapper;   // RFC 1950 stream instead of a gzip member.
  int level;
  bool python_header;  // gzip header as CPython's gzip.compress writes it.
  bool whole_file;     // fb: one buffer in, one out (ISA-L may do it).
};

// fb: a gzip member as gzip.compress(data, level) writes it, for both names (the
// reference's quirk); the level is set per codec.
constexpr DeflateFormat kFbGzip = {Compression::kGzip, false, 0, true, true};
constexpr DeflateFormat kFbZlib = {Compression::kZlib, false, 0, true, true};
// tfrec: TensorFlow's ZlibCompressionOptions, default level, zlib's own header.
constexpr DeflateFormat kTfGzip = {Compression::kGzip, false, Z_DEFAULT_COMPRESSION, false, false};
constexpr DeflateFormat kTfZlib = {Compression::kZlib, true, Z_DEFAULT_COMPRESSION, false, false};

// Levels 1..3 of fb GZIP/ZLIB are ISA-L's (where built with it).
constexpr int kMaxIsalLevel = 3;


// The first allocation for a gzip file: the last member's ISIZE is the exact
// size of a single (< 4 GiB) member, the common case, so the output is
// allocated once. It is untrusted, so it is clamped by what DEFLATE can expand
// to (and BasicCappedOutput clamps it by the cap); +1 leaves room to see the
// end of stream without growing the buffer.
std::uint64_t GzipSizeHint(std::span<const std::byte> input) {
  if (input.size() < 18) return DefaultSizeHint(input.size());
  const auto* t = reinterpret_cast<const unsigned char*>(input.data() + input.size() - 4);
  const std::uint64_t isize = std::uint64_t{t[0]} | (std::uint64_t{t[1]} << 8) |
                              (std::uint64_t{t[2]} << 16) | (std::uint64_t{t[3]} << 24);
  return std::min(isize, std::uint64_t{input.size()} * kMaxDeflateRatio) + 1;
}

// Like CPython's gzip.decompress: decode every member of `input` into `*out`
// (std::vector or ByteBuffer); zero padding between/after members is skipped;
// anything else is an error. `member(&rest, &w)` decodes one member.
template <class Vec, class MemberFn>
Status DecodeGzipMembers(std::span<const std::byte> input, std::uint64_t max_output, Vec* out,
                         Compression c, MemberFn member) {
  if (input.empty()) return EmptyInputStatus(c);
  BasicCappedOutput<Vec> w(out, max_output, GzipSizeHint(input));
  std::span<const std::byte> rest = input;
  for (bool first = true;; first = false) {
    if (!first) {
      while (!rest.empty() && rest.front() == std::byte{0}) rest = rest.subspan(1);
      if (rest.empty()) break;
      if (rest.size() < 2 || rest[0] != std::byte{0x1f} || rest[1] != std::byte{0x8b}) {
        return Status::Corruption(CodecLabel(c),
                                  " decompression: trailing data after the gzip member is "
                                  "not a gzip member");
      }
    }
    SEDPACK_RETURN_NOT_OK(member(&rest, &w));
  }
  w.Finish();
  return Status::OK();
}

class GzipCodec final : public Codec {
 public:
  GzipCodec(const DeflateFormat& format, int level, std::uint64_t block_bytes = 0)
      : format_(format), type_(format.type), block_bytes_(format.whole_file ? block_bytes : 0) {
    format_.level = level;
  }
  ~GzipCodec() override {
    if (deflate_ready_) deflateEnd(&deflate_);
    if (inflate_ready_) inflateEnd(&inflate_);
  }
  GzipCodec(const GzipCodec&) = delete;
  GzipCodec& operator=(const GzipCodec&) = delete;

  Compression type() const override { return type_; }

  Status Compress(std::span<const std::byte> input, std::vector<std::byte>* out) override {
    std::size_t written = 0;
    SEDPACK_RETURN_NOT_OK(CompressToScratch(input, &written));
    const std::byte* dst = scratch_.data();
    out->assign(dst, dst + written);
    scratch_.Trim();
    return Status::OK();
  }

  // Compress into the scratch buffer (its first `*written` bytes).
  Status CompressToScratch(std::span<const std::byte> input, std::size_t* written,
                           std::vector<DecodePoint>* points = nullptr) {
    SEDPACK_RETURN_NOT_OK(PrepareDeflate());
#ifdef SEDPACK_HAVE_ISAL
    const std::size_t bound =
        UsesIsal() ? IsalBound(input.size(), block_bytes_) : DeflateBlocksBound(input.size());
#else
    const std::size_t bound = DeflateBlocksBound(input.size());
#endif
    DeflateOutput out(scratch_.Get(bound), bound);
    SEDPACK_RETURN_NOT_OK(RunCompress(input, &out, points));
    *written = out.total();
    return Status::OK();
  }

  // Compress, handing the output to `sink` in pieces (ISA-L levels: on up to
  // `threads` threads).
  Status CompressStreamed(std::span<const std::byte> input, int threads, const ByteSink& sink,
                          std::vector<DecodePoint>* points) {
#ifdef SEDPACK_HAVE_ISAL
    if (UsesIsal()) {
      return IsalCompressMemberStreamed(format_.level, block_bytes_, input, threads, sink, CodecLabel(type_),
                                        points);
    }
#else
    (void)threads;
#endif
    SEDPACK_RETURN_NOT_OK(PrepareDeflate());
    DeflateOutput out(scratch_.Get(kStreamChunk), kStreamChunk, &sink);
    return RunCompress(input, &out, points);
  }

  // The scratch buffer, handed over (after CompressToScratch).
  PooledBlock ReleaseScratch() { return scratch_.Release(); }

  Status Decompress(std::span<const std::byte> input, std::uint64_t max_output,
                    std::vector<std::byte>* out) override {
    const std::string_view label = CodecLabel(type_);
    if (input.empty()) return EmptyInputStatus(type_);
#ifdef SEDPACK_HAVE_ISAL
    const bool use_isal = format_.whole_file;
#else
    const bool use_isal = false;
#endif
    if (!use_isal && !inflate_ready_) {
      std::memset(&inflate_, 0, sizeof(inflate_));
      if (inflateInit2(&inflate_, WindowBits()) != Z_OK) {
        return Status::Internal(label, " decompression: inflateInit2 failed");
      }
      inflate_ready_ = true;
    }
    if (format_.zlib_wrapper) return DecompressZlibStream(input, max_output, out);
    return DecodeGzipMembers(
        input, max_output, out, type_,
        [&](std::span<const std::byte>* rest, CappedOutput* w) -> Status {
          if (use_isal) {
#ifdef SEDPACK_HAVE_ISAL
            if (!isal_inflate_) isal_inflate_ = std::make_unique<IsalInflater>();
            return isal_inflate_->InflateMember(rest, w, type_, label);
#endif
          }
          if (inflateReset(&inflate_) != Z_OK) {
            return Status::Internal(label, " decompression: inflateReset failed");
          }
          return InflateStream(&inflate_, rest, w, type_, label);
        });
  }

 private:
  // Streamed output pieces: small enough to stay in cache between the
  // compressor, the hashes and write(), and exactly the size the pool serves.
  static constexpr std::size_t kStreamChunk = kPooledMinBytes;

  bool UsesIsal() const {
#ifdef SEDPACK_HAVE_ISAL
    return format_.whole_file && format_.level <= kMaxIsalLevel;
#else
    return false;
#endif
  }

  // The zlib stream, initialized or reset, with its header (a no-op for ISA-L).
  Status PrepareDeflate() {
    if (UsesIsal()) return Status::OK();
    const std::string_view label = CodecLabel(type_);
    if (!deflate_ready_) {
      std::memset(&deflate_, 0, sizeof(deflate_));
      const int ret = deflateInit2(&deflate_, format_.level, Z_DEFLATED, WindowBits(), kMemLevel,
                                   Z_DEFAULT_STRATEGY);
      if (ret != Z_OK) return Status::Internal(label, " compression: deflateInit2 failed");
      deflate_ready_ = true;
    } else if (deflateReset(&deflate_) != Z_OK) {
      return Status::Internal(label, " compression: deflateReset failed");
    }
    if (format_.python_header) {
      // Match CPython's gzip.compress: mtime = now, no name/extra/comment,
      // OS = 255 (unknown). zlib sets XFL = 2 itself for level 9.
      std::memset(&header_, 0, sizeof(header_));
      header_.time = static_cast<uLong>(std::time(nullptr)) & 0xffffffffUL;
      header_.os = 255;
      if (deflateSetHeader(&deflate_, &header_) != Z_OK) {
        return Status::Internal(label, " compression: deflateSetHeader failed");
      }
    }
    return Status::OK();
  }

  // The whole of `input` as one stream into `out` (after PrepareDeflate).
  Status RunCompress(std::span<const std::byte> input, DeflateOutput* out, std::vector<DecodePoint>* points) {
    const std::string_view label = CodecLabel(type_);
    if (points != nullptr) points->clear();
#ifdef SEDPACK_HAVE_ISAL
    if (UsesIsal()) return IsalCompressMember(format_.level, block_bytes_, input, out, label, points);
#endif
    return RunDeflate(&deflate_, input, out, label, block_bytes_, points, kPythonGzipHeaderBytes);
  }

  // deflateBound, plus what a full flush adds per block (an empty stored
  // block, and the bit padding before it).
  std::size_t DeflateBlocksBound(std::size_t n) {
    const std::size_t blocks = block_bytes_ > 0 ? n / block_bytes_ + 1 : 0;
    return deflateBound(&deflate_, n) + 16 * blocks;
  }

  int WindowBits() const { return format_.zlib_wrapper ? kZlibWindowBits : kGzipWindowBits; }

  // One zlib stream, as TensorFlow's reader expects; its trailer has no size,
  // so the output grows from the default hint up to the cap.
  Status DecompressZlibStream(std::span<const std::byte> input, std::uint64_t max_output,
                              std::vector<std::byte>* out) {
    const std::string_view label = CodecLabel(type_);
    CappedOutput w(out, max_output, DefaultSizeHint(input.size()));
    if (inflateReset(&inflate_) != Z_OK) {
      return Status::Internal(label, " decompression: inflateReset failed");
    }
    std::span<const std::byte> rest = input;
    SEDPACK_RETURN_NOT_OK(InflateStream(&inflate_, &rest, &w, type_, label));
    if (!rest.empty()) {
      return Status::Corruption(label, " decompression: ", rest.size(),
                                " bytes of trailing data after the zlib stream");
    }
    w.Finish();
    return Status::OK();
  }

  DeflateFormat format_;
  Compression type_;
  std::uint64_t block_bytes_;
  z_stream deflate_{};
  z_stream inflate_{};
  gz_header header_{};  // Must outlive each deflate call that writes the header.
  bool deflate_ready_ = false;
  bool inflate_ready_ = false;
  ScratchBuffer scratch_;
#ifdef SEDPACK_HAVE_ISAL
  // Large (~150 KiB): on the heap, made on first use.
  std::unique_ptr<IsalInflater> isal_inflate_;
#endif
};

}  // namespace

std::unique_ptr<Codec> MakeGzipCodec(Compression type, int level, std::uint64_t block_bytes) {
  return std::make_unique<GzipCodec>(type == Compression::kZlib ? kFbZlib : kFbGzip, level, block_bytes);
}

std::unique_ptr<Codec> MakeTfRecordGzipCodec(Compression type, int level) {
  return std::make_unique<GzipCodec>(type == Compression::kZlib ? kTfZlib : kTfGzip, level);
}

bool GzipDecompressToAvailable() {
#ifdef SEDPACK_HAVE_ISAL
  return true;
#else
  return false;
#endif
}

Status GzipCompressToBuffer(Compression type, int level, std::uint64_t block_bytes,
                            std::span<const std::byte> input, ByteBuffer* out,
                            std::vector<DecodePoint>* points) {
  // The member goes straight into pooled memory that *out then owns: no second
  // shard-sized buffer to fault in and no copy (Codec::Compress has to return a
  // std::vector).
  GzipCodec codec(type == Compression::kZlib ? kFbZlib : kFbGzip, level, block_bytes);
  std::size_t written = 0;
  SEDPACK_RETURN_NOT_OK(codec.CompressToScratch(input, &written, points));
  *out = ByteBuffer(codec.ReleaseScratch(), written);
  return Status::OK();
}

Status GzipCompressStreamed(Compression type, int level, std::uint64_t block_bytes, int threads,
                            std::span<const std::byte> input, const ByteSink& sink,
                            std::vector<DecodePoint>* points) {
  GzipCodec codec(type == Compression::kZlib ? kFbZlib : kFbGzip, level, block_bytes);
  return codec.CompressStreamed(input, threads, sink, points);
}

Status GzipDecompressTo(Compression type, std::span<const std::byte> input, std::uint64_t max_output,
                        ByteBuffer* out) {
#ifdef SEDPACK_HAVE_ISAL
  // Into pooled memory that is never zero-filled: for a 41 MB shard, zeroing
  // and faulting in a fresh std::vector costs about a tenth of the inflate.
  IsalInflater inflater;
  return DecodeGzipMembers(input, max_output, out, type,
                           [&](std::span<const std::byte>* rest, BasicCappedOutput<ByteBuffer>* w) {
                             return inflater.InflateMember(rest, w, type, CodecLabel(type));
                           });
#else
  return Status::Internal("GzipDecompressTo needs ISA-L");
#endif
}

namespace {

// Raw inflate of the blocks after the decode points, reading the stored bytes
// in pieces and skipping the decoded bytes before the range.
class RangeInflater {
 public:
  RangeInflater(Compression type, const RangeRequest& r, const ReadStoredAt& read_at)
      : label_(CodecLabel(type)), r_(r), read_at_(read_at) {}
  ~RangeInflater() {
    if (ready_) inflateEnd(&zs_);
  }
  RangeInflater(const RangeInflater&) = delete;
  RangeInflater& operator=(const RangeInflater&) = delete;

  Status Run(std::byte* dst) {
    std::memset(&zs_, 0, sizeof(zs_));
    if (inflateInit2(&zs_, kRawWindowBits) != Z_OK) {
      return Status::Internal(label_, " decompression: inflateInit2 failed");
    }
    ready_ = true;
    // Per-thread memory (RangeScratch): the input pieces, then the skipped output.
    std::byte* mem = RangeScratch::ForThisThread().block.Get(kInPiece + kSkipPiece);
    in_ = mem;
    skip_ = mem + kInPiece;
    std::uint64_t d = r_.points[r_.first].decoded_offset;
    for (std::size_t i = r_.first; d < r_.offset + r_.size; ++i) {
      // Only intervals inside the file reach here: the range ends before decoded_size.
      SEDPACK_RETURN_NOT_OK(Interval(i, &d, dst));
    }
    return Status::OK();
  }

 private:
  static constexpr std::size_t kInPiece = 64u << 10;
  static constexpr std::size_t kSkipPiece = 64u << 10;

  // Inflate from point `i` until its interval is decoded or the range is
  // complete; `*d` is the decoded offset reached.
  Status Interval(std::size_t i, std::uint64_t* d, std::byte* dst) {
    if (inflateReset(&zs_) != Z_OK) return Status::Internal(label_, " decompression: inflateReset failed");
    const std::uint64_t end = r_.offset + r_.size;
    const std::uint64_t limit = r_.StoredEnd(i);
    const std::uint64_t decoded_end = r_.DecodedEnd(i);
    const bool last = i + 1 == r_.points.size();
    std::uint64_t pos = r_.points[i].compressed_offset;
    bool out_was_full = false;
    for (;;) {
      if (zs_.avail_in == 0) {
        if (pos == limit && !out_was_full) break;
        if (pos < limit) {
          const auto n = static_cast<std::size_t>(std::min<std::uint64_t>(kInPiece, limit - pos));
          SEDPACK_RETURN_NOT_OK(read_at_(pos, std::span<std::byte>(in_, n)));
          zs_.next_in = reinterpret_cast<Bytef*>(in_);
          zs_.avail_in = static_cast<uInt>(n);
          pos += n;
        }
      }
      // Before the range: into the skip buffer; then straight into `dst`.
      const bool skipping = *d < r_.offset;
      const std::uint64_t room = std::min(skipping ? std::min<std::uint64_t>(r_.offset - *d, kSkipPiece) : end - *d,
                                          std::uint64_t{kMaxZChunk});
      zs_.next_out = reinterpret_cast<Bytef*>(skipping ? skip_ : dst + (*d - r_.offset));
      zs_.avail_out = static_cast<uInt>(room);
      const int ret = inflate(&zs_, Z_NO_FLUSH);
      const std::uint64_t produced = room - zs_.avail_out;
      out_was_full = zs_.avail_out == 0;
      *d += produced;
      if (*d > decoded_end) {
        return Status::Corruption(label_, " shard: the blocks after decode point ", i,
                                  " decode to more bytes than the points say");
      }
      if (*d >= end) return Status::OK();
      if (ret == Z_STREAM_END) {
        if (!last) {
          return Status::Corruption(label_, " shard: the stream ends before decode point ", i + 1);
        }
        break;
      }
      if (ret == Z_MEM_ERROR) return Status::ResourceExhausted(label_, " decompression: out of memory");
      if (ret != Z_OK && ret != Z_BUF_ERROR) {
        return Status::Corruption(label_, " shard: corrupt data after decode point ", i, " (",
                                  ZMessage(zs_, ret), ")");
      }
      if (ret == Z_BUF_ERROR && zs_.avail_in == 0 && pos == limit) break;  // No progress possible.
    }
    if (*d != decoded_end) {
      return Status::Corruption(label_, " shard: the blocks after decode point ", i, " decode to ",
                                *d - r_.points[i].decoded_offset, " bytes, the points say ",
                                decoded_end - r_.points[i].decoded_offset);
    }
    return Status::OK();
  }

  std::string_view label_;
  const RangeRequest& r_;
  const ReadStoredAt& read_at_;
  z_stream zs_{};
  bool ready_ = false;
  std::byte* in_ = nullptr;
  std::byte* skip_ = nullptr;
};

}  // namespace

Status DeflateDecodeRange(Compression type, const RangeRequest& request, const ReadStoredAt& read_at,
                          std::byte* dst) {
  RangeInflater inflater(type, request, read_at);
  return inflater.Run(dst);
}

}  // namespace codecs_internal

std::string_view DeflateLibrary(int level) {
#ifdef SEDPACK_HAVE_ISAL
  if (level == kDefaultCodecLevel || level <= codecs_internal::kMaxIsalLevel) return "ISA-L";
#endif
  return "zlib";
}

std::string_view InflateLibrary() {
#ifdef SEDPACK_HAVE_ISAL
  return "ISA-L";
#else
  return "zlib";
#endif
}

using codecs_internal::InflateStream;
using codecs_internal::kMemLevel;
using codecs_internal::kRawWindowBits;
using codecs_internal::RunDeflate;

Status DeflateRaw(std::span<const std::byte> input, int level, std::vector<std::byte>* out) {
  if (level < -1 || level > 9) {
    return Status::InvalidArgument("DEFLATE level must be in [-1, 9], got ", level);
  }
  z_stream zs{};
  if (deflateInit2(&zs, level, Z_DEFLATED, kRawWindowBits, kMemLevel, Z_DEFAULT_STRATEGY) != Z_OK) {
    return Status::Internal("DEFLATE compression: deflateInit2 failed");
  }
  const std::size_t bound = deflateBound(&zs, input.size());
  out->resize(bound);
  codecs_internal::DeflateOutput dst(out->data(), bound);
  Status st = RunDeflate(&zs, input, &dst, "DEFLATE");
  const std::size_t written = dst.total();
  deflateEnd(&zs);
  out->resize(st.ok() ? written : 0);
  return st;
}

Status InflateRaw(std::span<const std::byte> input, std::uint64_t expected_size,
                  std::vector<std::byte>* out) {
  z_stream zs{};
  if (inflateInit2(&zs, kRawWindowBits) != Z_OK) {
    return Status::Internal("DEFLATE decompression: inflateInit2 failed");
  }
  // Cap at the expected size: one byte more means the data is longer than declared.
  codecs_internal::CappedOutput w(out, expected_size, expected_size + 1);
  std::span<const std::byte> rest = input;
  Status st = InflateStream(&zs, &rest, &w, Compression::kZip, "DEFLATE");
  inflateEnd(&zs);
  if (!st.ok() && w.Exceeded()) {
    return Status::Corruption("DEFLATE decompression: data inflates to more than the expected ",
                              expected_size, " bytes");
  }
  SEDPACK_RETURN_NOT_OK(st);
  if (w.used() != expected_size) {
    return Status::Corruption("DEFLATE decompression: data inflates to ", w.used(),
                              " bytes, expected ", expected_size);
  }
  w.Finish();
  return Status::OK();
}

std::uint32_t Crc32(std::span<const std::byte> data, std::uint32_t crc) {
  // zlib returns the initial value 0 for a null buffer, which would drop `crc`.
  if (data.empty()) return crc;
  return static_cast<std::uint32_t>(
      crc32_z(crc, reinterpret_cast<const Bytef*>(data.data()), data.size()));
}

}  // namespace sedpack
