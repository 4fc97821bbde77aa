// SPDX-License-Identifier: Apache-2.0
#include "sedpack/maintain/stats.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define SEDPACK_STATS_F16C 1
#endif
// An AVX2 clone of the block moments (four lanes where the baseline has two;
// lane-wise, no FMA: the same bits). Not under ThreadSanitizer, which cannot
// run the ifunc resolver that picks the clone.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__SANITIZE_THREAD__)
#define SEDPACK_STATS_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define SEDPACK_STATS_CLONES
#endif

#include <nlohmann/json.hpp>

#include <atomic>
#include <cmath>
#include <cstring>
#include <map>
#include <mutex>
#include <sstream>
#include <thread>

#include "sedpack/codecs/hash.h"
#include "sedpack/check/check.h"
#include "sedpack/dataset/dataset.h"
#include "sedpack/dataset/reader.h"
#include "sedpack/cancel.h"
#include "maintain/shard_tasks_internal.h"
#include "maintain/stats_internal.h"
#include "parallel/worker_pool.h"
#include "sedpack/io/file.h"

namespace sedpack {
namespace {

bool IsNumeric(DType d) { return d != DType::kStr && d != DType::kBytes; }

std::int64_t SignedElement(const ValueView& v, std::size_t i) {
  switch (v.dtype) {
    case DType::kInt8: return v.At<std::int8_t>(i);
    case DType::kInt16: return v.At<std::int16_t>(i);
    case DType::kInt32: return v.At<std::int32_t>(i);
    default: return v.At<std::int64_t>(i);
  }
}

std::uint64_t UnsignedElement(const ValueView& v, std::size_t i) {
  switch (v.dtype) {
    case DType::kBool: return v.At<std::uint8_t>(i) ? 1 : 0;
    case DType::kUInt8: return v.At<std::uint8_t>(i);
    case DType::kUInt16: return v.At<std::uint16_t>(i);
    case DType::kUInt32: return v.At<std::uint32_t>(i);
    default: return v.At<std::uint64_t>(i);
  }
}

}  // namespace

// Moments as text for sending between ranks (hex floats are exact).
std::string maintain_internal::EncodeMoments(const std::vector<Moments>& ms, std::uint64_t examples) {
  std::ostringstream out;
  out << examples << "\n";
  for (const Moments& m : ms) {
    out << m.count << " " << m.nan_count << " " << std::hexfloat << m.mean << " " << m.m2 << " " << m.scale << " "
        << m.min << " " << m.max << std::defaultfloat << " " << m.has_signed << " " << m.signed_min << " "
        << m.signed_max << " " << m.has_unsigned << " " << m.unsigned_min << " " << m.unsigned_max << "\n";
  }
  return out.str();
}

Status maintain_internal::DecodeMoments(const std::string& text, std::vector<Moments>* ms, std::uint64_t* examples) {
  std::istringstream in(text);
  in >> *examples;
  for (Moments& m : *ms) {
    std::string mean, m2, scale, min, max;
    in >> m.count >> m.nan_count >> mean >> m2 >> scale >> min >> max >> m.has_signed >> m.signed_min >>
        m.signed_max >> m.has_unsigned >> m.unsigned_min >> m.unsigned_max;
    m.mean = std::strtod(mean.c_str(), nullptr);
    m.m2 = std::strtod(m2.c_str(), nullptr);
    m.scale = std::strtod(scale.c_str(), nullptr);
    m.min = std::strtod(min.c_str(), nullptr);
    m.max = std::strtod(max.c_str(), nullptr);
  }
  if (!in) return Status::Internal("malformed statistics message");
  return Status::OK();
}

namespace {

// The power of two at least |x| (at most 2^1023, so that x / scale stays finite).
double ScaleFor(double x) {
  const double a = std::fabs(x);
  if (a == 0 || !std::isfinite(a)) return 0;
  return std::ldexp(1.0, std::min(std::ilogb(a) + 1, 1023));
}

// Express m2 (in units of from^2) in units of to^2; exact for powers of two.
double Rescale(double m2, double from, double to) {
  if (from == to || m2 == 0) return m2;
  const double r = from / to;
  return m2 * r * r;
}

}  // namespace

void Moments::Add(double x) {
  if (std::isnan(x)) {
    ++nan_count;
    return;
  }
  if (count == 0) {
    min = max = x;
  } else {
    min = std::min(min, x);
    max = std::max(max, x);
  }
  ++count;
  if (const double s = ScaleFor(x); s > scale) {
    m2 = Rescale(m2, scale > 0 ? scale : 1, s);
    scale = s;
  }
  const double unit = scale > 0 ? scale : 1;
  // Deviations in units of `unit`: |x / unit| <= 1, so nothing overflows.
  const double d = x / unit - mean / unit;
  mean += (d / static_cast<double>(count)) * unit;
  m2 += d * (x / unit - mean / unit);
}

void Moments::AddInteger(std::int64_t x) {
  if (!has_signed) {
    signed_min = signed_max = x;
    has_signed = true;
  } else {
    signed_min = std::min(signed_min, x);
    signed_max = std::max(signed_max, x);
  }
  Add(static_cast<double>(x));
}

void Moments::AddUnsigned(std::uint64_t x) {
  if (!has_unsigned) {
    unsigned_min = unsigned_max = x;
    has_unsigned = true;
  } else {
    unsigned_min = std::min(unsigned_min, x);
    unsigned_max = std::max(unsigned_max, x);
  }
  Add(static_cast<double>(x));
}

void Moments::Merge(const Moments& o) {
  nan_count += o.nan_count;
  if (o.has_signed) {
    signed_min = has_signed ? std::min(signed_min, o.signed_min) : o.signed_min;
    signed_max = has_signed ? std::max(signed_max, o.signed_max) : o.signed_max;
    has_signed = true;
  }
  if (o.has_unsigned) {
    unsigned_min = has_unsigned ? std::min(unsigned_min, o.unsigned_min) : o.unsigned_min;
    unsigned_max = has_unsigned ? std::max(unsigned_max, o.unsigned_max) : o.unsigned_max;
    has_unsigned = true;
  }
  if (o.count == 0) return;
  if (count == 0) {  // the exact extremes and NaNs are merged above
    count = o.count;
    mean = o.mean;
    m2 = o.m2;
    scale = o.scale;
    min = o.min;
    max = o.max;
    return;
  }
  const double s = std::max(scale, o.scale);
  const double unit = s > 0 ? s : 1;
  const double m2a = Rescale(m2, scale > 0 ? scale : 1, unit);
  const double m2b = Rescale(o.m2, o.scale > 0 ? o.scale : 1, unit);
  const double n = static_cast<double>(count) + static_cast<double>(o.count);
  const double d = o.mean / unit - mean / unit;
  mean += (d * (static_cast<double>(o.count) / n)) * unit;
  m2 = m2a + m2b + d * d * (static_cast<double>(count) / n) * static_cast<double>(o.count);
  scale = s;
  count += o.count;
  min = std::min(min, o.min);
  max = std::max(max, o.max);
}

double Moments::StdDev() const {
  if (count < 2) return 0.0;
  return std::sqrt(m2 / static_cast<double>(count)) * (scale > 0 ? scale : 1);
}

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

#ifdef SEDPACK_STATS_F16C
// float16 by the CPU's conversion, eight at a time (exact, as the table is).
// Compiled for AVX/F16C in this function only; the caller checks for AVX2,
// which every CPU with F16C that runs AVX2 code has (and clang 14 does not
// know the "f16c" feature name).
__attribute__((target("avx,f16c"))) void HalfToDoubleF16c(const std::byte* p, std::size_t n, double* out) {
  std::size_t k = 0;
  for (; k + 8 <= n; k += 8) {
    const __m256 f = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 2 * k)));
    _mm256_storeu_pd(out + k, _mm256_cvtps_pd(_mm256_castps256_ps128(f)));
    _mm256_storeu_pd(out + k + 4, _mm256_cvtps_pd(_mm256_extractf128_ps(f, 1)));
  }
  for (; k < n; ++k) {
    std::uint16_t bits;
    std::memcpy(&bits, p + 2 * k, 2);
    out[k] = HalfTable()[bits];
  }
}
#endif

template <typename T>
void Widen(const std::byte* p, std::size_t n, double* out) {
  for (std::size_t k = 0; k < n; ++k) {
    T x;
    std::memcpy(&x, p + k * sizeof(T), sizeof(T));
    out[k] = static_cast<double>(x);
  }
}

}  // namespace

std::size_t maintain_internal::ToDoubles(const ValueView& v, std::size_t begin, std::size_t end, double* out) {
  const std::size_t item = DTypeItemSize(v.dtype);
  if (item == 0 || v.data.size() / item <= begin) return 0;
  const std::size_t n = std::min(end, v.data.size() / item) - begin;
  const std::byte* p = v.data.data() + begin * item;
  switch (v.dtype) {
    case DType::kFloat16: {
#ifdef SEDPACK_STATS_F16C
      if (__builtin_cpu_supports("avx2")) {
        HalfToDoubleF16c(p, n, out);
        break;
      }
#endif
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


namespace {

// The moments of x[0..n) in one go (the largest magnitude, then the scaled
// mean, then the scaled squared deviations from it: passes over a block in
// cache), merged into `m`. Much faster than adding one value at a time, which
// divides per value, and at least as precise (two-pass within the block).
// NaNs are counted and squeezed out of `x` first.
SEDPACK_STATS_CLONES void AddBlock(double* x, std::size_t n, Moments& m) {
  Moments b;
  // Four independent chains per reduction: a single chain of dependent
  // operations runs at one element per latency; the order is fixed, so the
  // result still depends on the data only. NaNs are counted in the same pass
  // (a comparison with NaN is false, so they never become the min or max).
  double lo[4] = {INFINITY, INFINITY, INFINITY, INFINITY}, hi[4] = {-INFINITY, -INFINITY, -INFINITY, -INFINITY};
  std::size_t nan[4] = {0, 0, 0, 0};
  std::size_t k = 0;
#ifdef SEDPACK_STATS_F16C
  // The same four chains in two SSE2 registers (the compiler keeps them
  // scalar): min_pd(v, lo) is v < lo ? v : lo and max_pd likewise, lane by
  // lane, so the extremes are the scalar loop's bit for bit.
  if (n >= 4) {
    __m128d lo01 = _mm_set1_pd(INFINITY), lo23 = lo01, hi01 = _mm_set1_pd(-INFINITY), hi23 = hi01;
    __m128i nan01 = _mm_setzero_si128(), nan23 = nan01;
    for (; k + 4 <= n; k += 4) {
      const __m128d a = _mm_loadu_pd(x + k), b = _mm_loadu_pd(x + k + 2);
      lo01 = _mm_min_pd(a, lo01), lo23 = _mm_min_pd(b, lo23);
      hi01 = _mm_max_pd(a, hi01), hi23 = _mm_max_pd(b, hi23);
      nan01 = _mm_sub_epi64(nan01, _mm_castpd_si128(_mm_cmpunord_pd(a, a)));  // a NaN lane is -1
      nan23 = _mm_sub_epi64(nan23, _mm_castpd_si128(_mm_cmpunord_pd(b, b)));
    }
    _mm_storeu_pd(lo, lo01), _mm_storeu_pd(lo + 2, lo23), _mm_storeu_pd(hi, hi01), _mm_storeu_pd(hi + 2, hi23);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(nan), nan01);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(nan + 2), nan23);
  }
#endif
  for (; k + 4 <= n; k += 4) {
    for (int j = 0; j < 4; ++j) {
      const double v = x[k + j];
      nan[j] += v != v;
      lo[j] = v < lo[j] ? v : lo[j];
      hi[j] = v > hi[j] ? v : hi[j];
    }
  }
  for (; k < n; ++k) {
    nan[0] += x[k] != x[k];
    lo[0] = x[k] < lo[0] ? x[k] : lo[0];
    hi[0] = x[k] > hi[0] ? x[k] : hi[0];
  }
  const std::size_t nans = nan[0] + nan[1] + nan[2] + nan[3];
  if (nans > 0) {
    std::size_t kept = 0;
    for (k = 0; k < n; ++k) {
      if (!std::isnan(x[k])) x[kept++] = x[k];
    }
    n = kept;
  }
  b.nan_count = nans;
  if (n > 0) {
    b.min = std::min(std::min(lo[0], lo[1]), std::min(lo[2], lo[3]));
    b.max = std::max(std::max(hi[0], hi[1]), std::max(hi[2], hi[3]));
    b.count = n;
    const double amax = std::max(std::fabs(b.min), std::fabs(b.max));
    b.scale = std::isfinite(amax) ? ScaleFor(amax) : 0;
    // A power of two: multiplying by its inverse is exact, as dividing is.
    const double inv = 1.0 / (b.scale > 0 ? b.scale : 1);
    double sum[4] = {0, 0, 0, 0};
    for (k = 0; k + 4 <= n; k += 4) {
      for (int j = 0; j < 4; ++j) sum[j] += x[k + j] * inv;
    }
    for (; k < n; ++k) sum[0] += x[k] * inv;
    const double mean = ((sum[0] + sum[1]) + (sum[2] + sum[3])) / static_cast<double>(n);
    double m2[4] = {0, 0, 0, 0};
    for (k = 0; k + 4 <= n; k += 4) {
      for (int j = 0; j < 4; ++j) m2[j] += (x[k + j] * inv - mean) * (x[k + j] * inv - mean);
    }
    for (; k < n; ++k) m2[0] += (x[k] * inv - mean) * (x[k] * inv - mean);
    b.mean = mean * (b.scale > 0 ? b.scale : 1);
    b.m2 = (m2[0] + m2[1]) + (m2[2] + m2[3]);
  }
  m.Merge(b);
}

}  // namespace

void maintain_internal::AddBlockToMoments(const ValueView& v, std::size_t start, double* block, std::size_t len,
                                          Moments& mm) {
  const std::size_t item = DTypeItemSize(v.dtype);
  const bool is_signed = v.dtype == DType::kInt8 || v.dtype == DType::kInt16 || v.dtype == DType::kInt32 ||
                         v.dtype == DType::kInt64 || v.dtype == DType::kInt;
  const bool is_unsigned = v.dtype == DType::kUInt8 || v.dtype == DType::kUInt16 || v.dtype == DType::kUInt32 ||
                           v.dtype == DType::kUInt64 || v.dtype == DType::kBool;
  if (len > 0 && (is_signed || is_unsigned)) {
    // Up to 32 bits a double holds every integer; beyond, the extremes come
    // from the integers themselves (2^53 + 1 has no double).
    Moments extremes;
    extremes.has_signed = is_signed;
    extremes.has_unsigned = is_unsigned;
    if (item <= 4) {
      const double lo = *std::min_element(block, block + len), hi = *std::max_element(block, block + len);
      if (is_signed) {
        extremes.signed_min = static_cast<std::int64_t>(lo);
        extremes.signed_max = static_cast<std::int64_t>(hi);
      } else {
        extremes.unsigned_min = static_cast<std::uint64_t>(lo);
        extremes.unsigned_max = static_cast<std::uint64_t>(hi);
      }
    } else {
      for (std::size_t k = 0; k < len; ++k) {
        if (is_signed) {
          const std::int64_t x = SignedElement(v, start + k);
          extremes.signed_min = k ? std::min(extremes.signed_min, x) : x;
          extremes.signed_max = k ? std::max(extremes.signed_max, x) : x;
        } else {
          const std::uint64_t x = UnsignedElement(v, start + k);
          extremes.unsigned_min = k ? std::min(extremes.unsigned_min, x) : x;
          extremes.unsigned_max = k ? std::max(extremes.unsigned_max, x) : x;
        }
      }
    }
    mm.Merge(extremes);
  }
  AddBlock(block, len, mm);
}

void maintain_internal::AddValueToMoments(const ValueView& v, Moments& mm) {
  const std::size_t item = DTypeItemSize(v.dtype);
  const std::size_t n = item ? v.data.size() / item : 0;
  double block[kMomentsBlock];
  Moments value;
  for (std::size_t start = 0; start < n; start += kMomentsBlock) {
    const std::size_t len = ToDoubles(v, start, std::min(n, start + kMomentsBlock), block);
    AddBlockToMoments(v, start, block, len, value);
  }
  mm.Merge(value);
}

Result<SplitStats> ComputeSplitStats(Comm& comm, const std::string& root, Split split, int threads) {
  ShardPassOptions pass;
  pass.threads = threads;
  return ComputeSplitStats(comm, root, split, pass);
}

Result<SplitStats> ComputeSplitStats(Comm& comm, const std::string& root, Split split, const ShardPassOptions& pass) {
  SEDPACK_ASSIGN_OR_RETURN(std::shared_ptr<Dataset> ds, Dataset::Open(root));
  const auto& schema = ds->schema();
  if (!ds->info().FindSplit(split)) {
    return Status::NotFound(root, ": the dataset has no split \"", SplitName(split), "\"");
  }
  CheckOptions walk;
  walk.splits = {split};
  // Each shard gets its own moments, merged in path order at the end: floating
  // point merges are not associative, so merging per thread (in whatever order
  // the threads happened to take the shards) would make the last digits
  // depend on the thread count and on timing.
  struct ShardMoments {
    std::vector<Moments> moments;
    std::uint64_t examples = 0;
  };
  std::map<std::string, ShardMoments> per_shard;
  std::mutex mu;
  SEDPACK_RETURN_NOT_OK(maintain_internal::ForEachShard(
      comm, *ds, walk, pass, nullptr,
      [&](int, const ShardCheckTask& task, const DecodedShard& shard) -> Status {
        ShardMoments m{std::vector<Moments>(schema.size()), shard.num_examples()};
        for (std::size_t e = 0; e < shard.num_examples(); ++e) {
          for (std::size_t a = 0; a < schema.size(); ++a) {
            if (!IsNumeric(schema[a].dtype)) continue;
            maintain_internal::AddValueToMoments(shard.Get(e, a), m.moments[a]);
          }
        }
        std::lock_guard<std::mutex> lock(mu);
        per_shard[task.path] = std::move(m);
        return Status::OK();
      }));
  std::vector<Moments> total(schema.size());
  std::uint64_t total_examples = 0;
  for (const auto& [path, m] : per_shard) {
    for (std::size_t a = 0; a < schema.size(); ++a) total[a].Merge(m.moments[a]);
    total_examples += m.examples;
  }
  // Rank 0 merges the ranks' moments (in rank order, so the result does not
  // depend on timing) and broadcasts them.
  SEDPACK_ASSIGN_OR_RETURN(std::vector<std::string> gathered, comm.Gatherv(maintain_internal::EncodeMoments(total, total_examples), 0));
  std::string merged;
  if (comm.rank() == 0) {
    std::vector<Moments> all(schema.size());
    std::uint64_t all_examples = 0;
    for (const std::string& g : gathered) {
      std::vector<Moments> part(schema.size());
      std::uint64_t n = 0;
      SEDPACK_RETURN_NOT_OK(maintain_internal::DecodeMoments(g, &part, &n));
      for (std::size_t a = 0; a < schema.size(); ++a) all[a].Merge(part[a]);
      all_examples += n;
    }
    merged = maintain_internal::EncodeMoments(all, all_examples);
  }
  SEDPACK_RETURN_NOT_OK(comm.Bcast(&merged, 0));
  SEDPACK_RETURN_NOT_OK(maintain_internal::DecodeMoments(merged, &total, &total_examples));
  SplitStats out;
  out.split = split;
  out.examples = total_examples;
  for (std::size_t a = 0; a < schema.size(); ++a) {
    if (!IsNumeric(schema[a].dtype)) continue;
    out.attributes.push_back(AttributeStats{schema[a].name, schema[a].dtype, total[a]});
  }
  return out;
}

Status WriteMinMax(const std::string& root, const SplitStats& stats) {
  SEDPACK_RETURN_NOT_OK(CheckCancelled());
  SEDPACK_ASSIGN_OR_RETURN(std::shared_ptr<Dataset> ds, Dataset::Open(root));
  DatasetInfo info = ds->info();
  for (Attribute& attr : info.dataset_structure.saved_data_description) {
    for (const AttributeStats& s : stats.attributes) {
      if (s.name != attr.name || s.moments.count == 0) continue;
      nlohmann::ordered_json j = nlohmann::ordered_json::parse(attr.custom_metadata.text(), nullptr, false);
      if (!j.is_object()) j = nlohmann::ordered_json::object();
      const bool integer = s.dtype != DType::kFloat16 && s.dtype != DType::kFloat32 && s.dtype != DType::kFloat64;
      if (s.moments.has_unsigned && !s.moments.has_signed) {
        j["min"] = s.moments.unsigned_min;
        j["max"] = s.moments.unsigned_max;
      } else if (s.moments.has_signed && !s.moments.has_unsigned) {
        j["min"] = s.moments.signed_min;
        j["max"] = s.moments.signed_max;
      } else if (integer && s.moments.min >= 0) {
        j["min"] = static_cast<std::uint64_t>(s.moments.min);
        j["max"] = static_cast<std::uint64_t>(s.moments.max);
      } else if (integer) {
        j["min"] = static_cast<std::int64_t>(s.moments.min);
        j["max"] = static_cast<std::int64_t>(s.moments.max);
      } else {
        j["min"] = s.moments.min;
        j["max"] = s.moments.max;
      }
      SEDPACK_ASSIGN_OR_RETURN(attr.custom_metadata, JsonValue::Parse(j.dump()));
    }
  }
  return ds->WriteFile("dataset_info.json", SerializeDatasetInfo(info));
}

}  // namespace sedpack
