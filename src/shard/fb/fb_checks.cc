// SPDX-License-Identifier: Apache-2.0
// The fb side of the checks sidecar: the writer's recorder, and one example
// read from its recorded value ranges (example_read.h ReadFbExampleByRanges).
#include "shard/fb/fb_checks_internal.h"

#include <algorithm>
#include <new>
#include <utility>

#include "codecs/decode_points_internal.h"
#include "shard/example_read.h"
#include "shard/fb/fb_internal.h"

namespace sedpack::fb_internal {

void FbChecksRecorder::EndExample(std::span<const ValueView> values) {
  if (values.size() == 1) {
    checksums_.push_back(codecs_internal::FastChecksum(values[0].data));
    return;
  }
  codecs_internal::FastChecksummer sum;
  for (const ValueView& v : values) sum.Update(v.data);
  checksums_.push_back(sum.Digest());
}

void FbChecksRecorder::Finish(std::uint64_t final_size) {
  done_ = {};
  done_.decoded_size = final_size;
  done_.values.reserve(from_end_.size());
  for (const shard_internal::ValueRange& r : from_end_) done_.values.push_back({final_size - r.offset, r.size});
  done_.example_checksums = std::move(checksums_);
  from_end_ = {};
  checksums_ = {};
}

shard_internal::ShardWriteChecks FbChecksRecorder::Take() { return std::exchange(done_, {}); }

}  // namespace sedpack::fb_internal

namespace sedpack::shard_internal {
namespace {

// Where values start in the example's buffer, as ReadFbExample places them.
constexpr std::uint64_t kValueAlignment = 16;

// The covering range is read in one go when it is not much larger than the
// values themselves (the writer lays an example's values out together, with
// only their small tables in between).
bool Compact(std::uint64_t covering, std::uint64_t values) { return covering <= 2 * values + 4096; }

}  // namespace

Result<FbExample> ReadFbExampleByRanges(const std::vector<AttributeSpec>& schema, std::uint64_t example,
                                        std::span<const ValueRange> ranges, std::optional<std::uint64_t> checksum,
                                        const ReadAt& read_decoded) {
  if (ranges.size() != schema.size()) {
    return Status::Corruption("example ", example, ": ", ranges.size(), " value ranges, the schema has ",
                              schema.size(), " attributes");
  }
  std::uint64_t lo = UINT64_MAX, hi = 0, values = 0;
  for (std::size_t j = 0; j < ranges.size(); ++j) {
    SEDPACK_RETURN_NOT_OK(fb_internal::CheckValueSize(schema[j], static_cast<std::size_t>(example), ranges[j].size));
    lo = std::min(lo, ranges[j].offset);
    hi = std::max(hi, ranges[j].offset + ranges[j].size);
    values += ranges[j].size;
  }
  if (ranges.empty()) lo = hi = 0;
  lo -= lo % kValueAlignment;  // the values keep their alignment in the buffer
  const bool compact = Compact(hi - lo, values);
  const std::uint64_t total = compact ? hi - lo + kValueAlignment : values + kValueAlignment * (ranges.size() + 1);
  codecs_internal::ByteBuffer buffer;
  try {
    buffer.resize(static_cast<std::size_t>(total));
  } catch (const std::bad_alloc&) {
    return Status::ResourceExhausted("out of memory reading example ", example, " (", total, " bytes)");
  }
  const auto base = reinterpret_cast<std::uintptr_t>(buffer.data());
  std::size_t at = static_cast<std::size_t>((kValueAlignment - base % kValueAlignment) % kValueAlignment);
  std::vector<std::span<const std::byte>> views(ranges.size());
  FbExample result;
  if (compact) {
    const std::span<std::byte> all(buffer.data() + at, static_cast<std::size_t>(hi - lo));
    if (!all.empty()) SEDPACK_RETURN_NOT_OK(read_decoded(lo, all));
    result.bytes_read = all.size();
    for (std::size_t j = 0; j < ranges.size(); ++j) {
      views[j] = all.subspan(static_cast<std::size_t>(ranges[j].offset - lo), static_cast<std::size_t>(ranges[j].size));
    }
  } else {
    for (std::size_t j = 0; j < ranges.size(); ++j) {
      const std::span<std::byte> out(buffer.data() + at, static_cast<std::size_t>(ranges[j].size));
      if (!out.empty()) SEDPACK_RETURN_NOT_OK(read_decoded(ranges[j].offset, out));
      result.bytes_read += out.size();
      views[j] = out;
      at += out.size();
      at += (kValueAlignment - at % kValueAlignment) % kValueAlignment;
    }
  }
  if (checksum) {
    codecs_internal::FastChecksummer sum;
    for (const auto& v : views) sum.Update(v);
    if (sum.Digest() != *checksum) {
      return Status::Corruption("example ", example, " does not match its checksum in the checks sidecar")
          .WithDetail(StatusDetail::kHashMismatch);
    }
  }
  for (std::size_t j = 0; j < ranges.size(); ++j) {
    SEDPACK_RETURN_NOT_OK(fb_internal::CheckValueBytes(schema[j], static_cast<std::size_t>(example), views[j]));
  }
  result.values = fb_internal::MakeOneExample(schema, std::move(buffer), std::move(views));
  return result;
}

}  // namespace sedpack::shard_internal
