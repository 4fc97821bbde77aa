// SPDX-License-Identifier: Apache-2.0
// Writing the zip container of .npz files as Python zipfile does.
#include <algorithm>
#include <limits>
#include <new>
#include <string>
#include <utility>
#include <vector>

#include "npy/zip_internal.h"
#include "core/endian_internal.h"
#include "codecs/compress_internal.h"

namespace sedpack::npz_internal {

using core_internal::AppendLe;

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
