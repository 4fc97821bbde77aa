// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: every whole-file decompressor behind its size limit
// (first byte picks the codec), plus raw inflate with a claimed size, plus
// (bit 0x40 of the first byte) the range decoder over fuzzed decode points.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "codecs/compress_internal.h"
#include "codecs/decode_points_internal.h"
#include "sedpack/codecs/compress.h"

namespace {

std::uint32_t Le32(const std::uint8_t* p) {
  return std::uint32_t{p[0]} | (std::uint32_t{p[1]} << 8) | (std::uint32_t{p[2]} << 16) | (std::uint32_t{p[3]} << 24);
}

// Header (17 bytes): point 0's stored offset (1), point 1 (stored, decoded:
// 4 + 4), the decoded size (4), the range (offset 2, size 2); then the file.
// LZ4 files are also tried with the points FindDecodePoints finds.
void FuzzRange(sedpack::Compression c, const std::uint8_t* data, std::size_t size) {
  namespace ci = sedpack::codecs_internal;
  if (size < 17) return;
  const std::span<const std::byte> file(reinterpret_cast<const std::byte*>(data + 17), size - 17);
  const ci::ReadStoredAt read_at = [file](std::uint64_t offset, std::span<std::byte> out) {
    if (offset > file.size() || out.size() > file.size() - offset) return sedpack::Status::IOError("past the end");
    if (!out.empty()) std::memcpy(out.data(), file.data() + offset, out.size());
    return sedpack::Status::OK();
  };
  const std::uint64_t decoded = Le32(data + 9) % (16u << 20);
  const std::uint64_t offset = data[13] | (data[14] << 8);
  const std::uint64_t n = (data[15] | (data[16] << 8)) * 16u;
  std::vector<ci::DecodePoint> points = {{data[0], 0}, {Le32(data + 1), Le32(data + 5)}};
  (void)ci::DecodeRangeAt(c, points, file.size(), decoded, read_at, offset, n);
  points.resize(1);
  (void)ci::DecodeRangeAt(c, points, file.size(), decoded, read_at, offset, n);
  if (c == sedpack::Compression::kLz4) {
    auto found = ci::FindDecodePoints(c, file);
    if (found.ok() && !found->empty()) {
      (void)ci::DecodeRangeAt(c, *found, file.size(), decoded, read_at, offset, n);
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  using sedpack::Compression;
  static const Compression kCodecs[] = {Compression::kGzip, Compression::kZlib, Compression::kBz2,
                                        Compression::kLzma, Compression::kLz4, Compression::kZstd};
  const std::uint8_t pick = data[0];
  std::span<const std::byte> input(reinterpret_cast<const std::byte*>(data + 1), size - 1);
  std::vector<std::byte> out;
  constexpr std::uint64_t kLimit = 8 << 20;
  if (pick & 0x40) {
    FuzzRange(pick & 1 ? Compression::kLz4 : Compression::kGzip, data + 1, size - 1);
  } else if (pick % 8 < 6) {
    auto codec = sedpack::MakeCodec(kCodecs[pick % 8]);
    if (codec.ok()) (void)(*codec)->Decompress(input, kLimit, &out);
  } else if (pick % 8 == 6) {
    auto codec = sedpack::MakeTfRecordCodec(pick & 8 ? Compression::kZlib : Compression::kGzip);
    if (codec.ok()) (void)(*codec)->Decompress(input, kLimit, &out);
  } else {
    (void)sedpack::InflateRaw(input, (pick >> 3) * 4096u, &out);
  }
  return 0;
}
