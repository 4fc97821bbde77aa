// SPDX-License-Identifier: Apache-2.0
// The importers' mapping configs. nlohmann throws; job_config::ParseConfigText
// turns that into a Status, and every check here names the file and the key.
#include "import/mapping_internal.h"

#include <string>

#include "metadata/job_config.h"
#include "sedpack/io/file.h"

namespace sedpack::import_internal {
namespace {

using job_config::GetBool;
using job_config::GetString;
using job_config::GetUInt;
using job_config::Json;
using job_config::UnknownKey;

// A budget below this cannot hold a useful block; above this is surely a typo.
constexpr std::uint64_t kMinBudgetMb = 16;
constexpr std::uint64_t kMaxBudgetMb = 1ULL << 22;

// [first, last) with first < last.
Result<std::pair<std::uint64_t, std::uint64_t>> GetRange(const Json& v, std::string_view source,
                                                         std::string_view field) {
  if (!v.is_array() || v.size() != 2) {
    return MappingError(source, field, "expected [first, last], got " + v.dump());
  }
  SEDPACK_ASSIGN_OR_RETURN(std::uint64_t a, GetUInt(v[0], source, field));
  SEDPACK_ASSIGN_OR_RETURN(std::uint64_t b, GetUInt(v[1], source, field));
  if (a >= b || b > static_cast<std::uint64_t>(INT64_MAX)) {
    return MappingError(source, field, "expected first < last (a half-open range), got " + v.dump());
  }
  return std::make_pair(a, b);
}

Status ParseSourceKey(const std::string& key, const Json& x, std::string_view source, const std::string& field,
                      bool allow_dtype, SourceSpec* s) {
  const std::string f = field + "." + key;
  if (key == "dataset") {
    SEDPACK_ASSIGN_OR_RETURN(s->dataset, GetString(x, source, f));
  } else if (key == "field") {
    SEDPACK_ASSIGN_OR_RETURN(s->field, GetString(x, source, f));
    if (s->field.empty()) return MappingError(source, f, "must not be empty");
  } else if (key == "columns") {
    SEDPACK_ASSIGN_OR_RETURN(auto r, GetRange(x, source, f));
    s->columns = std::make_pair(static_cast<std::int64_t>(r.first), static_cast<std::int64_t>(r.second));
  } else if (key == "dtype" && allow_dtype) {
    SEDPACK_ASSIGN_OR_RETURN(std::string name, GetString(x, source, f));
    auto d = ParseDType(name);
    if (!d.ok()) return MappingError(source, f, d.status().message());
    s->dtype = *d;
  } else {
    return UnknownKey(source, field, key,
                      allow_dtype ? std::string_view("dataset, field, columns, dtype")
                                  : std::string_view("dataset, field, columns"));
  }
  return Status::OK();
}

Result<SourceSpec> ParseSource(const Json& v, std::string_view source, const std::string& field, bool allow_dtype,
                               const Dialect& d) {
  SourceSpec s;
  if (v.is_string()) {
    s.dataset = v.get<std::string>();
  } else if (v.is_object()) {
    for (const auto& [key, x] : v.items()) {
      SEDPACK_RETURN_NOT_OK(ParseSourceKey(key, x, source, field, allow_dtype, &s));
    }
  } else {
    return MappingError(source, field, "expected " + std::string(d.source_forms) + ", got " + v.dump());
  }
  if (d.finish_source) SEDPACK_RETURN_NOT_OK(d.finish_source(&s, source, field));
  return s;
}

Result<SourceMap> ParseSourceMap(const Json& v, std::string_view source, const std::string& field,
                                 bool allow_dtype, const Dialect& d) {
  if (!v.is_object()) return MappingError(source, field, "expected an object {name: source}");
  SourceMap out;
  for (const auto& [name, x] : v.items()) {
    SEDPACK_ASSIGN_OR_RETURN(SourceSpec s, ParseSource(x, source, field + "." + name, allow_dtype, d));
    out.emplace_back(name, std::move(s));
  }
  return out;
}

Status ParseSplitObject(const Json& v, std::string_view source, const std::string& field, const Dialect& d,
                        SplitSpec* m) {
  if (!v.is_object()) return MappingError(source, field, "expected an object");
  for (const auto& [key, x] : v.items()) {
    const std::string f = field + "." + key;
    if (key == "rows") {
      SEDPACK_ASSIGN_OR_RETURN(auto r, GetRange(x, source, f));
      m->rows = r;
    } else if (key == "attributes") {
      SEDPACK_ASSIGN_OR_RETURN(m->attributes, ParseSourceMap(x, source, f, /*allow_dtype=*/false, d));
    } else if (key == "shard_custom_metadata" && d.shard_custom_metadata) {
      SEDPACK_ASSIGN_OR_RETURN(m->shard_custom_metadata, ParseSourceMap(x, source, f, /*allow_dtype=*/true, d));
    } else {
      return UnknownKey(source, field, key,
                        d.shard_custom_metadata ? std::string_view("rows, attributes, shard_custom_metadata")
                                                : std::string_view("rows, attributes"));
    }
  }
  return Status::OK();
}

Status ParseSplits(const Json& v, std::string_view source, const std::string& field, const Dialect& d,
                   MappingParams* p) {
  if (!v.is_object()) return MappingError(source, field, "expected an object {split: mapping}");
  for (const auto& [name, x] : v.items()) {
    auto split = ParseSplit(name);
    if (!split.ok()) return UnknownKey(source, field, name, "train, test, holdout");
    SplitSpec m;
    m.split = *split;
    const std::string sf = field + "." + name;
    SEDPACK_RETURN_NOT_OK(ParseSplitObject(x, source, sf, d, &m));
    if (d.check_split_count) {
      for (const SplitSpec& other : p->splits) {
        if (other.split == m.split) return MappingError(source, sf, "the split is mapped twice");
      }
    }
    p->splits.push_back(std::move(m));
  }
  return Status::OK();
}

// The keys only a whole-job mapping (import_hdf5) has.
Status ParseJobKey(const std::string& key, const Json& v, std::string_view source, const std::string& field,
                   MappingParams* p) {
  if (key == "inputs") {
    if (!v.is_array()) return MappingError(source, field, "expected a list of file names");
    p->inputs.clear();
    for (const Json& x : v) {
      SEDPACK_ASSIGN_OR_RETURN(std::string s, GetString(x, source, field));
      p->inputs.push_back(std::move(s));
    }
  } else if (key == "output") {
    SEDPACK_ASSIGN_OR_RETURN(p->output, GetString(v, source, field));
  } else {  // "level"
    if (!v.is_number_integer() || v.get<std::int64_t>() < -1000000 || v.get<std::int64_t>() > 1000000) {
      return MappingError(source, field, "must be an integer compression level");
    }
    p->level = static_cast<int>(v.get<std::int64_t>());
  }
  return Status::OK();
}

Status ParseImportObject(const Json& g, std::string_view source, const Dialect& d, MappingParams* p) {
  const std::string& key = d.key;
  if (!g.is_object()) return Status::InvalidArgument(source, ": \"", key, "\" must be an object");
  for (const auto& [k, v] : g.items()) {
    const std::string field = key + "." + k;
    if (k == "splits") {
      SEDPACK_RETURN_NOT_OK(ParseSplits(v, source, field, d, p));
    } else if (d.job_keys && (k == "inputs" || k == "output" || k == "level")) {
      SEDPACK_RETURN_NOT_OK(ParseJobKey(k, v, source, field, p));
    } else if (k == "memory_budget_mb") {
      SEDPACK_ASSIGN_OR_RETURN(std::uint64_t mb, GetUInt(v, source, field));
      if (mb < kMinBudgetMb || mb > kMaxBudgetMb) {
        return MappingError(source, field,
                            "must be between " + std::to_string(kMinBudgetMb) + " and " + std::to_string(kMaxBudgetMb));
      }
      p->memory_budget_bytes = mb << 20;
    } else if (k == "threads") {
      SEDPACK_ASSIGN_OR_RETURN(std::uint64_t n, GetUInt(v, source, field));
      if (n > 4096) return MappingError(source, field, "at most 4096");
      p->threads = static_cast<int>(n);
    } else if (k == "progress") {
      SEDPACK_ASSIGN_OR_RETURN(p->progress, GetBool(v, source, field));
    } else {
      return UnknownKey(source, key, k,
                        d.job_keys ? std::string_view("splits, inputs, output, memory_budget_mb, threads, level, progress")
                                   : std::string_view("splits, memory_budget_mb, threads, progress"));
    }
  }
  if (d.check_split_count && p->splits.empty()) return MappingError(source, key + ".splits", "no split is mapped");
  return Status::OK();
}

Result<MappingConfig> ParseRoot(const Json& root, std::string_view source, const Dialect& d) {
  if (!root.is_object()) return Status::InvalidArgument(source, ": a config must be a JSON object");
  for (const auto& [k, v] : root.items()) {
    if (k != "metadata" && k != "dataset_structure" && k != d.key) {
      return UnknownKey(source, "", k, "metadata, dataset_structure, " + d.key);
    }
  }
  MappingConfig c;
  if (!root.contains(d.key)) return Status::InvalidArgument(source, ": missing \"", d.key, "\" (the mapping)");
  SEDPACK_RETURN_NOT_OK(ParseImportObject(root.at(d.key), source, d, &c.params));
  if (root.contains("metadata")) {
    const Json& m = root.at("metadata");
    if (!m.is_object()) return Status::InvalidArgument(source, ": \"metadata\" must be an object");
    SEDPACK_ASSIGN_OR_RETURN(c.metadata, ParseMetadata(m.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace),
                                                       std::string(source) + ": metadata", true));
  }
  const bool has_structure = root.contains("dataset_structure") && root.at("dataset_structure").is_object();
  if (!has_structure && d.name_missing_structure) {
    return Status::InvalidArgument(source, ": missing \"dataset_structure\" object (with saved_data_description)");
  }
  if (!has_structure || !root.at("dataset_structure").contains("saved_data_description")) {
    return Status::InvalidArgument(source, ": dataset_structure.saved_data_description is required (the attributes)");
  }
  // What a config leaves out takes the library's defaults.
  SEDPACK_ASSIGN_OR_RETURN(c.structure, job_config::ParseStructureWithDefaults(root.at("dataset_structure"),
                                                                               DatasetStructure{}, source));
  return c;
}

}  // namespace

Status MappingError(std::string_view source, std::string_view field, std::string_view what) {
  return Status::InvalidArgument(source, ": ", field, ": ", what);
}

Result<MappingConfig> ParseMapping(std::string_view text, std::string_view source, const Dialect& dialect) {
  return job_config::ParseConfigText(text, source,
                                     [&](const Json& root) { return ParseRoot(root, source, dialect); });
}

Result<MappingConfig> LoadMapping(const std::string& path, const Dialect& dialect) {
  SEDPACK_ASSIGN_OR_RETURN(std::string text, ReadFileText(path, 64ULL << 20));
  return ParseMapping(text, path, dialect);
}

}  // namespace sedpack::import_internal
