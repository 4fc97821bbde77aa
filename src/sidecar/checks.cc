// SPDX-License-Identifier: Apache-2.0
#include "sidecar/checks_internal.h"

#include <algorithm>
#include <cstring>
#include <iostream>
#include <limits>
#include <utility>

#include "core/endian_internal.h"
#include "sedpack/io/file.h"
#include "sidecar/sidecar_files.h"

namespace sedpack::sidecar_internal {

// Sets a record's fields once the parser has checked them.
struct ChecksRecordFields {
  static void Set(ShardChecksRef* ref, std::string_view path, std::uint64_t stored_size, std::uint64_t stored_checksum,
                  std::uint64_t decoded_size, std::uint32_t points, std::uint32_t examples, std::uint32_t k,
                  const std::byte* point_bytes, const std::byte* example_bytes, std::span<const std::byte> encoded) {
    ref->path_ = path;
    ref->stored_size_ = stored_size;
    ref->stored_checksum_ = stored_checksum;
    ref->decoded_size_ = decoded_size;
    ref->num_points_ = points;
    ref->num_examples_ = examples;
    ref->values_per_example_ = k;
    ref->points_ = point_bytes;
    ref->examples_ = example_bytes;
    ref->encoded_ = encoded;
  }
};

namespace {

using core_internal::AppendLe;
using core_internal::LoadLe32;
using core_internal::LoadLe64;

// Layout: docs/format.md, "Checks sidecar". All integers little-endian.
constexpr char kMagic[8] = {'S', 'P', 'H', 'P', 'C', 'C', 'H', 'K'};
constexpr std::uint32_t kVersion = 1;
constexpr std::size_t kHeaderSize = 64;
constexpr std::size_t kTrailerSize = 8;
// path length, stored size, stored checksum, decoded size, three counts.
constexpr std::size_t kRecordFixed = 4 + 8 + 8 + 8 + 4 + 4 + 4;
constexpr std::size_t kPointSize = 16;
// A checks.bin of a million shards of a thousand examples is some 40 GB; a
// larger file is not one of ours.
constexpr std::uint64_t kMaxChecksBytes = std::uint64_t{1} << 40;
// No schema has this many attributes (fb shards hold far fewer tables).
constexpr std::uint32_t kMaxValuesPerExample = 1u << 20;

// dataset_info.json is a few kB; as sidecar.cc bounds it.
constexpr std::uint64_t kMaxInfoBytes = std::uint64_t{1} << 30;

std::string ChecksRelative() { return std::string(kSidecarDirName) + "/" + std::string(kChecksFileName); }

std::uint64_t ExampleBytes(std::uint32_t k) { return 8 + 8ULL * k; }

// Reads fields off a record, each read checked against the bytes left.
class Cursor {
 public:
  Cursor(const std::byte* p, std::size_t n) : p_(p), n_(n) {}
  bool Take(std::size_t bytes, const std::byte** out) {
    if (n_ - at_ < bytes) return false;
    *out = p_ + at_;
    at_ += bytes;
    return true;
  }
  bool U32(std::uint32_t* v) {
    const std::byte* q;
    if (!Take(4, &q)) return false;
    *v = LoadLe32(q);
    return true;
  }
  bool U64(std::uint64_t* v) {
    const std::byte* q;
    if (!Take(8, &q)) return false;
    *v = LoadLe64(q);
    return true;
  }
  std::size_t left() const { return n_ - at_; }
  std::size_t at() const { return at_; }

 private:
  const std::byte* p_;
  std::size_t n_;
  std::size_t at_ = 0;
};

Status Bad(std::size_t record, std::string_view what) {
  return Status::Corruption("checks record ", record, ": ", what);
}

// Parse the record at the cursor into `ref`, checking every count against the
// bytes left before it is used and every point and range against the sizes.
Status ParseRecord(Cursor& c, std::size_t index, const std::byte* base, ShardChecksRef* ref) {
  const std::size_t start = c.at();
  std::uint32_t path_len = 0;
  std::uint32_t points = 0, k = 0, examples = 0;
  const std::byte* path = nullptr;
  if (!c.U32(&path_len) || !c.Take(path_len, &path)) return Bad(index, "truncated path");
  if (path_len == 0) return Bad(index, "empty path");
  std::uint64_t stored_size = 0, stored_checksum = 0, decoded_size = 0;
  if (!c.U64(&stored_size) || !c.U64(&stored_checksum) || !c.U64(&decoded_size) || !c.U32(&points) ||
      !c.U32(&k) || !c.U32(&examples)) {
    return Bad(index, "truncated");
  }
  if (points > c.left() / kPointSize) return Bad(index, "more decode points than bytes");
  const std::byte* point_bytes = nullptr;
  (void)c.Take(std::size_t{points} * kPointSize, &point_bytes);
  std::uint64_t prev_c = 0, prev_d = 0;
  for (std::uint32_t i = 0; i < points; ++i) {
    const std::uint64_t co = LoadLe64(point_bytes + kPointSize * i);
    const std::uint64_t de = LoadLe64(point_bytes + kPointSize * i + 8);
    if (i == 0 && de != 0) return Bad(index, "first decode point not at decoded offset 0");
    if (i > 0 && (co <= prev_c || de <= prev_d)) return Bad(index, "decode points not ascending");
    if (co >= stored_size || (de >= decoded_size && decoded_size > 0)) {
      return Bad(index, "decode point outside the file");
    }
    prev_c = co;
    prev_d = de;
  }
  if (k > kMaxValuesPerExample) return Bad(index, "too many values per example");
  if ((k == 0) != (examples == 0)) return Bad(index, "examples without values (or values without examples)");
  if (examples > 0 && decoded_size > std::numeric_limits<std::uint32_t>::max()) {
    return Bad(index, "value ranges for a shard of 4 GiB or more");
  }
  if (examples > c.left() / ExampleBytes(k)) return Bad(index, "more examples than bytes");
  const std::byte* example_bytes = nullptr;
  (void)c.Take(static_cast<std::size_t>(examples * ExampleBytes(k)), &example_bytes);
  for (std::uint64_t e = 0; e < examples; ++e) {
    const std::byte* q = example_bytes + e * ExampleBytes(k) + 8;
    for (std::uint32_t j = 0; j < k; ++j) {
      const std::uint64_t off = LoadLe32(q + 8 * j);
      const std::uint64_t size = LoadLe32(q + 8 * j + 4);
      if (off + size > decoded_size) return Bad(index, "a value range lies past the decoded size");
    }
  }
  ChecksRecordFields::Set(ref, std::string_view(reinterpret_cast<const char*>(path), path_len), stored_size,
                          stored_checksum, decoded_size, points, examples, k, point_bytes, example_bytes,
                          std::span<const std::byte>(base + start, c.at() - start));
  return Status::OK();
}

void Warn(const WarnFn& warn, const std::string& message) {
  if (warn) {
    warn(message);
  } else {
    std::cerr << "sedpack: warning: " << message << "\n";
  }
}

}  // namespace

codecs_internal::DecodePoint ShardChecksRef::point(std::size_t i) const {
  return {LoadLe64(points_ + kPointSize * i), LoadLe64(points_ + kPointSize * i + 8)};
}

std::vector<codecs_internal::DecodePoint> ShardChecksRef::points() const {
  std::vector<codecs_internal::DecodePoint> out(num_points_);
  for (std::size_t i = 0; i < num_points_; ++i) out[i] = point(i);
  return out;
}

std::uint64_t ShardChecksRef::example_checksum(std::size_t example) const {
  return LoadLe64(examples_ + example * ExampleBytes(values_per_example_));
}

CheckedRange ShardChecksRef::value(std::size_t example, std::size_t attribute) const {
  const std::byte* q = examples_ + example * ExampleBytes(values_per_example_) + 8 + 8 * attribute;
  return {LoadLe32(q), LoadLe32(q + 4)};
}

ShardChecks ShardChecksRef::ToChecks() const {
  ShardChecks out;
  out.path = std::string(path_);
  out.stored_size = stored_size_;
  out.stored_checksum = stored_checksum_;
  out.decoded_size = decoded_size_;
  out.decode_points = points();
  out.values_per_example = values_per_example_;
  out.values.reserve(num_examples_ * values_per_example_);
  out.example_checksums.reserve(num_examples_);
  for (std::size_t e = 0; e < num_examples_; ++e) {
    out.example_checksums.push_back(example_checksum(e));
    for (std::size_t j = 0; j < values_per_example_; ++j) out.values.push_back(value(e, j));
  }
  return out;
}

Result<std::shared_ptr<const ChecksSidecar>> ChecksSidecar::Parse(std::vector<std::byte> bytes) {
  std::shared_ptr<ChecksSidecar> s(new ChecksSidecar());
  s->bytes_ = std::move(bytes);
  const std::byte* d = s->bytes_.data();
  const std::size_t size = s->bytes_.size();
  if (size < kHeaderSize + kTrailerSize) return Status::Corruption("checks sidecar too short (", size, " bytes)");
  if (std::memcmp(d, kMagic, 8) != 0) return Status::Corruption("not a sedpack-hpc checks sidecar (bad magic)");
  if (LoadLe32(d + 8) != kVersion) {
    return Status::Corruption("checks sidecar version ", LoadLe32(d + 8), " (this build reads ", kVersion, ")");
  }
  if (LoadLe32(d + 12) != 0) return Status::Corruption("checks sidecar: reserved field is not zero");
  if (LoadLe64(d + 16) != size) {
    return Status::Corruption("checks sidecar header says ", LoadLe64(d + 16), " bytes, the file has ", size);
  }
  const std::uint64_t sum = codecs_internal::FastChecksum(std::span<const std::byte>(d, size - kTrailerSize));
  if (sum != LoadLe64(d + size - kTrailerSize)) return Status::Corruption("checks sidecar checksum mismatch");
  std::memcpy(s->digest_.data(), d + 24, 32);
  const std::uint64_t count = LoadLe64(d + 56);
  if (count > (size - kHeaderSize) / kRecordFixed) return Status::Corruption("checks sidecar: too many records");
  s->records_.resize(static_cast<std::size_t>(count));
  Cursor c(d + kHeaderSize, size - kHeaderSize - kTrailerSize);
  for (std::size_t i = 0; i < count; ++i) {
    SEDPACK_RETURN_NOT_OK(ParseRecord(c, i, d + kHeaderSize, &s->records_[i]));
    if (i > 0 && !(s->records_[i - 1].path() < s->records_[i].path())) {
      return Bad(i, "paths not in ascending order");
    }
  }
  if (c.left() != 0) return Status::Corruption("checks sidecar: ", c.left(), " bytes after the last record");
  return std::shared_ptr<const ChecksSidecar>(std::move(s));
}

const ShardChecksRef* ChecksSidecar::Find(std::string_view path) const {
  auto it = std::lower_bound(records_.begin(), records_.end(), path,
                             [](const ShardChecksRef& r, std::string_view p) { return r.path() < p; });
  if (it == records_.end() || it->path() != path) return nullptr;
  return &*it;
}

Result<std::vector<std::byte>> EncodeShardChecks(const ShardChecks& c) {
  const std::uint64_t k = c.values_per_example;
  const std::uint64_t examples = c.example_checksums.size();
  if (c.path.empty() || c.path.size() > std::numeric_limits<std::uint32_t>::max()) {
    return Status::InvalidArgument("checks record: bad path length ", c.path.size());
  }
  if (k > kMaxValuesPerExample || c.values.size() != examples * k || (k == 0) != (examples == 0) ||
      examples > std::numeric_limits<std::uint32_t>::max() ||
      c.decode_points.size() > std::numeric_limits<std::uint32_t>::max()) {
    return Status::InvalidArgument("checks record ", c.path, ": inconsistent counts");
  }
  if (examples > 0 && c.decoded_size > std::numeric_limits<std::uint32_t>::max()) {
    return Status::InvalidArgument("checks record ", c.path, ": value ranges of a shard of 4 GiB or more");
  }
  for (const CheckedRange& r : c.values) {
    if (r.offset > c.decoded_size || r.size > c.decoded_size - r.offset) {
      return Status::InvalidArgument("checks record ", c.path, ": a value range past the decoded size");
    }
  }
  std::vector<std::byte> out;
  out.reserve(kRecordFixed + c.path.size() + kPointSize * c.decode_points.size() + examples * ExampleBytes(c.values_per_example));
  AppendLe(c.path.size(), 4, &out);
  const auto* p = reinterpret_cast<const std::byte*>(c.path.data());
  out.insert(out.end(), p, p + c.path.size());
  AppendLe(c.stored_size, 8, &out);
  AppendLe(c.stored_checksum, 8, &out);
  AppendLe(c.decoded_size, 8, &out);
  AppendLe(c.decode_points.size(), 4, &out);
  AppendLe(k, 4, &out);
  AppendLe(examples, 4, &out);
  for (const auto& pt : c.decode_points) {
    AppendLe(pt.compressed_offset, 8, &out);
    AppendLe(pt.decoded_offset, 8, &out);
  }
  for (std::uint64_t e = 0; e < examples; ++e) {
    AppendLe(c.example_checksums[e], 8, &out);
    for (std::uint64_t j = 0; j < k; ++j) {
      AppendLe(c.values[e * k + j].offset, 4, &out);
      AppendLe(c.values[e * k + j].size, 4, &out);
    }
  }
  return out;
}

Result<std::vector<ShardChecks>> DecodeShardChecksList(std::span<const std::byte> bytes) {
  std::vector<ShardChecks> out;
  Cursor c(bytes.data(), bytes.size());
  while (c.left() > 0) {
    ShardChecksRef ref;
    SEDPACK_RETURN_NOT_OK(ParseRecord(c, out.size(), bytes.data(), &ref));
    out.push_back(ref.ToChecks());
  }
  return out;
}

std::vector<std::byte> EncodeChecksHeader(const DatasetInfoDigest& digest, std::uint64_t records,
                                          std::uint64_t record_bytes) {
  std::vector<std::byte> out;
  out.reserve(kHeaderSize);
  out.insert(out.end(), reinterpret_cast<const std::byte*>(kMagic), reinterpret_cast<const std::byte*>(kMagic) + 8);
  AppendLe(kVersion, 4, &out);
  AppendLe(0, 4, &out);
  AppendLe(kHeaderSize + record_bytes + kTrailerSize, 8, &out);
  out.insert(out.end(), digest.begin(), digest.end());
  AppendLe(records, 8, &out);
  return out;
}

std::string ChecksFileRelative() { return ChecksRelative(); }

std::vector<std::byte> EncodeChecksFile(const DatasetInfoDigest& digest,
                                        std::vector<std::span<const std::byte>> records) {
  auto path_of = [](std::span<const std::byte> r) {
    return std::string_view(reinterpret_cast<const char*>(r.data()) + 4, LoadLe32(r.data()));
  };
  // Stable: of equal paths the later record stays last, and is the one kept.
  std::stable_sort(records.begin(), records.end(),
                   [&](auto a, auto b) { return path_of(a) < path_of(b); });
  std::vector<std::span<const std::byte>> kept;
  kept.reserve(records.size());
  for (std::size_t i = 0; i < records.size(); ++i) {
    if (i + 1 < records.size() && path_of(records[i]) == path_of(records[i + 1])) continue;
    kept.push_back(records[i]);
  }
  std::uint64_t bytes = 0;
  for (auto r : kept) bytes += r.size();
  std::vector<std::byte> out = EncodeChecksHeader(digest, kept.size(), bytes);
  out.reserve(static_cast<std::size_t>(kHeaderSize + bytes + kTrailerSize));
  for (auto r : kept) out.insert(out.end(), r.begin(), r.end());
  AppendLe(codecs_internal::FastChecksum(out), 8, &out);
  return out;
}

Result<DatasetInfoDigest> InfoDigest(const std::string& root, FileSystem* fs) {
  SEDPACK_ASSIGN_OR_RETURN(std::vector<std::byte> bytes, ReadFileBytesBeneath(root, "dataset_info.json", kMaxInfoBytes, fs));
  return Sha256Of(bytes);
}

std::shared_ptr<const ChecksSidecar> LoadChecksFor(const std::string& root, const DatasetInfoDigest& expected,
                                                   const WarnFn& warn, FileSystem* fs) {
  const std::string where = SidecarPath(root, kChecksFileName);
  if (!PathExists(where, fs)) return nullptr;
  auto bytes = ReadFileBytesBeneath(root, ChecksRelative(), kMaxChecksBytes, fs);
  if (!bytes.ok()) {
    if (bytes.status().code() != StatusCode::kNotFound) {
      Warn(warn, where + " is unreadable (" + bytes.status().message() + "); reads check the recorded hashes");
    }
    return nullptr;
  }
  auto parsed = ChecksSidecar::Parse(std::move(bytes).value());
  if (!parsed.ok()) {
    Warn(warn, where + " is damaged (" + parsed.status().message() + "); ignoring it, reads check the recorded hashes");
    return nullptr;
  }
  if ((*parsed)->digest() != expected) {
    Warn(warn, where + " is stale (made for dataset_info.json sha256 " + DigestHex((*parsed)->digest()) +
                   ", which is now " + DigestHex(expected) + "); ignoring it, reads check the recorded hashes");
    return nullptr;
  }
  return std::move(parsed).value();
}

std::shared_ptr<const ChecksSidecar> LoadFreshChecks(const std::string& root, const WarnFn& warn, FileSystem* fs) {
  auto digest = InfoDigest(root, fs);
  if (!digest.ok()) return nullptr;
  return LoadChecksFor(root, *digest, warn, fs);
}

Status WriteChecks(const std::string& root, const DatasetInfoDigest& digest, const ChecksSidecar* carried,
                   const std::vector<ShardChecks>& records, FileSystem* fs) {
  std::vector<std::vector<std::byte>> encoded;
  encoded.reserve(records.size());
  for (const ShardChecks& r : records) {
    SEDPACK_ASSIGN_OR_RETURN(std::vector<std::byte> e, EncodeShardChecks(r));
    encoded.push_back(std::move(e));
  }
  std::vector<std::span<const std::byte>> all;
  all.reserve((carried ? carried->size() : 0) + encoded.size());
  if (carried) {
    for (std::size_t i = 0; i < carried->size(); ++i) all.push_back(carried->record(i).encoded());
  }
  for (const auto& e : encoded) all.push_back(e);
  // As WriteSidecar, through `fs`.
  SEDPACK_RETURN_NOT_OK(CheckStaysBeneath(root, ChecksRelative(), fs));
  SEDPACK_RETURN_NOT_OK(CreateDirectories(SidecarDir(root), fs));
  AtomicWriteOptions options;
  options.file_system = fs;
  return WriteFileAtomic(SidecarPath(root, kChecksFileName), EncodeChecksFile(digest, std::move(all)), options);
}

}  // namespace sedpack::sidecar_internal
