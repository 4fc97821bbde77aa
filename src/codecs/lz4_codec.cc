// SPDX-License-Identifier: Apache-2.0
// LZ4 whole-file codec: one LZ4 frame exactly as python-lz4's
// lz4.frame.compress(data) writes it (content size, 64 KiB blocks, level 0,
// no checksums); levels 3..12 use LZ4HC inside the same frame format
// (lz4.frame.compress(data, compression_level=N)). Reading decodes the first
// frame only, like lz4.frame.decompress.
//
// With decode points (CodecOptions::block_bytes) the frame has independent
// blocks of the size the option rounds to (lz4.frame.compress(data,
// block_size=..., block_linked=False)): every block start is a point, and a
// range is decoded from its blocks alone with LZ4_decompress_safe.
#include <lz4.h>
#include <lz4frame.h>
#include <xxhash.h>

#include <algorithm>
#include <cstring>

#include "codecs/codec_internal.h"
#include "core/endian_internal.h"

namespace sedpack::codecs_internal {
namespace {

constexpr Compression kType = Compression::kLz4;

// LZ4F may not accept a null source pointer even for zero bytes.
const void* NonNull(std::span<const std::byte> s) {
  static const std::byte kEmpty{};
  return s.empty() ? &kEmpty : s.data();
}

using core_internal::LoadLe32;
using core_internal::LoadLe64;

constexpr std::uint32_t kFrameMagic = 0x184D2204;
constexpr std::size_t kMaxFrameHeader = 19;
constexpr std::uint32_t kUncompressedBit = 0x80000000u;

// What the decode points depend on in a frame header.
struct FrameHeader {
  std::size_t size = 0;       // Header bytes: the first block starts here.
  std::size_t max_block = 0;  // Decoded (and stored) bytes a block holds at most.
  bool independent = false;
  bool block_checksum = false;
  bool has_content_size = false;
  std::uint64_t content_size = 0;
};

// Parse the frame header at the start of `b` (the file's first bytes).
Result<FrameHeader> ParseFrameHeader(std::span<const std::byte> b) {
  if (b.size() < 7 || LoadLe32(b.data()) != kFrameMagic) {
    return Status::Corruption("LZ4 shard: not an LZ4 frame");
  }
  const auto flg = static_cast<unsigned>(b[4]);
  const auto bd = static_cast<unsigned>(b[5]);
  if ((flg >> 6) != 1 || (flg & 0x02) != 0 || (bd & 0x8f) != 0 || ((bd >> 4) & 7) < 4) {
    return Status::Corruption("LZ4 shard: invalid frame descriptor");
  }
  FrameHeader h;
  h.independent = (flg & 0x20) != 0;
  h.block_checksum = (flg & 0x10) != 0;
  h.has_content_size = (flg & 0x08) != 0;
  h.max_block = std::size_t{1} << (8 + 2 * ((bd >> 4) & 7));
  h.size = 7 + (h.has_content_size ? 8 : 0) + ((flg & 0x01) != 0 ? 4 : 0);
  if (b.size() < h.size) return Status::Corruption("LZ4 shard: truncated frame header");
  if (h.has_content_size) h.content_size = LoadLe64(b.data() + 6);
  const auto check = static_cast<std::byte>((XXH32(b.data() + 4, h.size - 5, 0) >> 8) & 0xff);
  if (check != b[h.size - 1]) return Status::Corruption("LZ4 shard: frame header checksum mismatch");
  return h;
}

// The frame block size for decode points every `block_bytes` decoded bytes.
LZ4F_blockSizeID_t BlockSizeId(std::uint64_t block_bytes) {
  if (block_bytes >= (4u << 20)) return LZ4F_max4MB;
  if (block_bytes >= (1u << 20)) return LZ4F_max1MB;
  if (block_bytes >= (256u << 10)) return LZ4F_max256KB;
  return LZ4F_max64KB;
}

// The block starts of a frame LZ4F_compressFrame just wrote: it cuts the input
// into full blocks (the last one may be short), so block i starts decoded at
// i * max_block.
std::vector<DecodePoint> WrittenBlockStarts(std::span<const std::byte> frame) {
  std::vector<DecodePoint> points;
  const Result<FrameHeader> h = ParseFrameHeader(frame.first(std::min(frame.size(), kMaxFrameHeader)));
  if (!h.ok()) return points;
  std::uint64_t c = h->size;
  for (std::uint64_t d = 0; c + 4 <= frame.size(); d += h->max_block) {
    const std::uint32_t v = LoadLe32(frame.data() + c);
    if (v == 0) break;
    points.push_back({c, d});
    c += 4 + (v & ~kUncompressedBit) + (h->block_checksum ? 4 : 0);
  }
  return points;
}

// Compress `input` into `scratch` as one frame; the frame is the first *size
// bytes. With block_bytes > 0 its blocks are independent and `*points` (if
// given) gets their starts.
Status CompressFrame(std::span<const std::byte> input, int level, std::uint64_t block_bytes,
                     ScratchBuffer* scratch, std::size_t* size, std::vector<DecodePoint>* points = nullptr) {
  if (points != nullptr) points->clear();
  LZ4F_preferences_t prefs;
  std::memset(&prefs, 0, sizeof(prefs));
  prefs.frameInfo.blockSizeID = block_bytes > 0 ? BlockSizeId(block_bytes) : LZ4F_max64KB;
  // python-lz4 defaults to linked blocks; LZ4F_compressFrame switches
  // single-block frames to independent blocks itself, as the reference does.
  prefs.frameInfo.blockMode = block_bytes > 0 ? LZ4F_blockIndependent : LZ4F_blockLinked;
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
  if (points != nullptr && block_bytes > 0 && !input.empty()) {
    *points = WrittenBlockStarts(std::span<const std::byte>(dst, r));
  }
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
  Lz4Codec(int level, std::uint64_t block_bytes) : level_(level), block_bytes_(block_bytes) {}
  ~Lz4Codec() override {
    if (dctx_ != nullptr) LZ4F_freeDecompressionContext(dctx_);
  }

  Compression type() const override { return kType; }

  Status Compress(std::span<const std::byte> input, std::vector<std::byte>* out) override {
    std::size_t size = 0;
    SEDPACK_RETURN_NOT_OK(CompressFrame(input, level_, block_bytes_, &scratch_, &size));
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
  std::uint64_t block_bytes_;
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

std::unique_ptr<Codec> MakeLz4Codec(int level, std::uint64_t block_bytes) {
  return std::make_unique<Lz4Codec>(level, block_bytes);
}

Status Lz4CompressToBuffer(std::span<const std::byte> input, int level, std::uint64_t block_bytes,
                           ByteBuffer* out, std::vector<DecodePoint>* points) {
  ScratchBuffer scratch;  // Pooled memory, handed over to *out without a copy.
  std::size_t size = 0;
  SEDPACK_RETURN_NOT_OK(CompressFrame(input, level, block_bytes, &scratch, &size, points));
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

namespace {

// One block of a frame with independent blocks, read at stored offset `c`.
struct Block {
  std::uint64_t stored_size = 0;  // Header, data and checksum.
  std::span<const std::byte> data;
  bool uncompressed = false;
  bool end_mark = false;
};

// Read the block at `c` (the bytes up to `limit` may be read with it).
Result<Block> ReadBlock(StoredWindow* window, const FrameHeader& h, std::uint64_t c, std::uint64_t limit) {
  const std::uint64_t cks = h.block_checksum ? 4 : 0;
  const std::uint64_t ahead = std::min<std::uint64_t>(limit > c ? limit - c : 4, 4 + h.max_block + cks);
  SEDPACK_ASSIGN_OR_RETURN(const std::span<const std::byte> head, window->Get(c, 4, ahead));
  const std::uint32_t v = LoadLe32(head.data());
  Block b;
  if (v == 0) {
    b.end_mark = true;
    return b;
  }
  const std::uint64_t n = v & ~kUncompressedBit;
  if (n > h.max_block) {
    return Status::Corruption("LZ4 shard: block at stored offset ", c, " declares ", n,
                              " bytes, more than the frame's block size of ", h.max_block);
  }
  SEDPACK_ASSIGN_OR_RETURN(const std::span<const std::byte> body, window->Get(c + 4, n + cks, ahead - std::min<std::uint64_t>(ahead, 4)));
  b.data = body.first(static_cast<std::size_t>(n));
  b.uncompressed = (v & kUncompressedBit) != 0;
  b.stored_size = 4 + n + cks;
  if (cks != 0 && XXH32(b.data.data(), b.data.size(), 0) != LoadLe32(body.data() + n)) {
    return Status::Corruption("LZ4 shard: block checksum mismatch at stored offset ", c);
  }
  return b;
}

// The decoded bytes of `b`: its data, or decoded into `scratch` (max_block
// bytes, allocated when a compressed block first needs it).
Result<std::span<const std::byte>> DecodeBlock(const Block& b, const FrameHeader& h, ScratchBuffer* scratch,
                                               std::uint64_t c) {
  if (b.uncompressed) return b.data;
  std::byte* dst = scratch->Get(h.max_block);
  const int r = LZ4_decompress_safe(reinterpret_cast<const char*>(b.data.data()),
                                    reinterpret_cast<char*>(dst), static_cast<int>(b.data.size()),
                                    static_cast<int>(h.max_block));
  if (r < 0) {
    return Status::Corruption("LZ4 shard: corrupt block at stored offset ", c,
                              " (not independent of the blocks before it, or damaged)");
  }
  return std::span<const std::byte>(dst, static_cast<std::size_t>(r));
}

Result<FrameHeader> ReadFrameHeader(const ReadStoredAt& read_at, std::uint64_t file_size) {
  std::byte head[kMaxFrameHeader];
  const auto n = static_cast<std::size_t>(std::min<std::uint64_t>(file_size, kMaxFrameHeader));
  SEDPACK_RETURN_NOT_OK(read_at(0, std::span<std::byte>(head, n)));
  SEDPACK_ASSIGN_OR_RETURN(FrameHeader h, ParseFrameHeader(std::span<const std::byte>(head, n)));
  if (!h.independent) {
    return Status::Corruption("LZ4 shard: the frame's blocks are linked, it has no decode points");
  }
  return h;
}

}  // namespace

Status Lz4DecodeRange(const RangeRequest& r, const ReadStoredAt& read_at, std::byte* dst) {
  SEDPACK_ASSIGN_OR_RETURN(const FrameHeader h, ReadFrameHeader(read_at, r.file_size));
  if (r.points.front().compressed_offset < h.size) {
    return Status::Corruption("LZ4 shard: a decode point lies inside the frame header");
  }
  RangeScratch& scratch = RangeScratch::ForThisThread();
  StoredWindow window(read_at, r.file_size, "LZ4", &scratch.window);
  const std::uint64_t end = r.offset + r.size;
  std::uint64_t c = r.points[r.first].compressed_offset;
  std::uint64_t d = r.points[r.first].decoded_offset;
  std::size_t next = r.first + 1;  // The next point the blocks must meet.
  while (d < end) {
    if (next < r.points.size() && c >= r.points[next].compressed_offset) {
      if (c != r.points[next].compressed_offset || d != r.points[next].decoded_offset) {
        return Status::Corruption("LZ4 shard: the blocks do not meet decode point ", next,
                                  " (stored ", r.points[next].compressed_offset, ", decoded ",
                                  r.points[next].decoded_offset, ")");
      }
      ++next;
    }
    const std::uint64_t limit = next < r.points.size() ? r.points[next].compressed_offset : r.file_size;
    SEDPACK_ASSIGN_OR_RETURN(const Block b, ReadBlock(&window, h, c, limit));
    if (b.end_mark) {
      return Status::Corruption("LZ4 shard: the frame ends at decoded offset ", d, ", before ", end);
    }
    SEDPACK_ASSIGN_OR_RETURN(const std::span<const std::byte> bytes, DecodeBlock(b, h, &scratch.block, c));
    if (bytes.size() > r.decoded_size - d) {
      return Status::Corruption("LZ4 shard: the blocks decode to more than ", r.decoded_size, " bytes");
    }
    const std::uint64_t lo = std::max(d, r.offset);
    const std::uint64_t hi = std::min(d + bytes.size(), end);
    if (lo < hi) std::memcpy(dst + (lo - r.offset), bytes.data() + (lo - d), static_cast<std::size_t>(hi - lo));
    d += bytes.size();
    c += b.stored_size;
  }
  return Status::OK();
}

Result<std::vector<DecodePoint>> Lz4FindDecodePoints(std::span<const std::byte> stored) {
  SEDPACK_ASSIGN_OR_RETURN(const FrameHeader h,
                           ParseFrameHeader(stored.first(std::min(stored.size(), kMaxFrameHeader))));
  std::vector<DecodePoint> points;
  if (!h.independent) return points;
  // A block's decoded size is not in its header: each one is decoded (the
  // caller reads the whole file anyway).
  ScratchBuffer scratch;
  ByteBuffer window_buf;
  const ReadStoredAt read_at = [stored](std::uint64_t offset, std::span<std::byte> out) {
    std::memcpy(out.data(), stored.data() + offset, out.size());
    return Status::OK();
  };
  StoredWindow window(read_at, stored.size(), "LZ4", &window_buf);
  std::uint64_t c = h.size;
  std::uint64_t d = 0;
  for (;;) {
    SEDPACK_ASSIGN_OR_RETURN(const Block b, ReadBlock(&window, h, c, stored.size()));
    if (b.end_mark) break;
    SEDPACK_ASSIGN_OR_RETURN(const std::span<const std::byte> bytes, DecodeBlock(b, h, &scratch, c));
    if (!bytes.empty()) points.push_back({c, d});
    d += bytes.size();
    c += b.stored_size;
  }
  if (h.has_content_size && d != h.content_size) {
    return Status::Corruption("LZ4 shard: the blocks decode to ", d, " bytes but the frame declares ",
                              h.content_size);
  }
  return points;
}

}  // namespace sedpack::codecs_internal
