// SPDX-License-Identifier: Apache-2.0
// Refusals at writer creation and on Add(); a refused example changes nothing.
#include <algorithm>
#include <string>
#include <vector>

#include "sedpack/shard/shard.h"
#include "support/test_support.h"
#include "unit/shard/shard_test_util.h"

namespace sedpack {
namespace {

using testing::MakeExample;

const std::vector<AttributeSpec> kSchema = {{"x", DType::kFloat32, {2, 3}},
                                            {"n", DType::kInt, {}},
                                            {"t", DType::kStr, {}},
                                            {"fixed", DType::kBytes, {4}}};

TEST(MakeShardWriterTest, TfrecRefusesDTypesTheReferenceCannotWrite) {
  // The reference's to_tfrecord raises "Unsupported dtype" for these.
  for (DType d : {DType::kBool, DType::kInt16, DType::kUInt16, DType::kUInt32, DType::kUInt64}) {
    const std::vector<AttributeSpec> schema = {{"ok", DType::kUInt8, {2}}, {"bad", d, {3}}};
    const std::string name(DTypeName(d));
    EXPECT_STATUS(StatusCode::kInvalidArgument,
                  "attribute \"bad\" has dtype " + name + ", which tfrec shards cannot store",
                  MakeShardWriter(ShardFileType::kTfrec, Compression::kNone, schema));
    // Its reader parses int16 (as int64); the others it cannot read either.
    const auto decoded = DecodeShard(ShardFileType::kTfrec, Compression::kNone, schema, {});
    if (d == DType::kInt16) {
      EXPECT_OK(decoded.status());
    } else {
      EXPECT_STATUS(StatusCode::kInvalidArgument, "cannot hold", decoded);
    }
  }
  // Everything else it writes.
  for (DType d : {DType::kInt8, DType::kUInt8, DType::kInt32, DType::kInt64, DType::kFloat16,
                  DType::kFloat32, DType::kFloat64, DType::kBytes}) {
    EXPECT_OK(MakeShardWriter(ShardFileType::kTfrec, Compression::kGzip, {{"x", d, {2}}}).status());
  }
  EXPECT_OK(MakeShardWriter(ShardFileType::kTfrec, Compression::kZlib,
                            {{"n", DType::kInt, {}}, {"t", DType::kStr, {}}})
                .status());
}

TEST(MakeShardWriterTest, TfrecAllowsOnlyNoneGzipAndZlib) {
  for (Compression c : {Compression::kBz2, Compression::kLzma, Compression::kLz4,
                        Compression::kZstd, Compression::kZip}) {
    EXPECT_STATUS(StatusCode::kInvalidArgument, "not allowed for tfrec",
                  MakeShardWriter(ShardFileType::kTfrec, c, kSchema));
    EXPECT_STATUS(StatusCode::kInvalidArgument, "not allowed for tfrec",
                  DecodeShard(ShardFileType::kTfrec, c, kSchema, {}));
  }
}

TEST(MakeShardWriterTest, RefusesCompressionNotAllowedForTheType) {
  EXPECT_STATUS(StatusCode::kInvalidArgument, "ZIP",
                MakeShardWriter(ShardFileType::kFb, Compression::kZip, kSchema));
  for (Compression c : {Compression::kGzip, Compression::kZlib, Compression::kBz2,
                        Compression::kLzma, Compression::kLz4, Compression::kZstd}) {
    EXPECT_STATUS(StatusCode::kInvalidArgument, "not allowed for npz",
                  MakeShardWriter(ShardFileType::kNpz, c, kSchema));
  }
  EXPECT_STATUS(StatusCode::kInvalidArgument, "not allowed",
                DecodeShard(ShardFileType::kFb, Compression::kZip, kSchema, {}));
}

TEST(MakeShardWriterTest, RefusesBadSchemas) {
  EXPECT_STATUS(StatusCode::kInvalidArgument, "at least one attribute",
                MakeShardWriter(ShardFileType::kFb, Compression::kNone, {}));
  EXPECT_STATUS(StatusCode::kInvalidArgument, "duplicate attribute name",
                MakeShardWriter(ShardFileType::kNpz, Compression::kNone,
                                {{"a", DType::kUInt8, {}}, {"a", DType::kInt8, {}}}));
  EXPECT_STATUS(StatusCode::kInvalidArgument, "int",
                MakeShardWriter(ShardFileType::kFb, Compression::kNone, {{"n", DType::kInt, {2}}}));
  EXPECT_STATUS(
      StatusCode::kInvalidArgument, "strictly positive",
      MakeShardWriter(ShardFileType::kFb, Compression::kNone, {{"x", DType::kFloat32, {0, 2}}}));
}

class AddErrorsTest : public ::testing::TestWithParam<ShardFileType> {
 protected:
  // Add a valid example, try `bad`, check nothing changed, then add another
  // valid example and check the shard holds exactly the two valid ones.
  void ExpectRejected(std::vector<ValueView> bad, const std::string& substr) {
    ASSERT_OK_AND_ASSIGN(auto writer, MakeShardWriter(GetParam(), Compression::kNone, kSchema));
    const auto good0 = MakeExample(kSchema, 1);
    const auto good1 = MakeExample(kSchema, 2);
    ASSERT_OK(writer->Add(good0.views));
    const std::uint64_t buffered = writer->buffered_bytes();
    EXPECT_STATUS(StatusCode::kInvalidArgument, substr, writer->Add(bad));
    EXPECT_EQ(writer->num_examples(), 1u);
    EXPECT_EQ(writer->buffered_bytes(), buffered);
    ASSERT_OK(writer->Add(good1.views));
    ASSERT_OK_AND_ASSIGN(auto bytes, writer->Finish());
    ASSERT_OK_AND_ASSIGN(auto shard, DecodeShard(GetParam(), Compression::kNone, kSchema, bytes));
    ASSERT_EQ(shard->num_examples(), 2u);
    for (std::size_t j = 0; j < kSchema.size(); ++j) {
      EXPECT_TRUE(std::ranges::equal(shard->Get(0, j).data, good0.views[j].data));
      EXPECT_TRUE(std::ranges::equal(shard->Get(1, j).data, good1.views[j].data));
    }
  }

  std::vector<ValueView> Valid() {
    keep_ = MakeExample(kSchema, 3);
    return keep_.views;
  }
  testing::OwnedExample keep_;
};

TEST_P(AddErrorsTest, WrongDType) {
  auto v = Valid();
  v[0].dtype = DType::kFloat64;
  ExpectRejected(v, "dtype");
}

TEST_P(AddErrorsTest, WrongShape) {
  auto v = Valid();
  v[0].shape = {3, 2};
  ExpectRejected(v, "shape");
}

TEST_P(AddErrorsTest, WrongByteSize) {
  auto v = Valid();
  v[0].data = v[0].data.first(20);
  ExpectRejected(v, "bytes");
}

TEST_P(AddErrorsTest, FixedBytesOfWrongLength) {
  auto v = Valid();
  v[3].data = v[3].data.first(3);
  ExpectRejected(v, "fixed");
}

TEST_P(AddErrorsTest, IntMustBeEightBytes) {
  auto v = Valid();
  v[1].data = v[1].data.first(4);
  ExpectRejected(v, "\"n\"");
}

TEST_P(AddErrorsTest, WrongNumberOfValues) {
  auto v = Valid();
  v.pop_back();
  ExpectRejected(v, "4 attribute values");
}

TEST_P(AddErrorsTest, InvalidUtf8Text) {
  auto v = Valid();
  v[2] = ValueView::Str("bad \xff\xfe text");
  ExpectRejected(v, "UTF-8");
}

TEST_P(AddErrorsTest, ShapedValueForVariableSizeAttribute) {
  auto v = Valid();
  v[2].shape = {3};
  ExpectRejected(v, "variable-size");
}

INSTANTIATE_TEST_SUITE_P(AllFormats, AddErrorsTest,
                         ::testing::Values(ShardFileType::kFb, ShardFileType::kNpz,
                                           ShardFileType::kTfrec),
                         [](const auto& info) {
                           return std::string(ShardFileTypeName(info.param));
                         });

TEST(WriterLifecycleTest, NoUseAfterFinish) {
  for (ShardFileType t : {ShardFileType::kFb, ShardFileType::kNpz, ShardFileType::kTfrec}) {
    ASSERT_OK_AND_ASSIGN(auto writer, MakeShardWriter(t, Compression::kNone, kSchema));
    const auto ex = MakeExample(kSchema, 0);
    ASSERT_OK(writer->Add(ex.views));
    ASSERT_OK(writer->Finish().status());
    EXPECT_STATUS(StatusCode::kInvalidArgument, "Finish", writer->Add(ex.views));
    EXPECT_STATUS(StatusCode::kInvalidArgument, "Finish", writer->Finish());
  }
}

}  // namespace
}  // namespace sedpack
