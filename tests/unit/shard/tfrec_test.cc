// SPDX-License-Identifier: Apache-2.0
// tfrec specifics: TFRecord framing, the Example encoding of each dtype, the
// record-stream compressions, and hostile input (bad CRCs, truncation,
// oversized lengths, malformed or mismatching Examples): always a Status
// naming the record, never a crash or a huge allocation.
#include <zlib.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "codecs/compress_internal.h"
#include "sedpack/shard/shard.h"
#include "shard/tfrec/tfrec_internal.h"
#include "support/test_support.h"
#include "unit/shard/shard_test_util.h"

namespace sedpack {
namespace {

using testing::MakeExample;
using testing::OwnedExample;

// ---- A minimal protobuf encoder, independent of the library's generated code.

std::string Varint(std::uint64_t v) {
  std::string out;
  while (v >= 0x80) {
    out.push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
  return out;
}
std::string Field(int number, const std::string& body) {
  return Varint((static_cast<std::uint64_t>(number) << 3) | 2) + Varint(body.size()) + body;
}
std::string VarintField(int number, std::uint64_t v) {
  return Varint(static_cast<std::uint64_t>(number) << 3) + Varint(v);
}
std::string Int64Feature(const std::vector<std::int64_t>& values) {
  std::string packed;
  for (std::int64_t v : values) packed += Varint(static_cast<std::uint64_t>(v));
  return Field(3, Field(1, packed));
}
std::string FloatFeature(const std::vector<float>& values) {
  std::string packed(4 * values.size(), '\0');
  std::memcpy(packed.data(), values.data(), packed.size());
  return Field(2, Field(1, packed));
}
std::string BytesFeature(const std::vector<std::string>& values) {
  std::string list;
  for (const std::string& v : values) list += Field(1, v);
  return Field(1, list);
}
std::string HalfTensor(int dtype, const std::vector<std::int64_t>& shape, const std::string& content) {
  std::string dims;
  for (std::int64_t d : shape) dims += Field(2, VarintField(1, static_cast<std::uint64_t>(d)));
  return VarintField(1, static_cast<std::uint64_t>(dtype)) + Field(2, dims) + Field(4, content);
}
std::string ExampleOf(const std::vector<std::pair<std::string, std::string>>& features) {
  std::string entries;
  for (const auto& [name, feature] : features) entries += Field(1, Field(1, name) + Field(2, feature));
  return Field(1, entries);
}

std::vector<std::byte> Frame(const std::vector<std::string>& payloads) {
  std::vector<std::byte> out;
  for (const std::string& p : payloads) {
    const std::size_t start = out.size();
    out.resize(start + tfrec_internal::kRecordOverheadBytes + p.size());
    std::memcpy(out.data() + start + tfrec_internal::kRecordHeaderBytes, p.data(), p.size());
    tfrec_internal::FrameRecord(std::span<std::byte>(out).subspan(start));
  }
  return out;
}

Result<std::unique_ptr<DecodedShard>> Decode(const std::vector<AttributeSpec>& schema,
                                             std::vector<std::byte> bytes,
                                             Compression c = Compression::kNone,
                                             const ShardReadLimits& limits = {}) {
  return DecodeShard(ShardFileType::kTfrec, c, schema, std::move(bytes), limits);
}

std::uint64_t LoadLe(const std::vector<std::byte>& b, std::size_t off, int width) {
  std::uint64_t v = 0;
  for (int i = width - 1; i >= 0; --i) v = (v << 8) | static_cast<std::uint8_t>(b[off + i]);
  return v;
}

const std::vector<AttributeSpec> kKeySchema = {{"key", DType::kUInt8, {4}}};
const std::string kGoodExample = ExampleOf({{"key", Int64Feature({1, 2, 3, 255})}});

// ---- Framing ---------------------------------------------------------------

TEST(TfrecFramingTest, MaskedCrcOfTheCheckString) {
  const std::string s = "123456789";
  // CRC-32C 0xE3069283, rotated right by 15 and plus 0xa282ead8.
  EXPECT_EQ(tfrec_internal::MaskedCrc32c(std::as_bytes(std::span(s.data(), s.size()))),
            0xc78ab0e5u);
}

TEST(TfrecFramingTest, WriterLayoutIsTfRecord) {
  const std::vector<AttributeSpec> schema = {{"n", DType::kInt, {}}};
  const std::int64_t n = 150;
  const ValueView v[] = {ValueView::Int(n)};
  ASSERT_OK_AND_ASSIGN(auto writer, MakeShardWriter(ShardFileType::kTfrec, Compression::kNone, schema));
  ASSERT_OK(writer->Add(v));
  ASSERT_OK(writer->Add(v));
  ASSERT_OK_AND_ASSIGN(auto bytes, writer->Finish());
  // Example{features{feature{key:"n" value{int64_list{value:[150] packed}}}}}, byte for byte.
  const std::string payload = ExampleOf({{"n", Int64Feature({150})}});
  EXPECT_EQ(testing::ToHex(bytes.data(), bytes.size()),
            testing::ToHex(Frame({payload, payload}).data(), 2 * (16 + payload.size())));
  ASSERT_EQ(LoadLe(bytes, 0, 8), payload.size());
  const std::uint32_t crc = Crc32c(std::span(bytes).first(8));
  EXPECT_EQ(LoadLe(bytes, 8, 4), (((crc >> 15) | (crc << 17)) + 0xa282ead8u) & 0xffffffffu);
}

TEST(TfrecFramingTest, EmptyStreamHasNoRecords) {
  tfrec_internal::RecordReader reader({});
  ASSERT_OK_AND_ASSIGN(auto next, reader.Next());
  EXPECT_FALSE(next.has_value());
}

// ---- Encoding of each dtype --------------------------------------------------

TEST(TfrecEncodingTest, DTypesMapToTheReferencesFeatureLists) {
  const std::vector<AttributeSpec> schema = {{"i8", DType::kInt8, {2}},    {"f64", DType::kFloat64, {}},
                                             {"h", DType::kFloat16, {2, 1}}, {"t", DType::kStr, {}},
                                             {"b", DType::kBytes, {}}};
  const std::vector<std::int8_t> i8 = {-1, 7};
  const double f64 = 0.1;
  const std::vector<Float16> h = {Float16::FromFloat(1.0f), Float16::FromFloat(-2.0f)};
  const std::uint8_t raw[] = {0, 0xff};
  const ValueView values[] = {ValueView::Array(i8, {2}), ValueView::Scalar(f64),
                              ValueView::Array(h, {2, 1}), ValueView::Str("\xc3\xa9"),
                              ValueView::Bytes(std::span<const std::uint8_t>(raw))};
  ASSERT_OK_AND_ASSIGN(auto writer, MakeShardWriter(ShardFileType::kTfrec, Compression::kNone, schema));
  ASSERT_OK(writer->Add(values));
  ASSERT_OK_AND_ASSIGN(auto bytes, writer->Finish());
  std::string half_content(4, '\0');
  std::memcpy(half_content.data(), h.data(), 4);
  // Map entries sorted by key (deterministic serialization).
  const std::string expected = ExampleOf({
      {"b", BytesFeature({std::string("\x00\xff", 2)})},
      {"f64", FloatFeature({0.1f})},
      {"h", BytesFeature({HalfTensor(19, {2, 1}, half_content)})},
      {"i8", Int64Feature({-1, 7})},
      {"t", BytesFeature({"\xc3\xa9"})},
  });
  const std::vector<std::byte> framed = Frame({expected});
  EXPECT_EQ(testing::ToHex(bytes.data(), bytes.size()), testing::ToHex(framed.data(), framed.size()));
  ASSERT_OK_AND_ASSIGN(auto shard, Decode(schema, bytes));
  EXPECT_EQ(shard->Get(0, 0).At<std::int8_t>(0), -1);
  EXPECT_EQ(shard->Get(0, 1).At<double>(0), static_cast<double>(0.1f));  // float32 precision
  EXPECT_EQ(shard->Get(0, 2).At<Float16>(1).ToFloat(), -2.0f);
  EXPECT_EQ(shard->Get(0, 3).AsStringView(), "\xc3\xa9");
  EXPECT_EQ(shard->Get(0, 3).dtype, DType::kStr);
}

TEST(TfrecEncodingTest, ReaderAcceptsInt16AndUnpackedInt64) {
  // The reference reads int16 (as int64); protobuf readers accept unpacked repeated fields.
  const std::vector<AttributeSpec> schema = {{"s", DType::kInt16, {2}}};
  const std::string unpacked = VarintField(1, static_cast<std::uint64_t>(-300)) + VarintField(1, 300);
  ASSERT_OK_AND_ASSIGN(auto shard, Decode(schema, Frame({ExampleOf({{"s", Field(3, unpacked)}})})));
  EXPECT_EQ(shard->Get(0, 0).At<std::int16_t>(0), -300);
  EXPECT_EQ(shard->Get(0, 0).At<std::int16_t>(1), 300);
}

TEST(TfrecEncodingTest, Float64OutOfFloat32RangeBecomesInfinity) {
  const std::vector<AttributeSpec> schema = {{"d", DType::kFloat64, {2}}};
  const std::vector<double> d = {1e300, -1e-300};
  const ValueView v[] = {ValueView::Array(d, {2})};
  ASSERT_OK_AND_ASSIGN(auto writer, MakeShardWriter(ShardFileType::kTfrec, Compression::kNone, schema));
  ASSERT_OK(writer->Add(v));
  ASSERT_OK_AND_ASSIGN(auto bytes, writer->Finish());
  ASSERT_OK_AND_ASSIGN(auto shard, Decode(schema, bytes));
  EXPECT_TRUE(std::isinf(shard->Get(0, 0).At<double>(0)));
  EXPECT_EQ(shard->Get(0, 0).At<double>(1), 0.0);
}

// ---- Compressions ---------------------------------------------------------------

std::vector<std::byte> WriteKeys(Compression c, int n) {
  std::vector<OwnedExample> examples;
  for (int i = 0; i < n; ++i) examples.push_back(MakeExample(kKeySchema, i));
  return testing::WriteShard(ShardFileType::kTfrec, c, kKeySchema, examples);
}

TEST(TfrecCompressionTest, ZlibIsARealZlibStreamAndGzipAGzipMember) {
  const std::vector<std::byte> plain = WriteKeys(Compression::kNone, 20);
  const std::vector<std::byte> z = WriteKeys(Compression::kZlib, 20);
  const std::vector<std::byte> g = WriteKeys(Compression::kGzip, 20);
  ASSERT_GE(z.size(), 2u);
  EXPECT_EQ(static_cast<int>(z[0]), 0x78);  // CMF: deflate, 32 KiB window.
  EXPECT_EQ(((static_cast<int>(z[0]) << 8) | static_cast<int>(z[1])) % 31, 0);  // FCHECK
  std::vector<Bytef> out(plain.size() + 16);
  uLongf out_len = out.size();
  ASSERT_EQ(uncompress(out.data(), &out_len, reinterpret_cast<const Bytef*>(z.data()), z.size()), Z_OK);
  ASSERT_EQ(out_len, plain.size());
  EXPECT_EQ(std::memcmp(out.data(), plain.data(), plain.size()), 0);
  ASSERT_GE(g.size(), 2u);
  EXPECT_EQ(static_cast<int>(g[0]), 0x1f);
  EXPECT_EQ(static_cast<int>(g[1]), 0x8b);
  // A gzip file is not a zlib stream and vice versa.
  EXPECT_STATUS(StatusCode::kCorruption, "ZLIB", Decode(kKeySchema, g, Compression::kZlib));
  EXPECT_STATUS(StatusCode::kCorruption, "GZIP", Decode(kKeySchema, z, Compression::kGzip));
}

TEST(TfrecCompressionTest, TrailingDataAfterTheZlibStreamIsCorruption) {
  std::vector<std::byte> z = WriteKeys(Compression::kZlib, 3);
  z.push_back(std::byte{0});
  EXPECT_STATUS(StatusCode::kCorruption, "trailing data", Decode(kKeySchema, z, Compression::kZlib));
}

TEST(TfrecCompressionTest, DecompressionStopsAtTheLimit) {
  ShardReadLimits limits;
  limits.max_decompressed_bytes = 100;
  for (Compression c : {Compression::kNone, Compression::kGzip, Compression::kZlib}) {
    EXPECT_STATUS(StatusCode::kResourceExhausted, "limit",
                  Decode(kKeySchema, WriteKeys(c, 50), c, limits));
  }
}

// ---- Hostile records --------------------------------------------------------------

TEST(TfrecHostileTest, BadPayloadCrcNamesTheRecord) {
  std::vector<std::byte> b = Frame({kGoodExample, kGoodExample, kGoodExample});
  const std::size_t second = 16 + kGoodExample.size();
  b[second + 12 + 3] ^= std::byte{0x40};
  EXPECT_STATUS(StatusCode::kCorruption, "record 1 (at byte " + std::to_string(second) +
                                             "): CRC mismatch in the " +
                                             std::to_string(kGoodExample.size()) + "-byte payload",
                Decode(kKeySchema, b));
}

TEST(TfrecHostileTest, BadLengthCrc) {
  std::vector<std::byte> b = Frame({kGoodExample, kGoodExample});
  b[8] ^= std::byte{1};  // The masked CRC of the length.
  EXPECT_STATUS(StatusCode::kCorruption, "record 0 (at byte 0): CRC mismatch in the length header",
                Decode(kKeySchema, b));
}

TEST(TfrecHostileTest, TruncatedFiles) {
  const std::vector<std::byte> full = Frame({kGoodExample, kGoodExample});
  const std::size_t second = 16 + kGoodExample.size();
  // Every cut inside the second record is an error; cuts at record boundaries are not.
  for (std::size_t cut = second + 1; cut < full.size(); ++cut) {
    std::vector<std::byte> b(full.begin(), full.begin() + static_cast<std::ptrdiff_t>(cut));
    SCOPED_TRACE(cut);
    EXPECT_STATUS(StatusCode::kCorruption, "record 1", Decode(kKeySchema, b));
    EXPECT_STATUS(StatusCode::kCorruption, "truncated", Decode(kKeySchema, b));
  }
  std::vector<std::byte> b(full.begin(), full.begin() + static_cast<std::ptrdiff_t>(second));
  ASSERT_OK_AND_ASSIGN(auto shard, Decode(kKeySchema, b));
  EXPECT_EQ(shard->num_examples(), 1u);
}

// A header with a correct CRC for an arbitrary length.
std::vector<std::byte> Header(std::uint64_t length) {
  std::vector<std::byte> h(12);
  testing::StoreLe(&h, 0, length, 8);
  testing::StoreLe(&h, 8, tfrec_internal::MaskedCrc32c(std::span(h).first(8)), 4);
  return h;
}

TEST(TfrecHostileTest, OversizedLengthsAreRefusedBeforeAllocation) {
  for (std::uint64_t length : {std::uint64_t{1} << 40, ~std::uint64_t{0}, std::uint64_t{1} << 31}) {
    std::vector<std::byte> b = Frame({kGoodExample});
    const std::vector<std::byte> h = Header(length);
    b.insert(b.end(), h.begin(), h.end());
    b.resize(b.size() + 64);
    SCOPED_TRACE(length);
    EXPECT_STATUS(StatusCode::kCorruption, "record 1", Decode(kKeySchema, b));
    EXPECT_STATUS(StatusCode::kCorruption, "exceeds the limit", Decode(kKeySchema, b));
  }
  // Within the limit but past the end of the file.
  std::vector<std::byte> b = Header(1000);
  b.resize(b.size() + 100);
  EXPECT_STATUS(StatusCode::kCorruption, "truncated: length 1000 needs 1004 more bytes, only 100 left",
                Decode(kKeySchema, b));
}

TEST(TfrecHostileTest, MalformedOrMismatchingExamples) {
  struct Case {
    std::string payload;
    std::string error;
  };
  const std::vector<Case> cases = {
      {"\xff\xff\xff", "record 1: not a valid tf.train.Example"},
      {ExampleOf({{"other", Int64Feature({1, 2, 3, 4})}}),
       "attribute \"key\" is missing from the example"},
      {ExampleOf({{"key", FloatFeature({1, 2, 3, 4})}}), "expected a int64_list, got float_list"},
      {ExampleOf({{"key", Int64Feature({1, 2, 3})}}), "expected 4 values in its int64_list, got 3"},
      {ExampleOf({{"key", Int64Feature({1, 2, 3, 256})}}), "value 256 does not fit dtype uint8"},
      {ExampleOf({{"key", Int64Feature({1, -1, 3, 4})}}), "value -1 does not fit dtype uint8"},
      {ExampleOf({{"key", ""}}), "expected a int64_list, got no list"},
  };
  for (const Case& c : cases) {
    EXPECT_STATUS(StatusCode::kCorruption, c.error,
                  Decode(kKeySchema, Frame({kGoodExample, c.payload})));
  }
}

TEST(TfrecHostileTest, MalformedValuesOfEachKind) {
  const std::vector<AttributeSpec> schema = {{"h", DType::kFloat16, {2}},
                                             {"t", DType::kStr, {}},
                                             {"fixed", DType::kBytes, {3}}};
  const std::string good_h = BytesFeature({HalfTensor(19, {2}, "abcd")});
  const std::string good_t = BytesFeature({"text"});
  const std::string good_f = BytesFeature({"xyz"});
  auto ex = [&](const std::string& h, const std::string& t, const std::string& f) {
    return Frame({ExampleOf({{"h", h}, {"t", t}, {"fixed", f}})});
  };
  ASSERT_OK_AND_ASSIGN(auto shard, Decode(schema, ex(good_h, good_t, good_f)));
  EXPECT_EQ(shard->Get(0, 0).AsStringView(), "abcd");
  EXPECT_EQ(shard->Get(0, 2).AsStringView(), "xyz");
  EXPECT_STATUS(StatusCode::kCorruption, "TensorFlow dtype 1, expected DT_HALF",
                Decode(schema, ex(BytesFeature({HalfTensor(1, {2}, "abcd")}), good_t, good_f)));
  EXPECT_STATUS(StatusCode::kCorruption, "shape (1, 2), expected (2,)",
                Decode(schema, ex(BytesFeature({HalfTensor(19, {1, 2}, "abcd")}), good_t, good_f)));
  EXPECT_STATUS(StatusCode::kCorruption, "tensor_content has 6 bytes, expected 4",
                Decode(schema, ex(BytesFeature({HalfTensor(19, {2}, "abcdef")}), good_t, good_f)));
  EXPECT_STATUS(StatusCode::kCorruption, "not a valid serialized TensorProto",
                Decode(schema, ex(BytesFeature({"\xff"}), good_t, good_f)));
  EXPECT_STATUS(StatusCode::kCorruption, "expected 1 values in its bytes_list, got 2",
                Decode(schema, ex(good_h, BytesFeature({"a", "b"}), good_f)));
  EXPECT_STATUS(StatusCode::kCorruption, "attribute \"t\": str value is not valid UTF-8",
                Decode(schema, ex(good_h, BytesFeature({"\xc3"}), good_f)));
  EXPECT_STATUS(StatusCode::kCorruption, "attribute \"fixed\": expected 3 bytes, got 2",
                Decode(schema, ex(good_h, good_t, BytesFeature({"xy"}))));
}

TEST(TfrecHostileTest, RandomDamageNeverCrashes) {
  const auto schema = std::vector<AttributeSpec>{{"h", DType::kFloat16, {3}},
                                                 {"n", DType::kInt, {}},
                                                 {"f", DType::kFloat32, {2}},
                                                 {"t", DType::kStr, {}},
                                                 {"b", DType::kBytes, {}}};
  std::vector<OwnedExample> examples;
  for (int i = 0; i < 6; ++i) examples.push_back(MakeExample(schema, i));
  std::mt19937 rng(7);
  for (Compression c : {Compression::kNone, Compression::kGzip, Compression::kZlib}) {
    const auto good = testing::WriteShard(ShardFileType::kTfrec, c, schema, examples);
    ASSERT_OK(Decode(schema, good, c).status());
    for (int trial = 0; trial < 300; ++trial) {
      std::vector<std::byte> b = good;
      const int flips = 1 + static_cast<int>(rng() % 4);
      for (int k = 0; k < flips; ++k) b[rng() % b.size()] ^= static_cast<std::byte>(1 + rng() % 255);
      if (trial % 5 == 0) b.resize(rng() % b.size());
      auto decoded = Decode(schema, b, c);
      if (!decoded.ok()) {
        EXPECT_TRUE(decoded.status().code() == StatusCode::kCorruption ||
                    decoded.status().code() == StatusCode::kResourceExhausted)
            << decoded.status().ToString();
      }
    }
  }
}

}  // namespace
}  // namespace sedpack
