// SPDX-License-Identifier: Apache-2.0
#include "sidecar/checks_internal.h"

#include <algorithm>
#include <cstring>
#include <iostream>
#include <limits>
#include <optional>
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
class FieldReader {
 public:
  FieldReader(const std::byte* p, std::size_t n) : p_(p), n_(n) {}
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
Status ParseRecord(FieldReader& c, std::size_t index, const std::byte* base, ShardChecksRef* ref) {
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

// How much of the file the validating pass reads at a time.
constexpr std::size_t kReadChunk = std::size_t{1} << 20;

ChecksSidecar::~ChecksSidecar() = default;

Result<std::shared_ptr<const ChecksSidecar>> ChecksSidecar::Parse(std::vector<std::byte> bytes) {
  std::shared_ptr<ChecksSidecar> s(new ChecksSidecar());
  s->file_size_ = bytes.size();
  s->bytes_ = std::move(bytes);
  s->path_ = "checks sidecar";
  SEDPACK_RETURN_NOT_OK(s->Validate());
  return std::shared_ptr<const ChecksSidecar>(std::move(s));
}

Result<std::shared_ptr<const ChecksSidecar>> ChecksSidecar::Open(FileDescriptor fd, std::uint64_t size,
                                                                 std::string path, FileSystem* fs) {
  std::shared_ptr<ChecksSidecar> s(new ChecksSidecar());
  s->fd_ = std::move(fd);
  s->fs_ = fs;
  s->file_size_ = size;
  s->path_ = std::move(path);
  SEDPACK_RETURN_NOT_OK(s->Validate());
  return std::shared_ptr<const ChecksSidecar>(std::move(s));
}

Status ChecksSidecar::ReadAt(std::uint64_t offset, std::span<std::byte> out) const {
  if (offset > file_size_ || out.size() > file_size_ - offset) {
    return Status::Corruption(path_, ": a read past its end");
  }
  if (!fd_.valid()) {
    if (!out.empty()) std::memcpy(out.data(), bytes_.data() + offset, out.size());
    return Status::OK();
  }
  return ReadFully(fd_.get(), out, path_, offset, fs_);
}

// One pass over the file: the header, then the records as they arrive in a
// buffer of a chunk (or of one record, if larger), each sized from its fixed
// fields - every count checked against the bytes left - then parsed in full.
// The blocks' bounds and checksums are noted on the way.
Status ChecksSidecar::Validate() {
  const std::uint64_t size = file_size_;
  if (size < kHeaderSize + kTrailerSize) return Status::Corruption("checks sidecar too short (", size, " bytes)");
  std::byte h[kHeaderSize];
  SEDPACK_RETURN_NOT_OK(ReadAt(0, h));
  if (std::memcmp(h, kMagic, 8) != 0) return Status::Corruption("not a sedpack-hpc checks sidecar (bad magic)");
  if (LoadLe32(h + 8) != kVersion) {
    return Status::Corruption("checks sidecar version ", LoadLe32(h + 8), " (this build reads ", kVersion, ")");
  }
  if (LoadLe32(h + 12) != 0) return Status::Corruption("checks sidecar: reserved field is not zero");
  if (LoadLe64(h + 16) != size) {
    return Status::Corruption("checks sidecar header says ", LoadLe64(h + 16), " bytes, the file has ", size);
  }
  std::memcpy(digest_.data(), h + 24, 32);
  const std::uint64_t count = LoadLe64(h + 56);
  const std::uint64_t end = size - kTrailerSize;  // of the records
  codecs_internal::FastChecksummer sum;
  sum.Update(h);
  // buf holds the file's bytes [buf_at, buf_at + buf.size()); pos of them are used.
  std::vector<std::byte> buf;
  std::uint64_t buf_at = kHeaderSize;
  std::size_t pos = 0;
  auto ensure = [&](std::uint64_t need) -> Status {  // need <= the bytes left: the callers check
    if (buf.size() - pos >= need) return Status::OK();
    buf.erase(buf.begin(), buf.begin() + static_cast<std::ptrdiff_t>(pos));
    buf_at += pos;
    pos = 0;
    const std::uint64_t have_end = buf_at + buf.size();
    const std::uint64_t more = std::min<std::uint64_t>(std::max<std::uint64_t>(need - buf.size(), kReadChunk),
                                                       end - have_end);
    const std::size_t old = buf.size();
    buf.resize(old + static_cast<std::size_t>(more));
    const std::span<std::byte> fresh(buf.data() + old, static_cast<std::size_t>(more));
    SEDPACK_RETURN_NOT_OK(ReadAt(have_end, fresh));
    sum.Update(fresh);
    return Status::OK();
  };
  // A damaged file is reported as one when its checksum says so, whatever the
  // record that first looked wrong.
  auto fail = [&](Status problem) -> Status {
    std::uint64_t at = buf_at + buf.size();
    std::vector<std::byte> rest(std::min<std::uint64_t>(kReadChunk, end - at));
    while (at < end) {
      const std::span<std::byte> piece(rest.data(), static_cast<std::size_t>(std::min<std::uint64_t>(rest.size(), end - at)));
      if (!ReadAt(at, piece).ok()) return problem;
      sum.Update(piece);
      at += piece.size();
    }
    std::byte trailer[kTrailerSize];
    if (ReadAt(end, trailer).ok() && sum.Digest() != LoadLe64(trailer)) {
      return Status::Corruption("checks sidecar checksum mismatch");
    }
    return problem;
  };
  if (count > (size - kHeaderSize) / kRecordFixed) return fail(Status::Corruption("checks sidecar: too many records"));
  std::string last;
  BlockInfo block;
  std::optional<codecs_internal::FastChecksummer> block_sum;
  block_sum.emplace();
  auto close_block = [&] {
    block.checksum = block_sum->Digest();
    blocks_.push_back(std::move(block));
    block = BlockInfo();
    block_sum.emplace();
  };
  for (std::size_t i = 0; i < count; ++i) {
    const std::uint64_t left = end - (buf_at + pos);
    if (left < 4) return fail(Bad(i, "truncated path"));
    SEDPACK_RETURN_NOT_OK(ensure(4));
    const std::uint64_t path_len = LoadLe32(buf.data() + pos);
    const std::uint64_t fixed = kRecordFixed + path_len;
    if (left < fixed) return fail(Bad(i, path_len > left - 4 ? "truncated path" : "truncated"));
    SEDPACK_RETURN_NOT_OK(ensure(fixed));
    const std::byte* f = buf.data() + pos + 4 + path_len + 24;
    const std::uint64_t points = LoadLe32(f), k = LoadLe32(f + 4), examples = LoadLe32(f + 8);
    if (points > (left - fixed) / kPointSize) return fail(Bad(i, "more decode points than bytes"));
    if (k > kMaxValuesPerExample) return fail(Bad(i, "too many values per example"));
    const std::uint64_t with_points = fixed + points * kPointSize;
    if (examples > (left - with_points) / ExampleBytes(static_cast<std::uint32_t>(k))) {
      return fail(Bad(i, "more examples than bytes"));
    }
    const std::uint64_t length = with_points + examples * ExampleBytes(static_cast<std::uint32_t>(k));
    SEDPACK_RETURN_NOT_OK(ensure(length));
    FieldReader c(buf.data() + pos, static_cast<std::size_t>(length));
    ShardChecksRef ref;
    if (Status st = ParseRecord(c, i, buf.data() + pos, &ref); !st.ok()) return fail(std::move(st));
    if (i > 0 && !(last < ref.path())) return fail(Bad(i, "paths not in ascending order"));
    last.assign(ref.path());
    if (block.records == 0) {
      block.first_path = last;
      block.offset = buf_at + pos;
    }
    block_sum->Update(ref.encoded());
    block.size += length;
    ++block.records;
    if (block.size >= kBlockBytes) close_block();
    pos += static_cast<std::size_t>(length);
  }
  if (block.records > 0) close_block();
  if (buf_at + pos != end) {
    return fail(Status::Corruption("checks sidecar: ", end - (buf_at + pos), " bytes after the last record"));
  }
  std::byte trailer[kTrailerSize];
  SEDPACK_RETURN_NOT_OK(ReadAt(end, trailer));
  if (sum.Digest() != LoadLe64(trailer)) return Status::Corruption("checks sidecar checksum mismatch");
  count_ = static_cast<std::size_t>(count);
  return Status::OK();
}

Result<std::shared_ptr<const ChecksSidecar::Cursor::Block>> ChecksSidecar::LoadBlock(std::size_t b) const {
  const BlockInfo& info = blocks_[b];
  auto block = std::make_shared<Cursor::Block>();
  block->bytes.resize(static_cast<std::size_t>(info.size));
  SEDPACK_RETURN_NOT_OK(ReadAt(info.offset, block->bytes));
  if (codecs_internal::FastChecksum(block->bytes) != info.checksum) {
    return Status::Corruption(path_, " changed since it was validated (records at byte ", info.offset, ")");
  }
  block->records.resize(info.records);
  FieldReader c(block->bytes.data(), block->bytes.size());
  for (std::size_t i = 0; i < info.records; ++i) {
    SEDPACK_RETURN_NOT_OK(ParseRecord(c, i, block->bytes.data(), &block->records[i]));
  }
  return std::shared_ptr<const Cursor::Block>(std::move(block));
}

ShardChecksPtr ChecksSidecar::Find(std::string_view path) const {
  // The last block whose first path is not after `path`.
  auto it = std::upper_bound(blocks_.begin(), blocks_.end(), path,
                             [](std::string_view p, const BlockInfo& b) { return p < b.first_path; });
  if (it == blocks_.begin()) return nullptr;
  const std::size_t b = static_cast<std::size_t>(it - blocks_.begin()) - 1;
  std::shared_ptr<const Cursor::Block> block;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (std::size_t i = 0; i < cache_.size(); ++i) {
      if (cache_[i].first != b) continue;
      block = cache_[i].second;
      std::rotate(cache_.begin(), cache_.begin() + static_cast<std::ptrdiff_t>(i),
                  cache_.begin() + static_cast<std::ptrdiff_t>(i) + 1);
      break;
    }
  }
  if (!block) {
    auto loaded = LoadBlock(b);
    if (!loaded.ok()) return nullptr;
    block = std::move(loaded).value();
    std::lock_guard<std::mutex> lock(mu_);
    cache_.insert(cache_.begin(), {b, block});
    if (cache_.size() > kCachedBlocks) cache_.pop_back();
  }
  const auto& records = block->records;
  auto r = std::lower_bound(records.begin(), records.end(), path,
                            [](const ShardChecksRef& x, std::string_view p) { return x.path() < p; });
  if (r == records.end() || r->path() != path) return nullptr;
  return ShardChecksPtr(block, &*r);
}

bool ChecksSidecar::Cursor::Next() {
  if (!status_.ok()) return false;
  if (block_ && at_ + 1 < block_->records.size()) {
    ++at_;
    return true;
  }
  if (next_block_ >= sidecar_->blocks_.size()) {
    block_.reset();
    return false;
  }
  auto loaded = sidecar_->LoadBlock(next_block_++);
  if (!loaded.ok()) {
    status_ = loaded.status();
    block_.reset();
    return false;
  }
  block_ = std::move(loaded).value();
  at_ = 0;
  return true;
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
  FieldReader c(bytes.data(), bytes.size());
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
  auto file = OpenFileBeneath(root, ChecksRelative(), fs);
  if (!file.ok()) {
    if (file.status().code() != StatusCode::kNotFound) {
      Warn(warn, where + " is unreadable (" + file.status().message() + "); reads check the recorded hashes");
    }
    return nullptr;
  }
  if (file->size > kMaxChecksBytes) {
    Warn(warn, where + " is damaged (" + std::to_string(file->size) +
                   " bytes, more than a checks sidecar has); ignoring it, reads check the recorded hashes");
    return nullptr;
  }
  auto parsed = ChecksSidecar::Open(std::move(file->fd), file->size, file->path, fs);
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
  // The carried records first, so that a new record of the same path wins.
  std::vector<std::vector<std::byte>> kept;
  if (carried) {
    kept.reserve(carried->size());
    for (auto c = carried->Records(); c.Next();) {
      const auto e = c.record().encoded();
      kept.emplace_back(e.begin(), e.end());
    }
  }
  std::vector<std::span<const std::byte>> all;
  all.reserve(kept.size() + encoded.size());
  for (const auto& e : kept) all.push_back(e);
  for (const auto& e : encoded) all.push_back(e);
  // As WriteSidecar, through `fs`.
  SEDPACK_RETURN_NOT_OK(CheckStaysBeneath(root, ChecksRelative(), fs));
  SEDPACK_RETURN_NOT_OK(CreateDirectories(SidecarDir(root), fs));
  AtomicWriteOptions options;
  options.file_system = fs;
  return WriteFileAtomic(SidecarPath(root, kChecksFileName), EncodeChecksFile(digest, std::move(all)), options);
}

}  // namespace sedpack::sidecar_internal
