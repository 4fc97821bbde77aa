// SPDX-License-Identifier: Apache-2.0
// ShardPathList: the paths of an index's shards, packed into blocks.
#include <limits>
#include <string_view>
#include <utility>

#include "sedpack/index/index.h"

namespace sedpack {

namespace {
// Small enough that the part-filled last block of each of the many lists a
// parallel walk builds at once wastes little (a list of one folder holds about
// 75 kB of paths), large enough that a million paths need only a few
// thousand blocks.
constexpr std::size_t kPathBlockSize = 16 * 1024;
}  // namespace

ShardPathList::ShardPathList(const ShardPathList& other) {
  reserve(other.size());
  // The copy needs no more blocks than `other`, which passed the checks.
  for (std::string_view p : other) AddUnchecked(p);
}

ShardPathList& ShardPathList::operator=(const ShardPathList& other) {
  if (this != &other) {
    ShardPathList copy(other);
    *this = std::move(copy);
  }
  return *this;
}

Status ShardPathList::Add(std::string_view path) {
  if (path.size() > std::numeric_limits<std::uint32_t>::max()) {
    return Status::InvalidArgument("a shard path of ", path.size(), " bytes (4 GiB or more)");
  }
  if (blocks_.size() >= std::numeric_limits<std::uint32_t>::max()) {
    return Status::InvalidArgument("more than 2^32 blocks of shard paths");
  }
  AddUnchecked(path);
  return Status::OK();
}

void ShardPathList::AddUnchecked(std::string_view path) {
  // A new block when the path does not fit in the last one's reserved room, so
  // that no block ever reallocates (the views handed out stay valid).
  if (blocks_.empty() || blocks_.back().capacity() - blocks_.back().size() < path.size()) {
    std::string block;
    block.reserve(std::max(kPathBlockSize, path.size()));
    blocks_.push_back(std::move(block));
  }
  std::string& b = blocks_.back();
  entries_.push_back(Entry{static_cast<std::uint32_t>(blocks_.size() - 1), static_cast<std::uint32_t>(b.size()),
                           static_cast<std::uint32_t>(path.size())});
  b.append(path);
  total_bytes_ += path.size();
}

Status ShardPathList::Append(ShardPathList&& other) {
  if (other.entries_.empty()) return Status::OK();
  if (blocks_.size() + other.blocks_.size() > std::numeric_limits<std::uint32_t>::max()) {
    return Status::InvalidArgument("more than 2^32 blocks of shard paths");
  }
  const auto base = static_cast<std::uint32_t>(blocks_.size());
  for (std::string& b : other.blocks_) blocks_.push_back(std::move(b));
  entries_.reserve(entries_.size() + other.entries_.size());
  for (const Entry& e : other.entries_) entries_.push_back(Entry{e.block + base, e.offset, e.size});
  total_bytes_ += other.total_bytes_;
  other = ShardPathList();
  return Status::OK();
}

}  // namespace sedpack
