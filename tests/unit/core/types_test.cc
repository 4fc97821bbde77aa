// SPDX-License-Identifier: Apache-2.0
#include "sedpack/types.h"

#include "support/test_support.h"

namespace sedpack {
namespace {

TEST(TypesTest, DTypeNamesRoundTrip) {
  for (DType d : {DType::kBool, DType::kInt8, DType::kInt16, DType::kInt32, DType::kInt64,
                  DType::kUInt8, DType::kUInt16, DType::kUInt32, DType::kUInt64, DType::kFloat16,
                  DType::kFloat32, DType::kFloat64, DType::kInt, DType::kStr, DType::kBytes}) {
    ASSERT_OK_AND_ASSIGN(DType parsed, ParseDType(DTypeName(d)));
    EXPECT_EQ(parsed, d) << DTypeName(d);
  }
}

TEST(TypesTest, NumpyAliases) {
  EXPECT_EQ(*ParseDType("<f4"), DType::kFloat32);
  EXPECT_EQ(*ParseDType("|u1"), DType::kUInt8);
  EXPECT_EQ(*ParseDType(">i4"), DType::kInt32);
  EXPECT_EQ(*ParseDType("?"), DType::kBool);
  EXPECT_STATUS(StatusCode::kInvalidArgument, "complex64", ParseDType("complex64"));
}

TEST(TypesTest, EnumsRejectWrongCase) {
  EXPECT_STATUS(StatusCode::kInvalidArgument, "zstd", ParseCompression("zstd"));
  EXPECT_STATUS(StatusCode::kInvalidArgument, "blake2b", ParseHashAlgorithm("blake2b"));
  EXPECT_STATUS(StatusCode::kInvalidArgument, "validation", ParseSplit("validation"));
  EXPECT_STATUS(StatusCode::kInvalidArgument, "npy", ParseShardFileType("npy"));
  EXPECT_EQ(*ParseCompression(""), Compression::kNone);
  EXPECT_EQ(CompressionName(Compression::kNone), "");
}

TEST(TypesTest, CompressionMatrix) {
  EXPECT_TRUE(CompressionAllowed(ShardFileType::kFb, Compression::kZstd));
  EXPECT_FALSE(CompressionAllowed(ShardFileType::kFb, Compression::kZip));
  EXPECT_TRUE(CompressionAllowed(ShardFileType::kNpz, Compression::kZip));
  EXPECT_FALSE(CompressionAllowed(ShardFileType::kNpz, Compression::kGzip));
  EXPECT_FALSE(CompressionAllowed(ShardFileType::kTfrec, Compression::kLz4));
}

TEST(TypesTest, ShapeChecks) {
  EXPECT_EQ(ShapeToString({}), "()");
  EXPECT_EQ(ShapeToString({5}), "(5,)");
  EXPECT_EQ(ShapeToString({3, 4}), "(3, 4)");
  EXPECT_EQ(*ShapeElementCount({3, 4}), 12u);
  EXPECT_STATUS(StatusCode::kInvalidArgument, "strictly positive", ShapeElementCount({3, 0}));
  EXPECT_STATUS(StatusCode::kInvalidArgument, "too large",
                ShapeElementCount({1LL << 40, 1LL << 40}));
}

TEST(TypesTest, AttributeSizes) {
  AttributeSpec trace{"trace", DType::kFloat16, {80000}};
  EXPECT_EQ(*trace.FixedByteSize(), 160000u);
  EXPECT_EQ(trace.FbAlignment(), 2u);
  AttributeSpec blob{"blob", DType::kBytes, {}};
  EXPECT_TRUE(blob.IsVariableSize());
  EXPECT_FALSE(blob.FixedByteSize().ok());
  EXPECT_EQ(blob.FbAlignment(), 16u);
  AttributeSpec fixed{"fixed", DType::kBytes, {8}};
  EXPECT_FALSE(fixed.IsVariableSize());
  EXPECT_EQ(*fixed.FixedByteSize(), 8u);
  AttributeSpec n{"n", DType::kInt, {}};
  EXPECT_EQ(*n.FixedByteSize(), 8u);
}

}  // namespace
}  // namespace sedpack
