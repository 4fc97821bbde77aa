// SPDX-License-Identifier: Apache-2.0
// `sedpack report`: the numbers people look at first after a capture or a
// conversion (per-attribute statistics, the mean trace and its spread, value
// histograms, shard sizes, the signal-to-noise ratio of a leakage model),
// computed in one streaming pass over the shards, and rendered as one
// self-contained HTML page or as JSON.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sedpack/comm/comm.h"
#include "sedpack/maintain/shard_pass.h"
#include "sedpack/maintain/stats.h"
#include "sedpack/metadata/models.h"
#include "sedpack/status.h"
#include "sedpack/types.h"
#include "sedpack/value.h"

namespace sedpack {

/// A class label computed from an example's integer attributes, e.g.
/// `hw(sbox(plaintext[0] ^ key[0]))`. The language: `ATTR[i]` (element i of
/// the flattened attribute; a one-element attribute may be written `ATTR`),
/// integer literals (decimal or 0x hex), `a ^ b` (xor), `sbox(x)` (the AES
/// S-box of the low byte of x), `hw(x)` (Hamming weight), parentheses.
class SnrExpression {
 public:
  /// Parse `text` against `schema`. InvalidArgument naming the problem and its
  /// position: a syntax error, an unknown attribute or function, an index out
  /// of range, an attribute that is not of an integer dtype.
  static Result<SnrExpression> Parse(std::string_view text, const std::vector<AttributeSpec>& schema);
  SnrExpression(const SnrExpression&);
  SnrExpression& operator=(const SnrExpression&);
  SnrExpression(SnrExpression&&) noexcept;
  SnrExpression& operator=(SnrExpression&&) noexcept;
  ~SnrExpression();

  /// The label of one example; `values[a]` is attribute a (schema order).
  std::int64_t Evaluate(const std::vector<ValueView>& values) const;
  const std::string& text() const { return text_; }

  struct Node;

 private:
  SnrExpression() = default;
  std::string text_;
  std::vector<Node> nodes_;  // postfix program
};

struct ReportOptions {
  /// Splits to report, in this order; empty: every split the dataset has.
  std::vector<Split> splits;
  /// Leakage models, one SNR curve each (per split).
  std::vector<std::string> snr;
  /// The attribute the SNR is computed over; empty: the first profiled one.
  std::string snr_attribute;
  /// Per-sample arrays (profiles, SNR) cover the first `max_samples` samples
  /// of each attribute; 0: all. The statistics always cover every element.
  std::uint64_t max_samples = 0;
  /// At most this many classes per SNR expression (memory: classes * samples
  /// * 16 bytes per thread); more is InvalidArgument naming the expression.
  std::size_t max_classes = 4096;
  /// Threads per rank and progress on rank 0.
  ShardPassOptions pass;
};

/// Per-sample mean, standard deviation (population), min and max of a 1-D
/// numeric attribute of more than 16 elements.
struct SampleProfile {
  std::string attribute;
  std::uint64_t length = 0;  ///< elements of the attribute (arrays may be shorter: max_samples)
  std::vector<double> mean, std, min, max;
};

/// Counts of every value of a small integer attribute (<= 16 elements, 8- or
/// 16-bit or bool), over all its elements.
struct ValueHistogram {
  std::string attribute;
  std::int64_t first = 0;              ///< value of counts[0]
  std::vector<std::uint64_t> counts;   ///< from `first` to the largest value seen
};

struct ShardSummary {
  std::string path;            ///< dataset-relative
  std::uint64_t examples = 0;
  std::uint64_t bytes = 0;     ///< on disk
  std::uint64_t raw_bytes = 0; ///< the decoded values
};

/// One custom_metadata key of the shards of a split and how many shards carry
/// each value (compact JSON text), most frequent first.
struct MetadataKeyCount {
  std::string key;
  std::uint64_t shards = 0;    ///< shards that have the key
  std::uint64_t distinct = 0;  ///< distinct values (`values` keeps the 20 most frequent)
  std::vector<std::pair<std::string, std::uint64_t>> values;
};

struct SnrClass {
  std::int64_t value = 0;
  std::uint64_t examples = 0;
  bool used = false;  ///< false: fewer than 2 examples, left out of the SNR
};

struct SnrCurve {
  std::string expression;
  std::string attribute;
  Split split = Split::kTrain;
  std::vector<double> snr;  ///< per sample; empty if fewer than 2 classes are used
  std::int64_t peak_sample = -1;
  double peak = 0;
  double median = 0;
  std::vector<SnrClass> classes;  ///< by value
};

struct SplitReport {
  Split split = Split::kTrain;
  SplitStats stats;  ///< the exact statistics, as ComputeSplitStats gives them
  std::vector<ShardSummary> shards;  ///< in path order
  std::vector<MetadataKeyCount> custom_metadata;
  std::vector<SampleProfile> profiles;
  std::vector<ValueHistogram> histograms;
  std::vector<SnrCurve> snrs;  ///< in the order of ReportOptions::snr
};

struct Report {
  std::string root;
  DatasetInfo info;
  std::vector<SplitReport> splits;
};

/// Collective: the report of the dataset at `root`. Every shard of the chosen
/// splits is read once (hashes checked, as `stats`), spread over the ranks by
/// bytes and over `pass.threads` threads per rank; memory does not grow with
/// the number of examples. The statistics are those of ComputeSplitStats. The
/// per-sample sums behind profiles and SNR are added per thread and then in
/// rank order: for integer data they are exact, so any rank or thread count
/// gives the same bits; for float data the last bits depend on how the shards
/// fell to threads and ranks (relative differences of order 1e-12 on large
/// splits). The full result is on rank 0; other ranks get the split list only.
/// Bad options (an SNR expression, a split the dataset lacks) are
/// InvalidArgument / NotFound before any shard is read.
Result<Report> BuildReport(Comm& comm, const std::string& root, const ReportOptions& options);

/// The report as one self-contained HTML page: inline CSS and SVG, no script,
/// no reference to any other file or address; long per-sample arrays are
/// drawn decimated (min and max per pixel column).
std::string ReportToHtml(const Report& report);

/// The report as JSON, schema "sedpack-hpc/report/1" (docs/cli.md).
std::string ReportToJson(const Report& report);

}  // namespace sedpack
