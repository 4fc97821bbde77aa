// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: every whole-file decompressor behind its size limit
// (first byte picks the codec), plus raw inflate with a claimed size.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "codecs/compress_internal.h"
#include "sedpack/codecs/compress.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  using sedpack::Compression;
  static const Compression kCodecs[] = {Compression::kGzip, Compression::kZlib, Compression::kBz2,
                                        Compression::kLzma, Compression::kLz4, Compression::kZstd};
  const std::uint8_t pick = data[0];
  std::span<const std::byte> input(reinterpret_cast<const std::byte*>(data + 1), size - 1);
  std::vector<std::byte> out;
  constexpr std::uint64_t kLimit = 8 << 20;
  if (pick % 8 < 6) {
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
