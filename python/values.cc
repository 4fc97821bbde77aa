// SPDX-License-Identifier: Apache-2.0
// Values between Python and the library: decoded examples become dicts of
// numpy arrays over the shard's bytes (no copy), and the values a caller
// writes become ValueViews over Python-owned memory, converted only when the
// conversion is exact.
#include <cstring>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "binding_internal.h"

namespace sedpack_python {

// ---- Values: library -> Python --------------------------------------------------

namespace {

/// A capsule keeping a decoded shard alive: the base object of the arrays over it.
py::object ShardOwner(const std::shared_ptr<const sp::DecodedShard>& shard) {
  auto* keep = new std::shared_ptr<const sp::DecodedShard>(shard);
  return py::capsule(keep, [](void* p) { delete static_cast<std::shared_ptr<const sp::DecodedShard>*>(p); });
}

}  // namespace

ExampleConverter::ExampleConverter(const sp::Dataset& dataset) {
  const auto& schema = dataset.schema();
  for (const auto& spec : schema) names_.push_back(py::str(spec.name));
  scalars_as_numpy_scalars_ = dataset.info().dataset_structure.shard_file_type == sp::ShardFileType::kNpz;
  // The reference reads tfrec shards with TensorFlow, which gives str attributes as bytes.
  str_as_bytes_ = dataset.info().dataset_structure.shard_file_type == sp::ShardFileType::kTfrec;
}

py::dict ExampleConverter::ToDict(const sp::Example& e) {
  py::object& owner = OwnerOf(e.shard);
  py::dict d;
  for (std::size_t j = 0; j < names_.size(); ++j) d[names_[j]] = Value(e.Get(j), owner);
  return d;
}

namespace {

// The caller's buffer for a stacked attribute, checked before it is written.
py::array AllocatedArray(py::handle alloc, const py::str& name, const std::string& descr,
                         const std::vector<py::ssize_t>& shape) {
  py::object got = alloc(name, descr, py::tuple(py::cast(shape)));
  if (!py::isinstance<py::array>(got)) throw py::type_error("alloc must return a numpy array");
  py::array a = py::reinterpret_borrow<py::array>(got);
  const bool contiguous = (a.flags() & py::array::c_style) != 0;
  std::vector<py::ssize_t> has(a.shape(), a.shape() + a.ndim());
  if (!a.dtype().equal(py::dtype(descr)) || has != shape || !contiguous || !a.writeable()) {
    throw py::value_error("alloc for \"" + std::string(name) + "\" must return a writable C-contiguous " + descr +
                          " array of the shape asked for");
  }
  return a;
}

}  // namespace

py::dict ExampleConverter::BatchToDict(const std::vector<sp::Example>& batch, py::handle alloc) {
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
    const std::string descr(sp::DTypeNpyDescr(dt));
    py::array out = alloc ? AllocatedArray(alloc, names_[j], descr, shape) : py::array(py::dtype(descr), shape);
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

py::object& ExampleConverter::OwnerOf(const std::shared_ptr<const sp::DecodedShard>& shard) {
  // The cached owner keeps its shard alive, so an equal pointer is the same shard.
  if (shard.get() != last_shard_) {
    last_owner_ = ShardOwner(shard);
    last_shard_ = shard.get();
  }
  return last_owner_;
}

py::object ExampleConverter::Scalar(const sp::ValueView& v) const {
  switch (v.dtype) {
    case sp::DType::kInt:
      return py::int_(v.At<std::int64_t>(0));
    case sp::DType::kStr:
      if (str_as_bytes_) return py::bytes(reinterpret_cast<const char*>(v.data.data()), v.data.size());
      return py::str(reinterpret_cast<const char*>(v.data.data()), v.data.size());
    case sp::DType::kBytes:
      return py::bytes(reinterpret_cast<const char*>(v.data.data()), v.data.size());
    default:
      throw std::logic_error("not a scalar dtype");
  }
}

py::object ExampleConverter::Value(const sp::ValueView& v, const py::object& owner) {
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

// ---- Values: Python -> library ---------------------------------------------------

namespace {

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

}  // namespace

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

}  // namespace sedpack_python
