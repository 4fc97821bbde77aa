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
// 41 MB TinyAES fb shard (float16 traces, 2-core VM; bench/codec_bench and the
// README have the table): zlib -9 compresses in 2.1 s, libdeflate -1 in 0.41 s
// (+1.0% size) and -6 in 0.79 s (-0.5%), ISA-L -1 in 0.09 s (+1.9%); all three
// decompress it in 0.12..0.13 s (libdeflate, ISA-L) against 0.38 s (zlib).
// Only ISA-L reaches 10x zlib -9 on writes, and its streaming inflate keeps
// the output cap exact (libdeflate needs the whole output buffer up front), so
// ISA-L is the one fast library used; libdeflate is only measured against.
#include <zlib.h>

#include <algorithm>
#include <cstring>
#include <ctime>
#include <limits>

#include "codecs/codec_internal.h"
#include "sedpack/config.h"

#ifdef SEDPACK_HAVE_ISAL
#include <isa-l/igzip_lib.h>
#endif

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

// Run deflate over the whole input with Z_FINISH. `dst` must hold deflateBound bytes.
Status RunDeflate(z_stream* zs, std::span<const std::byte> input, std::byte* dst,
                  std::size_t capacity, std::size_t* written, std::string_view label) {
  const std::byte* in = input.data();
  std::size_t in_left = input.size();
  std::size_t out_pos = 0;
  for (;;) {
    if (out_pos == capacity) {
      return Status::Internal(label, " compression: output bound exceeded");
    }
    const auto in_chunk = static_cast<uInt>(std::min(in_left, kMaxZChunk));
    const auto out_chunk = static_cast<uInt>(std::min(capacity - out_pos, kMaxZChunk));
    zs->next_in = InPtr(in);
    zs->avail_in = in_chunk;
    zs->next_out = reinterpret_cast<Bytef*>(dst + out_pos);
    zs->avail_out = out_chunk;
    // Once all remaining input is offered, every call must use Z_FINISH.
    const int flush = in_chunk == in_left ? Z_FINISH : Z_NO_FLUSH;
    const int ret = deflate(zs, flush);
    const std::size_t consumed = in_chunk - zs->avail_in;
    const std::size_t produced = out_chunk - zs->avail_out;
    in += consumed;
    in_left -= consumed;
    out_pos += produced;
    if (ret == Z_STREAM_END) break;
    if ((ret != Z_OK && ret != Z_BUF_ERROR) || (consumed == 0 && produced == 0)) {
      return Status::Internal(label, " compression failed: ", ZMessage(*zs, ret));
    }
  }
  *written = out_pos;
  return Status::OK();
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

#ifdef SEDPACK_HAVE_ISAL
// XFL of the gzip header, as CPython's gzip.compress and zlib set it.
unsigned char GzipXfl(int level) { return level == 9 ? 2 : level == 1 ? 4 : 0; }

// The 10-byte gzip header CPython's gzip.compress writes: no name, extra or
// comment, mtime = now, OS = 255 (unknown).
void WritePythonGzipHeader(int level, std::byte* dst) {
  const auto mtime = static_cast<std::uint32_t>(static_cast<std::uint64_t>(std::time(nullptr)));
  const unsigned char h[10] = {0x1f, 0x8b, 8, 0,
                               static_cast<unsigned char>(mtime), static_cast<unsigned char>(mtime >> 8),
                               static_cast<unsigned char>(mtime >> 16), static_cast<unsigned char>(mtime >> 24),
                               GzipXfl(level), 0xff};
  std::memcpy(dst, h, sizeof(h));
}

// ISA-L counts bytes in uint32_t; larger buffers go in slices.
constexpr std::size_t kMaxIsalChunk = std::size_t{1} << 30;

std::size_t IsalLevelBufSize(int level) {
  switch (level) {
    case 1:
      return ISAL_DEF_LVL1_DEFAULT;
    case 2:
      return ISAL_DEF_LVL2_DEFAULT;
    default:
      return ISAL_DEF_LVL3_DEFAULT;
  }
}

// Worst case of one gzip member by ISA-L: it falls back to stored blocks
// (5 bytes per 64 KiB at most) when a block would expand.
std::size_t IsalBound(std::size_t n) { return n + (n >> 10) + (64u << 10); }

// One gzip member (header, DEFLATE at `level` 1..3, CRC-32/ISIZE trailer) into `dst`.
Status IsalCompressMember(isal_zstream* zs, std::vector<std::uint8_t>* level_buf, int level,
                          std::span<const std::byte> input, std::byte* dst, std::size_t capacity,
                          std::size_t* written, std::string_view label) {
  isal_deflate_init(zs);
  level_buf->resize(IsalLevelBufSize(level));
  zs->level = static_cast<std::uint32_t>(level);
  zs->level_buf = level_buf->data();
  zs->level_buf_size = static_cast<std::uint32_t>(level_buf->size());
  zs->gzip_flag = IGZIP_GZIP_NO_HDR;  // Trailer only: the header is CPython's.
  zs->flush = NO_FLUSH;
  WritePythonGzipHeader(level, dst);
  std::size_t out_pos = 10;
  const std::byte* in = input.data();
  std::size_t in_left = input.size();
  for (;;) {
    const auto in_chunk = static_cast<std::uint32_t>(std::min(in_left, kMaxIsalChunk));
    const auto out_chunk = static_cast<std::uint32_t>(std::min(capacity - out_pos, kMaxIsalChunk));
    zs->next_in = const_cast<std::uint8_t*>(reinterpret_cast<const std::uint8_t*>(in));
    zs->avail_in = in_chunk;
    zs->end_of_stream = in_chunk == in_left ? 1 : 0;
    zs->next_out = reinterpret_cast<std::uint8_t*>(dst + out_pos);
    zs->avail_out = out_chunk;
    const int ret = isal_deflate(zs);
    if (ret != COMP_OK) return Status::Internal(label, " compression failed (ISA-L error ", ret, ")");
    const std::size_t consumed = in_chunk - zs->avail_in;
    const std::size_t produced = out_chunk - zs->avail_out;
    in += consumed;
    in_left -= consumed;
    out_pos += produced;
    if (zs->internal_state.state == ZSTATE_END) break;
    if (out_pos == capacity) return Status::Internal(label, " compression: output bound exceeded");
    if (consumed == 0 && produced == 0) return Status::Internal(label, " compression made no progress");
  }
  *written = out_pos;
  return Status::OK();
}

std::string_view IsalInflateError(int ret) {
  switch (ret) {
    case ISAL_INCORRECT_CHECKSUM:
      return "CRC-32 or length check failed";
    case ISAL_INVALID_WRAPPER:
      return "not a gzip member";
    case ISAL_UNSUPPORTED_METHOD:
      return "unsupported compression method";
    case ISAL_INVALID_LOOKBACK:
      return "invalid distance";
    case ISAL_INVALID_SYMBOL:
      return "invalid symbol";
    case ISAL_NEED_DICT:
      return "a preset dictionary is required";
    default:
      return "invalid block";
  }
}

// Inflate one gzip member from the front of `*in` into `w` (header parsed and
// CRC-32/ISIZE checked by ISA-L); `*in` is advanced past the member.
template <class Vec>
Status IsalInflateMember(inflate_state* st, std::span<const std::byte>* in, BasicCappedOutput<Vec>* w,
                         Compression c, std::string_view label) {
  isal_inflate_reset(st);
  st->crc_flag = ISAL_GZIP;
  for (;;) {
    if (w->avail() == 0 && !w->Grow()) return ExceededStatus(c, w->max_output());
    const auto in_chunk = static_cast<std::uint32_t>(std::min(in->size(), kMaxIsalChunk));
    const auto out_chunk = static_cast<std::uint32_t>(std::min(w->avail(), kMaxIsalChunk));
    st->next_in = const_cast<std::uint8_t*>(reinterpret_cast<const std::uint8_t*>(in->data()));
    st->avail_in = in_chunk;
    st->next_out = reinterpret_cast<std::uint8_t*>(w->next());
    st->avail_out = out_chunk;
    const int ret = isal_inflate(st);
    *in = in->subspan(in_chunk - st->avail_in);
    w->Advance(out_chunk - st->avail_out);
    if (w->Exceeded()) return ExceededStatus(c, w->max_output());
    if (ret < 0 || ret == ISAL_NEED_DICT) {
      return Status::Corruption(label, " decompression: corrupt data (", IsalInflateError(ret), ")");
    }
    if (st->block_state == ISAL_BLOCK_FINISH) return Status::OK();
    if (in->empty() && st->avail_out != 0) {
      return Status::Corruption(label,
                                " decompression: truncated input (end of stream not reached)");
    }
  }
}
#endif  // SEDPACK_HAVE_ISAL

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
  GzipCodec(const DeflateFormat& format, int level) : format_(format), type_(format.type) {
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
    const std::string_view label = CodecLabel(type_);
#ifdef SEDPACK_HAVE_ISAL
    if (format_.whole_file && format_.level <= kMaxIsalLevel) {
      if (!isal_deflate_) isal_deflate_ = std::make_unique<isal_zstream>();
      const std::size_t bound = IsalBound(input.size());
      std::byte* dst = scratch_.Get(bound);
      std::size_t written = 0;
      SEDPACK_RETURN_NOT_OK(IsalCompressMember(isal_deflate_.get(), &isal_level_buf_, format_.level,
                                               input, dst, bound, &written, label));
      out->assign(dst, dst + written);
      scratch_.Trim();
      return Status::OK();
    }
#endif
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
    const std::size_t bound = deflateBound(&deflate_, input.size());
    std::byte* dst = scratch_.Get(bound);
    std::size_t written = 0;
    SEDPACK_RETURN_NOT_OK(RunDeflate(&deflate_, input, dst, bound, &written, label));
    out->assign(dst, dst + written);
    scratch_.Trim();
    return Status::OK();
  }

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
            if (!isal_inflate_) isal_inflate_ = std::make_unique<inflate_state>();
            return IsalInflateMember(isal_inflate_.get(), rest, w, type_, label);
#endif
          }
          if (inflateReset(&inflate_) != Z_OK) {
            return Status::Internal(label, " decompression: inflateReset failed");
          }
          return InflateStream(&inflate_, rest, w, type_, label);
        });
  }

 private:
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
  z_stream deflate_{};
  z_stream inflate_{};
  gz_header header_{};  // Must outlive each deflate call that writes the header.
  bool deflate_ready_ = false;
  bool inflate_ready_ = false;
  ScratchBuffer scratch_;
#ifdef SEDPACK_HAVE_ISAL
  // Large (~250 KiB with the level buffer): on the heap, made on first use.
  std::unique_ptr<isal_zstream> isal_deflate_;
  std::vector<std::uint8_t> isal_level_buf_;
  std::unique_ptr<inflate_state> isal_inflate_;
#endif
};

}  // namespace

std::unique_ptr<Codec> MakeGzipCodec(Compression type, int level) {
  return std::make_unique<GzipCodec>(type == Compression::kZlib ? kFbZlib : kFbGzip, level);
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

Status GzipDecompressTo(Compression type, std::span<const std::byte> input, std::uint64_t max_output,
                        ByteBuffer* out) {
#ifdef SEDPACK_HAVE_ISAL
  // Into pooled memory that is never zero-filled: for a 41 MB shard, zeroing
  // and faulting in a fresh std::vector costs about a tenth of the inflate.
  auto st = std::make_unique<inflate_state>();
  return DecodeGzipMembers(input, max_output, out, type,
                           [&](std::span<const std::byte>* rest, BasicCappedOutput<ByteBuffer>* w) {
                             return IsalInflateMember(st.get(), rest, w, type, CodecLabel(type));
                           });
#else
  return Status::Internal("GzipDecompressTo needs ISA-L");
#endif
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

namespace codecs_internal {

}  // namespace codecs_internal

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
  std::size_t written = 0;
  Status st = RunDeflate(&zs, input, out->data(), bound, &written, "DEFLATE");
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
