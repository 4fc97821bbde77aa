// SPDX-License-Identifier: Apache-2.0
// Codec factory, the level ranges, and the identity codec used for compression "".
#include <zlib.h>
#include <zstd.h>

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

Result<CodecLevelRange> CodecLevels(Compression c) {
  switch (c) {
    case Compression::kNone:
      return CodecLevelRange{0, 0, 0, "no compression"};
    case Compression::kGzip:
    case Compression::kZlib:
      // Default 1: ISA-L level 1 writes ~20x faster than zlib -9 for a file
      // ~2% larger (docs/performance.md, "Compression"); 9 is the reference's zlib -9.
      return CodecLevelRange{1, 9, 1,
                             DeflateLibrary(1) == "ISA-L" ? "1-3 ISA-L (fast), 4-9 zlib (9 = the reference's)"
                                                          : "zlib levels (9 = the reference's)"};
    case Compression::kBz2:
      return CodecLevelRange{1, 9, 9, "bzip2 block size in 100 kB (9 = the reference's)"};
    case Compression::kLzma:
      return CodecLevelRange{0, 9, 6, "xz presets (6 = the reference's)"};
    case Compression::kLz4:
      return CodecLevelRange{0, 12, 0, "0-2 LZ4 fast (0 = the reference's), 3-12 LZ4HC"};
    case Compression::kZstd:
      return CodecLevelRange{ZSTD_minCLevel(), ZSTD_maxCLevel(), 3,
                             "zstd levels, negative = faster (3 = the reference's)"};
    case Compression::kZip:
      return CodecLevelRange{1, 9, 6, "zlib levels of the npz members (6 = numpy's)"};
  }
  return Status::InvalidArgument("unknown compression value ", static_cast<int>(c));
}

std::uint64_t DefaultBlockBytes(Compression c) {
  switch (c) {
    case Compression::kLz4:
      return 256u << 10;
    case Compression::kGzip:
    case Compression::kZlib:
      return 1u << 20;
    default:
      return 0;
  }
}

Status ValidateCodecLevel(Compression c, int level) {
  if (level == kDefaultCodecLevel) return Status::OK();
  SEDPACK_ASSIGN_OR_RETURN(const CodecLevelRange r, CodecLevels(c));
  if (level < r.min || level > r.max) {
    if (r.min == r.max) {
      return Status::InvalidArgument("compression ", codecs_internal::CodecLabel(c),
                                     " has no levels (only ", r.min, "), got ", level);
    }
    return Status::InvalidArgument("compression level ", level, " is out of range for ",
                                   codecs_internal::CodecLabel(c), ": valid levels are ", r.min, "..",
                                   r.max, " (default ", r.default_level, "; ", r.note, ")");
  }
  return Status::OK();
}

Result<int> ResolveCodecLevel(Compression c, int level) {
  SEDPACK_RETURN_NOT_OK(ValidateCodecLevel(c, level));
  if (level != kDefaultCodecLevel) return level;
  SEDPACK_ASSIGN_OR_RETURN(const CodecLevelRange r, CodecLevels(c));
  return r.default_level;
}

Result<std::unique_ptr<Codec>> MakeCodec(Compression c, const CodecOptions& options) {
  using namespace codecs_internal;  // NOLINT: the backend factories.
  if (options.threads < 1) {
    return Status::InvalidArgument("codec threads must be at least 1, got ", options.threads);
  }
  if (c == Compression::kZip) {
    return Status::InvalidArgument(
        "compression ZIP is not a whole-file codec (it applies to npz members only)");
  }
  SEDPACK_ASSIGN_OR_RETURN(const int level, ResolveCodecLevel(c, options.level));
  switch (c) {
    case Compression::kNone:
      return MakeIdentityCodec();
    case Compression::kGzip:
    case Compression::kZlib:
      return MakeGzipCodec(c, level, codecs_internal::ResolveBlockBytes(c, options.block_bytes));
    case Compression::kBz2:
      return MakeBz2Codec(level);
    case Compression::kLzma:
      return MakeLzmaCodec(level);
    case Compression::kLz4:
      return MakeLz4Codec(level, codecs_internal::ResolveBlockBytes(c, options.block_bytes));
    case Compression::kZstd: {
      CodecOptions resolved = options;
      resolved.level = level;
      return MakeZstdCodec(resolved);
    }
    case Compression::kZip:
      break;
  }
  return Status::InvalidArgument("unknown compression value ", static_cast<int>(c));
}

Result<std::unique_ptr<Codec>> MakeTfRecordCodec(Compression c, int level) {
  using namespace codecs_internal;  // NOLINT: the backend factories.
  switch (c) {
    case Compression::kNone:
      SEDPACK_RETURN_NOT_OK(ValidateCodecLevel(c, level));
      return MakeIdentityCodec();
    case Compression::kGzip:
    case Compression::kZlib:
      SEDPACK_RETURN_NOT_OK(ValidateCodecLevel(c, level));
      return MakeTfRecordGzipCodec(c, level == kDefaultCodecLevel ? Z_DEFAULT_COMPRESSION : level);
    default:
      return Status::InvalidArgument("compression \"", CompressionName(c),
                                     "\" is not a TFRecord compression (allowed: \"\", GZIP, ZLIB)");
  }
}

}  // namespace sedpack
