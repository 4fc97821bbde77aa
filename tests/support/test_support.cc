// SPDX-License-Identifier: Apache-2.0
#include "support/test_support.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>

namespace sedpack::testing {

std::string GoldenDir() {
  if (const char* env = std::getenv("SEDPACK_GOLDEN_DIR"); env && *env) return env;
  return SEDPACK_GOLDEN_DIR_DEFAULT;
}

TempDir::TempDir() {
  std::random_device rd;
  const auto base = std::filesystem::temp_directory_path();
  for (;;) {
    auto candidate = base / ("sedpack_test_" + std::to_string(rd()) + std::to_string(rd()));
    std::error_code ec;
    if (std::filesystem::create_directory(candidate, ec)) {
      path_ = candidate.string();
      return;
    }
  }
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

void CopyTree(const std::string& src, const std::string& dst) {
  std::filesystem::create_directories(dst);
  std::filesystem::copy(src, dst,
                        std::filesystem::copy_options::recursive |
                            std::filesystem::copy_options::overwrite_existing);
  // Golden data may be read-only; copies must be writable for corruption tests.
  for (const auto& e : std::filesystem::recursive_directory_iterator(dst)) {
    std::filesystem::permissions(e.path(), std::filesystem::perms::owner_write,
                                 std::filesystem::perm_options::add);
  }
}

bool FlipBitAt(const std::string& path, std::uint64_t offset) {
  std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
  const auto at = static_cast<std::streamoff>(offset);
  char c = 0;
  f.seekg(at);
  f.read(&c, 1);
  f.seekp(at);
  c = static_cast<char>(c ^ 0x20);
  f.write(&c, 1);
  return f.good();
}

std::vector<std::byte> FromHex(const std::string& hex) {
  std::vector<std::byte> out;
  out.reserve(hex.size() / 2);
  for (std::size_t i = 0; i + 1 < hex.size(); i += 2) {
    out.push_back(static_cast<std::byte>(std::stoi(hex.substr(i, 2), nullptr, 16)));
  }
  return out;
}

std::string ToHex(const std::byte* data, std::size_t size) {
  static const char* kDigits = "0123456789abcdef";
  std::string out;
  out.reserve(size * 2);
  for (std::size_t i = 0; i < size; ++i) {
    const auto b = static_cast<unsigned>(data[i]);
    out += kDigits[b >> 4];
    out += kDigits[b & 15];
  }
  return out;
}

}  // namespace sedpack::testing
