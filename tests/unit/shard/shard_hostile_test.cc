// SPDX-License-Identifier: Apache-2.0
// Hostile and damaged shard bytes must give Corruption / ResourceExhausted
// (NotImplemented for valid-but-unsupported npy dtypes), never a crash or a
// huge allocation. One test per failure mode.
#include <cstring>
#include <string>
#include <vector>

#include "sedpack/codecs/compress.h"
#include "sedpack/shard/shard.h"
#include "support/test_support.h"
#include "unit/shard/shard_test_util.h"

namespace sedpack {
namespace {

using testing::FromHex;
using testing::MakeExample;
using testing::MakeZip;
using testing::NpyMember;
using testing::StoreLe;

std::vector<std::byte> LeBytes(std::initializer_list<std::int64_t> values) {
  std::vector<std::byte> out(values.size() * 8);
  std::size_t i = 0;
  for (std::int64_t v : values) StoreLe(&out, 8 * i++, static_cast<std::uint64_t>(v), 8);
  return out;
}

std::vector<std::byte> Zeros(std::size_t n) { return std::vector<std::byte>(n); }

// ---------------------------------------------------------------------------
// fb

class FbHostileTest : public ::testing::Test {
 protected:
  // fb_minimal's layout (see sedpack-format.md §5.2): x float32 (2,), s str, b bytes.
  const std::vector<AttributeSpec> schema_ = {
      {"x", DType::kFloat32, {2}}, {"s", DType::kStr, {}}, {"b", DType::kBytes, {}}};
  std::vector<std::byte> Minimal() const {
    return FromHex(
        "080000000000000062ffffff0400000002000000580000000400000076ffffff04000000030000003000000018"
        "000000040000008effffff0400000000000000000000009effffff0400000000000000000000000000000"
        "0b2ffffff04000000080000000000003f00004040c6ffffff04000000030000003400000018000000040000"
        "00deffffff040000000300000001020300eeffffff040000000200000068690000000006000800040006000"
        "00004000000080000000000803f000000c0");
  }
  Status Decode(std::vector<std::byte> bytes, const std::vector<AttributeSpec>& schema) const {
    return DecodeShard(ShardFileType::kFb, Compression::kNone, schema, std::move(bytes)).status();
  }
  Status Decode(std::vector<std::byte> bytes) const { return Decode(std::move(bytes), schema_); }
};

TEST_F(FbHostileTest, MinimalFixtureIsValid) {
  ASSERT_EQ(Minimal().size(), 192u);
  EXPECT_OK(Decode(Minimal()));
}

TEST_F(FbHostileTest, EmptyFile) { EXPECT_STATUS(StatusCode::kCorruption, "", Decode({})); }

TEST_F(FbHostileTest, TruncatedFile) {
  const auto full = Minimal();
  for (std::size_t size : {1, 4, 7, 8, 64, 96, 150, 190, 191}) {
    {
      SCOPED_TRACE(::testing::Message() << size);
      EXPECT_STATUS(StatusCode::kCorruption, "verification failed",
                    Decode(std::vector<std::byte>(full.begin(), full.begin() + size)));
    }
  }
}

TEST_F(FbHostileTest, EveryFlippedByteIsRefusedOrHarmless) {
  const auto full = Minimal();
  int refused = 0;
  for (std::size_t i = 0; i < full.size(); ++i) {
    for (std::byte mask : {std::byte{0xff}, std::byte{0x80}, std::byte{0x01}}) {
      auto bytes = full;
      bytes[i] ^= mask;
      const Status st = Decode(bytes);
      if (!st.ok()) {
        EXPECT_EQ(st.code(), StatusCode::kCorruption) << i << ": " << st.ToString();
        ++refused;
      }
    }
  }
  EXPECT_GT(refused, 100);
}

TEST_F(FbHostileTest, HugeVectorLength) {
  auto bytes = Minimal();
  StoreLe(&bytes, 0xb4, 0xfffffff0u, 4);  // Length of example 0's "x" vector.
  EXPECT_STATUS(StatusCode::kCorruption, "verification failed", Decode(bytes));
  StoreLe(&bytes, 0xb4, 0x7fffffffu, 4);
  EXPECT_STATUS(StatusCode::kCorruption, "verification failed", Decode(bytes));
}

TEST_F(FbHostileTest, HugeExamplesVectorLength) {
  auto bytes = Minimal();
  StoreLe(&bytes, 0x10, 0x40000000u, 4);
  EXPECT_STATUS(StatusCode::kCorruption, "verification failed", Decode(bytes));
}

TEST_F(FbHostileTest, NegativeSoffsets) {
  for (std::uint32_t soffset : {0x80000000u, 0xfffff000u, 0x7fffffffu, 0x00001000u}) {
    auto bytes = Minimal();
    StoreLe(&bytes, 0x08, soffset, 4);  // The Shard table's vtable offset.
    {
      SCOPED_TRACE(::testing::Message() << soffset);
      EXPECT_STATUS(StatusCode::kCorruption, "verification failed", Decode(bytes));
    }
  }
}

TEST_F(FbHostileTest, RootOffsetOutsideBuffer) {
  auto bytes = Minimal();
  StoreLe(&bytes, 0, 0xfffffff0u, 4);
  EXPECT_STATUS(StatusCode::kCorruption, "verification failed", Decode(bytes));
}

TEST_F(FbHostileTest, FixedSizeMismatchNamesExampleAndAttribute) {
  const std::vector<AttributeSpec> written = {{"a", DType::kUInt8, {}},
                                              {"x", DType::kFloat32, {1}}};
  std::vector<testing::OwnedExample> examples = {MakeExample(written, 0), MakeExample(written, 1)};
  const auto bytes = testing::WriteShard(ShardFileType::kFb, Compression::kNone, written, examples);
  const std::vector<AttributeSpec> read = {{"a", DType::kUInt8, {}}, {"x", DType::kFloat32, {2}}};
  EXPECT_STATUS(StatusCode::kCorruption, "example 0 attribute \"x\"", Decode(bytes, read));
}

TEST_F(FbHostileTest, IntMustBeEightBytes) {
  const std::vector<AttributeSpec> written = {{"n", DType::kUInt32, {}}};
  const auto bytes = testing::WriteShard(ShardFileType::kFb, Compression::kNone, written,
                                         {MakeExample(written, 0)});
  EXPECT_STATUS(StatusCode::kCorruption, "need 8", Decode(bytes, {{"n", DType::kInt, {}}}));
}

TEST_F(FbHostileTest, AttributeCountMismatch) {
  auto schema = schema_;
  schema.push_back({"extra", DType::kUInt8, {}});
  EXPECT_STATUS(StatusCode::kCorruption, "has 3 attributes, the schema has 4",
                Decode(Minimal(), schema));
}

TEST_F(FbHostileTest, InvalidUtf8InStr) {
  const std::vector<AttributeSpec> written = {{"s", DType::kBytes, {}}};
  const std::uint8_t bad[] = {'a', 0xc3, 0x28};
  const ValueView v[] = {ValueView::Bytes(std::span<const std::uint8_t>(bad))};
  ASSERT_OK_AND_ASSIGN(auto writer,
                       MakeShardWriter(ShardFileType::kFb, Compression::kNone, written));
  ASSERT_OK(writer->Add(v));
  ASSERT_OK_AND_ASSIGN(auto bytes, writer->Finish());
  EXPECT_STATUS(StatusCode::kCorruption, "UTF-8", Decode(bytes, {{"s", DType::kStr, {}}}));
}

TEST_F(FbHostileTest, CompressedGarbage) {
  for (Compression c : {Compression::kGzip, Compression::kZlib, Compression::kBz2,
                        Compression::kLzma, Compression::kLz4, Compression::kZstd}) {
    std::vector<std::byte> garbage(300);
    for (std::size_t i = 0; i < garbage.size(); ++i) garbage[i] = static_cast<std::byte>(i * 7);
    {
      SCOPED_TRACE(::testing::Message() << CompressionName(c));
      EXPECT_STATUS(StatusCode::kCorruption, "",
                    DecodeShard(ShardFileType::kFb, c, schema_, garbage));
    }
  }
}

TEST_F(FbHostileTest, CompressedTruncated) {
  const std::vector<AttributeSpec> schema = {{"big", DType::kUInt8, {4096}}};
  for (Compression c : {Compression::kGzip, Compression::kBz2, Compression::kLzma,
                        Compression::kLz4, Compression::kZstd}) {
    auto bytes = testing::WriteShard(ShardFileType::kFb, c, schema,
                                     {MakeExample(schema, 0), MakeExample(schema, 1)});
    bytes.resize(bytes.size() / 2);
    {
      SCOPED_TRACE(::testing::Message() << CompressionName(c));
      EXPECT_STATUS(StatusCode::kCorruption, "", DecodeShard(ShardFileType::kFb, c, schema, bytes));
    }
  }
}

TEST_F(FbHostileTest, DecompressionBombIsRefused) {
  const std::vector<AttributeSpec> schema = {{"big", DType::kUInt8, {1 << 20}}};
  testing::OwnedExample ex;
  ex.storage.push_back(Zeros(1 << 20));
  ex.views.push_back(ValueView{DType::kUInt8, {1 << 20}, ex.storage[0]});
  std::vector<testing::OwnedExample> examples(1, ex);
  ShardReadLimits limits;
  limits.max_decompressed_bytes = 256 << 10;
  for (Compression c : {Compression::kGzip, Compression::kBz2, Compression::kLzma,
                        Compression::kLz4, Compression::kZstd}) {
    const auto bytes = testing::WriteShard(ShardFileType::kFb, c, schema, examples);
    ASSERT_LT(bytes.size(), 64u << 10) << CompressionName(c);
    {
      SCOPED_TRACE(::testing::Message() << CompressionName(c));
      EXPECT_STATUS(StatusCode::kResourceExhausted, "",
                    DecodeShard(ShardFileType::kFb, c, schema, bytes, limits));
    }
  }
}

TEST(FbWriterLimitsTest, RefusesMoreTablesThanReadersAccept) {
  // Every example is 2 tables here, so the 500000th example would pass 1,000,000 tables.
  const std::vector<AttributeSpec> schema = {{"a", DType::kUInt8, {}}};
  ASSERT_OK_AND_ASSIGN(auto writer,
                       MakeShardWriter(ShardFileType::kFb, Compression::kNone, schema));
  const std::uint8_t value = 1;
  const ValueView v[] = {ValueView::Scalar(value)};
  for (int i = 0; i < 499999; ++i) ASSERT_OK(writer->Add(v));
  EXPECT_STATUS(StatusCode::kResourceExhausted, "tables", writer->Add(v));
  EXPECT_EQ(writer->num_examples(), 499999u);
  ASSERT_OK_AND_ASSIGN(auto bytes, writer->Finish());
  ASSERT_OK_AND_ASSIGN(auto shard,
                       DecodeShard(ShardFileType::kFb, Compression::kNone, schema, bytes));
  EXPECT_EQ(shard->num_examples(), 499999u);
}

// ---------------------------------------------------------------------------
// npz

// A valid .npy member whose header dict text is given verbatim (padded like numpy).
std::vector<std::byte> RawNpy(const std::string& dict, const std::vector<std::byte>& data,
                              int version = 1) {
  std::string header = dict;
  const std::size_t prefix = version == 1 ? 10 : 12;
  while ((prefix + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  std::string out = "\x93NUMPY";
  out += static_cast<char>(version);
  out += '\0';
  const std::size_t len = header.size();
  out += static_cast<char>(len & 0xff);
  out += static_cast<char>((len >> 8) & 0xff);
  if (version != 1) out += std::string(2, '\0');
  out += header;
  std::vector<std::byte> bytes;
  for (char c : out) bytes.push_back(static_cast<std::byte>(c));
  bytes.insert(bytes.end(), data.begin(), data.end());
  return bytes;
}

class NpzHostileTest : public ::testing::Test {
 protected:
  const std::vector<AttributeSpec> u8_schema_ = {{"a", DType::kUInt8, {2}}};
  Status Decode(std::vector<std::byte> bytes, const std::vector<AttributeSpec>& schema,
                const ShardReadLimits& limits = {}) const {
    return DecodeShard(ShardFileType::kNpz, Compression::kNone, schema, std::move(bytes), limits)
        .status();
  }
  // One member "a.npy" of uint8 (2 examples, shape (2,)).
  std::vector<std::byte> Small(bool deflate = false) const {
    std::vector<std::byte> data = {std::byte{1}, std::byte{2}, std::byte{3}, std::byte{4}};
    return MakeZip({{"a.npy", NpyMember("|u1", {2, 2}, data)}}, deflate);
  }
  // Bytes attribute "b" with the given offsets over 4 data bytes.
  std::vector<std::byte> BytesShard(std::initializer_list<std::int64_t> offsets) const {
    std::vector<std::byte> data = {std::byte{1}, std::byte{2}, std::byte{3}, std::byte{4}};
    return MakeZip({{"len_b.npy", NpyMember("<i8", {offsets.size()}, LeBytes(offsets))},
                    {"b.npy", NpyMember("|u1", {1, 4}, data)}},
                   false);
  }
  const std::vector<AttributeSpec> bytes_schema_ = {{"b", DType::kBytes, {}}};
};

TEST_F(NpzHostileTest, SmallIsValid) {
  EXPECT_OK(Decode(Small(), u8_schema_));
  EXPECT_OK(Decode(Small(true), u8_schema_));
  EXPECT_OK(Decode(BytesShard({0, 1, 4}), bytes_schema_));
}

TEST_F(NpzHostileTest, EmptyFile) {
  EXPECT_STATUS(StatusCode::kCorruption, "too small", Decode({}, u8_schema_));
}

TEST_F(NpzHostileTest, TruncatedFile) {
  const auto full = Small();
  for (std::size_t size : {10ul, 30ul, 60ul, full.size() / 2, full.size() - 1}) {
    {
      SCOPED_TRACE(::testing::Message() << size);
      EXPECT_STATUS(StatusCode::kCorruption, "",
                    Decode(std::vector<std::byte>(full.begin(), full.begin() + size), u8_schema_));
    }
  }
}

TEST_F(NpzHostileTest, EveryFlippedByteIsRefusedOrHarmless) {
  for (bool deflate : {false, true}) {
    const auto full = Small(deflate);
    int refused = 0;
    for (std::size_t i = 0; i < full.size(); ++i) {
      for (std::byte mask : {std::byte{0xff}, std::byte{0x80}, std::byte{0x01}}) {
        auto bytes = full;
        bytes[i] ^= mask;
        const Status st = Decode(bytes, u8_schema_);
        if (!st.ok()) {
          EXPECT_TRUE(st.code() == StatusCode::kCorruption ||
                      st.code() == StatusCode::kResourceExhausted)
              << i << ": " << st.ToString();
          ++refused;
        }
      }
    }
    EXPECT_GT(refused, 100);
  }
}

TEST_F(NpzHostileTest, CentralCompressedSizePastEndOfFile) {
  auto bytes = Small();
  const std::size_t c = testing::CentralEntryOffset(bytes, 0);
  StoreLe(&bytes, c + 20, 0x7ffffff0u, 4);
  StoreLe(&bytes, c + 24, 0x7ffffff0u, 4);
  EXPECT_STATUS(StatusCode::kCorruption, "pass the end of the file", Decode(bytes, u8_schema_));
}

TEST_F(NpzHostileTest, StoredSizesDisagree) {
  auto bytes = Small();
  const std::size_t c = testing::CentralEntryOffset(bytes, 0);
  StoreLe(&bytes, c + 24, 5, 4);
  EXPECT_STATUS(StatusCode::kCorruption, "sizes differ", Decode(bytes, u8_schema_));
}

TEST_F(NpzHostileTest, LocalHeaderOffsetOutsideFile) {
  auto bytes = Small();
  const std::size_t c = testing::CentralEntryOffset(bytes, 0);
  StoreLe(&bytes, c + 42, 0xfffffff0u, 4);
  EXPECT_STATUS(StatusCode::kCorruption, "outside the file", Decode(bytes, u8_schema_));
}

TEST_F(NpzHostileTest, LocalHeaderNamesAnotherFile) {
  auto bytes = Small();
  bytes[30] = std::byte{'z'};  // First byte of the local header's name.
  EXPECT_STATUS(StatusCode::kCorruption, "different file", Decode(bytes, u8_schema_));
}

TEST_F(NpzHostileTest, CentralDirectoryOutsideFile) {
  auto bytes = Small();
  StoreLe(&bytes, bytes.size() - 22 + 16, 0x7fffffffu, 4);
  EXPECT_STATUS(StatusCode::kCorruption, "central directory", Decode(bytes, u8_schema_));
}

TEST_F(NpzHostileTest, EntryCountLargerThanDirectory) {
  auto bytes = Small();
  StoreLe(&bytes, bytes.size() - 22 + 8, 0xffff, 2);
  StoreLe(&bytes, bytes.size() - 22 + 10, 0xffff, 2);
  EXPECT_STATUS(StatusCode::kCorruption, "cannot fit", Decode(bytes, u8_schema_));
}

TEST_F(NpzHostileTest, Zip64EndRecordOutOfRange) {
  auto bytes = Small();
  // Insert a ZIP64 locator pointing far away just before the end record.
  std::vector<std::byte> locator(20);
  StoreLe(&locator, 0, 0x07064b50, 4);
  StoreLe(&locator, 8, 0xffffffffffull, 8);
  StoreLe(&locator, 16, 1, 4);
  bytes.insert(bytes.end() - 22, locator.begin(), locator.end());
  EXPECT_STATUS(StatusCode::kCorruption, "ZIP64", Decode(bytes, u8_schema_));
}

TEST_F(NpzHostileTest, DeclaredSizeOverLimit) {
  ShardReadLimits limits;
  limits.max_decompressed_bytes = 16;
  EXPECT_STATUS(StatusCode::kResourceExhausted, "limit", Decode(Small(), u8_schema_, limits));
  EXPECT_STATUS(StatusCode::kResourceExhausted, "limit", Decode(Small(true), u8_schema_, limits));
}

TEST_F(NpzHostileTest, ZipBombMember) {
  // 8 MiB of zeros deflate to a few KiB; the declared size must be refused up front.
  const std::vector<AttributeSpec> schema = {{"a", DType::kUInt8, {}}};
  const auto bytes = MakeZip({{"a.npy", NpyMember("|u1", {8 << 20}, Zeros(8 << 20))}}, true);
  ASSERT_LT(bytes.size(), 64u << 10);
  ShardReadLimits limits;
  limits.max_decompressed_bytes = 1 << 20;
  EXPECT_STATUS(StatusCode::kResourceExhausted, "limit", Decode(bytes, schema, limits));
}

TEST_F(NpzHostileTest, DeflatedMemberLargerThanDeclared) {
  const std::vector<AttributeSpec> schema = {{"a", DType::kUInt8, {}}};
  auto bytes = MakeZip({{"a.npy", NpyMember("|u1", {1 << 20}, Zeros(1 << 20))}}, true);
  const std::size_t c = testing::CentralEntryOffset(bytes, 0);
  StoreLe(&bytes, c + 24, 1000, 4);  // Claims 1000 bytes; the stream holds 1 MiB.
  EXPECT_STATUS(StatusCode::kCorruption, "", Decode(bytes, schema));
}

TEST_F(NpzHostileTest, ImpossibleCompressionRatio) {
  // ~4 GB claimed from a few bytes: refused before anything is allocated.
  auto bytes = Small(true);
  const std::size_t c = testing::CentralEntryOffset(bytes, 0);
  StoreLe(&bytes, c + 24, 0xfffffff0u, 4);
  EXPECT_STATUS(StatusCode::kCorruption, "more than DEFLATE can produce",
                Decode(bytes, u8_schema_));
}

TEST_F(NpzHostileTest, CrcMismatch) {
  auto bytes = Small();
  bytes[Small().size() - 22 - 46 - 5 - 1] ^= std::byte{1};  // Last data byte of the member.
  EXPECT_STATUS(StatusCode::kCorruption, "CRC-32", Decode(bytes, u8_schema_));
}

TEST_F(NpzHostileTest, EncryptedMember) {
  auto bytes = Small();
  const std::size_t c = testing::CentralEntryOffset(bytes, 0);
  StoreLe(&bytes, c + 8, 1, 2);
  EXPECT_STATUS(StatusCode::kCorruption, "encrypted", Decode(bytes, u8_schema_));
}

TEST_F(NpzHostileTest, UnknownCompressionMethod) {
  auto bytes = Small();
  const std::size_t c = testing::CentralEntryOffset(bytes, 0);
  StoreLe(&bytes, c + 10, 12, 2);  // bzip2
  EXPECT_STATUS(StatusCode::kCorruption, "method 12", Decode(bytes, u8_schema_));
}

TEST_F(NpzHostileTest, DuplicateMember) {
  std::vector<std::byte> data = {std::byte{1}, std::byte{2}};
  const auto bytes = MakeZip(
      {{"a.npy", NpyMember("|u1", {1, 2}, data)}, {"a.npy", NpyMember("|u1", {1, 2}, data)}},
      false);
  EXPECT_STATUS(StatusCode::kCorruption, "duplicate", Decode(bytes, u8_schema_));
}

TEST_F(NpzHostileTest, MissingMember) {
  EXPECT_STATUS(StatusCode::kCorruption, "\"b.npy\" is missing",
                Decode(Small(), {{"a", DType::kUInt8, {2}}, {"b", DType::kUInt8, {}}}));
}

TEST_F(NpzHostileTest, NpyHugeShapeOverflows) {
  const std::vector<AttributeSpec> schema = {{"a", DType::kUInt8, {}}};
  auto bytes = MakeZip({{"a.npy", NpyMember("<f8", {1ull << 62, 1ull << 62}, {})}}, false);
  EXPECT_STATUS(StatusCode::kCorruption, "too large", Decode(bytes, schema));
  bytes = MakeZip({{"a.npy", RawNpy("{'descr': '|u1', 'fortran_order': False, "
                                    "'shape': (99999999999999999999,), }",
                                    {})}},
                  false);
  EXPECT_STATUS(StatusCode::kCorruption, "too large", Decode(bytes, schema));
}

TEST_F(NpzHostileTest, NpyDataSizeDoesNotMatchShape) {
  const std::vector<AttributeSpec> schema = {{"a", DType::kUInt8, {}}};
  const auto bytes = MakeZip({{"a.npy", NpyMember("|u1", {5}, Zeros(4))}}, false);
  EXPECT_STATUS(StatusCode::kCorruption, "need 5 bytes", Decode(bytes, schema));
}

TEST_F(NpzHostileTest, NpyBadMagic) {
  auto member = NpyMember("|u1", {2, 2}, Zeros(4));
  member[1] = std::byte{'X'};
  EXPECT_STATUS(StatusCode::kCorruption, "bad magic",
                Decode(MakeZip({{"a.npy", member}}, false), u8_schema_));
}

TEST_F(NpzHostileTest, NpyHeaderLengthPastMember) {
  auto member = NpyMember("|u1", {2, 2}, Zeros(4));
  StoreLe(&member, 8, 0xffff, 2);
  EXPECT_STATUS(StatusCode::kCorruption, "passes the end",
                Decode(MakeZip({{"a.npy", member}}, false), u8_schema_));
}

TEST_F(NpzHostileTest, NpyUnsupportedVersion) {
  auto member = NpyMember("|u1", {2, 2}, Zeros(4));
  member[6] = std::byte{3};
  EXPECT_STATUS(StatusCode::kCorruption, "version 3.0",
                Decode(MakeZip({{"a.npy", member}}, false), u8_schema_));
}

TEST_F(NpzHostileTest, NpyVersion2IsAccepted) {
  const auto member =
      RawNpy("{'descr': '|u1', 'fortran_order': False, 'shape': (2, 2), }", Zeros(4), 2);
  EXPECT_OK(Decode(MakeZip({{"a.npy", member}}, false), u8_schema_));
}

TEST_F(NpzHostileTest, NpyMalformedDicts) {
  for (const char* dict : {
           "{'descr': '|u1', 'shape': (2, 2), }",
           "{'descr': '|u1', 'fortran_order': False, 'shape': (2, 2), 'x': 1, }",
           "{'descr': '|u1', 'fortran_order': False, 'shape': (2, -2), }",
           "{'descr': '|u1', 'fortran_order': False, 'shape': (4), }",
           "{'descr': '|u1', 'fortran_order': 0, 'shape': (2, 2), }",
           "{'descr': '|u1', 'fortran_order': False, 'shape': (2, 2), } junk",
           "{'descr': '|u1', 'descr': '|u1', 'fortran_order': False, 'shape': (2, 2), }",
           "{'descr': '|u1 'fortran_order': False, 'shape': (2, 2)}",
           "['descr', '|u1']",
       }) {
    {
      SCOPED_TRACE(::testing::Message() << dict);
      EXPECT_STATUS(StatusCode::kCorruption, ".npy header",
                    Decode(MakeZip({{"a.npy", RawNpy(dict, Zeros(4))}}, false), u8_schema_));
    }
  }
}

TEST_F(NpzHostileTest, NpyFortranOrderIsNotImplemented) {
  const auto member =
      RawNpy("{'descr': '|u1', 'fortran_order': True, 'shape': (2, 2), }", Zeros(4));
  EXPECT_STATUS(StatusCode::kNotImplemented, "Fortran",
                Decode(MakeZip({{"a.npy", member}}, false), u8_schema_));
}

TEST_F(NpzHostileTest, NpyUnsupportedDTypes) {
  const std::vector<AttributeSpec> schema = {{"a", DType::kFloat32, {}}};
  EXPECT_STATUS(StatusCode::kNotImplemented, "big-endian",
                Decode(MakeZip({{"a.npy", NpyMember(">f4", {2}, Zeros(8))}}, false), schema));
  EXPECT_STATUS(StatusCode::kNotImplemented, "'<c8' is not supported",
                Decode(MakeZip({{"a.npy", NpyMember("<c8", {2}, Zeros(16))}}, false), schema));
}

TEST_F(NpzHostileTest, MemberShapeDoesNotMatchSchema) {
  EXPECT_STATUS(StatusCode::kCorruption, "shape", Decode(Small(), {{"a", DType::kUInt8, {1, 2}}}));
}

TEST_F(NpzHostileTest, ExampleCountsDisagree) {
  const auto bytes = MakeZip(
      {{"a.npy", NpyMember("|u1", {2}, Zeros(2))}, {"b.npy", NpyMember("|u1", {3}, Zeros(3))}},
      false);
  EXPECT_STATUS(StatusCode::kCorruption, "has 3 examples, expected 2",
                Decode(bytes, {{"a", DType::kUInt8, {}}, {"b", DType::kUInt8, {}}}));
}

TEST_F(NpzHostileTest, BytesOffsetsNotMonotonic) {
  EXPECT_STATUS(StatusCode::kCorruption, "not monotonic",
                Decode(BytesShard({0, 3, 2, 4}), bytes_schema_));
}

TEST_F(NpzHostileTest, BytesOffsetsNegative) {
  EXPECT_STATUS(StatusCode::kCorruption, "not monotonic",
                Decode(BytesShard({0, -1, 4}), bytes_schema_));
}

TEST_F(NpzHostileTest, BytesOffsetsPastData) {
  EXPECT_STATUS(StatusCode::kCorruption, "passes the data",
                Decode(BytesShard({0, 2, 5}), bytes_schema_));
}

TEST_F(NpzHostileTest, FixedBytesOfWrongLength) {
  EXPECT_STATUS(StatusCode::kCorruption, "needs 2",
                Decode(BytesShard({0, 1, 4}), {{"b", DType::kBytes, {2}}}));
}

TEST_F(NpzHostileTest, StrWithInvalidCodePoint) {
  std::vector<std::byte> data = Zeros(8);
  StoreLe(&data, 0, 0xd800, 4);  // A lone surrogate.
  const auto bytes = MakeZip({{"t.npy", NpyMember("<U2", {1}, data)}}, false);
  EXPECT_STATUS(StatusCode::kCorruption, "invalid code point",
                Decode(bytes, {{"t", DType::kStr, {}}}));
}

TEST_F(NpzHostileTest, StrMemberOfWrongType) {
  const auto bytes = MakeZip({{"t.npy", NpyMember("|u1", {2}, Zeros(2))}}, false);
  EXPECT_STATUS(StatusCode::kCorruption, "'<U' string array",
                Decode(bytes, {{"t", DType::kStr, {}}}));
}

TEST_F(NpzHostileTest, EmptyUnicodeDTypeCannotClaimExamples) {
  const auto bytes = MakeZip({{"t.npy", NpyMember("<U0", {1ull << 40}, {})}}, false);
  EXPECT_STATUS(StatusCode::kCorruption, "<U0", Decode(bytes, {{"t", DType::kStr, {}}}));
}

}  // namespace
}  // namespace sedpack
