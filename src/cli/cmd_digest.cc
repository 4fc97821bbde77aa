// SPDX-License-Identifier: Apache-2.0
// `sedpack digest DATASET`: content digests of every shard, and the content id.
#include <cstdio>
#include <iostream>

#include <chrono>

#include <nlohmann/json.hpp>

#include "cli/cli_comm.h"
#include "cli/cli_common.h"
#include "sedpack/maintain/content.h"

namespace sedpack::cli {

const CommandSpec kDigestSpec = {
    "digest", "DATASET [--print]",
    "record content digests (they survive recompression) and the content id",
    "Decode every shard (hashes checked) and record a SHA-256 of its decoded content in\n"
    ".sedpack-hpc/content.json, with a content id of the whole dataset derived from them.\n"
    "The digest covers each attribute's name, dtype and shape, then every value with its\n"
    "shape, so equal bytes under another shape differ. File hashes change when shards are\n"
    "recompressed; content digests do not (`sedpack recompress` checks them and re-stamps\n"
    "the sidecar). `sedpack verify --content` compares the data with them. Runs in\n"
    "parallel under mpirun/srun. With --print nothing is written. --progress shows the\n"
    "shard bytes decoded so far (all ranks) on stderr, then a final line.\n"
    "Each shard's digest is journaled under .sedpack-hpc/jobs/ (bound to dataset_info.json):\n"
    "a stopped run (signal, kill, full disk) run again, on any number of ranks, keeps the\n"
    "digests of shards still of their recorded size and hashes and decodes only the rest;\n"
    "a journal of another dataset_info.json is refused (exit 2). --restart throws a\n"
    "stopped run away; --no-journal neither journals nor keeps one.\n\n"
    "--json: schema \"sedpack-hpc/digest/1\": {schema, dataset, content_id, written,\n"
    "shards: [{path, digest}]}.\n",
    "  sedpack digest ds\n"
    "      record the digests in ds/.sedpack-hpc/content.json\n"
    "  sedpack digest ds --print\n"
    "      print them, write nothing\n"
    "  mpirun -n 4 sedpack digest ds --json=digests.json\n"
    "      four ranks, and a JSON copy\n",
    MpiMode::kParallel,
};

int RunDigest(const std::vector<std::string>& args) {
  po::options_description options("Options");
  options.add_options()
      ("dataset", po::value<std::string>()->value_name("DATASET"), "dataset folder")
      ("print", po::bool_switch(), "print the digests instead of writing the sidecar")
      ("no-journal", po::bool_switch(), "do not journal the digests: a stopped run keeps nothing")
      ("restart", po::bool_switch(), "throw a stopped run's journaled digests away and start again");
  AddThreadsOption(&options);
  AddProgressOption(&options);
  AddQuietOption(&options);
  AddJsonOption(&options);
  po::positional_options_description positional;
  positional.add("dataset", 1);
  po::variables_map vm;
  if (auto code = ParseCommandLine(kDigestSpec, options, positional, args, &vm)) return *code;
  if (!vm.count("dataset")) return UsageError("digest", "missing DATASET");
  int threads = 0;
  if (Status st = ParseThreadsOption(vm, &threads); !st.ok()) return UsageError("digest", st.message());
  auto progress = ProgressOption(vm);
  if (!progress.ok()) return UsageError("digest", progress.status().message());
  const auto json = JsonOption(vm);
  const bool quiet = QuietOption(vm);
  const bool print = vm["print"].as<bool>();
  const std::string root = vm["dataset"].as<std::string>();
  auto opened = OpenDatasetArg(root);
  if (!opened.ok()) return ReportError(opened.status(), /*input_stage=*/true);
  if (!print && (*opened)->pack()) return UsageError("digest", "a packed dataset is read-only; use --print");
  auto started = StartComm();
  if (!started.ok()) return ReportError(started.status());
  CliComm& cc = **started;
  const auto start = std::chrono::steady_clock::now();
  ProgressPrinter printer(cc.is_root() && *progress);
  ShardPassOptions pass;
  pass.threads = threads;
  if (printer.enabled()) {
    pass.progress = [&printer](const ShardPassProgress& p) { printer.Update(ShardPassLine("digest", p), p.finished); };
  }
  DigestJobOptions job;
  job.journal = !vm["no-journal"].as<bool>();
  job.restart = vm["restart"].as<bool>();
  if (job.restart && !job.journal) return UsageError("digest", "--restart and --no-journal exclude each other");
  SetResumableJob(job.journal && !print, "the shards' digests computed");
  // Written digests are journaled (DigestDataset writes the sidecar); printed ones are not.
  Result<DigestJob> run = print ? Result<DigestJob>(DigestJob{}) : DigestDataset(cc.comm(), root, pass, job);
  Result<ContentDigests> d = print ? ComputeContentDigests(cc.comm(), root, pass)
                             : run.ok() ? Result<ContentDigests>(run->digests) : Result<ContentDigests>(run.status());
  printer.Finish();
  if (!d.ok()) return cc.ReportFailure(d.status(), /*input_stage=*/false);
  if (!cc.is_root()) return kExitOk;
  if (!print && !run->resumed_job.empty()) {
    std::cerr << "sedpack digest: resumed job " << run->resumed_job << ": " << run->shards_kept << " of "
              << d->shards.size() << " shards kept\n";
  }
  if (*progress) {
    std::cerr << "digest: " << d->shards.size() << " shards decoded in "
              << FormatDuration(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count())
              << " with " << cc.comm().size() << " rank" << (cc.comm().size() == 1 ? "" : "s") << "\n";
  }
  if (json) {
    nlohmann::json shards = nlohmann::json::array();
    for (const auto& [path, digest] : d->shards) shards.push_back({{"path", path}, {"digest", digest}});
    const nlohmann::json doc = {{"schema", JsonSchemaName("digest")}, {"dataset", root},
                                {"content_id", d->content_id},        {"written", !print},
                                {"shards", shards}};
    if (Status st = WriteJsonOutput(*json, doc.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n"); !st.ok()) return ReportError(st);
    if (*json == "-") return kExitOk;
  }
  if (print) {
    for (const auto& [path, digest] : d->shards) std::printf("%s  %s\n", digest.c_str(), path.c_str());
  }
  if (!quiet) std::printf("content id %s (%zu shards)\n", d->content_id.c_str(), d->shards.size());
  return kExitOk;
}

}  // namespace sedpack::cli
