// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: every shard decoder (fb, npz, tfrec) with every
// compression its format allows, on a fixed schema that covers numeric,
// str and bytes attributes. The first input byte picks format and compression.
// Uncompressed fb inputs also go through the positioned one-example reader
// (shard/example_read.h), which must never read outside the input and, where
// both readers accept the bytes, must give the whole-shard decoder's values.
// (It may refuse a little more: attributes aliasing more bytes than the file.)
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "sedpack/shard/shard.h"
#include "shard/example_read.h"

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

void PositionedReads(const std::vector<std::byte>& bytes, const sedpack::DecodedShard* whole) {
  const sedpack::shard_internal::ReadAt read_at = [&bytes](std::uint64_t offset, std::span<std::byte> out) {
    if (offset > bytes.size() || bytes.size() - offset < out.size()) std::abort();  // must be checked first
    if (!out.empty()) std::memcpy(out.data(), bytes.data() + offset, out.size());
    return sedpack::Status::OK();
  };
  // The count the metadata would record: the decoder's, else a guess from the input.
  const std::uint64_t n = whole ? whole->num_examples() : bytes.size() % 5;
  for (std::uint64_t e = 0; e < n && e < 4; ++e) {
    auto one = sedpack::shard_internal::ReadFbExample(Schema(), bytes.size(), e, n, read_at);
    if (!whole || !one.ok()) continue;
    for (std::size_t a = 0; a < whole->num_attributes(); ++a) {
      const auto x = one->values->Get(0, a).data;
      const auto y = whole->Get(e, a).data;
      if (x.size() != y.size() || (!x.empty() && std::memcmp(x.data(), y.data(), x.size()) != 0)) std::abort();
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  const Choice& c = kChoices[data[0] % (sizeof(kChoices) / sizeof(kChoices[0]))];
  std::vector<std::byte> bytes(reinterpret_cast<const std::byte*>(data + 1),
                               reinterpret_cast<const std::byte*>(data + size));
  sedpack::ShardReadLimits limits;
  limits.max_decompressed_bytes = 16 << 20;  // keep the fuzzer's memory bounded
  const bool positioned = c.type == sedpack::ShardFileType::kFb && c.compression == sedpack::Compression::kNone;
  std::vector<std::byte> copy;
  if (positioned) copy = bytes;
  auto shard = sedpack::DecodeShard(c.type, c.compression, Schema(), std::move(bytes), limits);
  if (positioned) PositionedReads(copy, shard.ok() ? shard->get() : nullptr);
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
