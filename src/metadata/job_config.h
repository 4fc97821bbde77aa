// SPDX-License-Identifier: Apache-2.0
// Shared plumbing of the job configs (`sedpack generate`, `sedpack import-hdf5`):
// typed getters and unknown-key errors that name the file and the key, and the
// `dataset_structure` object read with the job's defaults filled in. Private to
// src/; users of this header link nlohmann_json themselves. nlohmann throws;
// ParseConfigText turns every exception into a Status.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <string_view>

#include "sedpack/metadata/models.h"
#include "sedpack/status.h"

namespace sedpack::job_config {

using Json = nlohmann::ordered_json;

inline std::string Where(std::string_view source, std::string_view field) {
  std::string s(source);
  s += ": ";
  s += field;
  return s;
}

/// `source: unknown key "object.key" in "object" (allowed: ...)`.
inline Status UnknownKey(std::string_view source, std::string_view object, const std::string& key,
                         std::string_view allowed) {
  std::string field = object.empty() ? key : std::string(object) + "." + key;
  return Status::InvalidArgument(source, ": unknown key \"", field, "\"",
                                 object.empty() ? "" : " in \"" + std::string(object) + "\"",
                                 " (allowed: ", allowed, ")");
}

inline Result<std::uint64_t> GetUInt(const Json& v, std::string_view source, std::string_view field) {
  if (v.is_number_unsigned()) return v.get<std::uint64_t>();
  if (v.is_number_integer() && v.get<std::int64_t>() >= 0) {
    return static_cast<std::uint64_t>(v.get<std::int64_t>());
  }
  return Status::InvalidArgument(Where(source, field), ": expected a non-negative integer, got ",
                                 v.dump());
}

inline Result<double> GetNumber(const Json& v, std::string_view source, std::string_view field) {
  if (v.is_number()) return v.get<double>();
  return Status::InvalidArgument(Where(source, field), ": expected a number, got ", v.dump());
}

inline Result<bool> GetBool(const Json& v, std::string_view source, std::string_view field) {
  if (v.is_boolean()) return v.get<bool>();
  return Status::InvalidArgument(Where(source, field), ": expected true or false, got ", v.dump());
}

inline Result<std::string> GetString(const Json& v, std::string_view source, std::string_view field) {
  if (v.is_string()) return v.get<std::string>();
  return Status::InvalidArgument(Where(source, field), ": expected a string, got ", v.dump());
}

/// Parse `text` and hand the root to `fn`; malformed JSON and any nlohmann
/// exception become InvalidArgument naming `source`.
template <typename Fn>
auto ParseConfigText(std::string_view text, std::string_view source, Fn fn) -> decltype(fn(Json{})) {
  Json root;
  try {
    root = Json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    return Status::InvalidArgument(source, ": not valid JSON: ", e.what());
  }
  try {
    return fn(root);
  } catch (const nlohmann::json::exception& e) {
    return Status::InvalidArgument(source, ": ", e.what());
  }
}

/// A config's `dataset_structure` object, with the keys it leaves out taken from
/// `defaults` (an empty saved_data_description if it has none), parsed strictly
/// with the dataset_info.json rules.
inline Result<DatasetStructure> ParseStructureWithDefaults(Json s, const DatasetStructure& defaults,
                                                           std::string_view source) {
  if (!s.is_object()) return Status::InvalidArgument(source, ": \"dataset_structure\" must be an object");
  if (!s.contains("saved_data_description")) s["saved_data_description"] = Json::array();
  if (!s.contains("compression")) s["compression"] = std::string(CompressionName(defaults.compression));
  if (!s.contains("examples_per_shard")) s["examples_per_shard"] = defaults.examples_per_shard;
  if (!s.contains("shard_file_type")) {
    s["shard_file_type"] = std::string(ShardFileTypeName(defaults.shard_file_type));
  }
  if (!s.contains("hash_checksum_algorithms")) {
    Json algos = Json::array();
    for (HashAlgorithm h : defaults.hash_checksum_algorithms) algos.push_back(HashAlgorithmName(h));
    s["hash_checksum_algorithms"] = algos;
  }
  return ParseDatasetStructure(s.dump(), Where(source, "dataset_structure"), /*strict=*/true);
}

}  // namespace sedpack::job_config
