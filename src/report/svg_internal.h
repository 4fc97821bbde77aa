// SPDX-License-Identifier: Apache-2.0
// Inline SVG plots for the HTML report: axes with ticks, lines and bands over
// per-sample arrays decimated to one min/max pair per pixel column (so an
// 80,000-sample trace costs as much as a 900-sample one and no spike is lost),
// bars, and a marked point. No script, no external reference.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace sedpack::report_internal {

/// `text` safe inside HTML/SVG text and attribute values. ':' is written as a
/// character reference too, so that no text taken from the dataset (a
/// license URL, a description) reads as an address in the page source.
std::string EscapeHtml(std::string_view text);

/// A number for tick labels and tables: up to `digits` significant digits.
std::string FormatNumber(double x, int digits = 4);

class SvgPlot {
 public:
  SvgPlot(std::string id, std::string title, std::string x_label, std::string y_label);

  /// Samples 0..n-1 on the x axis; the y range grows to fit everything added.
  void Line(const std::vector<double>& y, std::string_view css_class);
  /// The area between lo[i] and hi[i].
  void Band(const std::vector<double>& lo, const std::vector<double>& hi, std::string_view css_class);
  /// One bar per value first, first + step, ... (decimated like lines when
  /// there are more values than columns).
  void Bars(double first, double step, const std::vector<double>& heights, std::string_view css_class);
  /// A circle at sample x, value y, with a label.
  void Mark(double x, double y, std::string label);
  /// A legend entry (CSS class of its swatch).
  void Legend(std::string_view css_class, std::string label);

  std::string Render() const;

 private:
  struct Layer {
    enum Kind { kLine, kBand, kBars } kind = kLine;
    std::string css_class;
    std::vector<double> lo, hi;  // per column (lines: min and max of the column)
    double first = 0, step = 1;  // bars: value of the first, distance between two
    std::size_t n = 0;           // samples before decimation
  };
  static void Decimate(const std::vector<double>& lo, const std::vector<double>& hi, Layer* layer);
  void Grow(const std::vector<double>& v);
  std::string LayerPath(const Layer& layer) const;
  std::string Axes() const;

  std::string id_, title_, x_label_, y_label_;
  std::vector<Layer> layers_;
  double x_lo_ = 0, x_hi_ = 1, y_lo_ = 0, y_hi_ = 0;
  bool has_y_ = false;
  bool has_mark_ = false;
  double mark_x_ = 0, mark_y_ = 0;
  std::string mark_label_;
  std::vector<std::pair<std::string, std::string>> legend_;
};

}  // namespace sedpack::report_internal
