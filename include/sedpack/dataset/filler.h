// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "sedpack/codecs/compress.h"
#include "sedpack/dataset/dataset.h"
#include "sedpack/metadata/json_value.h"
#include "sedpack/status.h"
#include "sedpack/value.h"

namespace sedpack {

/// Options for a Filler.
struct FillerOptions {
  /// Sub-folder under each split for this filler's shards ("." = none). Must be
  /// relative without "..". Parallel writers each use their own.
  std::string relative_path_from_split = ".";
  /// Worker threads that finish, compress, hash and write full shards while the
  /// caller keeps filling. 0 = number of hardware threads.
  int concurrency = 0;
  /// Full shards waiting for a worker at most; past this the caller blocks,
  /// which bounds memory. 0 = 2 * concurrency.
  int max_pending_shards = 0;
  /// A shard is closed early when the next example would push its encoded size
  /// past this many bytes (FlatBuffers cannot pass 2 GiB).
  std::uint64_t shard_byte_budget = 1ULL << 30;
  /// On Finish, merge this filler's lists into the split lists and rewrite
  /// dataset_info.json (the reference's auto_update_dataset). Parallel writers set
  /// false and let one coordinator call Dataset::WriteConfig with all updated infos.
  bool auto_update_dataset = true;
  /// fsync shards and metadata before they become visible.
  bool sync = false;
  /// Shard files per leaf folder and folders per parent, as the reference's
  /// PathGenerator (1000). Each leaf folder gets its own shards_list.json,
  /// written as soon as the folder is full, so that the filler's memory and
  /// every list stay bounded however many shards it writes.
  int max_branching = 1000;
  /// Compression level (and ZSTD threads per shard) of this job's shards; not
  /// recorded in the dataset. InvalidArgument from Make if the level is outside
  /// CodecLevels(dataset compression).
  CodecOptions codec;
};

/// Writes examples into shards of one dataset, as the reference's DatasetFiller:
/// one open shard per split; a shard is closed when it holds examples_per_shard
/// examples, when its custom_metadata changes, or when the byte budget is reached.
/// Shard files are written (atomically) by worker threads. Each leaf folder's
/// `shards_list.json` names the shards in that folder only and is written when
/// the folder is full (or on Finish); the lists above it and `dataset_info.json`
/// only on Finish, so a failed filler leaves nothing that the dataset's metadata
/// references (and removes what it wrote). Not thread-safe. Errors are sticky: after the first
/// failure every call returns it.
class Filler {
 public:
  static Result<std::unique_ptr<Filler>> Make(std::shared_ptr<Dataset> dataset,
                                              FillerOptions options = {});
  /// Waits for workers; if Finish was not called, nothing is added to the metadata.
  ~Filler();

  /// Add one example to `split`. `values[j]` is attribute j of the schema; each is
  /// validated before anything is written. `custom_metadata` (a JSON object or
  /// nullptr) follows the reference: the first non-empty metadata applies to the
  /// open shard, a different non-empty one closes it.
  Status WriteExample(Split split, std::span<const ValueView> values,
                      const JsonValue* custom_metadata = nullptr);

  /// Close every open shard, wait for all writes, write each split's leaf
  /// `shards_list.json`, and (auto_update_dataset) merge them into the dataset.
  Status Finish();

  /// The leaf lists this filler wrote (valid after a successful Finish).
  const std::vector<ShardListInfo>& updated_infos() const;

  /// Examples accepted so far, and raw value bytes accepted so far.
  std::uint64_t examples_written() const;
  std::uint64_t bytes_written() const;

  class Impl;

 private:
  explicit Filler(std::unique_ptr<Impl> impl);
  friend struct FillerAccess;  // the parallel writers' view of what it recorded
  std::unique_ptr<Impl> impl_;
};

}  // namespace sedpack
