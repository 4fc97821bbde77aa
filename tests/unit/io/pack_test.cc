// SPDX-License-Identifier: Apache-2.0
// Packs: a tree in one file and back, byte for byte; hostile packs are refused.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>

#include "sedpack/io/file.h"
#include "sedpack/io/pack.h"
#include "support/test_support.h"

namespace sedpack {
namespace {

namespace fs = std::filesystem;

std::map<std::string, std::string> Tree(const std::string& root) {
  std::map<std::string, std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(root)) {
    if (e.is_regular_file()) {
      auto t = ReadFileText(e.path().string());
      out[fs::relative(e.path(), root).generic_string()] = t.ok() ? *t : "?";
    }
  }
  return out;
}

void Write(const std::string& path, const std::string& bytes) {
  fs::create_directories(fs::path(path).parent_path());
  std::ofstream(path, std::ios::binary) << bytes;
}

TEST(Pack, RoundTripIsByteIdentical) {
  testing::TempDir dir;
  const std::string src = dir.path() + "/src";
  Write(src + "/dataset_info.json", "{\"x\": 1}");
  Write(src + "/train/a/shards_list.json", "[]");
  std::string binary(100000, '\0');
  for (std::size_t i = 0; i < binary.size(); ++i) binary[i] = static_cast<char>(i * 131);
  Write(src + "/train/a/0123.fb", binary);
  Write(src + "/empty.txt", "");
  Write(src + "/.sedpack-hpc/index.bin", "idx");
  ASSERT_OK_AND_ASSIGN(PackSummary p, PackTree(src, dir.path() + "/x.pack"));
  EXPECT_EQ(p.files, 5u);
  EXPECT_TRUE(PackReader::IsPack(dir.path() + "/x.pack"));
  EXPECT_FALSE(PackReader::IsPack(src + "/dataset_info.json"));
  ASSERT_OK_AND_ASSIGN(auto r, PackReader::Open(dir.path() + "/x.pack"));
  ASSERT_OK_AND_ASSIGN(auto bytes, r->Read("train/a/0123.fb"));
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(bytes.data()), bytes.size()), binary);
  EXPECT_EQ(r->Size("empty.txt").ValueOr(99), 0u);
  EXPECT_EQ(r->Read("nope").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(r->Read("train/a/0123.fb", 10).status().code(), StatusCode::kResourceExhausted);
  for (const auto& [rel, e] : r->entries()) EXPECT_EQ(e.offset % 64, 0u) << rel;
  ASSERT_OK(UnpackTree(dir.path() + "/x.pack", dir.path() + "/out").status());
  EXPECT_EQ(Tree(dir.path() + "/out"), Tree(src));
  // Never over an existing tree or pack, never inside the packed tree.
  EXPECT_EQ(UnpackTree(dir.path() + "/x.pack", dir.path() + "/out").status().code(), StatusCode::kAlreadyExists);
  EXPECT_EQ(PackTree(src, dir.path() + "/x.pack").status().code(), StatusCode::kAlreadyExists);
  EXPECT_EQ(PackTree(src, src + "/inner.pack").status().code(), StatusCode::kInvalidArgument);
}

// A pack with a hand-made index (one entry) for hostile inputs.
std::string HandPack(const std::string& name, std::uint64_t offset, std::uint64_t size, std::uint64_t count = 1) {
  std::string s("SEDPACK-PACK\0v01", 16);
  s += std::string(48, 'd');  // data
  auto u64 = [&](std::string* o, std::uint64_t v) { for (int i = 0; i < 8; ++i) o->push_back(static_cast<char>(v >> (8 * i))); };
  std::string index;
  u64(&index, count);
  for (int i = 0; i < 4; ++i) index.push_back(static_cast<char>(name.size() >> (8 * i)));
  index += name;
  u64(&index, offset);
  u64(&index, size);
  const std::uint64_t index_offset = s.size();
  s += index;
  u64(&s, index_offset);
  u64(&s, index.size());
  s += "SEDPACK-PACK-END";
  return s;
}

TEST(Pack, HostilePacksAreRefused) {
  testing::TempDir dir;
  const std::string p = dir.path() + "/h.pack";
  auto open = [&](const std::string& bytes) {
    Write(p, bytes);
    return PackReader::Open(p).status();
  };
  EXPECT_OK(open(HandPack("train/x.fb", 16, 48)));
  EXPECT_STATUS(StatusCode::kCorruption, "unsafe path", open(HandPack("../etc/passwd", 16, 4)));
  EXPECT_STATUS(StatusCode::kCorruption, "unsafe path", open(HandPack("/etc/passwd", 16, 4)));
  EXPECT_STATUS(StatusCode::kCorruption, "unsafe path", open(HandPack("a//b", 16, 4)));
  EXPECT_STATUS(StatusCode::kCorruption, "outside the data area", open(HandPack("x", 16, 1ULL << 40)));
  EXPECT_STATUS(StatusCode::kCorruption, "outside the data area", open(HandPack("x", 60, 8)));
  EXPECT_STATUS(StatusCode::kCorruption, "bad file count", open(HandPack("x", 16, 4, 1ULL << 60)));
  std::string good = HandPack("x", 16, 4);
  EXPECT_STATUS(StatusCode::kCorruption, "no end marker", open(good.substr(0, good.size() - 1)));
  std::string bad_magic = good;
  bad_magic[0] = 'X';
  EXPECT_STATUS(StatusCode::kCorruption, "bad magic", open(bad_magic));
  EXPECT_STATUS(StatusCode::kCorruption, "too small", open("SEDPACK"));
  // An index offset pointing past the end.
  std::string far = good;
  far[far.size() - 32] = '\x7f';
  EXPECT_STATUS(StatusCode::kCorruption, "bad index position", open(far));
}

}  // namespace
}  // namespace sedpack
