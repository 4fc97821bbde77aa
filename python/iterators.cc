// SPDX-License-Identifier: Apache-2.0
// The iterators over a split: the reference's order (NumpyIterator) and the
// elastic, resumable one (ElasticIterator). The reader is driven without the
// GIL; only the conversion of each example to a dict holds it.
#include <mutex>
#include <optional>
#include <utility>
#include <vector>

#include "iterators_internal.h"

namespace sedpack_python {

NumpyIterator::NumpyIterator(std::shared_ptr<sp::Dataset> ds, sp::Split split, sp::ReadOptions options,
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

py::object NumpyIterator::Next() {
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

ElasticIterator::ElasticIterator(std::shared_ptr<sp::Dataset> ds, std::shared_ptr<const sp::SampleIndex> index,
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

py::object ElasticIterator::Next() {
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

py::object ElasticIterator::NextBatch(std::size_t n, py::object alloc) {
  if (n == 0) throw py::value_error("next_batch: n must be positive");
  std::optional<sp::Status> failed;
  std::vector<sp::Example> batch;
  {
    py::gil_scoped_release nogil;
    std::lock_guard<std::mutex> lock(mu_);
    while (batch.size() < n) {
      auto next = reader_->Next();
      if (!next.ok()) {
        failed = next.status();
        break;
      }
      if (!next->has_value()) break;
      batch.push_back(std::move((*next)->example));
    }
  }
  if (failed) Raise(*failed);
  if (batch.empty()) throw py::stop_iteration();
  py::object d = converter_.BatchToDict(batch, alloc.is_none() ? py::handle() : alloc);
  return process_.is_none() ? d : process_(d);
}

py::dict ElasticIterator::StateDict() {
  sp::ReaderState s;
  {
    py::gil_scoped_release nogil;
    std::lock_guard<std::mutex> lock(mu_);
    s = reader_->state();
  }
  return StateToDict(s);
}

void ElasticIterator::LoadStateDict(const py::dict& d) {
  const sp::ReaderState s = StateFromDict(d);
  auto resumed = [&] {
    py::gil_scoped_release nogil;
    return sp::ElasticReader::Resume(ds_, index_, split_, s, options_);
  }();
  std::unique_ptr<sp::ElasticReader> fresh = Unwrap(std::move(resumed));
  py::gil_scoped_release nogil;
  std::lock_guard<std::mutex> lock(mu_);
  reader_ = std::move(fresh);
}

void BindIterators(py::module_& m) {
  py::class_<NumpyIterator>(m, "NumpyIterator",
                            "The iterator of Dataset.as_numpy_iterator and as_numpy_iterator_batched: examples "
                            "(or batches) as dicts, read ahead on threads without the GIL. Python threads may share "
                            "it (each example goes to one of them).")
      .def("__iter__", [](NumpyIterator& it) -> NumpyIterator& { return it; })
      .def("__next__", &NumpyIterator::Next, "The next example or batch; StopIteration at the end.")
      .def_property_readonly("seed", &NumpyIterator::seed,
                             "The shuffle's seed (the one given, or the fresh one drawn): pass it as `seed=` to "
                             "read the same order again.")
      .def("__repr__", [](const NumpyIterator& it) { return "<NumpyIterator seed=" + std::to_string(it.seed()) + ">"; });

  py::class_<ElasticIterator>(m, "ElasticIterator",
                              "The iterator of Dataset.as_numpy_iterator_elastic: one reader's part of the elastic "
                              "order, whose position can be saved (state_dict) and restored (load_state_dict).")
      .def("__iter__", [](ElasticIterator& it) -> ElasticIterator& { return it; })
      .def("__next__", &ElasticIterator::Next, "The next example; StopIteration at the end of the part.")
      .def(
          "next_batch",
          [](ElasticIterator& it, std::size_t n, Hinted<hint::Alloc> alloc) { return it.NextBatch(n, alloc.obj); },
          py::arg("n"), py::arg("alloc") = py::none(),
          R"doc(Up to `n` next examples stacked as as_numpy_iterator_batched stacks them.

Args:
    n: the batch size (> 0); only the last batch of the part is shorter.
    alloc: called as alloc(name, dtype, shape) for each stacked attribute,
        returns the writable C-contiguous numpy array to stack it into (e.g.
        over shared memory); None: new arrays.

Raises:
    StopIteration: nothing is left.
    ValueError: n is 0, or alloc returned an array of another dtype or shape.)doc")
      .def("state_dict", &ElasticIterator::StateDict,
           "The position of this reader as a plain dict (JSON-able): seed, epoch, position, its layout, "
           "and 'encoded', the same as one line. Give it to load_state_dict or as `state=` to resume.")
      .def(
          "load_state_dict",
          [](ElasticIterator& it, const py::dict& state) { it.LoadStateDict(state); }, py::arg("state"),
          "Resume from a state_dict() (this reader's, or merge_elastic_states() of another layout's readers).")
      .def_property_readonly("epoch_size", &ElasticIterator::epoch_size,
                             "Examples in one epoch of the split (all readers together).")
      .def("__repr__", [](const ElasticIterator& it) {
        return "<ElasticIterator epoch_size=" + std::to_string(it.epoch_size()) + ">";
      });
}

}  // namespace sedpack_python
