// SPDX-License-Identifier: Apache-2.0
#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>

#include "report/accumulate_internal.h"

namespace sedpack::report_internal {
namespace {

// float16 to double by table: the trace loop runs once per sample of every
// example, and a table lookup is several times faster than decoding the bits.
const std::array<float, 65536>& HalfTable() {
  static const std::array<float, 65536> table = [] {
    std::array<float, 65536> t{};
    for (std::uint32_t i = 0; i < 65536; ++i) t[i] = Float16{static_cast<std::uint16_t>(i)}.ToFloat();
    return t;
  }();
  return table;
}

template <typename T>
void Widen(const std::byte* p, std::size_t n, double* out) {
  for (std::size_t k = 0; k < n; ++k) {
    T x;
    std::memcpy(&x, p + k * sizeof(T), sizeof(T));
    out[k] = static_cast<double>(x);
  }
}

// The first `n` elements of `v` as doubles (fewer if the value is shorter).
std::size_t ToDoubles(const ValueView& v, std::size_t n, double* out) {
  const std::size_t item = DTypeItemSize(v.dtype);
  if (item == 0) return 0;
  n = std::min(n, v.data.size() / item);
  const std::byte* p = v.data.data();
  switch (v.dtype) {
    case DType::kFloat16: {
      const auto& table = HalfTable();
      for (std::size_t k = 0; k < n; ++k) {
        std::uint16_t bits;
        std::memcpy(&bits, p + 2 * k, 2);
        out[k] = table[bits];
      }
      break;
    }
    case DType::kFloat32: Widen<float>(p, n, out); break;
    case DType::kFloat64: Widen<double>(p, n, out); break;
    case DType::kBool: case DType::kUInt8: Widen<std::uint8_t>(p, n, out); break;
    case DType::kInt8: Widen<std::int8_t>(p, n, out); break;
    case DType::kInt16: Widen<std::int16_t>(p, n, out); break;
    case DType::kUInt16: Widen<std::uint16_t>(p, n, out); break;
    case DType::kInt32: Widen<std::int32_t>(p, n, out); break;
    case DType::kUInt32: Widen<std::uint32_t>(p, n, out); break;
    case DType::kUInt64: Widen<std::uint64_t>(p, n, out); break;
    case DType::kInt64: case DType::kInt: Widen<std::int64_t>(p, n, out); break;
    default: return 0;
  }
  return n;
}

void AddSums(const double* x, std::size_t n, double* sum, double* sum2) {
  for (std::size_t t = 0; t < n; ++t) {
    sum[t] += x[t];
    sum2[t] += x[t] * x[t];
  }
}

// Flat binary encoding for the rank merge (raw doubles: exact).
class Writer {
 public:
  void U64(std::uint64_t v) { Raw(&v, sizeof(v)); }
  void I64(std::int64_t v) { Raw(&v, sizeof(v)); }
  void Doubles(const std::vector<double>& v) {
    U64(v.size());
    Raw(v.data(), v.size() * sizeof(double));
  }
  void Counts(const std::vector<std::uint64_t>& v) {
    U64(v.size());
    Raw(v.data(), v.size() * sizeof(std::uint64_t));
  }
  std::string Take() { return std::move(out_); }

 private:
  void Raw(const void* p, std::size_t n) { out_.append(static_cast<const char*>(p), n); }
  std::string out_;
};

class Reader {
 public:
  explicit Reader(const std::string& in) : in_(in) {}
  bool U64(std::uint64_t* v) { return Raw(v, sizeof(*v)); }
  bool I64(std::int64_t* v) { return Raw(v, sizeof(*v)); }
  template <typename T>
  bool Array(std::vector<T>* v, std::size_t expected) {
    std::uint64_t n = 0;
    if (!U64(&n) || n != expected) return false;
    v->resize(n);
    return Raw(v->data(), n * sizeof(T));
  }
  bool done() const { return pos_ == in_.size(); }

 private:
  bool Raw(void* p, std::size_t n) {
    if (in_.size() - pos_ < n) return false;
    std::memcpy(p, in_.data() + pos_, n);
    pos_ += n;
    return true;
  }
  const std::string& in_;
  std::size_t pos_ = 0;
};

}  // namespace

std::int64_t HistogramOffset(DType dtype) {
  switch (dtype) {
    case DType::kInt8: return 128;
    case DType::kInt16: return 32768;
    default: return 0;
  }
}

std::size_t HistogramSize(DType dtype) {
  switch (dtype) {
    case DType::kBool: return 2;
    case DType::kInt8: case DType::kUInt8: return 256;
    default: return 65536;
  }
}

Accumulator::Accumulator(const Plan& plan) : plan_(&plan) {
  for (std::uint64_t len : plan.lengths) {
    ProfileSums p;
    p.sum.assign(len, 0.0);
    p.sum2.assign(len, 0.0);
    p.min.assign(len, INFINITY);
    p.max.assign(len, -INFINITY);
    profiles_.push_back(std::move(p));
  }
  for (std::size_t a : plan.histogrammed) histograms_.emplace_back(HistogramSize(plan.schema[a].dtype), 0);
  classes_.resize(plan.expressions.size());
  const std::uint64_t longest = plan.lengths.empty() ? 0 : *std::max_element(plan.lengths.begin(), plan.lengths.end());
  row_.resize(longest);
  values_.resize(plan.schema.size());
}

Status Accumulator::AddShard(const DecodedShard& shard) {
  const Plan& plan = *plan_;
  for (std::size_t e = 0; e < shard.num_examples(); ++e) {
    for (std::size_t a = 0; a < plan.schema.size(); ++a) values_[a] = shard.Get(e, a);
    ++examples_;
    for (std::size_t h = 0; h < plan.histogrammed.size(); ++h) {
      const std::size_t a = plan.histogrammed[h];
      const std::size_t n = ToDoubles(values_[a], 16, row_.data());
      const auto offset = static_cast<double>(HistogramOffset(plan.schema[a].dtype));
      auto& counts = histograms_[h];
      for (std::size_t k = 0; k < n; ++k) {
        const double i = row_[k] + offset;
        if (i >= 0 && i < static_cast<double>(counts.size())) ++counts[static_cast<std::size_t>(i)];
      }
    }
    std::vector<ClassSums*> classes(plan.expressions.size());
    for (std::size_t x = 0; x < plan.expressions.size(); ++x) {
      const std::int64_t label = plan.expressions[x].Evaluate(values_);
      auto [it, inserted] = classes_[x].try_emplace(label);
      if (inserted) {
        if (classes_[x].size() > plan.max_classes) {
          return Status::InvalidArgument("--snr \"", plan.expressions[x].text(), "\": more than ", plan.max_classes,
                                         " classes; use a coarser leakage model (e.g. hw(...))");
        }
        it->second.sum.assign(plan.lengths[plan.snr_profile], 0.0);
        it->second.sum2.assign(plan.lengths[plan.snr_profile], 0.0);
      }
      classes[x] = &it->second;
    }
    for (std::size_t p = 0; p < plan.profiled.size(); ++p) {
      const std::size_t n = ToDoubles(values_[plan.profiled[p]], plan.lengths[p], row_.data());
      ProfileSums& s = profiles_[p];
      AddSums(row_.data(), n, s.sum.data(), s.sum2.data());
      for (std::size_t t = 0; t < n; ++t) {
        s.min[t] = std::min(s.min[t], row_[t]);
        s.max[t] = std::max(s.max[t], row_[t]);
      }
      if (p != plan.snr_profile) continue;
      for (ClassSums* c : classes) {
        ++c->n;
        AddSums(row_.data(), n, c->sum.data(), c->sum2.data());
      }
    }
  }
  return Status::OK();
}

Status Accumulator::Merge(const Accumulator& o) {
  examples_ += o.examples_;
  for (std::size_t p = 0; p < profiles_.size(); ++p) {
    ProfileSums& s = profiles_[p];
    const ProfileSums& t = o.profiles_[p];
    for (std::size_t i = 0; i < s.sum.size(); ++i) {
      s.sum[i] += t.sum[i];
      s.sum2[i] += t.sum2[i];
      s.min[i] = std::min(s.min[i], t.min[i]);
      s.max[i] = std::max(s.max[i], t.max[i]);
    }
  }
  for (std::size_t h = 0; h < histograms_.size(); ++h) {
    for (std::size_t i = 0; i < histograms_[h].size(); ++i) histograms_[h][i] += o.histograms_[h][i];
  }
  for (std::size_t x = 0; x < classes_.size(); ++x) {
    for (const auto& [label, c] : o.classes_[x]) {
      auto [it, inserted] = classes_[x].try_emplace(label, c);
      if (inserted) {
        if (classes_[x].size() > plan_->max_classes) {
          return Status::InvalidArgument("--snr \"", plan_->expressions[x].text(), "\": more than ",
                                         plan_->max_classes, " classes; use a coarser leakage model (e.g. hw(...))");
        }
        continue;
      }
      it->second.n += c.n;
      for (std::size_t i = 0; i < c.sum.size(); ++i) {
        it->second.sum[i] += c.sum[i];
        it->second.sum2[i] += c.sum2[i];
      }
    }
  }
  return Status::OK();
}

std::string Accumulator::Encode() const {
  Writer w;
  w.U64(examples_);
  for (const ProfileSums& s : profiles_) {
    w.Doubles(s.sum);
    w.Doubles(s.sum2);
    w.Doubles(s.min);
    w.Doubles(s.max);
  }
  for (const auto& h : histograms_) w.Counts(h);
  for (const auto& m : classes_) {
    w.U64(m.size());
    for (const auto& [label, c] : m) {
      w.I64(label);
      w.U64(c.n);
      w.Doubles(c.sum);
      w.Doubles(c.sum2);
    }
  }
  return w.Take();
}

Status Accumulator::Decode(const std::string& bytes) {
  const Status bad = Status::Internal("malformed report message between ranks");
  Reader r(bytes);
  if (!r.U64(&examples_)) return bad;
  for (std::size_t p = 0; p < profiles_.size(); ++p) {
    ProfileSums& s = profiles_[p];
    const std::size_t n = plan_->lengths[p];
    if (!r.Array(&s.sum, n) || !r.Array(&s.sum2, n) || !r.Array(&s.min, n) || !r.Array(&s.max, n)) return bad;
  }
  for (auto& h : histograms_) {
    if (!r.Array(&h, h.size())) return bad;
  }
  const std::size_t len = plan_->lengths.empty() ? 0 : plan_->lengths[plan_->snr_profile];
  for (auto& m : classes_) {
    m.clear();
    std::uint64_t count = 0;
    if (!r.U64(&count) || count > plan_->max_classes) return bad;
    for (std::uint64_t i = 0; i < count; ++i) {
      std::int64_t label = 0;
      ClassSums c;
      if (!r.I64(&label) || !r.U64(&c.n) || !r.Array(&c.sum, len) || !r.Array(&c.sum2, len)) return bad;
      m.emplace(label, std::move(c));
    }
  }
  return r.done() ? Status::OK() : bad;
}

namespace {

// Signal (variance over the classes of the class means) over noise (mean over
// the classes of the class variances), per sample, classes weighted equally.
std::vector<double> SnrOf(const std::vector<const ClassSums*>& used, std::size_t len) {
  std::vector<double> snr(len, 0.0);
  const auto k = static_cast<double>(used.size());
  std::vector<double> means(used.size());
  for (std::size_t t = 0; t < len; ++t) {
    double mean_of_means = 0, noise = 0;
    for (std::size_t c = 0; c < used.size(); ++c) {
      const auto n = static_cast<double>(used[c]->n);
      means[c] = used[c]->sum[t] / n;
      mean_of_means += means[c];
      noise += std::max(0.0, used[c]->sum2[t] / n - means[c] * means[c]);
    }
    mean_of_means /= k;
    noise /= k;
    double signal = 0;
    for (double m : means) signal += (m - mean_of_means) * (m - mean_of_means);
    signal /= k;
    snr[t] = noise > 0 ? signal / noise : (signal > 0 ? INFINITY : 0.0);
  }
  return snr;
}

void PeakAndMedian(SnrCurve* curve) {
  std::vector<double> finite;
  for (std::size_t t = 0; t < curve->snr.size(); ++t) {
    const double v = curve->snr[t];
    if (std::isnan(v)) continue;
    if (curve->peak_sample < 0 || v > curve->peak) {
      curve->peak = v;
      curve->peak_sample = static_cast<std::int64_t>(t);
    }
    finite.push_back(v);
  }
  if (finite.empty()) return;
  const std::size_t mid = finite.size() / 2;
  std::nth_element(finite.begin(), finite.begin() + static_cast<std::ptrdiff_t>(mid), finite.end());
  curve->median = finite[mid];
  if (finite.size() % 2 == 0) {
    curve->median = (curve->median + *std::max_element(finite.begin(), finite.begin() + static_cast<std::ptrdiff_t>(mid))) / 2;
  }
}

}  // namespace

void Accumulator::Finish(SplitReport* out) const {
  const Plan& plan = *plan_;
  const auto n = static_cast<double>(examples_);
  for (std::size_t p = 0; p < plan.profiled.size(); ++p) {
    const AttributeSpec& spec = plan.schema[plan.profiled[p]];
    SampleProfile prof;
    prof.attribute = spec.name;
    prof.length = static_cast<std::uint64_t>(spec.shape.empty() ? 1 : spec.shape[0]);
    if (examples_ > 0) {
      const ProfileSums& s = profiles_[p];
      prof.min = s.min;
      prof.max = s.max;
      for (std::size_t t = 0; t < s.sum.size(); ++t) {
        const double mean = s.sum[t] / n;
        prof.mean.push_back(mean);
        prof.std.push_back(std::sqrt(std::max(0.0, s.sum2[t] / n - mean * mean)));
      }
    }
    out->profiles.push_back(std::move(prof));
  }
  for (std::size_t h = 0; h < plan.histogrammed.size(); ++h) {
    const AttributeSpec& spec = plan.schema[plan.histogrammed[h]];
    const auto& counts = histograms_[h];
    ValueHistogram vh;
    vh.attribute = spec.name;
    std::size_t lo = 0, hi = counts.size();
    while (lo < hi && counts[lo] == 0) ++lo;
    while (hi > lo && counts[hi - 1] == 0) --hi;
    vh.first = static_cast<std::int64_t>(lo) - HistogramOffset(spec.dtype);
    vh.counts.assign(counts.begin() + static_cast<std::ptrdiff_t>(lo), counts.begin() + static_cast<std::ptrdiff_t>(hi));
    out->histograms.push_back(std::move(vh));
  }
  for (std::size_t x = 0; x < plan.expressions.size(); ++x) {
    SnrCurve curve;
    curve.expression = plan.expressions[x].text();
    curve.attribute = plan.schema[plan.profiled[plan.snr_profile]].name;
    curve.split = out->split;
    std::vector<const ClassSums*> used;
    for (const auto& [label, c] : classes_[x]) {
      curve.classes.push_back(SnrClass{label, c.n, c.n >= 2});
      if (c.n >= 2) used.push_back(&c);
    }
    if (used.size() >= 2) {
      curve.snr = SnrOf(used, plan.lengths[plan.snr_profile]);
      PeakAndMedian(&curve);
    }
    out->snrs.push_back(std::move(curve));
  }
}

}  // namespace sedpack::report_internal
