// SPDX-License-Identifier: Apache-2.0
// The running sums behind a report, per thread and per rank: what one pass
// over the shards adds up, how two of them merge, and how they travel between
// ranks. Sums (not running means) so that merging is plain addition, exact for
// integer data and independent of the order for it.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <map>
#include <new>
#include <string>
#include <string_view>
#include <vector>

#include "sedpack/report/report.h"
#include "sedpack/shard/shard.h"

namespace sedpack::report_internal {

/// What to accumulate for one split (the same on every rank).
struct Plan {
  std::vector<AttributeSpec> schema;
  std::vector<std::size_t> profiled;       ///< attribute indices (1-D numeric, > 16 elements)
  std::vector<std::uint64_t> lengths;      ///< samples kept per profiled attribute
  std::vector<std::size_t> histogrammed;   ///< attribute indices (small 8/16-bit integers, bool)
  std::vector<SnrExpression> expressions;
  std::size_t snr_profile = 0;             ///< index into `profiled` of the SNR attribute
  std::size_t max_classes = 4096;
};

/// Allocates each large array at its own offset within a 4 KiB page (one of
/// 32 cache lines, in turn): the per-sample loops load from one array while
/// storing to others at the same index, and arrays a whole number of pages
/// apart (as large allocations are) alias in the CPU's load/store unit,
/// which then stalls each load until the stores before it are done.
template <typename T>
struct StaggeredAllocator {
  using value_type = T;
  StaggeredAllocator() = default;
  template <typename U>
  StaggeredAllocator(const StaggeredAllocator<U>&) {}  // NOLINT: converting, as allocators are
  T* allocate(std::size_t n) {
    static std::atomic<unsigned> next{0};
    const bool large = n >= kLargeBytes / sizeof(T);  // small arrays are not worth a page's padding
    const std::size_t shift = large ? kLine * (1 + next.fetch_add(1, std::memory_order_relaxed) % 32) : kLine;
    if (n > (SIZE_MAX - shift) / sizeof(T)) throw std::bad_alloc();
    void* base = ::operator new(n * sizeof(T) + shift, std::align_val_t{large ? kPage : kLine});
    std::byte* p = static_cast<std::byte*>(base) + shift;
    std::memcpy(p - sizeof(base), &base, sizeof(base));  // the shift is >= one line: room for it
    return reinterpret_cast<T*>(p);
  }
  void deallocate(T* p, std::size_t n) {
    void* base = nullptr;
    std::memcpy(&base, reinterpret_cast<std::byte*>(p) - sizeof(base), sizeof(base));
    ::operator delete(base, std::align_val_t{n >= kLargeBytes / sizeof(T) ? kPage : kLine});
  }
  friend bool operator==(const StaggeredAllocator&, const StaggeredAllocator&) { return true; }

 private:
  static constexpr std::size_t kLine = 64, kPage = 4096, kLargeBytes = 64 * 1024;
};

/// Per-sample sums.
using Samples = std::vector<double, StaggeredAllocator<double>>;

struct ProfileSums {
  Samples sum, sum2, min, max;
};

struct ClassSums {
  std::uint64_t n = 0;
  Samples sum, sum2;
};

/// Offset added to a histogrammed value to index its counts (the dtype's minimum).
std::int64_t HistogramOffset(DType dtype);
std::size_t HistogramSize(DType dtype);

class Accumulator {
 public:
  explicit Accumulator(const Plan& plan);
  /// Add every example of `shard`, and its numeric attributes' moments to
  /// `moments` (schema order) as ComputeSplitStats adds them; InvalidArgument
  /// when an expression yields more than plan.max_classes classes.
  Status AddShard(const DecodedShard& shard, std::vector<Moments>* moments);
  /// Add `other` into this one (same plan), taking over the class sums only
  /// `other` has; `other` keeps its profile sums and loses its classes.
  Status Merge(Accumulator&& other);
  /// Appends the sums (EncodedSize() bytes) to `out`, for Decode on another rank.
  void EncodeTo(std::string* out) const;
  std::size_t EncodedSize() const;
  Status Decode(std::string_view bytes);
  /// The per-sample results.
  void Finish(SplitReport* out) const;

  std::uint64_t examples() const { return examples_; }

 private:
  /// Samples [t0, t1) of every example of profiled attribute `p`, added to
  /// the per-sample sums, with `labels` to the examples' class sums, and to
  /// the examples' `moments`.
  void AddBlock(const std::vector<ValueView>& views, std::size_t t0, std::size_t t1, std::size_t p,
                const std::vector<std::vector<ClassSums*>>* labels, std::vector<Moments>* moments);

  const Plan* plan_;
  std::uint64_t examples_ = 0;
  std::vector<ProfileSums> profiles_;
  std::vector<std::vector<std::uint64_t>> histograms_;
  std::vector<std::map<std::int64_t, ClassSums>> classes_;
  std::vector<double> row_;       // one example's samples as doubles
  std::vector<ValueView> values_;  // one example's values
};

}  // namespace sedpack::report_internal
