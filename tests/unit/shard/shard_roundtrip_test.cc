// SPDX-License-Identifier: Apache-2.0
// Write -> Finish -> DecodeShard over every dtype, all three formats and every
// compression each format allows (tfrec: the dtypes it can store; the others
// are refused, see shard_errors_test.cc).
#include <cstring>
#include <string>
#include <tuple>
#include <vector>

#include "sedpack/shard/shard.h"
#include "shard/tfrec/tfrec_internal.h"
#include "support/test_support.h"
#include "unit/shard/shard_test_util.h"

namespace sedpack {
namespace {

using testing::MakeExample;
using testing::OwnedExample;
using testing::ToHex;

std::string Hex(std::span<const std::byte> data) { return ToHex(data.data(), data.size()); }

using Combo = std::tuple<ShardFileType, Compression>;

std::vector<Combo> AllowedCombos() {
  std::vector<Combo> out;
  for (ShardFileType t : {ShardFileType::kFb, ShardFileType::kNpz, ShardFileType::kTfrec}) {
    for (Compression c :
         {Compression::kNone, Compression::kGzip, Compression::kZlib, Compression::kBz2,
          Compression::kLzma, Compression::kLz4, Compression::kZstd, Compression::kZip}) {
      if (CompressionAllowed(t, c)) out.emplace_back(t, c);
    }
  }
  return out;
}

class RoundTripTest : public ::testing::TestWithParam<Combo> {
 protected:
  ShardFileType type() const { return std::get<0>(GetParam()); }
  Compression compression() const { return std::get<1>(GetParam()); }

  // The value a reader returns for what was written (npz drops trailing NULs
  // of str; tfrec stores float64 as float32).
  std::string ExpectedHex(const AttributeSpec& spec, const ValueView& written) const {
    std::string_view data = written.AsStringView();
    if (type() == ShardFileType::kNpz && spec.dtype == DType::kStr) {
      while (!data.empty() && data.back() == '\0') data.remove_suffix(1);
    }
    if (type() == ShardFileType::kTfrec && spec.dtype == DType::kFloat64) {
      std::vector<std::byte> narrowed(written.data.size());
      for (std::size_t i = 0; i < narrowed.size() / 8; ++i) {
        const double d = static_cast<float>(written.At<double>(i));
        std::memcpy(narrowed.data() + 8 * i, &d, 8);
      }
      return Hex(narrowed);
    }
    return ToHex(reinterpret_cast<const std::byte*>(data.data()), data.size());
  }

  // `schema` without the attributes this format cannot store.
  std::vector<AttributeSpec> Storable(std::vector<AttributeSpec> schema) const {
    if (type() == ShardFileType::kTfrec) {
      std::erase_if(schema, [](const AttributeSpec& spec) {
        return !tfrec_internal::TfrecSupportsDType(spec.dtype, /*for_reading=*/false);
      });
    }
    return schema;
  }

  void RoundTrip(const std::vector<AttributeSpec>& schema,
                 const std::vector<OwnedExample>& examples) {
    ASSERT_OK_AND_ASSIGN(auto writer, MakeShardWriter(type(), compression(), schema));
    std::uint64_t bound = writer->buffered_bytes();
    for (const OwnedExample& ex : examples) {
      const std::uint64_t estimate = writer->EstimateAddedBytes(ex.views);
      ASSERT_OK(writer->Add(ex.views));
      // Estimates are upper bounds: what was buffered never passes their sum.
      bound += estimate;
      EXPECT_LE(writer->buffered_bytes(), bound);
    }
    EXPECT_EQ(writer->num_examples(), examples.size());
    const std::uint64_t buffered = writer->buffered_bytes();
    ASSERT_OK_AND_ASSIGN(auto bytes, writer->Finish());
    if (compression() == Compression::kNone || compression() == Compression::kZip) {
      EXPECT_LE(bytes.size(), buffered);
    }
    ASSERT_OK_AND_ASSIGN(auto shard, DecodeShard(type(), compression(), schema, std::move(bytes)));
    ASSERT_EQ(shard->num_examples(), examples.size());
    ASSERT_EQ(shard->num_attributes(), schema.size());
    for (std::size_t i = 0; i < examples.size(); ++i) {
      for (std::size_t j = 0; j < schema.size(); ++j) {
        const ValueView v = shard->Get(i, j);
        EXPECT_EQ(Hex(v.data), ExpectedHex(schema[j], examples[i].views[j]))
            << "example " << i << " attribute " << schema[j].name;
        EXPECT_EQ(v.dtype, schema[j].dtype) << schema[j].name;
        EXPECT_EQ(v.shape, schema[j].IsVariableSize() ? Shape{} : schema[j].shape);
      }
    }
  }
};

TEST_P(RoundTripTest, EveryDType) {
  const auto schema = Storable(testing::AllDTypesSchema());
  std::vector<OwnedExample> examples;
  for (int i = 0; i < 9; ++i) examples.push_back(MakeExample(schema, i));
  RoundTrip(schema, examples);
}

TEST_P(RoundTripTest, SingleExample) {
  const auto schema = Storable(testing::AllDTypesSchema());
  RoundTrip(schema, {MakeExample(schema, 1)});
}

TEST_P(RoundTripTest, FirstAttributeBytesAndStrOnly) {
  // npz takes the example count from the offsets when the first attribute is bytes.
  const std::vector<AttributeSpec> schema = {{"blob", DType::kBytes, {}}, {"t", DType::kStr, {}}};
  std::vector<OwnedExample> examples;
  for (int i = 0; i < 5; ++i) examples.push_back(MakeExample(schema, i * 4));  // All empty.
  RoundTrip(schema, examples);
}

TEST_P(RoundTripTest, NonAsciiAttributeNames) {
  const std::vector<AttributeSpec> schema = {{"t\xc3\xa9xt", DType::kStr, {}},
                                             {"d", DType::kBytes, {}},
                                             {"\xce\xbb", DType::kFloat64, {2}}};
  std::vector<OwnedExample> examples;
  for (int i = 0; i < 4; ++i) examples.push_back(MakeExample(schema, i));
  RoundTrip(schema, examples);
}

TEST_P(RoundTripTest, LargeExamplesGrowTheBuffers) {
  // The writers size their buffers from the first example; later examples that
  // are far larger (up to ~1 MB) make them grow.
  // tfrec has no int16; int32 gives its writer as many bytes per element to grow for.
  const DType trace = type() == ShardFileType::kTfrec ? DType::kInt32 : DType::kInt16;
  const std::vector<AttributeSpec> schema = {
      {"trace", trace, {2000}}, {"key", DType::kUInt8, {16}}, {"blob", DType::kBytes, {}}};
  std::vector<OwnedExample> examples;
  for (int i = 0; i < 16; ++i) {
    OwnedExample ex = MakeExample(schema, i);
    ex.storage[2].resize(static_cast<std::size_t>(i) * 64000, std::byte{7});
    ex.views[2].data = ex.storage[2];
    examples.push_back(std::move(ex));
  }
  RoundTrip(schema, examples);
}

TEST_P(RoundTripTest, EmptyShardIsValid) {
  const auto schema = Storable(testing::AllDTypesSchema());
  ASSERT_OK_AND_ASSIGN(auto writer, MakeShardWriter(type(), compression(), schema));
  ASSERT_OK_AND_ASSIGN(auto bytes, writer->Finish());
  // The first attribute is numeric, so npz has no way to carry 0 examples
  // other than a (0, ...) array; every format must decode to an empty shard.
  ASSERT_OK_AND_ASSIGN(auto shard, DecodeShard(type(), compression(), schema, std::move(bytes)));
  EXPECT_EQ(shard->num_examples(), 0u);
}

INSTANTIATE_TEST_SUITE_P(AllFormats, RoundTripTest, ::testing::ValuesIn(AllowedCombos()),
                         [](const auto& info) {
                           std::string c(CompressionName(std::get<1>(info.param)));
                           return std::string(ShardFileTypeName(std::get<0>(info.param))) + "_" +
                                  (c.empty() ? "none" : c);
                         });

TEST(NpzQuirksTest, StrTrailingNulsAreDroppedLikeNumpy) {
  const std::vector<AttributeSpec> schema = {{"t", DType::kStr, {}}};
  const std::string text("ab\0\0", 4);
  const ValueView v[] = {ValueView::Str(text)};
  ASSERT_OK_AND_ASSIGN(auto writer,
                       MakeShardWriter(ShardFileType::kNpz, Compression::kNone, schema));
  ASSERT_OK(writer->Add(v));
  ASSERT_OK_AND_ASSIGN(auto bytes, writer->Finish());
  ASSERT_OK_AND_ASSIGN(auto shard,
                       DecodeShard(ShardFileType::kNpz, Compression::kNone, schema, bytes));
  EXPECT_EQ(shard->Get(0, 0).AsStringView(), "ab");
}

TEST(NpzQuirksTest, StoredDTypeIsReturnedWithoutCast) {
  // The reference stores what it is given: float64 values for a float32 attribute.
  const std::vector<double> values = {1.5, -2.25};
  std::vector<std::byte> data(16);
  std::memcpy(data.data(), values.data(), 16);
  const auto file = testing::MakeZip({{"x.npy", testing::NpyMember("<f8", {2}, data)}}, false);
  const std::vector<AttributeSpec> schema = {{"x", DType::kFloat32, {}}};
  ASSERT_OK_AND_ASSIGN(auto shard,
                       DecodeShard(ShardFileType::kNpz, Compression::kNone, schema, file));
  ASSERT_EQ(shard->num_examples(), 2u);
  EXPECT_EQ(shard->Get(1, 0).dtype, DType::kFloat64);
  EXPECT_EQ(shard->Get(1, 0).At<double>(0), -2.25);
}

TEST(FbQuirksTest, EmptyPythonBytesReadBackAsOneNulByte) {
  // Python's b"" is stored as one 00 byte; the reader returns what is on disk.
  const std::vector<AttributeSpec> schema = {{"b", DType::kBytes, {}}};
  const std::uint8_t nul[] = {0};
  const ValueView v[] = {ValueView::Bytes(std::span<const std::uint8_t>(nul))};
  ASSERT_OK_AND_ASSIGN(auto writer,
                       MakeShardWriter(ShardFileType::kFb, Compression::kNone, schema));
  ASSERT_OK(writer->Add(v));
  ASSERT_OK_AND_ASSIGN(auto bytes, writer->Finish());
  ASSERT_OK_AND_ASSIGN(auto shard,
                       DecodeShard(ShardFileType::kFb, Compression::kNone, schema, bytes));
  EXPECT_EQ(Hex(shard->Get(0, 0).data), "00");
}

TEST(FbLayoutTest, DataIsAlignedAsTheReferenceRequires) {
  const auto schema = testing::AllDTypesSchema();
  std::vector<OwnedExample> examples;
  for (int i = 0; i < 6; ++i) examples.push_back(MakeExample(schema, i));
  const auto bytes = testing::WriteShard(ShardFileType::kFb, Compression::kNone, schema, examples);
  ASSERT_OK_AND_ASSIGN(auto shard,
                       DecodeShard(ShardFileType::kFb, Compression::kNone, schema, bytes));
  // Views point into the decoded buffer, which for "" is the file itself (moved).
  for (std::size_t i = 0; i < shard->num_examples(); ++i) {
    for (std::size_t j = 0; j < schema.size(); ++j) {
      const ValueView v = shard->Get(i, j);
      if (v.data.empty()) continue;
      // The buffer start is 16-aligned (malloc), so the address shows the offset's alignment.
      const auto addr = reinterpret_cast<std::uintptr_t>(v.data.data());
      EXPECT_EQ(addr % schema[j].FbAlignment(), 0u) << schema[j].name;
    }
  }
}

}  // namespace
}  // namespace sedpack
