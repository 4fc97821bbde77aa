// SPDX-License-Identifier: Apache-2.0
// ReportToJson: schema "sedpack-hpc/report/1" (docs/cli.md). The per-sample
// arrays stay out (they are the page's and the library's); the numbers a
// script compares are in: statistics, shard counts, histograms, SNR peaks.
#include <cmath>

#include <nlohmann/json.hpp>

#include "sedpack/report/report.h"

namespace sedpack {
namespace {

using Json = nlohmann::ordered_json;

// JSON has no NaN or infinity: they are written as strings, as `stats` does.
Json Number(double x) {
  if (std::isnan(x)) return "NaN";
  if (std::isinf(x)) return x > 0 ? "Infinity" : "-Infinity";
  return x;
}

Json ExactExtreme(const Moments& m, bool max) {
  if (m.count == 0) return nullptr;
  if (m.has_signed && !m.has_unsigned) return max ? m.signed_max : m.signed_min;
  if (m.has_unsigned && !m.has_signed) return max ? m.unsigned_max : m.unsigned_min;
  return Number(max ? m.max : m.min);
}

Json SnrJson(const SnrCurve& c) {
  Json classes = Json::array();
  Json skipped = Json::array();
  for (const SnrClass& k : c.classes) {
    classes.push_back({{"value", k.value}, {"examples", k.examples}, {"used", k.used}});
    if (!k.used) skipped.push_back(k.value);
  }
  return {{"expression", c.expression},
          {"attribute", c.attribute},
          {"split", SplitName(c.split)},
          {"samples", c.snr.size()},
          {"peak_sample", c.peak_sample >= 0 ? Json(c.peak_sample) : Json(nullptr)},
          {"peak", c.peak_sample >= 0 ? Number(c.peak) : Json(nullptr)},
          {"median", c.snr.empty() ? Json(nullptr) : Number(c.median)},
          {"classes", classes},
          {"skipped_classes", skipped}};
}

Json SplitJson(const SplitReport& s) {
  std::uint64_t bytes = 0, raw = 0;
  Json shard_examples = Json::array(), shard_bytes = Json::array();
  for (const ShardSummary& sh : s.shards) {
    bytes += sh.bytes;
    raw += sh.raw_bytes;
    shard_examples.push_back(sh.examples);
    shard_bytes.push_back(sh.bytes);
  }
  Json attrs = Json::array();
  for (const AttributeStats& a : s.stats.attributes) {
    attrs.push_back({{"name", a.name},
                     {"dtype", DTypeName(a.dtype)},
                     {"count", a.moments.count},
                     {"nan_count", a.moments.nan_count},
                     {"min", ExactExtreme(a.moments, false)},
                     {"max", ExactExtreme(a.moments, true)},
                     {"mean", Number(a.moments.mean)},
                     {"std", Number(a.moments.StdDev())}});
  }
  Json profiles = Json::array();
  for (const SampleProfile& p : s.profiles) {
    profiles.push_back({{"attribute", p.attribute}, {"length", p.length}, {"samples", p.mean.size()}});
  }
  Json hists = Json::array();
  for (const ValueHistogram& h : s.histograms) {
    hists.push_back({{"attribute", h.attribute}, {"first", h.first}, {"counts", h.counts}});
  }
  Json meta = Json::array();
  for (const MetadataKeyCount& k : s.custom_metadata) {
    Json values = Json::array();
    for (const auto& [v, n] : k.values) values.push_back({{"value", v}, {"shards", n}});
    meta.push_back({{"key", k.key}, {"shards", k.shards}, {"distinct", k.distinct}, {"values", values}});
  }
  return {{"split", SplitName(s.split)},
          {"examples", s.stats.examples},
          {"shards", s.shards.size()},
          {"bytes", bytes},
          {"decoded_bytes", raw},
          {"codec_ratio", bytes ? Number(static_cast<double>(raw) / static_cast<double>(bytes)) : Json(nullptr)},
          {"examples_per_shard", shard_examples},
          {"bytes_per_shard", shard_bytes},
          {"attributes", attrs},
          {"profiles", profiles},
          {"histograms", hists},
          {"custom_metadata", meta}};
}

}  // namespace

std::string ReportToJson(const Report& r) {
  Json schema = Json::array();
  for (const Attribute& a : r.info.dataset_structure.saved_data_description) {
    schema.push_back({{"name", a.name}, {"dtype", a.dtype}, {"shape", a.shape}});
  }
  Json splits = Json::array(), snrs = Json::array();
  for (const SplitReport& s : r.splits) {
    splits.push_back(SplitJson(s));
    for (const SnrCurve& c : s.snrs) snrs.push_back(SnrJson(c));
  }
  Json doc = {{"schema", "sedpack-hpc/report/1"},
              {"dataset", r.root},
              {"description", r.info.metadata.description},
              {"attributes", schema},
              {"splits", splits},
              {"snr", snrs.empty() ? Json(nullptr) : snrs[0]},
              {"snrs", snrs}};
  return doc.dump(2, ' ', false, Json::error_handler_t::replace) + "\n";
}

}  // namespace sedpack
