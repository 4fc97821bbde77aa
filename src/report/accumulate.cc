// SPDX-License-Identifier: Apache-2.0
#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>

#include "report/accumulate_internal.h"

#include "maintain/stats_internal.h"

namespace sedpack::report_internal {
namespace {

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__SANITIZE_THREAD__)
// AVX2 clones of the per-sample loops do four doubles per instruction where
// the x86-64 baseline does two; the loader picks the clone the CPU runs. The
// loops are element-wise (no reduction is reordered) and FMA is not in the
// clone's ISA, so both clones give the same bits. Not under ThreadSanitizer,
// which cannot run the ifunc resolver that picks the clone at load time.
#define SEDPACK_REPORT_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define SEDPACK_REPORT_CLONES
#endif

// Four examples' samples [0, n) of a block, added in one pass to the
// per-sample sums, squares and extremes: each array is loaded and stored once
// for the four (the stores bound these loops), and each element still takes
// the examples one after the other, in order, so the sums are those of adding
// one example at a time, bit for bit.
SEDPACK_REPORT_CLONES void AddFourToProfile(const double* __restrict x0, const double* __restrict x1,
                                            const double* __restrict x2, const double* __restrict x3, std::size_t n,
                                            double* __restrict sum, double* __restrict sum2, double* __restrict lo,
                                            double* __restrict hi) {
  for (std::size_t t = 0; t < n; ++t) {
    const double a = x0[t], b = x1[t], c = x2[t], d = x3[t];
    sum[t] = (((sum[t] + a) + b) + c) + d;
    sum2[t] = (((sum2[t] + a * a) + b * b) + c * c) + d * d;
    double l = lo[t], h = hi[t];
    l = a < l ? a : l, h = a > h ? a : h;
    l = b < l ? b : l, h = b > h ? b : h;
    l = c < l ? c : l, h = c > h ? c : h;
    l = d < l ? d : l, h = d > h ? d : h;
    lo[t] = l, hi[t] = h;
  }
}

// The same for one example.
SEDPACK_REPORT_CLONES void AddOneToProfile(const double* __restrict x, std::size_t n, double* __restrict sum,
                                           double* __restrict sum2, double* __restrict lo, double* __restrict hi) {
  for (std::size_t t = 0; t < n; ++t) {
    const double v = x[t];
    sum[t] += v;
    sum2[t] += v * v;
    lo[t] = v < lo[t] ? v : lo[t];
    hi[t] = v > hi[t] ? v : hi[t];
  }
}

SEDPACK_REPORT_CLONES void AddSums(const double* __restrict x, std::size_t n, double* __restrict sum,
                                   double* __restrict sum2) {
  for (std::size_t t = 0; t < n; ++t) {
    sum[t] += x[t];
    sum2[t] += x[t] * x[t];
  }
}

SEDPACK_REPORT_CLONES void AddInto(double* __restrict to, const double* __restrict from, std::size_t n) {
  for (std::size_t t = 0; t < n; ++t) to[t] += from[t];
}

// The cache lines of samples [t0, t1) of `v`: the next example's block is
// fetched while this one is added (the blocks of consecutive examples lie a
// whole trace apart, too far for the hardware prefetcher to follow).
void PrefetchSamples(const ValueView& v, std::size_t t0, std::size_t t1) {
  const std::size_t item = DTypeItemSize(v.dtype);
  if (v.data.size() < t1 * item) return;
  for (std::size_t i = t0 * item; i < t1 * item; i += 64) __builtin_prefetch(v.data.data() + i);
}

// Flat binary encoding for the rank merge (raw doubles: exact).
class Writer {
 public:
  explicit Writer(std::string* out) : out_(*out) {}
  void U64(std::uint64_t v) { Raw(&v, sizeof(v)); }
  void I64(std::int64_t v) { Raw(&v, sizeof(v)); }
  void Doubles(const Samples& v) {
    U64(v.size());
    Raw(v.data(), v.size() * sizeof(double));
  }
  void Counts(const std::vector<std::uint64_t>& v) {
    U64(v.size());
    Raw(v.data(), v.size() * sizeof(std::uint64_t));
  }

 private:
  void Raw(const void* p, std::size_t n) { out_.append(static_cast<const char*>(p), n); }
  std::string& out_;
};

class Reader {
 public:
  explicit Reader(std::string_view in) : in_(in) {}
  bool U64(std::uint64_t* v) { return Raw(v, sizeof(*v)); }
  bool I64(std::int64_t* v) { return Raw(v, sizeof(*v)); }
  template <typename V>
  bool Array(V* v, std::size_t expected) {
    std::uint64_t n = 0;
    if (!U64(&n) || n != expected) return false;
    v->resize(n);
    return Raw(v->data(), n * sizeof(typename V::value_type));
  }
  bool done() const { return pos_ == in_.size(); }

 private:
  bool Raw(void* p, std::size_t n) {
    if (in_.size() - pos_ < n) return false;
    std::memcpy(p, in_.data() + pos_, n);
    pos_ += n;
    return true;
  }
  std::string_view in_;
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
  row_.resize(4 * maintain_internal::kMomentsBlock);
  values_.resize(plan.schema.size());
}

void Accumulator::AddBlock(const std::vector<ValueView>& views, std::size_t t0, std::size_t t1, std::size_t p,
                           const std::vector<std::vector<ClassSums*>>* labels, std::vector<Moments>* moments) {
  constexpr std::size_t kBlock = maintain_internal::kMomentsBlock;
  const std::size_t len = plan_->lengths[p];
  ProfileSums& s = profiles_[p];
  const std::size_t at = std::min(t0, len);  // past the kept samples nothing is added (want is 0)
  double* sum = s.sum.data() + at;
  double* sum2 = s.sum2.data() + at;
  double* lo = s.min.data() + at;
  double* hi = s.max.data() + at;
  const std::size_t want = t0 < len ? std::min(t1, len) - t0 : 0;
  for (std::size_t e0 = 0; e0 < views.size(); e0 += 4) {
    const std::size_t group = std::min<std::size_t>(4, views.size() - e0);
    double* x[4];
    std::size_t n[4], m[4];
    bool full = group == 4;
    for (std::size_t k = 0; k < group; ++k) {
      const std::size_t e = e0 + k;
      if (e + 4 < views.size()) PrefetchSamples(views[e + 4], t0, t1);
      x[k] = row_.data() + k * kBlock;
      n[k] = maintain_internal::ToDoubles(views[e], t0, t1, x[k]);
      m[k] = std::min(n[k], want);
      full = full && m[k] == want;
    }
    if (full) {
      AddFourToProfile(x[0], x[1], x[2], x[3], want, sum, sum2, lo, hi);
    } else {  // a short value (or the last examples): one at a time
      for (std::size_t k = 0; k < group; ++k) AddOneToProfile(x[k], m[k], sum, sum2, lo, hi);
    }
    for (std::size_t k = 0; k < group; ++k) {
      for (std::size_t l = 0; labels != nullptr && l < labels->size(); ++l) {
        ClassSums* c = (*labels)[l][e0 + k];
        AddSums(x[k], m[k], c->sum.data() + at, c->sum2.data() + at);
      }
      maintain_internal::AddBlockToMoments(views[e0 + k], t0, x[k], n[k], (*moments)[e0 + k]);  // may reorder x[k]
    }
  }
}

Status Accumulator::AddShard(const DecodedShard& shard, std::vector<Moments>* moments) {
  const Plan& plan = *plan_;
  const std::size_t examples = shard.num_examples();
  // labels[x][e]: the class sums example e adds to for expression x.
  std::vector<std::vector<ClassSums*>> labels(plan.expressions.size(), std::vector<ClassSums*>(examples));
  std::vector<bool> profiled(plan.schema.size(), false);
  for (std::size_t a : plan.profiled) profiled[a] = true;
  for (std::size_t e = 0; e < examples; ++e) {
    for (std::size_t a = 0; a < plan.schema.size(); ++a) {
      values_[a] = shard.Get(e, a);
      const DType d = plan.schema[a].dtype;
      if (!profiled[a] && d != DType::kStr && d != DType::kBytes) {
        maintain_internal::AddValueToMoments(values_[a], (*moments)[a]);
      }
    }
    for (std::size_t h = 0; h < plan.histogrammed.size(); ++h) {
      const std::size_t a = plan.histogrammed[h];
      const std::size_t n = maintain_internal::ToDoubles(values_[a], 0, 16, row_.data());
      const auto offset = static_cast<double>(HistogramOffset(plan.schema[a].dtype));
      auto& counts = histograms_[h];
      for (std::size_t k = 0; k < n; ++k) {
        const double i = row_[k] + offset;
        if (i >= 0 && i < static_cast<double>(counts.size())) ++counts[static_cast<std::size_t>(i)];
      }
    }
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
      ++it->second.n;
      labels[x][e] = &it->second;
    }
  }
  examples_ += examples;
  // Block by samples (the blocks of `stats`' moments), then by example: the
  // sums of a block stay in cache while every example of the shard is added
  // to them (a whole trace's sums would be streamed through memory once per
  // example). Each block of an example is converted once and feeds its sums,
  // its class's sums and its moments.
  constexpr std::size_t kBlock = maintain_internal::kMomentsBlock;
  std::vector<Moments> per_example(examples);
  std::vector<ValueView> views(examples);
  for (std::size_t p = 0; p < plan.profiled.size(); ++p) {
    const std::size_t a = plan.profiled[p];
    const auto full = static_cast<std::size_t>(plan.schema[a].shape[0]);
    std::fill(per_example.begin(), per_example.end(), Moments{});
    for (std::size_t e = 0; e < examples; ++e) views[e] = shard.Get(e, a);
    for (std::size_t t0 = 0; t0 < full; t0 += kBlock) {
      const std::size_t t1 = std::min(full, t0 + kBlock);
      AddBlock(views, t0, t1, p, p == plan.snr_profile ? &labels : nullptr, &per_example);
    }
    for (const Moments& em : per_example) (*moments)[a].Merge(em);
  }
  return Status::OK();
}

Status Accumulator::Merge(Accumulator&& o) {
  examples_ += o.examples_;
  for (std::size_t p = 0; p < profiles_.size(); ++p) {
    ProfileSums& s = profiles_[p];
    const ProfileSums& t = o.profiles_[p];
    AddInto(s.sum.data(), t.sum.data(), s.sum.size());
    AddInto(s.sum2.data(), t.sum2.data(), s.sum2.size());
    for (std::size_t i = 0; i < s.min.size(); ++i) {
      s.min[i] = std::min(s.min[i], t.min[i]);
      s.max[i] = std::max(s.max[i], t.max[i]);
    }
  }
  for (std::size_t h = 0; h < histograms_.size(); ++h) {
    for (std::size_t i = 0; i < histograms_[h].size(); ++i) histograms_[h][i] += o.histograms_[h][i];
  }
  for (std::size_t x = 0; x < classes_.size(); ++x) {
    for (auto& [label, c] : o.classes_[x]) {
      auto [it, inserted] = classes_[x].try_emplace(label);
      if (inserted) {
        if (classes_[x].size() > plan_->max_classes) {
          return Status::InvalidArgument("--snr \"", plan_->expressions[x].text(), "\": more than ",
                                         plan_->max_classes, " classes; use a coarser leakage model (e.g. hw(...))");
        }
        it->second = std::move(c);  // the sums of a class only one side saw move, not copied
        continue;
      }
      it->second.n += c.n;
      AddInto(it->second.sum.data(), c.sum.data(), c.sum.size());
      AddInto(it->second.sum2.data(), c.sum2.data(), c.sum2.size());
    }
  }
  o.classes_.assign(o.classes_.size(), {});
  return Status::OK();
}

std::size_t Accumulator::EncodedSize() const {
  std::size_t n = 8;
  for (const ProfileSums& s : profiles_) n += 4 * 8 + 8 * (s.sum.size() + s.sum2.size() + s.min.size() + s.max.size());
  for (const auto& h : histograms_) n += 8 + 8 * h.size();
  for (const auto& m : classes_) {
    n += 8;
    for (const auto& [label, c] : m) n += 4 * 8 + 8 * (c.sum.size() + c.sum2.size());
  }
  return n;
}

void Accumulator::EncodeTo(std::string* out) const {
  Writer w(out);
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
}

Status Accumulator::Decode(std::string_view bytes) {
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
      prof.min.assign(s.min.begin(), s.min.end());
      prof.max.assign(s.max.begin(), s.max.end());
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
