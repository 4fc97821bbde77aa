// SPDX-License-Identifier: Apache-2.0
// The checks sidecar's byte form: records round-trip, and anything damaged or
// hostile (even with a valid file checksum) is refused cleanly.
#include <cstring>

#include "codecs/decode_points_internal.h"
#include "core/endian_internal.h"
#include "sidecar/checks_internal.h"
#include "support/test_support.h"

namespace sedpack {
namespace {

using sidecar_internal::ChecksSidecar;
using sidecar_internal::ShardChecks;

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
  EXPECT_EQ(parsed->record(0).path(), "test/c.fb");
  for (const ShardChecks& r : records) {
    const auto* found = parsed->Find(r.path);
    ASSERT_NE(found, nullptr) << r.path;
    EXPECT_EQ(found->ToChecks(), r);
  }
  EXPECT_EQ(parsed->Find("train/zz.fb"), nullptr);
  EXPECT_EQ(parsed->Find(""), nullptr);
  // A later record of the same path replaces the earlier one.
  ShardChecks newer = Record("train/b.fb", 1);
  ASSERT_OK_AND_ASSIGN(auto replaced, ChecksSidecar::Parse(File({records[0], newer})));
  ASSERT_EQ(replaced->size(), 1u);
  EXPECT_EQ(replaced->record(0).ToChecks(), newer);
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

}  // namespace
}  // namespace sedpack
