// SPDX-License-Identifier: Apache-2.0
// LZMA whole-file codec: .xz (preset 6, CRC64) as CPython's lzma.compress writes
// it; reading auto-detects .xz and legacy .lzma like lzma.decompress.
#include <lzma.h>

#include "codecs/codec_internal.h"

namespace sedpack::codecs_internal {
namespace {

constexpr Compression kType = Compression::kLzma;
// Decoder working memory (mostly the dictionary) is declared by the stream
// header, so an untrusted file could ask for GiBs. 96 MiB covers every xz
// preset up to 9e (dictionary 64 MiB); preset 6 needs about 9 MiB.
constexpr std::uint64_t kDecoderMemlimit = std::uint64_t{96} << 20;

std::string_view LzmaErrorName(lzma_ret ret) {
  switch (ret) {
    case LZMA_FORMAT_ERROR:
      return "not in .xz or .lzma format";
    case LZMA_OPTIONS_ERROR:
      return "unsupported options";
    case LZMA_DATA_ERROR:
      return "corrupt data";
    case LZMA_MEM_ERROR:
      return "out of memory";
    case LZMA_MEMLIMIT_ERROR:
      return "memory limit reached";
    case LZMA_BUF_ERROR:
      return "no progress possible";
    case LZMA_PROG_ERROR:
      return "programming error";
    default:
      return "liblzma error";
  }
}

class LzmaCodec final : public Codec {
 public:
  explicit LzmaCodec(int preset) : preset_(static_cast<std::uint32_t>(preset)) {}
  ~LzmaCodec() override {
    lzma_end(&enc_);
    lzma_end(&dec_);
  }

  Compression type() const override { return kType; }

  Status Compress(std::span<const std::byte> input, std::vector<std::byte>* out) override {
    // Re-initializing the same lzma_stream reuses its (large) match finder
    // allocations from the previous call.
    lzma_ret ret = lzma_easy_encoder(&enc_, preset_, LZMA_CHECK_CRC64);
    if (ret != LZMA_OK) {
      return Status::Internal("LZMA compression: encoder init failed (", LzmaErrorName(ret), ")");
    }
    const std::size_t bound = lzma_stream_buffer_bound(input.size());
    if (bound == 0) return Status::InvalidArgument("LZMA compression: input too large");
    std::byte* dst = scratch_.Get(bound);
    enc_.next_in = reinterpret_cast<const std::uint8_t*>(input.data());
    enc_.avail_in = input.size();
    enc_.next_out = reinterpret_cast<std::uint8_t*>(dst);
    enc_.avail_out = bound;
    do {
      ret = lzma_code(&enc_, LZMA_FINISH);
    } while (ret == LZMA_OK && enc_.avail_out != 0);
    if (ret != LZMA_STREAM_END) {
      return Status::Internal("LZMA compression failed (", LzmaErrorName(ret), ")");
    }
    out->assign(dst, dst + (bound - enc_.avail_out));
    scratch_.Trim();
    return Status::OK();
  }

  Status Decompress(std::span<const std::byte> input, std::uint64_t max_output,
                    std::vector<std::byte>* out) override {
    return DecodeConcatenatedStreams(
        kType, input, max_output, out,
        [this](std::span<const std::byte>* rest, CappedOutput* w, bool* data_error) {
          return DecodeStream(rest, w, data_error);
        });
  }

 private:
  Status DecodeStream(std::span<const std::byte>* rest, CappedOutput* w, bool* data_error) {
    *data_error = false;
    lzma_ret ret = lzma_auto_decoder(&dec_, kDecoderMemlimit, 0);
    if (ret != LZMA_OK) {
      return Status::Internal("LZMA decompression: decoder init failed (", LzmaErrorName(ret), ")");
    }
    for (;;) {
      if (w->avail() == 0 && !w->Grow()) return ExceededStatus(kType, w->max_output());
      const std::size_t avail = w->avail();
      dec_.next_in = reinterpret_cast<const std::uint8_t*>(rest->data());
      dec_.avail_in = rest->size();
      dec_.next_out = reinterpret_cast<std::uint8_t*>(w->next());
      dec_.avail_out = avail;
      ret = lzma_code(&dec_, LZMA_RUN);
      *rest = rest->subspan(rest->size() - dec_.avail_in);
      w->Advance(avail - dec_.avail_out);
      if (w->Exceeded()) return ExceededStatus(kType, w->max_output());
      if (ret == LZMA_STREAM_END) return Status::OK();
      if (ret == LZMA_MEMLIMIT_ERROR) {
        return Status::ResourceExhausted(
            "LZMA decompression: the stream needs ", lzma_memusage(&dec_),
            " bytes of decoder memory, more than the limit of ", kDecoderMemlimit);
      }
      if (ret == LZMA_MEM_ERROR) {
        return Status::ResourceExhausted("LZMA decompression: out of memory");
      }
      if (ret != LZMA_OK && ret != LZMA_BUF_ERROR) {
        *data_error = true;
        return Status::Corruption("LZMA decompression: ", LzmaErrorName(ret));
      }
      if (rest->empty() && dec_.avail_out != 0) return TruncatedStatus(kType);
    }
  }

  std::uint32_t preset_;
  lzma_stream enc_ = LZMA_STREAM_INIT;
  lzma_stream dec_ = LZMA_STREAM_INIT;
  ScratchBuffer scratch_;
};

}  // namespace

std::unique_ptr<Codec> MakeLzmaCodec(int preset) { return std::make_unique<LzmaCodec>(preset); }

}  // namespace sedpack::codecs_internal
