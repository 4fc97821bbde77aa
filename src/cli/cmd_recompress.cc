// SPDX-License-Identifier: Apache-2.0
// `sedpack recompress DATASET --profile P | --compression X [--out DIR]`.
#include <cstdio>
#include <iostream>

#include "cli/cli_comm.h"
#include "cli/cli_common.h"
#include "sedpack/maintain/recompress.h"

namespace sedpack::cli {

const CommandSpec kRecompressSpec = {
    "recompress", "DATASET (--profile P | --compression NAME) [-o DIR] [options]",
    "rewrite every shard with another compression (codec profiles), in parallel",
    "Rewrite every shard of DATASET with another compression and re-stamp every hash\n"
    "of the tree (shards, shards_list.json files, dataset_info.json). Runs serially or\n"
    "under mpirun/srun (shards are spread over the ranks by bytes).\n\n"
    "Profiles (--profile):\n"
    "  hot          LZ4: fastest to read, for the training path (npz/tfrec: uncompressed)\n"
    "  hot-archive  LZ4HC level 9: read as fast as hot, smaller, slow to write\n"
    "  general      ZSTD level 3: good ratio at high speed (npz: ZIP, tfrec: GZIP)\n"
    "  archive      LZMA (.xz) preset 6: smallest, slow to write (npz: ZIP, tfrec: GZIP)\n"
    "  portable     GZIP at its default level (ISA-L 1 where built with it): read by\n"
    "               every sedpack reader, also the Rust one (npz: ZIP)\n"
    "--level overrides the profile's level (or the codec's default with --compression).\n\n"
    "Every shard's recorded hashes are checked before it is rewritten: corrupt data is\n"
    "refused, never re-stamped. Content is unchanged (shards are decoded and\n"
    "re-encoded); only file bytes and hashes change.\n\n"
    "In place (the default) the new tree is built in DATASET's sibling folder\n"
    ".<name>.recompress and then swapped with DATASET by one atomic rename, so DATASET\n"
    "always holds either the whole old or the whole new dataset, whenever the job\n"
    "stops; it needs free space for one copy. An interrupted run's folder is removed\n"
    "by the next run. Do not run two recompress jobs on one dataset at once.\n"
    "With -o/--out DIR the recompressed copy goes to DIR and DATASET is not changed.\n"
    "Each shard rewritten is journaled (written, fsynced, hashed) under the new tree's\n"
    ".sedpack-hpc/jobs/, and a stopped run (signal, kill, full disk) keeps its new tree:\n"
    "the same command run again keeps the shards journaled (checked by size and hash)\n"
    "and rewrites only the rest; other options are refused naming the difference.\n"
    "--restart throws a stopped run away; --no-journal neither journals nor keeps one.\n"
    "Codec names are case-insensitive; none means uncompressed; a codec the dataset's\n"
    "shard type cannot use is refused with the list of those it can.\n",
    "  sedpack recompress ds --profile hot\n"
    "      LZ4 in place, for fast training reads\n"
    "  sedpack recompress ds --compression zstd -o ds-zstd\n"
    "      a ZSTD copy beside it\n"
    "  srun -n 16 sedpack recompress ds --profile archive --progress\n"
    "      sixteen ranks\n",
    MpiMode::kParallel,
};

int RunRecompress(const std::vector<std::string>& args) {
  po::options_description options("Options");
  options.add_options()
      ("dataset", po::value<std::string>()->value_name("DATASET"), "dataset folder")
      ("profile", po::value<std::string>()->value_name("P"), "hot, hot-archive, general, archive or portable")
      ("compression", po::value<std::string>()->value_name("NAME"),
       "instead of a profile, any case: none, GZIP, ZLIB, BZ2, LZMA, LZ4, ZSTD (fb); none, ZIP (npz); none, GZIP, ZLIB (tfrec)")
      ("level", po::value<std::string>()->value_name("N"), LevelOptionHelp("").c_str())
      ("no-journal", po::bool_switch(), "do not journal shards: a stopped run keeps nothing")
      ("restart", po::bool_switch(), "throw a stopped run's new tree away and start again")
      ("codec-threads", po::value<std::string>()->value_name("N"),
       "ZSTD only: workers compressing each shard of 8 MiB or more (default 1; the -j threads already "
       "work on different shards)");
  AddOutputOption(&options, "write a recompressed copy to DIR instead", "DIR");
  AddThreadsOption(&options);
  AddProgressOption(&options);
  AddQuietOption(&options);
  po::positional_options_description positional;
  positional.add("dataset", 1);
  po::variables_map vm;
  if (auto code = ParseCommandLine(kRecompressSpec, options, positional, args, &vm)) return *code;
  if (!vm.count("dataset")) return UsageError("recompress", "missing DATASET");
  if (vm.count("profile") == vm.count("compression")) {
    return UsageError("recompress", "give exactly one of --profile and --compression");
  }
  const std::string root = vm["dataset"].as<std::string>();
  auto opened = OpenDatasetArg(root);
  if (!opened.ok()) return ReportError(opened.status(), /*input_stage=*/true);
  const ShardFileType type = (*opened)->info().dataset_structure.shard_file_type;
  RecompressOptions o;
  if (vm.count("profile")) {
    auto p = FindCodecProfile(vm["profile"].as<std::string>());
    if (!p.ok()) return UsageError("recompress", p.status().message());
    o.compression = p->For(type);
    o.codec.level = p->LevelFor(type);
  } else {
    auto c = ParseCodecArg(vm["compression"].as<std::string>(), type);
    if (!c.ok()) return UsageError("recompress", c.status().message());
    o.compression = *c;
  }
  if (vm.count("out")) o.out = vm["out"].as<std::string>();
  o.journal = !vm["no-journal"].as<bool>();
  o.restart = vm["restart"].as<bool>();
  if (o.restart && !o.journal) return UsageError("recompress", "--restart and --no-journal exclude each other");
  if (Status st = ParseThreadsOption(vm, &o.threads); !st.ok()) return UsageError("recompress", st.message());
  if (Status st = ParseLevelOption(vm, &o.codec.level); !st.ok()) return UsageError("recompress", st.message());
  if (Status st = ValidateCodecLevel(o.compression, o.codec.level); !st.ok()) {
    return UsageError("recompress", st.message());
  }
  if (vm.count("codec-threads")) {
    auto n = ParseUInt(vm["codec-threads"].as<std::string>(), "--codec-threads");
    if (!n.ok()) return UsageError("recompress", n.status().message());
    if (*n < 1 || *n > 256) return UsageError("recompress", "option --codec-threads: 1 to 256");
    o.codec.threads = static_cast<int>(*n);
  }
  auto parsed_progress = ProgressOption(vm);
  if (!parsed_progress.ok()) return UsageError("recompress", parsed_progress.status().message());
  const bool progress = *parsed_progress;
  SetResumableJob(o.journal);
  auto started = StartComm();
  if (!started.ok()) return ReportError(started.status());
  CliComm& cc = **started;
  ProgressPrinter printer(cc.is_root() && progress);
  if (printer.enabled()) {
    o.progress = [&](const RecompressProgress& p) {
      char buf[200];
      std::snprintf(buf, sizeof(buf), "recompress: %s of %s (%.1f%%), %s/s", FormatBytes(p.bytes_done).c_str(),
                    FormatBytes(p.bytes_total).c_str(), p.bytes_total ? 100.0 * p.bytes_done / p.bytes_total : 100.0,
                    FormatBytes(p.seconds > 0 ? p.bytes_done / p.seconds : 0).c_str());
      printer.Update(buf, p.finished);
    };
  }
  auto s = Recompress(cc.comm(), root, o);
  printer.Finish();
  if (!s.ok()) return cc.ReportFailure(s.status(), /*input_stage=*/false);
  if (cc.is_root() && !s->resumed_job.empty()) {
    std::cerr << "sedpack recompress: resumed job " << s->resumed_job << ": " << s->shards_kept << " of " << s->files
              << " shards kept\n";
  }
  if (cc.is_root() && !QuietOption(vm)) {
    const std::string name = o.compression == Compression::kNone ? "uncompressed" : std::string(CompressionName(o.compression));
    std::printf("recompressed %llu shards of %s to %s%s with %d rank%s in %s: %s -> %s (%.1f%%)\n",
                static_cast<unsigned long long>(s->files), root.c_str(), name.c_str(),
                o.out.empty() ? "" : (" into " + o.out).c_str(), cc.comm().size(), cc.comm().size() == 1 ? "" : "s",
                FormatDuration(s->seconds).c_str(), FormatBytes(static_cast<double>(s->bytes_before)).c_str(),
                FormatBytes(static_cast<double>(s->bytes_after)).c_str(),
                s->bytes_before ? 100.0 * s->bytes_after / s->bytes_before : 100.0);
    if (s->orphans_dropped) {
      std::printf("  %llu unlisted file(s) under the splits were not carried over\n",
                  static_cast<unsigned long long>(s->orphans_dropped));
    }
    // The shards' hashes changed, so did the root checksums: print the new
    // ones, as generate does (for `sedpack verify --expect`).
    auto result = OpenDatasetArg(o.out.empty() ? root : o.out);
    if (!result.ok()) return ReportDataError(result.status());
    auto checksums = (*result)->MetadataChecksums();
    if (!checksums.ok()) return ReportDataError(checksums.status());
    const auto& algos = (*result)->info().dataset_structure.hash_checksum_algorithms;
    for (std::size_t i = 0; i < checksums->size() && i < algos.size(); ++i) {
      std::printf("  dataset_info.json %s %s\n", std::string(HashAlgorithmName(algos[i])).c_str(),
                  (*checksums)[i].c_str());
    }
  }
  return kExitOk;
}

}  // namespace sedpack::cli
