// SPDX-License-Identifier: Apache-2.0
// Mapping configs of the capture importers: the import_hdf5 shape under
// "import_trs" / "import_chipwhisperer", with capture field names as sources.
#include <algorithm>
#include <string>

#include "metadata/job_config.h"
#include "sedpack/capture/import.h"
#include "sedpack/io/file.h"

namespace sedpack {
namespace {

using job_config::GetBool;
using job_config::GetString;
using job_config::GetUInt;
using job_config::Json;
using job_config::UnknownKey;

Status Err(std::string_view source, std::string_view field, std::string_view what) {
  return Status::InvalidArgument(source, ": ", field, ": ", what);
}

Result<std::pair<std::uint64_t, std::uint64_t>> GetRange(const Json& v, std::string_view source,
                                                         std::string_view field) {
  if (!v.is_array() || v.size() != 2) return Err(source, field, "expected [first, last], got " + v.dump());
  SEDPACK_ASSIGN_OR_RETURN(std::uint64_t a, GetUInt(v[0], source, field));
  SEDPACK_ASSIGN_OR_RETURN(std::uint64_t b, GetUInt(v[1], source, field));
  if (a >= b || b > static_cast<std::uint64_t>(INT64_MAX)) {
    return Err(source, field, "expected first < last (a half-open range), got " + v.dump());
  }
  return std::make_pair(a, b);
}

Result<CaptureSource> ParseSource(const Json& v, std::string_view source, const std::string& field) {
  CaptureSource s;
  if (v.is_string()) {
    s.field = v.get<std::string>();
  } else if (v.is_object()) {
    std::string member;
    for (const auto& [key, x] : v.items()) {
      const std::string f = field + "." + key;
      if (key == "dataset") {
        SEDPACK_ASSIGN_OR_RETURN(s.field, GetString(x, source, f));
      } else if (key == "field") {
        SEDPACK_ASSIGN_OR_RETURN(member, GetString(x, source, f));
        if (member.empty()) return Err(source, f, "must not be empty");
      } else if (key == "columns") {
        SEDPACK_ASSIGN_OR_RETURN(auto r, GetRange(x, source, f));
        s.columns = std::make_pair(static_cast<std::int64_t>(r.first), static_cast<std::int64_t>(r.second));
      } else {
        return UnknownKey(source, field, key, "dataset, field, columns");
      }
    }
    if (!member.empty()) s.field += "." + member;
  } else {
    return Err(source, field, "expected \"field\" or {\"dataset\": ..., \"columns\": ...}, got " + v.dump());
  }
  if (s.field.empty()) return Err(source, field, "missing source field (e.g. \"samples\")");
  return s;
}

Status ParseImportObject(const Json& g, std::string_view source, const std::string& key, CaptureImportParams* p) {
  if (!g.is_object()) return Status::InvalidArgument(source, ": \"", key, "\" must be an object");
  for (const auto& [k, v] : g.items()) {
    const std::string field = key + "." + k;
    if (k == "splits") {
      if (!v.is_object()) return Err(source, field, "expected an object {split: mapping}");
      for (const auto& [name, x] : v.items()) {
        auto split = ParseSplit(name);
        if (!split.ok()) return UnknownKey(source, field, name, "train, test, holdout");
        CaptureSplitMapping m;
        m.split = *split;
        const std::string sf = field + "." + name;
        if (!x.is_object()) return Err(source, sf, "expected an object");
        for (const auto& [sk, sv] : x.items()) {
          if (sk == "rows") {
            SEDPACK_ASSIGN_OR_RETURN(auto r, GetRange(sv, source, sf + ".rows"));
            m.rows = r;
          } else if (sk == "attributes") {
            if (!sv.is_object()) return Err(source, sf + ".attributes", "expected an object {name: source}");
            for (const auto& [an, av] : sv.items()) {
              SEDPACK_ASSIGN_OR_RETURN(CaptureSource s, ParseSource(av, source, sf + ".attributes." + an));
              m.attributes.emplace_back(an, std::move(s));
            }
          } else {
            return UnknownKey(source, sf, sk, "rows, attributes");
          }
        }
        for (const auto& other : p->splits) {
          if (other.split == m.split) return Err(source, sf, "the split is mapped twice");
        }
        p->splits.push_back(std::move(m));
      }
    } else if (k == "memory_budget_mb") {
      SEDPACK_ASSIGN_OR_RETURN(std::uint64_t mb, GetUInt(v, source, field));
      if (mb < 16 || mb > (1ULL << 22)) return Err(source, field, "must be between 16 and 4194304");
      p->memory_budget_bytes = mb << 20;
    } else if (k == "threads") {
      SEDPACK_ASSIGN_OR_RETURN(std::uint64_t n, GetUInt(v, source, field));
      if (n > 4096) return Err(source, field, "at most 4096");
      p->threads = static_cast<int>(n);
    } else if (k == "progress") {
      SEDPACK_ASSIGN_OR_RETURN(p->progress, GetBool(v, source, field));
    } else {
      return UnknownKey(source, key, k, "splits, memory_budget_mb, threads, progress");
    }
  }
  if (p->splits.empty()) return Err(source, key + ".splits", "no split is mapped");
  return Status::OK();
}

// Shards of about 4 MB: small enough to read one at random, large enough that
// a million traces are not a million files.
std::int64_t ExamplesPerShard(std::uint64_t row_bytes) {
  const std::uint64_t n = (4ULL << 20) / std::max<std::uint64_t>(row_bytes, 1);
  std::uint64_t p = 16;
  while (p * 2 <= n && p < 65536) p *= 2;
  return static_cast<std::int64_t>(p);
}

}  // namespace

std::string CaptureSource::Describe() const {
  std::string s = "\"" + field + "\"";
  if (columns) s += " columns [" + std::to_string(columns->first) + ", " + std::to_string(columns->second) + ")";
  return s;
}

Result<CaptureImportConfig> ParseCaptureImportConfig(std::string_view text, std::string_view source,
                                                     std::string_view key_view) {
  const std::string key(key_view);
  return job_config::ParseConfigText(text, source, [&](const Json& root) -> Result<CaptureImportConfig> {
    if (!root.is_object()) return Status::InvalidArgument(source, ": a config must be a JSON object");
    for (const auto& [k, v] : root.items()) {
      if (k != "metadata" && k != "dataset_structure" && k != key) {
        return UnknownKey(source, "", k, "metadata, dataset_structure, " + key);
      }
    }
    CaptureImportConfig c;
    if (!root.contains(key)) return Status::InvalidArgument(source, ": missing \"", key, "\" (the mapping)");
    SEDPACK_RETURN_NOT_OK(ParseImportObject(root.at(key), source, key, &c.params));
    if (root.contains("metadata")) {
      const Json& m = root.at("metadata");
      if (!m.is_object()) return Status::InvalidArgument(source, ": \"metadata\" must be an object");
      SEDPACK_ASSIGN_OR_RETURN(c.metadata, ParseMetadata(m.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace), std::string(source) + ": metadata", true));
    }
    if (!root.contains("dataset_structure") || !root.at("dataset_structure").is_object() ||
        !root.at("dataset_structure").contains("saved_data_description")) {
      return Status::InvalidArgument(source,
                                     ": dataset_structure.saved_data_description is required (the attributes)");
    }
    SEDPACK_ASSIGN_OR_RETURN(c.structure, job_config::ParseStructureWithDefaults(root.at("dataset_structure"),
                                                                                 DatasetStructure{}, source));
    return c;
  });
}

Result<CaptureImportConfig> LoadCaptureImportConfig(const std::string& path, std::string_view key) {
  SEDPACK_ASSIGN_OR_RETURN(std::string text, ReadFileText(path, 64ULL << 20));
  return ParseCaptureImportConfig(text, path, key);
}

std::string SuggestCaptureMapping(const CaptureInput& input, std::string_view key) {
  Json root = Json::object();
  Json meta = Json::object();
  meta["description"] = "imported from " + input.Describe();
  meta["custom_metadata"] = Json::parse(input.dataset_custom_metadata());
  root["metadata"] = meta;
  Json attrs = Json::array();
  Json map = Json::object();
  std::uint64_t row_bytes = 0;
  for (const CaptureField& f : input.fields()) {
    if (f.suggested_attribute.empty()) continue;
    row_bytes += f.row_bytes;
    Json a = Json::object();
    a["name"] = f.suggested_attribute;
    a["dtype"] = std::string(DTypeName(f.dtype));
    a["shape"] = f.dtype == DType::kStr ? Json::array() : Json(f.shape);
    Json cm = Json::parse(f.custom_metadata);
    if (!cm.empty()) a["custom_metadata"] = cm;
    attrs.push_back(a);
    map[f.suggested_attribute] = f.name;
  }
  root["dataset_structure"] = {{"saved_data_description", attrs},
                               {"compression", "LZ4"},
                               {"examples_per_shard", ExamplesPerShard(row_bytes)},
                               {"shard_file_type", "fb"}};
  root[std::string(key)] = {{"splits", {{"train", {{"attributes", map}}}}}};
  return root.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

}  // namespace sedpack
