// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "sedpack/dataset/commit.h"
#include "sedpack/io/file.h"
#include "sedpack/io/pack.h"
#include "sedpack/metadata/models.h"
#include "sedpack/status.h"
#include "sedpack/types.h"

namespace sedpack {

/// Options for opening an existing dataset.
struct OpenOptions {
  /// Reader version used for the reference's version rule (the dataset's
  /// sedpack_version must not be newer).
  std::string reader_version = std::string(kReaderSedpackVersion);
  /// Waiting for the commit lock and breaking a dead holder's (commit.h), for
  /// WriteConfig and for recovering a commit a killed writer left.
  CommitLockOptions commit_lock;
  /// The FileSystem every read and write of this dataset goes through, also
  /// those of the Filler, ExampleReader and checks made on it (nullptr:
  /// commit_lock.file_system, and if that is nullptr too, CurrentFileSystem()).
  FileSystem* file_system = nullptr;
};

/// A dataset on disk: its root folder and its parsed `dataset_info.json`.
/// Holds no open files. Reading is thread-safe; WriteConfig is not.
class Dataset {
 public:
  /// Create a dataset at `root` (folders created as needed) and write its
  /// `dataset_info.json` with no splits. AlreadyExists if one is there;
  /// InvalidArgument if the structure is invalid (schema, examples_per_shard < 1,
  /// compression not allowed for the shard type).
  /// `options`: its commit_lock and file_system (reader_version is not used).
  static Result<std::shared_ptr<Dataset>> Create(const std::string& root, Metadata metadata,
                                                 DatasetStructure structure, const OpenOptions& options = {});
  /// Open a dataset: read and validate `dataset_info.json` and apply the version rule.
  /// `root` may also be a pack file (`sedpack pack`): the dataset is then read
  /// from it directly and is read-only.
  static Result<std::shared_ptr<Dataset>> Open(const std::string& root,
                                               const OpenOptions& options = {});

  const std::string& root() const { return root_; }
  const DatasetInfo& info() const { return info_; }
  /// Typed schema (attribute order is the fb storage order).
  const std::vector<AttributeSpec>& schema() const { return schema_; }
  /// Absolute-or-root-relative path of a dataset-relative path (for a packed
  /// dataset: "<pack>/<relative>", for messages only).
  std::string PathOf(std::string_view relative) const;

  /// File access that works for folders and packs alike. `relative` is a
  /// dataset-relative path; in a folder it is opened beneath the root
  /// (io/file.h, ReadFileBytesBeneath), so neither the path nor a symbolic link in the tree can make
  /// these read a file outside the root (InvalidArgument "... leads outside
  /// the dataset root ...").
  Result<std::vector<std::byte>> ReadBytes(std::string_view relative,
                                           std::uint64_t max_bytes = (1ULL << 40)) const;
  Result<std::string> ReadText(std::string_view relative, std::uint64_t max_bytes) const;
  Result<std::uint64_t> SizeOf(std::string_view relative) const;
  /// Hashes of a file's bytes with the dataset's algorithms (streamed for folders).
  Result<std::vector<std::string>> HashOf(std::string_view relative) const;
  /// Write `<root>/<relative>` atomically (WriteFileAtomic) once
  /// CheckStaysBeneath has made sure the folder it goes into lies beneath the
  /// root: a symbolic link in the tree never makes a writer write elsewhere.
  Status WriteFile(std::string_view relative, std::string_view text,
                   const AtomicWriteOptions& options = {}) const;
  /// The FileSystem it was opened with (nullptr: CurrentFileSystem()); pass it
  /// on to the io/file.h calls made for this dataset.
  FileSystem* file_system() const { return lock_options_.file_system; }
  /// The pack this dataset is read from, or nullptr for a folder.
  const PackReader* pack() const { return pack_.get(); }

  /// The reference's write_config: merge the given leaf/subtree ShardListInfos into
  /// every ancestor `shards_list.json` up to `<split>/shards_list.json`, then
  /// rewrite `dataset_info.json` atomically. If any write fails, the lists and
  /// dataset_info.json that were replaced are restored. Returns the FileInfo of
  /// dataset_info.json.
  ///
  /// Safe against other processes and hosts writing the same dataset at the
  /// same time: it takes the commit lock (commit.h), re-reads dataset_info.json
  /// and the lists it merges into under the lock, and merges into those, so the
  /// examples other writers committed meanwhile are kept; info() is then the
  /// merged state. The updated lists must be this writer's own (a subtree no
  /// other writer touches, as Filler and DistributedWriter make).
  Result<FileInfo> WriteConfig(const std::vector<ShardListInfo>& updated_infos);

  /// Re-read dataset_info.json (after another process changed it).
  Status Reload();

  /// Hashes of the current dataset_info.json bytes, in algorithm order (the
  /// reference's current_metadata_checksums()).
  Result<std::vector<std::string>> MetadataChecksums() const;

  /// The commit lock options it was opened with (file_system: the dataset's).
  const CommitLockOptions& commit_lock_options() const { return lock_options_; }
  /// Replace them; the dataset keeps its FileSystem.
  void set_commit_lock_options(const CommitLockOptions& options) {
    FileSystem* const fs = lock_options_.file_system;
    lock_options_ = options;
    lock_options_.file_system = fs;
  }

  /// Validate a structure as Create does.
  static Status ValidateStructure(const DatasetStructure& structure);

 private:
  Dataset() = default;
  std::string root_;
  std::shared_ptr<const PackReader> pack_;
  DatasetInfo info_;
  std::vector<AttributeSpec> schema_;
  CommitLockOptions lock_options_;
};

/// Read and parse `<root>/<relative>` as a shards_list.json (validated; errors name the file).
Result<ShardsList> LoadShardsList(const Dataset& dataset, std::string_view relative);

}  // namespace sedpack
