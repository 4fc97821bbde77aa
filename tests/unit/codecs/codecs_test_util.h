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

/// Compressible data: a 16 KiB random page repeated, with about one random
/// byte change per KiB in each copy. Every codec compresses it well, and
/// quickly (long matches, few hash collisions), but not trivially.
inline std::vector<std::byte> CompressibleBytes(std::size_t n, std::uint64_t seed) {
  constexpr std::size_t kPage = 16 * 1024;
  std::mt19937_64 rng(seed);
  const std::vector<std::byte> page = RandomBytes(kPage, seed + 1);
  std::vector<std::byte> out(n);
  for (std::size_t pos = 0; pos < n; pos += kPage) {
    const std::size_t len = std::min(kPage, n - pos);
    std::copy(page.begin(), page.begin() + static_cast<std::ptrdiff_t>(len),
              out.begin() + static_cast<std::ptrdiff_t>(pos));
    for (std::size_t k = 0; k < len / 1024; ++k) {
      out[pos + rng() % len] = static_cast<std::byte>(rng());
    }
  }
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
