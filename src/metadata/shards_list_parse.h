// SPDX-License-Identifier: Apache-2.0
//
// Two parsers behind ParseShardsList. A shards_list.json written by the
// reference for a whole split can hold a million entries (268 MB), so the
// common, plain form is read with simdjson's On-Demand API straight into a
// ShardsList (shards_list_fast.cc); everything else (every error, and corners
// such as escaped strings, duplicate or unknown keys, lax integers) goes to
// the general parser over the JSON tree (models.cc), which defines the
// behaviour. The fast parser only answers when the general one would give the
// same ShardsList, so results and error messages do not depend on which ran.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "sedpack/metadata/models.h"
#include "sedpack/status.h"

namespace sedpack::metadata_internal {

/// Readable bytes the fast parser needs after the text (SIMDJSON_PADDING).
inline constexpr std::size_t kShardsListPadding = 64;

/// The fast parser. `data` must have `capacity >= size + kShardsListPadding`
/// readable bytes. std::nullopt means "not handled here": the general parser
/// must run (it reports the error, if there is one).
std::optional<ShardsList> ParseShardsListFast(const char* data, std::size_t size,
                                              std::size_t capacity);

/// The general parser (generic JSON tree); the reference behaviour.
Result<ShardsList> ParseShardsListTree(std::string_view text, std::string_view source);

/// ParseShardsList for the text of a dataset's shards_list.json, which the
/// caller gives away: the padding is appended in place (no second copy of a
/// large file when the string has spare capacity). A list that does not parse
/// or validate is Corruption (the dataset is damaged), not InvalidArgument.
Result<ShardsList> ParseShardsListOwned(std::string text, std::string_view source);

}  // namespace sedpack::metadata_internal
