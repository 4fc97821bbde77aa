// SPDX-License-Identifier: Apache-2.0
// The elastic order's plain-data side: reader states as dicts (what
// state_dict() returns and load_state_dict() takes), merging the states of all
// readers of a layout, and the size of a reader's part.
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "iterators_internal.h"

namespace sedpack_python {

namespace {

sp::EqualCounts EqualCountsOf(py::handle h) {
  if (h.is_none()) return sp::EqualCounts::kNone;
  return Unwrap(sp::ParseEqualCounts(py::str(h).cast<std::string>()));
}

py::object EqualCountsToPy(sp::EqualCounts e) {
  if (e == sp::EqualCounts::kNone) return py::none();
  return py::str(std::string(sp::EqualCountsName(e)));
}

std::optional<std::vector<sp::EpochSpan>> SpansOf(py::handle h) {
  if (h.is_none()) return std::nullopt;
  std::vector<sp::EpochSpan> spans;
  for (py::handle pair : h) {
    const auto v = pair.cast<std::vector<std::uint64_t>>();
    if (v.size() != 2) throw py::value_error("reader state: a remaining span is [begin, end]");
    spans.push_back({v[0], v[1]});
  }
  return spans;
}

template <typename T>
T Field(const py::dict& d, const char* name, T fallback) {
  return d.contains(name) ? d[name].cast<T>() : fallback;
}

}  // namespace

py::dict StateToDict(const sp::ReaderState& s) {
  py::dict d;
  d["seed"] = s.seed;
  d["epoch"] = s.epoch;
  d["position"] = s.position;
  d["shards_per_block"] = s.shards_per_block;
  d["rank"] = s.rank;
  d["num_readers"] = s.num_readers;
  d["group_size"] = s.group_size;
  d["split_unit"] = s.split_unit;
  d["shuffle"] = s.shuffle;
  d["equal_counts"] = EqualCountsToPy(s.equal_counts);
  if (s.remaining) {
    py::list spans;
    for (const sp::EpochSpan& sp : *s.remaining) {
      py::list pair;
      pair.append(sp.begin);
      pair.append(sp.end);
      spans.append(pair);
    }
    d["remaining"] = spans;
  } else {
    d["remaining"] = py::none();
  }
  d["encoded"] = s.Encode();
  return d;
}

sp::ReaderState StateFromDict(py::handle h) {
  const py::dict d = py::reinterpret_borrow<py::dict>(h);
  if (d.contains("encoded")) return Unwrap(sp::ReaderState::Decode(d["encoded"].cast<std::string>()));
  sp::ReaderState s;
  s.seed = d["seed"].cast<std::uint64_t>();
  s.epoch = d["epoch"].cast<std::uint64_t>();
  s.position = d["position"].cast<std::uint64_t>();
  s.shards_per_block = d["shards_per_block"].cast<std::uint64_t>();
  s.rank = d["rank"].cast<std::uint32_t>();
  s.num_readers = d["num_readers"].cast<std::uint32_t>();
  s.group_size = Field<std::uint32_t>(d, "group_size", 1);
  s.split_unit = Field<std::uint64_t>(d, "split_unit", 1);
  s.shuffle = Field<bool>(d, "shuffle", true);
  s.equal_counts = EqualCountsOf(d.contains("equal_counts") ? py::object(d["equal_counts"]) : py::none());
  if (d.contains("remaining")) s.remaining = SpansOf(d["remaining"]);
  // The same checks as a decoded line.
  return Unwrap(sp::ReaderState::Decode(s.Encode()));
}

void ApplyLayout(sp::ElasticReadOptions& o, std::uint32_t group_size, std::uint64_t split_unit,
                 py::handle equal_counts, bool shuffle) {
  o.shuffle = shuffle;
  o.group_size = group_size;
  o.split_unit = split_unit;
  o.equal_counts = EqualCountsOf(equal_counts);
}

void ApplyVerifyHashes(sp::ElasticReadOptions& o, py::handle verify_hashes) {
  const bool strict = py::isinstance<py::str>(verify_hashes);
  if (strict && verify_hashes.cast<std::string>() != "strict") {
    throw py::value_error("verify_hashes must be True, False or \"strict\", not '" +
                          verify_hashes.cast<std::string>() + "'");
  }
  o.strict_hashes = strict;
  o.verify_hashes = strict || verify_hashes.cast<bool>();
}

void BindElastic(py::module_& m) {
  m.def(
      "merge_elastic_states",
      [](py::iterable states, std::optional<std::uint64_t> epoch_size) {
        std::vector<sp::ReaderState> all;
        for (py::handle h : states) all.push_back(StateFromDict(h));
        return StateToDict(Unwrap(sp::MergeReaderStates(all, epoch_size)));
      },
      py::arg("states"), py::arg("epoch_size") = py::none(),
      "The epoch position of a whole layout from the states of all its readers: a state whose "
      "'remaining' spans hold what none of them produced. Readers of any new layout resume from "
      "it with their own rank, num_readers, group_size, split_unit and equal_counts.");
  m.def(
      "elastic_part_size",
      [](std::uint64_t remaining, std::uint32_t rank, std::uint32_t num_readers, std::uint32_t group_size,
         std::uint64_t split_unit, Hinted<hint::EqualCounts> equal_counts) {
        const sp::ReaderLayout l{rank, num_readers, group_size, split_unit, EqualCountsOf(equal_counts)};
        std::uint64_t n = 0;
        for (const sp::EpochSpan& s : sp::ReaderPart(remaining, l)) n += s.end - s.begin;
        return n;
      },
      py::arg("remaining"), py::kw_only(), py::arg("rank"), py::arg("num_readers"), py::arg("group_size") = 1,
      py::arg("split_unit") = 1, py::arg("equal_counts") = py::none(),
      "Examples reader `rank` of the layout yields out of `remaining` (its count, known up front).");
}

}  // namespace sedpack_python
