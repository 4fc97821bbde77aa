// SPDX-License-Identifier: Apache-2.0
// What the check engine (check_engine.cc) hands between ranks: the units of
// work rank 0 cuts the list tree into, and what each rank found. Their byte
// forms (length-prefixed fields) are in check_units.cc. Project-private.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sedpack/check/check.h"
#include "sedpack/metadata/models.h"
#include "sedpack/status.h"

namespace sedpack::check_engine_internal {

// A piece of the tree that one worker checks whole.
struct Unit {
  bool subtree = true;
  // Subtree: the list entry as its parent records it, and the list's depth.
  ShardListInfo entry;
  std::uint64_t depth = 0;
  // Range: shard_files[begin, end) of the list at list_path.
  std::string list_path;
  std::uint64_t begin = 0, end = 0;
  // Recorded shards below: only for the order units are handed out in.
  std::uint64_t weight = 0;
};

// What one worker (or rank) found.
struct Findings {
  CheckReport report;
  std::vector<std::string> lists;   // every list path reached
  std::vector<std::uint64_t> files; // PathKey of every listed shard file
  std::uint64_t units = 0;

  void Merge(Findings&& other) {
    report.files_checked += other.report.files_checked;
    report.bytes_checked += other.report.bytes_checked;
    report.shards_checked += other.report.shards_checked;
    report.examples_checked += other.report.examples_checked;
    for (auto& p : other.report.problems) report.problems.push_back(std::move(p));
    for (auto& l : other.lists) lists.push_back(std::move(l));
    files.insert(files.end(), other.files.begin(), other.files.end());
    units += other.units;
  }
};

std::string EncodeUnits(const std::vector<Unit>& units);
Result<std::vector<Unit>> DecodeUnits(std::string_view bytes);
std::string EncodeFindings(const Findings& f);
Result<Findings> DecodeFindings(std::string_view bytes);

}  // namespace sedpack::check_engine_internal
