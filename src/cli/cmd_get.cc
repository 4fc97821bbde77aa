// SPDX-License-Identifier: Apache-2.0
// `sedpack get DATASET --split S --index I`: examples by number, through the index.
#include <cstdio>
#include <iostream>

#include "cli/cli_common.h"
#include "cli/value_json.h"
#include "sedpack/index/fetch.h"

namespace sedpack::cli {

const CommandSpec kGetSpec = {
    "get", "DATASET --split S --index I [--index J ...] [--format jsonl] [--no-verify | --strict-hash]",
    "print examples by number (random access through the sample index)",
    "Print example I of a split: the I-th example (from 0) of the non-shuffled read\n"
    "order that `sedpack cat` prints, as the same JSON line. --index may be repeated;\n"
    "the examples are printed in the order asked. The shard holding each example is\n"
    "found with the sample index (DATASET/.sedpack-hpc/index.bin, see `sedpack index`);\n"
    "if it is missing the metadata is read instead, if it is stale or invalid a warning\n"
    "is printed and the metadata is read (--rebuild-index rewrites it instead).\n\n"
    "Each shard read is checked against the hash the metadata records (and each\n"
    "shards_list.json on the way to it against its parent's) before it is decoded.\n"
    "A mismatch stops with exit code 1, naming the file and the algorithm;\n"
    "--no-verify skips the check; an example of an uncompressed fb shard is then\n"
    "read alone (its offsets and bytes), not with its whole shard.\n"
    "When the checks sidecar (DATASET/.sedpack-hpc/checks.bin) is fresh, an fb\n"
    "example is read alone and checked against its own checksum there, and a whole\n"
    "shard against its fast checksum; --strict-hash checks the recorded hashes\n"
    "instead (against someone who rewrote both a shard and the sidecar).\n\n"
    "Exit code 2 also for an example number out of range and for a split the dataset\n"
    "does not have.\n",
    "  sedpack get ds -s train -i 0 -i 41\n"
    "      examples 0 and 41 of train\n"
    "  sedpack get ds -s test -i 7 --rebuild-index\n"
    "      rebuilding a stale index on the way\n",
};

int RunGet(const std::vector<std::string>& args) {
  po::options_description options("Options");
  options.add_options()
      ("dataset", po::value<std::string>(), "dataset folder")
      ("split,s", po::value<std::string>()->value_name("S"), "split (train, test, holdout); required")
      ("index,i", po::value<std::vector<std::string>>()->value_name("I"),
       "example number (0-based); repeatable; required")
      ("format", po::value<std::string>()->default_value("jsonl"), "output format: jsonl")
      ("rebuild-index", po::bool_switch(), "rewrite a stale, invalid or missing index")
      ("no-verify", po::bool_switch(), "do not check files against their recorded hashes")
      ("strict-hash", po::bool_switch(), "check the recorded hashes, not the checks sidecar");
  po::positional_options_description positional;
  positional.add("dataset", 1);
  po::variables_map vm;
  if (auto code = ParseCommandLine(kGetSpec, options, positional, args, &vm)) return *code;
  if (!vm.count("dataset")) return UsageError("get", "missing DATASET argument");
  if (!vm.count("split")) return UsageError("get", "missing --split (train, test or holdout)");
  if (!vm.count("index")) return UsageError("get", "missing --index I");
  if (vm["no-verify"].as<bool>() && vm["strict-hash"].as<bool>()) {
    return UsageError("get", "--no-verify and --strict-hash contradict each other");
  }
  auto split = ParseSplits({vm["split"].as<std::string>()});
  if (!split.ok()) return UsageError("get", split.status().message());
  if (vm["format"].as<std::string>() != "jsonl") {
    return UsageError("get", "unknown --format \"" + vm["format"].as<std::string>() +
                                 "\" (supported: jsonl)");
  }
  std::vector<std::uint64_t> wanted;
  for (const std::string& text : vm["index"].as<std::vector<std::string>>()) {
    auto n = ParseUInt(text, "--index");
    if (!n.ok()) return UsageError("get", n.status().message());
    wanted.push_back(*n);
  }

  auto opened = OpenDatasetArg(vm["dataset"].as<std::string>());
  if (!opened.ok()) return ReportError(opened.status(), /*input_stage=*/true);
  std::shared_ptr<const Dataset> ds = *opened;
  if (Status st = RequireSplits(*ds, *split); !st.ok()) return UsageError("get", st.message());
  IndexOpenOptions io;
  io.rebuild = vm["rebuild-index"].as<bool>();
  io.warn = [](const std::string& w) { std::cerr << "sedpack: warning: " << w << "\n"; };
  auto index = OpenIndex(ds, io);
  if (!index.ok()) return ReportError(index.status(), /*input_stage=*/true);
  if (!(*index)->HasSplit(split->front())) {
    return ReportError(Status::NotFound("the dataset has no split ", SplitName(split->front())));
  }
  FetchOptions fetch;
  fetch.verify_hashes = !vm["no-verify"].as<bool>();
  fetch.strict_hashes = vm["strict-hash"].as<bool>();
  fetch.warn = [](const std::string& w) { std::cerr << "sedpack: warning: " << w << "\n"; };
  // Examples read alone (unverified uncompressed fb, or checked through the
  // checks sidecar) are read by positioned reads only with the shard cache off.
  if (FetchReadsExamplesAlone(*ds, fetch)) fetch.cache_bytes = 0;
  auto fetcher = ExampleFetcher::Make(ds, *index, fetch);
  if (!fetcher.ok()) return ReportDataError(fetcher.status());
  const std::vector<std::string> keys = JsonObjectKeys(ds->schema());
  std::string out;
  for (std::uint64_t i : wanted) {
    auto ex = (*fetcher)->Get(split->front(), i);
    if (!ex.ok()) {
      std::fwrite(out.data(), 1, out.size(), stdout);
      std::fflush(stdout);
      return ReportError(ex.status());
    }
    AppendExampleJsonLine(keys, *ex, &out);
  }
  if (std::fwrite(out.data(), 1, out.size(), stdout) != out.size() || std::fflush(stdout) != 0) {
    return ReportError(Status::IOError("cannot write to standard output"));
  }
  return kExitOk;
}

}  // namespace sedpack::cli
