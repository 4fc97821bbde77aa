// SPDX-License-Identifier: Apache-2.0
// The Python module sedpack_hpc (imported as sedpack_hpc._sedpack_hpc): the
// reference's sedpack.io names (Dataset, Metadata, DatasetStructure, Attribute,
// filler(), as_numpy_iterator()) over the C++ library. Every check and
// conversion is the library's: models are parsed by its JSON parsers, values
// validated by its writers, errors are its Status messages. The binding only
// moves data between Python objects and library types; by concern:
//   models.cc     the models and dataset_info.json records
//   values.cc     examples to dicts of numpy arrays and back
//   iterators.cc  NumpyIterator, ElasticIterator
//   dataset.cc    Dataset and DatasetFiller
//   elastic.cc    elastic reader states as dicts, merging them
//   mpi.cc        distributed_filler / distributed_check (SEDPACK_HAVE_MPI)
//   module.cc     the module, its exceptions, the Status -> exception mapping
#include "binding_internal.h"
#include "sedpack/config.h"

namespace sedpack_python {

namespace {

// ---- Errors -------------------------------------------------------------------

PyObject* g_exists_error = nullptr;      // DatasetExistsError(FileExistsError)
PyObject* g_corruption_error = nullptr;  // CorruptionError(ValueError)
PyObject* g_peer_error = nullptr;        // PeerAbortedError(RuntimeError)

}  // namespace

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

/// The module's own exception types (subclasses of the built-in ones, so
/// callers can catch either).
void AddExceptions(py::module_& m) {
  g_exists_error = PyErr_NewExceptionWithDoc(
      "sedpack_hpc.DatasetExistsError",
      "Dataset.create found a dataset at the path (a FileExistsError, as the reference's).",
      PyExc_FileExistsError, nullptr);
  m.add_object("DatasetExistsError", py::handle(g_exists_error));
  g_corruption_error = PyErr_NewExceptionWithDoc(
      "sedpack_hpc.CorruptionError",
      "A file of the dataset is damaged: a hash checksum mismatch, bytes that do not decode, a count that "
      "does not add up (a ValueError).",
      PyExc_ValueError, nullptr);
  m.add_object("CorruptionError", py::handle(g_corruption_error));
  g_peer_error = PyErr_NewExceptionWithDoc(
      "sedpack_hpc.PeerAbortedError",
      "Another rank of a collective operation (distributed_filler, distributed_check) failed, so this one "
      "stopped too (a RuntimeError).",
      PyExc_RuntimeError, nullptr);
  m.add_object("PeerAbortedError", py::handle(g_peer_error));
  // dropin.adopt_reference_errors() replaces DatasetExistsError by a
  // subclass that also derives from the reference's class (a subclass, so
  // that handlers holding the first class keep catching it).
  m.def("_set_exists_error", [](py::handle cls) {
    if (!PyType_Check(cls.ptr()) ||
        !PyType_IsSubtype(reinterpret_cast<PyTypeObject*>(cls.ptr()), reinterpret_cast<PyTypeObject*>(g_exists_error))) {
      throw py::type_error("_set_exists_error: expected a subclass of DatasetExistsError");
    }
    g_exists_error = cls.inc_ref().ptr();  // kept for the life of the process, as the first one
    py::module_::import("sedpack_hpc._sedpack_hpc").attr("DatasetExistsError") = cls;
  });
}

}  // namespace sedpack_python

PYBIND11_MODULE(_sedpack_hpc, m) {
  namespace bind = sedpack_python;
  m.doc() =
      "sedpack-hpc's C++ reader and writer of sedpack datasets; import it as the package sedpack_hpc, which "
      "re-exports these names (see docs/python.md).";
  m.attr("__version__") = SEDPACK_PROJECT_VERSION;

  bind::AddExceptions(m);
  // The order of registration is the order the classes have always had:
  // a signature names a class in Python only if it was registered before.
  bind::BindModels(m);
#ifdef SEDPACK_HAVE_MPI
  bind::BindMpi(m);
  m.attr("HAVE_MPI") = true;
#else
  m.attr("HAVE_MPI") = false;
#endif
  bind::BindIterators(m);
  bind::BindDataset(m);
  bind::BindReport(m);
  bind::BindElastic(m);

  // The public names, for `from sedpack_hpc._sedpack_hpc import *` and the stub.
  pybind11::list names;
  for (auto item : m.attr("__dict__").cast<pybind11::dict>()) {
    const std::string name = pybind11::str(item.first);
    if (!name.empty() && name[0] != '_') names.append(pybind11::str(name));
  }
  names.attr("sort")();
  m.attr("__all__") = names;
}
