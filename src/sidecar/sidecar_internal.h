// SPDX-License-Identifier: Apache-2.0
// Sidecars: files this library keeps beside a dataset that the reference format
// does not define (the sample index today; content digests or an audit log
// later). They all live in one folder, `<dataset root>/.sedpack-hpc/`, which
// readers of the reference format never look at, and each one records the
// SHA-256 of the `dataset_info.json` bytes it was derived from: since
// dataset_info.json holds the hashes of every shards_list.json (and those of
// every shard), that one digest pins the whole tree, and a sidecar whose digest
// differs from the current file is stale.
#pragma once

#include <string>
#include <string_view>

#include "sedpack/status.h"
#include "sedpack/types.h"

namespace sedpack {

/// Name of the sidecar folder directly under the dataset root.
inline constexpr std::string_view kSidecarDirName = ".sedpack-hpc";

/// `<root>/.sedpack-hpc`.
std::string SidecarDir(const std::string& root);
/// `<root>/.sedpack-hpc/<name>` (`name` is a plain file name).
std::string SidecarPath(const std::string& root, std::string_view name);

/// True if a dataset-relative path lies in a sidecar folder (any path component
/// equal to `.sedpack-hpc`), i.e. it is ours and no shards_list.json lists it.
bool IsSidecarPath(std::string_view relative);

/// SHA-256 of the bytes of `<root>/dataset_info.json` as it is on disk now.
/// NotFound / IOError name the file.
Result<DatasetInfoDigest> DatasetInfoSha256(const std::string& root);
/// Lowercase hex of a digest.
std::string DigestHex(const DatasetInfoDigest& digest);

}  // namespace sedpack
