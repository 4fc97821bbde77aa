// SPDX-License-Identifier: Apache-2.0
// Strings and bytes through HDF5: a dataset of every dtype goes through
// export-hdf5, the mapping inspect-hdf5 proposes and import-hdf5 and comes
// back value for value; files written with the HDF5 C API hold every string
// and byte layout HDF5 has (variable and fixed strings with each padding,
// opaque data, vlen uint8), and hostile ones are refused with the dataset and
// row named.
#include <hdf5.h>
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "sedpack/comm/comm.h"
#include "sedpack/dataset/dataset.h"
#include "sedpack/dataset/filler.h"
#include "sedpack/dataset/reader.h"
#include "sedpack/hdf5/export.h"
#include "sedpack/hdf5/import.h"
#include "sedpack/hdf5/inspect.h"
#include "sedpack/hdf5/mapping.h"
#include "sedpack/value.h"
#include "support/test_support.h"

namespace sedpack {
namespace {

using testing::TempDir;

// A well-mixed 64-bit value for element e of attribute j of example k.
std::uint64_t Mix(int k, std::size_t j, std::uint64_t e) {
  std::uint64_t x = (static_cast<std::uint64_t>(k) << 40) ^ (j << 20) ^ e;
  x = (x ^ (x >> 31)) * 0x9E3779B97F4A7C15ull;
  return x ^ (x >> 29);
}

template <typename T>
void Put(std::vector<std::byte>* out, T v) {
  const auto* p = reinterpret_cast<const std::byte*>(&v);
  out->insert(out->end(), p, p + sizeof(T));
}

// The bytes of attribute j of example k, as the dataset stores them: integers
// over their whole range, finite floats with fractions, bool 0/1, text with
// multi-byte UTF-8 and control characters (empty now and then), bytes of any
// value and length.
std::vector<std::byte> ValueBytes(const AttributeSpec& a, std::size_t j, int k) {
  std::vector<std::byte> out;
  if (a.dtype == DType::kStr) {
    const std::string text = k % 5 == 0 ? "" : "row " + std::to_string(k) + (k % 3 ? " \xc3\xa9\xe2\x82\xac  " : "\t\x01\n");
    for (char c : text) out.push_back(static_cast<std::byte>(c));
    return out;
  }
  const std::uint64_t n = a.dtype == DType::kBytes ? (a.shape.empty() ? k % 9 : a.shape[0])
                                                   : *ShapeElementCount(a.shape);
  for (std::uint64_t e = 0; e < n; ++e) {
    const std::uint64_t x = Mix(k, j, e);
    const double real = static_cast<double>(static_cast<std::int32_t>(x)) / 1024.0;
    switch (a.dtype) {
      case DType::kFloat16: Put(&out, Float16::FromFloat(static_cast<float>(real) / 4096.0f).bits); break;
      case DType::kFloat32: Put(&out, static_cast<float>(real)); break;
      case DType::kFloat64: Put(&out, real * 1e-300 + static_cast<double>(x)); break;
      case DType::kBool: Put(&out, static_cast<std::uint8_t>(x & 1)); break;
      case DType::kBytes: Put(&out, static_cast<std::uint8_t>(e % 3 ? x : 0)); break;
      default: {
        const std::size_t item = DTypeItemSize(a.dtype);
        for (std::size_t i = 0; i < item; ++i) out.push_back(static_cast<std::byte>(x >> (8 * i)));
      }
    }
  }
  return out;
}

// The values of example k of `schema`.
struct EveryDTypeRow {
  EveryDTypeRow(const std::vector<AttributeSpec>& schema, int k) {
    for (std::size_t j = 0; j < schema.size(); ++j) bytes.push_back(ValueBytes(schema[j], j, k));
    for (std::size_t j = 0; j < schema.size(); ++j) views.push_back({schema[j].dtype, schema[j].shape, bytes[j]});
  }
  std::vector<std::vector<std::byte>> bytes;
  std::vector<ValueView> views;
};

std::vector<Attribute> EveryDTypeSchema() {
  std::vector<Attribute> d = {
      Attribute{"f16", "float16", {2, 3}}, Attribute{"f32", "float32", {2, 2, 2}}, Attribute{"f64", "float64", {3}},
      Attribute{"i8", "int8", {4}},        Attribute{"i16", "int16", {3, 2}},      Attribute{"i32", "int32", {}},
      Attribute{"i64", "int64", {2}},      Attribute{"u8", "uint8", {16}},         Attribute{"u16", "uint16", {3, 1}},
      Attribute{"u32", "uint32", {2}},     Attribute{"u64", "uint64", {}},         Attribute{"flag", "bool", {2, 3}},
      Attribute{"n", "int", {}},           Attribute{"text", "str", {}},           Attribute{"blob", "bytes", {}},
      Attribute{"fixed", "bytes", {12}}};
  d[13].custom_metadata = *JsonValue::Parse(R"({"unit": "none"})");
  return d;
}

Split SplitOf(int k) { return k % 4 == 1 ? Split::kTest : Split::kTrain; }

constexpr int kExamples = 53;

// Every example of `ds`, per split, in order.
std::map<Split, std::vector<Example>> ReadAll(std::shared_ptr<const Dataset> ds) {
  std::map<Split, std::vector<Example>> out;
  for (Split s : {Split::kTrain, Split::kTest}) {
    auto reader = ExampleReader::Make(ds, s);
    EXPECT_TRUE(reader.ok()) << reader.status().ToString();
    if (!reader.ok()) return out;
    while (true) {
      auto next = (*reader)->Next();
      EXPECT_TRUE(next.ok()) << next.status().ToString();
      if (!next.ok() || !next->has_value()) break;
      out[s].push_back(std::move(**next));
    }
  }
  return out;
}

TEST(Hdf5StringsRoundTrip, EveryDTypeComesBackValueForValue) {
  TempDir tmp;
  DatasetStructure st;
  st.saved_data_description = EveryDTypeSchema();
  st.compression = Compression::kZstd;
  st.examples_per_shard = 7;
  st.hash_checksum_algorithms = {HashAlgorithm::kSha256};
  Metadata md;
  md.description = "every dtype";
  ASSERT_OK_AND_ASSIGN(auto ds, Dataset::Create(tmp.path() + "/orig", md, st));
  {
    ASSERT_OK_AND_ASSIGN(auto filler, Filler::Make(ds));
    for (int k = 0; k < kExamples; ++k) {
      const EveryDTypeRow row(ds->schema(), k);
      ASSERT_OK(filler->WriteExample(SplitOf(k), row.views));
    }
    ASSERT_OK(filler->Finish());
  }
  ASSERT_OK_AND_ASSIGN(ds, Dataset::Open(tmp.path() + "/orig"));
  SerialComm comm;
  const std::string h5 = tmp.path() + "/every.h5";
  ASSERT_OK(ExportHdf5(comm, ds, h5).status());

  ASSERT_OK_AND_ASSIGN(std::vector<Hdf5ObjectInfo> objects, InspectHdf5(h5));
  std::vector<std::string> notes;
  ASSERT_OK_AND_ASSIGN(std::string mapping, SuggestHdf5Mapping(h5, objects, &notes));
  EXPECT_TRUE(notes.empty()) << notes.front();
  ASSERT_OK_AND_ASSIGN(Hdf5ImportConfig config, ParseHdf5ImportConfig(mapping, "suggested"));
  // The proposal is the original structure: dtypes, shapes, order, custom_metadata.
  ASSERT_EQ(config.structure.saved_data_description.size(), st.saved_data_description.size()) << mapping;
  for (std::size_t j = 0; j < st.saved_data_description.size(); ++j) {
    const Attribute& want = st.saved_data_description[j];
    const Attribute& got = config.structure.saved_data_description[j];
    EXPECT_EQ(got.name, want.name);
    EXPECT_EQ(got.dtype, want.dtype) << want.name;
    EXPECT_EQ(got.shape, want.shape) << want.name;
    EXPECT_EQ(got.custom_metadata.text(), want.custom_metadata.text()) << want.name;
  }
  EXPECT_EQ(config.metadata.description, "every dtype");
  EXPECT_EQ(config.structure.examples_per_shard, 7);

  ASSERT_OK_AND_ASSIGN(auto summary, ImportHdf5(comm, config, {h5}, tmp.path() + "/back"));
  EXPECT_EQ(summary.examples_total, static_cast<std::uint64_t>(kExamples));
  ASSERT_OK_AND_ASSIGN(auto back, Dataset::Open(tmp.path() + "/back"));

  std::map<Split, std::vector<int>> expected_rows;
  for (int k = 0; k < kExamples; ++k) expected_rows[SplitOf(k)].push_back(k);
  auto got = ReadAll(back);
  std::size_t values = 0;
  for (const auto& [split, rows] : expected_rows) {
    ASSERT_EQ(got[split].size(), rows.size()) << SplitName(split);
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const EveryDTypeRow want(back->schema(), rows[i]);
      const std::vector<ValueView>& w = want.views;
      for (std::size_t j = 0; j < w.size(); ++j) {
        const ValueView g = got[split][i].Get(j);
        EXPECT_EQ(g.dtype, w[j].dtype) << "example " << rows[i] << " attribute " << j;
        ASSERT_EQ(g.data.size(), w[j].data.size()) << "example " << rows[i] << " attribute " << j;
        EXPECT_EQ(std::memcmp(g.data.data(), w[j].data.data(), g.data.size()), 0)
            << "example " << rows[i] << " attribute " << j;
        ++values;
      }
    }
  }
  EXPECT_EQ(values, static_cast<std::size_t>(kExamples) * 16);
}

TEST(Hdf5StringsRoundTrip, ExportRefusesAStrHoldingANul) {
  TempDir tmp;
  DatasetStructure st;
  st.saved_data_description = {Attribute{"t", "str", {}}};
  ASSERT_OK_AND_ASSIGN(auto ds, Dataset::Create(tmp.path() + "/orig", Metadata{}, st));
  {
    ASSERT_OK_AND_ASSIGN(auto filler, Filler::Make(ds));
    for (const std::string& t : {std::string("fine"), std::string("a\0b", 3)}) {
      const ValueView v[] = {ValueView::Str(t)};
      ASSERT_OK(filler->WriteExample(Split::kTrain, v));
    }
    ASSERT_OK(filler->Finish());
  }
  ASSERT_OK_AND_ASSIGN(ds, Dataset::Open(tmp.path() + "/orig"));
  SerialComm comm;
  EXPECT_STATUS(StatusCode::kInvalidArgument, "attribute \"t\" row 1: a str holding a NUL character",
                ExportHdf5(comm, ds, tmp.path() + "/t.h5").status());
  EXPECT_FALSE(std::filesystem::exists(tmp.path() + "/t.h5"));
}

// ---- Files written with the HDF5 C API ----

class H5File {
 public:
  explicit H5File(const std::string& path) : id_(H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT)) {}
  ~H5File() { H5Fclose(id_); }
  hid_t id() const { return id_; }
  // A 1-D dataset of `rows` elements of `type`, from `data` in memory type `mem`.
  void Write(const char* name, hid_t type, hsize_t rows, const void* data, hid_t mem = -1) {
    const hid_t space = H5Screate_simple(1, &rows, nullptr);
    const hid_t ds = H5Dcreate2(id_, name, type, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    ASSERT_GE(ds, 0) << name;
    ASSERT_GE(H5Dwrite(ds, mem >= 0 ? mem : type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data), 0) << name;
    H5Dclose(ds);
    H5Sclose(space);
  }

 private:
  hid_t id_;
};

hid_t StringType(std::size_t size, H5T_str_t pad, H5T_cset_t cset) {
  const hid_t t = H5Tcopy(H5T_C_S1);
  H5Tset_size(t, size);
  H5Tset_strpad(t, pad);
  H5Tset_cset(t, cset);
  return t;
}

constexpr hsize_t kRows = 4;

// Every layout, 4 rows each.
void WriteLayouts(const std::string& path) {
  H5File f(path);
  const char* utf8[kRows] = {"Gr\xc3\xbc\xc3\x9f" "e", "", nullptr, "\xe2\x9c\x93 ok"};
  const hid_t vutf8 = StringType(H5T_VARIABLE, H5T_STR_NULLTERM, H5T_CSET_UTF8);
  f.Write("vstr_utf8", vutf8, kRows, utf8);
  const char* ascii[kRows] = {"SN-0001", "SN-0002", "SN-0003", "SN-0004"};
  const hid_t vascii = StringType(H5T_VARIABLE, H5T_STR_NULLTERM, H5T_CSET_ASCII);
  f.Write("vstr_ascii", vascii, kRows, ascii);
  // Fixed 8 bytes each: the padding decides what is stripped.
  const std::string nullterm("abc\0zzzz" "12345678" "\0\0\0\0\0\0\0\0" "x y\0\0\0\0\0", 32);
  const std::string nullpad("abc\0\0\0\0\0" "a\0b\0\0\0\0\0" "\0\0\0\0\0\0\0\0" "full8byt", 32);
  const std::string spacepad = std::string("abc") + std::string(5, ' ') + "a b" + std::string(5, ' ') + "2026-1-1" +
                               std::string(8, ' ');
  ASSERT_EQ(spacepad.size(), 32u);
  for (auto [name, pad, data] : {std::tuple{"fixed_nullterm", H5T_STR_NULLTERM, &nullterm},
                                 std::tuple{"fixed_nullpad", H5T_STR_NULLPAD, &nullpad},
                                 std::tuple{"fixed_spacepad", H5T_STR_SPACEPAD, &spacepad}}) {
    const hid_t t = StringType(8, pad, H5T_CSET_ASCII);
    f.Write(name, t, kRows, data->data());
    H5Tclose(t);
  }
  const hid_t opaque = H5Tcreate(H5T_OPAQUE, 3);
  H5Tset_tag(opaque, "raw key");
  const unsigned char op[kRows * 3] = {0, 1, 2, 255, 254, 253, 0, 0, 0, 7, 0, 7};
  f.Write("opaque3", opaque, kRows, op);
  const hid_t vbytes = H5Tvlen_create(H5T_NATIVE_UINT8);
  unsigned char b0[] = {1, 2, 3}, b3[] = {0, 0, 9, 0, 255};
  hvl_t vb[kRows] = {{3, b0}, {0, nullptr}, {1, b0 + 2}, {5, b3}};
  f.Write("vbytes", vbytes, kRows, vb);
  hvl_t v3[kRows] = {{3, b0}, {3, b3}, {3, b3 + 1}, {3, b3 + 2}};
  f.Write("vbytes3", vbytes, kRows, v3);
  const unsigned char u8[kRows * 2] = {0, 1, 2, 3, 4, 5, 6, 7};
  {
    const hsize_t dims[2] = {kRows, 2};
    const hid_t space = H5Screate_simple(2, dims, nullptr);
    const hid_t ds = H5Dcreate2(f.id(), "u8x2", H5T_STD_U8LE, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    H5Dwrite(ds, H5T_NATIVE_UINT8, H5S_ALL, H5S_ALL, H5P_DEFAULT, u8);
    H5Dclose(ds);
    H5Sclose(space);
  }
  const std::int32_t flags[kRows] = {1, 0, 0, 1};
  f.Write("flags", H5T_STD_I32LE, kRows, flags, H5T_NATIVE_INT32);
  const char* bad[kRows] = {"ok", "fine", "caf\xe9", "x"};  // row 2: Latin-1, not UTF-8
  f.Write("bad_utf8", vutf8, kRows, bad);
  const std::int32_t twos[kRows] = {0, 1, 2, 1};
  f.Write("not_bool", H5T_STD_I32LE, kRows, twos, H5T_NATIVE_INT32);
  // A compound with a string member, as h5py writes records.
  const hid_t s6 = StringType(6, H5T_STR_NULLPAD, H5T_CSET_ASCII);
  const hid_t rec = H5Tcreate(H5T_COMPOUND, 10);
  H5Tinsert(rec, "id", 0, H5T_NATIVE_INT32);
  H5Tinsert(rec, "date", 4, s6);
  // 10-byte records: int32 id, then 6 bytes of date.
  std::string recs;
  for (auto [id, date] : {std::pair<std::int32_t, std::string>{1, std::string("2026\0\0", 6)},
                          {2, "199912"}, {3, std::string(6, '\0')}, {4, std::string("x\0\0\0\0\0", 6)}}) {
    recs.append(reinterpret_cast<const char*>(&id), 4);
    recs += date;
  }
  f.Write("records", rec, kRows, recs.data());
  // numpy bools as h5py writes them: an int8 enum {FALSE, TRUE}.
  const hid_t boolean = H5Tenum_create(H5T_NATIVE_INT8);
  const std::int8_t no = 0, yes = 1;
  H5Tenum_insert(boolean, "FALSE", &no);
  H5Tenum_insert(boolean, "TRUE", &yes);
  const std::int8_t bools[kRows] = {0, 1, 1, 0};
  f.Write("h5bool", boolean, kRows, bools);
  for (hid_t t : {vutf8, vascii, opaque, vbytes, s6, rec, boolean}) H5Tclose(t);
}

std::string Mapping(const std::string& attrs_desc, const std::string& sources, const std::string& job = "") {
  return R"({"dataset_structure": {"saved_data_description": [)" + attrs_desc +
         R"(], "examples_per_shard": 3, "compression": "LZ4", "shard_file_type": "fb"},
            "import_hdf5": {)" + job + R"("splits": {"train": {"attributes": {)" + sources + "}}}}}";
}

// Import `mapping` from `h5` and return the train split's values of attribute 0..n as bytes.
Result<std::vector<std::vector<std::string>>> ImportValues(const std::string& h5, const std::string& mapping,
                                                           const std::string& out) {
  SEDPACK_ASSIGN_OR_RETURN(Hdf5ImportConfig config, ParseHdf5ImportConfig(mapping, "inline"));
  SerialComm comm;
  SEDPACK_RETURN_NOT_OK(ImportHdf5(comm, config, {h5}, out).status());
  SEDPACK_ASSIGN_OR_RETURN(auto ds, Dataset::Open(out));
  SEDPACK_ASSIGN_OR_RETURN(auto reader, ExampleReader::Make(ds, Split::kTrain));
  std::vector<std::vector<std::string>> rows;
  while (true) {
    SEDPACK_ASSIGN_OR_RETURN(auto next, reader->Next());
    if (!next) break;
    std::vector<std::string> row;
    for (std::size_t j = 0; j < config.structure.saved_data_description.size(); ++j) {
      const ValueView v = next->Get(j);
      row.emplace_back(reinterpret_cast<const char*>(v.data.data()), v.data.size());
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

std::string Column(const std::vector<std::vector<std::string>>& rows, std::size_t j) {
  std::string s;
  for (const auto& r : rows) s += "[" + r[j] + "]";
  return s;
}

TEST(Hdf5StringsImport, EveryStringAndByteLayout) {
  TempDir tmp;
  const std::string h5 = tmp.path() + "/layouts.h5";
  WriteLayouts(h5);
  const std::string desc =
      R"({"name": "a", "dtype": "str", "shape": []}, {"name": "b", "dtype": "str", "shape": []},
         {"name": "c", "dtype": "str", "shape": []}, {"name": "d", "dtype": "bytes", "shape": []},
         {"name": "e", "dtype": "str", "shape": []}, {"name": "f", "dtype": "bytes", "shape": [3]},
         {"name": "g", "dtype": "bytes", "shape": []}, {"name": "h", "dtype": "bytes", "shape": [3]},
         {"name": "i", "dtype": "bytes", "shape": [2]}, {"name": "j", "dtype": "bool", "shape": []},
         {"name": "k", "dtype": "bytes", "shape": [8]}, {"name": "l", "dtype": "str", "shape": []},
         {"name": "m", "dtype": "int32", "shape": [1]}, {"name": "o", "dtype": "bytes", "shape": []},
         {"name": "p", "dtype": "bool", "shape": []})";
  const std::string src =
      R"("a": "vstr_utf8", "b": "vstr_ascii", "c": "fixed_nullterm", "d": "fixed_nullpad",
         "e": "fixed_spacepad", "f": "opaque3", "g": "vbytes", "h": "vbytes3", "i": "u8x2", "j": "flags",
         "k": "fixed_nullpad", "l": {"dataset": "records", "field": "date"},
         "m": {"dataset": "records", "field": "id"}, "o": "u8x2", "p": "h5bool")";
  ASSERT_OK_AND_ASSIGN(auto rows, ImportValues(h5, Mapping(desc, src), tmp.path() + "/ds"));
  ASSERT_EQ(rows.size(), kRows);
  EXPECT_EQ(Column(rows, 0), "[Gr\xc3\xbc\xc3\x9f" "e][][][\xe2\x9c\x93 ok]");
  EXPECT_EQ(Column(rows, 1), "[SN-0001][SN-0002][SN-0003][SN-0004]");
  EXPECT_EQ(Column(rows, 2), "[abc][12345678][][x y]");
  EXPECT_EQ(Column(rows, 3), std::string("[abc][a\0b][][full8byt]", 22));
  EXPECT_EQ(Column(rows, 4), "[abc][a b][2026-1-1][]");
  EXPECT_EQ(Column(rows, 5), std::string("[\0\1\2][\xff\xfe\xfd][\0\0\0][\7\0\7]", 20));
  EXPECT_EQ(Column(rows, 6), std::string("[\1\2\3][][\3][\0\0\x09\0\xff]", 17));
  EXPECT_EQ(Column(rows, 7), std::string("[\1\2\3][\0\0\x09][\0\x09\0][\x09\0\xff]", 20));
  EXPECT_EQ(Column(rows, 8), std::string("[\0\1][\2\3][\4\5][\6\7]", 16));
  EXPECT_EQ(Column(rows, 9), std::string("[\1][\0][\0][\1]", 12));
  // Fixed-size bytes keep a fixed string's padding.
  EXPECT_EQ(Column(rows, 10), std::string("[abc\0\0\0\0\0][a\0b\0\0\0\0\0][\0\0\0\0\0\0\0\0][full8byt]", 40));
  EXPECT_EQ(Column(rows, 11), "[2026][199912][][x]");
  EXPECT_EQ(Column(rows, 12), std::string("[\1\0\0\0][\2\0\0\0][\3\0\0\0][\4\0\0\0]", 24));
  EXPECT_EQ(Column(rows, 13), std::string("[\0\1][\2\3][\4\5][\6\7]", 16));
  EXPECT_EQ(Column(rows, 14), std::string("[\0][\1][\1][\0]", 12));
}

TEST(Hdf5StringsImport, BadValuesNameTheDatasetAndRow) {
  TempDir tmp;
  const std::string h5 = tmp.path() + "/layouts.h5";
  WriteLayouts(h5);
  auto import = [&](const std::string& dtype, const std::string& shape, const std::string& source) {
    static int n = 0;
    return ImportValues(h5, Mapping(R"({"name": "x", "dtype": ")" + dtype + R"(", "shape": )" + shape + "}",
                                    R"("x": ")" + source + "\""),
                        tmp.path() + "/out" + std::to_string(n++))
        .status();
  };
  EXPECT_STATUS(StatusCode::kInvalidArgument, "/bad_utf8: row 2: the value is not valid UTF-8",
                import("str", "[]", "bad_utf8"));
  EXPECT_STATUS(StatusCode::kInvalidArgument, "\"dtype\": \"bytes\"", import("str", "[]", "bad_utf8"));
  EXPECT_FALSE(std::filesystem::exists(tmp.path() + "/out1")) << "nothing half-written stays";
  // As bytes the same values import.
  EXPECT_OK(import("bytes", "[]", "bad_utf8"));
  EXPECT_STATUS(StatusCode::kInvalidArgument, "/vbytes: row 0: 3 bytes, but the attribute holds exactly 4",
                import("bytes", "[4]", "vbytes"));
  EXPECT_STATUS(StatusCode::kInvalidArgument, "opaque (3 bytes) values cannot fill attribute \"x\"",
                import("bytes", "[4]", "opaque3"));
  EXPECT_STATUS(StatusCode::kInvalidArgument, "string (variable, UTF-8) values cannot fill",
                import("uint8", "[1]", "vstr_utf8"));
  EXPECT_STATUS(StatusCode::kInvalidArgument, "int32 values cannot fill attribute \"x\" (str",
                import("str", "[]", "flags"));
  EXPECT_STATUS(StatusCode::kInvalidArgument, "/not_bool: row 2: value 2 is not exactly representable as bool",
                import("bool", "[]", "not_bool"));
  EXPECT_STATUS(StatusCode::kInvalidArgument, "uint8 values cannot fill attribute \"x\" (str", import("str", "[]", "u8x2"));
}

TEST(Hdf5StringsImport, StringsAsShardCustomMetadata) {
  TempDir tmp;
  const std::string h5 = tmp.path() + "/layouts.h5";
  WriteLayouts(h5);
  std::string mapping = Mapping(R"({"name": "x", "dtype": "uint8", "shape": [2]})", R"("x": "u8x2")");
  mapping.insert(mapping.rfind("}}}}"), R"(, "shard_custom_metadata": {"serial": "vstr_ascii", "date": "fixed_spacepad"})");
  ASSERT_OK_AND_ASSIGN(Hdf5ImportConfig config, ParseHdf5ImportConfig(mapping, "inline"));
  SerialComm comm;
  ASSERT_OK(ImportHdf5(comm, config, {h5}, tmp.path() + "/ds").status());
  ASSERT_OK_AND_ASSIGN(auto ds, Dataset::Open(tmp.path() + "/ds"));
  ASSERT_OK_AND_ASSIGN(auto shards, ListShards(ds, Split::kTrain));
  std::string all;
  for (const ShardInfo& sh : shards) all += sh.custom_metadata.text() + ";";
  EXPECT_EQ(all,
            R"({"serial":"SN-0001","date":"abc"};{"serial":"SN-0002","date":"a b"};)"
            R"({"serial":"SN-0003","date":"2026-1-1"};{"serial":"SN-0004","date":""};)");
  // A string source takes no dtype.
  std::string typed = mapping;
  typed.replace(typed.find(R"("vstr_ascii")"), 12, R"({"dataset": "vstr_ascii", "dtype": "uint8"})");
  ASSERT_OK_AND_ASSIGN(Hdf5ImportConfig bad, ParseHdf5ImportConfig(typed, "inline"));
  EXPECT_STATUS(StatusCode::kInvalidArgument, "shard_custom_metadata \"serial\" from string (variable, ASCII) takes no dtype",
                ImportHdf5(comm, bad, {h5}, tmp.path() + "/ds2").status());
}

TEST(Hdf5StringsImport, VariableLengthDataIsBoundedBeforeItIsRead) {
  TempDir tmp;
  const std::string h5 = tmp.path() + "/big.h5";
  {
    H5File f(h5);
    // 4 rows of 5 MiB each: more than a quarter of a 16 MiB budget in one block.
    std::vector<unsigned char> big(5 << 20, 'a');
    hvl_t rows[4];
    for (hvl_t& r : rows) r = {big.size(), big.data()};
    const hid_t vbytes = H5Tvlen_create(H5T_NATIVE_UINT8);
    f.Write("big", vbytes, 4, rows);
    H5Tclose(vbytes);
  }
  const std::string mapping =
      Mapping(R"({"name": "x", "dtype": "bytes", "shape": []})", R"("x": "big")", R"("memory_budget_mb": 16, )");
  auto config = ParseHdf5ImportConfig(mapping, "inline");
  ASSERT_OK(config.status());
  SerialComm comm;
  EXPECT_STATUS(StatusCode::kInvalidArgument, "bytes of variable-length data, more than the",
                ImportHdf5(comm, *config, {h5}, tmp.path() + "/out").status());
}

TEST(Hdf5StringsInspect, ProposesStringsAndBytes) {
  TempDir tmp;
  const std::string h5 = tmp.path() + "/layouts.h5";
  WriteLayouts(h5);
  ASSERT_OK_AND_ASSIGN(std::vector<Hdf5ObjectInfo> objects, InspectHdf5(h5));
  std::map<std::string, const Hdf5ObjectInfo*> by_path;
  for (const auto& o : objects) by_path[o.path] = &o;
  ASSERT_TRUE(by_path.count("/vstr_utf8"));
  EXPECT_EQ(by_path["/vstr_utf8"]->type, "string (variable, UTF-8)");
  EXPECT_EQ(by_path["/fixed_spacepad"]->type, "string (8 bytes, ASCII, space-padded)");
  EXPECT_EQ(by_path["/opaque3"]->type, "opaque (3 bytes)");
  EXPECT_EQ(by_path["/vbytes"]->type, "vlen uint8");
  EXPECT_EQ(by_path["/h5bool"]->type, "bool (enum of int8)");
  std::vector<std::string> notes;
  ASSERT_OK_AND_ASSIGN(std::string text, SuggestHdf5Mapping(h5, objects, &notes));
  ASSERT_OK_AND_ASSIGN(Hdf5ImportConfig config, ParseHdf5ImportConfig(text, "suggested"));
  std::map<std::string, std::pair<std::string, Shape>> attrs;
  for (const Attribute& a : config.structure.saved_data_description) attrs[a.name] = {a.dtype, a.shape};
  using P = std::pair<std::string, Shape>;
  EXPECT_EQ(attrs["vstr_utf8"], P("str", {}));
  EXPECT_EQ(attrs["vstr_ascii"], P("str", {}));
  EXPECT_EQ(attrs["fixed_nullpad"], P("str", {}));
  EXPECT_EQ(attrs["opaque3"], P("bytes", {3}));
  EXPECT_EQ(attrs["vbytes"], P("bytes", {}));
  EXPECT_EQ(attrs["u8x2"], P("uint8", {2}));
  EXPECT_EQ(attrs["date"], P("str", {}));
  EXPECT_EQ(attrs["id"], P("int32", {1}));
  EXPECT_EQ(attrs["h5bool"], P("bool", {1}));
  // All of it imports except the invalid UTF-8, which the error points at.
  SerialComm comm;
  EXPECT_STATUS(StatusCode::kInvalidArgument, "/bad_utf8: row 2",
                ImportHdf5(comm, config, {h5}, tmp.path() + "/ds").status());
}

}  // namespace
}  // namespace sedpack
