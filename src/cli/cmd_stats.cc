// SPDX-License-Identifier: Apache-2.0
// `sedpack stats DATASET [--split S] [--write]`.
#include <cstdio>
#include <iostream>

#include "cli/cli_comm.h"
#include "cli/cli_common.h"
#include "sedpack/maintain/stats.h"

namespace sedpack::cli {

const CommandSpec kStatsSpec = {
    "stats", "DATASET [--split S] [--write] [options]",
    "per-attribute min, max, mean and standard deviation over a split",
    "Compute, for every numeric attribute, the minimum, maximum, mean and (population)\n"
    "standard deviation over every element of every example of a split (default:\n"
    "train), reading every shard once (hashes checked). Under mpirun/srun the shards\n"
    "are spread over the ranks and the partial moments merged exactly (Chan/Welford,\n"
    "no loss of precision on large splits). NaNs are counted and left out.\n\n"
    "--write stores each attribute's min and max as \"min\"/\"max\" in its\n"
    "custom_metadata in dataset_info.json, as the TinyAES dataset does (other keys are\n"
    "kept), and rewrites dataset_info.json atomically: the root checksums change.\n",
};

int RunStats(const std::vector<std::string>& args) {
  po::options_description options("Options");
  options.add_options()
      ("dataset", po::value<std::string>()->value_name("DATASET"), "dataset folder")
      ("split", po::value<std::string>()->value_name("S")->default_value("train"), "train, test or holdout")
      ("write", po::bool_switch(), "store min/max in the attributes' custom_metadata")
      ("threads,j", po::value<std::string>()->value_name("N"), "threads per rank, 0 = all cores");
  po::positional_options_description positional;
  positional.add("dataset", 1);
  po::variables_map vm;
  if (auto code = ParseCommandLine(kStatsSpec, options, positional, args, &vm)) return *code;
  if (!vm.count("dataset")) return UsageError("stats", "missing DATASET");
  auto splits = ParseSplits({vm["split"].as<std::string>()});
  if (!splits.ok()) return UsageError("stats", splits.status().message());
  int threads = 0;
  if (Status st = ParseThreadsOption(vm, &threads); !st.ok()) return UsageError("stats", st.message());
  const std::string root = vm["dataset"].as<std::string>();
  auto opened = OpenDatasetArg(root);
  if (!opened.ok()) return ReportError(opened.status(), /*input_stage=*/true);
  auto started = StartComm();
  if (!started.ok()) return ReportError(started.status());
  CliComm& cc = **started;
  auto stats = ComputeSplitStats(cc.comm(), root, splits->front(), threads);
  if (!stats.ok()) return cc.ReportFailure(stats.status());
  if (!cc.is_root()) return kExitOk;
  std::printf("split %s: %llu examples\n", std::string(SplitName(stats->split)).c_str(),
              static_cast<unsigned long long>(stats->examples));
  std::printf("  %-20s %-8s %14s %14s %14s %14s %14s\n", "attribute", "dtype", "values", "min", "max", "mean", "std");
  for (const AttributeStats& a : stats->attributes) {
    std::printf("  %-20s %-8s %14llu %14.6g %14.6g %14.6g %14.6g", a.name.c_str(),
                std::string(DTypeName(a.dtype)).c_str(), static_cast<unsigned long long>(a.moments.count),
                a.moments.min, a.moments.max, a.moments.mean, a.moments.StdDev());
    if (a.moments.nan_count) std::printf("  (%llu NaN)", static_cast<unsigned long long>(a.moments.nan_count));
    std::printf("\n");
  }
  if (vm["write"].as<bool>()) {
    if (Status st = WriteMinMax(root, *stats); !st.ok()) return ReportError(st);
    std::printf("wrote min/max into dataset_info.json\n");
  }
  std::fflush(stdout);
  return kExitOk;
}

}  // namespace sedpack::cli
