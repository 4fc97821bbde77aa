// SPDX-License-Identifier: Apache-2.0
// Mapping configs of `sedpack import-hdf5`: the shared mapping parser
// (import/mapping_internal.h) with HDF5 dataset paths as sources, and the
// checks that need no file.
#include "sedpack/hdf5/mapping.h"

#include <algorithm>
#include <set>
#include <string>

#include "import/mapping_internal.h"
#include "sedpack/dataset/dataset.h"

namespace sedpack {
namespace {

using import_internal::MappingConfig;
using import_internal::SourceSpec;

Status FinishHdf5Source(SourceSpec* s, std::string_view source, const std::string& field) {
  while (!s->dataset.empty() && s->dataset.front() == '/') s->dataset.erase(0, 1);
  if (s->dataset.empty()) return import_internal::MappingError(source, field + ".dataset", "missing HDF5 dataset path");
  if (s->columns && !s->field.empty()) {
    return import_internal::MappingError(
        source, field + ".columns",
        "a column window applies to a plain (non-compound) dataset, not to field \"" + s->field + "\"");
  }
  return Status::OK();
}

const import_internal::Dialect& Hdf5Dialect() {
  static const import_internal::Dialect d = [] {
    import_internal::Dialect x;
    x.key = "import_hdf5";
    x.job_keys = true;
    x.shard_custom_metadata = true;
    x.source_forms = "\"path/in/file\" or {\"dataset\": ..., \"field\": ...}";
    x.name_missing_structure = true;
    x.finish_source = FinishHdf5Source;
    return x;
  }();
  return d;
}

std::vector<std::pair<std::string, Hdf5Source>> ToHdf5Sources(import_internal::SourceMap& map) {
  std::vector<std::pair<std::string, Hdf5Source>> out;
  for (auto& [name, spec] : map) {
    out.emplace_back(name, Hdf5Source{std::move(spec.dataset), std::move(spec.field), spec.columns, spec.dtype});
  }
  return out;
}

Hdf5ImportConfig ToHdf5Config(MappingConfig m) {
  Hdf5ImportConfig c;
  c.metadata = std::move(m.metadata);
  c.structure = std::move(m.structure);
  Hdf5ImportParams& p = c.params;
  p.inputs = std::move(m.params.inputs);
  p.output = std::move(m.params.output);
  p.memory_budget_bytes = m.params.memory_budget_bytes;
  p.threads = m.params.threads;
  p.level = m.params.level;
  p.progress = m.params.progress;
  for (import_internal::SplitSpec& split : m.params.splits) {
    Hdf5SplitMapping& out = p.splits.emplace_back();
    out.split = split.split;
    out.rows = split.rows;
    out.attributes = ToHdf5Sources(split.attributes);
    out.shard_custom_metadata = ToHdf5Sources(split.shard_custom_metadata);
  }
  return c;
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
  SEDPACK_ASSIGN_OR_RETURN(MappingConfig m, import_internal::ParseMapping(text, source, Hdf5Dialect()));
  return ToHdf5Config(std::move(m));
}

Result<Hdf5ImportConfig> LoadHdf5ImportConfig(const std::string& path) {
  SEDPACK_ASSIGN_OR_RETURN(MappingConfig m, import_internal::LoadMapping(path, Hdf5Dialect()));
  return ToHdf5Config(std::move(m));
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
