// SPDX-License-Identifier: Apache-2.0
// `sedpack import-hdf5` and `sedpack inspect-hdf5`: HDF5 captures in, sedpack out.
#include <cstdio>
#include <iostream>

#include "cli/cli_comm.h"
#include "cli/cli_common.h"
#include "sedpack/config.h"

#ifdef SEDPACK_HAVE_HDF5
#include "sedpack/codecs/hash.h"
#include "sedpack/hdf5/import.h"
#include "sedpack/io/file.h"
#include "sedpack/hdf5/inspect.h"
#endif

namespace sedpack::cli {

const CommandSpec kImportHdf5Spec = {
    "import-hdf5", "-c MAPPING INPUT.h5 [INPUT2.h5 ...] (OUT | -o OUT) [options]",
    "convert HDF5 captures (ASCAD, lascar, ...) into a new dataset, in parallel",
    "Convert HDF5 side-channel captures into the new sedpack dataset OUT, serially or\n"
    "under mpirun/srun (every rank reads its own contiguous range of rows).\n\n"
    "MAPPING is JSON: `metadata` and `dataset_structure` exactly as in dataset_info.json\n"
    "(saved_data_description gives each attribute's dtype and shape), plus an\n"
    "`import_hdf5` object saying, per split, which HDF5 dataset or compound field feeds\n"
    "each attribute, optional row ranges, trace windows (`columns`) and shard\n"
    "custom_metadata; see configs/README.md and `sedpack inspect-hdf5 FILE --mapping`.\n"
    "Unknown keys are errors. Every option below can be given in MAPPING; the command\n"
    "line wins.\n\n"
    "Order: within a split, examples follow the inputs in the order given, each input's\n"
    "rows in ascending order, whatever the number of ranks.\n"
    "Values are converted only when exact (float64 43.0 -> uint8 is fine; 3.5 or 300 is\n"
    "an error naming file, dataset, field, row and value). Every input is checked\n"
    "(datasets, fields, types, shapes, row counts) before anything is written. Each\n"
    "rank journals its finished shards: a job stopped while writing (signal, kill, lost\n"
    "rank, full disk) keeps them and the same command run again imports only the rest;\n"
    "with --no-journal any failure leaves OUT as it was (removed if the job created it).\n",
    "  sedpack inspect-hdf5 ascad.h5 --mapping > map.json\n"
    "      a starting mapping to edit\n"
    "  sedpack import-hdf5 -c map.json ascad.h5 -o ascad\n"
    "      convert it\n"
    "  srun -n 8 sedpack import-hdf5 -c map.json part1.h5 part2.h5 -o big --progress\n"
    "      eight ranks, two inputs\n",
    MpiMode::kParallel,
};

const CommandSpec kInspectHdf5Spec = {
    "inspect-hdf5", "FILE [--mapping]",
    "list an HDF5 capture's groups, datasets, types and chunking",
    "List the groups and datasets of the HDF5 file FILE: shape, element type, storage\n"
    "layout (chunk shape and filters) and, for compound datasets, every field with its\n"
    "type and shape. With --mapping, print a starting mapping config for\n"
    "`sedpack import-hdf5` instead (edit it: dtypes, windows, shard metadata).\n",
    "  sedpack inspect-hdf5 capture.h5\n"
    "      what the file holds\n"
    "  sedpack inspect-hdf5 capture.h5 --mapping > map.json\n"
    "      a mapping config for import-hdf5\n",
};

#ifndef SEDPACK_HAVE_HDF5

int RunImportHdf5(const std::vector<std::string>& args) {
  return ReportError(Status::NotImplemented("import-hdf5: this sedpack was built without HDF5 "
                                            "(install libhdf5-dev and rebuild)"));
}
int RunInspectHdf5(const std::vector<std::string>& args) {
  return ReportError(Status::NotImplemented("inspect-hdf5: this sedpack was built without HDF5 "
                                            "(install libhdf5-dev and rebuild)"));
}

#else

namespace {

std::string DimsText(const std::vector<std::uint64_t>& d) {
  std::string t = "(";
  for (std::size_t i = 0; i < d.size(); ++i) t += (i ? ", " : "") + std::to_string(d[i]);
  if (d.size() == 1) t += ",";
  return t + ")";
}

Status ApplyImportOverrides(const po::variables_map& vm, Hdf5ImportConfig* c) {
  Hdf5ImportParams& p = c->params;
  SEDPACK_RETURN_NOT_OK(ParseThreadsOption(vm, &p.threads));
  SEDPACK_RETURN_NOT_OK(ParseLevelOption(vm, &p.level));
  if (vm.count("memory-budget")) {
    SEDPACK_ASSIGN_OR_RETURN(std::uint64_t mb, ParseUInt(vm["memory-budget"].as<std::string>(), "--memory-budget"));
    if (mb < 16 || mb > (1ULL << 22)) return Status::InvalidArgument("option --memory-budget: 16 to 4194304 MB");
    p.memory_budget_bytes = mb << 20;
  }
  if (vm.count("progress")) {
    SEDPACK_ASSIGN_OR_RETURN(p.progress, ParseBool(vm["progress"].as<std::string>(), "--progress"));
  }
  return ApplyStructureOverrides(vm, &c->structure);
}

std::string ImportProgressLine(const Hdf5ImportProgress& p) {
  char buf[220];
  const double pct = p.rows_total ? 100.0 * p.rows_done / p.rows_total : 100.0;
  const double rate = p.seconds > 0 ? p.bytes_done / p.seconds : 0;
  const double eta = rate > 0 ? (p.bytes_total - p.bytes_done) / rate : -1;
  std::snprintf(buf, sizeof(buf), "import-hdf5: %llu/%llu rows (%.1f%%), %s, %s/s, ETA %s",
                static_cast<unsigned long long>(p.rows_done), static_cast<unsigned long long>(p.rows_total),
                pct, FormatBytes(static_cast<double>(p.bytes_done)).c_str(), FormatBytes(rate).c_str(),
                eta < 0 ? "?" : FormatDuration(eta).c_str());
  return buf;
}

}  // namespace

int RunImportHdf5(const std::vector<std::string>& args) {
  po::options_description options("Options (each overrides the mapping config)");
  options.add_options()
      ("config,c", po::value<std::string>()->value_name("MAPPING"), "mapping config (JSON), required")
      ("files", po::value<std::vector<std::string>>()->value_name("FILE"), "inputs, then OUT")
      ("out,o", po::value<std::string>()->value_name("OUT"),
       "dataset folder to create (import_hdf5.output); then every positional argument is an input")
      ("threads,j", po::value<std::string>()->value_name("N"),
       "shard writing threads per rank, 0 = all cores (import_hdf5.threads)")
      ("level", po::value<std::string>()->value_name("N"), LevelOptionHelp("import_hdf5.level").c_str())
      ("quiet,q", po::bool_switch(), "no summary on standard output, only errors")
      ("memory-budget", po::value<std::string>()->value_name("MB"),
       "memory per rank for read blocks and pending shards (import_hdf5.memory_budget_mb, default 256)")
      ("progress", po::value<std::string>()->value_name("BOOL")->implicit_value("true"),
       "progress on stderr even when it is not a terminal (import_hdf5.progress); --progress=false or -q: none");
  AddJournalOptions(&options);
  AddStructureOptions(&options);
  po::positional_options_description positional;
  positional.add("files", -1);
  po::variables_map vm;
  if (auto code = ParseCommandLine(kImportHdf5Spec, options, positional, args, &vm)) return *code;
  if (!vm.count("config")) return UsageError("import-hdf5", "missing --config MAPPING");

  auto loaded = LoadHdf5ImportConfig(vm["config"].as<std::string>());
  if (!loaded.ok()) return ReportError(loaded.status(), /*input_stage=*/true);
  Hdf5ImportConfig config = std::move(loaded).value();
  if (Status st = ApplyImportOverrides(vm, &config); !st.ok()) return UsageError("import-hdf5", st.message());
  if (Status st = ValidateHdf5ImportConfig(config); !st.ok()) {
    return ReportError(st.WithPrefix(vm["config"].as<std::string>() + ": "), /*input_stage=*/true);
  }
  // Positional arguments: INPUT... OUT, or only inputs when OUT comes from --out
  // or the config.
  std::vector<std::string> files =
      vm.count("files") ? vm["files"].as<std::vector<std::string>>() : std::vector<std::string>{};
  std::string out = config.params.output;
  std::vector<std::string> inputs = config.params.inputs;
  if (vm.count("out")) {
    out = vm["out"].as<std::string>();
    if (!files.empty()) inputs = files;
  } else if (files.size() >= 2 || (files.size() == 1 && out.empty() && !inputs.empty())) {
    out = files.back();
    files.pop_back();
    if (!files.empty()) inputs = files;
  } else if (files.size() == 1) {
    inputs = files;
  }
  if (out.empty()) return UsageError("import-hdf5", "missing OUT (the last argument, --out or import_hdf5.output)");
  if (inputs.empty()) return UsageError("import-hdf5", "missing INPUT.h5 (or import_hdf5.inputs)");

  auto journal = JournalOptions(vm);
  if (!journal.ok()) return UsageError("import-hdf5", journal.status().message());
  // --progress/--no-progress, else none with -q, else the config's progress or a terminal.
  auto progress = ProgressOption(vm, config.params.progress);
  if (!progress.ok()) return UsageError("import-hdf5", progress.status().message());
  auto started = StartComm();
  if (!started.ok()) return ReportError(started.status());
  CliComm& cc = **started;
  const int rank = cc.comm().rank();
  ProgressPrinter printer(rank == 0 && *progress);
  Hdf5ImportOptions io;
  io.restart = journal->restart;
  io.resumable = journal->resumable;
  if (io.resumable) io.config_digest = MappingDigest(vm, {"threads", "level", "memory-budget"});
  if (printer.enabled()) {
    io.progress = [&](const Hdf5ImportProgress& p) { printer.Update(ImportProgressLine(p), p.finished); };
  }
  auto summary = ImportHdf5(cc.comm(), config, inputs, out, io);
  printer.Finish();
  if (!summary.ok()) return cc.ReportFailure(summary.status());
  if (rank == 0 && summary->journal_shards > 0) {
    std::cerr << "sedpack import-hdf5: resumed job " << summary->job_id << ": " << summary->kept_shards << " of "
              << summary->journal_shards << " shards kept\n";
  }
  if (rank == 0 && !QuietOption(vm)) {
    const Hdf5ImportSummary& s = *summary;
    std::printf("imported %llu examples (train %llu, test %llu, holdout %llu) from %zu file%s into %s "
                "with %d rank%s (job %s)\n",
                static_cast<unsigned long long>(s.examples_total), static_cast<unsigned long long>(s.examples[0]),
                static_cast<unsigned long long>(s.examples[1]), static_cast<unsigned long long>(s.examples[2]),
                inputs.size(), inputs.size() == 1 ? "" : "s", out.c_str(), cc.comm().size(),
                cc.comm().size() == 1 ? "" : "s", s.job_id.c_str());
    std::printf("  %s of values in %s: %s/s; per rank: blocks of %llu rows, shards up to %s, %d write threads\n",
                FormatBytes(static_cast<double>(s.source_bytes)).c_str(), FormatDuration(s.seconds).c_str(),
                FormatBytes(s.source_bytes / std::max(s.seconds, 1e-9)).c_str(),
                static_cast<unsigned long long>(s.block_rows),
                FormatBytes(static_cast<double>(s.shard_byte_budget)).c_str(), s.write_threads);
    const auto& algos = config.structure.hash_checksum_algorithms;
    for (std::size_t i = 0; i < s.root_checksums.size() && i < algos.size(); ++i) {
      std::printf("  dataset_info.json %s %s\n", std::string(HashAlgorithmName(algos[i])).c_str(),
                  s.root_checksums[i].c_str());
    }
    std::fflush(stdout);
  }
  return kExitOk;
}

int RunInspectHdf5(const std::vector<std::string>& args) {
  po::options_description options("Options");
  options.add_options()
      ("file", po::value<std::string>()->value_name("FILE"), "HDF5 file")
      ("mapping", po::bool_switch(), "print a starting mapping config for import-hdf5");
  po::positional_options_description positional;
  positional.add("file", 1);
  po::variables_map vm;
  if (auto code = ParseCommandLine(kInspectHdf5Spec, options, positional, args, &vm)) return *code;
  if (!vm.count("file")) return UsageError("inspect-hdf5", "missing FILE");
  const std::string path = vm["file"].as<std::string>();
  auto objects = InspectHdf5(path);
  if (!objects.ok()) return ReportError(objects.status(), /*input_stage=*/true);
  if (vm["mapping"].as<bool>()) {
    std::vector<std::string> notes;
    auto text = SuggestHdf5Mapping(path, *objects, &notes);
    if (!text.ok()) return ReportError(text.status(), /*input_stage=*/true);
    std::cout << *text;
    for (const std::string& n : notes) std::cerr << "note: " << n << "\n";
    return kExitOk;
  }
  std::cout << path << "\n";
  for (const Hdf5ObjectInfo& o : *objects) {
    if (o.is_group) {
      std::cout << "  " << o.path << "/  (group)\n";
      continue;
    }
    std::cout << "  " << o.path << "  " << DimsText(o.dims) << " " << o.type << ", " << o.layout;
    if (!o.chunk.empty()) std::cout << " " << DimsText(o.chunk);
    for (const std::string& f : o.filters) std::cout << ", " << f;
    std::cout << ", " << FormatBytes(static_cast<double>(o.storage_bytes)) << " stored\n";
    for (const Hdf5FieldInfo& f : o.fields) {
      std::cout << "      ." << f.name << "  " << f.type;
      if (!f.dims.empty()) std::cout << " " << DimsText(f.dims);
      if (f.dtype.empty()) std::cout << "  (not importable)";
      std::cout << "\n";
    }
  }
  return kExitOk;
}

#endif  // SEDPACK_HAVE_HDF5

}  // namespace sedpack::cli
