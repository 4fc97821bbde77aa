// SPDX-License-Identifier: Apache-2.0
// Helpers shared by the shard tests.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "sedpack/shard/shard.h"
#include "sedpack/types.h"
#include "sedpack/value.h"

namespace sedpack::testing {

/// Whole contents of the file at `path` (empty and a gtest failure if unreadable).
std::vector<std::byte> ReadFileBytes(const std::string& path);

/// One example with its own storage; `views` point into `storage`.
struct OwnedExample {
  OwnedExample() = default;
  // Copies re-point the views at their own storage (moves keep the buffers).
  OwnedExample(const OwnedExample& other) : storage(other.storage), views(other.views) {
    for (std::size_t j = 0; j < views.size(); ++j) views[j].data = storage[j];
  }
  OwnedExample& operator=(const OwnedExample& other) {
    if (this != &other) *this = OwnedExample(other);
    return *this;
  }
  OwnedExample(OwnedExample&&) = default;
  OwnedExample& operator=(OwnedExample&&) = default;

  std::vector<std::vector<std::byte>> storage;
  std::vector<ValueView> views;
};

/// Deterministic example `index` for `schema`: random numeric values (bool as
/// 0/1), strings drawn from a list with non-ASCII and empty text, bytes of
/// varying length including empty.
OwnedExample MakeExample(const std::vector<AttributeSpec>& schema, int index);

/// A schema with every dtype, scalar and multi-dimensional shapes, variable and
/// fixed bytes.
std::vector<AttributeSpec> AllDTypesSchema();

/// Write `examples` with a fresh writer and return the file bytes (gtest failure on error).
std::vector<std::byte> WriteShard(ShardFileType type, Compression compression,
                                  const std::vector<AttributeSpec>& schema,
                                  const std::vector<OwnedExample>& examples);

/// A .npy member (numpy's header for `descr`/`shape`, then `data`).
std::vector<std::byte> NpyMember(const std::string& descr, const std::vector<std::uint64_t>& shape,
                                 const std::vector<std::byte>& data);

/// A zip archive made by the npz writer's zip code.
std::vector<std::byte> MakeZip(
    const std::vector<std::pair<std::string, std::vector<std::byte>>>& members, bool deflate);

/// Offset of central directory entry `index` of a zip without archive comment.
std::size_t CentralEntryOffset(const std::vector<std::byte>& zip, std::size_t index);

void StoreLe(std::vector<std::byte>* bytes, std::size_t offset, std::uint64_t value, int width);

}  // namespace sedpack::testing
