// SPDX-License-Identifier: Apache-2.0
// Checking what a reader reads against the hashes the metadata records (the
// hash tree: dataset_info.json -> split shards_list.json -> child lists ->
// shard files). Shared by the sequential reader and the index-based readers.
// Project-private (src/ include directory).
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "sedpack/dataset/dataset.h"
#include "sedpack/metadata/models.h"
#include "sedpack/status.h"
#include "sedpack/types.h"

namespace sedpack::dataset_internal {

/// Position in `algorithms` of the one a reader checks: the fastest recorded
/// (xxh* before md5, sha1, sha2, sha3). One is enough to catch damage; `verify`
/// still checks them all. REQUIRES: !algorithms.empty().
std::size_t ReadCheckAlgorithm(std::span<const HashAlgorithm> algorithms);

/// Compare `bytes` (the content of `relative`, already read) with the checksum
/// `recorded` holds for the dataset's ReadCheckAlgorithm. OK when the dataset
/// records no algorithms. Corruption with StatusDetail::kHashMismatch naming
/// the file and the algorithm on a mismatch, or when `recorded` does not hold
/// one checksum per algorithm.
Status CheckRecordedHash(const Dataset& dataset, std::string_view relative,
                         const std::vector<std::string>& recorded, std::span<const std::byte> bytes);

/// LoadShardsList of `file.file_path`, its bytes first checked against
/// `file.hash_checksums` (CheckRecordedHash).
Result<ShardsList> LoadShardsListVerified(const Dataset& dataset, const FileInfo& file);

}  // namespace sedpack::dataset_internal
