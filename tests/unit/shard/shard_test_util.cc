// SPDX-License-Identifier: Apache-2.0
#include "unit/shard/shard_test_util.h"

#include <fstream>
#include <iterator>
#include <random>

#include "npy/npy_internal.h"
#include "npy/zip_internal.h"
#include "support/test_support.h"

namespace sedpack::testing {

std::vector<std::byte> ReadFileBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in.good()) << "cannot open " << path;
  std::vector<char> chars((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::byte> out(chars.size());
  for (std::size_t i = 0; i < chars.size(); ++i) out[i] = static_cast<std::byte>(chars[i]);
  return out;
}

OwnedExample MakeExample(const std::vector<AttributeSpec>& schema, int index) {
  static const char* const kTexts[] = {"",
                                       "hello",
                                       "h\xc3\xa9llo w\xc3\xb6rld",
                                       "\xf0\x9f\x99\x82",
                                       ("a\x00"
                                        "b"),
                                       "\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac 3 euros",
                                       "x"};
  std::mt19937 rng(static_cast<unsigned>(1234 + index));
  OwnedExample ex;
  ex.storage.resize(schema.size());
  for (std::size_t j = 0; j < schema.size(); ++j) {
    const AttributeSpec& spec = schema[j];
    std::vector<std::byte>& data = ex.storage[j];
    if (spec.dtype == DType::kStr) {
      const std::string text =
          index % 7 == 4 ? std::string("a\0b", 3) : std::string(kTexts[index % 7]);
      for (char c : text) data.push_back(static_cast<std::byte>(c));
    } else if (spec.IsVariableSize()) {
      const std::size_t len = index % 4 == 0 ? 0 : static_cast<std::size_t>(rng() % 40);
      for (std::size_t i = 0; i < len; ++i) data.push_back(static_cast<std::byte>(rng()));
    } else {
      const std::uint64_t size = spec.FixedByteSize().value();
      for (std::uint64_t i = 0; i < size; ++i) {
        data.push_back(static_cast<std::byte>(spec.dtype == DType::kBool ? rng() % 2 : rng()));
      }
    }
    ex.views.push_back(ValueView{spec.dtype, spec.IsVariableSize() ? Shape{} : spec.shape, data});
  }
  return ex;
}

std::vector<AttributeSpec> AllDTypesSchema() {
  return {
      {"flag", DType::kBool, {5}},
      {"i8", DType::kInt8, {5}},
      {"i16", DType::kInt16, {2, 3}},
      {"i32", DType::kInt32, {4}},
      {"i64", DType::kInt64, {2}},
      {"u8", DType::kUInt8, {16}},
      {"u16", DType::kUInt16, {}},
      {"u32", DType::kUInt32, {3}},
      {"u64", DType::kUInt64, {2}},
      {"f16", DType::kFloat16, {3}},
      {"f32", DType::kFloat32, {3, 4}},
      {"f64", DType::kFloat64, {}},
      {"cube", DType::kFloat32, {2, 2, 2}},
      {"n", DType::kInt, {}},
      {"text", DType::kStr, {}},
      {"blob", DType::kBytes, {}},
      {"fixed", DType::kBytes, {8}},
      {"b1", DType::kBool, {}},
  };
}

std::vector<std::byte> WriteShard(ShardFileType type, Compression compression,
                                  const std::vector<AttributeSpec>& schema,
                                  const std::vector<OwnedExample>& examples) {
  auto writer = MakeShardWriter(type, compression, schema);
  EXPECT_TRUE(writer.ok()) << writer.status().ToString();
  if (!writer.ok()) return {};
  for (const OwnedExample& ex : examples) {
    const Status st = (*writer)->Add(ex.views);
    EXPECT_TRUE(st.ok()) << st.ToString();
  }
  auto bytes = (*writer)->Finish();
  EXPECT_TRUE(bytes.ok()) << bytes.status().ToString();
  return bytes.ok() ? std::move(bytes).value() : std::vector<std::byte>{};
}

std::vector<std::byte> NpyMember(const std::string& descr, const std::vector<std::uint64_t>& shape,
                                 const std::vector<std::byte>& data) {
  const std::string header = npz_internal::FormatNpyHeader(descr, shape);
  std::vector<std::byte> out;
  for (char c : header) out.push_back(static_cast<std::byte>(c));
  out.insert(out.end(), data.begin(), data.end());
  return out;
}

std::vector<std::byte> MakeZip(
    const std::vector<std::pair<std::string, std::vector<std::byte>>>& members, bool deflate) {
  npz_internal::ZipWriter zip(deflate, 0);
  for (const auto& [name, data] : members) {
    const std::span<const std::byte> pieces[] = {data};
    EXPECT_TRUE(zip.AddMember(name, pieces).ok());
  }
  return zip.Finish();
}

std::size_t CentralEntryOffset(const std::vector<std::byte>& zip, std::size_t index) {
  auto le = [&](std::size_t off, int width) {
    std::uint64_t v = 0;
    for (int i = width - 1; i >= 0; --i) v = (v << 8) | static_cast<std::uint8_t>(zip[off + i]);
    return v;
  };
  const std::size_t eocd = zip.size() - npz_internal::kEndOfCentralDirSize;
  std::size_t pos = le(eocd + 16, 4);
  for (std::size_t i = 0; i < index; ++i) {
    pos += npz_internal::kCentralHeaderSize + le(pos + 28, 2) + le(pos + 30, 2) + le(pos + 32, 2);
  }
  return pos;
}

void StoreLe(std::vector<std::byte>* bytes, std::size_t offset, std::uint64_t value, int width) {
  for (int i = 0; i < width; ++i) {
    (*bytes)[offset + i] = static_cast<std::byte>((value >> (8 * i)) & 0xff);
  }
}

}  // namespace sedpack::testing
