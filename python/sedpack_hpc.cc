// SPDX-License-Identifier: Apache-2.0
// The Python module sedpack_hpc (imported as sedpack_hpc._sedpack_hpc): the
// reference's sedpack.io names (Dataset, Metadata, DatasetStructure, Attribute,
// filler(), as_numpy_iterator()) over the C++ library. Every check and
// conversion is the library's: models are parsed by its JSON parsers, values
// validated by its writers, errors are its Status messages. This file only
// moves data between Python objects and library types.
//
// Threads: the GIL is released around every library call that reads, decodes,
// hashes or writes; callbacks into Python (shard_filter) take it back. Values
// read are numpy arrays over the decoded shard's bytes (read-only views, no
// copy), kept alive by a capsule holding the shard.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstring>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "sedpack/config.h"
#include "sedpack/index/fetch.h"
#include "sedpack/index/index.h"
#include "sedpack/index/order.h"
#include "sedpack/sedpack.h"
#ifdef SEDPACK_HAVE_MPI
#include "sedpack/check/verify.h"
#include "sedpack/mpi/distributed_write.h"
#include "sedpack/mpi/mpi_comm.h"
#endif

namespace py = pybind11;
namespace sp = sedpack;

namespace {

// ---- Errors -------------------------------------------------------------------

PyObject* g_exists_error = nullptr;      // DatasetExistsError(FileExistsError)
PyObject* g_corruption_error = nullptr;  // CorruptionError(ValueError)
PyObject* g_peer_error = nullptr;        // PeerAbortedError(RuntimeError)

/// Raise the Python exception for a failed Status (GIL held).
[[noreturn]] void Raise(const sp::Status& st) {
  PyObject* type = PyExc_RuntimeError;
  switch (st.code()) {
    case sp::StatusCode::kInvalidArgument:
    case sp::StatusCode::kResourceExhausted:
      type = PyExc_ValueError;
      break;
    case sp::StatusCode::kNotFound:
      type = PyExc_FileNotFoundError;
      break;
    case sp::StatusCode::kIOError:
      type = PyExc_OSError;
      break;
    case sp::StatusCode::kCorruption:
      type = g_corruption_error;
      break;
    case sp::StatusCode::kNotImplemented:
      type = PyExc_NotImplementedError;
      break;
    case sp::StatusCode::kAlreadyExists:
      type = g_exists_error;
      break;
    default:
      break;
  }
  // Another rank of a collective failed: the same exception on every such rank.
  if (st.detail() == sp::StatusDetail::kPeerAborted) type = g_peer_error;
  PyErr_SetString(type, st.message().c_str());
  throw py::error_already_set();
}

void Check(const sp::Status& st) {
  if (!st.ok()) Raise(st);
}

template <typename T>
T Unwrap(sp::Result<T> r) {
  if (!r.ok()) Raise(r.status());
  return std::move(r).value();
}

[[noreturn]] void ValueErrorFor(const std::string& name, const std::string& what) {
  throw py::value_error("attribute \"" + name + "\": " + what);
}

// ---- JSON and models -----------------------------------------------------------

py::object Json() { return py::module_::import("json"); }
py::module_ Numpy() { return py::module_::import("numpy"); }

py::object JsonToPy(const sp::JsonValue& v) { return Json().attr("loads")(v.text()); }
py::object JsonTextToPy(const std::string& text) { return Json().attr("loads")(text); }

std::string PyTypeName(py::handle obj) { return py::str(py::type::handle_of(obj).attr("__name__")); }

/// A plain (JSON-able) Python structure for `obj`: our model objects and the
/// reference's pydantic models (model_dump) become dicts, tuples become lists.
py::object Plain(py::handle obj);
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

// ---- Values: library -> Python --------------------------------------------------

/// A capsule keeping a decoded shard alive: the base object of the arrays over it.
py::object ShardOwner(const std::shared_ptr<const sp::DecodedShard>& shard) {
  auto* keep = new std::shared_ptr<const sp::DecodedShard>(shard);
  return py::capsule(keep, [](void* p) { delete static_cast<std::shared_ptr<const sp::DecodedShard>*>(p); });
}

/// How examples become dicts, as the reference's shard iterators return them:
/// numeric attributes are numpy arrays of the stored dtype and the schema's
/// shape (fb: a 0-d array for shape (); npz: a numpy scalar), int is a Python
/// int, str a str, bytes bytes.
class ExampleConverter {
 public:
  explicit ExampleConverter(const sp::Dataset& dataset) {
    const auto& schema = dataset.schema();
    for (const auto& spec : schema) names_.push_back(py::str(spec.name));
    scalars_as_numpy_scalars_ = dataset.info().dataset_structure.shard_file_type == sp::ShardFileType::kNpz;
  }

  py::dict ToDict(const sp::Example& e) {
    py::object& owner = OwnerOf(e.shard);
    py::dict d;
    for (std::size_t j = 0; j < names_.size(); ++j) d[names_[j]] = Value(e.Get(j), owner);
    return d;
  }

  /// A batch: numeric attributes stacked along a new first axis (one copy),
  /// int/str/bytes as lists (the reference's decode_batched).
  py::dict BatchToDict(const std::vector<sp::Example>& batch) {
    py::dict d;
    for (std::size_t j = 0; j < names_.size(); ++j) {
      const sp::ValueView first = batch.front().Get(j);
      const sp::DType dt = first.dtype;
      if (dt == sp::DType::kInt || dt == sp::DType::kStr || dt == sp::DType::kBytes) {
        py::list l(batch.size());
        for (std::size_t i = 0; i < batch.size(); ++i) {
          l[i] = Scalar(batch[i].Get(j));
        }
        d[names_[j]] = std::move(l);
        continue;
      }
      std::vector<py::ssize_t> shape{static_cast<py::ssize_t>(batch.size())};
      shape.insert(shape.end(), first.shape.begin(), first.shape.end());
      py::array out(py::dtype(std::string(sp::DTypeNpyDescr(dt))), shape);
      auto* dst = static_cast<std::byte*>(out.mutable_data());
      const std::size_t row = first.data.size();
      bool uniform = true;
      for (std::size_t i = 0; i < batch.size() && uniform; ++i) {
        const sp::ValueView v = batch[i].Get(j);
        uniform = v.dtype == dt && v.shape == first.shape && v.data.size() == row;
        if (uniform && row > 0) std::memcpy(dst + i * row, v.data.data(), row);
      }
      if (!uniform) {  // npz shards written with different dtypes: let numpy promote
        py::list parts;
        for (const auto& e : batch) parts.append(Value(e.Get(j), OwnerOf(e.shard)));
        d[names_[j]] = py::module_::import("numpy").attr("stack")(parts);
        continue;
      }
      d[names_[j]] = std::move(out);
    }
    return d;
  }

 private:
  py::object& OwnerOf(const std::shared_ptr<const sp::DecodedShard>& shard) {
    // The cached owner keeps its shard alive, so an equal pointer is the same shard.
    if (shard.get() != last_shard_) {
      last_owner_ = ShardOwner(shard);
      last_shard_ = shard.get();
    }
    return last_owner_;
  }

  static py::object Scalar(const sp::ValueView& v) {
    switch (v.dtype) {
      case sp::DType::kInt:
        return py::int_(v.At<std::int64_t>(0));
      case sp::DType::kStr:
        return py::str(reinterpret_cast<const char*>(v.data.data()), v.data.size());
      case sp::DType::kBytes:
        return py::bytes(reinterpret_cast<const char*>(v.data.data()), v.data.size());
      default:
        throw std::logic_error("not a scalar dtype");
    }
  }

  py::object Value(const sp::ValueView& v, const py::object& owner) {
    if (v.dtype == sp::DType::kInt || v.dtype == sp::DType::kStr || v.dtype == sp::DType::kBytes) {
      return Scalar(v);
    }
    std::vector<py::ssize_t> shape(v.shape.begin(), v.shape.end());
    py::array a(py::dtype(std::string(sp::DTypeNpyDescr(v.dtype))), shape, std::vector<py::ssize_t>{},
                v.data.data(), owner);
    // Views of a shard other examples share: never writable.
    py::detail::array_proxy(a.ptr())->flags &= ~py::detail::npy_api::NPY_ARRAY_WRITEABLE_;
    if (scalars_as_numpy_scalars_ && shape.empty()) return a[py::tuple()];
    return a;
  }

  std::vector<py::str> names_;
  bool scalars_as_numpy_scalars_ = false;
  const sp::DecodedShard* last_shard_ = nullptr;
  py::object last_owner_;
};

// ---- Values: Python -> library ---------------------------------------------------

/// Owns whatever the ValueViews of one example point into, until it is written.
struct ExampleValues {
  std::vector<py::object> keep;
  std::vector<std::int64_t> ints;
  std::vector<sp::ValueView> views;
  std::optional<sp::JsonValue> meta;
};

/// A C-contiguous little-endian array of `spec`'s dtype holding exactly the
/// values of `obj` (any dtype and layout whose values convert without change).
py::array ExactArray(const sp::AttributeSpec& spec, py::handle obj, const py::dtype& target) {
  if (py::isinstance<py::array>(obj)) {  // the common case: already right
    auto a = py::reinterpret_borrow<py::array>(obj);
    if (a.dtype().equal(target) && (a.flags() & py::array::c_style)) return a;
  }
  py::module_ np = Numpy();
  py::array src;
  try {
    src = np.attr("asarray")(obj);
  } catch (py::error_already_set& e) {
    ValueErrorFor(spec.name, "cannot make an array of " + PyTypeName(obj) + ": " + e.what());
  }
  const char kind = src.dtype().kind();
  if (kind != 'b' && kind != 'i' && kind != 'u' && kind != 'f') {
    ValueErrorFor(spec.name, "expected a numeric value for dtype " + std::string(sp::DTypeName(spec.dtype)) +
                                 ", got " + PyTypeName(obj) + " of numpy dtype " +
                                 std::string(py::str(src.dtype())));
  }
  py::object converted;
  if (src.dtype().equal(target)) {
    converted = src;
  } else if (np.attr("can_cast")(src.dtype(), target, "safe").cast<bool>()) {
    converted = src.attr("astype")(target);
  } else {
    // Not always exact: convert, convert back, and keep it only if nothing changed.
    py::object errstate = np.attr("errstate")(py::arg("all") = "ignore");
    errstate.attr("__enter__")();
    converted = src.attr("astype")(target);
    py::object back = converted.attr("astype")(src.dtype());
    const bool nan_ok = kind == 'f' && target.kind() == 'f';
    const bool same =
        np.attr("array_equal")(back, src, py::arg("equal_nan") = nan_ok).cast<bool>();
    errstate.attr("__exit__")(py::none(), py::none(), py::none());
    if (!same) {
      ValueErrorFor(spec.name, "the value (numpy dtype " + std::string(py::str(src.dtype())) +
                                   ") does not convert exactly to " + std::string(sp::DTypeName(spec.dtype)));
    }
  }
  // (not ascontiguousarray: it turns a 0-d array into a 1-d one)
  return np.attr("asarray")(converted, py::arg("order") = "C");
}

void AddValue(const sp::AttributeSpec& spec, py::handle obj, ExampleValues* out) {
  switch (spec.dtype) {
    case sp::DType::kStr: {
      if (!py::isinstance<py::str>(obj)) ValueErrorFor(spec.name, "expected str, got " + PyTypeName(obj));
      Py_ssize_t n = 0;
      const char* p = PyUnicode_AsUTF8AndSize(obj.ptr(), &n);
      if (!p) throw py::error_already_set();
      out->keep.push_back(py::reinterpret_borrow<py::object>(obj));
      out->views.push_back(sp::ValueView::Str(std::string_view(p, static_cast<std::size_t>(n))));
      return;
    }
    case sp::DType::kBytes: {
      const char* p = nullptr;
      Py_ssize_t n = 0;
      py::object held = py::reinterpret_borrow<py::object>(obj);
      if (PyBytes_Check(obj.ptr())) {
        p = PyBytes_AS_STRING(obj.ptr());
        n = PyBytes_GET_SIZE(obj.ptr());
      } else if (PyByteArray_Check(obj.ptr())) {
        held = py::bytes(PyByteArray_AS_STRING(obj.ptr()), PyByteArray_GET_SIZE(obj.ptr()));
        p = PyBytes_AS_STRING(held.ptr());
        n = PyBytes_GET_SIZE(held.ptr());
      } else if (py::isinstance<py::str>(obj)) {
        ValueErrorFor(spec.name, "expected bytes, got str");
      } else {  // an array of uint8 (or values that convert exactly to it)
        sp::AttributeSpec u8{spec.name, sp::DType::kUInt8, spec.shape};
        py::array a = ExactArray(u8, obj, py::dtype("|u1"));
        if (a.ndim() > 1) ValueErrorFor(spec.name, "expected bytes or a 1-d uint8 array");
        held = a;
        p = static_cast<const char*>(a.data());
        n = a.nbytes();
      }
      out->keep.push_back(held);
      const auto bytes = std::as_bytes(std::span<const char>(p, static_cast<std::size_t>(n)));
      sp::ValueView v = sp::ValueView::Bytes(bytes);
      if (!spec.shape.empty()) v.shape = {static_cast<std::int64_t>(n)};
      out->views.push_back(v);
      return;
    }
    case sp::DType::kInt: {
      py::object index;
      try {
        index = py::reinterpret_steal<py::object>(PyNumber_Index(obj.ptr()));
        if (!index) throw py::error_already_set();
      } catch (py::error_already_set&) {
        ValueErrorFor(spec.name, "expected an int, got " + PyTypeName(obj));
      }
      int overflow = 0;
      const long long x = PyLong_AsLongLongAndOverflow(index.ptr(), &overflow);
      if (overflow != 0) ValueErrorFor(spec.name, "the int does not fit int64");
      out->ints.push_back(x);
      // `ints` is reserved for the whole example: the address stays put.
      out->views.push_back(sp::ValueView::Int(out->ints.back()));
      return;
    }
    default: {
      py::dtype target(std::string(sp::DTypeNpyDescr(spec.dtype)));
      py::array a = ExactArray(spec, obj, target);
      sp::Shape shape(a.shape(), a.shape() + a.ndim());
      out->keep.push_back(a);
      out->views.push_back(sp::ValueView{
          spec.dtype, std::move(shape),
          std::span<const std::byte>(static_cast<const std::byte*>(a.data()), static_cast<std::size_t>(a.nbytes()))});
      return;
    }
  }
}

/// The views of one example (`values[name]` for each attribute of `schema`).
ExampleValues ConvertExample(const std::vector<sp::AttributeSpec>& schema, const py::dict& values,
                             py::handle custom_metadata) {
  ExampleValues ex;
  ex.ints.reserve(schema.size());
  ex.views.reserve(schema.size());
  for (const auto& spec : schema) {
    PyObject* v = PyDict_GetItemString(values.ptr(), spec.name.c_str());
    if (!v) ValueErrorFor(spec.name, "missing from values");
    AddValue(spec, v, &ex);
  }
  if (static_cast<std::size_t>(py::len(values)) != schema.size()) {
    for (auto [k, v] : values) {
      const std::string key = py::str(k);
      bool known = false;
      for (const auto& spec : schema) known = known || spec.name == key;
      if (!known) ValueErrorFor(key, "not in the dataset's saved_data_description");
    }
  }
  if (!custom_metadata.is_none()) ex.meta = PyToJson(custom_metadata);
  return ex;
}

}  // namespace

namespace {

// ---- Dataset, iterators, filler ----------------------------------------------------

sp::Split ToSplit(const std::string& s) { return Unwrap(sp::ParseSplit(s)); }

/// The random seed used when none is given (the reference's shuffles are unseeded).
std::uint64_t FreshSeed() {
  std::random_device rd;
  return (static_cast<std::uint64_t>(rd()) << 32) ^ rd();
}

class PyDataset;

/// as_numpy_iterator / as_numpy_iterator_batched: an ExampleReader whose
/// shards are read and decoded on its prefetch threads without the GIL.
class NumpyIterator {
 public:
  NumpyIterator(std::shared_ptr<sp::Dataset> ds, sp::Split split, sp::ReadOptions options,
                py::object shard_filter, py::object process, std::size_t batch_size, std::uint64_t seed)
      : converter_(*ds), shard_filter_(std::move(shard_filter)), process_(std::move(process)),
        batch_size_(batch_size), seed_(seed) {
    if (!shard_filter_.is_none()) {
      // Called while the reader is built (on this thread, without the GIL).
      PyObject* f = shard_filter_.ptr();  // kept alive by shard_filter_
      options.shard_filter = [f, this](const sp::ShardInfo& s) {
        py::gil_scoped_acquire gil;
        if (filter_error_) return false;
        try {
          return py::handle(f)(py::cast(s)).cast<bool>();
        } catch (py::error_already_set& e) {
          filter_error_ = std::move(e);
          return false;
        }
      };
    }
    std::optional<sp::Result<std::unique_ptr<sp::ExampleReader>>> made;
    {
      py::gil_scoped_release nogil;
      made = sp::ExampleReader::Make(ds, split, std::move(options));
    }
    if (filter_error_) {
      py::error_already_set e = std::move(*filter_error_);
      filter_error_.reset();
      throw e;
    }
    reader_ = Unwrap(std::move(*made));
  }

  py::object Next() {
    if (batch_size_ == 0) {
      std::optional<sp::Result<std::optional<sp::Example>>> next;
      {
        py::gil_scoped_release nogil;
        std::lock_guard<std::mutex> lock(mu_);
        next = reader_->Next();
      }
      std::optional<sp::Example> e = Unwrap(std::move(*next));
      if (!e) throw py::stop_iteration();
      py::object d = converter_.ToDict(*e);
      return process_.is_none() ? d : process_(d);
    }
    std::optional<sp::Result<std::vector<sp::Example>>> next;
    {
      py::gil_scoped_release nogil;
      std::lock_guard<std::mutex> lock(mu_);
      next = reader_->NextBatch(batch_size_);
    }
    std::vector<sp::Example> batch = Unwrap(std::move(*next));
    if (batch.empty()) throw py::stop_iteration();
    py::object d = converter_.BatchToDict(batch);
    return process_.is_none() ? d : process_(d);
  }

  std::uint64_t seed() const { return seed_; }

 private:
  ExampleConverter converter_;
  std::optional<py::error_already_set> filter_error_;
  py::object shard_filter_;
  py::object process_;
  std::size_t batch_size_;
  std::uint64_t seed_;
  std::mutex mu_;  // the reader is not thread-safe; Python threads may share the iterator
  std::unique_ptr<sp::ExampleReader> reader_;
};

/// The elastic order (sedpack/index/order.h) with a resumable state.
class ElasticIterator {
 public:
  ElasticIterator(std::shared_ptr<sp::Dataset> ds, std::shared_ptr<const sp::SampleIndex> index,
                  sp::Split split, sp::ElasticReadOptions options, py::object process)
      : ds_(std::move(ds)), index_(std::move(index)), split_(split), options_(options),
        converter_(*ds_), process_(std::move(process)) {
    std::optional<sp::Result<std::unique_ptr<sp::ElasticReader>>> made;
    {
      py::gil_scoped_release nogil;
      made = sp::ElasticReader::Make(ds_, index_, split_, options_);
    }
    reader_ = Unwrap(std::move(*made));
  }

  py::object Next() {
    std::optional<sp::Result<std::optional<sp::OrderedExample>>> next;
    {
      py::gil_scoped_release nogil;
      std::lock_guard<std::mutex> lock(mu_);
      next = reader_->Next();
    }
    std::optional<sp::OrderedExample> e = Unwrap(std::move(*next));
    if (!e) throw py::stop_iteration();
    py::object d = converter_.ToDict(e->example);
    return process_.is_none() ? d : process_(d);
  }

  py::dict StateDict() {
    sp::ReaderState s;
    {
      py::gil_scoped_release nogil;
      std::lock_guard<std::mutex> lock(mu_);
      s = reader_->state();
    }
    py::dict d;
    d["seed"] = s.seed;
    d["epoch"] = s.epoch;
    d["position"] = s.position;
    d["shards_per_block"] = s.shards_per_block;
    d["rank"] = s.rank;
    d["num_readers"] = s.num_readers;
    d["encoded"] = s.Encode();
    return d;
  }

  void LoadStateDict(const py::dict& d) {
    sp::ReaderState s;
    if (d.contains("encoded")) {
      s = Unwrap(sp::ReaderState::Decode(d["encoded"].cast<std::string>()));
    } else {
      s.seed = d["seed"].cast<std::uint64_t>();
      s.epoch = d["epoch"].cast<std::uint64_t>();
      s.position = d["position"].cast<std::uint64_t>();
      s.shards_per_block = d["shards_per_block"].cast<std::uint64_t>();
      s.rank = d["rank"].cast<std::uint32_t>();
      s.num_readers = d["num_readers"].cast<std::uint32_t>();
    }
    auto resumed = [&] {
      py::gil_scoped_release nogil;
      return sp::ElasticReader::Resume(ds_, index_, split_, s, options_);
    }();
    std::unique_ptr<sp::ElasticReader> fresh = Unwrap(std::move(resumed));
    py::gil_scoped_release nogil;
    std::lock_guard<std::mutex> lock(mu_);
    reader_ = std::move(fresh);
  }

  std::uint64_t epoch_size() const { return reader_->epoch_size(); }

 private:
  std::shared_ptr<sp::Dataset> ds_;
  std::shared_ptr<const sp::SampleIndex> index_;
  sp::Split split_;
  sp::ElasticReadOptions options_;
  ExampleConverter converter_;
  py::object process_;
  std::mutex mu_;
  std::unique_ptr<sp::ElasticReader> reader_;
};

/// `with ds.filler() as f: f.write_example(...)`. Leaving the block normally
/// finishes the filler (lists and dataset_info.json are written); leaving it
/// by an exception drops it, so only unreferenced shard files remain.
class PyFiller {
 public:
  PyFiller(std::shared_ptr<sp::Dataset> ds, sp::FillerOptions options)
      : ds_(std::move(ds)), options_(std::move(options)) {}

  PyFiller& Enter() {
    if (filler_) throw std::runtime_error("filler: already entered");
    std::optional<sp::Result<std::unique_ptr<sp::Filler>>> made;
    {
      py::gil_scoped_release nogil;
      made = sp::Filler::Make(ds_, options_);
    }
    filler_ = Unwrap(std::move(*made));
    return *this;
  }

  bool Exit(py::handle exc_type, py::handle, py::handle) {
    std::unique_ptr<sp::Filler> filler;
    {
      py::gil_scoped_release nogil;
      std::lock_guard<std::mutex> lock(mu_);
      filler = std::move(filler_);
    }
    if (!filler) return false;
    sp::Status st;
    {
      py::gil_scoped_release nogil;
      if (exc_type.is_none()) st = filler->Finish();
      filler.reset();  // waits for the shard writers
    }
    if (exc_type.is_none()) Check(st);
    return false;
  }

  void WriteExample(const py::dict& values, const std::string& split, py::handle custom_metadata) {
    if (!filler_) throw std::runtime_error("write_example: use the filler in a `with` block");
    const sp::Split s = ToSplit(split);
    ExampleValues ex = ConvertExample(ds_->schema(), values, custom_metadata);
    sp::Status st;
    {
      py::gil_scoped_release nogil;
      std::lock_guard<std::mutex> lock(mu_);  // Filler is not thread-safe
      st = filler_ ? filler_->WriteExample(s, ex.views, ex.meta ? &*ex.meta : nullptr)
                   : sp::Status::InvalidArgument("write_example: the filler was closed");
    }
    Check(st);
  }

  std::uint64_t examples_written() const { return filler_ ? filler_->examples_written() : 0; }

 private:
  std::shared_ptr<sp::Dataset> ds_;
  sp::FillerOptions options_;
  std::mutex mu_;
  std::unique_ptr<sp::Filler> filler_;
};

class PyDataset {
 public:
  explicit PyDataset(std::shared_ptr<sp::Dataset> ds) : ds_(std::move(ds)) {}

  static PyDataset Open(py::handle path) {
    const std::string root = PathString(path);
    std::optional<sp::Result<std::shared_ptr<sp::Dataset>>> r;
    {
      py::gil_scoped_release nogil;
      r = sp::Dataset::Open(root);
    }
    return PyDataset(Unwrap(std::move(*r)));
  }

  static PyDataset Create(py::handle path, py::handle metadata, py::handle structure) {
    const std::string root = PathString(path);
    sp::Metadata m = ToMetadata(metadata);
    sp::DatasetStructure s = ToStructure(structure);
    std::optional<sp::Result<std::shared_ptr<sp::Dataset>>> r;
    {
      py::gil_scoped_release nogil;
      r = sp::Dataset::Create(root, std::move(m), std::move(s));
    }
    return PyDataset(Unwrap(std::move(*r)));
  }

  const std::shared_ptr<sp::Dataset>& ds() const { return ds_; }

  py::tuple MetadataChecksums() const {
    std::optional<sp::Result<std::vector<std::string>>> r;
    {
      py::gil_scoped_release nogil;
      r = ds_->MetadataChecksums();
    }
    return StringsTuple(Unwrap(std::move(*r)));
  }

  void CheckIntegrity(py::handle hash_checksums_values) const {
    sp::CheckOptions options;
    for (py::handle h : hash_checksums_values) options.expected_root_checksums.push_back(py::str(h));
    std::optional<sp::Result<sp::CheckReport>> r;
    {
      py::gil_scoped_release nogil;
      r = sp::CheckDataset(ds_->root(), options);
    }
    const sp::CheckReport report = Unwrap(std::move(*r));
    if (report.ok()) return;
    std::string msg = "dataset check failed (" + std::to_string(report.error_count()) + " problems):";
    for (const auto& p : report.problems) {
      if (!p.warning()) msg += "\n  " + p.path + ": " + p.message;
    }
    throw py::value_error(msg);
  }

  std::unique_ptr<NumpyIterator> Iterate(const std::string& split, py::object process, std::optional<std::size_t> shards,
                                         std::optional<std::size_t> type_limit, py::object shard_filter,
                                         bool repeat, std::size_t shuffle, std::optional<std::uint64_t> seed,
                                         int prefetch, bool verify_hashes, std::size_t batch_size) {
    sp::ReadOptions o;
    o.max_shards = shards;
    // The reference ignores a limit of 0 ("Ignored when None. If non-zero ...").
    if (type_limit && *type_limit > 0) o.custom_metadata_type_limit = type_limit;
    o.repeat = repeat;
    o.shuffle_buffer = shuffle;
    o.seed = seed ? *seed : FreshSeed();
    o.prefetch_shards = prefetch;
    o.verify_hashes = verify_hashes;
    return std::make_unique<NumpyIterator>(ds_, ToSplit(split), std::move(o), std::move(shard_filter),
                                           std::move(process), batch_size, o.seed);
  }

  std::shared_ptr<const sp::SampleIndex> Index() {
    if (index_) return index_;
    std::optional<sp::Result<std::shared_ptr<const sp::SampleIndex>>> r;
    {
      py::gil_scoped_release nogil;
      r = sp::OpenIndex(ds_);
    }
    auto index = Unwrap(std::move(*r));
    if (!index_) index_ = index;
    return index_;
  }

  py::dict Get(const std::string& split, std::uint64_t i) {
    const sp::Split s = ToSplit(split);
    if (!fetcher_) {
      auto index = Index();
      std::optional<sp::Result<std::unique_ptr<sp::ExampleFetcher>>> r;
      {
        py::gil_scoped_release nogil;
        r = sp::ExampleFetcher::Make(ds_, index);
      }
      auto fetcher = std::shared_ptr<sp::ExampleFetcher>(Unwrap(std::move(*r)));
      if (!fetcher_) fetcher_ = fetcher;
    }
    std::shared_ptr<sp::ExampleFetcher> fetcher = fetcher_;
    std::optional<sp::Result<sp::Example>> r;
    {
      py::gil_scoped_release nogil;
      r = fetcher->Get(s, i);
    }
    sp::Example e = Unwrap(std::move(*r));
    ExampleConverter conv(*ds_);
    return conv.ToDict(e);
  }

  std::unique_ptr<ElasticIterator> Elastic(const std::string& split, std::uint64_t seed,
                                           std::uint64_t shards_per_block, std::uint32_t rank,
                                           std::uint32_t num_readers, bool repeat, std::uint64_t epoch,
                                           int prefetch, py::object process) {
    sp::ElasticReadOptions o;
    o.seed = seed;
    o.epoch = epoch;
    o.shards_per_block = shards_per_block;
    o.rank = rank;
    o.num_readers = num_readers;
    o.repeat = repeat;
    o.prefetch_shards = prefetch;
    return std::make_unique<ElasticIterator>(ds_, Index(), ToSplit(split), o, std::move(process));
  }

 private:
  std::shared_ptr<sp::Dataset> ds_;
  std::shared_ptr<const sp::SampleIndex> index_;
  std::shared_ptr<sp::ExampleFetcher> fetcher_;
};

#ifdef SEDPACK_HAVE_MPI
// ---- MPI: one session per process, started on first use ---------------------------

std::unique_ptr<sp::MpiSession>& MpiSessionSlot() {
  static auto* slot = new std::unique_ptr<sp::MpiSession>();  // never destroyed: atexit ends it
  return *slot;
}

/// The world communicator. MPI is initialised here unless the application (or
/// mpi4py) already did; MpiSession checks MPI_Initialized, so MPI is never
/// initialised twice, and finalised at exit only if it was initialised here.
sp::Comm& MpiWorld() {
  auto& slot = MpiSessionSlot();
  if (!slot) {
    slot = Unwrap(sp::MpiSession::Start(nullptr, nullptr));
    py::module_::import("atexit").attr("register")(py::cpp_function([] { MpiSessionSlot().reset(); }));
  }
  return slot->comm();
}

/// `with sedpack_hpc.distributed_filler(path, ...) as f:` on every rank of an
/// MPI job: each rank writes its own subtree; leaving the block is the
/// collective Finish (merge on rank 0). A rank leaving by an exception marks
/// itself failed, so every rank raises and nothing is published.
class PyDistributedFiller {
 public:
  PyDistributedFiller(std::string root, sp::DistributedWriteOptions options)
      : root_(std::move(root)), options_(std::move(options)) {}

  PyDistributedFiller& Enter() {
    if (writer_) throw std::runtime_error("distributed_filler: already entered");
    sp::Comm& comm = MpiWorld();
    std::optional<sp::Result<std::unique_ptr<sp::DistributedWriter>>> made;
    {
      py::gil_scoped_release nogil;
      made = sp::DistributedWriter::Open(comm, root_, options_);
    }
    writer_ = Unwrap(std::move(*made));
    return *this;
  }

  void WriteExample(const py::dict& values, const std::string& split, py::handle custom_metadata) {
    if (!writer_) throw std::runtime_error("write_example: use the filler in a `with` block");
    const sp::Split s = ToSplit(split);
    ExampleValues ex = ConvertExample(writer_->dataset()->schema(), values, custom_metadata);
    sp::Status st;
    {
      py::gil_scoped_release nogil;
      st = writer_->WriteExample(s, ex.views, ex.meta ? &*ex.meta : nullptr);
    }
    Check(st);
  }

  bool Exit(py::handle exc_type, py::handle exc, py::handle) {
    std::unique_ptr<sp::DistributedWriter> writer = std::move(writer_);
    if (!writer) return false;
    if (!exc_type.is_none() && !writer->failed()) {
      writer->Fail(sp::Status::Internal("Python exception: " + std::string(py::str(exc))));
    }
    sp::Status st;
    {
      py::gil_scoped_release nogil;
      st = writer->Finish();  // collective
      writer.reset();
    }
    if (exc_type.is_none()) Check(st);
    return false;
  }

  std::string job_id() const { return writer_ ? writer_->job_id() : std::string(); }

 private:
  std::string root_;
  sp::DistributedWriteOptions options_;
  std::unique_ptr<sp::DistributedWriter> writer_;
};

void BindMpi(py::module_& m) {
  py::class_<PyDistributedFiller>(m, "DistributedFiller")
      .def("__enter__", &PyDistributedFiller::Enter, py::return_value_policy::reference_internal)
      .def("__exit__", &PyDistributedFiller::Exit)
      .def("write_example", &PyDistributedFiller::WriteExample, py::arg("values"), py::arg("split"),
           py::arg("custom_metadata") = py::none())
      .def_property_readonly("job_id", &PyDistributedFiller::job_id);
  m.def(
      "distributed_filler",
      [](py::handle path, py::handle metadata, py::handle dataset_structure, int concurrency, std::string job_id) {
        sp::DistributedWriteOptions o;
        o.filler.concurrency = concurrency;
        o.job_id = std::move(job_id);
        if (!dataset_structure.is_none()) {
          o.create_metadata = ToMetadata(metadata);
          o.create_structure = ToStructure(dataset_structure);
        }
        return std::make_unique<PyDistributedFiller>(PathString(path), std::move(o));
      },
      "Collective: a filler for every rank of the MPI job (creates the dataset if it does not exist "
      "and dataset_structure is given).",
      py::arg("path"), py::arg("metadata") = py::none(), py::arg("dataset_structure") = py::none(),
      py::arg("concurrency") = 0, py::arg("job_id") = "");
  m.def(
      "distributed_check",
      [](py::handle path, py::handle hash_checksums_values) {
        sp::VerifyOptions o;
        for (py::handle h : hash_checksums_values) o.check.expected_root_checksums.push_back(py::str(h));
        sp::Comm& comm = MpiWorld();
        const std::string root = PathString(path);
        std::optional<sp::Result<sp::CheckReport>> r;
        {
          py::gil_scoped_release nogil;
          r = sp::VerifyDataset(comm, root, o);
        }
        const sp::CheckReport report = Unwrap(std::move(*r));
        if (report.ok()) return;
        std::string msg = "dataset check failed (" + std::to_string(report.error_count()) + " problems):";
        for (const auto& p : report.problems) {
          if (!p.warning()) msg += "\n  " + p.path + ": " + p.message;
        }
        throw py::value_error(msg);
      },
      "Collective: Dataset.check() with the files split between the ranks.", py::arg("path"),
      py::arg("hash_checksums_values") = py::tuple());
  m.def("mpi_rank", [] { return MpiWorld().rank(); });
  m.def("mpi_size", [] { return MpiWorld().size(); });
  m.def("mpi_barrier", [] {
    sp::Comm& comm = MpiWorld();
    sp::Status st;
    {
      py::gil_scoped_release nogil;
      st = comm.Barrier();
    }
    Check(st);
  });
}
#endif  // SEDPACK_HAVE_MPI

// ---- Model classes ---------------------------------------------------------------

py::dict KwargsOr(py::kwargs kw) { return py::dict(kw); }

void BindModels(py::module_& m) {
  py::class_<sp::FileInfo>(m, "FileInfo", "A file of the dataset and its hash checksums (read-only).")
      .def_property_readonly("file_path", [](const sp::FileInfo& f) { return PyPath(f.file_path); })
      .def_property_readonly("hash_checksums", [](const sp::FileInfo& f) { return StringsTuple(f.hash_checksums); })
      .def("__repr__", [](const sp::FileInfo& f) {
        return "FileInfo(file_path=" + f.file_path + ", hash_checksums=" +
               std::string(py::repr(StringsTuple(f.hash_checksums))) + ")";
      });

  py::class_<sp::ShardInfo>(m, "ShardInfo", "One shard as its shards_list.json records it (read-only).")
      .def_property_readonly("file_infos",
                             [](const sp::ShardInfo& s) {
                               py::tuple t(s.file_infos.size());
                               for (std::size_t i = 0; i < s.file_infos.size(); ++i) t[i] = py::cast(s.file_infos[i]);
                               return t;
                             })
      .def_readonly("number_of_examples", &sp::ShardInfo::number_of_examples)
      .def_property_readonly("custom_metadata", [](const sp::ShardInfo& s) { return JsonToPy(s.custom_metadata); });

  py::class_<sp::ShardListInfo>(m, "ShardListInfo", "A split's or subtree's shards_list.json (read-only).")
      .def_readonly("shard_list_info_file", &sp::ShardListInfo::shard_list_info_file)
      .def_readonly("number_of_examples", &sp::ShardListInfo::number_of_examples)
      .def_readonly("number_of_shards", &sp::ShardListInfo::number_of_shards);

  py::class_<sp::Attribute>(m, "Attribute",
                            "The reference's Attribute(name, dtype, shape, custom_metadata={}); "
                            "checked by the C++ parser of dataset_info.json.")
      .def(py::init([](py::kwargs kw) { return ToAttribute(KwargsOr(kw)); }))
      .def(py::init([](py::object name, py::object dtype, py::object shape, py::object custom_metadata) {
             py::dict d;
             d["name"] = name;
             d["dtype"] = dtype;
             d["shape"] = shape;
             if (!custom_metadata.is_none()) d["custom_metadata"] = custom_metadata;
             return ToAttribute(d);
           }),
           py::arg("name"), py::arg("dtype"), py::arg("shape"), py::arg("custom_metadata") = py::none())
      .def_readwrite("name", &sp::Attribute::name)
      .def_readwrite("dtype", &sp::Attribute::dtype)
      .def_property(
          "shape", [](const sp::Attribute& a) { return py::tuple(py::cast(a.shape)); },
          [](sp::Attribute& a, py::handle shape) {
            py::dict d = AttributeDict(a);
            d["shape"] = shape;
            a = ToAttribute(d);
          })
      .def_property(
          "custom_metadata", [](const sp::Attribute& a) { return JsonToPy(a.custom_metadata); },
          [](sp::Attribute& a, py::handle v) { a.custom_metadata = PyToJson(v); })
      .def("has_variable_size", [](const sp::Attribute& a) { return Unwrap(a.ToSpec()).IsVariableSize(); })
      .def("model_dump", [](const sp::Attribute& a) { return AttributeDict(a); })
      .def("__eq__", [](const sp::Attribute& a, const sp::Attribute& b) {
        return PlainJsonText(py::cast(a)) == PlainJsonText(py::cast(b));
      })
      .def("__repr__", [](const sp::Attribute& a) { return Repr("Attribute", AttributeDict(a)); });

  py::class_<sp::Metadata>(m, "Metadata",
                           "The reference's Metadata (description, dataset_license, dataset_version, "
                           "download_from, custom_metadata, sedpack_version) with its defaults.")
      .def(py::init([](py::kwargs kw) { return ToMetadata(KwargsOr(kw)); }))
      .def_readwrite("description", &sp::Metadata::description)
      .def_readwrite("dataset_license", &sp::Metadata::dataset_license)
      .def_readwrite("dataset_version", &sp::Metadata::dataset_version)
      .def_readwrite("download_from", &sp::Metadata::download_from)
      .def_readwrite("sedpack_version", &sp::Metadata::sedpack_version)
      .def_property(
          "custom_metadata", [](const sp::Metadata& x) { return JsonToPy(x.custom_metadata); },
          [](sp::Metadata& x, py::handle v) { x.custom_metadata = PyToJson(v); })
      .def("model_dump", [](const sp::Metadata& x) { return MetadataDict(x); })
      .def("__eq__", [](const sp::Metadata& a, const sp::Metadata& b) {
        return PlainJsonText(py::cast(a)) == PlainJsonText(py::cast(b));
      })
      .def("__repr__", [](const sp::Metadata& x) { return Repr("Metadata", MetadataDict(x)); });

  py::class_<sp::DatasetStructure>(m, "DatasetStructure",
                                   "The reference's DatasetStructure (saved_data_description, compression, "
                                   "examples_per_shard, shard_file_type, hash_checksum_algorithms) with its defaults.")
      .def(py::init([](py::kwargs kw) { return ToStructure(KwargsOr(kw)); }))
      .def_property(
          "saved_data_description",
          [](const sp::DatasetStructure& s) { return py::cast(s.saved_data_description); },
          [](sp::DatasetStructure& s, py::handle v) { s.saved_data_description = ToAttributes(v); })
      .def_property(
          "compression", [](const sp::DatasetStructure& s) { return std::string(sp::CompressionName(s.compression)); },
          [](sp::DatasetStructure& s, const std::string& c) { s.compression = Unwrap(sp::ParseCompression(c)); })
      .def_readwrite("examples_per_shard", &sp::DatasetStructure::examples_per_shard)
      .def_property(
          "shard_file_type",
          [](const sp::DatasetStructure& s) { return std::string(sp::ShardFileTypeName(s.shard_file_type)); },
          [](sp::DatasetStructure& s, const std::string& t) { s.shard_file_type = Unwrap(sp::ParseShardFileType(t)); })
      .def_property(
          "hash_checksum_algorithms",
          [](const sp::DatasetStructure& s) {
            std::vector<std::string> names;
            for (auto h : s.hash_checksum_algorithms) names.emplace_back(sp::HashAlgorithmName(h));
            return StringsTuple(names);
          },
          [](sp::DatasetStructure& s, py::handle v) {
            std::vector<sp::HashAlgorithm> hs;
            for (py::handle h : v) hs.push_back(Unwrap(sp::ParseHashAlgorithm(py::str(h).cast<std::string>())));
            s.hash_checksum_algorithms = std::move(hs);
          })
      .def("attribute_by_name",
           [](const sp::DatasetStructure& s, const std::string& name) {
             for (const auto& a : s.saved_data_description) {
               if (a.name == name) return a;
             }
             throw py::value_error("No attribute named " + name);
           })
      .def("model_dump", [](const sp::DatasetStructure& x) { return StructureDict(x); })
      .def("__eq__", [](const sp::DatasetStructure& a, const sp::DatasetStructure& b) {
        return PlainJsonText(py::cast(a)) == PlainJsonText(py::cast(b));
      })
      .def("__repr__", [](const sp::DatasetStructure& x) { return Repr("DatasetStructure", StructureDict(x)); });

  py::class_<sp::DatasetInfo>(m, "DatasetInfo", "The content of dataset_info.json (read-only copy).")
      .def_readonly("metadata", &sp::DatasetInfo::metadata)
      .def_readonly("dataset_structure", &sp::DatasetInfo::dataset_structure)
      .def_property_readonly("splits",
                             [](const sp::DatasetInfo& info) {
                               py::dict d;
                               for (const auto& [split, sli] : info.splits) {
                                 d[py::str(std::string(sp::SplitName(split)))] = py::cast(sli);
                               }
                               return d;
                             })
      .def("model_dump_json", [](const sp::DatasetInfo& info, py::object) { return InfoText(info); },
           py::arg("indent") = py::none())
      .def("model_dump", [](const sp::DatasetInfo& info) { return JsonTextToPy(InfoText(info)); });
}

}  // namespace

PYBIND11_MODULE(_sedpack_hpc, m) {
  m.doc() = "sedpack-hpc: read and write sedpack datasets with the C++ library (see docs/python.md).";
  m.attr("__version__") = SEDPACK_PROJECT_VERSION;

  g_exists_error = PyErr_NewException("sedpack_hpc.DatasetExistsError", PyExc_FileExistsError, nullptr);
  m.add_object("DatasetExistsError", py::handle(g_exists_error));
  g_corruption_error = PyErr_NewException("sedpack_hpc.CorruptionError", PyExc_ValueError, nullptr);
  m.add_object("CorruptionError", py::handle(g_corruption_error));
  g_peer_error = PyErr_NewException("sedpack_hpc.PeerAbortedError", PyExc_RuntimeError, nullptr);
  m.add_object("PeerAbortedError", py::handle(g_peer_error));

  BindModels(m);
#ifdef SEDPACK_HAVE_MPI
  BindMpi(m);
  m.attr("HAVE_MPI") = true;
#else
  m.attr("HAVE_MPI") = false;
#endif

  py::class_<NumpyIterator>(m, "NumpyIterator")
      .def("__iter__", [](NumpyIterator& it) -> NumpyIterator& { return it; })
      .def("__next__", &NumpyIterator::Next)
      .def_property_readonly("seed", &NumpyIterator::seed);

  py::class_<ElasticIterator>(m, "ElasticIterator")
      .def("__iter__", [](ElasticIterator& it) -> ElasticIterator& { return it; })
      .def("__next__", &ElasticIterator::Next)
      .def("state_dict", &ElasticIterator::StateDict)
      .def("load_state_dict", &ElasticIterator::LoadStateDict, py::arg("state"))
      .def_property_readonly("epoch_size", &ElasticIterator::epoch_size);

  py::class_<PyFiller>(m, "DatasetFiller")
      .def("__enter__", &PyFiller::Enter, py::return_value_policy::reference_internal)
      .def("__exit__", &PyFiller::Exit)
      .def("write_example", &PyFiller::WriteExample, py::arg("values"), py::arg("split"),
           py::arg("custom_metadata") = py::none())
      .def_property_readonly("examples_written", &PyFiller::examples_written);

  py::class_<PyDataset>(m, "Dataset")
      .def(py::init(&PyDataset::Open), py::arg("path"))
      .def_static("create", &PyDataset::Create, py::arg("path"), py::arg("metadata") = py::none(),
                  py::arg("dataset_structure") = py::none())
      .def_property_readonly("path", [](const PyDataset& d) { return PyPath(d.ds()->root()); })
      .def_property_readonly("dataset_info", [](const PyDataset& d) { return d.ds()->info(); })
      .def_property_readonly("metadata", [](const PyDataset& d) { return d.ds()->info().metadata; })
      .def_property_readonly("dataset_structure", [](const PyDataset& d) { return d.ds()->info().dataset_structure; })
      .def("current_metadata_checksums", &PyDataset::MetadataChecksums)
      .def(
          "check",
          [](const PyDataset& d, bool, py::object values) { d.CheckIntegrity(values); },
          py::arg("show_progressbar") = true, py::arg("hash_checksums_values") = py::tuple())
      .def(
          "filler",
          [](const PyDataset& d, int concurrency, const std::string& relative_path_from_split,
             bool auto_update_dataset) {
            sp::FillerOptions o;
            o.concurrency = concurrency;
            o.relative_path_from_split = relative_path_from_split;
            o.auto_update_dataset = auto_update_dataset;
            return std::make_unique<PyFiller>(d.ds(), std::move(o));
          },
          py::arg("concurrency") = 0, py::arg("relative_path_from_split") = ".",
          py::arg("auto_update_dataset") = true)
      .def(
          "as_numpy_iterator",
          [](PyDataset& d, const std::string& split, py::object process_record, std::optional<std::size_t> shards,
             std::optional<std::size_t> custom_metadata_type_limit, py::object shard_filter, bool repeat,
             std::size_t shuffle, std::optional<std::uint64_t> seed, int prefetch_shards, bool verify_hashes) {
            return d.Iterate(split, std::move(process_record), shards, custom_metadata_type_limit,
                             std::move(shard_filter), repeat, shuffle, seed, prefetch_shards, verify_hashes, 0);
          },
          py::kw_only(), py::arg("split"), py::arg("process_record") = py::none(), py::arg("shards") = py::none(),
          py::arg("custom_metadata_type_limit") = py::none(), py::arg("shard_filter") = py::none(),
          py::arg("repeat") = true, py::arg("shuffle") = 1000, py::arg("seed") = py::none(),
          py::arg("prefetch_shards") = 2, py::arg("verify_hashes") = true)
      .def(
          "as_numpy_iterator_batched",
          [](PyDataset& d, const std::string& split, std::size_t batch_size, py::object process_batch,
             std::optional<std::size_t> shards, std::optional<std::size_t> custom_metadata_type_limit,
             py::object shard_filter, bool repeat, std::size_t shuffle, std::optional<std::uint64_t> seed,
             int prefetch_shards, bool verify_hashes) {
            if (batch_size == 0) throw py::value_error("batch_size must be positive");
            return d.Iterate(split, std::move(process_batch), shards, custom_metadata_type_limit,
                             std::move(shard_filter), repeat, shuffle, seed, prefetch_shards, verify_hashes,
                             batch_size);
          },
          py::kw_only(), py::arg("split"), py::arg("batch_size") = 1, py::arg("process_batch") = py::none(),
          py::arg("shards") = py::none(), py::arg("custom_metadata_type_limit") = py::none(),
          py::arg("shard_filter") = py::none(), py::arg("repeat") = true, py::arg("shuffle") = 1000,
          py::arg("seed") = py::none(), py::arg("prefetch_shards") = 2, py::arg("verify_hashes") = true)
      .def("as_numpy_iterator_elastic", &PyDataset::Elastic, py::kw_only(), py::arg("split"), py::arg("seed") = 0,
           py::arg("shards_per_block") = 4, py::arg("rank") = 0, py::arg("num_readers") = 1,
           py::arg("repeat") = false, py::arg("epoch") = 0, py::arg("prefetch_shards") = 2,
           py::arg("process_record") = py::none())
      .def("get", &PyDataset::Get, py::arg("split"), py::arg("index"))
      .def("num_examples", [](PyDataset& d, const std::string& split) {
        const auto* sli = d.ds()->info().FindSplit(ToSplit(split));
        return sli ? sli->number_of_examples : 0;
      }, py::arg("split"));
}
