// SPDX-License-Identifier: Apache-2.0
// BZ2 whole-file codec: bz2.compress(data, 9) / bz2.decompress as in CPython.
#include <bzlib.h>

#include <algorithm>
#include <limits>

#include "codecs/codec_internal.h"

namespace sedpack::codecs_internal {
namespace {

constexpr Compression kType = Compression::kBz2;
constexpr int kBlockSize100k = 9;
constexpr int kWorkFactor = 0;  // libbzip2's default (30).
// bz_stream counts bytes in unsigned int; larger buffers go in slices.
constexpr std::size_t kMaxBzChunk = std::size_t{1} << 30;

char* InPtr(const std::byte* p) { return reinterpret_cast<char*>(const_cast<std::byte*>(p)); }

std::string_view BzErrorName(int ret) {
  switch (ret) {
    case BZ_DATA_ERROR:
      return "data integrity error";
    case BZ_DATA_ERROR_MAGIC:
      return "not bzip2 data (bad magic)";
    case BZ_MEM_ERROR:
      return "out of memory";
    case BZ_PARAM_ERROR:
      return "parameter error";
    case BZ_SEQUENCE_ERROR:
      return "sequence error";
    default:
      return "bzip2 error";
  }
}

// Owns a bz_stream set up for compression or decompression.
class BzStream {
 public:
  explicit BzStream(bool compress, int block_size_100k = kBlockSize100k)
      : compress_(compress), block_size_100k_(block_size_100k) {}
  ~BzStream() {
    if (!ready_) return;
    if (compress_) {
      BZ2_bzCompressEnd(&bs_);
    } else {
      BZ2_bzDecompressEnd(&bs_);
    }
  }
  BzStream(const BzStream&) = delete;
  BzStream& operator=(const BzStream&) = delete;

  int Init() {
    const int ret = compress_ ? BZ2_bzCompressInit(&bs_, block_size_100k_, 0, kWorkFactor)
                              : BZ2_bzDecompressInit(&bs_, 0, 0);
    ready_ = ret == BZ_OK;
    return ret;
  }
  bz_stream* get() { return &bs_; }

 private:
  bool compress_;
  int block_size_100k_;
  bool ready_ = false;
  bz_stream bs_{};
};

// Decode one bzip2 stream from `*rest` into `w`. `*data_error` tells a
// malformed stream apart from truncation or the output cap.
Status DecodeStream(std::span<const std::byte>* rest, CappedOutput* w, bool* data_error) {
  *data_error = false;
  BzStream stream(/*compress=*/false);
  if (const int ret = stream.Init(); ret != BZ_OK) {
    return Status::Internal("BZ2 decompression: init failed (", BzErrorName(ret), ")");
  }
  bz_stream* bs = stream.get();
  for (;;) {
    if (w->avail() == 0 && !w->Grow()) return ExceededStatus(kType, w->max_output());
    const auto in_chunk = static_cast<unsigned>(std::min(rest->size(), kMaxBzChunk));
    const auto out_chunk = static_cast<unsigned>(std::min(w->avail(), kMaxBzChunk));
    bs->next_in = InPtr(rest->data());
    bs->avail_in = in_chunk;
    bs->next_out = reinterpret_cast<char*>(w->next());
    bs->avail_out = out_chunk;
    const int ret = BZ2_bzDecompress(bs);
    *rest = rest->subspan(in_chunk - bs->avail_in);
    w->Advance(out_chunk - bs->avail_out);
    if (w->Exceeded()) return ExceededStatus(kType, w->max_output());
    if (ret == BZ_STREAM_END) return Status::OK();
    if (ret == BZ_MEM_ERROR) return Status::ResourceExhausted("BZ2 decompression: out of memory");
    if (ret != BZ_OK) {
      *data_error = true;
      return Status::Corruption("BZ2 decompression: corrupt data (", BzErrorName(ret), ")");
    }
    if (rest->empty() && bs->avail_out != 0) return TruncatedStatus(kType);
  }
}

class Bz2Codec final : public Codec {
 public:
  explicit Bz2Codec(int level) : level_(level) {}
  Compression type() const override { return kType; }

  Status Compress(std::span<const std::byte> input, std::vector<std::byte>* out) override {
    // libbzip2 cannot reset a compressor, so each call sets up a new one.
    BzStream stream(/*compress=*/true, level_);
    if (const int ret = stream.Init(); ret != BZ_OK) {
      return Status::Internal("BZ2 compression: init failed (", BzErrorName(ret), ")");
    }
    bz_stream* bs = stream.get();
    // Documented worst case: 1% larger plus 600 bytes.
    const std::size_t bound = input.size() + input.size() / 100 + 600;
    std::byte* dst = scratch_.Get(bound);
    const std::byte* in = input.data();
    std::size_t in_left = input.size();
    std::size_t out_pos = 0;
    for (;;) {
      if (out_pos == bound) return Status::Internal("BZ2 compression: output bound exceeded");
      const auto in_chunk = static_cast<unsigned>(std::min(in_left, kMaxBzChunk));
      const auto out_chunk = static_cast<unsigned>(std::min(bound - out_pos, kMaxBzChunk));
      bs->next_in = InPtr(in);
      bs->avail_in = in_chunk;
      bs->next_out = reinterpret_cast<char*>(dst + out_pos);
      bs->avail_out = out_chunk;
      const int action = in_chunk == in_left ? BZ_FINISH : BZ_RUN;
      const int ret = BZ2_bzCompress(bs, action);
      const std::size_t consumed = in_chunk - bs->avail_in;
      in += consumed;
      in_left -= consumed;
      out_pos += out_chunk - bs->avail_out;
      if (ret == BZ_STREAM_END) break;
      if (ret != BZ_RUN_OK && ret != BZ_FINISH_OK) {
        return Status::Internal("BZ2 compression failed (", BzErrorName(ret), ")");
      }
    }
    out->assign(dst, dst + out_pos);
    scratch_.Trim();
    return Status::OK();
  }

  Status Decompress(std::span<const std::byte> input, std::uint64_t max_output,
                    std::vector<std::byte>* out) override {
    return DecodeConcatenatedStreams(kType, input, max_output, out, DecodeStream);
  }

 private:
  ScratchBuffer scratch_;
 private:
  int level_;
};

}  // namespace

std::unique_ptr<Codec> MakeBz2Codec(int level) { return std::make_unique<Bz2Codec>(level); }

}  // namespace sedpack::codecs_internal
