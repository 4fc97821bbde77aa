// SPDX-License-Identifier: Apache-2.0
// The synthetic trace model. Determinism rules for this file (see generate.h):
// every random number comes from counter-based hashing of (seed, split, index,
// position); floating-point code uses only + - * / and exact conversions (no
// libm calls whose last bit may differ between machines); the file is compiled
// with -ffp-contract=off so vectorized, FMA-capable and scalar code round alike.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>

#include "generate/aes128.h"
#include "generate/half_convert.h"
#include "sedpack/generate/generate.h"

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__SANITIZE_THREAD__)
// An AVX2 clone of the hot loop gets 8-lane 32-bit multiplies; the loader picks
// the clone the CPU supports. Both clones compute bit-identical results.
// Not under ThreadSanitizer: it instruments the ifunc resolver that picks the
// clone, which the loader runs before the TSan runtime is set up, so every
// binary linking this file crashed at startup.
#define SEDPACK_TRACE_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define SEDPACK_TRACE_CLONES
#endif

namespace sedpack {
namespace {

using generate_internal::AesBlock;

// Field ids used in ExampleBuffers::layout.
enum Field : std::uint8_t { kTrace = 0, kKey = 1, kPlaintext = 2, kCiphertext = 3 };
constexpr std::string_view kFieldNames[] = {"trace1", "key", "plaintext", "ciphertext"};

// Purposes mixed into the stream key so that streams never collide.
enum class Purpose : std::uint64_t { kKey = 1, kPlaintext = 2, kTraceParams = 3, kNoise = 4 };

// splitmix64's finalizer: a bijective 64-bit mixer.
constexpr std::uint64_t Mix64(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// A 64-bit key unique to (seed, split, purpose, counter). Each step is a
// bijection of the previous state xor the next input, so distinct counters give
// distinct keys for a fixed prefix.
std::uint64_t StreamKey(std::uint64_t seed, Split split, Purpose purpose, std::uint64_t counter) {
  std::uint64_t h = Mix64(seed ^ 0x5edbac4b1e5eed00ULL);
  h = Mix64(h ^ (0x9e3779b97f4a7c15ULL * (static_cast<std::uint64_t>(split) + 1)));
  h = Mix64(h ^ (0xd1b54a32d192ed03ULL * static_cast<std::uint64_t>(purpose)));
  return Mix64(h ^ counter);
}

// Uniform double in [0, 1) from the j-th output of a stream.
double Uniform(std::uint64_t stream, std::uint64_t j) {
  return static_cast<double>(Mix64(stream + 0x9e3779b97f4a7c15ULL * (j + 1)) >> 11) * 0x1.0p-53;
}

// Chris Wellons' lowbias32: a 32-bit bijective mixer with good avalanche that
// vectorizes (32-bit multiplies only).
inline std::uint32_t Lowbias32(std::uint32_t x) {
  x ^= x >> 16;
  x *= 0x7feb352dU;
  x ^= x >> 15;
  x *= 0x846ca68bU;
  x ^= x >> 16;
  return x;
}

// Sum of four uniform bytes: mean 510, variance 4 * (256^2 - 1) / 12.
constexpr double kIrwinHallMean = 510.0;
const double kIrwinHallSd = std::sqrt(4.0 * (256.0 * 256.0 - 1.0) / 12.0);

struct TraceParams {
  float offset;
  float gain;
  float wander_amp;
  float wander_freq;
  float wander_phase;
  float noise_scale;
  std::uint32_t key_lo;
  std::uint32_t key_hi;
};

// The per-sample loop: no calls, no branches, so it vectorizes.
SEDPACK_TRACE_CLONES
void TraceKernel(const float* __restrict mean, float* __restrict out, std::int32_t n,
                 TraceParams p) {
  for (std::int32_t t = 0; t < n; ++t) {
    std::uint32_t x = static_cast<std::uint32_t>(t) ^ p.key_lo;
    x = Lowbias32(x);
    x ^= p.key_hi;
    x = Lowbias32(x);
    const std::int32_t s = static_cast<std::int32_t>((x & 0xffU) + ((x >> 8) & 0xffU) +
                                                     ((x >> 16) & 0xffU) + (x >> 24));
    const float noise = static_cast<float>(s - 510) * p.noise_scale;
    float ph = static_cast<float>(t) * p.wander_freq + p.wander_phase;
    ph = ph - static_cast<float>(static_cast<std::int32_t>(ph));  // ph >= 0: truncation is floor
    const float v = 2.0f * ph - 1.0f;
    const float wander = 4.0f * v * (1.0f - std::fabs(v));  // sine-like, period 1
    out[t] = p.offset + p.gain * mean[t] + p.wander_amp * wander + noise;
  }
}

// The example-independent part of the trace: clock ripple and AES-round bumps.
std::vector<float> MeanTrace(std::int64_t length) {
  std::vector<float> mean(static_cast<std::size_t>(length));
  const std::int64_t clock = std::max<std::int64_t>(4, length / 4000);
  const std::int64_t start = length / 16;
  const std::int64_t end = length - length / 16;
  const std::int64_t span = end - start;
  for (std::int64_t t = 0; t < length; ++t) {
    const double u = static_cast<double>(t % clock) / static_cast<double>(clock);
    double v = 0.03 * (4.0 * u * (1.0 - u) - 2.0 / 3.0);
    if (t >= start && t < end) {
      // Ten rounds: position within the current round, as a fraction.
      const std::int64_t scaled = (t - start) * 10;
      const double f =
          static_cast<double>(scaled % span) / static_cast<double>(span);
      v += 0.05 + 0.06 * (4.0 * f * (1.0 - f));
    }
    mean[static_cast<std::size_t>(t)] = static_cast<float>(v);
  }
  return mean;
}

Result<DType> TraceDType(const Attribute& a) {
  SEDPACK_ASSIGN_OR_RETURN(DType dt, ParseDType(a.dtype));
  return dt;
}

AesBlock BlockFrom(std::uint64_t stream) {
  AesBlock b;
  const std::uint64_t lo = Mix64(stream + 1), hi = Mix64(stream + 2);
  for (int i = 0; i < 8; ++i) {
    b[i] = static_cast<std::uint8_t>(lo >> (8 * i));
    b[8 + i] = static_cast<std::uint8_t>(hi >> (8 * i));
  }
  return b;
}

}  // namespace

std::vector<Attribute> TinyAesAttributes(std::int64_t trace_length, DType trace_dtype) {
  std::vector<Attribute> attrs(4);
  attrs[0].name = "trace1";
  attrs[0].dtype = std::string(DTypeName(trace_dtype));
  attrs[0].shape = {trace_length};
  for (int i = 1; i < 4; ++i) {
    attrs[i].name = std::string(kFieldNames[i]);
    attrs[i].dtype = "uint8";
    attrs[i].shape = {16};
  }
  return attrs;
}

GenerateConfig DefaultGenerateConfig() {
  GenerateConfig c;
  c.metadata.description =
      "Synthetic side-channel traces of AES-128 in the shape of the SCAAML TinyAES dataset "
      "(sedpack generate)";
  c.structure.saved_data_description = TinyAesAttributes(kDefaultTraceLength);
  c.structure.compression = Compression::kLz4;
  c.structure.examples_per_shard = 256;
  c.structure.shard_file_type = ShardFileType::kFb;
  c.structure.hash_checksum_algorithms = {HashAlgorithm::kSha256};
  return c;
}

Result<std::int64_t> TraceLength(const GenerateConfig& config) {
  for (const Attribute& a : config.structure.saved_data_description) {
    if (a.name == "trace1") {
      if (a.shape.size() != 1) {
        return Status::InvalidArgument("attribute \"trace1\" must have shape (trace_length,), got ",
                                       ShapeToString(a.shape));
      }
      return a.shape[0];
    }
  }
  return Status::InvalidArgument("the schema has no attribute \"trace1\"");
}

Status SetTraceLength(GenerateConfig* config, std::int64_t trace_length) {
  if (trace_length < kMinTraceLength || trace_length > kMaxTraceLength) {
    return Status::InvalidArgument("trace_length must be in [", kMinTraceLength, ", ",
                                   kMaxTraceLength, "], got ", trace_length);
  }
  for (Attribute& a : config->structure.saved_data_description) {
    if (a.name == "trace1") {
      a.shape = {trace_length};
      return Status::OK();
    }
  }
  return Status::InvalidArgument("the schema has no attribute \"trace1\"");
}

Status ValidateGenerateConfig(const GenerateConfig& config) {
  SEDPACK_RETURN_NOT_OK(Dataset::ValidateStructure(config.structure)
                            .WithPrefix("dataset_structure: "));
  bool seen[4] = {false, false, false, false};
  for (const Attribute& a : config.structure.saved_data_description) {
    const auto it = std::find(std::begin(kFieldNames), std::end(kFieldNames), a.name);
    if (it == std::end(kFieldNames)) {
      return Status::InvalidArgument(
          "dataset_structure.saved_data_description: the generator cannot fill attribute \"",
          a.name, "\" (known: trace1, key, plaintext, ciphertext)");
    }
    const auto id = static_cast<std::size_t>(it - std::begin(kFieldNames));
    if (seen[id]) {
      return Status::InvalidArgument("dataset_structure.saved_data_description: attribute \"",
                                     a.name, "\" appears twice");
    }
    seen[id] = true;
    SEDPACK_ASSIGN_OR_RETURN(DType dt, TraceDType(a));
    if (id == kTrace) {
      if (dt != DType::kFloat16 && dt != DType::kFloat32) {
        return Status::InvalidArgument("attribute \"trace1\" must be float16 or float32, got ",
                                       a.dtype);
      }
      SEDPACK_ASSIGN_OR_RETURN(std::int64_t len, TraceLength(config));
      if (len < kMinTraceLength || len > kMaxTraceLength) {
        return Status::InvalidArgument("trace_length (the trace1 shape) must be in [",
                                       kMinTraceLength, ", ", kMaxTraceLength, "], got ", len);
      }
    } else if (dt != DType::kUInt8 || a.shape != Shape{16}) {
      return Status::InvalidArgument("attribute \"", a.name, "\" must be uint8 of shape (16,), got ",
                                     a.dtype, " ", ShapeToString(a.shape));
    }
  }
  if (!seen[kTrace]) {
    return Status::InvalidArgument(
        "dataset_structure.saved_data_description: the generator needs attribute \"trace1\"");
  }
  const GenerateParams& p = config.params;
  for (Split s : AllSplits()) {
    if (config.examples(s) >= (1ULL << 63)) {
      return Status::InvalidArgument("generate.examples.", SplitName(s), " is too large");
    }
  }
  if (p.key_group_size < 1) {
    return Status::InvalidArgument("generate.key_group_size must be >= 1");
  }
  if (p.threads < 0) return Status::InvalidArgument("generate.threads must be >= 0");
  if (Status st = ValidateCodecLevel(config.structure.compression, p.level); !st.ok()) {
    return st.WithPrefix("generate.level: ");
  }
  if (!std::isfinite(p.noise_std) || p.noise_std < 0 || p.noise_std > 1e4) {
    return Status::InvalidArgument("generate.noise_std must be in [0, 1e4], got ", p.noise_std);
  }
  if (!std::isfinite(p.leak_scale) || p.leak_scale < 0 || p.leak_scale > 1e4) {
    return Status::InvalidArgument("generate.leak_scale must be in [0, 1e4], got ", p.leak_scale);
  }
  return Status::OK();
}

std::vector<ValueView> ExampleBuffers::Views() const {
  std::vector<ValueView> views;
  views.reserve(layout.size());
  for (std::uint8_t f : layout) {
    switch (f) {
      case kTrace:
        if (trace_dtype == DType::kFloat16) {
          views.push_back(ValueView::Array(trace_f16, {static_cast<std::int64_t>(trace_f16.size())}));
        } else {
          views.push_back(ValueView::Array(trace_f32, {static_cast<std::int64_t>(trace_f32.size())}));
        }
        break;
      case kKey:
        views.push_back(ValueView::Array(std::span<const std::uint8_t>(key), {16}));
        break;
      case kPlaintext:
        views.push_back(ValueView::Array(std::span<const std::uint8_t>(plaintext), {16}));
        break;
      default:
        views.push_back(ValueView::Array(std::span<const std::uint8_t>(ciphertext), {16}));
        break;
    }
  }
  return views;
}

Result<std::unique_ptr<ExampleGenerator>> ExampleGenerator::Make(const GenerateConfig& config) {
  SEDPACK_RETURN_NOT_OK(ValidateGenerateConfig(config));
  std::unique_ptr<ExampleGenerator> g(new ExampleGenerator());
  g->config_ = config;
  SEDPACK_ASSIGN_OR_RETURN(g->trace_length_, TraceLength(config));
  g->leak_stride_ = std::max<std::int64_t>(4, g->trace_length_ / 128);
  for (const Attribute& a : config.structure.saved_data_description) {
    const auto id = static_cast<std::uint8_t>(
        std::find(std::begin(kFieldNames), std::end(kFieldNames), a.name) - std::begin(kFieldNames));
    g->layout_.push_back(id);
    if (id == kTrace) {
      SEDPACK_ASSIGN_OR_RETURN(g->trace_dtype_, TraceDType(a));
      g->example_bytes_ += static_cast<std::uint64_t>(g->trace_length_) * DTypeItemSize(g->trace_dtype_);
    } else {
      g->example_bytes_ += 16;
    }
  }
  g->mean_trace_ = MeanTrace(g->trace_length_);
  return g;
}

std::int64_t ExampleGenerator::LeakSample(LeakKind kind, int byte) const {
  // Three regions of 16 pulses each, at fixed fractions of the trace; on short
  // traces a region starts no earlier than the end of the previous one, so
  // pulses never overlap (kMinTraceLength is the length where they just fit).
  const std::int64_t region = 16 * leak_stride_;
  const std::int64_t ark = trace_length_ / 16;
  const std::int64_t sub_bytes = std::max(trace_length_ / 4, ark + region);
  const std::int64_t ciphertext = std::max(trace_length_ / 4 * 3, sub_bytes + region);
  std::int64_t start = 0;
  switch (kind) {
    case LeakKind::kAddRoundKey: start = ark; break;
    case LeakKind::kSubBytes: start = sub_bytes; break;
    case LeakKind::kCiphertext: start = ciphertext; break;
  }
  // +1: the pulse's first sample is a ramp, its second the peak.
  return start + byte * leak_stride_ + 1;
}

Status ExampleGenerator::Generate(Split split, std::uint64_t index, ExampleBuffers* out) const {
  if (index >= (1ULL << 63)) {
    return Status::InvalidArgument("example index ", index, " is too large");
  }
  const GenerateParams& p = config_.params;
  const std::uint64_t seed = p.seed;
  out->layout = layout_;
  out->trace_dtype = trace_dtype_;
  out->key_index = index / p.key_group_size;
  out->key = BlockFrom(StreamKey(seed, split, Purpose::kKey, out->key_index));
  out->plaintext = BlockFrom(StreamKey(seed, split, Purpose::kPlaintext, index));
  out->ciphertext = generate_internal::Aes128Encrypt(out->key, out->plaintext);

  const std::uint64_t tp = StreamKey(seed, split, Purpose::kTraceParams, index);
  const std::uint64_t noise_key = StreamKey(seed, split, Purpose::kNoise, index);
  TraceParams params;
  params.gain = static_cast<float>(1.0 + 0.05 * (2.0 * Uniform(tp, 0) - 1.0));
  params.offset = static_cast<float>(0.01 * (2.0 * Uniform(tp, 1) - 1.0));
  params.wander_amp = static_cast<float>(0.01 + 0.01 * Uniform(tp, 2));
  params.wander_freq = static_cast<float>((1.0 + Uniform(tp, 3)) / static_cast<double>(trace_length_));
  params.wander_phase = static_cast<float>(Uniform(tp, 4));
  params.noise_scale = static_cast<float>(p.noise_std / kIrwinHallSd);
  params.key_lo = static_cast<std::uint32_t>(noise_key);
  params.key_hi = static_cast<std::uint32_t>(noise_key >> 32);
  static_assert(kIrwinHallMean == 510.0, "TraceKernel hard-codes the mean");

  const auto n = static_cast<std::size_t>(trace_length_);
  out->trace_f32.resize(n);
  float* trace = out->trace_f32.data();
  TraceKernel(mean_trace_.data(), trace, static_cast<std::int32_t>(n), params);

  // Leakage: a short pulse per byte, scaled by the centred Hamming weight.
  static constexpr float kPulse[4] = {0.5f, 1.0f, 0.5f, 0.2f};
  const auto leak_scale = static_cast<float>(p.leak_scale);
  if (leak_scale != 0.0f) {
    for (int i = 0; i < 16; ++i) {
      const std::uint8_t ark = out->plaintext[i] ^ out->key[i];
      const std::uint8_t values[3] = {ark, generate_internal::AesSbox(ark), out->ciphertext[i]};
      const LeakKind kinds[3] = {LeakKind::kAddRoundKey, LeakKind::kSubBytes, LeakKind::kCiphertext};
      for (int k = 0; k < 3; ++k) {
        const float amp = leak_scale * static_cast<float>(std::popcount(values[k]) - 4);
        const std::int64_t first = LeakSample(kinds[k], i) - 1;
        for (int d = 0; d < 4; ++d) trace[first + d] += amp * kPulse[d];
      }
    }
  }

  if (trace_dtype_ == DType::kFloat16) {
    out->trace_f16.resize(n);
    generate_internal::FloatToHalf(trace, out->trace_f16.data(), n);
  } else {
    out->trace_f16.clear();
  }
  return Status::OK();
}

Status GenerateExample(const GenerateConfig& config, Split split, std::uint64_t index,
                       ExampleBuffers* out) {
  SEDPACK_ASSIGN_OR_RETURN(auto generator, ExampleGenerator::Make(config));
  return generator->Generate(split, index, out);
}

}  // namespace sedpack
