// SPDX-License-Identifier: Apache-2.0
// The reference's models (Metadata, DatasetStructure, Attribute) and the
// read-only records of dataset_info.json / shards_list.json, and how Python
// objects of any shape become them. Models are parsed by the library's own
// JSON parsers, so a Python caller gets exactly the checks a file gets.
#include <string>
#include <utility>
#include <vector>

#include "binding_internal.h"

namespace sedpack_python {

// ---- JSON and models -----------------------------------------------------------

py::object Json() { return py::module_::import("json"); }
py::module_ Numpy() { return py::module_::import("numpy"); }

py::object JsonToPy(const sp::JsonValue& v) { return Json().attr("loads")(v.text()); }
py::object JsonTextToPy(const std::string& text) { return Json().attr("loads")(text); }

std::string PyTypeName(py::handle obj) { return py::str(py::type::handle_of(obj).attr("__name__")); }

py::object ModelDump(py::handle model);

sp::JsonValue PyToJson(py::handle obj) {
  if (obj.is_none()) return sp::JsonValue();
  const std::string text = py::str(Json().attr("dumps")(Plain(obj)));
  return Unwrap(sp::JsonValue::Parse(text));
}

std::string PathString(py::handle path) {
  return py::str(py::module_::import("os").attr("fspath")(path));
}

py::object PyPath(const std::string& s) { return py::module_::import("pathlib").attr("Path")(s); }

// Serialized forms through the library's own serializer (the reference's
// model_dump_json(indent=2) of the enclosing dataset_info.json).
std::string InfoText(const sp::DatasetInfo& info) { return sp::SerializeDatasetInfo(info); }

py::object MetadataDict(const sp::Metadata& m) {
  sp::DatasetInfo info;
  info.metadata = m;
  return JsonTextToPy(InfoText(info))["metadata"];
}
py::object StructureDict(const sp::DatasetStructure& s) {
  sp::DatasetInfo info;
  info.dataset_structure = s;
  return JsonTextToPy(InfoText(info))["dataset_structure"];
}
py::object AttributeDict(const sp::Attribute& a) {
  sp::DatasetStructure s;
  s.saved_data_description = {a};
  return StructureDict(s)["saved_data_description"][py::int_(0)];
}

py::object Plain(py::handle obj) {
  if (py::isinstance<sp::Attribute>(obj)) return AttributeDict(obj.cast<const sp::Attribute&>());
  if (py::isinstance<sp::Metadata>(obj)) return MetadataDict(obj.cast<const sp::Metadata&>());
  if (py::isinstance<sp::DatasetStructure>(obj)) return StructureDict(obj.cast<const sp::DatasetStructure&>());
  if (py::isinstance<py::dict>(obj)) {
    py::dict out;
    for (auto [k, v] : obj.cast<py::dict>()) out[k] = Plain(v);
    return out;
  }
  if (py::isinstance<py::list>(obj) || py::isinstance<py::tuple>(obj)) {
    py::list out;
    for (py::handle v : obj) out.append(Plain(v));
    return out;
  }
  if (py::isinstance<py::str>(obj) || py::isinstance<py::bool_>(obj) || py::isinstance<py::int_>(obj) ||
      py::isinstance<py::float_>(obj) || obj.is_none()) {
    return py::reinterpret_borrow<py::object>(obj);
  }
  if (py::hasattr(obj, "model_dump")) return Plain(ModelDump(obj));  // any pydantic model
  // numpy scalars and arrays (a shape given as np.int64 dims or an array).
  if (py::isinstance(obj, Numpy().attr("generic")) || py::isinstance<py::array>(obj)) {
    return Plain(obj.attr("tolist")());
  }
  if (PyIndex_Check(obj.ptr())) return py::reinterpret_steal<py::object>(PyNumber_Index(obj.ptr()));
  if (py::isinstance(obj, py::module_::import("os").attr("PathLike"))) return py::str(PathString(obj));
  if (py::isinstance(obj, py::module_::import("collections.abc").attr("Mapping"))) {
    return Plain(py::dict(py::reinterpret_borrow<py::object>(obj)));
  }
  return py::reinterpret_borrow<py::object>(obj);
}

// ---- The three models, from whatever shape the caller has ---------------------------
//
// The reference's classes are pydantic models (sedpack.io.metadata); they are
// never imported here. A model is accepted as: our class, a dict (any
// Mapping), an object with pydantic's model_dump() (v2) or dict() (v1), or any
// object carrying the model's fields as attributes (dataclasses, namedtuples,
// stand-ins). Every field then goes through the same strict parser as a dict.

enum class Model { kMetadata, kStructure, kAttribute };

struct ModelFields {
  const char* name;
  std::vector<const char*> fields;  // the reference's field names, in its order
};

const ModelFields& FieldsOf(Model kind) {
  static const ModelFields kMetadataFields{
      "Metadata",
      {"description", "dataset_license", "dataset_version", "download_from", "custom_metadata", "sedpack_version"}};
  static const ModelFields kStructureFields{
      "DatasetStructure",
      {"saved_data_description", "compression", "examples_per_shard", "shard_file_type",
       "hash_checksum_algorithms"}};
  static const ModelFields kAttributeFields{"Attribute", {"name", "dtype", "shape", "custom_metadata"}};
  switch (kind) {
    case Model::kMetadata:
      return kMetadataFields;
    case Model::kStructure:
      return kStructureFields;
    case Model::kAttribute:
      break;
  }
  return kAttributeFields;
}

py::object ModelDump(py::handle obj) {
  py::object dump = obj.attr("model_dump");
  try {
    return dump(py::arg("mode") = "json");  // pydantic v2: JSON-able values
  } catch (py::error_already_set& e) {
    if (!e.matches(PyExc_TypeError)) throw;  // a model_dump() that takes no `mode`
  }
  return dump();
}

bool IsForeignModel(py::handle obj) {
  return !py::isinstance<sp::Attribute>(obj) && !py::isinstance<sp::Metadata>(obj) &&
         !py::isinstance<sp::DatasetStructure>(obj) && !py::isinstance<py::dict>(obj) &&
         !py::isinstance(obj, py::module_::import("collections.abc").attr("Mapping"));
}

/// The fields of one model as a dict of plain values (the entries of a
/// saved_data_description are Attributes in any of the shapes above).
py::object ModelDict(py::handle obj, Model kind) {
  const ModelFields& model = FieldsOf(kind);
  py::object raw;
  if (!IsForeignModel(obj)) {
    raw = py::isinstance<py::dict>(obj) ? py::reinterpret_borrow<py::object>(obj) : Plain(obj);
    if (!py::isinstance<py::dict>(raw)) raw = py::dict(raw);  // a Mapping
  } else if (py::hasattr(obj, "model_dump")) {
    raw = ModelDump(obj);
  } else if (py::hasattr(obj, "_asdict")) {  // a namedtuple
    raw = obj.attr("_asdict")();
  } else if (py::hasattr(obj, "dict") && py::hasattr(obj, "__fields__")) {  // pydantic v1
    raw = obj.attr("dict")();
  } else if (py::isinstance<py::str>(obj) || py::isinstance<py::list>(obj) || py::isinstance<py::tuple>(obj) ||
             PyNumber_Check(obj.ptr())) {
    return Plain(obj);  // not a model: the parser says what it expected
  } else {
    py::dict fields;
    for (const char* f : model.fields) {
      if (py::hasattr(obj, f)) fields[f] = obj.attr(f);
    }
    if (py::len(fields) == 0) {
      throw py::type_error(std::string(model.name) + ": expected a dict or an object with the fields of the " +
                           "reference's " + model.name + ", got " + PyTypeName(obj));
    }
    raw = fields;
  }
  if (!py::isinstance<py::dict>(raw)) return Plain(raw);
  py::dict out;
  for (auto [k, v] : raw.cast<py::dict>()) {
    const bool attributes = kind == Model::kStructure && py::isinstance<py::str>(k) &&
                            k.cast<std::string>() == "saved_data_description" && !py::isinstance<py::str>(v) &&
                            py::hasattr(v, "__iter__");
    if (!attributes) {
      out[k] = Plain(v);
      continue;
    }
    py::list attrs;
    for (py::handle a : v) attrs.append(ModelDict(a, Model::kAttribute));
    out[k] = attrs;
  }
  // The reference fills sedpack_version with its own version; that records
  // which library wrote the object, not the format we write, and a newer
  // reference's number would make the dataset unreadable to our reader. It is
  // kept only when pydantic says the caller set it (model_fields_set).
  if (kind == Model::kMetadata && IsForeignModel(obj) && out.contains("sedpack_version")) {
    bool set_by_caller = false;
    if (py::hasattr(obj, "model_fields_set")) {
      set_by_caller = py::bool_(obj.attr("model_fields_set").attr("__contains__")("sedpack_version"));
    }
    if (!set_by_caller) PyDict_DelItemString(out.ptr(), "sedpack_version");
  }
  return out;
}

std::string PlainJsonText(py::handle obj) { return py::str(Json().attr("dumps")(Plain(obj))); }

sp::Metadata ToMetadata(py::handle obj) {
  if (py::isinstance<sp::Metadata>(obj)) return obj.cast<sp::Metadata>();
  if (obj.is_none()) return sp::Metadata();
  return Unwrap(sp::ParseMetadata(PlainJsonText(ModelDict(obj, Model::kMetadata)), "metadata", /*strict=*/true));
}

sp::DatasetStructure ToStructure(py::handle obj) {
  if (py::isinstance<sp::DatasetStructure>(obj)) return obj.cast<sp::DatasetStructure>();
  if (obj.is_none()) return sp::DatasetStructure();
  return Unwrap(sp::ParseDatasetStructure(PlainJsonText(ModelDict(obj, Model::kStructure)), "dataset_structure",
                                          /*strict=*/true));
}

sp::Attribute ToAttribute(py::handle obj) {
  if (py::isinstance<sp::Attribute>(obj)) return obj.cast<sp::Attribute>();
  py::dict wrapper;
  py::list one;
  one.append(obj);
  wrapper["saved_data_description"] = one;
  sp::DatasetStructure s = Unwrap(sp::ParseDatasetStructure(PlainJsonText(ModelDict(wrapper, Model::kStructure)),
                                                            "Attribute", true));
  return s.saved_data_description.at(0);
}

std::vector<sp::Attribute> ToAttributes(py::handle list) {
  std::vector<sp::Attribute> out;
  for (py::handle a : list) out.push_back(ToAttribute(a));
  return out;
}

py::tuple StringsTuple(const std::vector<std::string>& v) {
  py::tuple t(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) t[i] = py::str(v[i]);
  return t;
}

std::string Repr(const char* cls, const py::object& dict) {
  std::string out = std::string(cls) + "(";
  bool first = true;
  for (auto [k, v] : dict.cast<py::dict>()) {
    if (!first) out += ", ";
    first = false;
    out += std::string(py::str(k)) + "=" + std::string(py::repr(v));
  }
  return out + ")";
}

sp::Split ToSplit(const std::string& s) { return Unwrap(sp::ParseSplit(s)); }

// ---- Model classes ---------------------------------------------------------------

namespace {

py::dict KwargsOr(py::kwargs kw) { return py::dict(kw); }

py::dict FileInfoDict(const sp::FileInfo& f) {
  py::dict d;
  d["file_path"] = py::str(f.file_path);
  d["hash_checksums"] = StringsTuple(f.hash_checksums);
  return d;
}

py::dict ShardInfoDict(const sp::ShardInfo& s) {
  py::list files;
  for (const auto& f : s.file_infos) files.append(FileInfoDict(f));
  py::dict d;
  d["file_infos"] = files;
  d["number_of_examples"] = s.number_of_examples;
  d["custom_metadata"] = JsonToPy(s.custom_metadata);
  return d;
}

py::dict ShardListInfoDict(const sp::ShardListInfo& s) {
  py::dict d;
  d["shard_list_info_file"] = FileInfoDict(s.shard_list_info_file);
  d["number_of_examples"] = s.number_of_examples;
  d["number_of_shards"] = s.number_of_shards;
  return d;
}

/// `==` as pydantic's: the same class and equal fields (dicts compare by
/// content, not by key order; another class is NotImplemented, so False).
template <typename T, typename ToDict>
void DefEquality(py::class_<T> cls, ToDict to_dict) {
  cls.def("__eq__", [to_dict](const T& a, const T& b) { return to_dict(a).equal(to_dict(b)); }, py::is_operator());
  cls.attr("__hash__") = py::none();  // mutable field-wise equality: unhashable, as pydantic models
}

/// FileInfo, ShardInfo, ShardListInfo: what shards_list.json records.
void BindShardModels(py::module_& m) {
  py::class_<sp::FileInfo> file_info(
      m, "FileInfo",
      "A file of the dataset (a shard or a shards_list.json) and its hash checksums, as its parent list records "
      "it (read-only).");
  file_info
      .def_property_readonly(
          "file_path", [](const sp::FileInfo& f) { return PyPath(f.file_path); },
          "The file's path relative to the dataset root (a pathlib.Path).")
      .def_property_readonly(
          "hash_checksums", [](const sp::FileInfo& f) { return StringsTuple(f.hash_checksums); },
          "The file's hash checksums, one per entry of the dataset's hash_checksum_algorithms, in that order.")
      .def("model_dump", &FileInfoDict, "The fields as a dict (file_path as str), as pydantic's model_dump().")
      .def("__repr__", [](const sp::FileInfo& f) {
        return "FileInfo(file_path=" + f.file_path + ", hash_checksums=" +
               std::string(py::repr(StringsTuple(f.hash_checksums))) + ")";
      });
  DefEquality(file_info, &FileInfoDict);

  py::class_<sp::ShardInfo> shard_info(
      m, "ShardInfo",
      "One shard as its shards_list.json records it (read-only): what a shard_filter is given.");
  shard_info
      .def_property_readonly("file_infos",
                             [](const sp::ShardInfo& s) {
                               py::tuple t(s.file_infos.size());
                               for (std::size_t i = 0; i < s.file_infos.size(); ++i) t[i] = py::cast(s.file_infos[i]);
                               return t;
                             },
                             "The shard's files (FileInfo); the first is the shard file itself.")
      .def_readonly("number_of_examples", &sp::ShardInfo::number_of_examples, "Examples in the shard.")
      .def_property_readonly(
          "custom_metadata", [](const sp::ShardInfo& s) { return JsonToPy(s.custom_metadata); },
          "The custom_metadata its examples were written with (DatasetFiller.write_example), a dict.")
      .def("model_dump", &ShardInfoDict, "The fields as a dict of plain values, as pydantic's model_dump().")
      .def("__repr__", [](const sp::ShardInfo& s) { return Repr("ShardInfo", ShardInfoDict(s)); });
  DefEquality(shard_info, &ShardInfoDict);

  py::class_<sp::ShardListInfo> list_info(
      m, "ShardListInfo",
      "A split's or a subtree's shards_list.json as its parent records it: the file and the counts below it "
      "(read-only; pickles, so a filler's lists can be sent to the process that commits them).");
  list_info
      .def_readonly("shard_list_info_file", &sp::ShardListInfo::shard_list_info_file,
                    "The FileInfo of the shards_list.json.")
      .def_readonly("number_of_examples", &sp::ShardListInfo::number_of_examples,
                    "Examples in all the shards below this list.")
      .def_readonly("number_of_shards", &sp::ShardListInfo::number_of_shards, "Shards below this list.")
      .def("model_dump", &ShardListInfoDict, "The fields as a dict of plain values, as pydantic's model_dump().")
      .def("__repr__",
           [](const sp::ShardListInfo& s) {
             return "ShardListInfo(shard_list_info_file=" + std::string(py::repr(py::cast(s.shard_list_info_file))) +
                    ", number_of_examples=" + std::to_string(s.number_of_examples) +
                    ", number_of_shards=" + std::to_string(s.number_of_shards) + ")";
           })
      // A filler's updated lists travel from a writer process to the one that commits them.
      .def(py::pickle([](const sp::ShardListInfo& s) {
                        return py::make_tuple(s.shard_list_info_file.file_path,
                                              s.shard_list_info_file.hash_checksums, s.number_of_examples,
                                              s.number_of_shards);
                      },
                      [](const py::tuple& t) {
                        if (t.size() != 4) throw py::value_error("ShardListInfo: bad pickled state");
                        sp::ShardListInfo s;
                        s.shard_list_info_file.file_path = t[0].cast<std::string>();
                        s.shard_list_info_file.hash_checksums = t[1].cast<std::vector<std::string>>();
                        s.number_of_examples = t[2].cast<std::int64_t>();
                        s.number_of_shards = t[3].cast<std::int64_t>();
                        return s;
                      }));
  DefEquality(list_info, &ShardListInfoDict);
}

void BindAttribute(py::module_& m) {
  py::class_<sp::Attribute> attribute(m, "Attribute", R"doc(One attribute (field) of every example of a dataset.

Attribute(name, dtype, shape, custom_metadata={}), as the reference's;
checked when built by the parser of dataset_info.json (ValueError naming the
field otherwise).

Fields:
    name: unique among the dataset's attributes; the key in example dicts.
    dtype: a numpy dtype name ("uint8", "float32", ...), or "int", "str", "bytes".
    shape: the shape of every value, positive dimensions; () with "str" or
        "bytes" allows values of any length.
    custom_metadata: a JSON-able dict, stored and not interpreted.)doc");
  attribute
      .def(py::init([](py::kwargs kw) { return ToAttribute(KwargsOr(kw)); }),
           "Attribute(**fields): the fields as keyword arguments (any subset the parser accepts).")
      .def(py::init([](Hinted<hint::Json> name, Hinted<hint::Json> dtype, Hinted<hint::Shape> shape,
                       Hinted<hint::JsonDict> custom_metadata) {
             py::dict d;
             d["name"] = name;
             d["dtype"] = dtype;
             d["shape"] = shape;
             if (!custom_metadata.obj.is_none()) d["custom_metadata"] = custom_metadata;
             return ToAttribute(d);
           }),
           py::arg("name"), py::arg("dtype"), py::arg("shape"), py::arg("custom_metadata") = py::none(),
           "Attribute(name, dtype, shape, custom_metadata=None); None: {}.")
      .def_readwrite("name", &sp::Attribute::name, "The attribute's name, its key in example dicts.")
      .def_readwrite("dtype", &sp::Attribute::dtype,
                     "The values' type: a numpy dtype name, or \"int\", \"str\", \"bytes\".")
      .def_property(
          "shape", [](const sp::Attribute& a) { return py::tuple(py::cast(a.shape)); },
          [](sp::Attribute& a, py::handle shape) {
            py::dict d = AttributeDict(a);
            d["shape"] = shape;
            a = ToAttribute(d);
          },
          "The shape of every value (a tuple of positive ints; () for one value). Assigning checks it.")
      .def_property(
          "custom_metadata", [](const sp::Attribute& a) { return JsonToPy(a.custom_metadata); },
          [](sp::Attribute& a, py::handle v) { a.custom_metadata = PyToJson(v); },
          "A JSON-able dict stored with the attribute (a copy: assign a new dict to change it).")
      .def(
          "has_variable_size", [](const sp::Attribute& a) { return Unwrap(a.ToSpec()).IsVariableSize(); },
          "True when values may have any length: dtype \"str\" or \"bytes\" with shape ().")
      .def(
          "model_dump", [](const sp::Attribute& a) { return AttributeDict(a); },
          "The fields as a dict (shape as a list), as dataset_info.json stores them (pydantic's model_dump()).")
      .def("__repr__", [](const sp::Attribute& a) { return Repr("Attribute", AttributeDict(a)); });
  DefEquality(attribute, &AttributeDict);
}

void BindMetadata(py::module_& m) {
  py::class_<sp::Metadata> metadata(m, "Metadata", R"doc(What a dataset is: the human-readable part of dataset_info.json.

Metadata(**fields), the reference's fields and defaults; an unknown field is
refused by name.

Fields:
    description: a short description of the dataset.
    dataset_license: the license of the data (default: CC BY 4.0's URL).
    dataset_version: the dataset's own version (default "1.0.0").
    download_from: where the data can be downloaded from.
    custom_metadata: a JSON-able dict, stored and not interpreted.
    sedpack_version: the format version the dataset is written in (filled in).)doc");
  metadata
      .def(py::init([](py::kwargs kw) { return ToMetadata(KwargsOr(kw)); }),
           "Metadata(**fields): the fields as keyword arguments, the others their defaults.")
      .def_readwrite("description", &sp::Metadata::description, "A short human-readable description.")
      .def_readwrite("dataset_license", &sp::Metadata::dataset_license, "The license of the data and of its use.")
      .def_readwrite("dataset_version", &sp::Metadata::dataset_version, "The version of this dataset.")
      .def_readwrite("download_from", &sp::Metadata::download_from, "Where the dataset can be downloaded from.")
      .def_readwrite("sedpack_version", &sp::Metadata::sedpack_version,
                     "The sedpack format version the dataset was written with (a dataset of a newer one is "
                     "refused when opened).")
      .def_property(
          "custom_metadata", [](const sp::Metadata& x) { return JsonToPy(x.custom_metadata); },
          [](sp::Metadata& x, py::handle v) { x.custom_metadata = PyToJson(v); },
          "A JSON-able dict of the dataset's own information (a copy: assign a new dict to change it).")
      .def(
          "model_dump", [](const sp::Metadata& x) { return MetadataDict(x); },
          "The fields as a dict, as dataset_info.json stores them (pydantic's model_dump()).")
      .def("__repr__", [](const sp::Metadata& x) { return Repr("Metadata", MetadataDict(x)); });
  DefEquality(metadata, &MetadataDict);
}

void BindStructure(py::module_& m) {
  py::class_<sp::DatasetStructure> structure(m, "DatasetStructure", R"doc(How a dataset's examples are stored.

DatasetStructure(**fields), the reference's fields and defaults; an unknown
field or value is refused by name.

Fields:
    saved_data_description: the Attributes of every example, in the order fb
        shards store them.
    compression: the shard codec ("GZIP" by default, "" for none, "ZSTD", "LZ4", ...).
    examples_per_shard: examples written to a shard before the next is opened.
    shard_file_type: "fb" (default), "npz" or "tfrec".
    hash_checksum_algorithms: the hashes recorded for every file ("sha256", ...).)doc");
  structure
      .def(py::init([](py::kwargs kw) { return ToStructure(KwargsOr(kw)); }),
           "DatasetStructure(**fields): the fields as keyword arguments, the others their defaults.")
      .def_property(
          "saved_data_description",
          [](const sp::DatasetStructure& s) { return py::cast(s.saved_data_description); },
          [](sp::DatasetStructure& s, Hinted<hint::Attributes> v) { s.saved_data_description = ToAttributes(v); },
          "The Attributes of every example (a copy: assign a new list to change it).")
      .def_property(
          "compression", [](const sp::DatasetStructure& s) { return std::string(sp::CompressionName(s.compression)); },
          [](sp::DatasetStructure& s, const std::string& c) { s.compression = Unwrap(sp::ParseCompression(c)); },
          "The codec of every shard file (\"\" for none).")
      .def_readwrite("examples_per_shard", &sp::DatasetStructure::examples_per_shard,
                     "How many examples a shard holds (the last of a split may hold fewer).")
      .def_property(
          "shard_file_type",
          [](const sp::DatasetStructure& s) { return std::string(sp::ShardFileTypeName(s.shard_file_type)); },
          [](sp::DatasetStructure& s, const std::string& t) { s.shard_file_type = Unwrap(sp::ParseShardFileType(t)); },
          "The shard file format: \"fb\", \"npz\" or \"tfrec\".")
      .def_property(
          "hash_checksum_algorithms",
          [](const sp::DatasetStructure& s) {
            std::vector<std::string> names;
            for (auto h : s.hash_checksum_algorithms) names.emplace_back(sp::HashAlgorithmName(h));
            return StringsTuple(names);
          },
          [](sp::DatasetStructure& s, Hinted<hint::Strings> v) {
            std::vector<sp::HashAlgorithm> hs;
            for (py::handle h : v.obj) hs.push_back(Unwrap(sp::ParseHashAlgorithm(py::str(h).cast<std::string>())));
            s.hash_checksum_algorithms = std::move(hs);
          },
          "The hash algorithms whose checksums are recorded for every file, in order (a tuple of names).")
      .def("attribute_by_name",
           [](const sp::DatasetStructure& s, const std::string& name) {
             for (const auto& a : s.saved_data_description) {
               if (a.name == name) return a;
             }
             throw py::value_error("No attribute named " + name);
           },
           py::arg("attribute_name"),
           "The Attribute named `attribute_name` (a copy). Raises ValueError if there is none.")
      .def(
          "model_dump", [](const sp::DatasetStructure& x) { return StructureDict(x); },
          "The fields as a dict, as dataset_info.json stores them (pydantic's model_dump()).")
      .def("__repr__", [](const sp::DatasetStructure& x) { return Repr("DatasetStructure", StructureDict(x)); });
  DefEquality(structure, &StructureDict);
}

void BindDatasetInfo(py::module_& m) {
  py::class_<sp::DatasetInfo> info_class(
      m, "DatasetInfo",
      "Everything dataset_info.json holds: metadata, dataset_structure and the top shard list of each split "
      "(a read-only copy: Dataset.dataset_info).");
  info_class.def_readonly("metadata", &sp::DatasetInfo::metadata, "The dataset's Metadata.")
      .def_readonly("dataset_structure", &sp::DatasetInfo::dataset_structure, "The dataset's DatasetStructure.")
      .def_property_readonly("splits",
                             [](const sp::DatasetInfo& info) {
                               py::dict d;
                               for (const auto& [split, sli] : info.splits) {
                                 d[py::str(std::string(sp::SplitName(split)))] = py::cast(sli);
                               }
                               return d;
                             },
                             "{split name: ShardListInfo} for the splits that have examples.")
      .def(
          "model_dump_json",
          [](const sp::DatasetInfo& info, const Hinted<hint::Indent>&) { return InfoText(info); },
          py::arg("indent") = py::none(),
          "The text this library writes to dataset_info.json for this content (`indent` is accepted for "
          "pydantic's signature and not used).")
      .def(
          "model_dump", [](const sp::DatasetInfo& info) { return JsonTextToPy(InfoText(info)); },
          "The content as a dict of plain values (pydantic's model_dump()).")
      .def("__repr__", [](const sp::DatasetInfo& info) {
        py::dict splits;
        for (const auto& [split, sli] : info.splits) splits[py::str(std::string(sp::SplitName(split)))] = py::cast(sli);
        return "DatasetInfo(metadata=" + std::string(py::repr(py::cast(info.metadata))) +
               ", dataset_structure=" + std::string(py::repr(py::cast(info.dataset_structure))) +
               ", splits=" + std::string(py::repr(splits)) + ")";
      });
  DefEquality(info_class, [](const sp::DatasetInfo& i) { return JsonTextToPy(InfoText(i)); });
}

}  // namespace

void BindModels(py::module_& m) {
  BindShardModels(m);
  BindAttribute(m);
  BindMetadata(m);
  BindStructure(m);
  BindDatasetInfo(m);
}

}  // namespace sedpack_python
