// SPDX-License-Identifier: Apache-2.0
// The journal entries of a resumable index build (index_internal.h).
#include <string>
#include <vector>

#include "index/index_internal.h"

namespace sedpack {
namespace {

constexpr std::string_view kIndexKind = "index entries";

bool IsCount(const std::string& s) {
  return !s.empty() && s.size() <= 19 && s.find_first_not_of("0123456789") == std::string::npos;
}

}  // namespace

std::string SubtreeKey(const std::string& list_path, std::size_t depth) {
  return list_path + "\t" + std::to_string(depth);
}

// Fields: list path, depth, number of lists visited, the lists, then a path
// and an example count per shard.
journal_internal::JournalEntry EncodeSubtree(const std::string& list_path, std::size_t depth,
                                             const std::vector<std::string>& visited, const IndexedSplit& shards) {
  std::vector<std::string> f = {list_path, std::to_string(depth), std::to_string(visited.size())};
  f.insert(f.end(), visited.begin(), visited.end());
  for (std::size_t i = 0; i < shards.shard_paths.size(); ++i) {
    f.emplace_back(shards.shard_paths[i]);
    f.push_back(std::to_string(shards.shard_examples[i]));
  }
  return {std::string(kIndexKind), journal_internal::PackFields(f)};
}

std::map<std::string, WalkedSubtree> DecodeSubtrees(const std::vector<journal_internal::JournalEntry>& entries) {
  std::map<std::string, WalkedSubtree> out;
  std::vector<std::string> f;
  for (const auto& e : entries) {
    if (e.kind != kIndexKind || !journal_internal::UnpackFields(e.data, &f) || f.size() < 3 || !IsCount(f[1]) ||
        !IsCount(f[2])) {
      continue;
    }
    const std::uint64_t lists = std::stoull(f[2]);
    if (lists > f.size() - 3 || (f.size() - 3 - lists) % 2 != 0) continue;
    WalkedSubtree w;
    w.visited.assign(f.begin() + 3, f.begin() + 3 + static_cast<std::ptrdiff_t>(lists));
    bool ok = true;
    for (std::size_t i = 3 + lists; ok && i < f.size(); i += 2) {
      ok = IsCount(f[i + 1]);
      if (ok) w.shards.emplace_back(f[i], std::stoull(f[i + 1]));
    }
    if (ok) out[SubtreeKey(f[0], std::stoull(f[1]))] = std::move(w);
  }
  return out;
}

}  // namespace sedpack
