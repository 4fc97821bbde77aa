// SPDX-License-Identifier: Apache-2.0
#include "sedpack/dataset/dataset.h"

#include <string>
#include <utility>

#include "sedpack/codecs/hash.h"
#include "sedpack/dataset/commit.h"
#include "io/beneath.h"
#include "sedpack/io/file.h"
#include "codecs/hash_fd.h"
#include "dataset/verified_read.h"
#include "metadata/shards_list_parse.h"

namespace sedpack {
namespace {

constexpr std::string_view kDatasetInfoName = "dataset_info.json";
using dataset_internal::kMaxMetadataBytes;

}  // namespace

Status Dataset::ValidateStructure(const DatasetStructure& structure) {
  if (structure.examples_per_shard < 1) {
    return Status::InvalidArgument("dataset_structure.examples_per_shard must be >= 1, got ",
                                   structure.examples_per_shard);
  }
  if (!CompressionAllowed(structure.shard_file_type, structure.compression)) {
    return Status::InvalidArgument("dataset_structure.compression \"",
                                   CompressionName(structure.compression),
                                   "\" is not allowed for shard_file_type \"",
                                   ShardFileTypeName(structure.shard_file_type), "\"");
  }
  if (structure.saved_data_description.empty()) {
    return Status::InvalidArgument("dataset_structure.saved_data_description is empty");
  }
  SEDPACK_ASSIGN_OR_RETURN(auto schema, structure.Schema());
  for (std::size_t i = 0; i < schema.size(); ++i) {
    if (schema[i].dtype == DType::kStr && !schema[i].shape.empty()) {
      return Status::InvalidArgument("dataset_structure.saved_data_description[", i, "] \"",
                                     schema[i].name, "\": str attributes take shape ()");
    }
    if (schema[i].dtype == DType::kInt && !schema[i].shape.empty()) {
      return Status::InvalidArgument("dataset_structure.saved_data_description[", i, "] \"",
                                     schema[i].name, "\": int attributes take shape ()");
    }
    if (schema[i].dtype == DType::kBytes && schema[i].shape.size() > 1) {
      return Status::InvalidArgument("dataset_structure.saved_data_description[", i, "] \"",
                                     schema[i].name, "\": bytes attributes take shape () or (N,)");
    }
    for (std::size_t j = 0; j < i; ++j) {
      if (schema[j].name == schema[i].name) {
        return Status::InvalidArgument("dataset_structure.saved_data_description: attribute name \"",
                                       schema[i].name, "\" is used twice");
      }
    }
  }
  return Status::OK();
}

namespace {
// The commit lock options of a dataset opened with `options`: they carry its FileSystem.
CommitLockOptions LockOptionsOf(const OpenOptions& options) {
  CommitLockOptions lock = options.commit_lock;
  if (options.file_system != nullptr) lock.file_system = options.file_system;
  return lock;
}
}  // namespace

Result<std::shared_ptr<Dataset>> Dataset::Create(const std::string& root, Metadata metadata,
                                                 DatasetStructure structure, const OpenOptions& options) {
  SEDPACK_RETURN_NOT_OK(ValidateStructure(structure));
  SEDPACK_RETURN_NOT_OK(
      ParseSemVer(metadata.sedpack_version).status().WithPrefix("metadata.sedpack_version: "));
  const CommitLockOptions lock = LockOptionsOf(options);
  SEDPACK_RETURN_NOT_OK(CreateDirectories(root, lock.file_system));
  std::shared_ptr<Dataset> ds(new Dataset());
  ds->root_ = root;
  ds->lock_options_ = lock;
  ds->info_.metadata = std::move(metadata);
  ds->info_.dataset_structure = std::move(structure);
  SEDPACK_ASSIGN_OR_RETURN(ds->schema_, ds->info_.dataset_structure.Schema());
  const std::string path = ds->PathOf(kDatasetInfoName);
  AtomicWriteOptions opts;
  opts.no_replace = true;  // never overwrite an existing dataset
  opts.file_system = lock.file_system;
  Status st = WriteFileAtomic(path, SerializeDatasetInfo(ds->info_), opts);
  if (st.code() == StatusCode::kAlreadyExists) {
    return Status::AlreadyExists("a dataset already exists at ", root, " (", path, " is present)");
  }
  SEDPACK_RETURN_NOT_OK(st);
  return ds;
}

Result<std::shared_ptr<Dataset>> Dataset::Open(const std::string& root, const OpenOptions& options) {
  std::shared_ptr<Dataset> ds(new Dataset());
  ds->root_ = root;
  ds->lock_options_ = LockOptionsOf(options);
  FileSystem* const fs = ds->file_system();
  if (PackReader::IsPack(root, fs)) {
    SEDPACK_ASSIGN_OR_RETURN(auto pack, PackReader::Open(root, fs));
    ds->pack_ = std::move(pack);
  } else {
    // A writer that died mid-commit left a journal: put the dataset back to its
    // last completed commit before reading anything (commit.h).
    SEDPACK_RETURN_NOT_OK(RecoverInterruptedCommit(root, ds->lock_options_).status());
  }
  const std::string path = ds->PathOf(kDatasetInfoName);
  auto text = ds->ReadText(kDatasetInfoName, kMaxMetadataBytes);
  if (!text.ok()) {
    if (text.status().code() == StatusCode::kNotFound) {
      return Status::NotFound("not a sedpack dataset: ", path, " does not exist");
    }
    return text.status();
  }
  SEDPACK_ASSIGN_OR_RETURN(ds->info_, ParseDatasetInfo(*text, path));
  SEDPACK_RETURN_NOT_OK(
      CheckSedpackVersion(ds->info_.metadata.sedpack_version, options.reader_version)
          .WithPrefix(path + ": metadata.sedpack_version: "));
  auto schema = ds->info_.dataset_structure.Schema();
  if (!schema.ok()) return schema.status().WithPrefix(path + ": ");
  ds->schema_ = std::move(schema).value();
  return ds;
}

std::string Dataset::PathOf(std::string_view relative) const { return JoinRoot(root_, relative); }

Result<std::vector<std::byte>> Dataset::ReadBytes(std::string_view relative, std::uint64_t max_bytes) const {
  if (pack_) return pack_->Read(relative, max_bytes);
  return ReadFileBytesBeneath(root_, relative, max_bytes, file_system());
}

Result<std::string> Dataset::ReadText(std::string_view relative, std::uint64_t max_bytes) const {
  if (!pack_) return ReadFileTextBeneath(root_, relative, max_bytes, file_system());
  SEDPACK_ASSIGN_OR_RETURN(std::vector<std::byte> bytes, pack_->Read(relative, max_bytes));
  return std::string(reinterpret_cast<const char*>(bytes.data()), bytes.size());
}

Result<std::uint64_t> Dataset::SizeOf(std::string_view relative) const {
  if (pack_) return pack_->Size(relative);
  return FileSizeBeneath(root_, relative, file_system());
}

Result<std::vector<std::string>> Dataset::HashOf(std::string_view relative) const {
  const auto& algos = info_.dataset_structure.hash_checksum_algorithms;
  if (!pack_) {
    SEDPACK_ASSIGN_OR_RETURN(BeneathFile file, OpenFileBeneath(root_, relative, file_system()));
    return HashFd(algos, file.fd.get(), file.path, file_system());
  }
  SEDPACK_ASSIGN_OR_RETURN(std::vector<std::byte> bytes, pack_->Read(relative));
  return HashBytes(algos, bytes);
}

Status Dataset::WriteFile(std::string_view relative, std::string_view text,
                          const AtomicWriteOptions& options) const {
  if (pack_) return Status::InvalidArgument(root_, ": a packed dataset is read-only");
  SEDPACK_RETURN_NOT_OK(CheckStaysBeneath(root_, relative, file_system()));
  AtomicWriteOptions write = options;
  if (write.file_system == nullptr) write.file_system = file_system();
  return WriteFileAtomic(PathOf(relative), text, write);
}

Status Dataset::Reload() {
  OpenOptions options;
  options.commit_lock = lock_options_;  // with the FileSystem
  SEDPACK_ASSIGN_OR_RETURN(std::shared_ptr<Dataset> fresh, Open(root_, options));
  info_ = fresh->info_;
  schema_ = fresh->schema_;
  return Status::OK();
}

Result<std::vector<std::string>> Dataset::MetadataChecksums() const {
  return HashOf(kDatasetInfoName);
}

Result<ShardsList> LoadShardsList(const Dataset& dataset, std::string_view relative) {
  SEDPACK_ASSIGN_OR_RETURN(std::string text, dataset.ReadText(relative, kMaxMetadataBytes));
  return metadata_internal::ParseShardsListOwned(std::move(text), relative);
}

namespace dataset_internal {

std::size_t ReadCheckAlgorithm(std::span<const HashAlgorithm> algorithms) {
  // Rough single-core speed order of the implementations behind hasher.cc:
  // XXH3-128 and XXH64 run at memory speed, XXH32 at half that; then MD5 and
  // SHA-1, SHA-512/384 (64-bit words) before SHA-256/224, SHA-3 last.
  auto rank = [](HashAlgorithm a) {
    switch (a) {
      case HashAlgorithm::kXxh128: return 0;
      case HashAlgorithm::kXxh64: return 1;
      case HashAlgorithm::kXxh32: return 2;
      case HashAlgorithm::kMd5: return 3;
      case HashAlgorithm::kSha1: return 4;
      case HashAlgorithm::kSha512: return 5;
      case HashAlgorithm::kSha384: return 6;
      case HashAlgorithm::kSha256: return 7;
      case HashAlgorithm::kSha224: return 8;
      case HashAlgorithm::kSha3_224: return 9;
      case HashAlgorithm::kSha3_256: return 10;
      case HashAlgorithm::kSha3_384: return 11;
      case HashAlgorithm::kSha3_512: return 12;
    }
    return 13;
  };
  std::size_t best = 0;
  for (std::size_t i = 1; i < algorithms.size(); ++i) {
    if (rank(algorithms[i]) < rank(algorithms[best])) best = i;
  }
  return best;
}

Status CheckRecordedHash(const Dataset& dataset, std::string_view relative,
                         const std::vector<std::string>& recorded, std::span<const std::byte> bytes) {
  const auto& algos = dataset.info().dataset_structure.hash_checksum_algorithms;
  if (algos.empty()) return Status::OK();
  if (recorded.size() != algos.size()) {
    return Status(StatusCode::kCorruption,
                  std::string(relative) + ": the metadata records " + std::to_string(recorded.size()) +
                      " hash checksums for " + std::to_string(algos.size()) + " algorithms",
                  StatusDetail::kHashMismatch);
  }
  const std::size_t i = ReadCheckAlgorithm(algos);
  SEDPACK_ASSIGN_OR_RETURN(std::unique_ptr<Hasher> hasher, MakeHasher(algos[i]));
  hasher->Update(bytes);
  const std::string computed = hasher->FinishHex();
  if (computed == recorded[i]) return Status::OK();
  return Status(StatusCode::kCorruption,
                std::string(relative) + ": " + std::string(HashAlgorithmName(algos[i])) +
                    " mismatch (recorded " + recorded[i] + ", computed " + computed + ")",
                StatusDetail::kHashMismatch);
}

Result<ShardsList> LoadShardsListVerified(const Dataset& dataset, const FileInfo& file) {
  const std::string& relative = file.file_path;
  SEDPACK_ASSIGN_OR_RETURN(std::string text, dataset.ReadText(relative, kMaxMetadataBytes));
  SEDPACK_RETURN_NOT_OK(CheckRecordedHash(
      dataset, relative, file.hash_checksums,
      std::span<const std::byte>(reinterpret_cast<const std::byte*>(text.data()), text.size())));
  return metadata_internal::ParseShardsListOwned(std::move(text), relative);
}

Result<ShardsList> LoadShardsListStamped(const Dataset& dataset, std::string_view relative, FileStat* stat) {
  if (dataset.pack() != nullptr) return LoadShardsList(dataset, relative);
  SEDPACK_ASSIGN_OR_RETURN(BeneathFile file, OpenFileBeneath(dataset.root(), relative, dataset.file_system()));
  stat->type = FileType::kRegular;
  stat->size = file.size;
  stat->mtime_ns = file.mtime_ns;
  SEDPACK_ASSIGN_OR_RETURN(std::vector<std::byte> bytes, ReadAllBytes(file.fd.get(), file.size, file.path,
                                                                      kMaxMetadataBytes, dataset.file_system()));
  return metadata_internal::ParseShardsListOwned(std::string(reinterpret_cast<const char*>(bytes.data()), bytes.size()),
                                                 relative);
}

}  // namespace dataset_internal

}  // namespace sedpack
