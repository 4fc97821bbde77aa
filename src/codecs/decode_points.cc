// SPDX-License-Identifier: Apache-2.0
#include "codecs/decode_points_internal.h"

#include <xxhash.h>

#include <new>

namespace sedpack::codecs_internal {

std::uint64_t FastChecksum(std::span<const std::byte> bytes) {
  return XXH3_64bits(bytes.data(), bytes.size());
}

FastChecksummer::FastChecksummer() : state_(XXH3_createState()) {
  if (state_ == nullptr) throw std::bad_alloc();
  XXH3_64bits_reset(static_cast<XXH3_state_t*>(state_));
}

FastChecksummer::~FastChecksummer() { XXH3_freeState(static_cast<XXH3_state_t*>(state_)); }

void FastChecksummer::Update(std::span<const std::byte> bytes) {
  XXH3_64bits_update(static_cast<XXH3_state_t*>(state_), bytes.data(), bytes.size());
}

std::uint64_t FastChecksummer::Digest() const {
  return XXH3_64bits_digest(static_cast<const XXH3_state_t*>(state_));
}

bool SupportsDecodePoints(Compression) { return false; }

Result<std::vector<DecodePoint>> FindDecodePoints(Compression, std::span<const std::byte>) {
  return std::vector<DecodePoint>{};
}

Result<ByteBuffer> DecodeRangeAt(Compression compression, std::span<const DecodePoint>, std::uint64_t,
                                 std::uint64_t, const ReadStoredAt&, std::uint64_t, std::uint64_t) {
  return Status::NotImplemented("decoding a range of a ", CompressionName(compression), " shard");
}

}  // namespace sedpack::codecs_internal
