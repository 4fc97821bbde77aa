// SPDX-License-Identifier: Apache-2.0
// Private to the library: the zip container as numpy.savez /
// numpy.savez_compressed write it (Python zipfile with force_zip64=True),
// shared by the npz shards and the ChipWhisperer reader.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "sedpack/status.h"

namespace sedpack::npz_internal {

inline constexpr std::uint32_t kLocalHeaderSignature = 0x04034b50;
inline constexpr std::uint32_t kCentralHeaderSignature = 0x02014b50;
inline constexpr std::uint32_t kEndOfCentralDirSignature = 0x06054b50;
inline constexpr std::uint32_t kZip64EndOfCentralDirSignature = 0x06064b50;
inline constexpr std::uint32_t kZip64LocatorSignature = 0x07064b50;

inline constexpr std::size_t kLocalHeaderSize = 30;
inline constexpr std::size_t kCentralHeaderSize = 46;
inline constexpr std::size_t kEndOfCentralDirSize = 22;
inline constexpr std::size_t kZip64EndOfCentralDirSize = 56;
inline constexpr std::size_t kZip64LocatorSize = 20;
/// The ZIP64 extra field numpy puts on every local header: id, size, two u64 sizes.
inline constexpr std::size_t kZip64LocalExtraSize = 20;
inline constexpr std::uint16_t kZip64ExtraId = 1;

inline constexpr std::uint16_t kMethodStored = 0;
inline constexpr std::uint16_t kMethodDeflated = 8;
inline constexpr std::uint16_t kFlagEncrypted = 0x0001;
inline constexpr std::uint16_t kFlagUtf8Name = 0x0800;

/// Python zipfile's ZIP64_LIMIT: sizes and offsets above it use ZIP64 fields.
inline constexpr std::uint64_t kZip64Limit = (1ULL << 31) - 1;
/// Python zipfile's ZIP_FILECOUNT_LIMIT.
inline constexpr std::uint64_t kZipFileCountLimit = 0xffff;

/// zlib's default level, which Python zipfile uses for ZIP_DEFLATED.
inline constexpr int kDeflateLevel = 6;

/// One member as the central directory describes it.
struct ZipEntry {
  std::string name;
  std::uint16_t flags = 0;
  std::uint16_t method = 0;
  std::uint32_t crc32 = 0;
  std::uint64_t compressed_size = 0;
  std::uint64_t uncompressed_size = 0;
  std::uint64_t local_header_offset = 0;
};

/// Parse the end records and the central directory of the zip `file`, checking
/// every offset and size against the file size. Corruption otherwise.
Result<std::vector<ZipEntry>> ReadZipDirectory(std::span<const std::byte> file);

/// Return the (possibly compressed) bytes of `entry`, found through its local
/// header's own name and extra lengths. Corruption if the local header is
/// missing, names another member, or the data passes the end of the file.
Result<std::span<const std::byte>> ZipEntryData(std::span<const std::byte> file,
                                                const ZipEntry& entry);

/// Writes a zip archive in memory, byte for byte as Python zipfile does for
/// numpy.savez (stored) and numpy.savez_compressed (deflate level 6).
class ZipWriter {
 public:
  /// `reserve`: expected archive size, to allocate the output once.
  /// `level`: zlib's DEFLATE level of the members.
  ZipWriter(bool deflate, std::uint64_t reserve, int level = kDeflateLevel);

  /// Append a member whose contents are `pieces` concatenated.
  Status AddMember(std::string_view name, std::span<const std::span<const std::byte>> pieces);

  /// Write the central directory and end records; return the archive.
  std::vector<std::byte> Finish();

 private:
  int level_ = kDeflateLevel;
  struct Central {
    std::string name;
    std::uint16_t flags;
    std::uint32_t crc32;
    std::uint64_t compressed_size;
    std::uint64_t uncompressed_size;
    std::uint64_t local_header_offset;
  };

  bool deflate_;
  std::vector<std::byte> out_;
  std::vector<Central> central_;
  std::vector<std::byte> scratch_;  // Reused for deflate input and output.
  std::vector<std::byte> compressed_;
};

}  // namespace sedpack::npz_internal
