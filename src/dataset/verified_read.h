// SPDX-License-Identifier: Apache-2.0
// Checking what a reader reads against the hashes the metadata records (the
// hash tree: dataset_info.json -> split shards_list.json -> child lists ->
// shard files). Shared by the sequential reader and the index-based readers.
// Project-private (src/ include directory).
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "sedpack/dataset/dataset.h"
#include "sedpack/metadata/models.h"
#include "sedpack/shard/shard.h"
#include "sedpack/status.h"
#include "sedpack/types.h"
#include "sidecar/checks_internal.h"

namespace sedpack::dataset_internal {

/// Metadata files are small; anything bigger than this is not a real
/// dataset_info.json or shards_list.json and is refused before it is read.
inline constexpr std::uint64_t kMaxMetadataBytes = 1ULL << 30;

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

/// LoadShardsList of `relative`, with the size and mtime_ns the list's open
/// found (the fstat it makes anyway: no call of its own), taken before its
/// bytes are read. Of a packed dataset's list `*stat` is left as it is.
Result<ShardsList> LoadShardsListStamped(const Dataset& dataset, std::string_view relative, FileStat* stat);

/// ReadShard with the checks sidecar: with `verify` and a record of the shard
/// in `checks` (fresh, may be null), its bytes are checked against the
/// record's size and fast checksum; without one, against the recorded hash
/// (CheckRecordedHash). Corruption (kHashMismatch) naming the file.
Result<std::shared_ptr<const DecodedShard>> ReadShardChecked(const Dataset& dataset, const ShardInfo& shard,
                                                             const ShardReadLimits& limits, bool verify,
                                                             const sidecar_internal::ChecksSidecar* checks);

/// The sidecar a verified reader uses: the fresh checks.bin of a dataset
/// folder (not a pack) when `verify` and not `strict`; null otherwise.
std::shared_ptr<const sidecar_internal::ChecksSidecar> ReaderChecks(const Dataset& dataset, bool verify, bool strict,
                                                                    const std::function<void(const std::string&)>& warn);

/// What a deep check learns from one read of a shard file.
struct ShardReadForCheck {
  std::uint64_t size = 0;
  std::vector<std::string> hashes;  ///< with every algorithm of the dataset, in order
  Status decoded;                   ///< the decode's outcome (names the file)
  std::size_t num_examples = 0;     ///< when decoded
  /// When decoded: the shard's checks sidecar record, from these bytes (to be
  /// kept only if `hashes` match the recorded ones).
  sidecar_internal::ShardChecks checks;
};

/// Read the shard file `relative` once (refused above
/// limits.max_decompressed_bytes), hash those bytes with every algorithm and
/// decode them. The Status is the read's failure (missing, outside the root,
/// I/O, too large); a decode failure is in `decoded`.
Result<ShardReadForCheck> ReadHashAndDecode(const Dataset& dataset, std::string_view relative,
                                            const ShardReadLimits& limits);

}  // namespace sedpack::dataset_internal
