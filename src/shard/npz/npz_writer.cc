// SPDX-License-Identifier: Apache-2.0
#include <algorithm>
#include <limits>
#include <new>
#include <string>
#include <utility>
#include <vector>

#include "npy/npy_internal.h"
#include "npy/zip_internal.h"
#include "shard/shard_internal.h"

namespace sedpack::shard_internal {
namespace {

using npz_internal::FormatNpyHeader;

// Reserve column buffers for this many examples like the first one, so a
// typical shard does not regrow them (capped: untouched capacity is cheap,
// but not free).
constexpr std::uint64_t kInitialExamples = 256;
constexpr std::uint64_t kMaxInitialColumnBytes = 64ULL << 20;

// Per member: the local header with its ZIP64 extra, the central header with a
// possible ZIP64 extra (3 u64 + id/size), plus the name twice.
constexpr std::uint64_t kZipPerMemberOverhead = npz_internal::kLocalHeaderSize +
                                                npz_internal::kZip64LocalExtraSize +
                                                npz_internal::kCentralHeaderSize + 4 + 3 * 8;
constexpr std::uint64_t kZipEndOverhead = npz_internal::kEndOfCentralDirSize +
                                          npz_internal::kZip64EndOfCentralDirSize +
                                          npz_internal::kZip64LocatorSize;

// Bound on raw deflate output (zlib's deflateBound for the default settings,
// rounded up): incompressible data only grows by stored-block headers.
std::uint64_t DeflateBound(std::uint64_t n) { return n + (n >> 11) + 64; }

enum class MemberKind { kNumeric, kStr, kBytesOffsets, kBytesData };

struct Member {
  std::string file_name;  // "<key>.npy"
  MemberKind kind;
  std::size_t attribute;
  std::uint64_t header_bound;  // Largest .npy header this member can get.
};

// What the writer has buffered for one attribute.
struct Column {
  std::vector<std::byte> data;     // Numeric values, or str UTF-8 / bytes concatenated.
  std::vector<std::int64_t> ends;  // str/bytes: end offset of each value in `data`.
  std::uint64_t max_chars = 0;     // str: longest value, in code points.
};

// The per-attribute numbers the size bound depends on.
struct ColumnStats {
  std::uint64_t data_bytes = 0;
  std::uint64_t max_chars = 0;
};

class NpzShardWriter final : public ShardWriter {
 public:
  NpzShardWriter(Compression compression, std::vector<AttributeSpec> schema, int level)
      : deflate_(compression == Compression::kZip),
        level_(level == kDefaultCodecLevel ? npz_internal::kDeflateLevel : level),
        schema_(std::move(schema)),
        columns_(schema_.size()),
        stats_(schema_.size()) {
    // The offsets member of a bytes attribute is "len" + "_" * L + name, L the
    // longest name in code points (Python len()), so it cannot collide with a name.
    std::size_t longest = 0;
    for (const AttributeSpec& spec : schema_) {
      longest = std::max(longest, Utf8CodePointCount(spec.name));
    }
    constexpr std::uint64_t kAnyDim = std::numeric_limits<std::uint64_t>::max();
    for (std::size_t j = 0; j < schema_.size(); ++j) {
      const AttributeSpec& spec = schema_[j];
      if (spec.dtype == DType::kBytes) {
        const std::uint64_t off_dims[] = {kAnyDim};
        const std::uint64_t data_dims[] = {1, kAnyDim};
        members_.push_back({"len" + std::string(longest, '_') + spec.name + ".npy",
                            MemberKind::kBytesOffsets, j, FormatNpyHeader("<i8", off_dims).size()});
        members_.push_back({spec.name + ".npy", MemberKind::kBytesData, j,
                            FormatNpyHeader("|u1", data_dims).size()});
      } else if (spec.dtype == DType::kStr) {
        const std::uint64_t dims[] = {kAnyDim};
        members_.push_back({spec.name + ".npy", MemberKind::kStr, j,
                            FormatNpyHeader("<U4294967295", dims).size()});
      } else {
        std::vector<std::uint64_t> dims(spec.shape.size() + 1, kAnyDim);
        members_.push_back({spec.name + ".npy", MemberKind::kNumeric, j,
                            FormatNpyHeader(npz_internal::NpyDescrOf(spec.dtype), dims).size()});
      }
    }
  }

  Status Add(std::span<const ValueView> values) override {
    if (finished_) return Status::InvalidArgument("Add() called after Finish() or a failure");
    SEDPACK_RETURN_NOT_OK(ValidateExample(schema_, values));
    try {
      for (std::size_t j = 0; j < schema_.size(); ++j) {
        Column& column = columns_[j];
        const std::span<const std::byte> data = values[j].data;
        if (num_examples_ == 0) {
          column.data.reserve(std::min(data.size() * kInitialExamples, kMaxInitialColumnBytes));
        }
        column.data.insert(column.data.end(), data.begin(), data.end());
        if (schema_[j].dtype == DType::kStr || schema_[j].dtype == DType::kBytes) {
          column.ends.push_back(static_cast<std::int64_t>(column.data.size()));
        }
        if (schema_[j].dtype == DType::kStr) {
          column.max_chars = std::max<std::uint64_t>(column.max_chars,
                                                     Utf8CodePointCount(values[j].AsStringView()));
        }
        stats_[j] = {column.data.size(), column.max_chars};
      }
    } catch (const std::bad_alloc&) {
      // Some columns may hold the example and others not: the shard is unusable.
      finished_ = true;
      return Status::ResourceExhausted("out of memory while buffering an npz shard");
    }
    ++num_examples_;
    return Status::OK();
  }

  std::size_t num_examples() const override { return num_examples_; }

  std::uint64_t buffered_bytes() const override { return SizeBound(num_examples_, stats_); }

  std::uint64_t EstimateAddedBytes(std::span<const ValueView> values) const override {
    std::vector<ColumnStats> next = stats_;
    for (std::size_t j = 0; j < next.size() && j < values.size(); ++j) {
      next[j].data_bytes += values[j].data.size();
      if (schema_[j].dtype == DType::kStr) {
        next[j].max_chars = std::max<std::uint64_t>(next[j].max_chars,
                                                    Utf8CodePointCount(values[j].AsStringView()));
      }
    }
    return SizeBound(num_examples_ + 1, next) - SizeBound(num_examples_, stats_);
  }

  Result<std::vector<std::byte>> Finish() override {
    if (finished_) return Status::InvalidArgument("Finish() called twice or after a failure");
    finished_ = true;
    try {
      npz_internal::ZipWriter zip(deflate_, buffered_bytes(), level_);
      const std::uint64_t n = num_examples_;
      std::vector<std::byte> converted;  // str as UTF-32, or bytes offsets.
      for (const Member& member : members_) {
        const AttributeSpec& spec = schema_[member.attribute];
        Column& column = columns_[member.attribute];
        std::string header;
        std::span<const std::byte> data;
        switch (member.kind) {
          case MemberKind::kNumeric: {
            std::vector<std::uint64_t> dims{n};
            for (std::int64_t d : spec.shape) dims.push_back(static_cast<std::uint64_t>(d));
            header = FormatNpyHeader(npz_internal::NpyDescrOf(spec.dtype), dims);
            data = column.data;
            break;
          }
          case MemberKind::kStr: {
            // numpy gives an array of strings the dtype <U{longest}, at least <U1.
            const std::uint64_t width = std::max<std::uint64_t>(column.max_chars, 1);
            const std::uint64_t dims[] = {n};
            header = FormatNpyHeader("<U" + std::to_string(width), dims);
            converted.clear();
            converted.reserve(n * width * 4);
            std::int64_t begin = 0;
            for (std::int64_t end : column.ends) {
              const std::string_view text(reinterpret_cast<const char*>(column.data.data()) + begin,
                                          static_cast<std::size_t>(end - begin));
              const std::size_t before = converted.size();
              AppendUtf32LeFromUtf8(text, &converted);
              converted.resize(before + width * 4);  // NUL padding.
              begin = end;
            }
            data = converted;
            break;
          }
          case MemberKind::kBytesOffsets: {
            const std::uint64_t dims[] = {n + 1};
            header = FormatNpyHeader("<i8", dims);
            converted.clear();
            converted.reserve((n + 1) * 8);
            AppendLe(0, 8, &converted);
            for (std::int64_t end : column.ends) {
              AppendLe(static_cast<std::uint64_t>(end), 8, &converted);
            }
            data = converted;
            break;
          }
          case MemberKind::kBytesData: {
            const std::uint64_t dims[] = {1, column.data.size()};
            header = FormatNpyHeader("|u1", dims);
            data = column.data;
            break;
          }
        }
        const std::span<const std::byte> pieces[] = {
            {reinterpret_cast<const std::byte*>(header.data()), header.size()}, data};
        SEDPACK_RETURN_NOT_OK(zip.AddMember(member.file_name, pieces));
        // A column is done once its last member is written; free it early.
        if (member.kind != MemberKind::kBytesOffsets) column = Column{};
      }
      return zip.Finish();
    } catch (const std::bad_alloc&) {
      return Status::ResourceExhausted("out of memory while finishing an npz shard");
    }
  }

 private:
  // Upper bound on the archive size for `n` examples with these column stats.
  std::uint64_t SizeBound(std::uint64_t n, const std::vector<ColumnStats>& stats) const {
    std::uint64_t total = kZipEndOverhead;
    for (const Member& member : members_) {
      const ColumnStats& s = stats[member.attribute];
      std::uint64_t data = 0;
      switch (member.kind) {
        case MemberKind::kNumeric:
        case MemberKind::kBytesData:
          data = s.data_bytes;
          break;
        case MemberKind::kStr:
          data = n * std::max<std::uint64_t>(s.max_chars, 1) * 4;
          break;
        case MemberKind::kBytesOffsets:
          data = (n + 1) * 8;
          break;
      }
      std::uint64_t member_bytes = member.header_bound + data;
      if (deflate_) member_bytes = DeflateBound(member_bytes);
      total += kZipPerMemberOverhead + 2 * member.file_name.size() + member_bytes;
    }
    return total;
  }

  bool deflate_;
  int level_;
  std::vector<AttributeSpec> schema_;
  std::vector<Member> members_;  // In the reference's order.
  std::vector<Column> columns_;
  std::vector<ColumnStats> stats_;
  std::uint64_t num_examples_ = 0;
  bool finished_ = false;
};

}  // namespace

std::unique_ptr<ShardWriter> MakeNpzShardWriter(Compression compression,
                                                std::vector<AttributeSpec> schema, int level) {
  return std::make_unique<NpzShardWriter>(compression, std::move(schema), level);
}

}  // namespace sedpack::shard_internal
