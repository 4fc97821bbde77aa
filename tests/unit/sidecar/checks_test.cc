// SPDX-License-Identifier: Apache-2.0
// The checks sidecar's byte form: records round-trip, and anything damaged or
// hostile (even with a valid file checksum) is refused cleanly.
#include <cstdio>
#include <cstring>
#include <fstream>

#include "codecs/decode_points_internal.h"
#include "core/endian_internal.h"
#include "sedpack/io/file.h"
#include "sidecar/checks_internal.h"
#include "support/test_support.h"

namespace sedpack {
namespace {

using sidecar_internal::ChecksSidecar;
using sidecar_internal::ShardChecks;
using testing::TempDir;

ShardChecks Record(const std::string& path, std::uint32_t examples) {
  ShardChecks c;
  c.path = path;
  c.stored_size = 1000;
  c.stored_checksum = 0x1234;
  c.decoded_size = examples ? 4000 : 1000;
  if (examples) c.decode_points = {{0, 0}, {500, 2000}};
  c.values_per_example = examples ? 2 : 0;
  for (std::uint32_t e = 0; e < examples; ++e) {
    c.example_checksums.push_back(e * 77 + 1);
    c.values.push_back({100u * e, 40});
    c.values.push_back({100u * e + 48, 8});
  }
  return c;
}

std::vector<std::byte> File(const std::vector<ShardChecks>& records) {
  std::vector<std::vector<std::byte>> encoded;
  for (const auto& r : records) encoded.push_back(*sidecar_internal::EncodeShardChecks(r));
  std::vector<std::span<const std::byte>> spans(encoded.begin(), encoded.end());
  return sidecar_internal::EncodeChecksFile(DatasetInfoDigest{std::byte{7}}, std::move(spans));
}

// Re-stamp the trailing checksum, as a hostile writer would.
void Restamp(std::vector<std::byte>* bytes) {
  const std::size_t n = bytes->size() - 8;
  const std::uint64_t sum = codecs_internal::FastChecksum(std::span<const std::byte>(bytes->data(), n));
  for (int i = 0; i < 8; ++i) (*bytes)[n + i] = static_cast<std::byte>(sum >> (8 * i));
}

TEST(ChecksFileTest, RecordsRoundTripSortedAndFoundByPath) {
  const std::vector<ShardChecks> records = {Record("train/b.fb", 3), Record("train/a.npz", 0), Record("test/c.fb", 1)};
  const std::vector<std::byte> bytes = File(records);
  // 64-byte header, 8-byte trailer; per shard 40 + path + 16 per point, per example 8 + 8 per value.
  EXPECT_EQ(bytes.size(), 64 + 8 + (40 + 10 + 32 + 3 * 24) + (40 + 11) + (40 + 9 + 32 + 24));
  ASSERT_OK_AND_ASSIGN(auto parsed, ChecksSidecar::Parse(bytes));
  ASSERT_EQ(parsed->size(), 3u);
  auto first = parsed->Records();
  ASSERT_TRUE(first.Next());
  EXPECT_EQ(first.record().path(), "test/c.fb");
  for (const ShardChecks& r : records) {
    const auto found = parsed->Find(r.path);
    ASSERT_NE(found, nullptr) << r.path;
    EXPECT_EQ(found->ToChecks(), r);
  }
  EXPECT_EQ(parsed->Find("train/zz.fb"), nullptr);
  EXPECT_EQ(parsed->Find(""), nullptr);
  // A later record of the same path replaces the earlier one.
  ShardChecks newer = Record("train/b.fb", 1);
  ASSERT_OK_AND_ASSIGN(auto replaced, ChecksSidecar::Parse(File({records[0], newer})));
  ASSERT_EQ(replaced->size(), 1u);
  ASSERT_NE(replaced->Find("train/b.fb"), nullptr);
  EXPECT_EQ(replaced->Find("train/b.fb")->ToChecks(), newer);
  // The records concatenated (as ranks send them) decode the same.
  std::vector<std::byte> wire;
  for (const auto& r : records) {
    auto e = *sidecar_internal::EncodeShardChecks(r);
    wire.insert(wire.end(), e.begin(), e.end());
  }
  ASSERT_OK_AND_ASSIGN(auto decoded, sidecar_internal::DecodeShardChecksList(wire));
  EXPECT_EQ(decoded, records);
}

TEST(ChecksFileTest, EveryFlippedBitAndEveryTruncationIsRefused) {
  const std::vector<std::byte> bytes = File({Record("train/a.fb", 2), Record("train/b.fb", 1)});
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    std::vector<std::byte> bad = bytes;
    bad[i] ^= std::byte{0x08};
    EXPECT_EQ(ChecksSidecar::Parse(bad).status().code(), StatusCode::kCorruption) << i;
    std::vector<std::byte> cut(bytes.begin(), bytes.begin() + static_cast<long>(i));
    EXPECT_FALSE(ChecksSidecar::Parse(cut).ok()) << i;
  }
}

// Hostile fields under a valid file checksum: counts larger than the file,
// ranges past the decoded size, unsorted paths, points out of order.
TEST(ChecksFileTest, HostileRecordsWithAValidChecksumAreRefused) {
  const std::vector<std::byte> good = File({Record("train/a.fb", 2)});
  ASSERT_OK(ChecksSidecar::Parse(good).status());
  // Record layout from offset 64: u32 path length, path (10), stored, checksum,
  // decoded (u64 each), points, values per example, examples (u32 each).
  const std::size_t path_len = 64, decoded = 64 + 4 + 10 + 16, points = decoded + 8, k = points + 4,
                    examples = k + 4, first_point = examples + 4, first_range = first_point + 32 + 8;
  struct Case {
    const char* what;
    std::size_t at;
    std::uint64_t value;
    int bytes;
  };
  const Case cases[] = {
      {"path length past the file", path_len, 0xFFFFFFF0u, 4},
      {"decode points past the file", points, 0x7FFFFFFFu, 4},
      {"examples past the file", examples, 0x7FFFFFFFu, 4},
      {"values per example huge", k, 0xFFFFFFFFu, 4},
      {"examples without values", k, 0, 4},
      {"decoded size below a range", decoded, 50, 8},
      {"first point not at 0", first_point + 8, 5, 8},
      {"a range past the decoded size", first_range, 3999, 4},
      {"record count too large", 56, 1000, 8},
  };
  for (const Case& c : cases) {
    std::vector<std::byte> bad = good;
    for (int i = 0; i < c.bytes; ++i) bad[c.at + i] = static_cast<std::byte>(c.value >> (8 * i));
    Restamp(&bad);
    auto parsed = ChecksSidecar::Parse(bad);
    EXPECT_EQ(parsed.status().code(), StatusCode::kCorruption) << c.what;
  }
  // Paths out of order.
  std::vector<std::byte> swapped = File({Record("train/a.fb", 0), Record("train/b.fb", 0)});
  swapped[64 + 4 + 6] = std::byte{'c'};  // train/a.fb -> train/c.fb, now after b.fb
  Restamp(&swapped);
  EXPECT_EQ(ChecksSidecar::Parse(swapped).status().code(), StatusCode::kCorruption);
  // Encoding refuses what the file could not hold.
  ShardChecks bad = Record("train/a.fb", 2);
  bad.values[1].size = 4000;
  EXPECT_FALSE(sidecar_internal::EncodeShardChecks(bad).ok());
  bad = Record("train/a.fb", 2);
  bad.values.pop_back();
  EXPECT_FALSE(sidecar_internal::EncodeShardChecks(bad).ok());
}

// Many blocks, read from the file: every record is found and visited in order,
// while the reader holds a few blocks, never the file.
TEST(ChecksFileTest, AFileOfManyBlocksIsReadABlockAtATime) {
  TempDir tmp;
  std::vector<ShardChecks> records;
  for (int i = 0; i < 3000; ++i) {
    char name[32];
    std::snprintf(name, sizeof(name), "train/s%05d.fb", i);
    records.push_back(Record(name, static_cast<std::uint32_t>(i % 3)));
  }
  const std::vector<std::byte> bytes = File(records);
  ASSERT_GT(bytes.size(), 15 * ChecksSidecar::kBlockBytes);
  const std::string root = tmp.path();
  ASSERT_OK(CreateDirectories(root + "/.sedpack-hpc"));
  ASSERT_OK(WriteFileAtomic(root + "/.sedpack-hpc/checks.bin", bytes));
  std::vector<std::string> warnings;
  auto checks = sidecar_internal::LoadChecksFor(root, DatasetInfoDigest{std::byte{7}},
                                                [&](const std::string& w) { warnings.push_back(w); });
  ASSERT_NE(checks, nullptr) << (warnings.empty() ? "" : warnings[0]);
  ASSERT_EQ(checks->size(), records.size());
  for (std::size_t i = 0; i < records.size(); i += 7) {
    const auto found = checks->Find(records[i].path);
    ASSERT_NE(found, nullptr) << records[i].path;
    EXPECT_EQ(found->ToChecks(), records[i]);
  }
  EXPECT_EQ(checks->Find("train/s00000.fa"), nullptr);  // before the first
  EXPECT_EQ(checks->Find("train/s01500.fc"), nullptr);  // between two
  EXPECT_EQ(checks->Find("train/zz.fb"), nullptr);      // after the last
  std::size_t n = 0;
  auto c = checks->Records();
  while (c.Next()) {
    ASSERT_LT(n, records.size());
    EXPECT_EQ(c.record().path(), records[n].path);
    ++n;
  }
  ASSERT_OK(c.status());
  EXPECT_EQ(n, records.size());
  EXPECT_TRUE(warnings.empty());
}

// The file changes after it was validated: a sidecar replaced by a new one
// (an atomic rename) is still read as validated, through the descriptor
// opened then; bytes changed in place are never trusted (no record is found
// in a changed block, and a walk over the records fails).
TEST(ChecksFileTest, AFileChangedAfterValidationIsNeverMixedIn) {
  TempDir tmp;
  std::vector<ShardChecks> records;
  for (int i = 0; i < 2000; ++i) records.push_back(Record("train/s" + std::to_string(10000 + i) + ".fb", 1));
  const std::string root = tmp.path(), file = root + "/.sedpack-hpc/checks.bin";
  ASSERT_OK(CreateDirectories(root + "/.sedpack-hpc"));
  ASSERT_OK(WriteFileAtomic(file, File(records)));
  const DatasetInfoDigest digest{std::byte{7}};
  auto checks = sidecar_internal::LoadChecksFor(root, digest, nullptr);
  ASSERT_NE(checks, nullptr);
  std::vector<ShardChecks> other = records;
  for (auto& r : other) r.stored_checksum = 0x9999;
  ASSERT_OK(WriteFileAtomic(file, File(other)));
  for (std::size_t i = 0; i < records.size(); i += 101) {
    const auto found = checks->Find(records[i].path);
    ASSERT_NE(found, nullptr);
    EXPECT_EQ(found->stored_checksum(), 0x1234u);
  }
  // In place: one byte of a record in the middle.
  auto in_place = sidecar_internal::LoadChecksFor(root, digest, nullptr);
  ASSERT_NE(in_place, nullptr);
  {
    std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(File(other).size() / 2));
    f.put('\x5a');
  }
  std::size_t missing = 0;
  for (const auto& r : other) {
    const auto found = in_place->Find(r.path);
    if (!found) {
      ++missing;
    } else {
      EXPECT_EQ(found->stored_checksum(), 0x9999u);
    }
  }
  EXPECT_GT(missing, 0u);
  EXPECT_LT(missing, 200u);  // one block's records, not the file's
  auto c = in_place->Records();
  while (c.Next()) {
  }
  EXPECT_EQ(c.status().code(), StatusCode::kCorruption);
}

}  // namespace
}  // namespace sedpack
