// SPDX-License-Identifier: Apache-2.0
// The checks sidecar records of a writing job, kept on disk while it writes so
// that a writer's memory does not grow with its shard count: records are
// gathered into runs of at most kRunBytes (1 MiB), each sorted by path and appended to a
// spool file under `<root>/.sedpack-hpc/`; at the commit the runs (every rank's,
// read through the shared file system) and the records carried over from the
// old sidecar are merged into checks.bin a few buffers at a time.
// Project-private (src/ include directory), not installed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "sedpack/io/file_system.h"
#include "sedpack/status.h"
#include "sidecar/checks_internal.h"

namespace sedpack::sidecar_internal {

/// A sorted run of encoded records in a spool file: bytes [offset, offset+size)
/// of `path` (absolute, or relative to the process's folder as the root is),
/// each record preceded by its u32 length.
struct ChecksRun {
  std::string path;
  std::uint64_t offset = 0;
  std::uint64_t size = 0;
};

/// Text form of runs, to send them to another rank ("size offset path" lines).
std::string EncodeRuns(const std::vector<ChecksRun>& runs);
Result<std::vector<ChecksRun>> DecodeRuns(const std::string& text);
/// One rank's runs as a message for a gather: "+\n" and EncodeRuns, or "-\n"
/// when the rank has none to give (its spool failed).
std::string RunsMessage(const Result<std::vector<ChecksRun>>& runs);
/// The runs of a RunsMessage; nullopt for "-" (or anything but "+"),
/// Corruption if the runs are damaged.
Result<std::optional<std::vector<ChecksRun>>> ParseRunsMessage(const std::string& message);

/// One writer's spool. Not thread-safe: callers hold their own lock.
class ChecksSpool {
 public:
  static constexpr std::size_t kRunBytes = 1u << 20;
  /// A new spool file `.sedpack-hpc/checks-spool-<32 hex>.tmp` below `root`,
  /// created on the first Add.
  ChecksSpool(std::string root, FileSystem* fs);
  ~ChecksSpool();  // removes the file
  ChecksSpool(const ChecksSpool&) = delete;
  ChecksSpool& operator=(const ChecksSpool&) = delete;

  /// Add one record (EncodeShardChecks's bytes).
  Status Add(std::span<const std::byte> encoded);
  Status Add(const ShardChecks& checks);
  /// Write the open run; then runs() names every record added.
  Status Flush();
  const std::vector<ChecksRun>& runs() const { return runs_; }
  std::uint64_t records() const { return records_; }

 private:
  std::string root_, path_;
  FileSystem* fs_;
  int fd_ = -1;
  std::uint64_t end_ = 0, records_ = 0;
  std::vector<std::byte> run_;              // the open run's records, as added
  std::vector<std::uint32_t> starts_;       // where each begins in run_
  std::vector<ChecksRun> runs_;
};

/// Whether `file_name` is a spool's file name (what a SIGKILLed writer
/// leaves under `.sedpack-hpc/`).
bool IsChecksSpoolName(std::string_view file_name);

/// checks.bin for `digest` from `carried` (may be null) and `runs` (later runs
/// win over earlier ones and over carried records of the same path), written
/// atomically while reading each run through a small buffer: two passes (the
/// header needs the record count and size before the records).
Status WriteChecksFromRuns(const std::string& root, const DatasetInfoDigest& digest, const ChecksSidecar* carried,
                           const std::vector<ChecksRun>& runs, FileSystem* fs);

}  // namespace sedpack::sidecar_internal
