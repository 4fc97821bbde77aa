// SPDX-License-Identifier: Apache-2.0
// `sedpack ls DATASET`: the shards of each split, in the order readers visit them.
#include <algorithm>
#include <iostream>

#include <nlohmann/json.hpp>

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
    "custom_metadata is compact JSON ({} when none); file_path is relative to DATASET.\n"
    "With --long a header line names the columns (the hash columns by algorithm).\n\n"
    "--json: schema \"sedpack-hpc/ls/1\": {schema, dataset, hash_checksum_algorithms,\n"
    "shards: [{split, number_of_examples, file_path, custom_metadata, hash_checksums}]}.\n",
    "  sedpack ls ds\n"
    "      every shard of every split\n"
    "  sedpack ls ds -s test -l\n"
    "      the test split's shards with their recorded hashes\n"
    "  sedpack ls ds --json | jq '.shards | length'\n"
    "      the same as JSON\n",
};

int RunLs(const std::vector<std::string>& args) {
  po::options_description options("Options");
  options.add_options()
      ("dataset", po::value<std::string>(), "dataset folder")
      ("long,l", po::bool_switch(), "also print the recorded hash checksums (with a header line)");
  AddSplitOption(&options, "only this split (train, test, holdout); repeatable; default: all");
  AddJsonOption(&options);
  po::positional_options_description positional;
  positional.add("dataset", 1);
  po::variables_map vm;
  if (auto code = ParseCommandLine(kLsSpec, options, positional, args, &vm)) return *code;
  if (!vm.count("dataset")) return UsageError("ls", "missing DATASET argument");

  auto parsed = SplitsOption(vm);
  if (!parsed.ok()) return UsageError("ls", parsed.status().message());
  const std::vector<Split> splits = *parsed;
  auto opened = OpenDatasetArg(vm["dataset"].as<std::string>());
  if (!opened.ok()) return ReportError(opened.status(), /*input_stage=*/true);
  std::shared_ptr<const Dataset> ds = *opened;
  if (Status st = RequireSplits(*ds, splits); !st.ok()) return UsageError("ls", st.message());
  const bool long_format = vm["long"].as<bool>();
  const auto json = JsonOption(vm);
  const auto& algos = ds->info().dataset_structure.hash_checksum_algorithms;
  nlohmann::json shards = nlohmann::json::array();
  if (long_format && !json) {
    std::cout << "split\tnumber_of_examples\tfile_path\tcustom_metadata";
    for (HashAlgorithm a : algos) std::cout << "\t" << HashAlgorithmName(a);
    std::cout << "\n";
  }

  for (const auto& [split, sli] : ds->info().splits) {
    if (!splits.empty() && std::find(splits.begin(), splits.end(), split) == splits.end()) continue;
    auto it = ShardInfoIterator::Make(ds, split);
    if (!it.ok()) return ReportDataError(it.status());
    std::string out;
    for (;;) {
      auto next = (*it)->Next();
      if (!next.ok()) {
        std::cout << out << std::flush;
        return ReportDataError(next.status());
      }
      if (!next->has_value()) break;
      const ShardInfo& shard = **next;
      if (json) {
        nlohmann::json sums = nlohmann::json::array();
        if (!shard.file_infos.empty()) sums = shard.file_infos[0].hash_checksums;
        auto meta = nlohmann::json::parse(shard.custom_metadata.text(), nullptr, false);
        shards.push_back({{"split", SplitName(split)},
                          {"number_of_examples", shard.number_of_examples},
                          {"file_path", shard.file_infos.empty() ? std::string() : shard.file_infos[0].file_path},
                          {"custom_metadata", meta.is_discarded() ? nlohmann::json(shard.custom_metadata.text()) : meta},
                          {"hash_checksums", sums}});
        continue;
      }
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
  if (json) {
    nlohmann::json names = nlohmann::json::array();
    for (HashAlgorithm a : algos) names.push_back(HashAlgorithmName(a));
    const nlohmann::json doc = {{"schema", JsonSchemaName("ls")},
                                {"dataset", ds->root()},
                                {"hash_checksum_algorithms", names},
                                {"shards", shards}};
    if (Status st = WriteJsonOutput(*json, doc.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n"); !st.ok()) return ReportError(st);
  }
  std::cout << std::flush;
  return kExitOk;
}

}  // namespace sedpack::cli
