// SPDX-License-Identifier: Apache-2.0
// Codec factory and the identity codec used for compression "".
#include <memory>

#include "codecs/codec_internal.h"
#include "sedpack/codecs/compress.h"

namespace sedpack {
namespace codecs_internal {
namespace {

class IdentityCodec final : public Codec {
 public:
  Compression type() const override { return Compression::kNone; }

  Status Compress(std::span<const std::byte> input, std::vector<std::byte>* out) override {
    out->assign(input.begin(), input.end());
    return Status::OK();
  }

  Status Decompress(std::span<const std::byte> input, std::uint64_t max_output,
                    std::vector<std::byte>* out) override {
    if (input.size() > max_output) return ExceededStatus(Compression::kNone, max_output);
    out->assign(input.begin(), input.end());
    return Status::OK();
  }
};

}  // namespace

std::unique_ptr<Codec> MakeIdentityCodec() { return std::make_unique<IdentityCodec>(); }

}  // namespace codecs_internal

Result<std::unique_ptr<Codec>> MakeCodec(Compression c) {
  using namespace codecs_internal;  // NOLINT: the backend factories.
  switch (c) {
    case Compression::kNone:
      return MakeIdentityCodec();
    case Compression::kGzip:
    case Compression::kZlib:
      return MakeGzipCodec(c);
    case Compression::kBz2:
      return MakeBz2Codec();
    case Compression::kLzma:
      return MakeLzmaCodec();
    case Compression::kLz4:
      return MakeLz4Codec();
    case Compression::kZstd:
      return MakeZstdCodec();
    case Compression::kZip:
      return Status::InvalidArgument(
          "compression ZIP is not a whole-file codec (it applies to npz members only)");
  }
  return Status::InvalidArgument("unknown compression value ", static_cast<int>(c));
}

Result<std::unique_ptr<Codec>> MakeTfRecordCodec(Compression c) {
  using namespace codecs_internal;  // NOLINT: the backend factories.
  switch (c) {
    case Compression::kNone:
      return MakeIdentityCodec();
    case Compression::kGzip:
    case Compression::kZlib:
      return MakeTfRecordGzipCodec(c);
    default:
      return Status::InvalidArgument("compression \"", CompressionName(c),
                                     "\" is not a TFRecord compression (allowed: \"\", GZIP, ZLIB)");
  }
}

}  // namespace sedpack
