// SPDX-License-Identifier: Apache-2.0
//
// ParseShardsList has two parsers (metadata/shards_list_parse.h): simdjson for
// plain lists, the JSON-tree parser for everything else. These tests check
// that the fast one is really taken for lists as the reference writes them,
// and that the public result (value or error message) is always the tree
// parser's, on hand-written corners and on every one-byte mutation of a list.
#include <cstddef>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "metadata/shards_list_parse.h"
#include "sedpack/metadata/models.h"
#include "support/test_support.h"

namespace sedpack {
namespace {

namespace fs = std::filesystem;
using metadata_internal::kShardsListPadding;
using metadata_internal::ParseShardsListFast;
using metadata_internal::ParseShardsListTree;
constexpr StatusCode kInvalid = StatusCode::kInvalidArgument;

std::optional<ShardsList> Fast(const std::string& text) {
  std::string padded = text;
  padded.append(kShardsListPadding, ' ');
  return ParseShardsListFast(padded.data(), text.size(), padded.size());
}

// Everything a ShardsList holds, custom_metadata text included.
std::string Canon(const ShardsList& l) {
  std::string out = SerializeShardsList(l);
  for (const ShardInfo& s : l.shard_files) out += "\n" + s.custom_metadata.text();
  return out;
}

// The public parser gives exactly what the tree parser gives. Returns whether
// the fast parser took the text.
bool ExpectSame(const std::string& text) {
  auto got = ParseShardsList(text, "x/shards_list.json");
  auto want = ParseShardsListTree(text, "x/shards_list.json");
  EXPECT_EQ(got.ok(), want.ok()) << text << "\n"
                                 << (got.ok() ? want.status().message() : got.status().message());
  if (got.ok() && want.ok()) {
    EXPECT_EQ(Canon(*got), Canon(*want)) << text;
  } else if (!got.ok() && !want.ok()) {
    EXPECT_EQ(got.status().code(), want.status().code()) << text;
    EXPECT_EQ(got.status().detail(), want.status().detail()) << text;
    EXPECT_EQ(got.status().message(), want.status().message()) << text;
  }
  const auto fast = Fast(text);
  if (fast) {
    EXPECT_TRUE(want.ok()) << "the fast parser accepted what the tree parser refuses: " << text;
    if (want.ok()) {
      EXPECT_EQ(Canon(*fast), Canon(*want)) << text;
    }
  }
  return fast.has_value();
}

// A plain list in the reference's layout, with every field the model has.
std::string PlainList() {
  ShardsList l;
  l.relative_path_self = "train/ab/shards_list.json";
  l.number_of_examples = 7;
  // The last two shards carry the same custom_metadata (the fast parser
  // reuses the value of equal text).
  for (int i = 0; i < 3; ++i) {
    ShardInfo s;
    s.file_infos.push_back({"train/ab/s" + std::to_string(i) + ".fb", {"0123abcd", "ff00"}});
    s.number_of_examples = i == 2 ? 0 : 3 + i;
    if (i >= 1) s.custom_metadata = *JsonValue::Parse(R"({"group":"A","n":[1,2.5,-3e-7],"u":null})");
    l.shard_files.push_back(std::move(s));
  }
  ShardListInfo c;
  c.shard_list_info_file = {"train/ab/cd/shards_list.json", {"99"}};
  c.number_of_examples = 12;
  c.number_of_shards = 4;
  l.children_shard_lists.push_back(c);
  return SerializeShardsList(l);
}

TEST(ShardsListFastTest, TakesThePlainForm) {
  const std::string text = PlainList();
  ASSERT_TRUE(ExpectSame(text)) << "the fast parser refused a plain list:\n" << text;
  const auto fast = Fast(text);
  ASSERT_TRUE(fast.has_value());
  ASSERT_EQ(fast->shard_files.size(), 3u);
  EXPECT_EQ(fast->shard_files[1].file_infos[0].file_path, "train/ab/s1.fb");
  EXPECT_EQ(fast->shard_files[1].file_infos[0].hash_checksums, (std::vector<std::string>{"0123abcd", "ff00"}));
  EXPECT_EQ(fast->shard_files[1].number_of_examples, 4);
  EXPECT_EQ(fast->shard_files[1].custom_metadata.text(), R"({"group":"A","n":[1,2.5,-3e-7],"u":null})");
  EXPECT_TRUE(fast->shard_files[0].custom_metadata.IsEmptyObject());
  EXPECT_EQ(fast->shard_files[2].custom_metadata.text(), fast->shard_files[1].custom_metadata.text());
  EXPECT_EQ(fast->children_shard_lists[0].number_of_shards, 4);
  EXPECT_EQ(SerializeShardsList(*fast), text);
}

TEST(ShardsListFastTest, TakesEveryGoldenList) {
  int lists = 0;
  for (const auto& e : fs::recursive_directory_iterator(testing::GoldenDir())) {
    if (!e.is_regular_file() || e.path().filename() != "shards_list.json") continue;
    std::ifstream in(e.path(), std::ios::binary);
    std::ostringstream ss;
    ss << in.rdbuf();
    SCOPED_TRACE(e.path().string());
    EXPECT_TRUE(ExpectSame(ss.str())) << "the fast parser refused a list the reference wrote";
    ++lists;
  }
  EXPECT_GE(lists, 20);
}

TEST(ShardsListFastTest, CornersGiveTheTreeParsersAnswer) {
  const std::string head = R"({"relative_path_self":"a/shards_list.json")";
  const std::string shard = R"(,"shard_files":[{"file_infos":[{"file_path":"a/b.fb"}])";
  const std::vector<std::string> cases = {
      // Malformed JSON.
      "", " ", "{", "}", "[]", "null", "{\"relative_path_self\":", head, head + ",}", head + "}}",
      head + "} x", head + "}\n{}", head + ",\"number_of_examples\" 1}", head + " \"number_of_examples\":1}",
      head + shard + "}]", head + shard + "}]}", head + shard + ",}]}", head + shard + "}],}",
      "\xEF\xBB\xBF" + head + "}", head + ",\"shard_files\":[{\"file_infos\":[{\"file_path\":\"a/\xff.fb\"}]}]}",
      head + ",\"shard_files\":[{\"file_infos\":[{\"file_path\":\"a/\x01.fb\"}]}]}",
      std::string("{\"relative_path_self\":\"a/shards_list.json\0\"}", 44),
      // Missing keys, wrong types.
      "{}", R"({"number_of_examples":1})", head + R"(,"shard_files":[{}]})",
      head + R"(,"shard_files":[{"file_infos":[{}]}]})", head + R"(,"shard_files":{}})",
      head + R"(,"shard_files":[[]]})", head + R"(,"shard_files":[{"file_infos":{}}]})",
      head + R"(,"children_shard_lists":[{}]})", head + R"(,"children_shard_lists":[{"shard_list_info_file":[]}]})",
      head + shard + R"(,"custom_metadata":[]}]})", head + shard + R"(,"custom_metadata":null}]})",
      head + R"(,"shard_files":[{"file_infos":[{"file_path":"a/b.fb","hash_checksums":["x",1]}]}]})",
      R"({"relative_path_self":7})", R"({"relative_path_self":null})",
      // Numbers: hostile, lax, out of range.
      head + R"(,"number_of_examples":-1})", head + R"(,"number_of_examples":-0})",
      head + R"(,"number_of_examples":01})", head + R"(,"number_of_examples":1.0})",
      head + R"(,"number_of_examples":1.5})", head + R"(,"number_of_examples":1e3})",
      head + R"(,"number_of_examples":1e400})", head + R"(,"number_of_examples":true})",
      head + R"(,"number_of_examples":"12"})", head + R"(,"number_of_examples":" +1_000.0 "})",
      head + R"(,"number_of_examples":4611686018427387904})",
      head + R"(,"number_of_examples":4611686018427387905})",
      head + R"(,"number_of_examples":18446744073709551616})",
      head + R"(,"number_of_examples":99999999999999999999999999999})",
      head + R"(,"number_of_examples":-99999999999999999999999999999})",
      head + R"(,"number_of_examples":1 })", head + R"(,"number_of_examples":[1]})",
      // Paths.
      R"({"relative_path_self":"../shards_list.json"})", R"({"relative_path_self":"/a/shards_list.json"})",
      R"({"relative_path_self":"./a//shards_list.json/"})", R"({"relative_path_self":"a\\shards_list.json"})",
      R"({"relative_path_self":"a\/shards_list.json"})", R"({"relative_path_self":"C:shards_list.json"})",
      R"({"relative_path_self":"a/list.json"})", R"({"relative_path_self":""})",
      head + R"(,"shard_files":[{"file_infos":[{"file_path":"a/../../b.fb"}]}]})",
      head + R"(,"shard_files":[{"file_infos":[{"file_path":"a/./b.fb"}]}]})",
      // Keys: duplicates (the last value wins), unknown, escaped.
      head + R"(,"number_of_examples":1,"number_of_examples":2})",
      head + R"(,"number_of_examples":-1,"number_of_examples":2})",
      R"({"relative_path_self":"../x","relative_path_self":"a/shards_list.json"})",
      head + R"(,"extra":{"deep":[1,2,}]})", head + R"(,"extra":1})",
      head + R"(,"number_of_\u0065xamples":5})",
      head + shard + R"(,"custom_metadata":{"k":1,"k":2,"j":{}}}]})",
      head + shard + R"(,"custom_metadata":{"s":"\u00e9\n","f":1E2,"g":-0.0,"big":123456789012345678901234567890}}]})",
      head + shard + R"(,"custom_metadata":{"bad":[1,2}}]})",
  };
  for (const std::string& text : cases) {
    SCOPED_TRACE(text);
    ExpectSame(text);
  }
  // Nesting near the tree parser's limit of 256 levels, inside custom_metadata
  // (the 4th level).
  for (int depth : {150, 197, 252, 253, 254, 300}) {
    SCOPED_TRACE(depth);
    const std::string nested = std::string(depth, '[') + std::string(depth, ']');
    ExpectSame(head + shard + R"(,"custom_metadata":{"d":)" + nested + "}}]}");
  }
}

TEST(ShardsListFastTest, EveryOneByteMutationGivesTheTreeParsersAnswer) {
  const std::string text = PlainList();
  const std::string replacements = "\"\\{}],:0-. x\x01\xc3";
  const std::string insertions = "\"\\,}1 ";
  int fast_taken = 0;
  int mutants = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    std::vector<std::string> variants;
    variants.push_back(text.substr(0, i) + text.substr(i + 1));  // deleted
    for (char c : replacements) {
      if (c == text[i]) continue;
      std::string r = text;
      r[i] = c;
      variants.push_back(r);
    }
    for (char c : insertions) variants.push_back(text.substr(0, i) + c + text.substr(i));
    for (const std::string& v : variants) {
      ++mutants;
      if (ExpectSame(v)) ++fast_taken;
      if (::testing::Test::HasFailure()) return;  // one reported mutant is enough
    }
  }
  // Mutations inside hex digests, counts or names keep the list plain.
  EXPECT_GT(fast_taken, 100) << "of " << mutants;
}

TEST(ShardsListFastTest, LargeListViaOwnedText) {
  ShardsList l;
  l.relative_path_self = "train/shards_list.json";
  for (int i = 0; i < 5000; ++i) {
    ShardInfo s;
    s.file_infos.push_back({"train/x/" + std::to_string(i) + ".fb", {std::string(64, 'a')}});
    s.number_of_examples = i;
    l.shard_files.push_back(std::move(s));
    l.number_of_examples += i;
  }
  const std::string text = SerializeShardsList(l);
  ASSERT_TRUE(Fast(text).has_value());
  ASSERT_OK_AND_ASSIGN(ShardsList got, metadata_internal::ParseShardsListOwned(text, "s"));
  EXPECT_EQ(SerializeShardsList(got), text);
  // An error still names the source and the field, as the tree parser does;
  // read from a dataset, the list is damaged data (Corruption), while the
  // text given to ParseShardsList is the caller's argument.
  std::string bad = text;
  bad.replace(bad.rfind("\"number_of_examples\": 4999"), 26, "\"number_of_examples\": -49");
  EXPECT_STATUS(StatusCode::kCorruption, "s: shard_files[4999].number_of_examples: must not be negative, got -49",
                metadata_internal::ParseShardsListOwned(bad, "s"));
  EXPECT_STATUS(kInvalid, "s: shard_files[4999].number_of_examples: must not be negative, got -49",
                ParseShardsList(bad, "s"));
  EXPECT_STATUS(StatusCode::kCorruption, "s: malformed JSON", metadata_internal::ParseShardsListOwned("{\"a\":", "s"));
}

}  // namespace
}  // namespace sedpack
