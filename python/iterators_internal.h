// SPDX-License-Identifier: Apache-2.0
// The iterators Dataset hands out (dataset.cc makes them, iterators.cc
// defines and registers them).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>

#include "binding_internal.h"
#include "sedpack/index/index.h"
#include "sedpack/index/order.h"

namespace sedpack_python {

/// as_numpy_iterator / as_numpy_iterator_batched: an ExampleReader whose
/// shards are read and decoded on its prefetch threads without the GIL.
class NumpyIterator {
 public:
  NumpyIterator(std::shared_ptr<sp::Dataset> ds, sp::Split split, sp::ReadOptions options,
                py::object shard_filter, py::object process, std::size_t batch_size, std::uint64_t seed);

  py::object Next();

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
                  sp::Split split, sp::ElasticReadOptions options, py::object process);

  py::object Next();
  /// Up to n examples stacked as as_numpy_iterator_batched stacks them (StopIteration when none are left).
  py::object NextBatch(std::size_t n, py::object alloc);
  py::dict StateDict();
  void LoadStateDict(const py::dict& d);

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

// ---- Reader states as plain data (elastic.cc) -------------------------------------

py::dict StateToDict(const sp::ReaderState& s);
/// From a state_dict() dict (its "encoded" line when present); checked as a decoded line.
sp::ReaderState StateFromDict(py::handle d);
/// The layout arguments of as_numpy_iterator_elastic (equal_counts: None, "pad" or "drop").
void ApplyLayout(sp::ElasticReadOptions& o, std::uint32_t group_size, std::uint64_t split_unit,
                 py::handle equal_counts, bool shuffle);
/// verify_hashes of as_numpy_iterator_elastic: True, False or "strict" (the recorded hashes, never the sidecar).
void ApplyVerifyHashes(sp::ElasticReadOptions& o, py::handle verify_hashes);

}  // namespace sedpack_python
