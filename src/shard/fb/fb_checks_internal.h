// SPDX-License-Identifier: Apache-2.0
// Private to the fb shard code: what the fb writer records for the checks
// sidecar while it builds a shard (where each value lands, each example's
// checksum), kept apart from the builder and compression code.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "shard/shard_buffer.h"
#include "sedpack/value.h"

namespace sedpack::fb_internal {

/// FlatBuffers builds back to front, so a value's final offset is only known
/// once the buffer is finished: the recorder keeps each value's distance from
/// the end and turns it into an offset at Finish.
class FbChecksRecorder {
 public:
  /// A value's bytes were just pushed: the builder now holds `size_after_push`
  /// bytes, the value's `size` of them first.
  void AddValue(std::uint64_t size_after_push, std::uint64_t size) { from_end_.push_back({size_after_push, size}); }
  /// Every value of an example was added (`values`: its bytes, schema order).
  void EndExample(std::span<const ValueView> values);
  /// The buffer is finished and holds `final_size` bytes.
  void Finish(std::uint64_t final_size);
  /// What Finish produced (decoded size, value ranges, example checksums).
  shard_internal::ShardWriteChecks Take();

 private:
  std::vector<shard_internal::ValueRange> from_end_;
  std::vector<std::uint64_t> checksums_;
  shard_internal::ShardWriteChecks done_;
};

}  // namespace sedpack::fb_internal
