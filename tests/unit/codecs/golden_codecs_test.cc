// SPDX-License-Identifier: Apache-2.0
// Codecs and hashes against files written by the reference Python sedpack.
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "codecs_test_util.h"
#include "sedpack/codecs/compress.h"
#include "sedpack/codecs/hash.h"
#include "support/test_support.h"

namespace sedpack {
namespace {

using ::sedpack::testing::GoldenDir;
using ::sedpack::testing::ReadFileBytes;
using Bytes = std::vector<std::byte>;
using nlohmann::json;

json LoadExpected(const std::string& fixture) {
  std::ifstream f(GoldenDir() + "/" + fixture + "/expected.json");
  EXPECT_TRUE(f.good()) << "cannot open expected.json of " << fixture << " under " << GoldenDir();
  if (!f.good()) return json::object();
  return json::parse(f);
}

std::string DatasetPath(const std::string& fixture, const std::string& relative) {
  return GoldenDir() + "/" + fixture + "/dataset/" + relative;
}

// `holder`: an object with a "hash_checksum_algorithms" array.
std::vector<HashAlgorithm> Algorithms(const json& holder) {
  std::vector<HashAlgorithm> algs;
  for (const auto& name : holder.at("hash_checksum_algorithms")) {
    auto a = ParseHashAlgorithm(name.get<std::string>());
    EXPECT_TRUE(a.ok()) << a.status().ToString();
    if (a.ok()) algs.push_back(*a);
  }
  return algs;
}

std::vector<std::string> Strings(const json& array) {
  std::vector<std::string> out;
  for (const auto& s : array) out.push_back(s.get<std::string>());
  return out;
}

std::string Sha256(std::span<const std::byte> data) {
  const HashAlgorithm algs[] = {HashAlgorithm::kSha256};
  auto r = HashBytes(algs, data);
  return r.ok() ? r->at(0) : r.status().ToString();
}

// ---- Decompression of every fb shard ----------------------------------------

class GoldenShardTest : public ::testing::TestWithParam<std::string> {};
INSTANTIATE_TEST_SUITE_P(Fixtures, GoldenShardTest,
                         ::testing::Values("fb_none", "fb_gzip", "fb_zlib", "fb_bz2", "fb_lzma",
                                           "fb_lz4", "fb_zstd", "fb_multiprocessing",
                                           "fb_continue"));

TEST_P(GoldenShardTest, DecompressEveryShard) {
  const json expected = LoadExpected(GetParam());
  ASSERT_TRUE(expected.contains("splits"));
  ASSERT_OK_AND_ASSIGN(const Compression compression,
                       ParseCompression(expected.at("compression").get<std::string>()));
  ASSERT_OK_AND_ASSIGN(auto codec, MakeCodec(compression));
  int shards = 0;
  for (const auto& [split, info] : expected.at("splits").items()) {
    for (const auto& shard : info.at("shards")) {
      const std::string rel = shard.at("file_path").get<std::string>();
      SCOPED_TRACE(rel);
      const Bytes file = ReadFileBytes(DatasetPath(GetParam(), rel));
      ASSERT_EQ(file.size(), shard.at("file_size").get<std::size_t>());
      const auto size = shard.at("decompressed_size").get<std::size_t>();
      Bytes out;
      ASSERT_OK(codec->Decompress(file, kDefaultMaxDecompressedBytes, &out));
      EXPECT_EQ(out.size(), size);
      EXPECT_EQ(Sha256(out), shard.at("decompressed_sha256").get<std::string>());
      // The cap is exact: the decompressed size passes, one byte less does not.
      ASSERT_OK(codec->Decompress(file, size, &out));
      EXPECT_EQ(codec->Decompress(file, size - 1, &out).code(), StatusCode::kResourceExhausted);
      ++shards;
    }
  }
  EXPECT_GE(shards, 8);
}

// The single-filler fixtures hold the same shards; their i-th shard decodes to
// the bytes of fb_none's i-th shard file.
TEST(GoldenShardTest, SameFlatBuffersAsUncompressedFixture) {
  const json none = LoadExpected("fb_none");
  for (const char* fixture : {"fb_gzip", "fb_zlib", "fb_bz2", "fb_lzma", "fb_lz4", "fb_zstd"}) {
    SCOPED_TRACE(fixture);
    const json expected = LoadExpected(fixture);
    ASSERT_OK_AND_ASSIGN(const Compression compression,
                         ParseCompression(expected.at("compression").get<std::string>()));
    const bool deflate = compression == Compression::kGzip || compression == Compression::kZlib;
    ASSERT_OK_AND_ASSIGN(auto codec,
                         MakeCodec(compression, CodecOptions{deflate ? 9 : kDefaultCodecLevel, 1, 0}));
    for (const auto& [split, info] : expected.at("splits").items()) {
      const auto& shards = info.at("shards");
      const auto& plain = none.at("splits").at(split).at("shards");
      ASSERT_EQ(shards.size(), plain.size());
      for (std::size_t i = 0; i < shards.size(); ++i) {
        Bytes out;
        ASSERT_OK(codec->Decompress(
            ReadFileBytes(DatasetPath(fixture, shards[i].at("file_path").get<std::string>())),
            kDefaultMaxDecompressedBytes, &out));
        EXPECT_TRUE(out == ReadFileBytes(
                               DatasetPath("fb_none", plain[i].at("file_path").get<std::string>())))
            << split << " shard " << i;
      }
    }
  }
}

// Our writer reproduces the reference's bytes: exactly for BZ2/LZMA/LZ4/ZSTD
// (same library versions or stable output) at their default levels, and for
// GZIP/ZLIB at level 9 (zlib, the reference's level) except the mtime field
// (bytes 4..7).
TEST(GoldenShardTest, RecompressionMatchesReferenceBytes) {
  for (const char* fixture : {"fb_gzip", "fb_zlib", "fb_bz2", "fb_lzma", "fb_lz4", "fb_zstd",
                              "fb_multiprocessing", "fb_continue"}) {
    SCOPED_TRACE(fixture);
    const json expected = LoadExpected(fixture);
    ASSERT_OK_AND_ASSIGN(const Compression compression,
                         ParseCompression(expected.at("compression").get<std::string>()));
    const bool deflate = compression == Compression::kGzip || compression == Compression::kZlib;
    ASSERT_OK_AND_ASSIGN(auto codec,
                         MakeCodec(compression, CodecOptions{deflate ? 9 : kDefaultCodecLevel, 1, 0}));
    for (const auto& [split, info] : expected.at("splits").items()) {
      for (const auto& shard : info.at("shards")) {
        const std::string rel = shard.at("file_path").get<std::string>();
        const Bytes file = ReadFileBytes(DatasetPath(fixture, rel));
        Bytes plain, again;
        ASSERT_OK(codec->Decompress(file, kDefaultMaxDecompressedBytes, &plain));
        ASSERT_OK(codec->Compress(plain, &again));
        ASSERT_EQ(again.size(), file.size()) << rel;
        if (compression == Compression::kGzip || compression == Compression::kZlib) {
          for (std::size_t i = 4; i < 8; ++i) again[i] = file[i];
        }
        EXPECT_TRUE(again == file) << rel;
      }
    }
  }
}

// ---- Hashes of every file ------------------------------------------------------

class GoldenHashTest : public ::testing::TestWithParam<std::string> {};
INSTANTIATE_TEST_SUITE_P(Fixtures, GoldenHashTest,
                         ::testing::Values("fb_none", "fb_gzip", "fb_zlib", "fb_bz2", "fb_lzma",
                                           "fb_lz4", "fb_zstd", "npz_none", "npz_zip",
                                           "fb_multiprocessing", "fb_continue", "fb_minimal"));

TEST_P(GoldenHashTest, EveryRecordedChecksumMatches) {
  const json expected = LoadExpected(GetParam());
  std::ifstream info_file(DatasetPath(GetParam(), "dataset_info.json"));
  ASSERT_TRUE(info_file.good());
  const json dataset_info = json::parse(info_file);
  const json& structure = dataset_info.at("dataset_structure");
  const std::vector<HashAlgorithm> algs = Algorithms(structure);
  if (expected.contains("hash_checksum_algorithms")) {
    EXPECT_EQ(expected.at("hash_checksum_algorithms"), structure.at("hash_checksum_algorithms"));
  }
  int files = 0;
  auto check = [&](const std::string& rel, const std::vector<std::string>& recorded) {
    SCOPED_TRACE(rel);
    ASSERT_OK_AND_ASSIGN(auto got, HashFile(algs, DatasetPath(GetParam(), rel)));
    EXPECT_EQ(got, recorded);
    ++files;
  };
  // dataset_info.json: the checksums the user keeps outside the dataset.
  check("dataset_info.json", Strings(expected.at("dataset_info_checksums")));
  // Split-level lists, as recorded in dataset_info.json itself.
  for (const auto& [split, info] : dataset_info.at("splits").items()) {
    const json& list = info.at("shard_list_info_file");
    check(list.at("file_path").get<std::string>(),
          Strings(list.value("hash_checksums", json::array())));
  }
  if (expected.contains("splits")) {
    for (const auto& [split, info] : expected.at("splits").items()) {
      for (const auto& shard : info.at("shards")) {
        check(shard.at("file_path").get<std::string>(),
              Strings(shard.value("hash_checksums", json::array())));
      }
      for (const auto& list : info.value("shards_list_files", json::array())) {
        check(list.at("path").get<std::string>(), Strings(list.at("recorded_hash_checksums")));
      }
    }
  } else {
    // fb_minimal records only the sha256 of its one shard.
    ASSERT_EQ(algs, std::vector<HashAlgorithm>{HashAlgorithm::kSha256});
    check(expected.at("shard_file").get<std::string>(),
          {expected.at("shard_sha256").get<std::string>()});
  }
  EXPECT_GE(files, 3);
}

// Together the fixtures use all 13 algorithms, so each is checked against
// the reference on real files.
TEST(GoldenHashTest, FixturesCoverEveryAlgorithm) {
  std::set<HashAlgorithm> seen;
  for (const char* fixture :
       {"fb_none", "fb_gzip", "fb_zlib", "fb_bz2", "fb_lzma", "fb_lz4", "fb_zstd", "npz_none",
        "npz_zip", "fb_multiprocessing", "fb_continue", "fb_minimal"}) {
    std::ifstream f(DatasetPath(fixture, "dataset_info.json"));
    ASSERT_TRUE(f.good()) << fixture;
    for (HashAlgorithm a : Algorithms(json::parse(f).at("dataset_structure"))) seen.insert(a);
  }
  EXPECT_EQ(seen.size(), AllHashAlgorithms().size());
}

}  // namespace
}  // namespace sedpack
