// SPDX-License-Identifier: Apache-2.0
// `sedpack stats`: per-attribute min, max, mean and standard deviation over a
// split, computed in parallel and merged exactly (Chan et al.'s pairwise update
// of Welford's running moments, so large splits lose no precision to
// cancellation).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sedpack/comm/comm.h"
#include "sedpack/maintain/shard_pass.h"
#include "sedpack/status.h"
#include "sedpack/types.h"

namespace sedpack {

/// Running moments of a stream of numbers.
///
/// The squared deviations are accumulated in units of `scale` (a power of two
/// at least the largest magnitude seen), so data near the top of the double
/// range (+-1e300) keeps a finite standard deviation; rescaling by a power of
/// two is exact, so nothing is lost for ordinary data.
struct Moments {
  std::uint64_t count = 0;
  double mean = 0;
  double m2 = 0;     ///< sum of squared deviations from the mean, divided by scale^2
  double scale = 0;  ///< 0 until a non-zero value is seen
  double min = 0;
  double max = 0;
  std::uint64_t nan_count = 0;  ///< NaNs are counted here and left out of the moments
  /// Exact extremes of integer values (AddInteger/AddUnsigned); min/max above
  /// are their nearest doubles (int64 beyond 2^53 is not exact in a double).
  bool has_signed = false, has_unsigned = false;
  std::int64_t signed_min = 0, signed_max = 0;
  std::uint64_t unsigned_min = 0, unsigned_max = 0;

  void Add(double x);
  void AddInteger(std::int64_t x);
  void AddUnsigned(std::uint64_t x);
  /// Merge another stream's moments into this one.
  void Merge(const Moments& other);
  /// Population standard deviation (0 for fewer than 2 values).
  double StdDev() const;
};

/// Statistics of one numeric attribute over every element of every example.
struct AttributeStats {
  std::string name;
  DType dtype = DType::kFloat32;
  Moments moments;
};

struct SplitStats {
  Split split = Split::kTrain;
  std::uint64_t examples = 0;
  std::vector<AttributeStats> attributes;  ///< numeric attributes, schema order
};

/// Collective: the statistics of `split` of the dataset at `root`. Shards are
/// spread over the ranks by bytes and each shard's hashes are checked as it is
/// read (statistics of corrupt data are refused). All ranks get the result.
Result<SplitStats> ComputeSplitStats(Comm& comm, const std::string& root, Split split, int threads = 0);
/// The same with options: threads, and progress on rank 0 while the shards are read.
Result<SplitStats> ComputeSplitStats(Comm& comm, const std::string& root, Split split, const ShardPassOptions& pass);

/// Store each attribute's min and max as `"min"`/`"max"` in its custom_metadata
/// in dataset_info.json (other keys are kept; integers stay integers), as the
/// TinyAES dataset does, and rewrite dataset_info.json atomically. The shard
/// lists are unchanged; the root checksums change.
Status WriteMinMax(const std::string& root, const SplitStats& stats);

}  // namespace sedpack
