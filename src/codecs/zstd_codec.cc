// SPDX-License-Identifier: Apache-2.0
// ZSTD whole-file codec: one frame, level 3, content size in the header, no
// checksum, as zstandard.compress(data) writes it (other levels: the same
// format). Large inputs may be compressed by several workers
// (ZSTD_c_nbWorkers): still one frame with its content size, which every zstd
// reader decodes. Reading decodes the first frame only, like zstandard.decompress.
#include <zstd.h>
#include <zstd_errors.h>

#include "codecs/codec_internal.h"

namespace sedpack::codecs_internal {
namespace {

constexpr Compression kType = Compression::kZstd;
constexpr int kMinWindowLogMax = 23;
constexpr int kMaxWindowLogMax = 27;  // ZSTD_WINDOWLOG_LIMIT_DEFAULT.

const void* NonNull(std::span<const std::byte> s) {
  static const std::byte kEmpty{};
  return s.empty() ? &kEmpty : s.data();
}

// One-shot compression into `scratch`; the frame is the first *size bytes.
Status CompressFrame(ZSTD_CCtx** cctx, std::span<const std::byte> input, const CodecOptions& o,
                     ScratchBuffer* scratch, std::size_t* size) {
  if (*cctx == nullptr && (*cctx = ZSTD_createCCtx()) == nullptr) {
    return Status::ResourceExhausted("ZSTD compression: cannot create context");
  }
  const std::size_t bound = ZSTD_compressBound(input.size());
  if (ZSTD_isError(bound)) return Status::InvalidArgument("ZSTD compression: input too large");
  std::byte* dst = scratch->Get(bound);
  // One-shot with a known size: one frame, content size written (the
  // default contentSizeFlag), no checksum (the default). Pooled contexts keep
  // their parameters, so every call sets all it uses.
  ZSTD_CCtx_reset(*cctx, ZSTD_reset_session_and_parameters);
  std::size_t r = ZSTD_CCtx_setParameter(*cctx, ZSTD_c_compressionLevel, o.level);
  if (ZSTD_isError(r)) {
    return Status::InvalidArgument("ZSTD compression: level ", o.level, " (", ZSTD_getErrorName(r), ")");
  }
  if (o.threads > 1 && input.size() >= kZstdThreadedMinBytes) {
    // Fails (and is skipped) where libzstd was built without threads.
    ZSTD_CCtx_setParameter(*cctx, ZSTD_c_nbWorkers, o.threads);
  }
  r = ZSTD_compress2(*cctx, dst, bound, NonNull(input), input.size());
  if (ZSTD_isError(r)) {
    return Status::Internal("ZSTD compression failed (", ZSTD_getErrorName(r), ")");
  }
  *size = r;
  return Status::OK();
}

// The reference refuses frames without a content size; we accept them but
// stream with the output cap instead of trusting any size.
template <class Vec>
Status DecompressStreaming(ZSTD_DCtx* dctx, std::span<const std::byte> input,
                           std::uint64_t max_output, Vec* out) {
  ZSTD_DCtx_reset(dctx, ZSTD_reset_session_only);
  // Streaming allocates a window buffer of the size the frame header asks
  // for (up to 2^27 by default). Allow 2^23 (levels up to 19 stay below it)
  // or the next power of two above the cap, whichever is larger.
  int window_log = kMinWindowLogMax;
  while (window_log < kMaxWindowLogMax && (std::uint64_t{1} << window_log) < max_output) {
    ++window_log;
  }
  ZSTD_DCtx_setParameter(dctx, ZSTD_d_windowLogMax, window_log);
  BasicCappedOutput<Vec> w(out, max_output, DefaultSizeHint(input.size()));
  ZSTD_inBuffer in{input.data(), input.size(), 0};
  for (;;) {
    if (w.avail() == 0 && !w.Grow()) return ExceededStatus(kType, max_output);
    ZSTD_outBuffer o{w.next(), w.avail(), 0};
    const std::size_t r = ZSTD_decompressStream(dctx, &o, &in);
    w.Advance(o.pos);
    if (ZSTD_isError(r)) {
      if (ZSTD_getErrorCode(r) == ZSTD_error_frameParameter_windowTooLarge) {
        return Status::ResourceExhausted("ZSTD decompression: frame window exceeds 2^",
                                         window_log, " bytes");
      }
      return Status::Corruption("ZSTD decompression: corrupt data (", ZSTD_getErrorName(r), ")");
    }
    if (w.Exceeded()) return ExceededStatus(kType, max_output);
    if (r == 0) break;  // End of the first frame; later frames are ignored.
    if (in.pos == in.size && o.pos < o.size) return TruncatedStatus(kType);
  }
  w.Finish();
  return Status::OK();
}

// Decode the first frame of `input` into `*out` (std::vector or ByteBuffer).
template <class Vec>
Status DecompressFrame(ZSTD_DCtx** dctx, std::span<const std::byte> input,
                       std::uint64_t max_output, Vec* out) {
  if (input.empty()) return EmptyInputStatus(kType);
  if (*dctx == nullptr && (*dctx = ZSTD_createDCtx()) == nullptr) {
    return Status::ResourceExhausted("ZSTD decompression: cannot create context");
  }
  const unsigned long long content = ZSTD_getFrameContentSize(input.data(), input.size());
  if (content == ZSTD_CONTENTSIZE_ERROR) {
    return Status::Corruption("ZSTD decompression: not a zstd frame or truncated frame header");
  }
  if (content == ZSTD_CONTENTSIZE_UNKNOWN) return DecompressStreaming(*dctx, input, max_output, out);
  if (content > max_output) {
    return Status::ResourceExhausted("ZSTD decompression: frame declares ", content,
                                     " bytes, more than the limit of ", max_output, " bytes");
  }
  // Only the first frame is decoded (ZSTD_decompressDCtx would go on to the
  // next one); this also detects a truncated frame before any allocation.
  const std::size_t frame_size = ZSTD_findFrameCompressedSize(input.data(), input.size());
  if (ZSTD_isError(frame_size)) {
    return Status::Corruption("ZSTD decompression: ", ZSTD_getErrorName(frame_size));
  }
  out->resize(static_cast<std::size_t>(content));
  const std::size_t r =
      ZSTD_decompressDCtx(*dctx, out->data(), out->size(), input.data(), frame_size);
  if (ZSTD_isError(r)) {
    out->clear();
    return Status::Corruption("ZSTD decompression: corrupt data (", ZSTD_getErrorName(r), ")");
  }
  if (r != content) {
    out->clear();
    return Status::Corruption("ZSTD decompression: frame decodes to ", r, " bytes but declares ",
                              content);
  }
  return Status::OK();
}

class ZstdCodec final : public Codec {
 public:
  explicit ZstdCodec(const CodecOptions& options) : options_(options) {}
  ~ZstdCodec() override {
    ZSTD_freeCCtx(cctx_);
    ZSTD_freeDCtx(dctx_);
  }

  Compression type() const override { return kType; }

  Status Compress(std::span<const std::byte> input, std::vector<std::byte>* out) override {
    std::size_t size = 0;
    SEDPACK_RETURN_NOT_OK(CompressFrame(&cctx_, input, options_, &scratch_, &size));
    const std::byte* dst = scratch_.Get(size);
    out->assign(dst, dst + size);
    scratch_.Trim();
    return Status::OK();
  }

  Status Decompress(std::span<const std::byte> input, std::uint64_t max_output,
                    std::vector<std::byte>* out) override {
    return DecompressFrame(&dctx_, input, max_output, out);
  }

 private:
  CodecOptions options_;
  ZSTD_CCtx* cctx_ = nullptr;
  ZSTD_DCtx* dctx_ = nullptr;
  ScratchBuffer scratch_;
};

// Contexts for CompressToBuffer / DecompressTo, shared process-wide: a fresh
// ZSTD_CCtx allocates (and faults in) megabytes of tables on first use.
// Never destroyed (contexts may be returned during static destruction).
auto& CompressContexts() {
  static auto* const pool = new ContextPool<ZSTD_CCtx, ZSTD_createCCtx, ZSTD_freeCCtx>;
  return *pool;
}
auto& DecompressContexts() {
  static auto* const pool = new ContextPool<ZSTD_DCtx, ZSTD_createDCtx, ZSTD_freeDCtx>;
  return *pool;
}

}  // namespace

std::unique_ptr<Codec> MakeZstdCodec(const CodecOptions& options) {
  return std::make_unique<ZstdCodec>(options);
}

Status ZstdCompressToBuffer(std::span<const std::byte> input, const CodecOptions& options,
                            ByteBuffer* out) {
  ZSTD_CCtx* cctx = CompressContexts().Get();
  ScratchBuffer scratch;  // Pooled memory, handed over to *out without a copy.
  std::size_t size = 0;
  const Status st = CompressFrame(&cctx, input, options, &scratch, &size);
  CompressContexts().Put(cctx);
  SEDPACK_RETURN_NOT_OK(st);
  *out = ByteBuffer(scratch.Release(), size);
  return Status::OK();
}

Status ZstdDecompressTo(std::span<const std::byte> input, std::uint64_t max_output,
                        ByteBuffer* out) {
  ZSTD_DCtx* dctx = input.empty() ? nullptr : DecompressContexts().Get();
  const Status st = DecompressFrame(&dctx, input, max_output, out);
  DecompressContexts().Put(dctx);
  return st;
}

}  // namespace sedpack::codecs_internal
