// SPDX-License-Identifier: Apache-2.0
// `sedpack cat DATASET --split S`: examples as JSON lines.
#include <cstdio>
#include <iostream>

#include "cli/cli_common.h"
#include "cli/value_json.h"
#include "sedpack/dataset/reader.h"

namespace sedpack::cli {

const CommandSpec kCatSpec = {
    "cat", "DATASET --split S [--limit N] [--format jsonl] [--no-verify | --strict-hash]",
    "print the examples of a split as JSON lines",
    "Print the examples of one split, in the reference's non-shuffled read order,\n"
    "one JSON object per line with the attribute names as keys (schema order).\n\n"
    "Values are exact: parsing the text gives back the stored value.\n"
    "  numbers      nested lists following the shape (a scalar for shape ());\n"
    "               float32/float64 in shortest round-trip form, float16 as the shortest\n"
    "               decimal that rounds back to the same half; integers exact (uint64 too)\n"
    "  NaN, +-inf   the strings \"NaN\", \"Infinity\", \"-Infinity\"\n"
    "  bool         true / false\n"
    "  int          an integer\n"
    "  str          a JSON string (invalid UTF-8 bytes become U+FFFD)\n"
    "  bytes        base64 (standard alphabet, padded)\n\n"
    "Every shards_list.json and shard file is checked against the hash its parent\n"
    "records before it is parsed or decoded (the fastest recorded algorithm, on the\n"
    "bytes read for decoding). A mismatch stops with exit code 1, naming the file\n"
    "and the algorithm; --no-verify skips the check. A shard the checks sidecar\n"
    "(DATASET/.sedpack-hpc/checks.bin, when fresh) records is checked against its\n"
    "size and fast checksum there instead; --strict-hash always checks the recorded\n"
    "hash. A split the dataset does not have is a usage error (exit 2).\n",
    "  sedpack cat ds -s train -n 3\n"
    "      the first three train examples\n"
    "  sedpack cat ds -s test | jq -c .key\n"
    "      one field of every test example\n",
};

int RunCat(const std::vector<std::string>& args) {
  po::options_description options("Options");
  options.add_options()
      ("dataset", po::value<std::string>(), "dataset folder")
      ("split,s", po::value<std::string>()->value_name("S"), "split to print (train, test, holdout); required")
      ("limit,n", po::value<std::string>()->value_name("N"), "print at most N examples")
      ("format", po::value<std::string>()->default_value("jsonl"), "output format: jsonl")
      ("no-verify", po::bool_switch(), "do not check files against their recorded hashes")
      ("strict-hash", po::bool_switch(), "check the recorded hashes, not the checks sidecar");
  po::positional_options_description positional;
  positional.add("dataset", 1);
  po::variables_map vm;
  if (auto code = ParseCommandLine(kCatSpec, options, positional, args, &vm)) return *code;
  if (!vm.count("dataset")) return UsageError("cat", "missing DATASET argument");
  if (!vm.count("split")) return UsageError("cat", "missing --split (train, test or holdout)");
  if (vm["no-verify"].as<bool>() && vm["strict-hash"].as<bool>()) {
    return UsageError("cat", "--no-verify and --strict-hash contradict each other");
  }
  auto split = ParseSplits({vm["split"].as<std::string>()});
  if (!split.ok()) return UsageError("cat", split.status().message());
  if (vm["format"].as<std::string>() != "jsonl") {
    return UsageError("cat", "unknown --format \"" + vm["format"].as<std::string>() +
                                 "\" (supported: jsonl)");
  }
  std::uint64_t limit = UINT64_MAX;
  if (vm.count("limit")) {
    auto n = ParseUInt(vm["limit"].as<std::string>(), "--limit");
    if (!n.ok()) return UsageError("cat", n.status().message());
    limit = *n;
  }

  auto opened = OpenDatasetArg(vm["dataset"].as<std::string>());
  if (!opened.ok()) return ReportError(opened.status(), /*input_stage=*/true);
  std::shared_ptr<const Dataset> ds = *opened;
  if (Status st = RequireSplits(*ds, *split); !st.ok()) return UsageError("cat", st.message());
  if (limit == 0) return kExitOk;

  // Keys are escaped once; values are appended per example.
  const std::vector<std::string> keys = JsonObjectKeys(ds->schema());
  ReadOptions read;
  read.prefetch_shards = 2;
  read.verify_hashes = !vm["no-verify"].as<bool>();
  read.strict_hashes = vm["strict-hash"].as<bool>();
  read.warn = [](const std::string& w) { std::cerr << "sedpack: warning: " << w << "\n"; };
  auto reader = ExampleReader::Make(ds, split->front(), read);
  if (!reader.ok()) return ReportDataError(reader.status());

  std::string out;
  std::uint64_t printed = 0;
  while (printed < limit) {
    auto next = (*reader)->Next();
    if (!next.ok()) {
      std::fwrite(out.data(), 1, out.size(), stdout);
      std::fflush(stdout);
      return ReportDataError(next.status());
    }
    if (!next->has_value()) break;
    const Example& ex = **next;
    if (ex.shard->num_attributes() != keys.size()) {
      std::fwrite(out.data(), 1, out.size(), stdout);
      std::fflush(stdout);
      return ReportError(Status::Corruption("a shard of split ", SplitName(split->front()), " has ",
                                            ex.shard->num_attributes(), " attributes, the schema ",
                                            keys.size()));
    }
    AppendExampleJsonLine(keys, ex, &out);
    ++printed;
    if (out.size() >= (1 << 20)) {
      if (std::fwrite(out.data(), 1, out.size(), stdout) != out.size()) {
        return ReportError(Status::IOError("cannot write to standard output"));
      }
      out.clear();
    }
  }
  if (std::fwrite(out.data(), 1, out.size(), stdout) != out.size() || std::fflush(stdout) != 0) {
    return ReportError(Status::IOError("cannot write to standard output"));
  }
  return kExitOk;
}

}  // namespace sedpack::cli
