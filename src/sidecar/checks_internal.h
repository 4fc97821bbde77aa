// SPDX-License-Identifier: Apache-2.0
// The checks sidecar, `<root>/.sedpack-hpc/checks.bin`: for each shard a fast
// checksum of its stored bytes (so that a verified read need not compute the
// recorded cryptographic hash), its decoded size and decode points, and for fb
// shards where every example's values lie in the decoded bytes with a
// checksum of them (so that a verified fetch reads one example, not the
// shard). Bound to the SHA-256 of dataset_info.json like the index: a stale
// or damaged file is ignored, never trusted. Layout: docs/format.md, "Checks
// sidecar". Project-private (src/ include directory), not installed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "codecs/decode_points_internal.h"
#include "io/beneath.h"
#include "sedpack/io/file_system.h"
#include "sedpack/status.h"
#include "sedpack/types.h"

namespace sedpack::sidecar_internal {

inline constexpr std::string_view kChecksFileName = "checks.bin";

/// One value's bytes in the decoded shard.
struct CheckedRange {
  std::uint64_t offset = 0;
  std::uint64_t size = 0;
  friend bool operator==(const CheckedRange&, const CheckedRange&) = default;
};

/// Everything the sidecar records of one shard.
struct ShardChecks {
  std::string path;  ///< dataset-relative (file_infos[0].file_path)
  std::uint64_t stored_size = 0;
  std::uint64_t stored_checksum = 0;  ///< codecs_internal::FastChecksum of the stored bytes
  std::uint64_t decoded_size = 0;
  std::vector<codecs_internal::DecodePoint> decode_points;
  /// fb only (else 0 and both vectors empty): attributes per example; `values`
  /// is example-major, `example_checksums` the FastChecksum of each example's
  /// value bytes concatenated in schema order. Ranges are recorded only for a
  /// decoded size below 4 GiB (32-bit in the file).
  std::uint32_t values_per_example = 0;
  std::vector<CheckedRange> values;
  std::vector<std::uint64_t> example_checksums;
  friend bool operator==(const ShardChecks&, const ShardChecks&) = default;
};

/// A record of a loaded sidecar, read in place (valid while the sidecar lives).
/// Every field was validated when the file was parsed.
class ShardChecksRef {
 public:
  std::string_view path() const { return path_; }
  std::uint64_t stored_size() const { return stored_size_; }
  std::uint64_t stored_checksum() const { return stored_checksum_; }
  std::uint64_t decoded_size() const { return decoded_size_; }
  std::size_t num_points() const { return num_points_; }
  codecs_internal::DecodePoint point(std::size_t i) const;
  std::vector<codecs_internal::DecodePoint> points() const;
  std::size_t num_examples() const { return num_examples_; }
  std::uint32_t values_per_example() const { return values_per_example_; }
  std::uint64_t example_checksum(std::size_t example) const;
  CheckedRange value(std::size_t example, std::size_t attribute) const;
  /// The record's encoded bytes (to carry it into a new sidecar unchanged).
  std::span<const std::byte> encoded() const { return encoded_; }
  /// All of it, copied out.
  ShardChecks ToChecks() const;

 private:
  friend class ChecksSidecar;
  friend struct ChecksRecordFields;
  std::string_view path_;
  std::uint64_t stored_size_ = 0, stored_checksum_ = 0, decoded_size_ = 0;
  std::size_t num_points_ = 0, num_examples_ = 0;
  std::uint32_t values_per_example_ = 0;
  const std::byte* points_ = nullptr;
  const std::byte* examples_ = nullptr;
  std::span<const std::byte> encoded_;
};

/// A record of a sidecar and what keeps its bytes alive.
using ShardChecksPtr = std::shared_ptr<const ShardChecksRef>;

/// A validated checks.bin, read a block of records at a time. Opening it reads
/// the whole file once - its checksum and every record are validated as
/// Parse's comment says - but keeps only a sparse index: the first path, the
/// place and a checksum of each block of about kBlockBytes of records (some
/// 1/200 of the file). Find reads the one block that can hold a path (the
/// last few stay cached) and checks it against the checksum taken when the
/// file was validated, through the descriptor opened then: a file replaced
/// since is never mixed in. So a reader's memory does not grow with the
/// dataset's shard count. Thread-safe.
class ChecksSidecar {
 public:
  static constexpr std::size_t kBlockBytes = 16u << 10;
  static constexpr std::size_t kCachedBlocks = 8;

  /// Validate `bytes` as a whole (magic, version, size, checksum) and every
  /// record (counts against the bytes left before anything is sized from
  /// them, points ascending inside the file, ranges inside decoded_size,
  /// paths strictly ascending). Corruption saying what is wrong otherwise.
  static Result<std::shared_ptr<const ChecksSidecar>> Parse(std::vector<std::byte> bytes);
  /// The same of the open file `fd` (`size` bytes; `path` for messages),
  /// read through `fs` (null: CurrentFileSystem()) in pieces of 1 MiB.
  static Result<std::shared_ptr<const ChecksSidecar>> Open(FileDescriptor fd, std::uint64_t size,
                                                           std::string path, FileSystem* fs);
  ~ChecksSidecar();
  ChecksSidecar(const ChecksSidecar&) = delete;
  ChecksSidecar& operator=(const ChecksSidecar&) = delete;

  const DatasetInfoDigest& digest() const { return digest_; }
  /// Number of records.
  std::size_t size() const { return count_; }
  /// The record of `path`, or null: none, or its block no longer reads as it
  /// did when validated (the caller then checks the recorded hashes).
  ShardChecksPtr Find(std::string_view path) const;

  /// Every record in path order, a block at a time.
  class Cursor {
   public:
    /// To the next record: false at the end, or on an error (status()).
    bool Next();
    const ShardChecksRef& record() const { return block_->records[at_]; }
    const Status& status() const { return status_; }

   private:
    friend class ChecksSidecar;
    struct Block {  // a block's bytes and its records, read in place
      std::vector<std::byte> bytes;
      std::vector<ShardChecksRef> records;
    };
    explicit Cursor(const ChecksSidecar* s) : sidecar_(s) {}
    const ChecksSidecar* sidecar_;
    std::size_t next_block_ = 0, at_ = 0;
    std::shared_ptr<const Block> block_;
    Status status_;
  };
  Cursor Records() const { return Cursor(this); }

 private:
  struct BlockInfo {
    std::string first_path;
    std::uint64_t offset = 0, size = 0, checksum = 0;
    std::uint32_t records = 0;
  };
  ChecksSidecar() = default;
  Status ReadAt(std::uint64_t offset, std::span<std::byte> out) const;
  Status Validate();
  Result<std::shared_ptr<const Cursor::Block>> LoadBlock(std::size_t b) const;

  std::vector<std::byte> bytes_;  // Parse's source; else fd_
  FileDescriptor fd_;
  FileSystem* fs_ = nullptr;
  std::string path_;
  std::uint64_t file_size_ = 0;
  DatasetInfoDigest digest_{};
  std::size_t count_ = 0;
  std::vector<BlockInfo> blocks_;
  mutable std::mutex mu_;
  mutable std::vector<std::pair<std::size_t, std::shared_ptr<const Cursor::Block>>> cache_;  // most recent first
};

/// The encoded form of one record (what ShardChecksRef::encoded() returns).
/// InvalidArgument if it cannot be represented (inconsistent counts, a range
/// past decoded_size, a path of 4 GiB).
Result<std::vector<std::byte>> EncodeShardChecks(const ShardChecks& checks);
/// Decode records made by EncodeShardChecks, concatenated (e.g. sent by
/// another rank); validated as Parse validates a file's records.
Result<std::vector<ShardChecks>> DecodeShardChecksList(std::span<const std::byte> bytes);

/// A whole sidecar file: `records` (each an EncodeShardChecks result) are
/// sorted by path; of two with the same path the later one wins.
std::vector<std::byte> EncodeChecksFile(const DatasetInfoDigest& digest,
                                        std::vector<std::span<const std::byte>> records);

/// The 64 header bytes of a checks.bin of `records` records, `record_bytes`
/// in all (the file is those, then the XXH3-64 of everything before it).
std::vector<std::byte> EncodeChecksHeader(const DatasetInfoDigest& digest, std::uint64_t records,
                                          std::uint64_t record_bytes);
/// `.sedpack-hpc/checks.bin`, relative to the root.
std::string ChecksFileRelative();

using WarnFn = std::function<void(const std::string&)>;

// All file access below goes through `fs` (null: CurrentFileSystem()).

/// DatasetInfoSha256 through `fs`.
Result<DatasetInfoDigest> InfoDigest(const std::string& root, FileSystem* fs);

/// Load `<root>/.sedpack-hpc/checks.bin` if it is bound to `expected`: null
/// if it is missing (silently), bound to another digest (stale) or damaged
/// (the last two reported through `warn`, once; null `warn`: stderr).
std::shared_ptr<const ChecksSidecar> LoadChecksFor(const std::string& root, const DatasetInfoDigest& expected,
                                                   const WarnFn& warn, FileSystem* fs = nullptr);
/// LoadChecksFor the dataset_info.json on disk now (null if it cannot be read).
std::shared_ptr<const ChecksSidecar> LoadFreshChecks(const std::string& root, const WarnFn& warn,
                                                     FileSystem* fs = nullptr);

/// Write the sidecar bound to `digest` (of the dataset_info.json whose
/// shards the records describe): `carried` (may be null) records first, then
/// `records`, which replace carried ones of the same path. An error leaves
/// the old file or none, never a half-written one.
Status WriteChecks(const std::string& root, const DatasetInfoDigest& digest, const ChecksSidecar* carried,
                   const std::vector<ShardChecks>& records, FileSystem* fs = nullptr);

}  // namespace sedpack::sidecar_internal
