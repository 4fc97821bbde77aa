// SPDX-License-Identifier: Apache-2.0
#include <algorithm>
#include <limits>
#include <new>
#include <string>
#include <utility>
#include <vector>

#include "codecs/compress_internal.h"
#include "shard/npz/npy_internal.h"
#include "shard/npz/zip_internal.h"
#include "shard/shard_internal.h"

namespace sedpack::npz_internal {

using shard_internal::AppendLe;

namespace {

// DOS timestamp of 1980-01-01 00:00: Python's ZipInfo default, which numpy keeps.
constexpr std::uint16_t kDosTime = 0;
constexpr std::uint16_t kDosDate = (1 << 5) | 1;
constexpr std::uint16_t kVersionDefault = 20;
constexpr std::uint16_t kVersionZip64 = 45;
constexpr std::uint16_t kMadeByUnix = 3 << 8;
constexpr std::uint32_t kExternalAttributes = 0600u << 16;  // -rw-------

void AppendBytes(std::string_view bytes, std::vector<std::byte>* out) {
  const auto* p = reinterpret_cast<const std::byte*>(bytes.data());
  out->insert(out->end(), p, p + bytes.size());
}

bool IsAscii(std::string_view s) {
  return std::all_of(s.begin(), s.end(),
                     [](char c) { return static_cast<unsigned char>(c) < 0x80; });
}

}  // namespace

ZipWriter::ZipWriter(bool deflate, std::uint64_t reserve, int level)
    : level_(level), deflate_(deflate) {
  out_.reserve(reserve);
}

Status ZipWriter::AddMember(std::string_view name,
                            std::span<const std::span<const std::byte>> pieces) {
  std::uint64_t uncompressed = 0;
  std::uint32_t crc = 0;
  for (const auto& piece : pieces) {
    uncompressed += piece.size();
    crc = Crc32(piece, crc);
  }
  std::uint64_t compressed = uncompressed;
  if (deflate_) {
    scratch_.clear();
    scratch_.reserve(uncompressed);
    for (const auto& piece : pieces) scratch_.insert(scratch_.end(), piece.begin(), piece.end());
    SEDPACK_RETURN_NOT_OK(DeflateRaw(scratch_, level_, &compressed_));
    compressed = compressed_.size();
  }
  const bool big = uncompressed > kZip64Limit || compressed > kZip64Limit;
  const std::uint16_t flags = IsAscii(name) ? 0 : kFlagUtf8Name;
  const std::uint64_t offset = out_.size();

  AppendLe(kLocalHeaderSignature, 4, &out_);
  AppendLe(big ? kVersionZip64 : kVersionDefault, 2, &out_);
  AppendLe(flags, 2, &out_);
  AppendLe(deflate_ ? kMethodDeflated : kMethodStored, 2, &out_);
  AppendLe(kDosTime, 2, &out_);
  AppendLe(kDosDate, 2, &out_);
  AppendLe(crc, 4, &out_);
  AppendLe(big ? 0xffffffffu : compressed, 4, &out_);
  AppendLe(big ? 0xffffffffu : uncompressed, 4, &out_);
  AppendLe(name.size(), 2, &out_);
  AppendLe(kZip64LocalExtraSize, 2, &out_);
  AppendBytes(name, &out_);
  // numpy opens every member with force_zip64=True, so every local header
  // carries the ZIP64 sizes even when they are small.
  AppendLe(kZip64ExtraId, 2, &out_);
  AppendLe(16, 2, &out_);
  AppendLe(uncompressed, 8, &out_);
  AppendLe(compressed, 8, &out_);
  if (deflate_) {
    out_.insert(out_.end(), compressed_.begin(), compressed_.end());
  } else {
    for (const auto& piece : pieces) out_.insert(out_.end(), piece.begin(), piece.end());
  }
  central_.push_back(Central{std::string(name), flags, crc, compressed, uncompressed, offset});
  return Status::OK();
}

std::vector<std::byte> ZipWriter::Finish() {
  const std::uint64_t cd_offset = out_.size();
  for (const Central& c : central_) {
    const bool big = c.uncompressed_size > kZip64Limit || c.compressed_size > kZip64Limit;
    const bool far = c.local_header_offset > kZip64Limit;
    const std::uint16_t version = (big || far) ? kVersionZip64 : kVersionDefault;
    const std::size_t extra_size = (big || far) ? 4 + 8 * ((big ? 2 : 0) + (far ? 1 : 0)) : 0;
    AppendLe(kCentralHeaderSignature, 4, &out_);
    AppendLe(kMadeByUnix | version, 2, &out_);
    AppendLe(version, 2, &out_);
    AppendLe(c.flags, 2, &out_);
    AppendLe(deflate_ ? kMethodDeflated : kMethodStored, 2, &out_);
    AppendLe(kDosTime, 2, &out_);
    AppendLe(kDosDate, 2, &out_);
    AppendLe(c.crc32, 4, &out_);
    AppendLe(big ? 0xffffffffu : c.compressed_size, 4, &out_);
    AppendLe(big ? 0xffffffffu : c.uncompressed_size, 4, &out_);
    AppendLe(c.name.size(), 2, &out_);
    AppendLe(extra_size, 2, &out_);
    AppendLe(0, 2, &out_);  // comment length
    AppendLe(0, 2, &out_);  // disk number start
    AppendLe(0, 2, &out_);  // internal attributes
    AppendLe(kExternalAttributes, 4, &out_);
    AppendLe(far ? 0xffffffffu : c.local_header_offset, 4, &out_);
    AppendBytes(c.name, &out_);
    if (extra_size != 0) {
      AppendLe(kZip64ExtraId, 2, &out_);
      AppendLe(extra_size - 4, 2, &out_);
      if (big) {
        AppendLe(c.uncompressed_size, 8, &out_);
        AppendLe(c.compressed_size, 8, &out_);
      }
      if (far) AppendLe(c.local_header_offset, 8, &out_);
    }
  }
  const std::uint64_t cd_end = out_.size();
  std::uint64_t count = central_.size();
  std::uint64_t cd_size = cd_end - cd_offset;
  std::uint64_t cd_start = cd_offset;
  if (count > kZipFileCountLimit || cd_start > kZip64Limit || cd_size > kZip64Limit) {
    AppendLe(kZip64EndOfCentralDirSignature, 4, &out_);
    AppendLe(kZip64EndOfCentralDirSize - 12, 8, &out_);
    AppendLe(kVersionZip64, 2, &out_);
    AppendLe(kVersionZip64, 2, &out_);
    AppendLe(0, 4, &out_);
    AppendLe(0, 4, &out_);
    AppendLe(count, 8, &out_);
    AppendLe(count, 8, &out_);
    AppendLe(cd_size, 8, &out_);
    AppendLe(cd_start, 8, &out_);
    AppendLe(kZip64LocatorSignature, 4, &out_);
    AppendLe(0, 4, &out_);
    AppendLe(cd_end, 8, &out_);
    AppendLe(1, 4, &out_);
    // Python clamps (not saturates) the classic fields.
    count = std::min<std::uint64_t>(count, 0xffff);
    cd_size = std::min<std::uint64_t>(cd_size, 0xffffffff);
    cd_start = std::min<std::uint64_t>(cd_start, 0xffffffff);
  }
  AppendLe(kEndOfCentralDirSignature, 4, &out_);
  AppendLe(0, 2, &out_);
  AppendLe(0, 2, &out_);
  AppendLe(count, 2, &out_);
  AppendLe(count, 2, &out_);
  AppendLe(cd_size, 4, &out_);
  AppendLe(cd_start, 4, &out_);
  AppendLe(0, 2, &out_);  // comment length
  return std::move(out_);
}

}  // namespace sedpack::npz_internal

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
