// SPDX-License-Identifier: Apache-2.0
#include "sedpack/metadata/paths.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace sedpack {
namespace {

bool IsSeparator(char c) { return c == '/' || c == '\\'; }

}  // namespace

Status ValidateRelativePath(std::string_view path, std::string_view field) {
  if (path.empty()) {
    return Status::InvalidArgument(field, ": the path is empty");
  }
  if (path.find('\0') != std::string_view::npos) {
    return Status::InvalidArgument(field, ": the path contains a NUL byte");
  }
  // The reference accepts absolute paths, but `root / "/abs"` escapes the
  // dataset root in Python, so they are refused here on purpose. A drive prefix
  // ("C:", also drive-relative "C:x") is refused too: joined on Windows it
  // would leave the root as well.
  const bool drive = path.size() >= 2 && path[1] == ':' &&
                     std::isalpha(static_cast<unsigned char>(path[0]));
  if (IsSeparator(path[0]) || drive) {
    return Status::InvalidArgument(field, ": absolute paths are not allowed (\"", path, "\")")
        .WithDetail(StatusDetail::kPathEscape);
  }
  for (const std::string& c : PathComponents(path)) {
    if (c == "..") {
      return Status::InvalidArgument(field, ": a \"..\" component is not allowed (\"", path, "\")")
          .WithDetail(StatusDetail::kPathEscape);
    }
  }
  return Status::OK();
}

std::vector<std::string> PathComponents(std::string_view path) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= path.size()) {
    std::size_t end = start;
    while (end < path.size() && !IsSeparator(path[end])) ++end;
    std::string_view part = path.substr(start, end - start);
    if (!part.empty() && part != ".") out.emplace_back(part);
    start = end + 1;
  }
  return out;
}

std::string JoinPath(const std::vector<std::string>& components) {
  std::string out;
  for (const auto& c : components) {
    if (!out.empty()) out.push_back('/');
    out += c;
  }
  return out;
}

std::string RandomHex32() {
  // One engine per thread, seeded from the OS: no locking and no shared state.
  thread_local std::mt19937_64 engine = [] {
    std::random_device rd;
    std::array<std::uint32_t, 8> seed{};
    for (auto& s : seed) s = rd();
    std::seed_seq seq(seed.begin(), seed.end());
    return std::mt19937_64(seq);
  }();
  static constexpr char kHex[] = "0123456789abcdef";
  const std::uint64_t hi = engine();
  const std::uint64_t lo = engine();
  std::string out(32, '0');
  for (int i = 0; i < 16; ++i) {
    out[i] = kHex[(hi >> (60 - 4 * i)) & 0xf];
    out[16 + i] = kHex[(lo >> (60 - 4 * i)) & 0xf];
  }
  // Make it a well-formed uuid4 like the reference's uuid.uuid4().hex: version
  // nibble 4, RFC 4122 variant (8, 9, a or b).
  out[12] = '4';
  out[16] = kHex[8 | ((lo >> 60) & 0x3)];
  return out;
}

PathGenerator::PathGenerator(int levels, int max_branching, int name_length)
    // The reference asserts levels >= 1, max_branching > 1, name_length > 1;
    // clamp instead of aborting. Names come from a 32-hex uuid, hence <= 32.
    : levels_(std::max(levels, 1)),
      max_branching_(std::max(max_branching, 2)),
      name_length_(std::clamp(name_length, 2, 32)) {
  // dirs_[d] is the current directory at depth d (0 = directly under the split),
  // counts_[d] how many names depth d has produced under its current parent;
  // counts_[levels_-1] counts files in the current leaf directory. As in the
  // reference, all directory names are drawn up front.
  dirs_.resize(static_cast<std::size_t>(levels_ - 1));
  counts_.assign(static_cast<std::size_t>(levels_), 0);
  for (int d = 0; d + 1 < levels_; ++d) {
    dirs_[d] = NewDirName();
    counts_[d] = 1;
  }
}

std::string PathGenerator::Next() {
  const int leaf = levels_ - 1;
  // The deepest depth that may take one more name. Every depth but the top
  // holds at most max_branching names per parent; the top is unbounded.
  int d = leaf;
  while (d > 0 && counts_[d] >= max_branching_) --d;
  if (d < leaf) {
    // New directory at depth d (same parent), then fresh directories below it.
    dirs_[d] = NewDirName();
    ++counts_[d];
    for (int k = d + 1; k < leaf; ++k) {
      dirs_[k] = NewDirName();
      counts_[k] = 1;
    }
    counts_[leaf] = 0;
  }
  ++counts_[leaf];
  std::string out;
  for (const auto& dir : dirs_) {
    out += dir;
    out.push_back('/');
  }
  out += RandomHex32();
  return out;
}

std::string PathGenerator::NewDirName() {
  return RandomHex32().substr(0, static_cast<std::size_t>(name_length_));
}

}  // namespace sedpack
