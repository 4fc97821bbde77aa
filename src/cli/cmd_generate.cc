// SPDX-License-Identifier: Apache-2.0
// `sedpack generate CONFIG OUT`: the synthetic TinyAES-like trace dataset.
#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <optional>
#include <sstream>
#include <thread>

#include "cli/cli_comm.h"
#include "cli/cli_common.h"
#include "parallel/worker_pool.h"
#include "sedpack/dataset/dataset.h"
#include "sedpack/mpi/distributed_write.h"
#include "sedpack/generate/generate.h"
#include "sedpack/generate/parallel.h"

namespace sedpack::cli {

const CommandSpec kGenerateSpec = {
    "generate", "CONFIG [OUT | -o OUT] [options]",
    "make a synthetic AES side-channel trace dataset (TinyAES-like)",
    "Generate a synthetic side-channel trace dataset of AES-128 in the shape of the\n"
    "SCAAML TinyAES dataset (trace1 float16, key/plaintext/ciphertext uint8[16]) into\n"
    "the new folder OUT, or with --append adds examples to the existing dataset OUT.\n\n"
    "CONFIG is JSON: `metadata` and `dataset_structure` exactly as in dataset_info.json,\n"
    "plus a `generate` object (seed, examples {train, test, holdout}, trace_length,\n"
    "key_group_size, shard_by_key, threads, noise_std, leak_scale, output, progress);\n"
    "see configs/generate_tinyaes.json. Unknown keys are errors. Every option below can\n"
    "be given in CONFIG; the command line wins. OUT defaults to generate.output.\n"
    "\n"
    "The content depends only on the seed and each example's split and index, never on\n"
    "the number of threads. Traces leak HW(pt^key), HW(Sbox(pt^key)) and HW(ct) per byte\n"
    "at fixed samples, under Gaussian-like noise and per-trace jitter.\n"
    "Progress goes to stderr when it is a terminal (or with --progress); a summary to\n"
    "stdout at the end.\n"
    "\n"
    "Crash safety: shards are written first and the metadata last, as one journaled\n"
    "commit, so readers never see a job that did not finish. Every rank journals the\n"
    "shards it finished (.sedpack-hpc/jobs/): a job that is stopped (SIGINT, SIGTERM:\n"
    "exit 130/143; SIGKILL, a lost rank, a full disk) keeps them, and the same command\n"
    "run again checks them and writes only the rest (\"resumed job ID: k of n shards\n"
    "kept\"); a rerun with other parameters is refused (exit 2) naming the first;\n"
    "--restart throws the kept work away. With --no-journal a stopped job removes\n"
    "what it wrote instead: a new OUT is removed, an existing dataset stays at its\n"
    "last commit; after a SIGKILL `sedpack fix OUT --gc --apply` removes its shards.\n"
    "\n"
    "Concurrent appends: any number of `generate --append` jobs (each with any number\n"
    "of ranks, on any hosts) may write into one dataset at the same time; each commits\n"
    "under the dataset's lock (.sedpack-hpc/commit.lock) into the metadata as it is\n"
    "then, so every job that reports success is in the dataset. Give each job its own\n"
    "--seed: jobs started together continue from the same count. A lock left by a\n"
    "killed job is broken (same host: its process is gone; other host: no heartbeat\n"
    "for --lock-stale seconds).\n"
    "Jobs: two appends are the same job when they have the same --job-id; without\n"
    "one, under SLURM the same job and array task ids and parameters; elsewhere the\n"
    "same parameters (seed, counts). A job runs once: the same append again, one\n"
    "after another or at the same time, prints \"nothing appended: ...\" and exits 0.\n"
    "With --append the dataset keeps its structure: --trace-length and the structure\n"
    "options are refused; without --seed the config's seed is used (a note says so).\n",
    "  sedpack generate configs/generate_small.json -o small\n"
    "      a small dataset in small/\n"
    "  mpirun -n 4 sedpack generate configs/generate_tinyaes.json -o big -j 2 --progress\n"
    "      four ranks, two threads each\n"
    "  sedpack generate configs/generate_small.json -o small --append --seed 7 --examples-train 100\n"
    "      add 100 train examples to it\n"
    "  sedpack generate configs/generate_small.json -o small --append --job-id capture-2 --examples-train 100\n"
    "      100 more with the same seed, as another job\n",
    MpiMode::kParallel,
};

namespace {

std::uint64_t DiskUsage(const std::string& root) {
  std::uint64_t total = 0;
  // What cannot be listed or measured is left out of the figure.
  (void)WalkTree(root, [&](const TreeEntry& e, bool*) {
    if (e.type != FileType::kDirectory) total += FileSize(JoinRoot(root, e.relative)).ValueOr(0);
    return Status::OK();
  });
  return total;
}

// Apply one command-line override; `apply` parses the text and sets the field.
template <typename Fn>
Status Override(const po::variables_map& vm, const char* name, Fn apply) {
  if (!vm.count(name)) return Status::OK();
  return apply(vm[name].as<std::string>(), std::string("--") + name);
}

Status ApplyOverrides(const po::variables_map& vm, GenerateConfig* c) {
  GenerateParams& p = c->params;
  auto set_uint = [](std::uint64_t* field) {
    return [field](const std::string& text, const std::string& opt) -> Status {
      SEDPACK_ASSIGN_OR_RETURN(*field, ParseUInt(text, opt));
      return Status::OK();
    };
  };
  auto set_double = [](double* field) {
    return [field](const std::string& text, const std::string& opt) -> Status {
      SEDPACK_ASSIGN_OR_RETURN(*field, ParseDouble(text, opt));
      return Status::OK();
    };
  };
  auto set_bool = [](bool* field) {
    return [field](const std::string& text, const std::string& opt) -> Status {
      SEDPACK_ASSIGN_OR_RETURN(*field, ParseBool(text, opt));
      return Status::OK();
    };
  };
  SEDPACK_RETURN_NOT_OK(Override(vm, "seed", set_uint(&p.seed)));
  SEDPACK_RETURN_NOT_OK(Override(vm, "examples-train", set_uint(&p.examples[0])));
  SEDPACK_RETURN_NOT_OK(Override(vm, "examples-test", set_uint(&p.examples[1])));
  SEDPACK_RETURN_NOT_OK(Override(vm, "examples-holdout", set_uint(&p.examples[2])));
  SEDPACK_RETURN_NOT_OK(Override(vm, "key-group-size", set_uint(&p.key_group_size)));
  SEDPACK_RETURN_NOT_OK(Override(vm, "shard-by-key", set_bool(&p.shard_by_key)));
  SEDPACK_RETURN_NOT_OK(Override(vm, "progress", set_bool(&p.progress)));
  SEDPACK_RETURN_NOT_OK(Override(vm, "append", set_bool(&p.append)));
  SEDPACK_RETURN_NOT_OK(Override(vm, "noise-std", set_double(&p.noise_std)));
  SEDPACK_RETURN_NOT_OK(Override(vm, "leak-scale", set_double(&p.leak_scale)));
  SEDPACK_RETURN_NOT_OK(Override(vm, "threads", [&](const std::string& t, const std::string& o) {
    SEDPACK_ASSIGN_OR_RETURN(std::uint64_t n, ParseUInt(t, o));
    if (n > 4096) return Status::InvalidArgument("option ", o, ": at most 4096");
    p.threads = static_cast<int>(n);
    return Status::OK();
  }));
  SEDPACK_RETURN_NOT_OK(ParseLevelOption(vm, &p.level));
  SEDPACK_RETURN_NOT_OK(Override(vm, "trace-length", [&](const std::string& t, const std::string& o) {
    SEDPACK_ASSIGN_OR_RETURN(std::uint64_t n, ParseUInt(t, o));
    return SetTraceLength(c, static_cast<std::int64_t>(std::min<std::uint64_t>(n, INT64_MAX)))
        .WithPrefix("option " + o + ": ");
  }));
  SEDPACK_RETURN_NOT_OK(ApplyStructureOverrides(vm, &c->structure));
  return Status::OK();
}

std::string ProgressLine(const GenerateProgress& p) {
  char buf[200];
  const double pct = p.examples_total ? 100.0 * p.examples_done / p.examples_total : 100.0;
  const double rate = p.seconds > 0 ? p.examples_done / p.seconds : 0;
  const double eta = rate > 0 ? (p.examples_total - p.examples_done) / rate : -1;
  std::snprintf(buf, sizeof(buf), "generate: %llu/%llu examples (%.1f%%), %s, %s/s, %.0f ex/s, ETA %s",
                static_cast<unsigned long long>(p.examples_done),
                static_cast<unsigned long long>(p.examples_total), pct,
                FormatBytes(static_cast<double>(p.bytes_done)).c_str(),
                FormatBytes(p.seconds > 0 ? p.bytes_done / p.seconds : 0).c_str(), rate,
                eta < 0 ? "?" : FormatDuration(eta).c_str());
  return buf;
}

// One rank of `mpirun -n N sedpack generate` (or any `generate --append`); see
// GenerateOverComm. Progress and the summary are printed once, by rank 0; a
// rank's own failure by that rank, another rank's only by rank 0.
int RunGenerateParallel(CliComm& cc, const GenerateConfig& config, const std::string& out,
                        const CommitLockOptions& lock, bool quiet, const JournalChoice& journal,
                        const std::string& job_name) {
  const int rank = cc.comm().rank();
  ProgressPrinter printer(rank == 0 && config.params.progress);  // resolved by RunGenerate
  ParallelGenerateOptions options;
  options.commit_lock = lock;
  options.resumable = journal.resumable;
  options.restart = journal.restart;
  if (printer.enabled()) {
    options.progress = [&](const GenerateProgress& p) {
      printer.Update(ProgressLine(p), p.finished);
      if (p.finished) printer.Finish();
    };
  }
  options.job_name = job_name;
  auto job = GenerateOverComm(cc.comm(), config, out, options);
  printer.Finish();
  if (!job.ok() && job.status().detail() == StatusDetail::kJobCommitted) {
    // The same job ran to its commit before (or at the same time): the
    // dataset holds its examples once, as after one run.
    if (rank == 0) {
      std::cerr << "nothing appended: " << job.status().message()
                << " (an earlier run of the same job: same --job-id, SLURM task, or parameters); to add new "
                   "examples give another --seed N or --job-id NAME\n";
    }
    return kExitOk;
  }
  if (!job.ok()) {
    if (IsInterrupted(job.status())) return ReportInterrupted();  // once, by rank 0
    if (!DistributedWriter::IsAbort(job.status())) {
      std::cerr << cc.RankPrefix() << "sedpack: " << job.status().ToString() << "\n";
    } else if (rank == 0) {
      std::cerr << "sedpack: " << job.status().ToString() << "\n";
    }
    return ExitCodeFor(job.status(), /*input_stage=*/true);  // e.g. --append to a folder that is no dataset
  }
  if (rank == 0 && job->journal_shards > 0) {
    std::cerr << "sedpack generate: resumed job " << job->job_id << ": " << job->kept_shards << " of "
              << job->journal_shards << " shards kept\n";
  }
  if (rank == 0 && !quiet) {
    const ParallelGenerateSummary& s = *job;
    std::printf("generated %llu examples %s %s with %d rank%s (job %s)\n",
                static_cast<unsigned long long>(s.examples_total), s.appended ? "appended to" : "into", out.c_str(),
                s.ranks, s.ranks == 1 ? "" : "s", s.job_id.c_str());
    std::printf("  %s of values (%s on disk) in %s: %s/s\n", FormatBytes(static_cast<double>(s.bytes)).c_str(),
                FormatBytes(static_cast<double>(DiskUsage(out))).c_str(), FormatDuration(s.seconds).c_str(),
                FormatBytes(static_cast<double>(s.bytes) / std::max(s.seconds, 1e-9)).c_str());
    for (std::size_t i = 0; i < s.root_checksums.size() && i < s.checksum_algorithms.size(); ++i) {
      std::printf("  dataset_info.json %s %s\n", std::string(HashAlgorithmName(s.checksum_algorithms[i])).c_str(),
                  s.root_checksums[i].c_str());
    }
    std::fflush(stdout);
  }
  return kExitOk;
}

// The options of `sedpack generate`, each overriding a field of the config.
po::options_description GenerateOptionsDescription() {
  po::options_description options("Options (each overrides the config)");
  options.add_options()
      ("config", po::value<std::string>()->value_name("CONFIG"), "generate config (JSON)")
      ("out-arg", po::value<std::string>()->value_name("OUT"), "dataset folder (the second argument)")
      ("out,o", po::value<std::string>()->value_name("OUT"), "dataset folder to create (generate.output)")
      ("seed", po::value<std::string>()->value_name("N"), "seed, 0..2^64-1 (generate.seed)")
      ("examples-train", po::value<std::string>()->value_name("N"), "train examples (generate.examples.train)")
      ("examples-test", po::value<std::string>()->value_name("N"), "test examples (generate.examples.test)")
      ("examples-holdout", po::value<std::string>()->value_name("N"), "holdout examples (generate.examples.holdout)")
      ("trace-length", po::value<std::string>()->value_name("N"), "samples per trace (generate.trace_length)")
      ("key-group-size", po::value<std::string>()->value_name("N"),
       "consecutive examples sharing a key (generate.key_group_size)")
      ("shard-by-key", po::value<std::string>()->value_name("BOOL")->implicit_value("true"),
       "shard custom_metadata {\"key_index\": g} (generate.shard_by_key)")
      ("threads,j", po::value<std::string>()->value_name("N"), "threads, 0 = all cores (generate.threads)")
      ("level", po::value<std::string>()->value_name("N"), LevelOptionHelp("generate.level").c_str())
      ("quiet,q", po::bool_switch(), "no summary on standard output, only errors")
      ("noise-std", po::value<std::string>()->value_name("X"), "noise standard deviation (generate.noise_std)")
      ("leak-scale", po::value<std::string>()->value_name("X"), "leakage per Hamming-weight unit (generate.leak_scale)")
      ("progress", po::value<std::string>()->value_name("BOOL")->implicit_value("true"),
       "progress on stderr even when it is not a terminal (generate.progress); --progress=false or -q: none")
      ("append", po::value<std::string>()->value_name("BOOL")->implicit_value("true"),
       "add the examples to the existing dataset OUT (its structure is kept; each split's indices "
       "continue from its current count) (generate.append)")
      ("lock-wait", po::value<std::string>()->value_name("SECONDS"),
       "give up waiting for the dataset's commit lock after this long (default 600)")
      ("job-id", po::value<std::string>()->value_name("NAME"),
       "name this job: runs with the same NAME are one job (a rerun resumes it, a run after its commit appends "
       "nothing); default: the SLURM job and array task ids with the parameters, else the parameters")
      ("lock-stale", po::value<std::string>()->value_name("SECONDS"),
       "a lock holder on another host whose heartbeat stopped this long ago is dead (default 60)");
  AddJournalOptions(&options);
  AddStructureOptions(&options);
  return options;
}

// An append keeps the dataset's own structure: the options that would change
// it are usage errors. An exit code, or nullopt to go on.
std::optional<int> CheckAppendOptions(const po::variables_map& vm, const GenerateConfig& config) {
  // An append keeps the dataset's own structure; a structure option would be ignored.
  for (const char* opt : {"compression", "examples-per-shard", "shard-file-type", "hash-algorithms"}) {
    if (vm.count(opt)) {
      return UsageError("generate", std::string("--") + opt +
                                        " cannot be used with --append (the dataset keeps its own structure)");
    }
  }
  if (!vm.count("seed")) {
    std::cerr << "sedpack generate: note: --append without --seed uses the config's seed "
              << config.params.seed << "; give concurrent appends each their own --seed\n";
  }
  return std::nullopt;
}

// The dataset an append adds to must exist and have traces of the length
// asked for, if one is. An exit code, or nullopt to go on.
std::optional<int> CheckAppendTarget(const po::variables_map& vm, const GenerateConfig& config,
                                     const std::string& out) {
  // The dataset to append to is the user's input: a missing one is a usage
  // error (2), a garbled dataset_info.json a dataset problem (1).
  if (auto opened = OpenDatasetArg(out); !opened.ok()) return ReportError(opened.status(), /*input_stage=*/true);
  if (vm.count("trace-length")) {
    // The append writes traces of the dataset's own length; another one would be ignored.
    auto existing = Dataset::Open(out);
    std::int64_t have = -1;
    if (existing.ok()) {
      for (const Attribute& a : (*existing)->info().dataset_structure.saved_data_description) {
        if (a.name == "trace1" && a.shape.size() == 1) have = a.shape[0];
      }
    }
    const std::int64_t want = TraceLength(config).ValueOr(-2);
    if (have != want) {
      return UsageError("generate", "--trace-length " + std::to_string(want) + " cannot be used with --append: " +
                                        (have < 0 ? std::string("the dataset's trace length is unknown")
                                                  : "the dataset's traces have " + std::to_string(have) + " samples") +
                                        " (the dataset keeps its own structure)");
    }
  }
  return std::nullopt;
}

// --lock-wait / --lock-stale. An exit code, or nullopt to go on.
std::optional<int> ParseLockOptions(const po::variables_map& vm, CommitLockOptions* lock) {
  for (auto [name, field] : {std::pair{"lock-wait", &lock->wait_timeout}, std::pair{"lock-stale", &lock->stale_timeout}}) {
    if (!vm.count(name)) continue;
    auto seconds = ParseUInt(vm[name].as<std::string>(), std::string("--") + name);
    if (!seconds.ok()) return UsageError("generate", seconds.status().message());
    *field = std::chrono::seconds(std::min<std::uint64_t>(*seconds, 1ULL << 31));
  }
  return std::nullopt;
}

// The summary of a one-rank run on standard output.
void PrintGenerateSummary(const GenerateConfig& config, const std::string& out, const GenerateSummary& s) {
  const std::int64_t trace_length = TraceLength(config).ValueOr(0);
  std::string trace_dtype = "?";
  for (const Attribute& a : config.structure.saved_data_description) {
    if (a.name == "trace1") trace_dtype = a.dtype;
  }
  std::printf("generated %llu examples (train %llu, test %llu, holdout %llu) into %s\n",
              static_cast<unsigned long long>(s.examples_total),
              static_cast<unsigned long long>(s.examples[0]),
              static_cast<unsigned long long>(s.examples[1]),
              static_cast<unsigned long long>(s.examples[2]), out.c_str());
  std::printf("  %s of values (%s on disk) in %s: %.1f examples/s, %s/s\n",
              FormatBytes(static_cast<double>(s.bytes)).c_str(),
              FormatBytes(static_cast<double>(DiskUsage(out))).c_str(),
              FormatDuration(s.seconds).c_str(), s.examples_per_second(),
              FormatBytes(s.bytes / std::max(s.seconds, 1e-9)).c_str());
  std::printf("  seed %llu, trace1 %s (%lld,), key group %llu%s, %s %s, %lld examples/shard, "
              "%d generate + %d write threads\n",
              static_cast<unsigned long long>(config.params.seed), trace_dtype.c_str(),
              static_cast<long long>(trace_length),
              static_cast<unsigned long long>(config.params.key_group_size),
              config.params.shard_by_key ? " (sharded by key)" : "",
              std::string(ShardFileTypeName(config.structure.shard_file_type)).c_str(),
              config.structure.compression == Compression::kNone
                  ? "uncompressed"
                  : std::string(CompressionName(config.structure.compression)).c_str(),
              static_cast<long long>(config.structure.examples_per_shard), s.generate_threads,
              s.write_threads);
  for (std::size_t i = 0;
       i < s.root_checksums.size() && i < config.structure.hash_checksum_algorithms.size(); ++i) {
    std::printf("  dataset_info.json %s %s\n",
                std::string(HashAlgorithmName(config.structure.hash_checksum_algorithms[i])).c_str(),
                s.root_checksums[i].c_str());
  }
  std::fflush(stdout);
}

}  // namespace

int RunGenerate(const std::vector<std::string>& args) {
  po::options_description options = GenerateOptionsDescription();
  po::positional_options_description positional;
  positional.add("config", 1).add("out-arg", 1);
  po::variables_map vm;
  if (auto code = ParseCommandLine(kGenerateSpec, options, positional, args, &vm)) return *code;
  if (!vm.count("config")) return UsageError("generate", "missing CONFIG argument");

  auto loaded = LoadGenerateConfig(vm["config"].as<std::string>());
  if (!loaded.ok()) return ReportError(loaded.status(), /*input_stage=*/true);
  GenerateConfig config = std::move(loaded).value();
  if (Status st = ApplyOverrides(vm, &config); !st.ok()) return UsageError("generate", st.message());
  if (config.params.append) {
    if (auto code = CheckAppendOptions(vm, config)) return *code;
  }
  if (Status st = ValidateGenerateConfig(config); !st.ok()) {
    return ReportError(st.WithPrefix(vm["config"].as<std::string>() + ": "), /*input_stage=*/true);
  }
  if (vm.count("out") && vm.count("out-arg")) return UsageError("generate", "give OUT or -o OUT, not both");
  if (vm.count("out")) config.params.output = vm["out"].as<std::string>();
  if (vm.count("out-arg")) config.params.output = vm["out-arg"].as<std::string>();
  const std::string out = config.params.output;
  if (out.empty()) {
    return UsageError("generate", "missing OUT argument (or generate.output in the config)");
  }
  if (config.params.append) {
    if (auto code = CheckAppendTarget(vm, config, out)) return *code;
  }
  CommitLockOptions lock;
  if (auto code = ParseLockOptions(vm, &lock)) return *code;
  auto journal = JournalOptions(vm);
  if (!journal.ok()) return UsageError("generate", journal.status().message());
  // --progress/--no-progress, else none with -q, else the config's progress or a terminal.
  auto progress = ProgressOption(vm, config.params.progress);
  if (!progress.ok()) return UsageError("generate", progress.status().message());
  config.params.progress = *progress;
  const std::string job_name = vm.count("job-id") ? vm["job-id"].as<std::string>() : std::string();
  if (vm.count("job-id") && (job_name.empty() || job_name.size() > 200 ||
                             job_name.find_first_of("\n\r") != std::string::npos)) {
    return UsageError("generate", "--job-id must be 1 to 200 characters on one line");
  }
  if (!job_name.empty() && !journal->resumable) {
    return UsageError("generate", "--job-id names a journaled job; it cannot be used with --no-journal");
  }
  auto started = StartComm();
  if (!started.ok()) return ReportError(started.status());
  CliComm& cc = **started;
  // A journaled job (the default) goes the way of N ranks, whose writer keeps
  // the journal; only --no-journal on one rank takes the all-or-nothing path.
  if (cc.comm().size() > 1 || config.params.append || journal->resumable) {
    return RunGenerateParallel(cc, config, out, lock, QuietOption(vm), *journal, job_name);
  }
  if (Status st = PrepareGenerateOutput(out); !st.ok()) return ReportError(st);

  ProgressPrinter printer(config.params.progress);
  GenerateOptions gen;
  if (printer.enabled()) {
    gen.progress = [&](const GenerateProgress& p) {
      printer.Update(ProgressLine(p), p.finished);
    };
  }
  auto summary = GenerateDataset(config, out, gen);
  printer.Finish();
  if (!summary.ok()) return ReportError(summary.status());

  if (QuietOption(vm)) return kExitOk;
  PrintGenerateSummary(config, out, *summary);
  return kExitOk;
}

}  // namespace sedpack::cli
