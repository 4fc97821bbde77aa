// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: every shard decoder (fb, npz, tfrec) with every
// compression its format allows, on a fixed schema that covers numeric,
// str and bytes attributes. The first input byte picks format and compression.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "sedpack/shard/shard.h"

namespace {

struct Choice {
  sedpack::ShardFileType type;
  sedpack::Compression compression;
};

constexpr Choice kChoices[] = {
    {sedpack::ShardFileType::kFb, sedpack::Compression::kNone},  {sedpack::ShardFileType::kFb, sedpack::Compression::kGzip},
    {sedpack::ShardFileType::kFb, sedpack::Compression::kBz2},   {sedpack::ShardFileType::kFb, sedpack::Compression::kLzma},
    {sedpack::ShardFileType::kFb, sedpack::Compression::kLz4},   {sedpack::ShardFileType::kFb, sedpack::Compression::kZstd},
    {sedpack::ShardFileType::kNpz, sedpack::Compression::kNone}, {sedpack::ShardFileType::kNpz, sedpack::Compression::kZip},
    {sedpack::ShardFileType::kTfrec, sedpack::Compression::kNone},
    {sedpack::ShardFileType::kTfrec, sedpack::Compression::kGzip},
    {sedpack::ShardFileType::kTfrec, sedpack::Compression::kZlib},
};

const std::vector<sedpack::AttributeSpec>& Schema() {
  static const std::vector<sedpack::AttributeSpec> schema = {
      {"trace", sedpack::DType::kFloat16, {8}},
      {"key", sedpack::DType::kUInt8, {16}},
      {"label", sedpack::DType::kInt64, {}},
      {"note", sedpack::DType::kStr, {}},
      {"blob", sedpack::DType::kBytes, {}},
  };
  return schema;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  const Choice& c = kChoices[data[0] % (sizeof(kChoices) / sizeof(kChoices[0]))];
  std::vector<std::byte> bytes(reinterpret_cast<const std::byte*>(data + 1),
                               reinterpret_cast<const std::byte*>(data + size));
  sedpack::ShardReadLimits limits;
  limits.max_decompressed_bytes = 16 << 20;  // keep the fuzzer's memory bounded
  auto shard = sedpack::DecodeShard(c.type, c.compression, Schema(), std::move(bytes), limits);
  if (shard.ok()) {
    for (std::size_t e = 0; e < (*shard)->num_examples(); ++e) {
      for (std::size_t a = 0; a < (*shard)->num_attributes(); ++a) {
        const sedpack::ValueView v = (*shard)->Get(e, a);
        volatile std::byte sink{};
        for (std::byte b : v.data) sink = sink ^ b;  // touch every byte
      }
    }
  }
  return 0;
}
