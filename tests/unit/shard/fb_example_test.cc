// SPDX-License-Identifier: Apache-2.0
// One example of an uncompressed fb shard by positioned reads (shard/example_read.h):
// the same values as decoding the whole shard, errors (never a crash) on
// damaged or hostile bytes, and reads of a small part of the file.
#include <cstring>
#include <string>
#include <vector>

#include "shard/example_read.h"
#include "sedpack/shard/shard.h"
#include "support/test_support.h"
#include "unit/shard/shard_test_util.h"

namespace sedpack {
namespace {

using testing::MakeExample;
using testing::StoreLe;

// Positioned reads over bytes in memory, refusing (as a test failure) any read
// past the end: ReadFbExample must check every range before asking for it.
struct MemoryFile {
  std::vector<std::byte> bytes;
  std::uint64_t asked = 0;
  shard_internal::ReadAt Reader() {
    return [this](std::uint64_t offset, std::span<std::byte> out) -> Status {
      EXPECT_LE(offset + out.size(), bytes.size()) << "read past the end at " << offset;
      if (offset + out.size() > bytes.size()) return Status::Internal("read past the end");
      asked += out.size();
      if (!out.empty()) std::memcpy(out.data(), bytes.data() + offset, out.size());
      return Status::OK();
    };
  }
};

Result<shard_internal::FbExample> ReadOne(const std::vector<AttributeSpec>& schema, MemoryFile& f,
                                          std::uint64_t example, std::uint64_t expected) {
  return shard_internal::ReadFbExample(schema, f.bytes.size(), example, expected, f.Reader());
}

std::vector<std::string> Hex(const DecodedShard& shard, std::size_t row) {
  std::vector<std::string> out;
  for (std::size_t j = 0; j < shard.num_attributes(); ++j) {
    const ValueView v = shard.Get(row, j);
    out.push_back(std::string(DTypeName(v.dtype)) + ShapeToString(v.shape) + ":" +
                  testing::ToHex(v.data.data(), v.data.size()));
  }
  return out;
}

class FbExampleTest : public ::testing::Test {
 protected:
  const std::vector<AttributeSpec> schema_ = {{"trace", DType::kFloat16, {64}},
                                              {"key", DType::kUInt8, {16}},
                                              {"label", DType::kInt64, {}},
                                              {"note", DType::kStr, {}},
                                              {"blob", DType::kBytes, {}}};
  std::vector<std::byte> Shard(int n) const {
    std::vector<testing::OwnedExample> examples;
    for (int i = 0; i < n; ++i) examples.push_back(MakeExample(schema_, i));
    return testing::WriteShard(ShardFileType::kFb, Compression::kNone, schema_, examples);
  }
};

TEST_F(FbExampleTest, EveryExampleMatchesTheWholeShardDecode) {
  for (const auto& schema : {schema_, testing::AllDTypesSchema()}) {
    std::vector<testing::OwnedExample> examples;
    for (int i = 0; i < 9; ++i) examples.push_back(MakeExample(schema, i));
    MemoryFile f{testing::WriteShard(ShardFileType::kFb, Compression::kNone, schema, examples)};
    ASSERT_OK_AND_ASSIGN(auto whole, DecodeShard(ShardFileType::kFb, Compression::kNone, schema, f.bytes));
    ASSERT_EQ(whole->num_examples(), 9u);
    for (std::size_t i = 0; i < 9; ++i) {
      ASSERT_OK_AND_ASSIGN(shard_internal::FbExample one, ReadOne(schema, f, i, 9));
      ASSERT_EQ(one.values->num_examples(), 1u);
      EXPECT_EQ(Hex(*one.values, 0), Hex(*whole, i)) << i;
      for (std::size_t j = 0; j < schema.size(); ++j) {
        // Views are aligned as the whole-shard reader's are.
        EXPECT_EQ(reinterpret_cast<std::uintptr_t>(one.values->Get(0, j).data.data()) % schema[j].FbAlignment(), 0u);
      }
    }
  }
}

TEST_F(FbExampleTest, ReadsAFractionOfTheFile) {
  const std::vector<AttributeSpec> schema = {{"trace", DType::kFloat32, {8192}}, {"key", DType::kUInt8, {16}}};
  std::vector<testing::OwnedExample> examples;
  for (int i = 0; i < 64; ++i) examples.push_back(MakeExample(schema, i));
  MemoryFile f{testing::WriteShard(ShardFileType::kFb, Compression::kNone, schema, examples)};
  ASSERT_GT(f.bytes.size(), 64u * 32768);
  ASSERT_OK_AND_ASSIGN(shard_internal::FbExample one, ReadOne(schema, f, 37, 64));
  EXPECT_EQ(one.bytes_read, f.asked);
  // The example's 32 kB and a few 4 KiB blocks of offsets, of a 2 MB file.
  EXPECT_GE(f.asked, 32768u + 16);
  EXPECT_LE(f.asked, 32768u + 16 + 5 * 4096) << f.bytes.size();
}

TEST_F(FbExampleTest, MinimalGoldenShard) {
  // tests/data/golden/fb_minimal's shard (the hex of shard_hostile_test.cc).
  const std::vector<AttributeSpec> schema = {
      {"x", DType::kFloat32, {2}}, {"s", DType::kStr, {}}, {"b", DType::kBytes, {}}};
  MemoryFile f{testing::FromHex(
      "080000000000000062ffffff0400000002000000580000000400000076ffffff04000000030000003000000018"
      "000000040000008effffff0400000000000000000000009effffff0400000000000000000000000000000"
      "0b2ffffff04000000080000000000003f00004040c6ffffff04000000030000003400000018000000040000"
      "00deffffff040000000300000001020300eeffffff040000000200000068690000000006000800040006000"
      "00004000000080000000000803f000000c0")};
  ASSERT_OK_AND_ASSIGN(auto whole, DecodeShard(ShardFileType::kFb, Compression::kNone, schema, f.bytes));
  for (std::size_t i = 0; i < 2; ++i) {
    ASSERT_OK_AND_ASSIGN(shard_internal::FbExample one, ReadOne(schema, f, i, 2));
    EXPECT_EQ(Hex(*one.values, 0), Hex(*whole, i));
  }
  EXPECT_STATUS(StatusCode::kCorruption, "holds 2 examples, the metadata records 3", ReadOne(schema, f, 0, 3));
}

TEST_F(FbExampleTest, TruncatedFilesAreRefused) {
  const auto full = Shard(4);
  int refused = 0;
  for (std::size_t size = 0; size < full.size(); size += (size < 64 ? 1 : 7)) {
    MemoryFile f{std::vector<std::byte>(full.begin(), full.begin() + static_cast<std::ptrdiff_t>(size))};
    for (std::uint64_t i = 0; i < 4; ++i) {
      auto r = ReadOne(schema_, f, i, 4);
      // The examples sit at the file's end in reverse order: a cut may leave
      // the last ones whole, never the first.
      if (i == 0) {
        EXPECT_FALSE(r.ok()) << size;
      }
      if (!r.ok()) {
        EXPECT_EQ(r.status().code(), StatusCode::kCorruption) << size << ": " << r.status().ToString();
        ++refused;
      }
    }
  }
  EXPECT_GT(refused, 50);
}

TEST_F(FbExampleTest, HostileOffsetsAndLengths) {
  MemoryFile good{Shard(3)};
  ASSERT_OK(ReadOne(schema_, good, 0, 3).status());
  auto root = [&] {
    std::uint32_t v;
    std::memcpy(&v, good.bytes.data(), 4);
    return v;
  }();
  {
    MemoryFile f{good.bytes};
    StoreLe(&f.bytes, 0, 0xfffffff0u, 4);
    EXPECT_STATUS(StatusCode::kCorruption, "root table offset", ReadOne(schema_, f, 0, 3));
    StoreLe(&f.bytes, 0, static_cast<std::uint64_t>(f.bytes.size()), 4);
    EXPECT_STATUS(StatusCode::kCorruption, "lies outside the file", ReadOne(schema_, f, 0, 3));
    StoreLe(&f.bytes, 0, root + 1, 4);
    EXPECT_STATUS(StatusCode::kCorruption, "misaligned", ReadOne(schema_, f, 0, 3));
    StoreLe(&f.bytes, 0, 0, 4);
    EXPECT_STATUS(StatusCode::kCorruption, "root table offset", ReadOne(schema_, f, 0, 3));
  }
  for (std::uint32_t soffset : {0x80000000u, 0xfffff000u, 0x7fffffffu, 0x00001000u, 1u}) {
    MemoryFile f{good.bytes};
    StoreLe(&f.bytes, root, soffset, 4);  // the Shard table's vtable offset
    SCOPED_TRACE(::testing::Message() << soffset);
    EXPECT_STATUS(StatusCode::kCorruption, "vtable", ReadOne(schema_, f, 0, 3));
  }
  // The examples vector: where the Shard's only field points.
  std::uint32_t soffset, field, rel;
  std::memcpy(&soffset, good.bytes.data() + root, 4);
  const std::uint32_t vtable = root - soffset;
  std::uint16_t voffset;
  std::memcpy(&voffset, good.bytes.data() + vtable + 4, 2);
  field = root + voffset;
  std::memcpy(&rel, good.bytes.data() + field, 4);
  const std::uint32_t examples = field + rel;
  {
    MemoryFile f{good.bytes};
    for (std::uint64_t huge : {0x40000000ull, 0x7fffffffull, 0xffffffffull, 1000ull}) {
      StoreLe(&f.bytes, examples, huge, 4);
      EXPECT_STATUS(StatusCode::kCorruption, "examples vector", ReadOne(schema_, f, 0, huge));
    }
  }
  {
    // Example 1's offset pointing past the end.
    MemoryFile f{good.bytes};
    StoreLe(&f.bytes, examples + 8, 0x7ffffff0u, 4);
    EXPECT_STATUS(StatusCode::kCorruption, "example offset", ReadOne(schema_, f, 1, 3));
    EXPECT_OK(ReadOne(schema_, f, 0, 3).status());  // the others are not touched
  }
  {
    // Shard vtable that says there is no examples field: no examples.
    MemoryFile f{good.bytes};
    StoreLe(&f.bytes, vtable + 4, 0, 2);
    EXPECT_STATUS(StatusCode::kCorruption, "holds 0 examples", ReadOne(schema_, f, 0, 3));
    StoreLe(&f.bytes, vtable, 3, 2);  // odd vtable size
    EXPECT_STATUS(StatusCode::kCorruption, "odd size", ReadOne(schema_, f, 0, 3));
    StoreLe(&f.bytes, vtable, 0xfffe, 2);
    EXPECT_STATUS(StatusCode::kCorruption, "vtable", ReadOne(schema_, f, 0, 3));
  }
}

TEST_F(FbExampleTest, WrongAttributeSizesAndCounts) {
  MemoryFile f{Shard(2)};
  auto schema = schema_;
  schema[0].shape = {65};
  EXPECT_STATUS(StatusCode::kCorruption, "example 1 attribute \"trace\" holds 128 bytes", ReadOne(schema, f, 1, 2));
  schema = schema_;
  schema[2].dtype = DType::kInt32;
  EXPECT_STATUS(StatusCode::kCorruption, "attribute \"label\"", ReadOne(schema, f, 0, 2));
  schema = schema_;
  schema.push_back({"extra", DType::kUInt8, {}});
  EXPECT_STATUS(StatusCode::kCorruption, "has 5 attributes, the schema has 6", ReadOne(schema, f, 0, 2));
  schema = schema_;
  schema.pop_back();
  EXPECT_STATUS(StatusCode::kCorruption, "has 5 attributes, the schema has 4", ReadOne(schema, f, 0, 2));
}

TEST_F(FbExampleTest, InvalidUtf8IsRefused) {
  std::vector<testing::OwnedExample> examples = {MakeExample(schema_, 0)};
  const std::string bad = "ab\xff\xfe";
  examples[0].storage[3].assign(reinterpret_cast<const std::byte*>(bad.data()),
                                reinterpret_cast<const std::byte*>(bad.data() + bad.size()));
  examples[0].views[3].data = examples[0].storage[3];
  // The writer refuses invalid text: write the bytes as "blob"-like bytes, then read as str.
  auto as_bytes = schema_;
  as_bytes[3].dtype = DType::kBytes;
  examples[0].views[3].dtype = DType::kBytes;
  MemoryFile f{testing::WriteShard(ShardFileType::kFb, Compression::kNone, as_bytes, examples)};
  EXPECT_STATUS(StatusCode::kCorruption, "is not valid UTF-8", ReadOne(schema_, f, 0, 1));
  ASSERT_OK(ReadOne(as_bytes, f, 0, 1).status());
}

// Single flipped bytes anywhere: positioned reads never crash or read past the
// end, and where the whole-shard decoder (the full verifier) accepts the bytes,
// they give the same values.
TEST_F(FbExampleTest, EveryFlippedByteIsRefusedOrAgreesWithTheWholeShard) {
  const auto full = Shard(3);
  int refused = 0, agreed = 0;
  for (std::size_t i = 0; i < full.size(); ++i) {
    for (std::byte mask : {std::byte{0xff}, std::byte{0x80}, std::byte{0x01}}) {
      MemoryFile f{full};
      f.bytes[i] ^= mask;
      auto whole = DecodeShard(ShardFileType::kFb, Compression::kNone, schema_, f.bytes);
      for (std::uint64_t e = 0; e < 3; ++e) {
        auto one = ReadOne(schema_, f, e, 3);
        if (!one.ok()) {
          EXPECT_EQ(one.status().code(), StatusCode::kCorruption) << i << ": " << one.status().ToString();
          EXPECT_FALSE(whole.ok() && (*whole)->num_examples() == 3)
              << "byte " << i << ": the whole shard decodes, example " << e << " does not: "
              << one.status().ToString();
          ++refused;
        } else if (whole.ok()) {
          EXPECT_EQ(Hex(*one->values, 0), Hex(**whole, e)) << "byte " << i;
          ++agreed;
        }
      }
    }
  }
  EXPECT_GT(refused, 100);
  EXPECT_GT(agreed, 100);
}

TEST_F(FbExampleTest, AliasedValuesDoNotMultiplyTheAllocation) {
  // Attributes pointing at one vector (the verifier allows it) must not make a
  // reader allocate more than the file: refused once their sizes add up past it.
  const std::vector<AttributeSpec> schema = {{"a", DType::kBytes, {}}, {"b", DType::kBytes, {}}};
  testing::OwnedExample ex = MakeExample(schema, 0);
  ex.storage[0].assign(4000, std::byte{7});
  ex.views[0].data = ex.storage[0];
  ex.storage[1].assign(1, std::byte{8});
  ex.views[1].data = ex.storage[1];
  MemoryFile f{testing::WriteShard(ShardFileType::kFb, Compression::kNone, schema, {ex})};
  ASSERT_OK(ReadOne(schema, f, 0, 1).status());
  const auto u32 = [&](std::size_t pos) {
    std::uint32_t v;
    std::memcpy(&v, f.bytes.data() + pos, 4);
    return static_cast<std::size_t>(v);
  };
  const auto first_field = [&](std::size_t table) {
    const std::size_t vtable = table - static_cast<std::size_t>(static_cast<std::int32_t>(u32(table)));
    std::uint16_t voffset;
    std::memcpy(&voffset, f.bytes.data() + vtable + 4, 2);
    return table + voffset;
  };
  const auto target = [&](std::size_t pos) { return pos + u32(pos); };
  const std::size_t examples = target(first_field(target(0)));
  const std::size_t attributes = target(first_field(target(examples + 4)));
  const std::size_t entry1 = attributes + 8, table0 = target(attributes + 4);
  ASSERT_GT(table0, entry1);
  StoreLe(&f.bytes, entry1, table0 - entry1, 4);
  // The full verifier accepts the aliasing ...
  ASSERT_OK_AND_ASSIGN(auto whole, DecodeShard(ShardFileType::kFb, Compression::kNone, schema, f.bytes));
  EXPECT_EQ(whole->Get(0, 1).data.size(), 4000u);
  // ... but 2 x 4000 bytes is more than this file holds.
  ASSERT_LT(f.bytes.size(), 8000u);
  EXPECT_STATUS(StatusCode::kCorruption, "more than the file", ReadOne(schema, f, 0, 1));
}

}  // namespace
}  // namespace sedpack
