// SPDX-License-Identifier: Apache-2.0
// Mapping configs of the capture importers: the shared mapping parser
// (import/mapping_internal.h) under "import_trs" / "import_chipwhisperer",
// with capture field names as sources; and a starting mapping for an input.
#include <algorithm>
#include <string>

#include "import/mapping_internal.h"
#include "metadata/job_config.h"
#include "sedpack/capture/import.h"

namespace sedpack {
namespace {

using job_config::Json;

using import_internal::MappingConfig;
using import_internal::SourceSpec;

// A capture source names one field: "data.INPUT" is {"dataset": "data", "field": "INPUT"}.
Status FinishCaptureSource(SourceSpec* s, std::string_view source, const std::string& field) {
  if (!s->field.empty()) s->dataset += "." + s->field;
  s->field.clear();
  if (s->dataset.empty()) return import_internal::MappingError(source, field, "missing source field (e.g. \"samples\")");
  return Status::OK();
}

import_internal::Dialect CaptureDialect(std::string_view key) {
  import_internal::Dialect d;
  d.key = std::string(key);
  d.source_forms = "\"field\" or {\"dataset\": ..., \"columns\": ...}";
  d.check_split_count = true;
  d.finish_source = FinishCaptureSource;
  return d;
}

CaptureImportConfig ToCaptureConfig(MappingConfig m) {
  CaptureImportConfig c;
  c.metadata = std::move(m.metadata);
  c.structure = std::move(m.structure);
  c.params.memory_budget_bytes = m.params.memory_budget_bytes;
  c.params.threads = m.params.threads;
  c.params.progress = m.params.progress;
  for (import_internal::SplitSpec& split : m.params.splits) {
    CaptureSplitMapping& out = c.params.splits.emplace_back();
    out.split = split.split;
    out.rows = split.rows;
    for (auto& [name, spec] : split.attributes) {
      out.attributes.emplace_back(name, CaptureSource{std::move(spec.dataset), spec.columns});
    }
  }
  return c;
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
                                                     std::string_view key) {
  SEDPACK_ASSIGN_OR_RETURN(MappingConfig m, import_internal::ParseMapping(text, source, CaptureDialect(key)));
  return ToCaptureConfig(std::move(m));
}

Result<CaptureImportConfig> LoadCaptureImportConfig(const std::string& path, std::string_view key) {
  SEDPACK_ASSIGN_OR_RETURN(MappingConfig m, import_internal::LoadMapping(path, CaptureDialect(key)));
  return ToCaptureConfig(std::move(m));
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
