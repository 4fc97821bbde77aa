// SPDX-License-Identifier: Apache-2.0
// Mapping configs of `sedpack import-hdf5`. nlohmann throws; everything is
// caught here and turned into a Status that names the file and the key.
#include "sedpack/hdf5/mapping.h"

#include <algorithm>
#include <set>
#include <string>

#include "sedpack/dataset/dataset.h"
#include "metadata/job_config.h"
#include "sedpack/io/file.h"

namespace sedpack {
namespace {

using job_config::GetBool;
using job_config::GetString;
using job_config::GetUInt;
using job_config::Json;
using job_config::UnknownKey;

constexpr std::string_view kTopKeys = "metadata, dataset_structure, import_hdf5";
constexpr std::string_view kImportKeys =
    "splits, inputs, output, memory_budget_mb, threads, level, progress";
constexpr std::string_view kSplitKeys = "rows, attributes, shard_custom_metadata";
constexpr std::string_view kSourceKeys = "dataset, field, columns, dtype";
// A budget below this cannot hold a useful block; above this is surely a typo.
constexpr std::uint64_t kMinBudgetMb = 16;
constexpr std::uint64_t kMaxBudgetMb = 1ULL << 22;

Status Err(std::string_view source, std::string_view field, std::string_view what) {
  return Status::InvalidArgument(source, ": ", field, ": ", what);
}

// [first, last) with first < last.
Result<std::pair<std::uint64_t, std::uint64_t>> GetRange(const Json& v, std::string_view source,
                                                         std::string_view field) {
  if (!v.is_array() || v.size() != 2) {
    return Err(source, field, "expected [first, last], got " + v.dump());
  }
  SEDPACK_ASSIGN_OR_RETURN(std::uint64_t a, GetUInt(v[0], source, field));
  SEDPACK_ASSIGN_OR_RETURN(std::uint64_t b, GetUInt(v[1], source, field));
  if (a >= b || b > static_cast<std::uint64_t>(INT64_MAX)) {
    return Err(source, field, "expected first < last (a half-open range), got " + v.dump());
  }
  return std::make_pair(a, b);
}

Result<Hdf5Source> ParseSource(const Json& v, std::string_view source, const std::string& field,
                               bool allow_dtype) {
  Hdf5Source s;
  if (v.is_string()) {
    s.dataset = v.get<std::string>();
  } else if (v.is_object()) {
    for (const auto& [key, x] : v.items()) {
      const std::string f = field + "." + key;
      if (key == "dataset") {
        SEDPACK_ASSIGN_OR_RETURN(s.dataset, GetString(x, source, f));
      } else if (key == "field") {
        SEDPACK_ASSIGN_OR_RETURN(s.field, GetString(x, source, f));
        if (s.field.empty()) return Err(source, f, "must not be empty");
      } else if (key == "columns") {
        SEDPACK_ASSIGN_OR_RETURN(auto r, GetRange(x, source, f));
        s.columns = std::make_pair(static_cast<std::int64_t>(r.first),
                                   static_cast<std::int64_t>(r.second));
      } else if (key == "dtype" && allow_dtype) {
        SEDPACK_ASSIGN_OR_RETURN(std::string name, GetString(x, source, f));
        auto d = ParseDType(name);
        if (!d.ok()) return Err(source, f, d.status().message());
        s.dtype = *d;
      } else {
        return UnknownKey(source, field, key,
                          allow_dtype ? kSourceKeys : std::string_view("dataset, field, columns"));
      }
    }
  } else {
    return Err(source, field,
               "expected \"path/in/file\" or {\"dataset\": ..., \"field\": ...}, got " + v.dump());
  }
  while (!s.dataset.empty() && s.dataset.front() == '/') s.dataset.erase(0, 1);
  if (s.dataset.empty()) return Err(source, field + ".dataset", "missing HDF5 dataset path");
  if (s.columns && !s.field.empty()) {
    return Err(source, field + ".columns",
               "a column window applies to a plain (non-compound) dataset, not to field \"" +
                   s.field + "\"");
  }
  return s;
}

Result<std::vector<std::pair<std::string, Hdf5Source>>> ParseSourceMap(const Json& v,
                                                                       std::string_view source,
                                                                       const std::string& field,
                                                                       bool allow_dtype) {
  if (!v.is_object()) return Err(source, field, "expected an object {name: source}");
  std::vector<std::pair<std::string, Hdf5Source>> out;
  for (const auto& [name, x] : v.items()) {
    SEDPACK_ASSIGN_OR_RETURN(Hdf5Source s, ParseSource(x, source, field + "." + name, allow_dtype));
    out.emplace_back(name, std::move(s));
  }
  return out;
}

Status ParseSplitObject(const Json& v, std::string_view source, const std::string& field,
                        Hdf5SplitMapping* m) {
  if (!v.is_object()) return Err(source, field, "expected an object");
  for (const auto& [key, x] : v.items()) {
    const std::string f = field + "." + key;
    if (key == "rows") {
      SEDPACK_ASSIGN_OR_RETURN(auto r, GetRange(x, source, f));
      m->rows = r;
    } else if (key == "attributes") {
      SEDPACK_ASSIGN_OR_RETURN(m->attributes, ParseSourceMap(x, source, f, /*allow_dtype=*/false));
    } else if (key == "shard_custom_metadata") {
      SEDPACK_ASSIGN_OR_RETURN(m->shard_custom_metadata,
                               ParseSourceMap(x, source, f, /*allow_dtype=*/true));
    } else {
      return UnknownKey(source, field, key, kSplitKeys);
    }
  }
  return Status::OK();
}

Status ParseImportObject(const Json& g, std::string_view source, Hdf5ImportParams* p) {
  if (!g.is_object()) return Status::InvalidArgument(source, ": \"import_hdf5\" must be an object");
  for (const auto& [key, v] : g.items()) {
    const std::string field = "import_hdf5." + key;
    if (key == "splits") {
      if (!v.is_object()) return Err(source, field, "expected an object {split: mapping}");
      for (const auto& [name, x] : v.items()) {
        auto split = ParseSplit(name);
        if (!split.ok()) return UnknownKey(source, field, name, "train, test, holdout");
        Hdf5SplitMapping m;
        m.split = *split;
        SEDPACK_RETURN_NOT_OK(ParseSplitObject(x, source, field + "." + name, &m));
        p->splits.push_back(std::move(m));
      }
    } else if (key == "inputs") {
      if (!v.is_array()) return Err(source, field, "expected a list of file names");
      p->inputs.clear();
      for (const Json& x : v) {
        SEDPACK_ASSIGN_OR_RETURN(std::string s, GetString(x, source, field));
        p->inputs.push_back(std::move(s));
      }
    } else if (key == "output") {
      SEDPACK_ASSIGN_OR_RETURN(p->output, GetString(v, source, field));
    } else if (key == "memory_budget_mb") {
      SEDPACK_ASSIGN_OR_RETURN(std::uint64_t mb, GetUInt(v, source, field));
      if (mb < kMinBudgetMb || mb > kMaxBudgetMb) {
        return Err(source, field,
                   "must be between " + std::to_string(kMinBudgetMb) + " and " +
                       std::to_string(kMaxBudgetMb));
      }
      p->memory_budget_bytes = mb << 20;
    } else if (key == "threads") {
      SEDPACK_ASSIGN_OR_RETURN(std::uint64_t n, GetUInt(v, source, field));
      if (n > 4096) return Err(source, field, "at most 4096");
      p->threads = static_cast<int>(n);
    } else if (key == "level") {
      if (!v.is_number_integer() || v.get<std::int64_t>() < -1000000 || v.get<std::int64_t>() > 1000000) {
        return Err(source, field, "must be an integer compression level");
      }
      p->level = static_cast<int>(v.get<std::int64_t>());
    } else if (key == "progress") {
      SEDPACK_ASSIGN_OR_RETURN(p->progress, GetBool(v, source, field));
    } else {
      return UnknownKey(source, "import_hdf5", key, kImportKeys);
    }
  }
  return Status::OK();
}

Result<Hdf5ImportConfig> ParseConfigJson(const Json& root, std::string_view source) {
  if (!root.is_object()) return Status::InvalidArgument(source, ": a config must be a JSON object");
  for (const auto& [key, v] : root.items()) {
    if (key != "metadata" && key != "dataset_structure" && key != "import_hdf5") {
      return UnknownKey(source, "", key, kTopKeys);
    }
  }
  Hdf5ImportConfig config;
  if (!root.contains("import_hdf5")) {
    return Status::InvalidArgument(source, ": missing \"import_hdf5\" (the mapping)");
  }
  SEDPACK_RETURN_NOT_OK(ParseImportObject(root.at("import_hdf5"), source, &config.params));
  if (root.contains("metadata")) {
    const Json& m = root.at("metadata");
    if (!m.is_object()) return Status::InvalidArgument(source, ": \"metadata\" must be an object");
    SEDPACK_ASSIGN_OR_RETURN(config.metadata,
                             ParseMetadata(m.dump(), std::string(source) + ": metadata", true));
  }
  if (!root.contains("dataset_structure") || !root.at("dataset_structure").is_object()) {
    return Status::InvalidArgument(
        source, ": missing \"dataset_structure\" object (with saved_data_description)");
  }
  const Json& s = root.at("dataset_structure");
  if (!s.contains("saved_data_description")) {
    return Status::InvalidArgument(
        source, ": dataset_structure.saved_data_description is required (the attributes)");
  }
  // What a config leaves out takes the library's defaults.
  SEDPACK_ASSIGN_OR_RETURN(config.structure,
                           job_config::ParseStructureWithDefaults(s, DatasetStructure{}, source));
  return config;
}

bool IsImportableDType(DType d) {
  switch (d) {
    case DType::kInt8: case DType::kInt16: case DType::kInt32: case DType::kInt64:
    case DType::kUInt8: case DType::kUInt16: case DType::kUInt32: case DType::kUInt64:
    case DType::kFloat16: case DType::kFloat32: case DType::kFloat64: case DType::kInt:
      return true;
    default:
      return false;
  }
}

}  // namespace

std::string Hdf5Source::Describe() const {
  std::string s = "/" + dataset;
  if (!field.empty()) s += " field \"" + field + "\"";
  if (columns) {
    s += " columns [" + std::to_string(columns->first) + ", " + std::to_string(columns->second) + ")";
  }
  return s;
}

Result<Hdf5ImportConfig> ParseHdf5ImportConfig(std::string_view text, std::string_view source) {
  return job_config::ParseConfigText(
      text, source, [&](const Json& root) { return ParseConfigJson(root, source); });
}

Result<Hdf5ImportConfig> LoadHdf5ImportConfig(const std::string& path) {
  SEDPACK_ASSIGN_OR_RETURN(std::string text, ReadFileText(path, 64ULL << 20));
  return ParseHdf5ImportConfig(text, path);
}

Status ValidateHdf5ImportConfig(const Hdf5ImportConfig& config) {
  SEDPACK_RETURN_NOT_OK(Dataset::ValidateStructure(config.structure));
  if (Status st = ValidateCodecLevel(config.structure.compression, config.params.level); !st.ok()) {
    return st.WithPrefix("import_hdf5.level: ");
  }
  SEDPACK_ASSIGN_OR_RETURN(std::vector<AttributeSpec> schema, config.structure.Schema());
  if (schema.empty()) {
    return Status::InvalidArgument("dataset_structure.saved_data_description: no attribute");
  }
  for (const AttributeSpec& a : schema) {
    if (!IsImportableDType(a.dtype)) {
      return Status::InvalidArgument("attribute \"", a.name, "\": dtype ", DTypeName(a.dtype),
                                     " cannot be imported from HDF5 (numeric dtypes only)");
    }
  }
  if (config.params.splits.empty()) {
    return Status::InvalidArgument("import_hdf5.splits: no split is mapped");
  }
  std::set<Split> seen;
  for (const Hdf5SplitMapping& m : config.params.splits) {
    const std::string where = "import_hdf5.splits." + std::string(SplitName(m.split));
    if (!seen.insert(m.split).second) {
      return Status::InvalidArgument(where, ": the split is mapped twice");
    }
    for (const auto& mapped : m.attributes) {
      const std::string& name = mapped.first;
      if (std::none_of(schema.begin(), schema.end(),
                       [&](const AttributeSpec& a) { return a.name == name; })) {
        return Status::InvalidArgument(where, ".attributes: \"", name,
                                       "\" is not an attribute of "
                                       "dataset_structure.saved_data_description");
      }
    }
    for (const AttributeSpec& a : schema) {
      const auto n = std::count_if(m.attributes.begin(), m.attributes.end(),
                                   [&](const auto& p) { return p.first == a.name; });
      if (n == 0) {
        return Status::InvalidArgument(where, ".attributes: attribute \"", a.name,
                                       "\" has no source");
      }
      if (n > 1) {
        return Status::InvalidArgument(where, ".attributes: attribute \"", a.name,
                                       "\" is mapped more than once");
      }
    }
    for (const auto& [key, src] : m.shard_custom_metadata) {
      if (key.empty()) return Status::InvalidArgument(where, ".shard_custom_metadata: empty key");
      if (src.dtype && !IsImportableDType(*src.dtype)) {
        return Status::InvalidArgument(where, ".shard_custom_metadata.", key, ".dtype: ",
                                       DTypeName(*src.dtype), " is not numeric");
      }
    }
  }
  return Status::OK();
}

}  // namespace sedpack
