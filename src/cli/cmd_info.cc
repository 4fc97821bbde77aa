// SPDX-License-Identifier: Apache-2.0
// `sedpack info DATASET`: what a dataset holds, without reading any shard.
#include <cstdio>
#include <iostream>

#include <nlohmann/json.hpp>

#include "cli/cli_common.h"

namespace sedpack::cli {

const CommandSpec kInfoSpec = {
    "info", "DATASET [options]",
    "show metadata, schema, splits and root checksums",
    "Print a dataset's metadata, attribute schema, splits with example and shard\n"
    "counts, and the checksums of its dataset_info.json.\n\n"
    "Only dataset_info.json is read. The checksums identify the whole dataset (they cover\n"
    "every shards_list.json and shard through the hash tree); keep them to verify a copy\n"
    "later with `sedpack check DATASET --expect-file FILE`. With --checksums only those\n"
    "lines are printed, in the format --expect-file reads (\"<algorithm> <hex>\").\n\n"
    "--json prints one object, schema \"sedpack-hpc/info/1\": dataset, metadata (with\n"
    "custom_metadata as JSON), structure {shard_file_type, compression (\"\" for none),\n"
    "examples_per_shard, hash_checksum_algorithms}, attributes [{name, dtype, shape,\n"
    "custom_metadata}], splits {NAME: {examples, shards}}, checksums [{algorithm, hex}].\n",
    "  sedpack info ds\n"
    "      metadata, schema, splits and checksums of the dataset in ds/\n"
    "  sedpack info ds --checksums > ds.sums\n"
    "      keep the root checksums, for `sedpack verify ds --expect-file ds.sums`\n"
    "  sedpack info ds --json | jq .splits.train.examples\n"
    "      the same as JSON\n",
};

namespace {

nlohmann::json JsonOfText(const std::string& text) {
  auto j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  return j.is_discarded() ? nlohmann::json(text) : j;
}

// The --json document: the checksums, and unless `checksums_only` everything
// else dataset_info.json holds.
nlohmann::json InfoJson(const Dataset& ds, const nlohmann::json& sums, bool checksums_only) {
  const DatasetInfo& info = ds.info();
  const DatasetStructure& st = info.dataset_structure;
  const Metadata& m = info.metadata;
  nlohmann::json doc = {{"schema", JsonSchemaName("info")}, {"dataset", ds.root()}, {"checksums", sums}};
  if (!checksums_only) {
    doc["metadata"] = {{"description", m.description},         {"dataset_version", m.dataset_version},
                       {"dataset_license", m.dataset_license}, {"download_from", m.download_from},
                       {"sedpack_version", m.sedpack_version}, {"custom_metadata", JsonOfText(m.custom_metadata.text())}};
    nlohmann::json algos = nlohmann::json::array();
    for (HashAlgorithm a : st.hash_checksum_algorithms) algos.push_back(HashAlgorithmName(a));
    doc["structure"] = {{"shard_file_type", ShardFileTypeName(st.shard_file_type)},
                        {"compression", CompressionName(st.compression)},
                        {"examples_per_shard", st.examples_per_shard},
                        {"hash_checksum_algorithms", algos}};
    nlohmann::json attrs = nlohmann::json::array();
    for (const Attribute& a : st.saved_data_description) {
      attrs.push_back({{"name", a.name}, {"dtype", a.dtype}, {"shape", a.shape},
                       {"custom_metadata", JsonOfText(a.custom_metadata.text())}});
    }
    doc["attributes"] = attrs;
    nlohmann::json splits = nlohmann::json::object();
    for (const auto& [split, sli] : info.splits) {
      splits[std::string(SplitName(split))] = {{"examples", sli.number_of_examples}, {"shards", sli.number_of_shards}};
    }
    doc["splits"] = splits;
  }
  return doc;
}

// The text report: metadata, structure, attributes, splits, checksums.
void PrintInfoText(const Dataset& ds, const std::vector<std::string>& checksums) {
  const DatasetInfo& info = ds.info();
  const DatasetStructure& st = info.dataset_structure;
  const Metadata& m = info.metadata;
  std::cout << "dataset            " << ds.root() << "\n"
            << "description        " << m.description << "\n"
            << "dataset_version    " << m.dataset_version << "\n"
            << "dataset_license    " << m.dataset_license << "\n"
            << "download_from      " << m.download_from << "\n"
            << "sedpack_version    " << m.sedpack_version << "\n"
            << "custom_metadata    " << m.custom_metadata.text() << "\n\n";

  std::cout << "structure\n"
            << "  shard_file_type     " << ShardFileTypeName(st.shard_file_type) << "\n"
            << "  compression         "
            << (st.compression == Compression::kNone ? std::string_view("none (\"\")")
                                                     : CompressionName(st.compression))
            << "\n"
            << "  examples_per_shard  " << st.examples_per_shard << "\n"
            << "  hash algorithms     ";
  if (st.hash_checksum_algorithms.empty()) std::cout << "(none)";
  for (std::size_t i = 0; i < st.hash_checksum_algorithms.size(); ++i) {
    std::cout << (i ? ", " : "") << HashAlgorithmName(st.hash_checksum_algorithms[i]);
  }
  std::cout << "\n\n";

  std::size_t name_width = 4;
  for (const Attribute& a : st.saved_data_description) name_width = std::max(name_width, a.name.size());
  std::cout << "attributes (" << st.saved_data_description.size() << ")\n";
  for (const Attribute& a : st.saved_data_description) {
    std::string line = "  " + a.name + std::string(name_width - a.name.size() + 2, ' ');
    std::string dtype = a.dtype;
    dtype.resize(std::max<std::size_t>(dtype.size(), 9), ' ');
    line += dtype + " " + ShapeToString(a.shape);
    if (!a.custom_metadata.IsEmptyObject()) line += "  " + a.custom_metadata.text();
    std::cout << line << "\n";
  }
  std::cout << "\n";

  std::cout << "splits\n";
  std::int64_t total_examples = 0, total_shards = 0;
  char buf[160];
  for (const auto& [split, sli] : info.splits) {
    std::snprintf(buf, sizeof(buf), "  %-8s %12lld examples %9lld shard%s\n",
                  std::string(SplitName(split)).c_str(),
                  static_cast<long long>(sli.number_of_examples),
                  static_cast<long long>(sli.number_of_shards), sli.number_of_shards == 1 ? "" : "s");
    std::cout << buf;
    total_examples += sli.number_of_examples;
    total_shards += sli.number_of_shards;
  }
  if (info.splits.empty()) {
    std::cout << "  (no splits written yet)\n";
  } else {
    std::snprintf(buf, sizeof(buf), "  %-8s %12lld examples %9lld shard%s\n", "total",
                  static_cast<long long>(total_examples), static_cast<long long>(total_shards),
                  total_shards == 1 ? "" : "s");
    std::cout << buf;
  }
  std::cout << "\n";

  std::cout << "dataset_info.json checksums\n";
  if (checksums.empty()) std::cout << "  (no hash algorithms configured)\n";
  for (std::size_t i = 0; i < checksums.size() && i < st.hash_checksum_algorithms.size(); ++i) {
    std::string name(HashAlgorithmName(st.hash_checksum_algorithms[i]));
    name.resize(std::max<std::size_t>(name.size(), 9), ' ');
    std::cout << "  " << name << " " << checksums[i] << "\n";
  }
}

}  // namespace

int RunInfo(const std::vector<std::string>& args) {
  po::options_description options("Options");
  options.add_options()
      ("dataset", po::value<std::string>(), "dataset folder (holds dataset_info.json)")
      ("checksums", po::bool_switch(), "print only the dataset_info.json checksums");
  AddJsonOption(&options);
  po::positional_options_description positional;
  positional.add("dataset", 1);
  po::variables_map vm;
  if (auto code = ParseCommandLine(kInfoSpec, options, positional, args, &vm)) return *code;
  if (!vm.count("dataset")) return UsageError("info", "missing DATASET argument");

  auto opened = OpenDatasetArg(vm["dataset"].as<std::string>());
  if (!opened.ok()) return ReportError(opened.status(), /*input_stage=*/true);
  const Dataset& ds = **opened;
  const DatasetStructure& st = ds.info().dataset_structure;
  auto checksums = ds.MetadataChecksums();
  if (!checksums.ok()) return ReportError(checksums.status());

  const auto json = JsonOption(vm);
  nlohmann::json sums = nlohmann::json::array();
  for (std::size_t i = 0; i < checksums->size() && i < st.hash_checksum_algorithms.size(); ++i) {
    sums.push_back({{"algorithm", HashAlgorithmName(st.hash_checksum_algorithms[i])}, {"hex", (*checksums)[i]}});
  }
  if (json) {
    const nlohmann::json doc = InfoJson(ds, sums, vm["checksums"].as<bool>());
    if (Status w = WriteJsonOutput(*json, doc.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n"); !w.ok()) return ReportError(w);
    if (*json == "-") return kExitOk;  // standard output holds only the JSON
  }
  if (vm["checksums"].as<bool>()) {
    for (std::size_t i = 0; i < checksums->size() && i < st.hash_checksum_algorithms.size(); ++i) {
      std::cout << HashAlgorithmName(st.hash_checksum_algorithms[i]) << " " << (*checksums)[i]
                << "\n";
    }
    return kExitOk;
  }

  PrintInfoText(ds, *checksums);
  return kExitOk;
}

}  // namespace sedpack::cli
