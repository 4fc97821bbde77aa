// SPDX-License-Identifier: Apache-2.0
// `sedpack export-hdf5 DATASET -o OUT.h5 [--split S]...`: sedpack in, HDF5 out.
#include <cstdio>
#include <iostream>

#include "cli/cli_comm.h"
#include "cli/cli_common.h"
#include "sedpack/config.h"

#ifdef SEDPACK_HAVE_HDF5
#include "sedpack/hdf5/export.h"
#endif

namespace sedpack::cli {

const CommandSpec kExportHdf5Spec = {
    "export-hdf5", "DATASET -o OUT.h5 [--split S]... [options]",
    "write splits into one HDF5 file (for h5py, MATLAB, colleagues without sedpack)",
    "Write the examples of DATASET into the new HDF5 file OUT.h5: each split a group\n"
    "(/train, /test, /holdout), each attribute one dataset of shape (N, *shape) with\n"
    "its dtype (float16 as IEEE half, int as int64, str and bytes with shape () as\n"
    "variable-length strings), chunked along the rows and optionally compressed\n"
    "(--deflate LEVEL, with the shuffle filter). Examples keep the non-shuffled read\n"
    "order of `sedpack cat`. The root group carries the metadata as attributes\n"
    "(description, dataset_version, ..., custom_metadata as JSON text) and\n"
    "sedpack_dataset_info (the whole dataset_info.json); each split group carries\n"
    "shard_custom_metadata (a JSON list, one entry per shard), shard_first_row and\n"
    "shard_examples, so shard boundaries survive (any number of shards: the file is\n"
    "in the HDF5 1.8 format, read by HDF5 1.8 and later). Every shard is checked\n"
    "against its recorded hashes as it is read.\n\n"
    "`sedpack inspect-hdf5 OUT.h5 --mapping` suggests a mapping that `import-hdf5`\n"
    "turns back into the same examples (numeric attributes with shape at least (1,)).\n"
    "OUT.h5 is written under a temporary name and renamed when complete.\n\n"
    "Under mpirun/srun the shards are decoded in parallel, one per rank per round.\n"
    "Built against parallel HDF5 (`sedpack --version` says which), every rank writes\n"
    "the rows of its own shards into the one file, collectively through MPI-IO; the\n"
    "str and bytes columns, which HDF5 cannot write in parallel, are then gathered\n"
    "and written by rank 0. With serial HDF5 rank 0 gathers every shard and writes\n"
    "alone. The file holds the same values either way, for any number of ranks.\n\n"
    "The export keeps a journal beside the file (OUT.h5.sedpack-journal; the\n"
    "unfinished file is .OUT.h5.sedpack-partial): at most once a second (and at least\n"
    "~32 MiB apart) the file is flushed (every rank together under MPI-IO) and the\n"
    "shards written since are recorded with a checksum of their values; a stop\n"
    "(SIGTERM/SIGINT) records what was written. Stopped (a signal, a kill of any rank,\n"
    "a full disk), the same command run again, with any number of ranks, reopens the\n"
    "unfinished file, checks its datasets and the recorded rows, and writes only the\n"
    "rest (\"resumed job ...: k of n row ranges kept\"; a file it cannot reopen is\n"
    "started over). A journal of other parameters is refused, naming the difference;\n"
    "--restart throws it away; --no-journal writes without one. A journaled export of\n"
    "str or bytes attributes is written by rank 0 (--no-journal: collectively).\n",
    "  sedpack export-hdf5 ds -o ds.h5\n"
    "      every split into ds.h5\n"
    "  sedpack export-hdf5 ds -o train.h5 -s train --deflate 4\n"
    "      only the train split, gzip level 4\n"
    "  sedpack inspect-hdf5 ds.h5 --mapping > map.json && sedpack import-hdf5 -c map.json ds.h5 -o back\n"
    "      and back into a sedpack dataset\n",
    MpiMode::kParallel,
};

#ifndef SEDPACK_HAVE_HDF5

int RunExportHdf5(const std::vector<std::string>& args) {
  po::options_description options("Options");
  po::positional_options_description positional;
  po::variables_map vm;
  if (args.size() == 1 && args[0] == "--help") {
    if (auto code = ParseCommandLine(kExportHdf5Spec, options, positional, args, &vm)) return *code;
  }
  return ReportError(Status::NotImplemented("export-hdf5: this sedpack was built without HDF5 "
                                            "(install libhdf5-dev and rebuild)"));
}

#else

int RunExportHdf5(const std::vector<std::string>& args) {
  po::options_description options("Options");
  options.add_options()("dataset", po::value<std::string>()->value_name("DATASET"), "dataset folder");
  AddOutputOption(&options, "HDF5 file to create (required)", "OUT.h5");
  AddSplitOption(&options, "only this split; repeatable; default: all");
  options.add_options()
      ("deflate", po::value<std::string>()->value_name("LEVEL"), "gzip level 1-9 with shuffle (default: none)")
      ("chunk-rows", po::value<std::string>()->value_name("N"), "rows per chunk (default: about 1 MiB per chunk)")
      ("no-journal", po::bool_switch(), "keep no journal: a stopped export starts over")
      ("restart", po::bool_switch(), "throw away an earlier run's journal and unfinished file first");
  AddProgressOption(&options);
  AddQuietOption(&options);
  po::positional_options_description positional;
  positional.add("dataset", 1);
  po::variables_map vm;
  if (auto code = ParseCommandLine(kExportHdf5Spec, options, positional, args, &vm)) return *code;
  if (!vm.count("dataset")) return UsageError("export-hdf5", "missing DATASET");
  if (!vm.count("out")) return UsageError("export-hdf5", "missing -o OUT.h5");
  Hdf5ExportOptions o;
  auto splits = SplitsOption(vm);
  if (!splits.ok()) return UsageError("export-hdf5", splits.status().message());
  o.splits = *splits;
  if (vm.count("deflate")) {
    auto level = ParseUInt(vm["deflate"].as<std::string>(), "--deflate");
    if (!level.ok() || *level < 1 || *level > 9) return UsageError("export-hdf5", "option --deflate: a level 1 to 9");
    o.deflate_level = static_cast<int>(*level);
  }
  if (vm.count("chunk-rows")) {
    auto rows = ParseUInt(vm["chunk-rows"].as<std::string>(), "--chunk-rows");
    if (!rows.ok() || *rows < 1) return UsageError("export-hdf5", "option --chunk-rows: a positive integer");
    o.chunk_rows = *rows;
  }
  auto progress = ProgressOption(vm);
  if (!progress.ok()) return UsageError("export-hdf5", progress.status().message());
  o.journal = !vm["no-journal"].as<bool>();
  o.restart = vm["restart"].as<bool>();
  if (!o.journal && o.restart) return UsageError("export-hdf5", "--restart and --no-journal exclude each other");
  SetResumableJob(o.journal, "the exported row ranges");
  const std::string root = vm["dataset"].as<std::string>();
  const std::string out = vm["out"].as<std::string>();
  auto opened = OpenDatasetArg(root);
  if (!opened.ok()) return ReportError(opened.status(), /*input_stage=*/true);
  if (Status st = RequireSplits(**opened, o.splits); !st.ok()) return UsageError("export-hdf5", st.message());
  auto started = StartComm();
  if (!started.ok()) return ReportError(started.status());
  CliComm& cc = **started;
  ProgressPrinter printer(cc.is_root() && *progress);
  if (printer.enabled()) {
    o.progress = [&](const Hdf5ExportProgress& p) {
      char buf[200];
      std::snprintf(buf, sizeof(buf), "export-hdf5: %llu/%llu examples, %s written in %s", 
                    static_cast<unsigned long long>(p.examples_done),
                    static_cast<unsigned long long>(p.examples_total),
                    FormatBytes(static_cast<double>(p.bytes_done)).c_str(), FormatDuration(p.seconds).c_str());
      printer.Update(buf, p.finished);
    };
  }
  auto s = ExportHdf5(cc.comm(), *opened, out, o);
  printer.Finish();
  // A journal of another export is a usage error (exit 2), as a bad option.
  if (!s.ok()) return cc.ReportFailure(s.status(), /*input_stage=*/s.status().code() == StatusCode::kInvalidArgument);
  if (cc.is_root() && !s->journal_note.empty() && !QuietOption(vm)) std::cerr << "sedpack export-hdf5: " << s->journal_note << "\n";
  if (cc.is_root() && s->resumed) {
    std::cerr << "sedpack export-hdf5: resumed job " << s->job_id << ": " << s->kept_units << " of " << s->units
              << " row ranges kept\n";
  }
  if (cc.is_root() && !QuietOption(vm)) {
    std::printf("exported %llu examples of %zu split%s (%s of values) from %s into %s with %d rank%s in %s\n",
                static_cast<unsigned long long>(s->examples), s->splits, s->splits == 1 ? "" : "s",
                FormatBytes(static_cast<double>(s->bytes)).c_str(), root.c_str(), out.c_str(), cc.comm().size(),
                cc.comm().size() == 1 ? "" : "s", FormatDuration(s->seconds).c_str());
  }
  return kExitOk;
}

#endif  // SEDPACK_HAVE_HDF5

}  // namespace sedpack::cli
