// SPDX-License-Identifier: Apache-2.0
#include "report/svg_internal.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace sedpack::report_internal {
namespace {

constexpr double kWidth = 960, kHeight = 300;
constexpr double kLeft = 72, kRight = 16, kTop = 34, kBottom = 44;
constexpr std::size_t kColumns = static_cast<std::size_t>(kWidth - kLeft - kRight);

std::string Coord(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.1f", v);
  return buf;
}

}  // namespace

std::string EscapeHtml(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      case ':': out += "&#58;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string FormatNumber(double x, int digits) {
  if (std::isnan(x)) return "NaN";
  if (std::isinf(x)) return x > 0 ? "inf" : "-inf";
  char buf[48];
  std::snprintf(buf, sizeof(buf), "%.*g", digits, x);
  return buf;
}

SvgPlot::SvgPlot(std::string id, std::string title, std::string x_label, std::string y_label)
    : id_(std::move(id)), title_(std::move(title)), x_label_(std::move(x_label)), y_label_(std::move(y_label)) {}

void SvgPlot::Decimate(const std::vector<double>& lo, const std::vector<double>& hi, Layer* layer) {
  const std::size_t n = std::min(lo.size(), hi.size());
  layer->n = n;
  const std::size_t columns = std::min(n, kColumns);
  layer->lo.assign(columns, NAN);
  layer->hi.assign(columns, NAN);
  for (std::size_t c = 0; c < columns; ++c) {
    const std::size_t begin = c * n / columns, end = std::max(begin + 1, (c + 1) * n / columns);
    double l = INFINITY, h = -INFINITY;
    for (std::size_t i = begin; i < end; ++i) {
      if (std::isfinite(lo[i])) l = std::min(l, lo[i]);
      if (std::isfinite(hi[i])) h = std::max(h, hi[i]);
    }
    if (l <= h) {
      layer->lo[c] = l;
      layer->hi[c] = h;
    }
  }
}

void SvgPlot::Grow(const std::vector<double>& v) {
  for (double y : v) {
    if (!std::isfinite(y)) continue;
    if (!has_y_) {
      y_lo_ = y_hi_ = y;
      has_y_ = true;
    }
    y_lo_ = std::min(y_lo_, y);
    y_hi_ = std::max(y_hi_, y);
  }
}

void SvgPlot::Line(const std::vector<double>& y, std::string_view css_class) {
  Band(y, y, css_class);
  layers_.back().kind = Layer::kLine;
}

void SvgPlot::Band(const std::vector<double>& lo, const std::vector<double>& hi, std::string_view css_class) {
  Layer layer;
  layer.kind = Layer::kBand;
  layer.css_class = std::string(css_class);
  Decimate(lo, hi, &layer);
  Grow(layer.lo);
  Grow(layer.hi);
  x_hi_ = std::max(x_hi_, static_cast<double>(layer.n > 0 ? layer.n - 1 : 0));
  layers_.push_back(std::move(layer));
}

void SvgPlot::Bars(double first, double step, const std::vector<double>& heights, std::string_view css_class) {
  Layer layer;
  layer.kind = Layer::kBars;
  layer.css_class = std::string(css_class);
  Decimate(heights, heights, &layer);
  layer.first = first;
  layer.step = step;
  Grow(layer.hi);
  Grow({0.0});
  x_lo_ = first - 0.5 * step;
  x_hi_ = first + (static_cast<double>(layer.n) - 0.5) * step;
  layers_.push_back(std::move(layer));
}

void SvgPlot::Mark(double x, double y, std::string label) {
  has_mark_ = true;
  mark_x_ = x;
  mark_y_ = y;
  mark_label_ = std::move(label);
}

void SvgPlot::Legend(std::string_view css_class, std::string label) {
  legend_.emplace_back(std::string(css_class), std::move(label));
}

std::string SvgPlot::LayerPath(const Layer& layer) const {
  const double span_y = y_hi_ - y_lo_;
  auto py = [&](double y) { return kTop + (kHeight - kTop - kBottom) * (1 - (y - y_lo_) / span_y); };
  const std::size_t columns = layer.lo.size();
  // Sample position of column c: the middle of the samples it covers.
  auto sample = [&](std::size_t c) {
    if (columns == layer.n) return static_cast<double>(c);
    const double begin = static_cast<double>(c * layer.n / columns);
    const double end = static_cast<double>(std::max(c * layer.n / columns + 1, (c + 1) * layer.n / columns));
    return (begin + end - 1) / 2;
  };
  auto px = [&](double x) { return kLeft + (kWidth - kLeft - kRight) * (x - x_lo_) / (x_hi_ - x_lo_); };
  std::string d;
  if (layer.kind == Layer::kBars) {
    const double w = std::max(0.5, (kWidth - kLeft - kRight) / static_cast<double>(std::max<std::size_t>(columns, 1)));
    for (std::size_t c = 0; c < columns; ++c) {
      if (std::isnan(layer.hi[c])) continue;
      const double x = px(layer.first + sample(c) * layer.step);
      d += "M" + Coord(x - w * 0.4) + " " + Coord(py(0)) + "V" + Coord(py(layer.hi[c])) + "h" + Coord(w * 0.8) + "V" +
           Coord(py(0)) + "Z";
    }
    return d;
  }
  bool pen_down = false;
  for (std::size_t c = 0; c < columns; ++c) {
    if (std::isnan(layer.lo[c])) {
      pen_down = false;
      continue;
    }
    const std::string x = Coord(px(sample(c)));
    d += (pen_down ? "L" : "M") + x + " " + Coord(py(layer.hi[c]));
    if (layer.kind == Layer::kLine && layer.lo[c] != layer.hi[c]) d += "L" + x + " " + Coord(py(layer.lo[c]));
    pen_down = true;
  }
  if (layer.kind == Layer::kBand) {
    for (std::size_t c = columns; c-- > 0;) {
      if (!std::isnan(layer.lo[c])) d += "L" + Coord(px(sample(c))) + " " + Coord(py(layer.lo[c]));
    }
    d += "Z";
  }
  return d;
}

std::string SvgPlot::Axes() const {
  std::string out;
  const double x0 = kLeft, x1 = kWidth - kRight, y0 = kTop, y1 = kHeight - kBottom;
  out += "<rect class=\"frame\" x=\"" + Coord(x0) + "\" y=\"" + Coord(y0) + "\" width=\"" + Coord(x1 - x0) +
         "\" height=\"" + Coord(y1 - y0) + "\"/>";
  for (int i = 0; i <= 4; ++i) {
    const double f = i / 4.0;
    const double yv = y_lo_ + f * (y_hi_ - y_lo_), ypix = y1 - f * (y1 - y0);
    out += "<text class=\"tick\" x=\"" + Coord(x0 - 6) + "\" y=\"" + Coord(ypix + 4) + "\" text-anchor=\"end\">" +
           FormatNumber(yv) + "</text>";
    const double xv = x_lo_ + f * (x_hi_ - x_lo_), xpix = x0 + f * (x1 - x0);
    out += "<text class=\"tick\" x=\"" + Coord(xpix) + "\" y=\"" + Coord(y1 + 16) + "\" text-anchor=\"middle\">" +
           FormatNumber(xv, 6) + "</text>";
  }
  out += "<text class=\"label\" x=\"" + Coord((x0 + x1) / 2) + "\" y=\"" + Coord(kHeight - 6) +
         "\" text-anchor=\"middle\">" + EscapeHtml(x_label_) + "</text>";
  out += "<text class=\"label\" transform=\"translate(14 " + Coord((y0 + y1) / 2) +
         ") rotate(-90)\" text-anchor=\"middle\">" + EscapeHtml(y_label_) + "</text>";
  out += "<text class=\"title\" x=\"" + Coord(x0) + "\" y=\"20\">" + EscapeHtml(title_) + "</text>";
  return out;
}

std::string SvgPlot::Render() const {
  SvgPlot p = *this;
  if (!p.has_y_) p.y_lo_ = 0, p.y_hi_ = 1;
  if (p.y_hi_ <= p.y_lo_) {
    const double pad = std::max(std::fabs(p.y_hi_) * 0.05, 1e-12);
    p.y_lo_ -= pad;
    p.y_hi_ += pad;
  }
  if (p.x_hi_ <= p.x_lo_) p.x_hi_ = p.x_lo_ + 1;
  std::string out = "<figure><svg id=\"" + EscapeHtml(id_) + "\" class=\"plot\" viewBox=\"0 0 " + Coord(kWidth) +
                    " " + Coord(kHeight) + "\" width=\"" + Coord(kWidth) + "\" height=\"" + Coord(kHeight) +
                    "\" role=\"img\"><title>" + EscapeHtml(title_) + "</title>";
  out += p.Axes();
  for (const Layer& layer : p.layers_) {
    out += "<path class=\"" + layer.css_class + "\" d=\"" + p.LayerPath(layer) + "\"/>";
  }
  if (has_mark_ && std::isfinite(mark_y_)) {
    const double px = kLeft + (kWidth - kLeft - kRight) * (mark_x_ - p.x_lo_) / (p.x_hi_ - p.x_lo_);
    const double py = kTop + (kHeight - kTop - kBottom) * (1 - (mark_y_ - p.y_lo_) / (p.y_hi_ - p.y_lo_));
    out += "<circle class=\"mark\" cx=\"" + Coord(px) + "\" cy=\"" + Coord(py) + "\" r=\"5\"/>";
    const bool right = px > kWidth * 0.7;
    out += "<text class=\"marklabel\" x=\"" + Coord(px + (right ? -9 : 9)) + "\" y=\"" + Coord(std::max(py, kTop + 12)) +
           "\" text-anchor=\"" + (right ? "end" : "start") + "\">" + EscapeHtml(mark_label_) + "</text>";
  }
  double lx = kWidth - kRight - 8;
  for (auto it = legend_.rbegin(); it != legend_.rend(); ++it) {
    const double w = 7.0 * static_cast<double>(it->second.size()) + 24;
    lx -= w;
    out += "<rect class=\"" + it->first + "\" x=\"" + Coord(lx) + "\" y=\"12\" width=\"12\" height=\"10\"/>";
    out += "<text class=\"tick\" x=\"" + Coord(lx + 16) + "\" y=\"21\">" + EscapeHtml(it->second) + "</text>";
  }
  out += "</svg></figure>\n";
  return out;
}

}  // namespace sedpack::report_internal
