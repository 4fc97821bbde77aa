// SPDX-License-Identifier: Apache-2.0
#include "sidecar/sidecar_internal.h"
#include "sidecar/sidecar_files.h"

#include "sedpack/codecs/hash.h"
#include "sedpack/io/file.h"

namespace sedpack {
namespace {

// dataset_info.json is small (a few kB); a file this large is not one.
constexpr std::uint64_t kMaxDatasetInfoBytes = std::uint64_t{1} << 30;

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

std::string SidecarDir(const std::string& root) { return JoinRoot(root, kSidecarDirName); }

std::string SidecarPath(const std::string& root, std::string_view name) {
  return SidecarDir(root) + "/" + std::string(name);
}

bool IsSidecarPath(std::string_view relative) {
  std::size_t start = 0;
  while (start <= relative.size()) {
    const std::size_t end = std::min(relative.find('/', start), relative.size());
    if (relative.substr(start, end - start) == kSidecarDirName) return true;
    start = end + 1;
  }
  return false;
}

DatasetInfoDigest Sha256Of(std::span<const std::byte> bytes) {
  const HashAlgorithm alg[] = {HashAlgorithm::kSha256};
  DatasetInfoDigest out{};
  auto hex = HashBytes(alg, bytes);
  // sha256 is always built in (OpenSSL is a required dependency); a failure here
  // leaves an all-zero digest that never matches a real file.
  if (!hex.ok() || hex->size() != 1 || (*hex)[0].size() != 64) return out;
  const std::string& h = (*hex)[0];
  for (std::size_t i = 0; i < 32; ++i) {
    out[i] = static_cast<std::byte>(HexValue(h[2 * i]) * 16 + HexValue(h[2 * i + 1]));
  }
  return out;
}

Result<DatasetInfoDigest> DatasetInfoSha256(const std::string& root) {
  SEDPACK_ASSIGN_OR_RETURN(std::vector<std::byte> bytes,
                           ReadFileBytesBeneath(root, "dataset_info.json", kMaxDatasetInfoBytes));
  return Sha256Of(bytes);
}

std::string DigestHex(const DatasetInfoDigest& digest) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(64);
  for (std::byte b : digest) {
    out.push_back(kHex[std::to_integer<unsigned>(b) >> 4]);
    out.push_back(kHex[std::to_integer<unsigned>(b) & 15]);
  }
  return out;
}

Status WriteSidecar(const std::string& root, std::string_view name, std::span<const std::byte> data) {
  const std::string rel = std::string(kSidecarDirName) + "/" + std::string(name);
  SEDPACK_RETURN_NOT_OK(CheckStaysBeneath(root, rel));
  SEDPACK_RETURN_NOT_OK(CreateDirectories(SidecarDir(root)));
  return WriteFileAtomic(SidecarPath(root, name), data);
}

Status WriteSidecarStreamed(const std::string& root, std::string_view name,
                            const std::function<Status(const ByteSink&)>& produce) {
  const std::string rel = std::string(kSidecarDirName) + "/" + std::string(name);
  SEDPACK_RETURN_NOT_OK(CheckStaysBeneath(root, rel));
  SEDPACK_RETURN_NOT_OK(CreateDirectories(SidecarDir(root)));
  return WriteFileAtomicStreamed(SidecarPath(root, name), produce);
}

Result<std::string> ReadSidecarText(const std::string& root, std::string_view name, std::uint64_t max_bytes) {
  return ReadFileTextBeneath(root, std::string(kSidecarDirName) + "/" + std::string(name), max_bytes);
}

}  // namespace sedpack
