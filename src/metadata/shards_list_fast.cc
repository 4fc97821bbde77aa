// SPDX-License-Identifier: Apache-2.0
//
// The fast path of ParseShardsList (see shards_list_parse.h). It accepts only
// what it can prove the general parser maps to the same ShardsList, and gives
// up (std::nullopt) on anything else:
//  - keys and string values without escapes or control characters (so the raw
//    bytes are the decoded text; simdjson has validated the UTF-8);
//  - each known key at most once, no unknown keys (duplicates keep the last
//    value in the general parser; skipped values are not fully validated by
//    On-Demand);
//  - counts written as plain JSON integers in [0, 2^62] (the general parser's
//    lax forms, 2.0, true, "3", go there);
//  - paths already in normal form: relative, '/'-separated, no empty, "." or
//    ".." component, no backslash, no drive prefix;
//  - custom_metadata objects nested at most kMaxCustomBrackets deep, kept
//    through JsonValue::Parse exactly as the general parser keeps them (the
//    value of the previous shard is reused when the text is the same);
//  - nothing after the root object, no byte order mark.
// Any simdjson error (malformed JSON, wrong types, depth) also gives up, so
// the general parser reports it with the usual message.
#include <charconv>
#include <cstdint>
#include <optional>
#include <simdjson.h>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>

#include "metadata/shards_list_parse.h"
#include "sedpack/metadata/json_value.h"
#include "sedpack/metadata/models.h"

namespace sedpack::metadata_internal {
namespace {

namespace od = simdjson::ondemand;

static_assert(kShardsListPadding == simdjson::SIMDJSON_PADDING);

constexpr std::uint64_t kMaxCount = std::uint64_t{1} << 62;
// The general parser refuses documents nested deeper than 256 levels and a
// shard's custom_metadata object is the 4th level: counting every '{' and '['
// of its text (also inside strings) bounds its depth from above.
constexpr int kMaxCustomBrackets = 200;

bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsJsonSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

// `p` points just past an opening quote. The text up to the closing quote when
// it has no escape and no control character (the JSON grammar forbids raw
// control characters in strings, simdjson does not check them).
bool PlainString(const char* p, std::string_view* out) {
  const char* q = p;
  for (;; ++q) {
    const auto c = static_cast<unsigned char>(*q);
    if (c == '"') break;
    if (c == '\\' || c < 0x20) return false;
  }
  *out = std::string_view(p, static_cast<std::size_t>(q - p));
  return true;
}

bool Key(od::field& field, std::string_view* out) { return PlainString(field.key().raw(), out); }

bool StringValue(od::value v, std::string_view* out) {
  od::raw_json_string raw;
  if (v.get_raw_json_string().get(raw) != simdjson::SUCCESS) return false;
  return PlainString(raw.raw(), out);
}

// A plain non-negative JSON integer no larger than kMaxCount.
bool Count(od::value v, std::int64_t* out) {
  const std::string_view tok = v.raw_json_token();
  std::size_t n = 0;
  while (n < tok.size() && IsDigit(tok[n])) ++n;
  if (n == 0 || n > 19 || (tok[0] == '0' && n > 1)) return false;
  for (std::size_t i = n; i < tok.size(); ++i) {
    if (!IsJsonSpace(tok[i])) return false;
  }
  std::uint64_t value = 0;
  const auto res = std::from_chars(tok.data(), tok.data() + n, value);
  if (res.ec != std::errc() || value > kMaxCount) return false;
  std::uint64_t check = 0;
  if (v.get_uint64().get(check) != simdjson::SUCCESS || check != value) return false;
  *out = static_cast<std::int64_t>(value);
  return true;
}

// A path the general parser would store unchanged (see the file comment).
bool NormalPath(std::string_view s, bool shards_list) {
  if (s.empty() || (s.size() >= 2 && s[1] == ':')) return false;
  if (s.find('\\') != std::string_view::npos) return false;
  std::size_t start = 0;
  for (;;) {
    std::size_t end = s.find('/', start);
    if (end == std::string_view::npos) end = s.size();
    const std::string_view part = s.substr(start, end - start);
    if (part.empty() || part == "." || part == "..") return false;
    if (end == s.size()) return !shards_list || part == "shards_list.json";
    start = end + 1;
  }
}

bool PathValue(od::value v, bool shards_list, std::string* out) {
  std::string_view s;
  if (!StringValue(v, &s) || !NormalPath(s, shards_list)) return false;
  out->assign(s);
  return true;
}

bool FileInfoFrom(od::value v, bool shards_list, FileInfo* out) {
  od::object obj;
  if (v.get_object().get(obj) != simdjson::SUCCESS) return false;
  bool have_path = false;
  bool have_hashes = false;
  for (auto member : obj) {
    od::field field;
    std::string_view key;
    if (std::move(member).get(field) != simdjson::SUCCESS || !Key(field, &key)) return false;
    if (key == "file_path") {
      if (have_path || !PathValue(field.value(), shards_list, &out->file_path)) return false;
      have_path = true;
    } else if (key == "hash_checksums") {
      if (have_hashes) return false;
      have_hashes = true;
      od::array arr;
      if (field.value().get_array().get(arr) != simdjson::SUCCESS) return false;
      for (auto item : arr) {
        od::value iv;
        std::string_view s;
        if (item.get(iv) != simdjson::SUCCESS || !StringValue(iv, &s)) return false;
        out->hash_checksums.emplace_back(s);
      }
    } else {
      return false;
    }
  }
  return have_path;
}

// The last custom_metadata text seen and its JsonValue: shards of one writer
// often carry the same object ({"group": "A"}), and the same text always gives
// the same value.
struct CustomCache {
  std::string_view raw;
  JsonValue value;
  bool valid = false;
};

bool CustomMetadataFrom(od::value v, CustomCache* cache, JsonValue* out) {
  od::object obj;
  std::string_view raw;
  if (v.get_object().get(obj) != simdjson::SUCCESS ||
      obj.raw_json().get(raw) != simdjson::SUCCESS) {
    return false;
  }
  if (cache->valid && cache->raw == raw) {
    *out = cache->value;
    return true;
  }
  int brackets = 0;
  for (char c : raw) brackets += (c == '{' || c == '[') ? 1 : 0;
  if (brackets > kMaxCustomBrackets) return false;
  // The same tree and compact text the general parser keeps; JsonValue::Parse
  // also validates the bytes On-Demand skipped.
  auto parsed = JsonValue::Parse(raw);
  if (!parsed.ok()) return false;
  *out = std::move(parsed).value();
  *cache = CustomCache{raw, *out, true};
  return true;
}

bool ShardInfoFrom(od::value v, CustomCache* cache, ShardInfo* out) {
  od::object obj;
  if (v.get_object().get(obj) != simdjson::SUCCESS) return false;
  bool have_files = false;
  bool have_count = false;
  bool have_custom = false;
  for (auto member : obj) {
    od::field field;
    std::string_view key;
    if (std::move(member).get(field) != simdjson::SUCCESS || !Key(field, &key)) return false;
    if (key == "file_infos") {
      if (have_files) return false;
      have_files = true;
      od::array arr;
      if (field.value().get_array().get(arr) != simdjson::SUCCESS) return false;
      for (auto item : arr) {
        od::value iv;
        if (item.get(iv) != simdjson::SUCCESS) return false;
        if (!FileInfoFrom(iv, /*shards_list=*/false, &out->file_infos.emplace_back())) {
          return false;
        }
      }
    } else if (key == "number_of_examples") {
      if (have_count || !Count(field.value(), &out->number_of_examples)) return false;
      have_count = true;
    } else if (key == "custom_metadata") {
      if (have_custom || !CustomMetadataFrom(field.value(), cache, &out->custom_metadata)) return false;
      have_custom = true;
    } else {
      return false;
    }
  }
  return have_files;
}

bool ShardListInfoFrom(od::value v, ShardListInfo* out) {
  od::object obj;
  if (v.get_object().get(obj) != simdjson::SUCCESS) return false;
  bool have_file = false;
  bool have_examples = false;
  bool have_shards = false;
  for (auto member : obj) {
    od::field field;
    std::string_view key;
    if (std::move(member).get(field) != simdjson::SUCCESS || !Key(field, &key)) return false;
    if (key == "shard_list_info_file") {
      if (have_file ||
          !FileInfoFrom(field.value(), /*shards_list=*/true, &out->shard_list_info_file)) {
        return false;
      }
      have_file = true;
    } else if (key == "number_of_examples") {
      if (have_examples || !Count(field.value(), &out->number_of_examples)) return false;
      have_examples = true;
    } else if (key == "number_of_shards") {
      if (have_shards || !Count(field.value(), &out->number_of_shards)) return false;
      have_shards = true;
    } else {
      return false;
    }
  }
  return have_file;
}

bool ShardsListFrom(od::object& obj, ShardsList* out) {
  bool have_path = false;
  bool have_count = false;
  bool have_shards = false;
  bool have_children = false;
  CustomCache cache;
  for (auto member : obj) {
    od::field field;
    std::string_view key;
    if (std::move(member).get(field) != simdjson::SUCCESS || !Key(field, &key)) return false;
    if (key == "relative_path_self") {
      if (have_path || !PathValue(field.value(), /*shards_list=*/true, &out->relative_path_self)) {
        return false;
      }
      have_path = true;
    } else if (key == "number_of_examples") {
      if (have_count || !Count(field.value(), &out->number_of_examples)) return false;
      have_count = true;
    } else if (key == "shard_files") {
      if (have_shards) return false;
      have_shards = true;
      od::array arr;
      if (field.value().get_array().get(arr) != simdjson::SUCCESS) return false;
      for (auto item : arr) {
        od::value iv;
        if (item.get(iv) != simdjson::SUCCESS) return false;
        if (!ShardInfoFrom(iv, &cache, &out->shard_files.emplace_back())) return false;
      }
    } else if (key == "children_shard_lists") {
      if (have_children) return false;
      have_children = true;
      od::array arr;
      if (field.value().get_array().get(arr) != simdjson::SUCCESS) return false;
      for (auto item : arr) {
        od::value iv;
        if (item.get(iv) != simdjson::SUCCESS) return false;
        if (!ShardListInfoFrom(iv, &out->children_shard_lists.emplace_back())) return false;
      }
    } else {
      return false;
    }
  }
  return have_path;
}

}  // namespace

std::optional<ShardsList> ParseShardsListFast(const char* data, std::size_t size,
                                              std::size_t capacity) {
  if (capacity < size + kShardsListPadding) return std::nullopt;
  // nlohmann skips a UTF-8 byte order mark; leave that corner to it.
  if (size >= 3 && static_cast<unsigned char>(data[0]) == 0xEF) return std::nullopt;
  // A parser per call: its buffers are sized by the document, and keeping
  // them (thread_local) would pin the memory of the largest list ever read.
  od::parser parser;
  od::document doc;
  if (parser.iterate(data, size, capacity).get(doc) != simdjson::SUCCESS) return std::nullopt;
  od::object root;
  if (doc.get_object().get(root) != simdjson::SUCCESS) return std::nullopt;
  ShardsList list;
  if (!ShardsListFrom(root, &list)) return std::nullopt;
  // Past the root object's last token there must be nothing (simdjson 3.0 has
  // no document::at_end(); current_location() says OUT_OF_BOUNDS there).
  if (doc.current_location().error() != simdjson::OUT_OF_BOUNDS) return std::nullopt;
  return list;
}

}  // namespace sedpack::metadata_internal
