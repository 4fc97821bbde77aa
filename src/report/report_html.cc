// SPDX-License-Identifier: Apache-2.0
// ReportToHtml: one page, inline CSS and SVG, readable offline and by e-mail.
#include <algorithm>
#include <cctype>
#include <cmath>

#include "report/svg_internal.h"
#include "sedpack/report/report.h"

namespace sedpack {
namespace {

using report_internal::EscapeHtml;
using report_internal::FormatNumber;
using report_internal::SvgPlot;

constexpr std::string_view kStyle =
    "body{font-family:sans-serif;margin:24px;color:#222;max-width:1000px}"
    "h1{font-size:22px}h2{font-size:19px;border-bottom:1px solid #ccc;padding-bottom:4px;margin-top:32px}"
    "h3{font-size:16px;margin-top:22px}"
    "table{border-collapse:collapse;font-size:13px;margin:8px 0}"
    "td,th{border:1px solid #ccc;padding:3px 8px;text-align:left}th{background:#f2f2f2}"
    "td.n{text-align:right;font-family:monospace}"
    "figure{margin:8px 0}svg.plot{background:#fff;font-size:11px}"
    ".frame{fill:none;stroke:#888}.tick{fill:#444}.label{fill:#222;font-size:12px}"
    ".title{fill:#111;font-size:14px;font-weight:bold}"
    "path.mean{fill:none;stroke:#1f5fa8;stroke-width:1}rect.mean{fill:#1f5fa8}"
    "path.band,rect.band{fill:#6fa8dc;fill-opacity:.45;stroke:none}"
    "path.envelope,rect.envelope{fill:#d9d9d9;fill-opacity:.8;stroke:none}"
    "path.bars,rect.bars{fill:#5b8c3a;stroke:none}"
    "path.snr{fill:none;stroke:#b03a2e;stroke-width:1}rect.snr{fill:#b03a2e}"
    ".mark{fill:none;stroke:#000;stroke-width:2}.marklabel{fill:#000;font-size:12px;font-weight:bold}"
    "p.note{font-size:13px;color:#555}";

std::string Cell(std::string_view text, bool number = false) {
  return std::string(number ? "<td class=\"n\">" : "<td>") + EscapeHtml(text) + "</td>";
}

std::string Row(const std::vector<std::string>& cells, bool header = false) {
  std::string out = "<tr>";
  for (const std::string& c : cells) out += header ? "<th>" + EscapeHtml(c) + "</th>" : c;
  return out + "</tr>";
}

// Ids are made of the split and attribute names; anything else becomes '_'.
std::string Id(std::string_view prefix, std::string_view a, std::string_view b = {}) {
  std::string out(prefix);
  for (std::string_view part : {a, b}) {
    if (part.empty()) continue;
    out += '-';
    for (char c : part) out += (std::isalnum(static_cast<unsigned char>(c)) || c == '_') ? c : '_';
  }
  return out;
}

std::string Bytes(std::uint64_t n) {
  const char* units[] = {"B", "KB", "MB", "GB", "TB"};
  double v = static_cast<double>(n);
  int u = 0;
  while (v >= 1000 && u < 4) v /= 1000, ++u;
  return FormatNumber(v, 4) + " " + units[u];
}

std::string Extreme(const Moments& m, bool max) {
  if (m.has_signed && !m.has_unsigned) return std::to_string(max ? m.signed_max : m.signed_min);
  if (m.has_unsigned && !m.has_signed) return std::to_string(max ? m.unsigned_max : m.unsigned_min);
  return FormatNumber(max ? m.max : m.min, 8);
}

// A histogram of `values` in up to 30 equal bins.
std::string DistributionPlot(const std::string& id, const std::string& title, const std::string& x_label,
                             const std::vector<double>& values) {
  SvgPlot plot(id, title, x_label, "shards");
  if (values.empty()) return plot.Render();
  const double lo = *std::min_element(values.begin(), values.end());
  const double hi = *std::max_element(values.begin(), values.end());
  const std::size_t bins = hi > lo ? 30 : 1;
  std::vector<double> counts(bins, 0);
  for (double v : values) {
    const auto b = hi > lo ? static_cast<std::size_t>((v - lo) / (hi - lo) * static_cast<double>(bins)) : 0;
    counts[std::min(b, bins - 1)] += 1;
  }
  const double step = hi > lo ? (hi - lo) / static_cast<double>(bins) : 1;
  plot.Bars(lo + (hi > lo ? step / 2 : 0), step, counts, "bars");
  plot.Legend("bars", std::to_string(values.size()) + " shards, from " + FormatNumber(lo, 6) + " to " +
                          FormatNumber(hi, 6));
  return plot.Render();
}

std::string DatasetSection(const Report& r) {
  const Metadata& md = r.info.metadata;
  const DatasetStructure& ds = r.info.dataset_structure;
  std::string out = "<section id=\"dataset\"><h2>Dataset</h2><table>";
  out += Row({Cell("path"), Cell(r.root)});
  out += Row({Cell("description"), Cell(md.description)});
  out += Row({Cell("version"), Cell(md.dataset_version)});
  out += Row({Cell("license"), Cell(md.dataset_license)});
  out += Row({Cell("sedpack_version"), Cell(md.sedpack_version)});
  out += Row({Cell("custom_metadata"), Cell(md.custom_metadata.text())});
  out += Row({Cell("shards"), Cell(std::string(ShardFileTypeName(ds.shard_file_type)) + ", " +
                                   std::string(CompressionName(ds.compression)) + ", " +
                                   std::to_string(ds.examples_per_shard) + " examples per shard")});
  out += "</table><h3>Schema</h3><table>" + Row({"attribute", "dtype", "shape", "custom_metadata"}, true);
  for (const Attribute& a : ds.saved_data_description) {
    std::string shape = "(";
    for (std::size_t i = 0; i < a.shape.size(); ++i) shape += (i ? ", " : "") + std::to_string(a.shape[i]);
    shape += a.shape.size() == 1 ? ",)" : ")";
    out += Row({Cell(a.name), Cell(a.dtype), Cell(shape), Cell(a.custom_metadata.text())});
  }
  out += "</table><h3>Splits</h3><table>" +
         Row({"split", "examples", "shards", "bytes on disk", "decoded bytes", "codec ratio"}, true);
  for (const SplitReport& s : r.splits) {
    std::uint64_t bytes = 0, raw = 0;
    for (const ShardSummary& sh : s.shards) bytes += sh.bytes, raw += sh.raw_bytes;
    out += Row({Cell(SplitName(s.split)), Cell(std::to_string(s.stats.examples), true),
                Cell(std::to_string(s.shards.size()), true), Cell(Bytes(bytes), true), Cell(Bytes(raw), true),
                Cell(bytes ? FormatNumber(static_cast<double>(raw) / static_cast<double>(bytes), 4) : "-", true)});
  }
  return out + "</table></section>\n";
}

std::string ShardsAndMetadata(const SplitReport& s) {
  const std::string name(SplitName(s.split));
  std::vector<double> examples, bytes;
  for (const ShardSummary& sh : s.shards) {
    examples.push_back(static_cast<double>(sh.examples));
    bytes.push_back(static_cast<double>(sh.bytes));
  }
  std::string out = "<h3>Shards</h3>";
  out += DistributionPlot(Id("shards-examples", name), name + ": examples per shard", "examples", examples);
  out += DistributionPlot(Id("shards-bytes", name), name + ": bytes per shard", "bytes", bytes);
  out += "<h3>custom_metadata of the shards</h3>";
  if (s.custom_metadata.empty()) return out + "<p class=\"note\">No shard has custom_metadata.</p>";
  out += "<table>" + Row({"key", "shards", "distinct values", "most frequent values (shards)"}, true);
  for (const MetadataKeyCount& k : s.custom_metadata) {
    std::string values;
    for (const auto& [v, n] : k.values) values += (values.empty() ? "" : ", ") + v + " (" + std::to_string(n) + ")";
    out += Row({Cell(k.key), Cell(std::to_string(k.shards), true), Cell(std::to_string(k.distinct), true),
                Cell(values)});
  }
  return out + "</table>";
}

std::string AttributeSections(const SplitReport& s) {
  const std::string name(SplitName(s.split));
  std::string out = "<h3>Attributes</h3><table>" +
                    Row({"attribute", "dtype", "values", "NaN", "min", "max", "mean", "std"}, true);
  for (const AttributeStats& a : s.stats.attributes) {
    const Moments& m = a.moments;
    out += Row({Cell(a.name), Cell(DTypeName(a.dtype)), Cell(std::to_string(m.count), true),
                Cell(std::to_string(m.nan_count), true), Cell(m.count ? Extreme(m, false) : "-", true),
                Cell(m.count ? Extreme(m, true) : "-", true), Cell(FormatNumber(m.mean, 8), true),
                Cell(FormatNumber(m.StdDev(), 8), true)});
  }
  out += "</table>";
  for (const SampleProfile& p : s.profiles) {
    SvgPlot plot(Id("profile", name, p.attribute), name + ": " + p.attribute + " per sample (" +
                 std::to_string(p.mean.size()) + " of " + std::to_string(p.length) + " samples)", "sample", p.attribute);
    std::vector<double> lo(p.mean.size()), hi(p.mean.size());
    for (std::size_t t = 0; t < p.mean.size(); ++t) lo[t] = p.mean[t] - p.std[t], hi[t] = p.mean[t] + p.std[t];
    plot.Band(p.min, p.max, "envelope");
    plot.Band(lo, hi, "band");
    plot.Line(p.mean, "mean");
    plot.Legend("envelope", "min..max");
    plot.Legend("band", "mean +- std");
    plot.Legend("mean", "mean");
    out += plot.Render();
  }
  for (const ValueHistogram& h : s.histograms) {
    SvgPlot plot(Id("hist", name, h.attribute), name + ": values of " + h.attribute + " (all elements)", "value",
                 "count");
    std::vector<double> counts(h.counts.begin(), h.counts.end());
    plot.Bars(static_cast<double>(h.first), 1, counts, "bars");
    out += plot.Render();
  }
  return out;
}

std::string SnrSections(const SplitReport& s) {
  const std::string name(SplitName(s.split));
  std::string out;
  for (std::size_t i = 0; i < s.snrs.size(); ++i) {
    const SnrCurve& c = s.snrs[i];
    if (i == 0) out += "<h3>Signal-to-noise ratio</h3>";
    SvgPlot plot(Id("snr", name, std::to_string(i)), name + ": SNR of " + c.expression + " over " + c.attribute,
                 "sample", "SNR");
    plot.Line(c.snr, "snr");
    if (c.peak_sample >= 0) {
      plot.Mark(static_cast<double>(c.peak_sample), c.peak,
                "peak " + FormatNumber(c.peak, 4) + " at sample " + std::to_string(c.peak_sample));
    }
    out += plot.Render();
    std::string skipped;
    std::size_t used = 0;
    for (const SnrClass& k : c.classes) {
      if (k.used) ++used;
      else skipped += (skipped.empty() ? "" : ", ") + std::to_string(k.value) + " (" + std::to_string(k.examples) + ")";
    }
    out += "<p class=\"note\">" + EscapeHtml(c.expression) + ": " + std::to_string(used) + " classes used, median SNR " +
           FormatNumber(c.median, 4) +
           (skipped.empty() ? std::string(".") : "; skipped for fewer than 2 examples: " + EscapeHtml(skipped) + ".") +
           (c.snr.empty() ? " Fewer than 2 classes have 2 examples: no SNR." : "") + "</p>";
  }
  return out;
}

}  // namespace

std::string ReportToHtml(const Report& r) {
  std::string out = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>sedpack report&#58; " +
                    EscapeHtml(r.root) + "</title><style>" + std::string(kStyle) + "</style></head><body>\n";
  out += "<h1>sedpack report&#58; " + EscapeHtml(r.root) + "</h1>\n";
  out += DatasetSection(r);
  for (const SplitReport& s : r.splits) {
    const std::string name(SplitName(s.split));
    out += "<section id=\"" + Id("split", name) + "\"><h2>Split " + EscapeHtml(name) + "</h2>";
    out += ShardsAndMetadata(s);
    out += AttributeSections(s);
    out += SnrSections(s);
    out += "</section>\n";
  }
  return out + "</body></html>\n";
}

}  // namespace sedpack
