// SPDX-License-Identifier: Apache-2.0
// `sedpack stats DATASET [--split S]... [--write] [--json [FILE]]`.
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>

#include <nlohmann/json.hpp>

#include "cli/cli_comm.h"
#include "cli/cli_common.h"
#include "sedpack/maintain/stats.h"

namespace sedpack::cli {

const CommandSpec kStatsSpec = {
    "stats", "DATASET [--split S]... [--write] [options]",
    "per-attribute min, max, mean and standard deviation over a split",
    "Compute, for every numeric attribute, the minimum, maximum, mean and (population)\n"
    "standard deviation over every element of every example of each split given\n"
    "(default: train), reading every shard once (hashes checked). Under mpirun/srun the\n"
    "shards are spread over the ranks and the partial moments merged exactly\n"
    "(Chan/Welford, no loss of precision on large splits; deviations are accumulated\n"
    "scaled, so data near +-1e300 keeps a finite std). NaNs are counted and left out.\n"
    "Integer attributes show their exact min and max. --progress shows the shard bytes\n"
    "read so far (all ranks) on stderr, then a final line per split.\n\n"
    "--write stores each attribute's min and max as \"min\"/\"max\" in its\n"
    "custom_metadata in dataset_info.json, as the TinyAES dataset does (other keys are\n"
    "kept), and rewrites dataset_info.json atomically: the root checksums change.\n"
    "It takes one split.\n\n"
    "--json: schema \"sedpack-hpc/stats/1\": {schema, dataset, splits: [{split, examples,\n"
    "attributes: [{name, dtype, count, nan_count, min, max, mean, std}]}]}; min and max\n"
    "are exact integers for integer dtypes; a non-finite number is the string \"NaN\",\n"
    "\"Infinity\" or \"-Infinity\".\n",
    "  sedpack stats ds\n"
    "      statistics of the train split\n"
    "  sedpack stats ds -s train -s test --json=stats.json\n"
    "      two splits, also as JSON\n"
    "  mpirun -n 4 sedpack stats ds --write\n"
    "      four ranks; store min/max in dataset_info.json\n",
    MpiMode::kParallel,
};

namespace {

std::string Shortest(double x) {
  if (std::isnan(x)) return "NaN";
  if (std::isinf(x)) return x > 0 ? "Infinity" : "-Infinity";
  char buf[40];
  auto [p, ec] = std::to_chars(buf, buf + sizeof(buf), x);
  return std::string(buf, p);
}

nlohmann::json JsonNumber(double x) {
  if (!std::isfinite(x)) return Shortest(x);
  return x;
}

// Min or max as text: exact for integer data.
std::string Extreme(const Moments& m, bool want_max) {
  if (m.has_signed && !m.has_unsigned) return std::to_string(want_max ? m.signed_max : m.signed_min);
  if (m.has_unsigned && !m.has_signed) return std::to_string(want_max ? m.unsigned_max : m.unsigned_min);
  return Shortest(want_max ? m.max : m.min);
}

nlohmann::json JsonExtreme(const Moments& m, bool want_max) {
  if (m.has_signed && !m.has_unsigned) return want_max ? m.signed_max : m.signed_min;
  if (m.has_unsigned && !m.has_signed) return want_max ? m.unsigned_max : m.unsigned_min;
  return JsonNumber(want_max ? m.max : m.min);
}

std::string Approx(double x) {
  if (!std::isfinite(x)) return Shortest(x);
  char buf[40];
  std::snprintf(buf, sizeof(buf), "%.10g", x);
  return buf;
}

}  // namespace

int RunStats(const std::vector<std::string>& args) {
  po::options_description options("Options");
  options.add_options()("dataset", po::value<std::string>()->value_name("DATASET"), "dataset folder");
  AddSplitOption(&options, "train, test or holdout; repeatable; default: train");
  options.add_options()("write", po::bool_switch(), "store min/max in the attributes' custom_metadata (one split)");
  AddThreadsOption(&options);
  AddProgressOption(&options);
  AddJsonOption(&options);
  po::positional_options_description positional;
  positional.add("dataset", 1);
  po::variables_map vm;
  if (auto code = ParseCommandLine(kStatsSpec, options, positional, args, &vm)) return *code;
  if (!vm.count("dataset")) return UsageError("stats", "missing DATASET");
  auto splits = SplitsOption(vm);
  if (!splits.ok()) return UsageError("stats", splits.status().message());
  if (splits->empty()) splits->push_back(Split::kTrain);
  const bool write = vm["write"].as<bool>();
  if (write && splits->size() > 1) return UsageError("stats", "--write takes one split");
  int threads = 0;
  if (Status st = ParseThreadsOption(vm, &threads); !st.ok()) return UsageError("stats", st.message());
  auto progress = ProgressOption(vm);
  if (!progress.ok()) return UsageError("stats", progress.status().message());
  const auto json = JsonOption(vm);
  const std::string root = vm["dataset"].as<std::string>();
  auto opened = OpenDatasetArg(root);
  if (!opened.ok()) return ReportError(opened.status(), /*input_stage=*/true);
  if (Status st = RequireSplits(**opened, *splits); !st.ok()) return UsageError("stats", st.message());
  auto started = StartComm();
  if (!started.ok()) return ReportError(started.status());
  CliComm& cc = **started;
  std::vector<SplitStats> all;
  for (Split split : *splits) {
    const auto start = std::chrono::steady_clock::now();
    ProgressPrinter printer(cc.is_root() && *progress);
    ShardPassOptions pass;
    pass.threads = threads;
    if (printer.enabled()) {
      const std::string name = "stats: " + std::string(SplitName(split));
      pass.progress = [&printer, &name](const ShardPassProgress& p) { printer.Update(ShardPassLine(name, p), p.finished); };
    }
    auto stats = ComputeSplitStats(cc.comm(), root, split, pass);
    printer.Finish();
    if (!stats.ok()) return cc.ReportFailure(stats.status(), /*input_stage=*/false);
    if (cc.is_root() && *progress) {
      const ShardListInfo* sli = (*opened)->info().FindSplit(split);
      std::cerr << "stats: " << SplitName(split) << ": " << stats->examples << " examples in "
                << (sli ? sli->number_of_shards : 0) << " shards read in "
                << FormatDuration(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count())
                << "\n";
    }
    all.push_back(std::move(stats).value());
  }
  if (!cc.is_root()) return kExitOk;
  if (json) {
    nlohmann::json doc = {{"schema", JsonSchemaName("stats")}, {"dataset", root}};
    nlohmann::json js = nlohmann::json::array();
    for (const SplitStats& s : all) {
      nlohmann::json attrs = nlohmann::json::array();
      for (const AttributeStats& a : s.attributes) {
        attrs.push_back({{"name", a.name},
                         {"dtype", DTypeName(a.dtype)},
                         {"count", a.moments.count},
                         {"nan_count", a.moments.nan_count},
                         {"min", a.moments.count ? JsonExtreme(a.moments, false) : nlohmann::json()},
                         {"max", a.moments.count ? JsonExtreme(a.moments, true) : nlohmann::json()},
                         {"mean", JsonNumber(a.moments.mean)},
                         {"std", JsonNumber(a.moments.StdDev())}});
      }
      js.push_back({{"split", SplitName(s.split)}, {"examples", s.examples}, {"attributes", attrs}});
    }
    doc["splits"] = js;
    if (Status st = WriteJsonOutput(*json, doc.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n"); !st.ok()) return ReportError(st);
  }
  if (!json || *json != "-") {
    for (const SplitStats& s : all) {
      std::printf("split %s: %llu examples\n", std::string(SplitName(s.split)).c_str(),
                  static_cast<unsigned long long>(s.examples));
      std::printf("  %-20s %-8s %14s %20s %20s %16s %16s\n", "attribute", "dtype", "values", "min", "max", "mean",
                  "std");
      for (const AttributeStats& a : s.attributes) {
        const Moments& m = a.moments;
        std::printf("  %-20s %-8s %14llu %20s %20s %16s %16s", a.name.c_str(), std::string(DTypeName(a.dtype)).c_str(),
                    static_cast<unsigned long long>(m.count), m.count ? Extreme(m, false).c_str() : "-",
                    m.count ? Extreme(m, true).c_str() : "-", Approx(m.mean).c_str(), Approx(m.StdDev()).c_str());
        if (m.nan_count) std::printf("  (%llu NaN)", static_cast<unsigned long long>(m.nan_count));
        std::printf("\n");
      }
    }
  }
  if (write) {
    if (Status st = WriteMinMax(root, all.front()); !st.ok()) return ReportError(st);
    std::fprintf(json && *json == "-" ? stderr : stdout, "wrote min/max into dataset_info.json\n");
  }
  std::fflush(stdout);
  return kExitOk;
}

}  // namespace sedpack::cli
