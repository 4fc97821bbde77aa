// SPDX-License-Identifier: Apache-2.0
// LZ4 whole-file codec: one LZ4 frame exactly as python-lz4's
// lz4.frame.compress(data) writes it (content size, 64 KiB blocks, level 0,
// no checksums); levels 3..12 use LZ4HC inside the same frame format
// (lz4.frame.compress(data, compression_level=N)). Reading decodes the first
// frame only, like lz4.frame.decompress.
#include <lz4frame.h>

#include <cstring>

#include "codecs/codec_internal.h"

namespace sedpack::codecs_internal {
namespace {

constexpr Compression kType = Compression::kLz4;

// LZ4F may not accept a null source pointer even for zero bytes.
const void* NonNull(std::span<const std::byte> s) {
  static const std::byte kEmpty{};
  return s.empty() ? &kEmpty : s.data();
}

// Compress `input` into `scratch` as one frame; the frame is the first *size bytes.
Status CompressFrame(std::span<const std::byte> input, int level, ScratchBuffer* scratch,
                     std::size_t* size) {
  LZ4F_preferences_t prefs;
  std::memset(&prefs, 0, sizeof(prefs));
  prefs.frameInfo.blockSizeID = LZ4F_max64KB;
  // python-lz4 defaults to linked blocks; LZ4F_compressFrame switches
  // single-block frames to independent blocks itself, as the reference does.
  prefs.frameInfo.blockMode = LZ4F_blockLinked;
  prefs.frameInfo.contentChecksumFlag = LZ4F_noContentChecksum;
  prefs.frameInfo.blockChecksumFlag = LZ4F_noBlockChecksum;
  prefs.frameInfo.contentSize = input.size();  // 0 (empty input) writes no size, like python-lz4.
  prefs.compressionLevel = level;
  const std::size_t bound = LZ4F_compressFrameBound(input.size(), &prefs);
  std::byte* dst = scratch->Get(bound);
  const std::size_t r = LZ4F_compressFrame(dst, bound, NonNull(input), input.size(), &prefs);
  if (LZ4F_isError(r)) {
    return Status::Internal("LZ4 compression failed (", LZ4F_getErrorName(r), ")");
  }
  *size = r;
  return Status::OK();
}

// Create `*dctx` on first use, else reset it (a previous call may have stopped mid-frame).
Status PrepareDctx(LZ4F_dctx** dctx) {
  if (*dctx == nullptr) {
    const std::size_t r = LZ4F_createDecompressionContext(dctx, LZ4F_VERSION);
    if (LZ4F_isError(r)) {
      *dctx = nullptr;
      return Status::Internal("LZ4 decompression: cannot create context (", LZ4F_getErrorName(r),
                              ")");
    }
  } else {
    LZ4F_resetDecompressionContext(*dctx);
  }
  return Status::OK();
}

// Decode the first frame of `input` into `*out` (std::vector or ByteBuffer).
template <class Vec>
Status DecompressFrame(LZ4F_dctx* dctx, std::span<const std::byte> input, std::uint64_t max_output,
                       Vec* out) {
  if (input.empty()) return EmptyInputStatus(kType);
  // Read the frame header first: a declared content size lets us check the
  // cap before allocating and then allocate exactly once.
  LZ4F_frameInfo_t info;
  std::memset(&info, 0, sizeof(info));
  std::size_t header_size = input.size();
  const std::size_t hr = LZ4F_getFrameInfo(dctx, &info, input.data(), &header_size);
  if (LZ4F_isError(hr)) {
    return Status::Corruption("LZ4 decompression: invalid frame header (", LZ4F_getErrorName(hr),
                              ")");
  }
  std::span<const std::byte> rest = input.subspan(header_size);
  const bool known_size = info.contentSize != 0;
  if (known_size && info.contentSize > max_output) {
    return Status::ResourceExhausted("LZ4 decompression: frame declares ", info.contentSize,
                                     " bytes, more than the limit of ", max_output, " bytes");
  }
  // With a known size the buffer is allocated once (+1 spare byte) and never
  // moves, so LZ4F can use it as its history window (stableDst).
  BasicCappedOutput<Vec> w(out, known_size ? info.contentSize : max_output,
                           known_size ? info.contentSize + 1 : DefaultSizeHint(input.size()));
  auto overflow = [&]() {
    return known_size ? Status::Corruption(
                            "LZ4 decompression: frame decodes to more than its "
                            "declared content size of ",
                            info.contentSize, " bytes")
                      : ExceededStatus(kType, max_output);
  };
  LZ4F_decompressOptions_t opts;
  std::memset(&opts, 0, sizeof(opts));
  opts.stableDst = known_size ? 1 : 0;
  for (;;) {
    if (w.avail() == 0 && !w.Grow()) return overflow();
    const std::size_t avail = w.avail();
    std::size_t dst_size = avail;
    std::size_t src_size = rest.size();
    const std::size_t r =
        LZ4F_decompress(dctx, w.next(), &dst_size, NonNull(rest), &src_size, &opts);
    rest = rest.subspan(src_size);
    w.Advance(dst_size);
    if (LZ4F_isError(r)) {
      return Status::Corruption("LZ4 decompression: corrupt data (", LZ4F_getErrorName(r), ")");
    }
    if (w.Exceeded()) return overflow();
    if (r == 0) break;  // End of the first frame; later frames are ignored.
    if (rest.empty() && dst_size < avail) return TruncatedStatus(kType);
  }
  if (known_size && w.used() != info.contentSize) {
    return Status::Corruption("LZ4 decompression: frame decodes to ", w.used(),
                              " bytes but declares ", info.contentSize);
  }
  w.Finish();
  return Status::OK();
}

class Lz4Codec final : public Codec {
 public:
  explicit Lz4Codec(int level) : level_(level) {}
  ~Lz4Codec() override {
    if (dctx_ != nullptr) LZ4F_freeDecompressionContext(dctx_);
  }

  Compression type() const override { return kType; }

  Status Compress(std::span<const std::byte> input, std::vector<std::byte>* out) override {
    std::size_t size = 0;
    SEDPACK_RETURN_NOT_OK(CompressFrame(input, level_, &scratch_, &size));
    const std::byte* dst = scratch_.Get(size);
    out->assign(dst, dst + size);
    scratch_.Trim();
    return Status::OK();
  }

  Status Decompress(std::span<const std::byte> input, std::uint64_t max_output,
                    std::vector<std::byte>* out) override {
    if (input.empty()) return EmptyInputStatus(kType);
    SEDPACK_RETURN_NOT_OK(PrepareDctx(&dctx_));
    return DecompressFrame(dctx_, input, max_output, out);
  }

 private:
  int level_;
  LZ4F_dctx* dctx_ = nullptr;
  ScratchBuffer scratch_;
};

LZ4F_dctx* CreateDctx() {
  LZ4F_dctx* dctx = nullptr;
  if (LZ4F_isError(LZ4F_createDecompressionContext(&dctx, LZ4F_VERSION))) return nullptr;
  return dctx;
}

// Never destroyed (contexts may be returned during static destruction).
auto& DecompressContexts() {
  static auto* const pool = new ContextPool<LZ4F_dctx, CreateDctx, LZ4F_freeDecompressionContext>;
  return *pool;
}

}  // namespace

std::unique_ptr<Codec> MakeLz4Codec(int level) { return std::make_unique<Lz4Codec>(level); }

Status Lz4CompressToBuffer(std::span<const std::byte> input, int level, ByteBuffer* out) {
  ScratchBuffer scratch;  // Pooled memory, handed over to *out without a copy.
  std::size_t size = 0;
  SEDPACK_RETURN_NOT_OK(CompressFrame(input, level, &scratch, &size));
  *out = ByteBuffer(scratch.Release(), size);
  return Status::OK();
}

Status Lz4DecompressTo(std::span<const std::byte> input, std::uint64_t max_output,
                       ByteBuffer* out) {
  if (input.empty()) return EmptyInputStatus(kType);
  LZ4F_dctx* dctx = DecompressContexts().Get();  // nullptr: PrepareDctx reports it.
  Status st = PrepareDctx(&dctx);
  if (st.ok()) st = DecompressFrame(dctx, input, max_output, out);
  DecompressContexts().Put(dctx);
  return st;
}

}  // namespace sedpack::codecs_internal
