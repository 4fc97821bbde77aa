// SPDX-License-Identifier: Apache-2.0
// `sedpack index build|check DATASET`: the sample index sidecar.
#include <iostream>

#include <nlohmann/json.hpp>

#include "cli/cli_comm.h"
#include "cli/cli_common.h"
#include "sedpack/check/report.h"
#include "sedpack/check/verify.h"
#include "sedpack/index/index.h"
#include "sedpack/io/file.h"
#include "sedpack/mpi/distributed_index.h"
#include "index/index_internal.h"
#include "sidecar/checks_internal.h"
#include "sidecar/sidecar_internal.h"

namespace sedpack::cli {

const CommandSpec kIndexSpec = {
    "index", "build|check DATASET [--rebuild] [--json [FILE]]",
    "build or check the sample index (random access by example number)",
    "build   Walk the metadata (no shard is read for it) and write DATASET/.sedpack-hpc/index.bin:\n"
    "        for each split, the shards in sequential read order and the first example\n"
    "        number of each, so that `sedpack get` and the library find example i in\n"
    "        O(log shards) without reading shards_list.json files. The index records the\n"
    "        sha256 of the dataset_info.json it was built from. Under mpirun/srun the\n"
    "        shards_list.json walk is spread over the ranks (rank 0 writes the file).\n"
    "        A dataset without a fresh checks sidecar (.sedpack-hpc/checks.bin: one that\n"
    "        another library wrote, or that changed since) gets one too: every shard is\n"
    "        read once, checked against its recorded hash and decoded, as by\n"
    "        `check --deep`; a shard that fails is left out of it, with a warning.\n"
    "        Each subtree of the walk is journaled under DATASET/.sedpack-hpc/jobs/: a stopped\n"
    "        build run again keeps what was walked and reads only the rest (a journal of\n"
    "        another dataset_info.json is refused); --restart throws a stopped run away,\n"
    "        --no-journal neither journals nor keeps one. Under mpirun/srun each rank journals\n"
    "        the subtrees it walks; a rerun on any number of ranks keeps them all.\n"
    "check   Say whether the index is fresh (built from the current dataset_info.json),\n"
    "        stale (the dataset changed since), invalid (unreadable or malformed) or\n"
    "        missing. Readers ignore a stale or invalid index with a warning and read the\n"
    "        metadata instead; with --rebuild, check rebuilds it.\n\n"
    "Exit code for check: 0 fresh (or rebuilt), 1 stale, invalid or missing.\n"
    "check --json: schema \"sedpack-hpc/index-check/1\": {schema, dataset, path, state\n"
    "(fresh, stale, invalid, missing), message, rebuilt}.\n"
    "Under mpirun/srun `build` runs on every rank; `check` only on rank 0.\n",
    "  sedpack index build ds\n"
    "      write ds/.sedpack-hpc/index.bin\n"
    "  sedpack index check ds --json\n"
    "      is it fresh? as JSON\n"
    "  sedpack index check ds --rebuild\n"
    "      rebuild it if not\n",
    MpiMode::kParallel,
};

namespace {

void PrintSummary(const DatasetInfoDigest& digest, const std::vector<IndexSplitHead>& splits,
                  const std::string& path) {
  std::cout << "wrote " << path << " (dataset_info.json sha256 " << DigestHex(digest) << ")\n";
  for (const IndexSplitHead& s : splits) {
    std::cout << "  " << SplitName(s.split) << ": " << s.examples << " examples in " << s.shards
              << (s.shards == 1 ? " shard\n" : " shards\n");
  }
}

void PrintSummary(const IndexContents& c, const std::string& path) {
  std::vector<IndexSplitHead> splits;
  for (const IndexedSplit& s : c.splits) {
    IndexSplitHead h;
    h.split = s.split;
    h.shards = s.shard_paths.size();
    for (std::uint64_t n : s.shard_examples) h.examples += n;
    splits.push_back(h);
  }
  PrintSummary(c.dataset_info_sha256, splits, path);
}

// Whether the dataset needs a checks sidecar: a folder (not a pack) that
// records hashes and has no fresh checks.bin. Rank 0 decides for every rank
// (the deep check that writes it is collective).
Result<bool> NeedsChecks(CliComm& cc, const std::string& root) {
  std::string need;
  if (cc.is_root()) {
    auto ds = Dataset::Open(root);
    const bool yes = ds.ok() && !(*ds)->pack() &&
                     !(*ds)->info().dataset_structure.hash_checksum_algorithms.empty() &&
                     !sidecar_internal::LoadFreshChecks(root, [](const std::string&) {});
    need = yes ? "1" : "";
  }
  SEDPACK_RETURN_NOT_OK(cc.comm().Bcast(&need, 0));
  return !need.empty();
}

// The checks sidecar of a dataset someone else wrote: a deep check over the
// ranks that records it. The index is written already and holds paths only, so
// its exit code stands: the shards the check refuses are named in a warning
// and left out of the sidecar (their reads check the recorded hashes).
int RecordChecks(CliComm& cc, const std::string& root, int threads, bool quiet) {
  auto need = NeedsChecks(cc, root);
  if (!need.ok()) return ReportError(need.status());
  if (!*need) return kExitOk;
  VerifyOptions verify;
  verify.check.deep = true;
  verify.check.record_checks = true;
  verify.check.find_orphans = false;
  verify.check.threads = threads;
  auto report = VerifyDataset(cc.comm(), root, verify);
  if (!report.ok()) {
    if (cc.is_root()) {
      std::cerr << "sedpack index: warning: no checks sidecar: " << report.status().ToString() << "\n";
    }
    return kExitOk;
  }
  if (!cc.is_root()) return kExitOk;
  const bool written = sidecar_internal::LoadFreshChecks(root, [](const std::string&) {}) != nullptr;
  if (!report->ok()) {
    std::cerr << CheckProblemsToText(*report);
    std::cerr << "sedpack index: warning: " << report->error_count() << " problem(s) in the shards; "
              << (written ? "they are left out of " : "no ") << SidecarPath(root, sidecar_internal::kChecksFileName)
              << (written ? "" : " was written") << " (`sedpack check --deep` reports them too)\n";
    return kExitOk;
  }
  if (!quiet) {
    std::cout << (written ? "wrote " : "could not write ") << SidecarPath(root, sidecar_internal::kChecksFileName)
              << " (" << report->shards_checked << " shards read and checked, "
              << FormatBytes(static_cast<double>(report->bytes_checked)) << ")\n";
  }
  return kExitOk;
}

int RunBuild(const std::string& root, int threads, bool quiet, bool journal, bool restart) {
  if (!PathExists(JoinRoot(root, "dataset_info.json"))) {
    return ReportError(Status::InvalidArgument(root, " is not a sedpack dataset (it has no dataset_info.json)"));
  }
  auto started = StartComm();
  if (!started.ok()) return ReportError(started.status());
  CliComm& cc = **started;
  if (cc.comm().size() > 1) {
    SetResumableJob(journal, "the walked subtrees");
    DistributedIndexReport report;
    DistributedIndexOptions options;
    options.journal = journal;
    options.restart = restart;
    options.report = &report;
    auto built = BuildIndexDistributed(cc.comm(), root, options);
    if (!built.ok()) {
      if (!cc.is_root()) return ExitCodeForData(built.status());
      return ReportDataError(built.status());
    }
    if (cc.is_root() && !report.resumed_job.empty()) {
      std::cerr << "sedpack index build: resumed job " << report.resumed_job << ": " << report.units_kept << " of "
                << report.units << " subtrees kept\n";
    }
    if (cc.is_root() && !quiet) PrintSummary(*built, SidecarPath(root, kIndexFileName));
    return RecordChecks(cc, root, threads, quiet);
  }
  auto ds = OpenDatasetArg(root);
  if (!ds.ok()) return ReportError(ds.status(), /*input_stage=*/true);
  SetResumableJob(journal, "the walked subtrees");
  if (journal) {
    IndexJobOptions job;
    job.restart = restart;
    auto built = BuildIndexFileJournaled(*ds, threads, job);
    if (!built.ok()) return ReportDataError(built.status());
    if (!built->resumed_job.empty()) {
      std::cerr << "sedpack index build: resumed job " << built->resumed_job << ": " << built->units_kept << " of "
                << built->units << " subtrees kept\n";
    }
    if (!quiet) PrintSummary(built->dataset_info_sha256, built->splits, SidecarPath(root, kIndexFileName));
    return RecordChecks(cc, root, threads, quiet);
  }
  auto built = BuildIndexFile(*ds, threads);
  if (!built.ok()) return ReportDataError(built.status());
  if (!quiet) PrintSummary(*built, SidecarPath(root, kIndexFileName));
  return RecordChecks(cc, root, threads, quiet);
}

int RunIndexCheck(const std::string& root, bool rebuild, const std::optional<std::string>& json) {
  if (auto code = SerialCommandGuard("index check")) return *code;
  auto ds = OpenDatasetArg(root);
  if (!ds.ok()) return ReportError(ds.status(), /*input_stage=*/true);
  auto check = CheckIndex(root);
  if (!check.ok()) return ReportError(check.status(), /*input_stage=*/true);
  if (json) {
    bool rebuilt = false;
    if (check->freshness != IndexFreshness::kFresh && rebuild) {
      auto built = BuildIndexFile(*ds);
      if (!built.ok()) return ReportError(built.status());
      rebuilt = true;
    }
    const nlohmann::json doc = {{"schema", JsonSchemaName("index-check")}, {"dataset", root},
                                {"path", check->path},
                                {"state", IndexFreshnessName(check->freshness)},
                                {"message", check->message},
                                {"rebuilt", rebuilt}};
    if (Status st = WriteJsonOutput(*json, doc.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n"); !st.ok()) return ReportError(st);
    return check->freshness == IndexFreshness::kFresh || rebuilt ? kExitOk : kExitProblems;
  }
  std::cout << IndexFreshnessName(check->freshness) << " " << check->path;
  if (!check->message.empty()) std::cout << ": " << check->message;
  std::cout << "\n";
  if (check->freshness == IndexFreshness::kFresh) return kExitOk;
  if (!rebuild) {
    if (check->freshness != IndexFreshness::kMissing) {
      std::cout << "readers ignore it (with a warning) and read the metadata; "
                   "`sedpack index build` or `index check --rebuild` rebuilds it\n";
    }
    return kExitProblems;
  }
  auto built = BuildIndexFile(*ds);
  if (!built.ok()) return ReportError(built.status());
  std::cout << "rebuilt ";
  PrintSummary(*built, check->path);
  return kExitOk;
}

}  // namespace

int RunIndex(const std::vector<std::string>& args) {
  po::options_description options("Options");
  options.add_options()("action", po::value<std::string>(), "build or check")(
      "dataset", po::value<std::string>(), "dataset folder")(
      "rebuild", po::bool_switch(), "check: rebuild an index that is not fresh")(
      "no-journal", po::bool_switch(), "build: do not journal the walk (a stopped build keeps nothing)")(
      "restart", po::bool_switch(), "build: throw a stopped build's journal away first");
  AddThreadsOption(&options,
                   "build: threads reading the shards_list.json files, 0 = all cores (the index is the same for any N)");
  AddJsonOption(&options);
  AddQuietOption(&options);
  po::positional_options_description positional;
  positional.add("action", 1).add("dataset", 1);
  po::variables_map vm;
  if (auto code = ParseCommandLine(kIndexSpec, options, positional, args, &vm)) return *code;
  if (!vm.count("action")) return UsageError("index", "missing action (build or check)");
  if (!vm.count("dataset")) return UsageError("index", "missing DATASET argument");
  const std::string action = vm["action"].as<std::string>();
  const std::string root = vm["dataset"].as<std::string>();
  if (action != "build" && action != "check") {
    const std::string near = ClosestMatch(action, {"build", "check"});
    return UsageError("index", "unknown action '" + action + "' (build or check)" +
                                   (near.empty() ? "" : "; did you mean '" + near + "'?"));
  }
  if (action == "build") {
    if (vm["rebuild"].as<bool>()) return UsageError("index", "--rebuild goes with check (build always rebuilds)");
    if (vm.count("json")) return UsageError("index", "--json goes with check");
    int threads = 0;
    if (Status st = ParseThreadsOption(vm, &threads); !st.ok()) return UsageError("index", st.message());
    const bool journal = !vm["no-journal"].as<bool>(), restart = vm["restart"].as<bool>();
    if (restart && !journal) return UsageError("index", "--restart and --no-journal exclude each other");
    return RunBuild(root, threads, QuietOption(vm), journal, restart);
  }
  if (action == "check") return RunIndexCheck(root, vm["rebuild"].as<bool>(), JsonOption(vm));
  return UsageError("index", "unknown action '" + action + "' (build or check)");
}

}  // namespace sedpack::cli
