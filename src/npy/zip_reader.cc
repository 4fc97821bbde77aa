// SPDX-License-Identifier: Apache-2.0
// Reading the zip container of .npz files: the central directory and the
// members, every offset checked against the file size.
#include <cstring>
#include <deque>
#include <map>
#include <new>
#include <string>
#include <utility>
#include <vector>

#include "npy/zip_internal.h"
#include "core/endian_internal.h"

namespace sedpack::npz_internal {

using core_internal::LoadLe16;
using core_internal::LoadLe32;
using core_internal::LoadLe64;

namespace {

// Largest archive comment, hence how far from the end the end record can be.
constexpr std::size_t kMaxCommentSize = 0xffff;

// The ZIP64 extra of a central entry holds, in this order, only the fields
// whose classic value is saturated.
Status ApplyZip64Extra(std::span<const std::byte> extra, bool need_uncompressed,
                       bool need_compressed, bool need_offset, ZipEntry* entry) {
  std::size_t pos = 0;
  while (extra.size() - pos >= 4) {
    const std::uint16_t id = LoadLe16(extra.data() + pos);
    const std::uint16_t size = LoadLe16(extra.data() + pos + 2);
    pos += 4;
    if (size > extra.size() - pos) {
      return Status::Corruption("zip entry \"", entry->name, "\": extra field passes its end");
    }
    if (id == kZip64ExtraId) {
      std::size_t field = pos;
      const std::size_t end = pos + size;
      auto take = [&](std::uint64_t* value) -> bool {
        if (end - field < 8) return false;
        *value = LoadLe64(extra.data() + field);
        field += 8;
        return true;
      };
      if ((need_uncompressed && !take(&entry->uncompressed_size)) ||
          (need_compressed && !take(&entry->compressed_size)) ||
          (need_offset && !take(&entry->local_header_offset))) {
        return Status::Corruption("zip entry \"", entry->name, "\": ZIP64 extra field too short");
      }
      return Status::OK();
    }
    pos += size;
  }
  if (need_uncompressed || need_compressed || need_offset) {
    return Status::Corruption("zip entry \"", entry->name,
                              "\": saturated size or offset without a ZIP64 extra field");
  }
  return Status::OK();
}

}  // namespace

Result<std::vector<ZipEntry>> ReadZipDirectory(std::span<const std::byte> file) {
  const std::size_t size = file.size();
  if (size < kEndOfCentralDirSize) {
    return Status::Corruption("npz shard is too small to be a zip file (", size, " bytes)");
  }
  // Find the last end record whose comment fits in the file.
  std::size_t eocd = size;
  const std::size_t lowest = size - kEndOfCentralDirSize > kMaxCommentSize
                                 ? size - kEndOfCentralDirSize - kMaxCommentSize
                                 : 0;
  for (std::size_t p = size - kEndOfCentralDirSize + 1; p-- > lowest;) {
    if (LoadLe32(file.data() + p) == kEndOfCentralDirSignature &&
        LoadLe16(file.data() + p + 20) <= size - p - kEndOfCentralDirSize) {
      eocd = p;
      break;
    }
  }
  if (eocd == size) return Status::Corruption("npz shard: zip end record not found");
  const std::byte* e = file.data() + eocd;
  if (LoadLe16(e + 4) != 0 || LoadLe16(e + 6) != 0 || LoadLe16(e + 8) != LoadLe16(e + 10)) {
    return Status::Corruption("npz shard: multi-disk zip archives are not supported");
  }
  std::uint64_t count = LoadLe16(e + 10);
  std::uint64_t cd_size = LoadLe32(e + 12);
  std::uint64_t cd_offset = LoadLe32(e + 16);
  std::uint64_t cd_limit = eocd;  // The central directory must end before this.

  if (eocd >= kZip64LocatorSize &&
      LoadLe32(file.data() + eocd - kZip64LocatorSize) == kZip64LocatorSignature) {
    const std::byte* loc = file.data() + eocd - kZip64LocatorSize;
    const std::uint64_t z64 = LoadLe64(loc + 8);
    if (LoadLe32(loc + 4) != 0 || LoadLe32(loc + 16) > 1) {
      return Status::Corruption("npz shard: multi-disk zip archives are not supported");
    }
    if (z64 > eocd - kZip64LocatorSize ||
        eocd - kZip64LocatorSize - z64 < kZip64EndOfCentralDirSize) {
      return Status::Corruption("npz shard: ZIP64 end record offset ", z64, " is out of range");
    }
    const std::byte* r = file.data() + z64;
    if (LoadLe32(r) != kZip64EndOfCentralDirSignature) {
      return Status::Corruption("npz shard: ZIP64 end record signature missing");
    }
    if (LoadLe32(r + 16) != 0 || LoadLe32(r + 20) != 0 || LoadLe64(r + 24) != LoadLe64(r + 32)) {
      return Status::Corruption("npz shard: multi-disk zip archives are not supported");
    }
    count = LoadLe64(r + 32);
    cd_size = LoadLe64(r + 40);
    cd_offset = LoadLe64(r + 48);
    cd_limit = z64;
  }
  if (cd_offset > cd_limit || cd_size > cd_limit - cd_offset) {
    return Status::Corruption("npz shard: central directory (offset ", cd_offset, ", size ",
                              cd_size, ") lies outside the file");
  }
  if (count > cd_size / kCentralHeaderSize) {
    return Status::Corruption("npz shard: ", count,
                              " entries cannot fit in a central directory of ", cd_size, " bytes");
  }

  std::vector<ZipEntry> entries;
  entries.reserve(count);
  std::size_t pos = cd_offset;
  const std::size_t cd_end = cd_offset + cd_size;
  for (std::uint64_t i = 0; i < count; ++i) {
    if (cd_end - pos < kCentralHeaderSize) {
      return Status::Corruption("npz shard: central directory entry ", i, " is truncated");
    }
    const std::byte* c = file.data() + pos;
    if (LoadLe32(c) != kCentralHeaderSignature) {
      return Status::Corruption("npz shard: central directory entry ", i, " has a bad signature");
    }
    const std::size_t name_len = LoadLe16(c + 28);
    const std::size_t extra_len = LoadLe16(c + 30);
    const std::size_t comment_len = LoadLe16(c + 32);
    if (cd_end - pos - kCentralHeaderSize < name_len + extra_len + comment_len) {
      return Status::Corruption("npz shard: central directory entry ", i, " is truncated");
    }
    ZipEntry entry;
    entry.flags = LoadLe16(c + 8);
    entry.method = LoadLe16(c + 10);
    entry.crc32 = LoadLe32(c + 16);
    entry.compressed_size = LoadLe32(c + 20);
    entry.uncompressed_size = LoadLe32(c + 24);
    entry.local_header_offset = LoadLe32(c + 42);
    entry.name.assign(reinterpret_cast<const char*>(c + kCentralHeaderSize), name_len);
    const bool need_u = entry.uncompressed_size == 0xffffffffu;
    const bool need_c = entry.compressed_size == 0xffffffffu;
    const bool need_o = entry.local_header_offset == 0xffffffffu;
    if (need_u || need_c || need_o) {
      SEDPACK_RETURN_NOT_OK(
          ApplyZip64Extra(file.subspan(pos + kCentralHeaderSize + name_len, extra_len), need_u,
                          need_c, need_o, &entry));
    }
    entries.push_back(std::move(entry));
    pos += kCentralHeaderSize + name_len + extra_len + comment_len;
  }
  return entries;
}

Result<std::span<const std::byte>> ZipEntryData(std::span<const std::byte> file,
                                                const ZipEntry& entry) {
  const std::uint64_t size = file.size();
  const std::uint64_t off = entry.local_header_offset;
  if (off > size || size - off < kLocalHeaderSize) {
    return Status::Corruption("zip member \"", entry.name, "\": local header offset ", off,
                              " is outside the file");
  }
  const std::byte* h = file.data() + off;
  if (LoadLe32(h) != kLocalHeaderSignature) {
    return Status::Corruption("zip member \"", entry.name, "\": bad local header signature");
  }
  const std::uint64_t name_len = LoadLe16(h + 26);
  const std::uint64_t extra_len = LoadLe16(h + 28);
  if (size - off - kLocalHeaderSize < name_len + extra_len) {
    return Status::Corruption("zip member \"", entry.name, "\": local header is truncated");
  }
  if (std::string_view(reinterpret_cast<const char*>(h + kLocalHeaderSize), name_len) !=
      entry.name) {
    return Status::Corruption("zip member \"", entry.name,
                              "\": the local header names a different file");
  }
  const std::uint64_t data = off + kLocalHeaderSize + name_len + extra_len;
  if (entry.compressed_size > size - data) {
    return Status::Corruption("zip member \"", entry.name, "\": ", entry.compressed_size,
                              " bytes of data at offset ", data, " pass the end of the file (",
                              size, " bytes)");
  }
  return file.subspan(data, entry.compressed_size);
}

}  // namespace sedpack::npz_internal
