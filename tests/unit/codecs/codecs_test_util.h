// SPDX-License-Identifier: Apache-2.0
// Helpers shared by the codecs tests.
#pragma once

#include <cstddef>
#include <cstdint>
#include <fstream>
#include <iterator>
#include <random>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace sedpack::testing {

/// Largest single operator new / new[] request since the last ResetAllocPeak()
/// (the test binary replaces the global allocation functions to record it).
void ResetAllocPeak();
std::size_t AllocPeak();

inline std::vector<std::byte> RandomBytes(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<std::byte> out(n);
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const std::uint64_t v = rng();
    for (int b = 0; b < 8; ++b) out[i + b] = static_cast<std::byte>(v >> (8 * b));
  }
  for (; i < n; ++i) out[i] = static_cast<std::byte>(rng());
  return out;
}

/// Text-like data: words drawn from a small vocabulary (compresses well, but
/// not trivially).
inline std::vector<std::byte> CompressibleBytes(std::size_t n, std::uint64_t seed) {
  static constexpr std::string_view kWords[] = {
      "sedpack ", "shard ",  "example ", "tensor ",   "float32 ", "attribute ",
      "train ",   "test ",   "holdout ", "compress ", "hash ",    "0123 ",
      "\n",       "value, ", "zstd ",    "lz4 "};
  std::mt19937_64 rng(seed);
  std::vector<std::byte> out;
  out.reserve(n + 16);
  while (out.size() < n) {
    const std::string_view w = kWords[rng() % std::size(kWords)];
    for (char c : w) out.push_back(static_cast<std::byte>(c));
  }
  out.resize(n);
  return out;
}

inline std::span<const std::byte> AsBytes(std::string_view s) {
  return {reinterpret_cast<const std::byte*>(s.data()), s.size()};
}

inline std::vector<std::byte> ReadFileBytes(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::vector<char> chars((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  std::vector<std::byte> out(chars.size());
  for (std::size_t i = 0; i < chars.size(); ++i) out[i] = static_cast<std::byte>(chars[i]);
  return out;
}

inline std::uint8_t U8(const std::vector<std::byte>& v, std::size_t i) {
  return static_cast<std::uint8_t>(v.at(i));
}

}  // namespace sedpack::testing
