// SPDX-License-Identifier: Apache-2.0
// JSON configs of `sedpack generate`. nlohmann throws; everything is caught
// here and turned into a Status that names the file and the key.
#include <cmath>
#include <limits>
#include <string>

#include "sedpack/generate/generate.h"
#include "metadata/job_config.h"
#include "sedpack/io/file.h"

namespace sedpack {
namespace {

using job_config::GetBool;
using job_config::GetNumber;
using job_config::GetString;
using job_config::GetUInt;
using job_config::Json;
using job_config::UnknownKey;
using job_config::Where;

constexpr std::string_view kTopKeys = "metadata, dataset_structure, generate";
constexpr std::string_view kGenerateKeys =
    "seed, examples, trace_length, key_group_size, shard_by_key, threads, level, noise_std, "
    "leak_scale, output, progress, append";
constexpr std::string_view kExamplesKeys = "train, test, holdout";

// Parse the `generate` object into `p`; `trace_length` is returned separately
// because it lives in the schema.
Status ParseGenerateObject(const Json& g, std::string_view source, GenerateParams* p,
                           std::optional<std::int64_t>* trace_length) {
  if (!g.is_object()) {
    return Status::InvalidArgument(source, ": \"generate\" must be an object");
  }
  for (const auto& [key, v] : g.items()) {
    const std::string field = "generate." + key;
    if (key == "seed") {
      SEDPACK_ASSIGN_OR_RETURN(p->seed, GetUInt(v, source, field));
    } else if (key == "examples") {
      if (!v.is_object()) {
        return Status::InvalidArgument(Where(source, field),
                                       ": expected an object with keys train, test, holdout");
      }
      for (const auto& [split_name, n] : v.items()) {
        auto split = ParseSplit(split_name);
        if (!split.ok()) return UnknownKey(source, "generate.examples", split_name, kExamplesKeys);
        SEDPACK_ASSIGN_OR_RETURN(p->examples[static_cast<int>(*split)],
                                 GetUInt(n, source, field + "." + split_name));
      }
    } else if (key == "trace_length") {
      SEDPACK_ASSIGN_OR_RETURN(std::uint64_t n, GetUInt(v, source, field));
      if (n > static_cast<std::uint64_t>(kMaxTraceLength)) {
        return Status::InvalidArgument(Where(source, field), ": at most ", kMaxTraceLength);
      }
      *trace_length = static_cast<std::int64_t>(n);
    } else if (key == "key_group_size") {
      SEDPACK_ASSIGN_OR_RETURN(p->key_group_size, GetUInt(v, source, field));
    } else if (key == "shard_by_key") {
      SEDPACK_ASSIGN_OR_RETURN(p->shard_by_key, GetBool(v, source, field));
    } else if (key == "threads") {
      SEDPACK_ASSIGN_OR_RETURN(std::uint64_t n, GetUInt(v, source, field));
      if (n > 4096) return Status::InvalidArgument(Where(source, field), ": at most 4096");
      p->threads = static_cast<int>(n);
    } else if (key == "level") {
      if (!v.is_number_integer() || v.get<std::int64_t>() < -1000000 || v.get<std::int64_t>() > 1000000) {
        return Status::InvalidArgument(Where(source, field), ": must be an integer compression level");
      }
      p->level = static_cast<int>(v.get<std::int64_t>());
    } else if (key == "noise_std") {
      SEDPACK_ASSIGN_OR_RETURN(p->noise_std, GetNumber(v, source, field));
    } else if (key == "leak_scale") {
      SEDPACK_ASSIGN_OR_RETURN(p->leak_scale, GetNumber(v, source, field));
    } else if (key == "output") {
      SEDPACK_ASSIGN_OR_RETURN(p->output, GetString(v, source, field));
    } else if (key == "progress") {
      SEDPACK_ASSIGN_OR_RETURN(p->progress, GetBool(v, source, field));
    } else if (key == "append") {
      SEDPACK_ASSIGN_OR_RETURN(p->append, GetBool(v, source, field));
    } else {
      return UnknownKey(source, "generate", key, kGenerateKeys);
    }
  }
  return Status::OK();
}

Result<GenerateConfig> ParseConfigJson(const Json& root, std::string_view source) {
  if (!root.is_object()) {
    return Status::InvalidArgument(source, ": a config must be a JSON object");
  }
  for (const auto& [key, v] : root.items()) {
    if (key != "metadata" && key != "dataset_structure" && key != "generate") {
      return UnknownKey(source, "", key, kTopKeys);
    }
  }
  GenerateConfig config = DefaultGenerateConfig();
  std::optional<std::int64_t> trace_length;
  if (root.contains("generate")) {
    SEDPACK_RETURN_NOT_OK(
        ParseGenerateObject(root.at("generate"), source, &config.params, &trace_length));
  }
  if (root.contains("metadata")) {
    const Json& m = root.at("metadata");
    if (!m.is_object()) return Status::InvalidArgument(source, ": \"metadata\" must be an object");
    SEDPACK_ASSIGN_OR_RETURN(config.metadata,
                             ParseMetadata(m.dump(), Where(source, "metadata"), /*strict=*/true));
  }
  bool schema_given = false;
  if (root.contains("dataset_structure")) {
    const Json& s = root.at("dataset_structure");
    if (!s.is_object()) {
      return Status::InvalidArgument(source, ": \"dataset_structure\" must be an object");
    }
    // Fill what the config leaves out from the default job, so a config only
    // states what differs (the parser then applies the reference's rules).
    schema_given = s.contains("saved_data_description");
    SEDPACK_ASSIGN_OR_RETURN(config.structure,
                             job_config::ParseStructureWithDefaults(s, config.structure, source));
  }
  if (!schema_given) {
    config.structure.saved_data_description =
        TinyAesAttributes(trace_length.value_or(kDefaultTraceLength));
  } else if (trace_length) {
    auto current = TraceLength(config);
    if (current.ok() && *current != *trace_length) {
      return Status::InvalidArgument(
          source, ": generate.trace_length (", *trace_length,
          ") contradicts dataset_structure.saved_data_description, where trace1 has shape (",
          *current, ",); give one of them");
    }
  }
  return config;
}

}  // namespace

Result<GenerateConfig> ParseGenerateConfig(std::string_view text, std::string_view source) {
  return job_config::ParseConfigText(
      text, source, [&](const Json& root) { return ParseConfigJson(root, source); });
}

Result<GenerateConfig> LoadGenerateConfig(const std::string& path) {
  SEDPACK_ASSIGN_OR_RETURN(std::string text, ReadFileText(path, 64ULL << 20));
  return ParseGenerateConfig(text, path);
}

}  // namespace sedpack
