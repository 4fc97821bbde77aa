// SPDX-License-Identifier: Apache-2.0
// What the translation units of the Python module share: error mapping,
// conversions between Python objects and library types, and the Bind*
// functions each file registers its classes with (called by module.cc in
// the order the module always had, so docstring signatures name the
// registered Python classes).
//
// Threads: the GIL is released around every library call that reads, decodes,
// hashes or writes; callbacks into Python (shard_filter) take it back. Values
// read are numpy arrays over the decoded shard's bytes (read-only views, no
// copy), kept alive by a capsule holding the shard.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "sedpack/config.h"
#include "sedpack/sedpack.h"

namespace sedpack_python {

namespace py = pybind11;
namespace sp = sedpack;

// ---- Errors (module.cc) -----------------------------------------------------------

/// Raise the Python exception for a failed Status (GIL held).
[[noreturn]] void Raise(const sp::Status& st);

inline void Check(const sp::Status& st) {
  if (!st.ok()) Raise(st);
}

template <typename T>
T Unwrap(sp::Result<T> r) {
  if (!r.ok()) Raise(r.status());
  return std::move(r).value();
}

[[noreturn]] inline void ValueErrorFor(const std::string& name, const std::string& what) {
  throw py::value_error("attribute \"" + name + "\": " + what);
}

// ---- Argument type names ---------------------------------------------------------

/// A Python argument taken as it is (any object; the binding converts or
/// refuses it itself, with the library's message), shown in the generated
/// signatures as `Tag::name` instead of pybind11's `object` / `handle`, so
/// that help() and the docstrings say what is expected (e.g.
/// `path: str | os.PathLike[str]`). The names are those of the stub
/// sedpack_hpc/_sedpack_hpc.pyi.
template <typename Tag>
struct Hinted {
  py::object obj;
  operator py::handle() const { return obj; }  // NOLINT(google-explicit-constructor)
};

#define SEDPACK_PY_HINT(tag, text)                          \
  struct tag {                                              \
    static constexpr auto name = py::detail::const_name(text); \
  }
namespace hint {
SEDPACK_PY_HINT(Path, "str | os.PathLike[str]");
SEDPACK_PY_HINT(MetadataLike, "Metadata | Mapping[str, Any] | None");
SEDPACK_PY_HINT(StructureLike, "DatasetStructure | Mapping[str, Any] | None");
SEDPACK_PY_HINT(Json, "Any");
SEDPACK_PY_HINT(Indent, "int | None");
SEDPACK_PY_HINT(JsonDict, "dict[str, Any] | None");
SEDPACK_PY_HINT(ProcessRecord, "Callable[[dict[str, Any]], Any] | None");
SEDPACK_PY_HINT(ShardFilter, "Callable[[ShardInfo], bool] | None");
SEDPACK_PY_HINT(VerifyHashes, "bool | str");
SEDPACK_PY_HINT(Strings, "Iterable[str]");
SEDPACK_PY_HINT(SplitNames, "Iterable[str] | None");
SEDPACK_PY_HINT(EqualCounts, "str | None");
SEDPACK_PY_HINT(State, "dict[str, Any] | None");
SEDPACK_PY_HINT(Alloc, "Callable[[str, str, tuple[int, ...]], numpy.ndarray] | None");
SEDPACK_PY_HINT(Shape, "Iterable[int]");
SEDPACK_PY_HINT(Attributes, "Iterable[Attribute | Mapping[str, Any]]");
SEDPACK_PY_HINT(ExcType, "type[BaseException] | None");
SEDPACK_PY_HINT(Exc, "BaseException | None");
SEDPACK_PY_HINT(Traceback, "types.TracebackType | None");
}  // namespace hint
#undef SEDPACK_PY_HINT

// ---- JSON and models (models.cc) -------------------------------------------------

py::module_ Numpy();
py::object JsonToPy(const sp::JsonValue& v);
py::object JsonTextToPy(const std::string& text);
std::string PyTypeName(py::handle obj);

/// A plain (JSON-able) Python structure for `obj`: our model objects and the
/// reference's pydantic models (model_dump) become dicts, tuples become lists.
py::object Plain(py::handle obj);
sp::JsonValue PyToJson(py::handle obj);
std::string PlainJsonText(py::handle obj);

std::string PathString(py::handle path);
py::object PyPath(const std::string& s);
py::tuple StringsTuple(const std::vector<std::string>& v);

sp::Metadata ToMetadata(py::handle obj);
sp::DatasetStructure ToStructure(py::handle obj);
sp::Attribute ToAttribute(py::handle obj);
sp::Split ToSplit(const std::string& s);

void BindModels(py::module_& m);

// ---- Values (values.cc) ----------------------------------------------------------

/// How examples become dicts, as the reference's shard iterators return them:
/// numeric attributes are numpy arrays of the stored dtype and the schema's
/// shape (fb: a 0-d array for shape (); npz: a numpy scalar), int is a Python
/// int, str a str (bytes from tfrec shards), bytes bytes.
class ExampleConverter {
 public:
  explicit ExampleConverter(const sp::Dataset& dataset);

  py::dict ToDict(const sp::Example& e);

  /// A batch: numeric attributes stacked along a new first axis (one copy),
  /// int/str/bytes as lists (the reference's decode_batched). With `alloc`,
  /// each stacked array is written into `alloc(name, dtype, shape)` (a
  /// C-contiguous writable array of that dtype and shape, e.g. over shared
  /// memory that a DataLoader worker hands over without another copy).
  py::dict BatchToDict(const std::vector<sp::Example>& batch, py::handle alloc = py::handle());

 private:
  py::object& OwnerOf(const std::shared_ptr<const sp::DecodedShard>& shard);
  py::object Scalar(const sp::ValueView& v) const;
  py::object Value(const sp::ValueView& v, const py::object& owner);

  std::vector<py::str> names_;
  bool scalars_as_numpy_scalars_ = false;
  bool str_as_bytes_ = false;
  const sp::DecodedShard* last_shard_ = nullptr;
  py::object last_owner_;
};

/// Owns whatever the ValueViews of one example point into, until it is written.
struct ExampleValues {
  std::vector<py::object> keep;
  std::vector<std::int64_t> ints;
  std::vector<sp::ValueView> views;
  std::optional<sp::JsonValue> meta;
};

/// The views of one example (`values[name]` for each attribute of `schema`).
ExampleValues ConvertExample(const std::vector<sp::AttributeSpec>& schema, const py::dict& values,
                             py::handle custom_metadata);

// ---- Resumed fillers (dataset.cc, mpi.cc) -----------------------------------------

/// The examples a resumed filler took over from an earlier run of the same job,
/// and which write_example calls are those examples again. A script that skips
/// them itself (`skip_kept=True`) has every call written; one that runs as it
/// did the first time has the first `kept[split]` calls of each split ignored.
class KeptExamples {
 public:
  void Set(const std::array<std::uint64_t, 3>& kept, bool script_skips) {
    kept_ = kept;
    skips_ = script_skips;
  }
  /// True if this call repeats a kept example (and is not written).
  bool Ignore(sp::Split split) {
    const auto i = static_cast<std::size_t>(split);
    if (skips_ || seen_[i] >= kept_[i]) return false;
    ++seen_[i];
    return true;
  }
  /// {"train": n, "test": n, "holdout": n}.
  py::dict AsDict() const {
    py::dict d;
    for (sp::Split s : sp::AllSplits()) d[py::str(std::string(sp::SplitName(s)))] = kept_[static_cast<std::size_t>(s)];
    return d;
  }

 private:
  std::array<std::uint64_t, 3> kept_{};
  std::array<std::uint64_t, 3> seen_{};
  bool skips_ = false;
};

/// The parameters a resumable filler's journal records: the writer's own,
/// then the caller's dict (keys and values as str() gives them).
inline std::vector<std::pair<std::string, std::string>> JobParameters(const char* writer, int ranks,
                                                                      py::handle extra) {
  std::vector<std::pair<std::string, std::string>> out{{"writer", writer}, {"ranks", std::to_string(ranks)}};
  if (extra.is_none()) return out;
  for (auto item : py::cast<py::dict>(extra)) {
    out.emplace_back(py::cast<std::string>(py::str(item.first)), py::cast<std::string>(py::str(item.second)));
  }
  return out;
}

// ---- Registration (module.cc, iterators.cc, dataset.cc, mpi.cc) ------------------

void AddExceptions(py::module_& m);

/// ValueError listing the errors of a failed check (Dataset.check and
/// distributed_check), each file by its path under `root`; nothing for a clean report.
void RaiseIfProblems(const sp::CheckReport& report, const std::string& root);

void BindIterators(py::module_& m);
void BindElastic(py::module_& m);  // elastic.cc
void BindDataset(py::module_& m);
void BindReport(py::module_& m);  // report.cc: Dataset.report
#ifdef SEDPACK_HAVE_MPI
void BindMpi(py::module_& m);
#endif

}  // namespace sedpack_python

namespace pybind11::detail {
/// Hinted<Tag>: any object is accepted (None too); only its name in signatures differs.
template <typename Tag>
struct type_caster<sedpack_python::Hinted<Tag>> {
  PYBIND11_TYPE_CASTER(sedpack_python::Hinted<Tag>, Tag::name);
  bool load(handle src, bool) {
    value.obj = reinterpret_borrow<object>(src);
    return true;
  }
  static handle cast(const sedpack_python::Hinted<Tag>& v, return_value_policy, handle) {
    return v.obj.inc_ref();
  }
};
}  // namespace pybind11::detail
