// SPDX-License-Identifier: Apache-2.0
#include "sedpack/metadata/models.h"

#include <string>

#include "support/test_support.h"
#include "metadata/shard_list_info_wire.h"

namespace sedpack {
namespace {

constexpr StatusCode kInvalid = StatusCode::kInvalidArgument;

// A dataset_info.json whose dataset_structure / splits parts can be swapped.
std::string InfoWith(const std::string& structure, const std::string& splits = "{}",
                     const std::string& metadata = "{}") {
  return R"({"metadata":)" + metadata + R"(,"dataset_structure":)" + structure +
         R"(,"splits":)" + splits + "}";
}
std::string StructureWithAttr(const std::string& attr) {
  return R"({"saved_data_description":[{"name":"a","dtype":"uint8","shape":[1]},)" + attr + "]}";
}
// A shards_list.json with four good shards and `file_info` as the fourth
// shard's second file info.
std::string ListWithFileInfo(const std::string& file_info) {
  std::string shards;
  for (int i = 0; i < 3; ++i) {
    shards += R"({"file_infos":[{"file_path":"train/a/)" + std::to_string(i) + R"(.fb"}]},)";
  }
  return R"({"relative_path_self":"train/shards_list.json","shard_files":[)" + shards +
         R"({"file_infos":[{"file_path":"train/a/3.fb"},)" + file_info + "]}]}";
}

// ---- Required keys -----------------------------------------------------------

TEST(ModelsParseTest, RequiredKeys) {
  EXPECT_STATUS(kInvalid,
                "dataset_info.json: dataset_structure.saved_data_description[1].name: "
                "required key is missing",
                ParseDatasetInfo(InfoWith(StructureWithAttr(R"({"dtype":"str","shape":[]})")),
                                 "dataset_info.json"));
  EXPECT_STATUS(kInvalid, "dataset_structure.saved_data_description[1].dtype: required key",
                ParseDatasetInfo(InfoWith(StructureWithAttr(R"({"name":"s","shape":[]})")),
                                 "dataset_info.json"));
  EXPECT_STATUS(kInvalid, "dataset_structure.saved_data_description[1].shape: required key",
                ParseDatasetInfo(InfoWith(StructureWithAttr(R"({"name":"s","dtype":"str"})")),
                                 "dataset_info.json"));
  EXPECT_STATUS(kInvalid,
                "train/shards_list.json: shard_files[3].file_infos[1].file_path: required key",
                ParseShardsList(ListWithFileInfo(R"({"hash_checksums":[]})"),
                                "train/shards_list.json"));
  EXPECT_STATUS(kInvalid, "t/shards_list.json: shard_files[0].file_infos: required key",
                ParseShardsList(R"({"relative_path_self":"t/shards_list.json",)"
                                R"("shard_files":[{"number_of_examples":1}]})",
                                "t/shards_list.json"));
  EXPECT_STATUS(kInvalid, "dataset_info.json: splits.test.shard_list_info_file: required key",
                ParseDatasetInfo(InfoWith("{}", R"({"test":{"number_of_examples":3}})"),
                                 "dataset_info.json"));
  EXPECT_STATUS(kInvalid, "s.json: children_shard_lists[0].shard_list_info_file: required key",
                ParseShardsList(R"({"relative_path_self":"t/shards_list.json",)"
                                R"("children_shard_lists":[{}]})",
                                "s.json"));
  EXPECT_STATUS(kInvalid, "s.json: relative_path_self: required key is missing",
                ParseShardsList(R"({"number_of_examples":0})", "s.json"));
}

// ---- Defaults and unknown keys ------------------------------------------------

TEST(ModelsParseTest, DefaultsWhenKeysAreMissing) {
  ASSERT_OK_AND_ASSIGN(DatasetInfo info, ParseDatasetInfo("{}", "dataset_info.json"));
  EXPECT_EQ(info.metadata.description, "");
  EXPECT_EQ(info.metadata.dataset_license, "https://creativecommons.org/licenses/by/4.0/");
  EXPECT_EQ(info.metadata.dataset_version, "1.0.0");
  EXPECT_EQ(info.metadata.download_from, "");
  EXPECT_TRUE(info.metadata.custom_metadata.IsEmptyObject());
  EXPECT_EQ(info.metadata.sedpack_version, kDefaultSedpackVersion);
  EXPECT_TRUE(info.dataset_structure.saved_data_description.empty());
  EXPECT_EQ(info.dataset_structure.compression, Compression::kGzip);
  EXPECT_EQ(info.dataset_structure.examples_per_shard, 256);
  EXPECT_EQ(info.dataset_structure.shard_file_type, ShardFileType::kFb);
  EXPECT_EQ(info.dataset_structure.hash_checksum_algorithms,
            std::vector<HashAlgorithm>{HashAlgorithm::kSha256});
  EXPECT_TRUE(info.splits.empty());

  ASSERT_OK_AND_ASSIGN(ShardsList list,
                       ParseShardsList(R"({"relative_path_self":"test/shards_list.json",)"
                                       R"("shard_files":[{"file_infos":[{"file_path":"test/x.fb"}]}],)"
                                       R"("children_shard_lists":[{"shard_list_info_file":)"
                                       R"({"file_path":"test/a/shards_list.json"}}]})",
                                       "test/shards_list.json"));
  EXPECT_EQ(list.number_of_examples, 0);
  ASSERT_EQ(list.shard_files.size(), 1u);
  EXPECT_EQ(list.shard_files[0].number_of_examples, 0);
  EXPECT_TRUE(list.shard_files[0].custom_metadata.IsEmptyObject());
  EXPECT_TRUE(list.shard_files[0].file_infos[0].hash_checksums.empty());
  ASSERT_EQ(list.children_shard_lists.size(), 1u);
  EXPECT_EQ(list.children_shard_lists[0].number_of_examples, 0);
  EXPECT_EQ(list.children_shard_lists[0].number_of_shards, 0);

  ASSERT_OK_AND_ASSIGN(
      DatasetStructure st,
      ParseDatasetStructure(R"({"saved_data_description":[{"name":"n","dtype":"int","shape":[]}]})",
                            "cfg", /*strict=*/false));
  EXPECT_TRUE(st.saved_data_description[0].custom_metadata.IsEmptyObject());
  EXPECT_EQ(st.compression, Compression::kGzip);
}

TEST(ModelsParseTest, UnknownKeysIgnoredUnlessStrict) {
  const std::string text =
      R"({"future":1,"metadata":{"x":2},"dataset_structure":{"y":[],)"
      R"("saved_data_description":[{"name":"a","dtype":"str","shape":[],"z":0}]}})";
  ASSERT_OK(ParseDatasetInfo(text, "dataset_info.json").status());
  ASSERT_OK(ParseShardsList(R"({"relative_path_self":"a/shards_list.json","q":{}})", "s").status());

  ASSERT_OK(ParseDatasetStructure(R"({"compression":"ZSTD","extra":1})", "cfg.json", false)
                .status());
  EXPECT_STATUS(kInvalid, "cfg.json: unknown key \"extra\"",
                ParseDatasetStructure(R"({"compression":"ZSTD","extra":1})", "cfg.json", true));
  EXPECT_STATUS(kInvalid, "cfg.json: saved_data_description[0]: unknown key \"shap\"",
                ParseDatasetStructure(
                    R"({"saved_data_description":[{"name":"a","dtype":"str","shap":[]}]})",
                    "cfg.json", true));
  EXPECT_STATUS(kInvalid, "meta.json: unknown key \"licence\"",
                ParseMetadata(R"({"licence":"MIT"})", "meta.json", true));
  ASSERT_OK_AND_ASSIGN(Metadata m, ParseMetadata(R"({"description":"d","custom_metadata":{"k":[1]}})",
                                                 "meta.json", true));
  EXPECT_EQ(m.description, "d");
  EXPECT_EQ(m.custom_metadata.text(), R"({"k":[1]})");
  EXPECT_STATUS(kInvalid, "meta.json: expected an object, got an array",
                ParseMetadata("[]", "meta.json", false));
}

// ---- Lax int coercion -----------------------------------------------------------

Result<std::int64_t> EpsFrom(const std::string& value) {
  auto s = ParseDatasetStructure(R"({"examples_per_shard":)" + value + "}", "cfg", false);
  if (!s.ok()) return s.status();
  return s->examples_per_shard;
}

TEST(ModelsParseTest, LaxIntCoercion) {
  // Accepted by pydantic 2.13 lax mode (verified), including bool -> int.
  EXPECT_EQ(*EpsFrom("3"), 3);
  EXPECT_EQ(*EpsFrom(R"("3")"), 3);
  EXPECT_EQ(*EpsFrom("2.0"), 2);
  EXPECT_EQ(*EpsFrom("1e3"), 1000);
  EXPECT_EQ(*EpsFrom("true"), 1);
  EXPECT_EQ(*EpsFrom("false"), 0);
  EXPECT_EQ(*EpsFrom(R"(" +1_000.00 ")"), 1000);
  EXPECT_EQ(*EpsFrom(R"("\t7\n")"), 7);
  EXPECT_EQ(*EpsFrom(R"("007")"), 7);
  // Rejected.
  EXPECT_STATUS(kInvalid, "cfg: examples_per_shard: expected an integer, got 2.5", EpsFrom("2.5"));
  EXPECT_STATUS(kInvalid, "expected an integer, got the string \"3.5\"", EpsFrom(R"("3.5")"));
  EXPECT_STATUS(kInvalid, "expected an integer", EpsFrom(R"("3.")"));
  EXPECT_STATUS(kInvalid, "expected an integer", EpsFrom(R"("0x10")"));
  EXPECT_STATUS(kInvalid, "expected an integer", EpsFrom(R"("1__0")"));
  EXPECT_STATUS(kInvalid, "expected an integer", EpsFrom(R"("_1")"));
  EXPECT_STATUS(kInvalid, "expected an integer", EpsFrom(R"("")"));
  EXPECT_STATUS(kInvalid, "expected an integer, got null", EpsFrom("null"));
  EXPECT_STATUS(kInvalid, "expected an integer, got an array", EpsFrom("[1]"));
}

TEST(ModelsParseTest, CountLimits) {
  EXPECT_STATUS(kInvalid, "examples_per_shard: must not be negative, got -1", EpsFrom("-1"));
  EXPECT_STATUS(kInvalid, "must not be negative", EpsFrom(R"("-5")"));
  EXPECT_EQ(*EpsFrom("4611686018427387904"), std::int64_t{1} << 62);
  EXPECT_STATUS(kInvalid, "examples_per_shard: is too large", EpsFrom("4611686018427387905"));
  EXPECT_STATUS(kInvalid, "is too large", EpsFrom("9223372036854775808"));
  EXPECT_STATUS(kInvalid, "is too large", EpsFrom("1180591620717411303424"));
  EXPECT_STATUS(kInvalid, "must not be negative", EpsFrom("-1180591620717411303424"));
  EXPECT_STATUS(kInvalid, "is too large", EpsFrom("1e300"));
  EXPECT_STATUS(kInvalid, "is too large", EpsFrom(R"("99999999999999999999999")"));
  EXPECT_STATUS(kInvalid, "s.json: number_of_examples: must not be negative",
                ParseShardsList(R"({"relative_path_self":"a/shards_list.json",)"
                                R"("number_of_examples":-3})",
                                "s.json"));
  EXPECT_STATUS(kInvalid, "s.json: children_shard_lists[0].number_of_shards: is too large",
                ParseShardsList(R"({"relative_path_self":"a/shards_list.json",)"
                                R"("children_shard_lists":[{"shard_list_info_file":)"
                                R"({"file_path":"a/b/shards_list.json"},"number_of_shards":1e19}]})",
                                "s.json"));
}

// ---- Type mismatches and enums ------------------------------------------------

TEST(ModelsParseTest, TypeMismatches) {
  EXPECT_STATUS(kInvalid,
                "dataset_info.json: dataset_structure.saved_data_description[1].shape: "
                "expected an array, got a string",
                ParseDatasetInfo(InfoWith(StructureWithAttr(R"({"name":"s","dtype":"str","shape":"12"})")),
                                 "dataset_info.json"));
  EXPECT_STATUS(kInvalid, "dataset_structure.hash_checksum_algorithms: expected an array",
                ParseDatasetInfo(InfoWith(R"({"hash_checksum_algorithms":"sha256"})"),
                                 "dataset_info.json"));
  EXPECT_STATUS(kInvalid, "metadata.description: expected a string, got an integer",
                ParseDatasetInfo(InfoWith("{}", "{}", R"({"description":5})"), "dataset_info.json"));
  EXPECT_STATUS(kInvalid, "metadata.dataset_version: expected a string, got null",
                ParseDatasetInfo(InfoWith("{}", "{}", R"({"dataset_version":null})"),
                                 "dataset_info.json"));
  EXPECT_STATUS(kInvalid, "metadata.custom_metadata: expected an object, got an array",
                ParseDatasetInfo(InfoWith("{}", "{}", R"({"custom_metadata":[1]})"),
                                 "dataset_info.json"));
  EXPECT_STATUS(kInvalid, "metadata.custom_metadata: expected an object, got null",
                ParseDatasetInfo(InfoWith("{}", "{}", R"({"custom_metadata":null})"),
                                 "dataset_info.json"));
  EXPECT_STATUS(kInvalid, "shard_files[3].file_infos[1].hash_checksums: expected an array",
                ParseShardsList(ListWithFileInfo(R"({"file_path":"a/b.fb","hash_checksums":"ab"})"),
                                "s.json"));
  EXPECT_STATUS(kInvalid, "shard_files[3].file_infos[1].hash_checksums[0]: expected a string",
                ParseShardsList(ListWithFileInfo(R"({"file_path":"a/b.fb","hash_checksums":[1]})"),
                                "s.json"));
  EXPECT_STATUS(kInvalid, "shard_files[3].file_infos[1].file_path: expected a string",
                ParseShardsList(ListWithFileInfo(R"({"file_path":7})"), "s.json"));
  EXPECT_STATUS(kInvalid, "s.json: shard_files: expected an array, got an object",
                ParseShardsList(R"({"relative_path_self":"a/shards_list.json","shard_files":{}})",
                                "s.json"));
  EXPECT_STATUS(kInvalid, "s.json: expected an object, got an array", ParseShardsList("[]", "s.json"));
  EXPECT_STATUS(kInvalid, "dataset_info.json: splits: expected an object",
                ParseDatasetInfo(InfoWith("{}", "[]"), "dataset_info.json"));
}

TEST(ModelsParseTest, ExactCaseEnums) {
  EXPECT_STATUS(kInvalid, "dataset_info.json: dataset_structure.compression: unknown compression \"zstd\"",
                ParseDatasetInfo(InfoWith(R"({"compression":"zstd"})"), "dataset_info.json"));
  EXPECT_STATUS(kInvalid, "dataset_structure.shard_file_type: unknown shard_file_type \"npy\"",
                ParseDatasetInfo(InfoWith(R"({"shard_file_type":"npy"})"), "dataset_info.json"));
  EXPECT_STATUS(kInvalid, "dataset_structure.hash_checksum_algorithms[1]: unknown hash algorithm \"blake2b\"",
                ParseDatasetInfo(InfoWith(R"({"hash_checksum_algorithms":["md5","blake2b"]})"),
                                 "dataset_info.json"));
  EXPECT_STATUS(kInvalid, "dataset_info.json: splits.validation: unknown split \"validation\"",
                ParseDatasetInfo(
                    InfoWith("{}", R"({"validation":{"shard_list_info_file":{"file_path":"validation/shards_list.json"}}})"),
                    "dataset_info.json"));
  EXPECT_STATUS(kInvalid, "splits.Train: unknown split",
                ParseDatasetInfo(InfoWith("{}", R"({"Train":{}})"), "dataset_info.json"));
  ASSERT_OK_AND_ASSIGN(DatasetInfo info,
                       ParseDatasetInfo(InfoWith(R"({"compression":"","shard_file_type":"npz",)"
                                                 R"("hash_checksum_algorithms":[]})"),
                                        "dataset_info.json"));
  EXPECT_EQ(info.dataset_structure.compression, Compression::kNone);
  EXPECT_EQ(info.dataset_structure.shard_file_type, ShardFileType::kNpz);
  EXPECT_TRUE(info.dataset_structure.hash_checksum_algorithms.empty());
}

TEST(ModelsParseTest, ShapeDimsMustBePositive) {
  for (const char* dim : {"0", "-1", "\"0\"", "false"}) {
    SCOPED_TRACE(dim);
    EXPECT_STATUS(kInvalid,
                  "dataset_info.json: dataset_structure.saved_data_description[1].shape[1]: "
                  "All dimensions in the shape must be strictly positive",
                  ParseDatasetInfo(InfoWith(StructureWithAttr(
                                       std::string(R"({"name":"s","dtype":"uint8","shape":[2,)") +
                                       dim + "]}")),
                                   "dataset_info.json"));
  }
  EXPECT_STATUS(kInvalid, "shape[0]: is too large",
                ParseDatasetInfo(InfoWith(StructureWithAttr(
                                     R"({"name":"s","dtype":"uint8","shape":[4611686018427387905]})")),
                                 "dataset_info.json"));
  ASSERT_OK_AND_ASSIGN(DatasetInfo info,
                       ParseDatasetInfo(InfoWith(StructureWithAttr(
                                            R"({"name":"s","dtype":"uint8","shape":["3",2.0,true]})")),
                                        "dataset_info.json"));
  EXPECT_EQ(info.dataset_structure.saved_data_description[1].shape, (Shape{3, 2, 1}));
}

// ---- Paths ----------------------------------------------------------------------

TEST(ModelsParseTest, DotDotRejectedWithFileAndFieldPath) {
  EXPECT_STATUS(kInvalid,
                "train/shards_list.json: shard_files[3].file_infos[1].file_path: a \"..\" "
                "component is not allowed",
                ParseShardsList(ListWithFileInfo(R"({"file_path":"train/../../etc/passwd"})"),
                                "train/shards_list.json"));
  // The exact message from the brief, for file_infos[0].
  const std::string list =
      R"({"relative_path_self":"train/shards_list.json","shard_files":[)"
      R"({"file_infos":[{"file_path":"a.fb"}]},{"file_infos":[{"file_path":"b.fb"}]},)"
      R"({"file_infos":[{"file_path":"c.fb"}]},{"file_infos":[{"file_path":"x/../y.fb"}]}]})";
  EXPECT_STATUS(kInvalid,
                "train/shards_list.json: shard_files[3].file_infos[0].file_path: a \"..\" "
                "component is not allowed",
                ParseShardsList(list, "train/shards_list.json"));
  EXPECT_STATUS(kInvalid, "s.json: relative_path_self: a \"..\" component is not allowed",
                ParseShardsList(R"({"relative_path_self":"../shards_list.json"})", "s.json"));
  EXPECT_STATUS(kInvalid, "relative_path_self: a \"..\" component",
                ParseShardsList(R"({"relative_path_self":"a\\..\\shards_list.json"})", "s.json"));
  EXPECT_STATUS(kInvalid,
                "dataset_info.json: splits.train.shard_list_info_file.file_path: a \"..\"",
                ParseDatasetInfo(
                    InfoWith("{}", R"({"train":{"shard_list_info_file":{"file_path":"train/../shards_list.json"}}})"),
                    "dataset_info.json"));
}

TEST(ModelsParseTest, AbsolutePathsRejected) {
  for (const char* p : {"/etc/passwd", "\\\\\\\\server\\\\x.fb", "C:\\\\x.fb", "c:x.fb"}) {
    SCOPED_TRACE(p);
    EXPECT_STATUS(kInvalid,
                  "s.json: shard_files[3].file_infos[1].file_path: absolute paths are not allowed",
                  ParseShardsList(ListWithFileInfo(std::string(R"({"file_path":")") + p + "\"}"),
                                  "s.json"));
  }
  EXPECT_STATUS(kInvalid, "s.json: relative_path_self: absolute paths are not allowed",
                ParseShardsList(R"({"relative_path_self":"/tmp/shards_list.json"})", "s.json"));
  EXPECT_STATUS(kInvalid, "file_path: the path is empty",
                ParseShardsList(ListWithFileInfo(R"({"file_path":""})"), "s.json"));
  EXPECT_STATUS(kInvalid, "file_path: the path contains a NUL byte",
                ParseShardsList(ListWithFileInfo(R"({"file_path":"a\u0000b"})"), "s.json"));
}

TEST(ModelsParseTest, ShardsListFileNames) {
  EXPECT_STATUS(kInvalid,
                "dataset_info.json: splits.holdout.shard_list_info_file.file_path: the file name "
                "must be \"shards_list.json\", got \"list.json\"",
                ParseDatasetInfo(
                    InfoWith("{}", R"({"holdout":{"shard_list_info_file":{"file_path":"holdout/list.json"}}})"),
                    "dataset_info.json"));
  EXPECT_STATUS(kInvalid, "s.json: children_shard_lists[0].shard_list_info_file.file_path: the file name",
                ParseShardsList(R"({"relative_path_self":"a/shards_list.json",)"
                                R"("children_shard_lists":[{"shard_list_info_file":)"
                                R"({"file_path":"a/b/x.fb"}}]})",
                                "s.json"));
  EXPECT_STATUS(kInvalid, "s.json: relative_path_self: the file name must be \"shards_list.json\"",
                ParseShardsList(R"({"relative_path_self":"train/shards_list.json.bak"})", "s.json"));
  // Shard file paths have no name constraint; paths are normalized like str(Path).
  ASSERT_OK_AND_ASSIGN(ShardsList l,
                       ParseShardsList(R"({"relative_path_self":"./train//a/shards_list.json/",)"
                                       R"("shard_files":[{"file_infos":[{"file_path":"train/./a/x.fb"}]}]})",
                                       "s.json"));
  EXPECT_EQ(l.relative_path_self, "train/a/shards_list.json");
  EXPECT_EQ(l.shard_files[0].file_infos[0].file_path, "train/a/x.fb");
}

TEST(ModelsParseTest, MalformedJsonNamesFile) {
  EXPECT_STATUS(kInvalid, "test/shards_list.json: malformed JSON at byte",
                ParseShardsList("{\"relative_path_self\": ", "test/shards_list.json"));
  EXPECT_STATUS(kInvalid, "line 2", ParseDatasetInfo("{\n  \"metadata\": x}", "dataset_info.json"));
}

// ---- Serialization ----------------------------------------------------------------

TEST(ModelsSerializeTest, ShardsListExcludesDefaultsAtEveryLevel) {
  ShardsList l;
  l.relative_path_self = "train/shards_list.json";
  EXPECT_EQ(SerializeShardsList(l), "{\n  \"relative_path_self\": \"train/shards_list.json\"\n}");

  ShardInfo s;
  s.file_infos.push_back(FileInfo{"train/a/x.fb", {}});
  l.shard_files.push_back(s);
  ShardListInfo c;
  c.shard_list_info_file.file_path = "train/a/shards_list.json";
  l.children_shard_lists.push_back(c);
  EXPECT_EQ(SerializeShardsList(l),
            R"({
  "relative_path_self": "train/shards_list.json",
  "shard_files": [
    {
      "file_infos": [
        {
          "file_path": "train/a/x.fb"
        }
      ]
    }
  ],
  "children_shard_lists": [
    {
      "shard_list_info_file": {
        "file_path": "train/a/shards_list.json"
      }
    }
  ]
})");

  l.number_of_examples = 7;
  l.shard_files[0].number_of_examples = 3;
  l.shard_files[0].file_infos[0].hash_checksums = {"ab", "cd"};
  l.shard_files[0].custom_metadata = *JsonValue::Parse(R"({"z":1,"a":{}})");
  l.children_shard_lists[0].number_of_examples = 4;
  l.children_shard_lists[0].number_of_shards = 2;
  EXPECT_EQ(SerializeShardsList(l),
            R"({
  "relative_path_self": "train/shards_list.json",
  "number_of_examples": 7,
  "shard_files": [
    {
      "file_infos": [
        {
          "file_path": "train/a/x.fb",
          "hash_checksums": [
            "ab",
            "cd"
          ]
        }
      ],
      "number_of_examples": 3,
      "custom_metadata": {
        "z": 1,
        "a": {}
      }
    }
  ],
  "children_shard_lists": [
    {
      "shard_list_info_file": {
        "file_path": "train/a/shards_list.json"
      },
      "number_of_examples": 4,
      "number_of_shards": 2
    }
  ]
})");
  // And it parses back to the same text.
  ASSERT_OK_AND_ASSIGN(ShardsList back, ParseShardsList(SerializeShardsList(l), "s.json"));
  EXPECT_EQ(SerializeShardsList(back), SerializeShardsList(l));
}

TEST(ModelsSerializeTest, DatasetInfoWritesEveryField) {
  DatasetInfo info;
  info.metadata.sedpack_version = "0.1.0";
  Attribute a;
  a.name = "x";
  a.dtype = "float32";
  a.shape = {2, 3};
  info.dataset_structure.saved_data_description.push_back(a);
  info.dataset_structure.hash_checksum_algorithms = {};
  ShardListInfo t;
  t.shard_list_info_file.file_path = "test/shards_list.json";
  info.splits.emplace_back(Split::kTest, t);
  EXPECT_EQ(SerializeDatasetInfo(info), R"({
  "metadata": {
    "description": "",
    "dataset_license": "https://creativecommons.org/licenses/by/4.0/",
    "dataset_version": "1.0.0",
    "download_from": "",
    "custom_metadata": {},
    "sedpack_version": "0.1.0"
  },
  "dataset_structure": {
    "saved_data_description": [
      {
        "name": "x",
        "dtype": "float32",
        "shape": [
          2,
          3
        ],
        "custom_metadata": {}
      }
    ],
    "compression": "GZIP",
    "examples_per_shard": 256,
    "shard_file_type": "fb",
    "hash_checksum_algorithms": []
  },
  "splits": {
    "test": {
      "shard_list_info_file": {
        "file_path": "test/shards_list.json",
        "hash_checksums": []
      },
      "number_of_examples": 0,
      "number_of_shards": 0
    }
  }
})");
  // Splits keep their order of insertion.
  info.splits.emplace_back(Split::kTrain, t);
  ASSERT_OK_AND_ASSIGN(DatasetInfo back, ParseDatasetInfo(SerializeDatasetInfo(info), "d"));
  ASSERT_EQ(back.splits.size(), 2u);
  EXPECT_EQ(back.splits[0].first, Split::kTest);
  EXPECT_EQ(back.splits[1].first, Split::kTrain);
}

TEST(ModelsSerializeTest, CustomMetadataLikePydantic) {
  // Expected text produced by pydantic 2.13.4 model_dump_json(indent=2) for the
  // same dict (floats, big ints, escapes, nesting).
  DatasetInfo info;
  info.metadata.custom_metadata = *JsonValue::Parse(
      "{\"a\":[1.0,0.1,2.5,1e15,1e16,1e20,1e-7,0.00001,0.0001,-0.0,123.456,"
      "1180591620717411303424,\"a\\\"\\\\\\n\\t\\r\\b\\f\\u0001\\u001f\\u007f/\\u00e9\\u2028\"],"
      "\"e\":[],\"o\":{}}");
  const std::string out = SerializeDatasetInfo(info);
  const std::string expected =
      "    \"custom_metadata\": {\n"
      "      \"a\": [\n"
      "        1.0,\n"
      "        0.1,\n"
      "        2.5,\n"
      "        1000000000000000.0,\n"
      "        1e+16,\n"
      "        1e+20,\n"
      "        1e-7,\n"
      "        0.00001,\n"
      "        0.0001,\n"
      "        -0.0,\n"
      "        123.456,\n"
      "        1180591620717411303424,\n"
      "        \"a\\\"\\\\\\n\\t\\r\\b\\f\\u0001\\u001f\x7f/\xc3\xa9\xe2\x80\xa8\"\n"
      "      ],\n"
      "      \"e\": [],\n"
      "      \"o\": {}\n"
      "    },\n";
  EXPECT_NE(out.find(expected), std::string::npos) << out;
  EXPECT_EQ(out.back(), '}');  // no trailing newline
}

TEST(ModelsSerializeTest, ShardListInfoCompactRoundTrip) {
  ShardListInfo info;
  info.shard_list_info_file = FileInfo{"train/ab/shards_list.json", {"00ff", "11ee"}};
  info.number_of_examples = 12;
  info.number_of_shards = 3;
  const std::string text = SerializeShardListInfo(info);
  EXPECT_EQ(text,
            R"({"shard_list_info_file":{"file_path":"train/ab/shards_list.json",)"
            R"("hash_checksums":["00ff","11ee"]},"number_of_examples":12,"number_of_shards":3})");
  ASSERT_OK_AND_ASSIGN(ShardListInfo back, ParseShardListInfo(text, "rank 3"));
  EXPECT_EQ(back.shard_list_info_file.file_path, info.shard_list_info_file.file_path);
  EXPECT_EQ(back.shard_list_info_file.hash_checksums, info.shard_list_info_file.hash_checksums);
  EXPECT_EQ(back.number_of_examples, 12);
  EXPECT_EQ(back.number_of_shards, 3);
  // Zeros are written too (all fields).
  ShardListInfo zero;
  zero.shard_list_info_file.file_path = "t/shards_list.json";
  EXPECT_EQ(SerializeShardListInfo(zero),
            R"({"shard_list_info_file":{"file_path":"t/shards_list.json","hash_checksums":[]},)"
            R"("number_of_examples":0,"number_of_shards":0})");
  EXPECT_STATUS(kInvalid, "rank 3: shard_list_info_file.file_path: the file name",
                ParseShardListInfo(R"({"shard_list_info_file":{"file_path":"t/x"}})", "rank 3"));
}

// ---- Model helpers ----------------------------------------------------------------

TEST(ModelsTest, AttributeToSpec) {
  Attribute a{"img", "uint8", {2, 3}, {}};
  ASSERT_OK_AND_ASSIGN(AttributeSpec spec, a.ToSpec());
  EXPECT_EQ(spec.name, "img");
  EXPECT_EQ(spec.dtype, DType::kUInt8);
  EXPECT_EQ(spec.shape, (Shape{2, 3}));
  Attribute bad{"w", "complex64", {}, {}};
  EXPECT_STATUS(kInvalid, "attribute \"w\"", bad.ToSpec());
  DatasetStructure s;
  s.saved_data_description = {a, bad};
  EXPECT_STATUS(kInvalid, "complex64", s.Schema());
}

}  // namespace
}  // namespace sedpack
