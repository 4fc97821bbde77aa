// SPDX-License-Identifier: Apache-2.0
//
// Validation follows the reference's pydantic v2 models in lax mode (checked
// against pydantic 2.13.4 / pydantic-core 2.46.4):
//  - unknown keys are ignored (an error only in `strict` config parsing);
//  - int fields accept JSON integers, floats with no fractional part (2.0),
//    booleans (true -> 1, false -> 0: pydantic's lax int accepts bool) and
//    numeric strings (surrounding whitespace, a sign, single '_' between digits
//    and a ".000" tail are allowed: " +1_000.0 " -> 1000; "3.", "3.5", "0x10"
//    are rejected);
//  - str / Path fields accept only JSON strings, tuple/list fields only arrays,
//    dict fields only objects; null is never accepted.
// Stricter than the reference, on purpose: absolute paths, empty paths and
// negative or > 2^62 counts and dims are refused.
#include "sedpack/metadata/models.h"

#include <charconv>
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "metadata/json_internal.h"
#include "metadata/shards_list_parse.h"
#include "sedpack/metadata/paths.h"
#include "metadata/shard_list_info_wire.h"

namespace sedpack {
namespace {

using json_internal::Node;
using Kind = json_internal::Node::Kind;

constexpr std::int64_t kMaxCount = std::int64_t{1} << 62;
constexpr std::string_view kShardsListName = "shards_list.json";

std::string Child(std::string_view path, std::string_view key) {
  std::string out(path);
  if (!out.empty()) out.push_back('.');
  out += key;
  return out;
}

std::string Index(std::string_view path, std::size_t i) {
  return std::string(path) + "[" + std::to_string(i) + "]";
}

bool IsSpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}
bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// pydantic's lax str -> int: optional whitespace and sign, digits with single
// underscores between them, optionally '.' followed by zeros only. On success
// `digits` holds the magnitude without leading zeros.
bool ParseLaxIntString(std::string_view s, bool* negative, std::string* digits) {
  while (!s.empty() && IsSpace(s.front())) s.remove_prefix(1);
  while (!s.empty() && IsSpace(s.back())) s.remove_suffix(1);
  *negative = false;
  if (!s.empty() && (s[0] == '+' || s[0] == '-')) {
    *negative = s[0] == '-';
    s.remove_prefix(1);
  }
  if (const auto dot = s.find('.'); dot != std::string_view::npos) {
    const std::string_view frac = s.substr(dot + 1);
    if (frac.empty() || frac.find_first_not_of('0') != std::string_view::npos) return false;
    s = s.substr(0, dot);
  }
  digits->clear();
  bool prev_digit = false;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (IsDigit(s[i])) {
      digits->push_back(s[i]);
      prev_digit = true;
    } else if (s[i] == '_' && prev_digit && i + 1 < s.size() && IsDigit(s[i + 1])) {
      prev_digit = false;
    } else {
      return false;
    }
  }
  if (digits->empty()) return false;
  const auto nz = digits->find_first_not_of('0');
  digits->erase(0, nz == std::string::npos ? digits->size() - 1 : nz);
  return true;
}

// Inclusive bounds of an int field, and what to say when they are violated.
struct IntRange {
  std::int64_t min;
  std::int64_t max;
  std::string_view below_min;  // e.g. "must not be negative"
};
constexpr IntRange kCountRange{0, kMaxCount, "must not be negative"};
constexpr IntRange kDimRange{1, kMaxCount,
                             "All dimensions in the shape must be strictly positive"};

class Reader {
 public:
  Reader(std::string_view source, bool strict) : source_(source), strict_(strict) {}

  template <typename... Args>
  Status Error(std::string_view path, Args&&... args) const {
    if (path.empty()) {
      return Status::InvalidArgument(source_, ": ", std::forward<Args>(args)...);
    }
    return Status::InvalidArgument(source_, ": ", path, ": ", std::forward<Args>(args)...);
  }

  /// `cause` (a failed parse of the value at `path`) in the words of Error,
  /// keeping its code and detail.
  Status ErrorFrom(std::string_view path, const Status& cause) const {
    std::string prefix = std::string(source_) + ": ";
    if (!path.empty()) prefix.append(path).append(": ");
    return cause.WithPrefix(prefix);
  }

  Status Expect(const Node& n, Kind kind, std::string_view path) const {
    if (n.kind == kind) return Status::OK();
    return Error(path, "expected ", json_internal::KindName(kind), ", got ",
                 json_internal::KindName(n.kind));
  }

  // An object whose keys are checked against `known` in strict mode.
  Status Object(const Node& n, std::string_view path,
                std::initializer_list<std::string_view> known) const {
    SEDPACK_RETURN_NOT_OK(Expect(n, Kind::kObject, path));
    if (!strict_) return Status::OK();
    for (const auto& [key, value] : n.members) {
      bool found = false;
      for (std::string_view k : known) found = found || k == key;
      if (found) continue;
      std::string list;
      for (std::string_view k : known) {
        if (!list.empty()) list += ", ";
        list += k;
      }
      return Error(path, "unknown key \"", key, "\" (known keys: ", list, ")");
    }
    return Status::OK();
  }

  Status Required(const Node& obj, std::string_view key, std::string_view path,
                  const Node** out) const {
    *out = obj.Find(key);
    if (*out == nullptr) return Error(Child(path, key), "required key is missing");
    return Status::OK();
  }

  Status Str(const Node& n, std::string_view path, std::string* out) const {
    SEDPACK_RETURN_NOT_OK(Expect(n, Kind::kString, path));
    *out = n.text;
    return Status::OK();
  }

  Status Int(const Node& n, std::string_view path, const IntRange& range,
             std::int64_t* out) const {
    bool negative = false;
    std::string digits;
    switch (n.kind) {
      case Kind::kBool:
        digits = n.boolean ? "1" : "0";
        break;
      case Kind::kInt:
        negative = n.text[0] == '-';
        digits = n.text.substr(negative ? 1 : 0);
        break;
      case Kind::kFloat: {
        if (!std::isfinite(n.number) || std::trunc(n.number) != n.number) {
          return Error(path, "expected an integer, got ", json_internal::FormatFloat(n.number));
        }
        // |v| >= 2^63 cannot be an int64; anything that large is out of every range.
        if (std::fabs(n.number) >= 9223372036854775808.0) {
          return Error(path, "is too large (at most ", range.max, "), got ",
                       json_internal::FormatFloat(n.number));
        }
        const auto v = static_cast<std::int64_t>(n.number);
        return CheckRange(v, path, range, out);
      }
      case Kind::kString:
        if (!ParseLaxIntString(n.text, &negative, &digits)) {
          std::string quoted;
          json_internal::AppendQuoted(n.text, &quoted);
          return Error(path, "expected an integer, got the string ", quoted);
        }
        break;
      default:
        return Error(path, "expected an integer, got ", json_internal::KindName(n.kind));
    }
    std::uint64_t mag = 0;
    const auto res = std::from_chars(digits.data(), digits.data() + digits.size(), mag);
    const bool overflow = res.ec != std::errc() || mag > (std::uint64_t{1} << 63) ||
                          (!negative && mag == (std::uint64_t{1} << 63));
    if (overflow) {
      if (negative) return Error(path, range.below_min, ", got -", digits);
      return Error(path, "is too large (at most ", range.max, "), got ", digits);
    }
    const std::int64_t v =
        negative ? static_cast<std::int64_t>(0 - mag) : static_cast<std::int64_t>(mag);
    return CheckRange(v, path, range, out);
  }

  Status CheckRange(std::int64_t v, std::string_view path, const IntRange& range,
                    std::int64_t* out) const {
    if (v < range.min) return Error(path, range.below_min, ", got ", v);
    if (v > range.max) return Error(path, "is too large (at most ", range.max, "), got ", v);
    *out = v;
    return Status::OK();
  }

  Status Count(const Node& obj, std::string_view key, std::string_view path,
               std::int64_t* out) const {
    if (const Node* n = obj.Find(key)) return Int(*n, Child(path, key), kCountRange, out);
    return Status::OK();
  }

  Status OptStr(const Node& obj, std::string_view key, std::string_view path,
                std::string* out) const {
    if (const Node* n = obj.Find(key)) return Str(*n, Child(path, key), out);
    return Status::OK();
  }

  Status CustomMetadata(const Node& obj, std::string_view path, JsonValue* out) const {
    const Node* n = obj.Find("custom_metadata");
    if (n == nullptr) return Status::OK();
    const std::string p = Child(path, "custom_metadata");
    SEDPACK_RETURN_NOT_OK(Expect(*n, Kind::kObject, p));
    auto value = JsonValue::Parse(json_internal::WriteCompact(*n));
    if (!value.ok()) return ErrorFrom(p, value.status());
    *out = std::move(value).value();
    return Status::OK();
  }

  // A Path field: a relative path without "..", stored normalized as Python's
  // str(Path) would print it ("./a//b/" -> "a/b").
  Status PathValue(const Node& n, std::string_view path, bool shards_list,
                   std::string* out) const {
    std::string s;
    SEDPACK_RETURN_NOT_OK(Str(n, path, &s));
    const std::string field = std::string(source_) + ": " + std::string(path);
    SEDPACK_RETURN_NOT_OK(ValidateRelativePath(s, field));
    std::vector<std::string> parts = PathComponents(s);
    if (parts.empty()) return Error(path, "the path names no file (\"", s, "\")");
    if (shards_list && parts.back() != kShardsListName) {
      return Error(path, "the file name must be \"shards_list.json\", got \"", parts.back(),
                   "\" in the path \"", s, "\"");
    }
    *out = JoinPath(parts);
    return Status::OK();
  }

  Status FileInfoFrom(const Node& n, std::string_view path, bool shards_list,
                      FileInfo* out) const {
    SEDPACK_RETURN_NOT_OK(Object(n, path, {"file_path", "hash_checksums"}));
    const Node* fp = nullptr;
    SEDPACK_RETURN_NOT_OK(Required(n, "file_path", path, &fp));
    SEDPACK_RETURN_NOT_OK(PathValue(*fp, Child(path, "file_path"), shards_list, &out->file_path));
    if (const Node* hc = n.Find("hash_checksums")) {
      const std::string p = Child(path, "hash_checksums");
      SEDPACK_RETURN_NOT_OK(Expect(*hc, Kind::kArray, p));
      out->hash_checksums.clear();
      for (std::size_t i = 0; i < hc->items.size(); ++i) {
        std::string h;
        SEDPACK_RETURN_NOT_OK(Str(hc->items[i], Index(p, i), &h));
        out->hash_checksums.push_back(std::move(h));
      }
    }
    return Status::OK();
  }

  Status ShardListInfoFrom(const Node& n, std::string_view path, ShardListInfo* out) const {
    SEDPACK_RETURN_NOT_OK(
        Object(n, path, {"shard_list_info_file", "number_of_examples", "number_of_shards"}));
    const Node* f = nullptr;
    SEDPACK_RETURN_NOT_OK(Required(n, "shard_list_info_file", path, &f));
    SEDPACK_RETURN_NOT_OK(FileInfoFrom(*f, Child(path, "shard_list_info_file"),
                                       /*shards_list=*/true, &out->shard_list_info_file));
    SEDPACK_RETURN_NOT_OK(Count(n, "number_of_examples", path, &out->number_of_examples));
    SEDPACK_RETURN_NOT_OK(Count(n, "number_of_shards", path, &out->number_of_shards));
    return Status::OK();
  }

  Status ShardInfoFrom(const Node& n, std::string_view path, ShardInfo* out) const {
    SEDPACK_RETURN_NOT_OK(Object(n, path, {"file_infos", "number_of_examples", "custom_metadata"}));
    const Node* fi = nullptr;
    SEDPACK_RETURN_NOT_OK(Required(n, "file_infos", path, &fi));
    const std::string p = Child(path, "file_infos");
    SEDPACK_RETURN_NOT_OK(Expect(*fi, Kind::kArray, p));
    out->file_infos.resize(fi->items.size());
    for (std::size_t i = 0; i < fi->items.size(); ++i) {
      SEDPACK_RETURN_NOT_OK(
          FileInfoFrom(fi->items[i], Index(p, i), /*shards_list=*/false, &out->file_infos[i]));
    }
    SEDPACK_RETURN_NOT_OK(Count(n, "number_of_examples", path, &out->number_of_examples));
    return CustomMetadata(n, path, &out->custom_metadata);
  }

  Status ShardsListFrom(const Node& n, ShardsList* out) const {
    SEDPACK_RETURN_NOT_OK(Object(
        n, "", {"relative_path_self", "number_of_examples", "shard_files", "children_shard_lists"}));
    const Node* rp = nullptr;
    SEDPACK_RETURN_NOT_OK(Required(n, "relative_path_self", "", &rp));
    SEDPACK_RETURN_NOT_OK(
        PathValue(*rp, "relative_path_self", /*shards_list=*/true, &out->relative_path_self));
    SEDPACK_RETURN_NOT_OK(Count(n, "number_of_examples", "", &out->number_of_examples));
    if (const Node* sf = n.Find("shard_files")) {
      SEDPACK_RETURN_NOT_OK(Expect(*sf, Kind::kArray, "shard_files"));
      out->shard_files.resize(sf->items.size());
      for (std::size_t i = 0; i < sf->items.size(); ++i) {
        SEDPACK_RETURN_NOT_OK(
            ShardInfoFrom(sf->items[i], Index("shard_files", i), &out->shard_files[i]));
      }
    }
    if (const Node* cl = n.Find("children_shard_lists")) {
      SEDPACK_RETURN_NOT_OK(Expect(*cl, Kind::kArray, "children_shard_lists"));
      out->children_shard_lists.resize(cl->items.size());
      for (std::size_t i = 0; i < cl->items.size(); ++i) {
        SEDPACK_RETURN_NOT_OK(ShardListInfoFrom(cl->items[i], Index("children_shard_lists", i),
                                                &out->children_shard_lists[i]));
      }
    }
    return Status::OK();
  }

  Status AttributeFrom(const Node& n, std::string_view path, Attribute* out) const {
    SEDPACK_RETURN_NOT_OK(Object(n, path, {"name", "dtype", "shape", "custom_metadata"}));
    const Node* v = nullptr;
    SEDPACK_RETURN_NOT_OK(Required(n, "name", path, &v));
    SEDPACK_RETURN_NOT_OK(Str(*v, Child(path, "name"), &out->name));
    SEDPACK_RETURN_NOT_OK(Required(n, "dtype", path, &v));
    SEDPACK_RETURN_NOT_OK(Str(*v, Child(path, "dtype"), &out->dtype));
    SEDPACK_RETURN_NOT_OK(Required(n, "shape", path, &v));
    const std::string sp = Child(path, "shape");
    SEDPACK_RETURN_NOT_OK(Expect(*v, Kind::kArray, sp));
    out->shape.resize(v->items.size());
    for (std::size_t i = 0; i < v->items.size(); ++i) {
      SEDPACK_RETURN_NOT_OK(Int(v->items[i], Index(sp, i), kDimRange, &out->shape[i]));
    }
    return CustomMetadata(n, path, &out->custom_metadata);
  }

  Status MetadataFrom(const Node& n, std::string_view path, Metadata* out) const {
    SEDPACK_RETURN_NOT_OK(Object(n, path,
                                 {"description", "dataset_license", "dataset_version",
                                  "download_from", "custom_metadata", "sedpack_version"}));
    SEDPACK_RETURN_NOT_OK(OptStr(n, "description", path, &out->description));
    SEDPACK_RETURN_NOT_OK(OptStr(n, "dataset_license", path, &out->dataset_license));
    SEDPACK_RETURN_NOT_OK(OptStr(n, "dataset_version", path, &out->dataset_version));
    SEDPACK_RETURN_NOT_OK(OptStr(n, "download_from", path, &out->download_from));
    SEDPACK_RETURN_NOT_OK(CustomMetadata(n, path, &out->custom_metadata));
    return OptStr(n, "sedpack_version", path, &out->sedpack_version);
  }

  Status StructureFrom(const Node& n, std::string_view path, DatasetStructure* out) const {
    SEDPACK_RETURN_NOT_OK(Object(n, path,
                                 {"saved_data_description", "compression", "examples_per_shard",
                                  "shard_file_type", "hash_checksum_algorithms"}));
    if (const Node* sd = n.Find("saved_data_description")) {
      const std::string p = Child(path, "saved_data_description");
      SEDPACK_RETURN_NOT_OK(Expect(*sd, Kind::kArray, p));
      out->saved_data_description.resize(sd->items.size());
      for (std::size_t i = 0; i < sd->items.size(); ++i) {
        SEDPACK_RETURN_NOT_OK(
            AttributeFrom(sd->items[i], Index(p, i), &out->saved_data_description[i]));
      }
    }
    if (const Node* c = n.Find("compression")) {
      const std::string p = Child(path, "compression");
      std::string s;
      SEDPACK_RETURN_NOT_OK(Str(*c, p, &s));
      auto parsed = ParseCompression(s);
      if (!parsed.ok()) return ErrorFrom(p, parsed.status());
      out->compression = *parsed;
    }
    if (const Node* e = n.Find("examples_per_shard")) {
      SEDPACK_RETURN_NOT_OK(
          Int(*e, Child(path, "examples_per_shard"), kCountRange, &out->examples_per_shard));
    }
    if (const Node* t = n.Find("shard_file_type")) {
      const std::string p = Child(path, "shard_file_type");
      std::string s;
      SEDPACK_RETURN_NOT_OK(Str(*t, p, &s));
      auto parsed = ParseShardFileType(s);
      if (!parsed.ok()) return ErrorFrom(p, parsed.status());
      out->shard_file_type = *parsed;
    }
    if (const Node* h = n.Find("hash_checksum_algorithms")) {
      const std::string p = Child(path, "hash_checksum_algorithms");
      SEDPACK_RETURN_NOT_OK(Expect(*h, Kind::kArray, p));
      out->hash_checksum_algorithms.clear();
      for (std::size_t i = 0; i < h->items.size(); ++i) {
        std::string s;
        SEDPACK_RETURN_NOT_OK(Str(h->items[i], Index(p, i), &s));
        auto parsed = ParseHashAlgorithm(s);
        if (!parsed.ok()) return ErrorFrom(Index(p, i), parsed.status());
        out->hash_checksum_algorithms.push_back(*parsed);
      }
    }
    return Status::OK();
  }

  Status DatasetInfoFrom(const Node& n, DatasetInfo* out) const {
    SEDPACK_RETURN_NOT_OK(Object(n, "", {"metadata", "dataset_structure", "splits"}));
    if (const Node* m = n.Find("metadata")) {
      SEDPACK_RETURN_NOT_OK(MetadataFrom(*m, "metadata", &out->metadata));
    }
    if (const Node* s = n.Find("dataset_structure")) {
      SEDPACK_RETURN_NOT_OK(StructureFrom(*s, "dataset_structure", &out->dataset_structure));
    }
    if (const Node* sp = n.Find("splits")) {
      SEDPACK_RETURN_NOT_OK(Expect(*sp, Kind::kObject, "splits"));
      for (const auto& [key, value] : sp->members) {
        const std::string p = Child("splits", key);
        auto split = ParseSplit(key);
        if (!split.ok()) return ErrorFrom(p, split.status());
        ShardListInfo info;
        SEDPACK_RETURN_NOT_OK(ShardListInfoFrom(value, p, &info));
        out->splits.emplace_back(*split, std::move(info));
      }
    }
    return Status::OK();
  }

  Result<Node> Parse(std::string_view text) const {
    auto node = json_internal::ParseJson(text);
    if (!node.ok()) return ErrorFrom("", node.status());
    return node;
  }

 private:
  std::string_view source_;
  bool strict_;
};

// ---- Serialization -----------------------------------------------------------

Node CustomNode(const JsonValue& v) {
  auto node = json_internal::ParseJson(v.text());
  // JsonValue text always comes from JsonValue::Parse, so this cannot fail.
  return node.ok() ? std::move(node).value() : Node::Object();
}

Node StringArray(const std::vector<std::string>& items) {
  Node a = Node::Array();
  for (const auto& s : items) a.items.push_back(Node::String(s));
  return a;
}

// `exclude_defaults` mirrors pydantic's flag: fields equal to their default are
// dropped (required fields never are).
Node FileInfoNode(const FileInfo& f, bool exclude_defaults) {
  Node n = Node::Object();
  n.Add("file_path", Node::String(f.file_path));
  if (!exclude_defaults || !f.hash_checksums.empty()) {
    n.Add("hash_checksums", StringArray(f.hash_checksums));
  }
  return n;
}

Node ShardListInfoNode(const ShardListInfo& s, bool exclude_defaults) {
  Node n = Node::Object();
  n.Add("shard_list_info_file", FileInfoNode(s.shard_list_info_file, exclude_defaults));
  if (!exclude_defaults || s.number_of_examples != 0) {
    n.Add("number_of_examples", Node::Int(s.number_of_examples));
  }
  if (!exclude_defaults || s.number_of_shards != 0) {
    n.Add("number_of_shards", Node::Int(s.number_of_shards));
  }
  return n;
}

Node ShardInfoNode(const ShardInfo& s, bool exclude_defaults) {
  Node n = Node::Object();
  Node& infos = n.Add("file_infos", Node::Array());
  for (const auto& f : s.file_infos) infos.items.push_back(FileInfoNode(f, exclude_defaults));
  if (!exclude_defaults || s.number_of_examples != 0) {
    n.Add("number_of_examples", Node::Int(s.number_of_examples));
  }
  if (!exclude_defaults || !s.custom_metadata.IsEmptyObject()) {
    n.Add("custom_metadata", CustomNode(s.custom_metadata));
  }
  return n;
}

Node ShardsListNode(const ShardsList& l, bool exclude_defaults) {
  Node n = Node::Object();
  n.Add("relative_path_self", Node::String(l.relative_path_self));
  if (!exclude_defaults || l.number_of_examples != 0) {
    n.Add("number_of_examples", Node::Int(l.number_of_examples));
  }
  if (!exclude_defaults || !l.shard_files.empty()) {
    Node& a = n.Add("shard_files", Node::Array());
    for (const auto& s : l.shard_files) a.items.push_back(ShardInfoNode(s, exclude_defaults));
  }
  if (!exclude_defaults || !l.children_shard_lists.empty()) {
    Node& a = n.Add("children_shard_lists", Node::Array());
    for (const auto& c : l.children_shard_lists) {
      a.items.push_back(ShardListInfoNode(c, exclude_defaults));
    }
  }
  return n;
}

Node AttributeNode(const Attribute& a) {
  Node n = Node::Object();
  n.Add("name", Node::String(a.name));
  n.Add("dtype", Node::String(a.dtype));
  Node& shape = n.Add("shape", Node::Array());
  for (std::int64_t d : a.shape) shape.items.push_back(Node::Int(d));
  n.Add("custom_metadata", CustomNode(a.custom_metadata));
  return n;
}

Node MetadataNode(const Metadata& m) {
  Node n = Node::Object();
  n.Add("description", Node::String(m.description));
  n.Add("dataset_license", Node::String(m.dataset_license));
  n.Add("dataset_version", Node::String(m.dataset_version));
  n.Add("download_from", Node::String(m.download_from));
  n.Add("custom_metadata", CustomNode(m.custom_metadata));
  n.Add("sedpack_version", Node::String(m.sedpack_version));
  return n;
}

Node StructureNode(const DatasetStructure& s) {
  Node n = Node::Object();
  Node& attrs = n.Add("saved_data_description", Node::Array());
  for (const auto& a : s.saved_data_description) attrs.items.push_back(AttributeNode(a));
  n.Add("compression", Node::String(std::string(CompressionName(s.compression))));
  n.Add("examples_per_shard", Node::Int(s.examples_per_shard));
  n.Add("shard_file_type", Node::String(std::string(ShardFileTypeName(s.shard_file_type))));
  Node& hashes = n.Add("hash_checksum_algorithms", Node::Array());
  for (HashAlgorithm h : s.hash_checksum_algorithms) {
    hashes.items.push_back(Node::String(std::string(HashAlgorithmName(h))));
  }
  return n;
}

std::string Pretty(const Node& n) {
  std::string out;
  json_internal::WritePretty(n, 0, &out);
  return out;
}

}  // namespace

// ---- Model helpers ------------------------------------------------------------

Result<AttributeSpec> Attribute::ToSpec() const {
  auto dtype_parsed = ParseDType(dtype);
  if (!dtype_parsed.ok()) {
    return dtype_parsed.status().WithPrefix("attribute \"" + name + "\": ");
  }
  if (auto count = ShapeElementCount(shape); !count.ok()) {
    return count.status().WithPrefix("attribute \"" + name + "\": ");
  }
  AttributeSpec spec{name, *dtype_parsed, shape};
  // Refused here, while the schema is read, rather than when a value's size is
  // first computed: the byte size of one value must fit the bound too.
  if (!spec.IsVariableSize()) SEDPACK_RETURN_NOT_OK(spec.FixedByteSize().status());
  return spec;
}

Result<std::vector<AttributeSpec>> DatasetStructure::Schema() const {
  std::vector<AttributeSpec> out;
  out.reserve(saved_data_description.size());
  for (std::size_t i = 0; i < saved_data_description.size(); ++i) {
    auto spec = saved_data_description[i].ToSpec();
    if (!spec.ok()) {
      return spec.status().WithPrefix("dataset_structure.saved_data_description[" + std::to_string(i) +
                                      "]: ");
    }
    out.push_back(std::move(spec).value());
  }
  return out;
}

const ShardListInfo* DatasetInfo::FindSplit(Split s) const {
  for (const auto& [split, info] : splits) {
    if (split == s) return &info;
  }
  return nullptr;
}

ShardListInfo* DatasetInfo::FindSplit(Split s) {
  for (auto& [split, info] : splits) {
    if (split == s) return &info;
  }
  return nullptr;
}

// ---- Parse / serialize ---------------------------------------------------------

Result<DatasetInfo> ParseDatasetInfo(std::string_view text, std::string_view source) {
  const Reader r(source, /*strict=*/false);
  SEDPACK_ASSIGN_OR_RETURN(Node root, r.Parse(text));
  DatasetInfo info;
  SEDPACK_RETURN_NOT_OK(r.DatasetInfoFrom(root, &info));
  return info;
}

std::string SerializeDatasetInfo(const DatasetInfo& info) {
  Node n = Node::Object();
  n.Add("metadata", MetadataNode(info.metadata));
  n.Add("dataset_structure", StructureNode(info.dataset_structure));
  Node& splits = n.Add("splits", Node::Object());
  for (const auto& [split, sli] : info.splits) {
    splits.Add(std::string(SplitName(split)), ShardListInfoNode(sli, /*exclude_defaults=*/false));
  }
  return Pretty(n);
}

namespace metadata_internal {

Result<ShardsList> ParseShardsListTree(std::string_view text, std::string_view source) {
  const Reader r(source, /*strict=*/false);
  SEDPACK_ASSIGN_OR_RETURN(Node root, r.Parse(text));
  ShardsList list;
  SEDPACK_RETURN_NOT_OK(r.ShardsListFrom(root, &list));
  return list;
}

namespace {

Result<ShardsList> ParsePadded(std::string text, std::string_view source) {
  const std::size_t size = text.size();
  text.append(kShardsListPadding, ' ');
  if (auto fast = ParseShardsListFast(text.data(), size, text.size())) return std::move(*fast);
  text.resize(size);
  return ParseShardsListTree(text, source);
}

}  // namespace

Result<ShardsList> ParseShardsListOwned(std::string text, std::string_view source) {
  auto list = ParsePadded(std::move(text), source);
  // The text is a file of the dataset, not an argument of the caller: a list
  // that does not parse or validate means the dataset is damaged.
  if (!list.ok() && list.status().code() == StatusCode::kInvalidArgument) {
    return Status(StatusCode::kCorruption, list.status().message(), list.status().detail());
  }
  return list;
}

}  // namespace metadata_internal

Result<ShardsList> ParseShardsList(std::string_view text, std::string_view source) {
  // The fast parser reads up to kShardsListPadding bytes past the text.
  std::string padded;
  padded.reserve(text.size() + metadata_internal::kShardsListPadding);
  padded.assign(text);
  return metadata_internal::ParsePadded(std::move(padded), source);
}

std::string SerializeShardsList(const ShardsList& list) {
  return Pretty(ShardsListNode(list, /*exclude_defaults=*/true));
}

std::string SerializeShardListInfo(const ShardListInfo& info) {
  return json_internal::WriteCompact(ShardListInfoNode(info, /*exclude_defaults=*/false));
}

Result<ShardListInfo> ParseShardListInfo(std::string_view text, std::string_view source) {
  const Reader r(source, /*strict=*/false);
  SEDPACK_ASSIGN_OR_RETURN(Node root, r.Parse(text));
  ShardListInfo info;
  SEDPACK_RETURN_NOT_OK(r.ShardListInfoFrom(root, "", &info));
  return info;
}

Result<DatasetStructure> ParseDatasetStructure(std::string_view text, std::string_view source,
                                               bool strict) {
  const Reader r(source, strict);
  SEDPACK_ASSIGN_OR_RETURN(Node root, r.Parse(text));
  DatasetStructure s;
  SEDPACK_RETURN_NOT_OK(r.StructureFrom(root, "", &s));
  return s;
}

Result<Metadata> ParseMetadata(std::string_view text, std::string_view source, bool strict) {
  const Reader r(source, strict);
  SEDPACK_ASSIGN_OR_RETURN(Node root, r.Parse(text));
  Metadata m;
  SEDPACK_RETURN_NOT_OK(r.MetadataFrom(root, "", &m));
  return m;
}

}  // namespace sedpack
