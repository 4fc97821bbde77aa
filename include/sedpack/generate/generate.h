// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "sedpack/codecs/compress.h"
#include "sedpack/dataset/dataset.h"
#include "sedpack/dataset/filler.h"
#include "sedpack/metadata/models.h"
#include "sedpack/status.h"
#include "sedpack/types.h"
#include "sedpack/value.h"

namespace sedpack {

/// Synthetic side-channel traces in the shape of the SCAAML TinyAES tutorial
/// dataset. Every example has (in the order the schema declares them; any subset
/// of these names is allowed, `trace1` is required):
///   trace1      float16 or float32, shape (trace_length,)
///   key         uint8 (16,)   one key per `key_group_size` consecutive examples
///   plaintext   uint8 (16,)   uniformly random
///   ciphertext  uint8 (16,)   AES-128(key, plaintext)
///
/// Leakage model (trace units are volt-like, values stay well inside +-1):
///   trace[t] = offset + gain * mean_trace[t] + wander(t) + noise_std * n(t) + leaks
/// - mean_trace: the same for every example of a given trace length: a clock
///   ripple plus ten AES-round bumps.
/// - offset, gain, wander (a slow wave, one to two periods per trace, random phase):
///   per-example jitter, as a real scope shows.
/// - n(t): approximately standard normal noise (Irwin-Hall of four bytes of a hash).
/// - leaks: for byte i a 4-sample pulse whose peak (LeakSample) adds
///   leak_scale * (HW(v) - 4), with v = pt[i]^key[i] (AddRoundKey),
///   v = Sbox(pt[i]^key[i]) (SubBytes of round 1) or v = ct[i] (last round).
///
/// Content depends only on (seed, split, example index): every random number
/// comes from a counter-based hash of those, and the floating-point code uses
/// only correctly rounded operations (no libm, no FMA contraction), so any
/// subset of indices can be generated on any number of threads or ranks and the
/// bytes are the same.

/// Default trace length (samples), as in the TinyAES tutorial captures.
inline constexpr std::int64_t kDefaultTraceLength = 80000;
/// Shortest trace the leakage model fits into.
inline constexpr std::int64_t kMinTraceLength = 256;
/// Longest trace (sample positions must stay exact in float arithmetic).
inline constexpr std::int64_t kMaxTraceLength = std::int64_t{1} << 24;

/// Job parameters of `sedpack generate`: the `generate` object of a config.
struct GenerateParams {
  /// Seed of the whole dataset.
  std::uint64_t seed = 0;
  /// Examples per split, indexed by static_cast<int>(Split).
  std::array<std::uint64_t, 3> examples = {2048, 256, 0};
  /// Consecutive examples sharing one key (key index = example index / this). >= 1.
  std::uint64_t key_group_size = 256;
  /// Give each shard custom_metadata {"key_index": g}, so no shard mixes keys
  /// and readers can select shards by key.
  bool shard_by_key = false;
  /// Threads generating examples, and (unless FillerOptions says otherwise)
  /// threads compressing/hashing/writing shards. 0 = hardware threads.
  int threads = 0;
  /// Compression level of the shards (a job option, not recorded in the
  /// dataset): kDefaultCodecLevel = the codec's default (CodecLevels).
  int level = kDefaultCodecLevel;
  /// Standard deviation of the per-sample noise. >= 0.
  double noise_std = 0.01;
  /// Trace change per Hamming-weight unit at a leak point. >= 0 (0: no leakage).
  double leak_scale = 0.015;
  /// Dataset folder to create (front-ends let a command-line argument win).
  std::string output;
  /// Front-end hint: report progress even when stderr is not a terminal.
  bool progress = false;
  /// Front-end: add `examples` to the existing dataset at `output` instead of
  /// creating one. Indices continue from each split's current count, so n
  /// examples appended to m give the same examples as one job of m + n.
  bool append = false;
};

/// A whole generate job: the dataset description (same schema as
/// dataset_info.json) plus the job parameters.
struct GenerateConfig {
  Metadata metadata;
  DatasetStructure structure;
  GenerateParams params;

  std::uint64_t examples(Split s) const { return params.examples[static_cast<int>(s)]; }
};

/// The TinyAES schema: trace1 (trace_dtype, (trace_length,)), key, plaintext, ciphertext.
std::vector<Attribute> TinyAesAttributes(std::int64_t trace_length,
                                         DType trace_dtype = DType::kFloat16);

/// The built-in default job (what configs/generate_tinyaes.json spells out):
/// TinyAES schema with kDefaultTraceLength, fb + LZ4, sha256, 256 examples per shard.
GenerateConfig DefaultGenerateConfig();

/// Length of `trace1` in the config's schema. InvalidArgument if there is none.
Result<std::int64_t> TraceLength(const GenerateConfig& config);
/// Set the shape of `trace1` to (trace_length,). InvalidArgument if out of range
/// [kMinTraceLength, kMaxTraceLength] or if the schema has no trace1.
Status SetTraceLength(GenerateConfig* config, std::int64_t trace_length);

/// Check a config: the structure is valid for Dataset::Create, the schema is the
/// generator's (see above), and the parameters are in range. InvalidArgument
/// naming the offending field.
Status ValidateGenerateConfig(const GenerateConfig& config);

/// Parse a JSON config: an object with optional keys `metadata` and
/// `dataset_structure` (exactly the dataset_info.json schema, unknown keys
/// rejected) and `generate` with the GenerateParams fields (`examples` is an
/// object with `train`, `test`, `holdout`) plus `trace_length`, which sets the
/// trace1 shape. Missing parts take DefaultGenerateConfig()'s values; a missing
/// `saved_data_description` becomes TinyAesAttributes(trace_length). Unknown
/// keys anywhere are InvalidArgument naming the key and `source`. The result is
/// not validated (front-ends apply overrides first, then ValidateGenerateConfig).
Result<GenerateConfig> ParseGenerateConfig(std::string_view text, std::string_view source);
/// Read and parse a config file (errors name the path; NotFound if missing).
Result<GenerateConfig> LoadGenerateConfig(const std::string& path);

/// Where a value leaks into the trace.
enum class LeakKind {
  kAddRoundKey,  ///< HW(pt[i] ^ key[i])
  kSubBytes,     ///< HW(Sbox(pt[i] ^ key[i])), round 1
  kCiphertext,   ///< HW(ct[i]), last round
};

/// One generated example, owned. Reused across calls to avoid reallocating.
struct ExampleBuffers {
  std::vector<Float16> trace_f16;  ///< trace1 when its dtype is float16
  std::vector<float> trace_f32;    ///< trace1 when float32 (also the float16 scratch)
  std::array<std::uint8_t, 16> key{};
  std::array<std::uint8_t, 16> plaintext{};
  std::array<std::uint8_t, 16> ciphertext{};
  /// Index of the key group (example index / key_group_size).
  std::uint64_t key_index = 0;

  /// Views of the values in schema order, pointing into this object (valid
  /// until it is changed, moved or destroyed). Set by ExampleGenerator::Generate.
  std::vector<ValueView> Views() const;

  // Schema layout, set by the generator: field id per schema position.
  std::vector<std::uint8_t> layout;
  DType trace_dtype = DType::kFloat16;
};

/// Precomputes what does not depend on the example (mean trace, leak positions,
/// schema layout). Generate is const and thread-safe.
class ExampleGenerator {
 public:
  /// InvalidArgument if ValidateGenerateConfig fails.
  static Result<std::unique_ptr<ExampleGenerator>> Make(const GenerateConfig& config);

  /// Fill `out` with example `index` of `split`. InvalidArgument if index is
  /// not below 2^63 (indices beyond the configured counts are allowed).
  Status Generate(Split split, std::uint64_t index, ExampleBuffers* out) const;

  std::int64_t trace_length() const { return trace_length_; }
  /// Sample where byte `byte` (0..15) of `kind` has its peak leakage.
  std::int64_t LeakSample(LeakKind kind, int byte) const;
  /// Raw bytes of one example (sum over attributes).
  std::uint64_t example_bytes() const { return example_bytes_; }
  const GenerateConfig& config() const { return config_; }

 private:
  ExampleGenerator() = default;
  GenerateConfig config_;
  std::int64_t trace_length_ = 0;
  std::int64_t leak_stride_ = 0;
  std::uint64_t example_bytes_ = 0;
  DType trace_dtype_ = DType::kFloat16;
  std::vector<std::uint8_t> layout_;
  std::vector<float> mean_trace_;
};

/// Generate one example (builds a generator each call; use ExampleGenerator in loops).
Status GenerateExample(const GenerateConfig& config, Split split, std::uint64_t index,
                       ExampleBuffers* out);

/// Half-open range of example indices.
struct IndexRange {
  std::uint64_t begin = 0;
  std::uint64_t end = std::numeric_limits<std::uint64_t>::max();
};

/// Progress of a GenerateDataset call.
struct GenerateProgress {
  std::uint64_t examples_done = 0;
  std::uint64_t examples_total = 0;
  /// Raw value bytes handed to the filler so far.
  std::uint64_t bytes_done = 0;
  double seconds = 0;
  /// True on the last call, made once every shard and the metadata are written.
  bool finished = false;
};

/// Options for GenerateDataset.
struct GenerateOptions {
  /// Indices to generate per split (indexed by static_cast<int>(Split)),
  /// clipped to the split's example count. Default: all. Examples are written
  /// in index order, train, then test, then holdout.
  std::array<IndexRange, 3> ranges;
  /// How shards are written. concurrency 0 means params.threads (resolved).
  FillerOptions filler;
  /// Called on the calling thread after each batch of examples and at the end.
  std::function<void(const GenerateProgress&)> progress;
  /// If set, every example goes to this function (in index order) instead of to a
  /// Filler of GenerateIntoDataset's own, and finishing the shards is the caller's
  /// job (e.g. DistributedWriter::WriteExample of one MPI rank).
  std::function<Status(Split, std::span<const ValueView>, const JsonValue*)> sink;
};

/// What a GenerateDataset call did.
struct GenerateSummary {
  std::array<std::uint64_t, 3> examples{};  ///< per split
  std::uint64_t examples_total = 0;
  std::uint64_t bytes = 0;  ///< raw value bytes written
  double seconds = 0;
  int generate_threads = 0;
  int write_threads = 0;
  /// The leaf shard lists written (for a coordinator's Dataset::WriteConfig).
  std::vector<ShardListInfo> updated_infos;
  /// Hashes of dataset_info.json afterwards (empty if auto_update_dataset was off).
  std::vector<std::string> root_checksums;

  double examples_per_second() const { return seconds > 0 ? examples_total / seconds : 0; }
  double megabytes_per_second() const { return seconds > 0 ? bytes / 1e6 / seconds : 0; }
};

/// Create a dataset at `out_root` (AlreadyExists if there is one) and fill it.
Result<GenerateSummary> GenerateDataset(const GenerateConfig& config, const std::string& out_root,
                                        const GenerateOptions& options = {});

/// Fill an existing dataset whose structure matches `config` (InvalidArgument
/// otherwise), e.g. one rank's share of a parallel job.
Result<GenerateSummary> GenerateIntoDataset(const GenerateConfig& config,
                                            std::shared_ptr<Dataset> dataset,
                                            const GenerateOptions& options = {});

}  // namespace sedpack
