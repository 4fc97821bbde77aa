// SPDX-License-Identifier: Apache-2.0
// Small HDF5 captures in the layouts our users hold (ASCAD v1, ASCAD v2
// extracted, lascar), written with the HDF5 C API. Every stored value is
// FixtureValue(seed, key, row, element), so a test can check an import value
// for value without reading the file back through our own code.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace sedpack::testing {

enum class TraceType { kInt8, kFloat16, kFloat32 };

/// What values a fixture dataset holds.
enum class ValueKind {
  kByte,        ///< 0..255
  kSignedByte,  ///< -128..127 (int8 traces)
  kHalf,        ///< k/1024, |k| <= 1000 (exact in float16)
  kFloat,       ///< k/4096, |k| <= 100000 (exact in float32)
  kDesync,      ///< 0..49
};

struct H5FixtureSpec {
  std::uint64_t seed = 1;
  std::uint64_t profiling_rows = 100;  ///< rows of Profiling_traces (lascar: of the file)
  std::uint64_t attack_rows = 40;
  std::uint64_t trace_len = 50;
  TraceType trace_type = TraceType::kInt8;
  bool chunked = true;
  std::uint64_t chunk_rows = 16;
  /// Metadata fields as float64 (holding integers) instead of uint8, per group.
  bool profiling_float_metadata = false;
  bool attack_float_metadata = false;
  int masks = 16;       ///< bytes of the `masks` field (0: no such field)
  bool desync = false;  ///< a uint32 `desync` field
  bool ciphertext = true;
  /// One key for the whole group (the value of row 0), as in fixed-key captures.
  bool fixed_key = false;
};

/// The value stored at (`key`, row, element): key is "<group>/<dataset>" or
/// "<group>/<dataset>.<field>" ("/leakages", "/values.key" at the root).
double FixtureValue(std::uint64_t seed, std::string_view key, std::uint64_t row, std::uint64_t element,
                    ValueKind kind);
/// Kind of the traces of a spec.
ValueKind TraceKind(TraceType t);

/// ASCAD v1: groups Profiling_traces and Attack_traces, each with `traces`
/// (rows x trace_len), `labels` (uint8) and compound `metadata` (plaintext,
/// key, [ciphertext], [masks], [desync]).
void WriteAscadV1(const std::string& path, const H5FixtureSpec& spec);
/// ASCAD v2 extracted: as v1 with compound `labels` (alpha_mask, beta_mask,
/// sbox_masked[16], sbox_masked_with_perm[16], perm_index[16]) and 18 masks.
void WriteAscadV2(const std::string& path, const H5FixtureSpec& spec);
/// lascar-style: root `leakages` (rows x trace_len) and compound `values`
/// (plaintext, key, ciphertext).
void WriteLascar(const std::string& path, const H5FixtureSpec& spec);

/// Overwrite element `element` of row `row` of `dataset` (its compound member
/// `field` if not empty) with `value`, converted by HDF5 to the stored type.
/// For planting values that cannot be imported exactly.
void OverwriteValue(const std::string& path, const std::string& dataset, const std::string& field,
                    std::uint64_t row, std::uint64_t element, double value);

}  // namespace sedpack::testing
