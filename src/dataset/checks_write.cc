// SPDX-License-Identifier: Apache-2.0
#include "dataset/checks_write_internal.h"

#include <utility>

#include "sidecar/sidecar_internal.h"

namespace sedpack::dataset_internal {

sidecar_internal::ShardChecks MakeShardChecks(std::string path, std::uint64_t stored_size,
                                              std::uint64_t stored_checksum, shard_internal::ShardWriteChecks written) {
  sidecar_internal::ShardChecks c;
  c.path = std::move(path);
  c.stored_size = stored_size;
  c.stored_checksum = stored_checksum;
  // Writers that learn nothing (npz, tfrec) leave the decoded size unknown;
  // the stored size is the only size then.
  c.decoded_size = written.decoded_size;
  c.decode_points = std::move(written.decode_points);
  if (!written.example_checksums.empty() && !written.values.empty() &&
      written.values.size() % written.example_checksums.size() == 0 &&
      written.decoded_size <= UINT32_MAX) {
    c.values_per_example = static_cast<std::uint32_t>(written.values.size() / written.example_checksums.size());
    c.values.reserve(written.values.size());
    for (const auto& r : written.values) c.values.push_back({r.offset, r.size});
    c.example_checksums = std::move(written.example_checksums);
  }
  return c;
}

void CommitChecks(const std::string& root, const sidecar_internal::ChecksSidecar* carried,
                  const std::vector<sidecar_internal::ChecksRun>& runs, FileSystem* fs) {
  auto digest = sidecar_internal::InfoDigest(root, fs);
  if (!digest.ok()) return;
  (void)sidecar_internal::WriteChecksFromRuns(root, *digest, carried, runs, fs);
}

}  // namespace sedpack::dataset_internal
