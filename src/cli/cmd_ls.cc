// SPDX-License-Identifier: Apache-2.0
// `sedpack ls DATASET`: the shards of each split, in the order readers visit them.
#include <algorithm>
#include <iostream>

#include "cli/cli_common.h"
#include "sedpack/dataset/reader.h"

namespace sedpack::cli {

const CommandSpec kLsSpec = {
    "ls", "DATASET [--split S]... [options]",
    "list shards in traversal order with counts and custom_metadata",
    "List the shards of each split in traversal order (the order a non-shuffled\n"
    "reader visits them) with their example counts and custom_metadata.\n\n"
    "One line per shard, tab-separated:\n"
    "  split  number_of_examples  file_path  custom_metadata  [hash_checksums with --long]\n"
    "custom_metadata is compact JSON ({} when none); file_path is relative to DATASET.\n",
};

int RunLs(const std::vector<std::string>& args) {
  po::options_description options("Options");
  options.add_options()
      ("dataset", po::value<std::string>(), "dataset folder")
      ("split,s", po::value<std::vector<std::string>>()->composing()->value_name("S"),
       "only this split (train, test, holdout); repeatable; default: all")
      ("long,l", po::bool_switch(), "also print the recorded hash checksums");
  po::positional_options_description positional;
  positional.add("dataset", 1);
  po::variables_map vm;
  if (auto code = ParseCommandLine(kLsSpec, options, positional, args, &vm)) return *code;
  if (!vm.count("dataset")) return UsageError("ls", "missing DATASET argument");

  std::vector<Split> splits;
  if (vm.count("split")) {
    auto parsed = ParseSplits(vm["split"].as<std::vector<std::string>>());
    if (!parsed.ok()) return UsageError("ls", parsed.status().message());
    splits = *parsed;
  }
  auto opened = OpenDatasetArg(vm["dataset"].as<std::string>());
  if (!opened.ok()) return ReportError(opened.status(), /*input_stage=*/true);
  std::shared_ptr<const Dataset> ds = *opened;
  const bool long_format = vm["long"].as<bool>();

  for (const auto& [split, sli] : ds->info().splits) {
    if (!splits.empty() && std::find(splits.begin(), splits.end(), split) == splits.end()) continue;
    auto it = ShardInfoIterator::Make(ds, split);
    if (!it.ok()) return ReportError(it.status());
    std::string out;
    for (;;) {
      auto next = (*it)->Next();
      if (!next.ok()) {
        std::cout << out << std::flush;
        return ReportError(next.status());
      }
      if (!next->has_value()) break;
      const ShardInfo& shard = **next;
      out += SplitName(split);
      out += '\t';
      out += std::to_string(shard.number_of_examples);
      out += '\t';
      out += shard.file_infos.empty() ? std::string("?") : shard.file_infos[0].file_path;
      out += '\t';
      out += shard.custom_metadata.text();
      if (long_format && !shard.file_infos.empty()) {
        for (const std::string& h : shard.file_infos[0].hash_checksums) {
          out += '\t';
          out += h;
        }
      }
      out += '\n';
      if (out.size() > (1 << 16)) {
        std::cout << out;
        out.clear();
      }
    }
    std::cout << out;
  }
  std::cout << std::flush;
  return kExitOk;
}

}  // namespace sedpack::cli
