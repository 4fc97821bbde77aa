// SPDX-License-Identifier: Apache-2.0
#include "sedpack/hdf5/inspect.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <map>
#include <optional>
#include <set>

#include "hdf5/h5_internal.h"

namespace sedpack {
namespace {

using Json = nlohmann::ordered_json;

// How a type is shown, and the sedpack dtype a mapping would give it.
struct TypeView {
  std::string text;
  bool numeric = false;
  std::string dtype;
  std::uint64_t value_bytes = 0;
};

TypeView ViewType(hid_t type) {
  TypeView v;
  auto e = h5::DescribeElemType(type, "");
  if (e.ok()) {
    v.text = e->Name();
    switch (e->kind) {
      case h5::ElemKind::kNumber: {
        auto d = h5::NaturalDType(e->num);
        v.numeric = d.ok();
        if (d.ok()) v.dtype = e->bool_enum ? "bool" : std::string(DTypeName(*d));
        break;
      }
      case h5::ElemKind::kFixedString: case h5::ElemKind::kVarString: v.dtype = "str"; break;
      case h5::ElemKind::kOpaque: v.dtype = "bytes"; v.value_bytes = e->size; break;
      case h5::ElemKind::kVlenBytes: v.dtype = "bytes"; break;
    }
    return v;
  }
  h5::LastError();
  switch (H5Tget_class(type)) {
    case H5T_INTEGER: case H5T_FLOAT: v.text = "unsupported number"; break;
    case H5T_STRING: v.text = "string"; break;
    case H5T_COMPOUND: v.text = "compound"; break;
    case H5T_ENUM: v.text = "enum"; break;
    case H5T_ARRAY: v.text = "array"; break;
    case H5T_OPAQUE: v.text = "opaque"; break;
    case H5T_REFERENCE: v.text = "reference"; break;
    case H5T_VLEN: v.text = "variable-length"; break;
    default: v.text = "other"; break;
  }
  return v;
}

struct Walk {
  hid_t file;
  std::vector<Hdf5ObjectInfo>* out;
};

void DescribeDataset(hid_t ds, Hdf5ObjectInfo* info) {
  h5::Handle space(H5Dget_space(ds));
  const int rank = H5Sget_simple_extent_ndims(space.get());
  if (rank > 0) {
    std::vector<hsize_t> dims(static_cast<std::size_t>(rank));
    H5Sget_simple_extent_dims(space.get(), dims.data(), nullptr);
    info->dims.assign(dims.begin(), dims.end());
  }
  h5::Handle type(H5Dget_type(ds));
  const TypeView view = ViewType(type.get());
  info->type = view.text;
  info->numeric = view.numeric;
  info->dtype = view.dtype;
  info->value_bytes = view.value_bytes;
  h5::ReadStringAttribute(ds, "sedpack_dtype", 64, &info->sedpack_dtype);
  if (H5Tget_class(type.get()) == H5T_COMPOUND) {
    const int n = H5Tget_nmembers(type.get());
    for (int i = 0; i < n; ++i) {
      Hdf5FieldInfo field;
      char* name = H5Tget_member_name(type.get(), static_cast<unsigned>(i));
      if (name) {
        field.name = name;
        H5free_memory(name);
      }
      h5::Handle member(H5Tget_member_type(type.get(), static_cast<unsigned>(i)));
      h5::Handle base;
      if (H5Tget_class(member.get()) == H5T_ARRAY) {
        const int nd = H5Tget_array_ndims(member.get());
        std::vector<hsize_t> adims(static_cast<std::size_t>(std::max(nd, 0)));
        if (nd > 0) H5Tget_array_dims2(member.get(), adims.data());
        field.dims.assign(adims.begin(), adims.end());
        base = h5::Handle(H5Tget_super(member.get()));
      } else {
        base = std::move(member);
      }
      const TypeView fview = ViewType(base.get());
      field.type = fview.text;
      field.numeric = fview.numeric;
      field.dtype = fview.dtype;
      field.value_bytes = fview.value_bytes;
      info->fields.push_back(std::move(field));
    }
  }
  h5::Handle dcpl(H5Dget_create_plist(ds));
  switch (H5Pget_layout(dcpl.get())) {
    case H5D_CHUNKED: {
      info->layout = "chunked";
      std::vector<hsize_t> chunk(static_cast<std::size_t>(std::max(rank, 1)));
      if (H5Pget_chunk(dcpl.get(), rank, chunk.data()) == rank) info->chunk.assign(chunk.begin(), chunk.end());
      break;
    }
    case H5D_COMPACT: info->layout = "compact"; break;
    case H5D_CONTIGUOUS: info->layout = "contiguous"; break;
    default: info->layout = "other"; break;
  }
  const int nf = H5Pget_nfilters(dcpl.get());
  for (int i = 0; i < nf; ++i) {
    unsigned flags = 0;
    std::size_t nelem = 0;
    char name[64] = {0};
    unsigned config = 0;
    const H5Z_filter_t id = H5Pget_filter2(dcpl.get(), static_cast<unsigned>(i), &flags, &nelem, nullptr,
                                           sizeof(name), name, &config);
    std::string text = id == H5Z_FILTER_DEFLATE ? "deflate"
                       : id == H5Z_FILTER_SHUFFLE ? "shuffle"
                       : id == H5Z_FILTER_FLETCHER32 ? "fletcher32"
                       : id == H5Z_FILTER_SZIP ? "szip"
                       : name[0] ? std::string(name)
                                 : "filter " + std::to_string(id);
    info->filters.push_back(text);
  }
  info->storage_bytes = H5Dget_storage_size(ds);
}

herr_t Visit(hid_t group, const char* name, const H5L_info_t* linfo, void* data) {
  auto* w = static_cast<Walk*>(data);
  if (linfo->type != H5L_TYPE_HARD) return 0;  // soft/external links are not followed
  Hdf5ObjectInfo info;
  info.path = std::string("/") + name;
  h5::Handle obj(H5Oopen(group, name, H5P_DEFAULT));
  if (!obj.valid()) {
    h5::LastError();
    return 0;
  }
  const H5I_type_t t = H5Iget_type(obj.get());
  if (t == H5I_GROUP) {
    info.is_group = true;
  } else if (t == H5I_DATASET) {
    DescribeDataset(obj.get(), &info);
  } else {
    return 0;
  }
  w->out->push_back(std::move(info));
  return 0;
}

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string Parent(const std::string& path) {
  const std::size_t slash = path.rfind('/');
  return slash == 0 || slash == std::string::npos ? "/" : path.substr(0, slash);
}

std::string Base(const std::string& path) { return path.substr(path.rfind('/') + 1); }

Json ShapeJson(const std::vector<std::uint64_t>& dims) {
  Json a = Json::array();
  for (std::uint64_t d : dims) a.push_back(d);
  if (a.empty()) a.push_back(1);
  return a;
}

}  // namespace

Result<std::vector<Hdf5ObjectInfo>> InspectHdf5(const std::string& path) {
  SEDPACK_ASSIGN_OR_RETURN(h5::Handle file, h5::OpenFile(path));
  std::vector<Hdf5ObjectInfo> out;
  Walk w{file.get(), &out};
  if (H5Lvisit(file.get(), H5_INDEX_NAME, H5_ITER_INC, &Visit, &w) < 0) {
    return Status::IOError(path, ": cannot list the file (HDF5: ", h5::LastError(), ")");
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.path < b.path; });
  return out;
}

namespace {

// The split of each group: by name first (profiling/train, attack/test,
// holdout/valid), then the splits left in group order; a group beyond three
// is left out with a note.
std::map<std::string, std::string> AssignSplits(const std::vector<std::string>& group_order,
                                                std::vector<std::string>* notes) {
  std::map<std::string, std::string> split_of;
  std::set<std::string> used;
  auto by_name = [&](const std::string& g) -> std::string {
    const std::string l = Lower(Base(g));
    if (l.find("profil") != std::string::npos || l.find("train") != std::string::npos) return "train";
    if (l.find("attack") != std::string::npos || l.find("test") != std::string::npos) return "test";
    if (l.find("holdout") != std::string::npos || l.find("valid") != std::string::npos) return "holdout";
    return "";
  };
  for (const std::string& g : group_order) {
    const std::string s = by_name(g);
    if (!s.empty() && !used.count(s)) {
      split_of[g] = s;
      used.insert(s);
    }
  }
  for (const std::string& g : group_order) {
    if (split_of.count(g)) continue;
    for (const char* s : {"train", "test", "holdout"}) {
      if (!used.count(s)) {
        split_of[g] = s;
        used.insert(s);
        break;
      }
    }
    if (!split_of.count(g)) notes->push_back("group " + g + " left out: all three splits are taken");
  }

  return split_of;
}

}  // namespace

namespace {

// What export-hdf5 recorded in the file: the dataset's metadata and structure.
struct ExportedInfo {
  Json metadata;
  Json structure;
  std::vector<std::string> order;     // attribute names in schema order
  std::map<std::string, Json> attrs;  // name -> its saved_data_description entry
};

// Bound on the sedpack_dataset_info text read from an untrusted file.
constexpr std::size_t kMaxInfoBytes = std::size_t{64} << 20;

std::optional<ExportedInfo> ReadExportedInfo(const std::string& path, std::vector<std::string>* notes) {
  auto file = h5::OpenFile(path);
  std::string text;
  if (!file.ok() || !h5::ReadStringAttribute(file->get(), "sedpack_dataset_info", kMaxInfoBytes, &text)) {
    return std::nullopt;
  }
  Json info = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  ExportedInfo out;
  const bool usable = info.is_object() && info.contains("metadata") && info["metadata"].is_object() &&
                      info.contains("dataset_structure") && info["dataset_structure"].is_object() &&
                      info["dataset_structure"].contains("saved_data_description") &&
                      info["dataset_structure"]["saved_data_description"].is_array();
  if (usable) {
    out.metadata = info["metadata"];
    out.structure = info["dataset_structure"];
    for (const Json& a : out.structure["saved_data_description"]) {
      if (!a.is_object() || !a.contains("name") || !a["name"].is_string()) continue;
      out.order.push_back(a["name"].get<std::string>());
      out.attrs[out.order.back()] = a;
    }
  }
  if (!usable || out.order.empty()) {
    notes->push_back("the root attribute sedpack_dataset_info is not a dataset_info.json; ignored");
    return std::nullopt;
  }
  return out;
}

// One proposed attribute: its saved_data_description entry, or nothing (and
// a note saying why). `dtype` and `value_bytes` as inspect found them.
std::optional<Json> ProposeAttribute(const std::string& name, const std::string& where, const std::string& type,
                                     std::string dtype, std::uint64_t value_bytes, const std::string& sedpack_dtype,
                                     const std::vector<std::uint64_t>& row_dims, const std::optional<ExportedInfo>& info,
                                     std::vector<std::string>* notes) {
  if (dtype.empty()) {
    notes->push_back(where + " left out: " + type + " values");
    return std::nullopt;
  }
  const bool byte_like = dtype == "str" || dtype == "bytes";
  if (byte_like && !row_dims.empty()) {
    notes->push_back(where + " left out: several " + type + " values a row (a " + dtype + " attribute holds one)");
    return std::nullopt;
  }
  Json shape = byte_like ? (value_bytes ? Json::array({value_bytes}) : Json::array()) : ShapeJson(row_dims);
  // export-hdf5 writes bool as uint8 and int as int64, and says so.
  const bool integer = !byte_like && dtype.find("int") != std::string::npos;
  if (sedpack_dtype == "bool" && integer) dtype = "bool";
  if (sedpack_dtype == "int" && dtype == "int64" && row_dims.empty()) {
    dtype = "int";
    shape = Json::array();
  }
  if (byte_like && (sedpack_dtype == "str" || sedpack_dtype == "bytes")) dtype = sedpack_dtype;
  if (info) {
    const auto it = info->attrs.find(name);
    if (it != info->attrs.end() && it->second.contains("dtype") && it->second["dtype"] == dtype) return it->second;
  }
  return Json{{"name", name}, {"dtype", dtype}, {"shape", shape}};
}

// The attributes of one group's datasets: (attribute, source) in path order.
std::vector<std::pair<Json, Json>> ProposeGroup(const std::vector<const Hdf5ObjectInfo*>& datasets,
                                                const std::optional<ExportedInfo>& info,
                                                std::vector<std::string>* notes) {
  // Rows: the first dimension of the largest dataset of the group.
  const Hdf5ObjectInfo* largest = nullptr;
  for (const Hdf5ObjectInfo* o : datasets) {
    if (!largest || o->storage_bytes > largest->storage_bytes) largest = o;
  }
  const std::uint64_t rows = largest->dims[0];
  std::vector<std::pair<Json, Json>> out;
  for (const Hdf5ObjectInfo* o : datasets) {
    const std::string ds = o->path.substr(1);
    if (o->dims[0] != rows) {
      notes->push_back(o->path + " left out: " + std::to_string(o->dims[0]) + " rows, not " + std::to_string(rows));
      continue;
    }
    const std::vector<std::uint64_t> row_dims(o->dims.begin() + 1, o->dims.end());
    if (o->type != "compound") {
      auto a = ProposeAttribute(Base(o->path), o->path, o->type, o->dtype, o->value_bytes, o->sedpack_dtype,
                                row_dims, info, notes);
      if (a) out.emplace_back(std::move(*a), Json(ds));
      continue;
    }
    for (const Hdf5FieldInfo& f : o->fields) {
      std::vector<std::uint64_t> shape = row_dims;
      shape.insert(shape.end(), f.dims.begin(), f.dims.end());
      auto a = ProposeAttribute(f.name, o->path + " field \"" + f.name + "\"", f.type, f.dtype, f.value_bytes, "",
                                shape, info, notes);
      if (a) out.emplace_back(std::move(*a), Json{{"dataset", ds}, {"field", f.name}});
    }
  }
  return out;
}

}  // namespace

Result<std::string> SuggestHdf5Mapping(const std::string& path, const std::vector<Hdf5ObjectInfo>& objects,
                                       std::vector<std::string>* notes) {
  // Datasets with at least one dimension, grouped by parent group.
  std::map<std::string, std::vector<const Hdf5ObjectInfo*>> groups;
  std::vector<std::string> group_order;
  for (const Hdf5ObjectInfo& o : objects) {
    if (o.is_group || o.dims.empty()) continue;
    const std::string parent = Parent(o.path);
    if (!groups.count(parent)) group_order.push_back(parent);
    groups[parent].push_back(&o);
  }
  if (groups.empty()) return Status::InvalidArgument(path, ": no dataset with rows to import");
  const std::map<std::string, std::string> split_of = AssignSplits(group_order, notes);
  const std::optional<ExportedInfo> info = ReadExportedInfo(path, notes);

  Json description = Json::array();
  std::set<std::string> attr_names;
  Json splits = Json::object();
  bool first_split = true;
  for (const std::string& g : group_order) {
    if (!split_of.count(g)) continue;
    Json attributes = Json::object();
    for (auto& [attr, source] : ProposeGroup(groups[g], info, notes)) {
      std::string name = attr["name"].get<std::string>();
      const std::string dataset = source.is_string() ? source.get<std::string>() : source["dataset"].get<std::string>();
      const std::string prefixed = Base(dataset) + "_" + name;
      if (first_split) {
        if (attr_names.count(name)) name = prefixed;
        attr_names.insert(name);
        attr["name"] = name;
        description.push_back(attr);
      } else if (!attr_names.count(name)) {
        if (!attr_names.count(prefixed)) {
          notes->push_back("/" + dataset + ": " + name + " is not in the first split's attributes; left out");
          continue;
        }
        name = prefixed;
      }
      attributes[name] = std::move(source);
    }
    splits[split_of.at(g)] = Json{{"attributes", attributes}};
    first_split = false;
  }
  // Every split must map every attribute.
  for (auto& [name, split] : splits.items()) {
    for (const Json& a : description) {
      if (!split["attributes"].contains(a["name"].get<std::string>())) {
        notes->push_back("split " + name + " has no source for attribute \"" + a["name"].get<std::string>() +
                         "\"; edit the mapping");
      }
    }
  }
  Json root = Json::object();
  root["metadata"] = Json{{"description", "Imported from " + Base(path)}, {"dataset_version", "1.0.0"}};
  Json structure = Json{{"saved_data_description", Json::array()},
                        {"compression", "LZ4"},
                        {"examples_per_shard", 256},
                        {"shard_file_type", "fb"},
                        {"hash_checksum_algorithms", Json::array({"sha256"})}};
  if (info) {
    // The exported dataset's own description, in its attribute order.
    root["metadata"] = info->metadata;
    structure = info->structure;
    const auto rank = [&](const Json& a) {
      const auto it = std::find(info->order.begin(), info->order.end(), a["name"].get<std::string>());
      return it - info->order.begin();
    };
    std::stable_sort(description.begin(), description.end(),
                     [&](const Json& x, const Json& y) { return rank(x) < rank(y); });
  }
  structure["saved_data_description"] = description;
  root["dataset_structure"] = structure;
  root["import_hdf5"] = Json{{"splits", splits}, {"memory_budget_mb", 256}};
  return root.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

}  // namespace sedpack
