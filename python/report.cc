// SPDX-License-Identifier: Apache-2.0
// Dataset.report(...): the numbers of `sedpack report` (sedpack::BuildReport)
// as a dict of numpy arrays, so that a notebook gets the mean trace and the
// SNR curves without reading the data in Python.
#include "binding_internal.h"
#include "sedpack/report/report.h"

namespace sedpack_python {
namespace {

template <typename T>
py::array_t<T> Array(const std::vector<T>& v) {
  py::array_t<T> a(static_cast<py::ssize_t>(v.size()));
  std::copy(v.begin(), v.end(), a.mutable_data());
  return a;
}

py::object Extreme(const sp::Moments& m, bool max) {
  if (m.count == 0) return py::none();
  if (m.has_signed && !m.has_unsigned) return py::int_(max ? m.signed_max : m.signed_min);
  if (m.has_unsigned && !m.has_signed) return py::int_(max ? m.unsigned_max : m.unsigned_min);
  return py::float_(max ? m.max : m.min);
}

py::dict SplitDict(const sp::SplitReport& s) {
  py::dict out;
  out["examples"] = s.stats.examples;
  py::list shards;
  for (const sp::ShardSummary& sh : s.shards) {
    py::dict d;
    d["path"] = sh.path;
    d["examples"] = sh.examples;
    d["bytes"] = sh.bytes;
    d["decoded_bytes"] = sh.raw_bytes;
    shards.append(d);
  }
  out["shards"] = shards;
  py::dict stats;
  for (const sp::AttributeStats& a : s.stats.attributes) {
    py::dict d;
    d["dtype"] = std::string(sp::DTypeName(a.dtype));
    d["count"] = a.moments.count;
    d["nan_count"] = a.moments.nan_count;
    d["min"] = Extreme(a.moments, false);
    d["max"] = Extreme(a.moments, true);
    d["mean"] = a.moments.mean;
    d["std"] = a.moments.StdDev();
    stats[py::str(a.name)] = d;
  }
  out["stats"] = stats;
  py::dict profiles;
  for (const sp::SampleProfile& p : s.profiles) {
    py::dict d;
    d["length"] = p.length;
    d["mean"] = Array(p.mean);
    d["std"] = Array(p.std);
    d["min"] = Array(p.min);
    d["max"] = Array(p.max);
    profiles[py::str(p.attribute)] = d;
  }
  out["profiles"] = profiles;
  py::dict hists;
  for (const sp::ValueHistogram& h : s.histograms) {
    py::dict d;
    d["first"] = h.first;
    d["counts"] = Array(h.counts);
    hists[py::str(h.attribute)] = d;
  }
  out["histograms"] = hists;
  py::dict meta;
  for (const sp::MetadataKeyCount& k : s.custom_metadata) {
    py::list values;
    for (const auto& [v, n] : k.values) values.append(py::make_tuple(JsonTextToPy(v), n));
    py::dict d;
    d["shards"] = k.shards;
    d["distinct"] = k.distinct;
    d["values"] = values;
    meta[py::str(k.key)] = d;
  }
  out["custom_metadata"] = meta;
  py::list snrs;
  for (const sp::SnrCurve& c : s.snrs) {
    py::dict d;
    d["expression"] = c.expression;
    d["attribute"] = c.attribute;
    d["snr"] = Array(c.snr);
    d["peak_sample"] = c.peak_sample >= 0 ? py::object(py::int_(c.peak_sample)) : py::none();
    d["peak"] = c.peak_sample >= 0 ? py::object(py::float_(c.peak)) : py::none();
    d["median"] = c.median;
    py::list classes;
    for (const sp::SnrClass& k : c.classes) classes.append(py::make_tuple(k.value, k.examples, k.used));
    d["classes"] = classes;
    snrs.append(d);
  }
  out["snr"] = snrs;
  return out;
}

}  // namespace

void BindReport(py::module_& m) {
  // A method of Dataset defined here: `self` is taken as a Python object and
  // only its path is used, so this file needs nothing of dataset.cc.
  py::object cls = m.attr("Dataset");
  py::cpp_function report(
      [](py::object self, Hinted<hint::SplitNames> splits, std::vector<std::string> snr, std::string trace,
         std::uint64_t max_samples, int threads) {
        sp::ReportOptions o;
        if (!splits.obj.is_none()) {
          for (py::handle s : splits.obj) o.splits.push_back(ToSplit(py::str(s)));
        }
        o.snr = std::move(snr);
        o.snr_attribute = std::move(trace);
        o.max_samples = max_samples;
        o.pass.threads = threads;
        const std::string root = PathString(self.attr("path"));
        sp::Result<sp::Report> r = sp::Status::Internal("not run");
        {
          py::gil_scoped_release release;
          sp::SerialComm comm;
          r = sp::BuildReport(comm, root, o);
        }
        const sp::Report rep = Unwrap(std::move(r));
        py::dict out, splits_out;
        out["dataset"] = root;
        for (const sp::SplitReport& s : rep.splits) splits_out[py::str(std::string(sp::SplitName(s.split)))] = SplitDict(s);
        out["splits"] = splits_out;
        return out;
      },
      py::name("report"), py::is_method(cls), py::sibling(py::getattr(cls, "report", py::none())), py::kw_only(),
      py::arg("splits") = py::none(), py::arg("snr") = std::vector<std::string>{}, py::arg("trace") = "",
      py::arg("max_samples") = 0, py::arg("threads") = 0,
      "The numbers of `sedpack report` (statistics, per-sample mean/std/min/max, value histograms, shard sizes,\n"
      "custom_metadata counts, SNR curves of the `snr` leakage models) as a dict of numpy arrays, in one pass\n"
      "over the shards (hashes checked). `splits`: names (default: all).");
  py::setattr(cls, "report", report);
}

}  // namespace sedpack_python
