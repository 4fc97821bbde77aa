// SPDX-License-Identifier: Apache-2.0
// The byte forms of the check engine's units and findings
// (check_engine_internal.h), as they travel between ranks.
#include <cstring>

#include "check/check_engine_internal.h"
#include "check/check_internal.h"
#include "check/check_wire_internal.h"

namespace sedpack::check_engine_internal {

using check_internal::FieldReader;
using check_internal::PutField;

std::string EncodeUnits(const std::vector<Unit>& units) {
  std::string out;
  for (const Unit& u : units) {
    PutField(&out, u.subtree ? "s" : "r");
    if (u.subtree) {
      PutField(&out, u.entry.shard_list_info_file.file_path);
      PutField(&out, std::to_string(u.entry.shard_list_info_file.hash_checksums.size()));
      for (const auto& h : u.entry.shard_list_info_file.hash_checksums) PutField(&out, h);
      // Recorded counts may be negative in a damaged list: sent as their bits.
      PutField(&out, std::to_string(static_cast<std::uint64_t>(u.entry.number_of_examples)));
      PutField(&out, std::to_string(static_cast<std::uint64_t>(u.entry.number_of_shards)));
      PutField(&out, std::to_string(u.depth));
    } else {
      PutField(&out, u.list_path);
      PutField(&out, std::to_string(u.begin));
      PutField(&out, std::to_string(u.end));
    }
  }
  return out;
}

Result<std::vector<Unit>> DecodeUnits(std::string_view bytes) {
  FieldReader in(bytes);
  std::vector<Unit> out;
  while (!in.done()) {
    Unit u;
    SEDPACK_ASSIGN_OR_RETURN(std::string kind, in.Next());
    u.subtree = std::string_view(kind) == "s";
    if (u.subtree) {
      SEDPACK_ASSIGN_OR_RETURN(u.entry.shard_list_info_file.file_path, in.Next());
      SEDPACK_ASSIGN_OR_RETURN(std::uint64_t hashes, in.NextNumber());
      if (hashes > 64) return Status::Corruption("too many hashes in a check unit");
      for (std::uint64_t i = 0; i < hashes; ++i) {
        SEDPACK_ASSIGN_OR_RETURN(std::string h, in.Next());
        u.entry.shard_list_info_file.hash_checksums.push_back(std::move(h));
      }
      SEDPACK_ASSIGN_OR_RETURN(std::uint64_t examples, in.NextNumber());
      SEDPACK_ASSIGN_OR_RETURN(std::uint64_t shards, in.NextNumber());
      u.entry.number_of_examples = static_cast<std::int64_t>(examples);
      u.entry.number_of_shards = static_cast<std::int64_t>(shards);
      SEDPACK_ASSIGN_OR_RETURN(u.depth, in.NextNumber());
    } else {
      SEDPACK_ASSIGN_OR_RETURN(u.list_path, in.Next());
      SEDPACK_ASSIGN_OR_RETURN(u.begin, in.NextNumber());
      SEDPACK_ASSIGN_OR_RETURN(u.end, in.NextNumber());
      if (u.end < u.begin) return Status::Corruption("malformed check unit");
    }
    out.push_back(std::move(u));
  }
  return out;
}

std::string EncodeFindings(const Findings& f) {
  std::string out;
  PutField(&out, EncodeCheckReport(f.report));
  PutField(&out, std::to_string(f.units));
  std::string lists;
  for (const auto& l : f.lists) PutField(&lists, l);
  PutField(&out, lists);
  std::string keys(f.files.size() * sizeof(std::uint64_t), '\0');
  if (!f.files.empty()) std::memcpy(keys.data(), f.files.data(), keys.size());
  PutField(&out, keys);
  return out;
}

Result<Findings> DecodeFindings(std::string_view bytes) {
  FieldReader in(bytes);
  Findings f;
  SEDPACK_ASSIGN_OR_RETURN(std::string report, in.Next());
  SEDPACK_ASSIGN_OR_RETURN(f.report, DecodeCheckReport(report));
  SEDPACK_ASSIGN_OR_RETURN(f.units, in.NextNumber());
  SEDPACK_ASSIGN_OR_RETURN(std::string lists, in.Next());
  for (FieldReader l(lists); !l.done();) {
    SEDPACK_ASSIGN_OR_RETURN(std::string path, l.Next());
    f.lists.push_back(std::move(path));
  }
  SEDPACK_ASSIGN_OR_RETURN(std::string keys, in.Next());
  if (keys.size() % sizeof(std::uint64_t) != 0) return Status::Corruption("malformed check findings");
  f.files.resize(keys.size() / sizeof(std::uint64_t));
  if (!keys.empty()) std::memcpy(f.files.data(), keys.data(), keys.size());
  return f;
}

}  // namespace sedpack::check_engine_internal
