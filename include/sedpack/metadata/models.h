// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sedpack/metadata/json_value.h"
#include "sedpack/status.h"
#include "sedpack/types.h"

namespace sedpack {

/// The `sedpack_version` written by default: the oldest reference release that
/// reads everything this library writes (see docs/format.md, "Reading rule").
inline constexpr std::string_view kDefaultSedpackVersion = "0.1.4";
/// The reference version whose reader behaviour we implement; datasets whose
/// `sedpack_version` is newer are refused, as the reference refuses them.
inline constexpr std::string_view kReaderSedpackVersion = "0.1.4";

/// One attribute of `saved_data_description` (model `Attribute`). `dtype` keeps
/// the stored string: the reference does not validate it on load.
struct Attribute {
  std::string name;
  std::string dtype;
  Shape shape;
  /// Empty unless given: `Attribute{name, dtype, shape}` leaves it so.
  JsonValue custom_metadata{};

  /// Typed form; InvalidArgument naming the attribute on an unsupported dtype.
  Result<AttributeSpec> ToSpec() const;
};

/// Model `Metadata`.
struct Metadata {
  std::string description;
  std::string dataset_license = "https://creativecommons.org/licenses/by/4.0/";
  std::string dataset_version = "1.0.0";
  std::string download_from;
  JsonValue custom_metadata;
  std::string sedpack_version = std::string(kDefaultSedpackVersion);
};

/// Model `DatasetStructure`.
struct DatasetStructure {
  std::vector<Attribute> saved_data_description;
  Compression compression = Compression::kGzip;
  std::int64_t examples_per_shard = 256;
  ShardFileType shard_file_type = ShardFileType::kFb;
  std::vector<HashAlgorithm> hash_checksum_algorithms = {HashAlgorithm::kSha256};

  /// Typed schema in declaration order.
  Result<std::vector<AttributeSpec>> Schema() const;
};

/// Model `FileInfo`: a path relative to the dataset root plus one hex digest per
/// algorithm of `hash_checksum_algorithms`, in that order.
struct FileInfo {
  std::string file_path;
  std::vector<std::string> hash_checksums;
};

/// Model `ShardListInfo`: a pointer to a `shards_list.json` with subtree totals.
struct ShardListInfo {
  FileInfo shard_list_info_file;
  std::int64_t number_of_examples = 0;
  std::int64_t number_of_shards = 0;
};

/// Model `ShardInfo`: one shard file (the reference only uses file_infos[0]).
struct ShardInfo {
  std::vector<FileInfo> file_infos;
  std::int64_t number_of_examples = 0;
  JsonValue custom_metadata;
};

/// Model `ShardsList`: the content of one `shards_list.json`.
struct ShardsList {
  std::string relative_path_self;
  std::int64_t number_of_examples = 0;
  std::vector<ShardInfo> shard_files;
  std::vector<ShardListInfo> children_shard_lists;
};

/// Model `DatasetInfo`: the content of `dataset_info.json`. `splits` keeps the
/// order of the JSON object (order of first write).
struct DatasetInfo {
  Metadata metadata;
  DatasetStructure dataset_structure;
  std::vector<std::pair<Split, ShardListInfo>> splits;

  const ShardListInfo* FindSplit(Split s) const;
  ShardListInfo* FindSplit(Split s);
};

/// Parse `dataset_info.json` text with the reference's validation (required keys,
/// lax int coercion, known enums, positive dims, `..` rejected, shards_list.json
/// names) plus absolute paths rejected. Errors name `source` (a file name) and the
/// JSON field path, e.g. "dataset_info.json: dataset_structure.compression: ...".
/// Does not run the version check (see CheckSedpackVersion).
Result<DatasetInfo> ParseDatasetInfo(std::string_view text, std::string_view source);
/// Serialize exactly as the reference does (pydantic model_dump_json(indent=2),
/// all fields, no trailing newline).
std::string SerializeDatasetInfo(const DatasetInfo& info);

/// Parse a `shards_list.json` (same rules as ParseDatasetInfo).
Result<ShardsList> ParseShardsList(std::string_view text, std::string_view source);
/// Serialize as the reference does (indent=2, exclude_defaults=True).
std::string SerializeShardsList(const ShardsList& list);

/// Parse a DatasetStructure / Metadata from JSON object text (configs use the same
/// schema as dataset_info.json). Unknown keys are an error when `strict`.
Result<DatasetStructure> ParseDatasetStructure(std::string_view text, std::string_view source,
                                               bool strict);
Result<Metadata> ParseMetadata(std::string_view text, std::string_view source, bool strict);

/// SemVer 2.0 version, parsed strictly (as python-semver's Version.parse).
struct SemVer {
  std::uint64_t major = 0, minor = 0, patch = 0;
  std::vector<std::string> prerelease;  // dot-separated identifiers
  std::string build;
};
Result<SemVer> ParseSemVer(std::string_view text);
/// <0, 0, >0 by SemVer precedence (build ignored).
int CompareSemVer(const SemVer& a, const SemVer& b);
/// The reference's rule: the dataset's version must parse and be <= the reader's.
/// InvalidArgument with a message saying which versions were compared.
Status CheckSedpackVersion(std::string_view dataset_version,
                           std::string_view reader_version = kReaderSedpackVersion);

}  // namespace sedpack
