// SPDX-License-Identifier: Apache-2.0
// `sedpack import-trs`, `inspect-trs`, `export-trs`: Inspector trace sets in and out.
#include <cstdio>
#include <iostream>

#include "cli/cli_comm.h"
#include "cli/cmd_capture.h"
#include "sedpack/capture/export.h"
#include "sedpack/capture/sources.h"
#include "io/user_output_internal.h"

namespace sedpack::cli {

const CommandSpec kImportTrsSpec = {
    "import-trs", "FILE.trs [FILE2.trs ...] -o OUT [options]",
    "convert Inspector .trs trace sets into a new dataset, in parallel",
    "Convert TRS trace sets (Inspector, trsfile, Jlsca, ...) into the new dataset OUT,\n"
    "serially or under mpirun/srun (every rank a contiguous range of traces). Several\n"
    "files append in the order given and must agree on their layout.\n\n"
    "Without --config, every field becomes an attribute in its own dtype: \"samples\" ->\n"
    "trace (SCALE_Y and the axis settings in its custom_metadata, never applied),\n"
    "\"title\" -> title (str), \"data.<NAME>\" -> NAME per trace parameter definition (or\n"
    "the legacy input/output/key objects), else \"data\" -> data (bytes); the header and\n"
    "the trace set parameters go into the dataset's custom_metadata under \"trs\".\n"
    "`sedpack inspect-trs FILE --mapping` prints that config: edit it to rename, drop or\n"
    "window attributes (same shape as import-hdf5's, key \"import_trs\").\n\n"
    "A NUMBER_TRACES that disagrees with the file size is refused; --complete-records\n"
    "imports the complete records the file holds. A failure found before writing leaves\n"
    "OUT as it was. A job stopped while writing (signal, kill, full disk) keeps its\n"
    "finished shards, journaled under OUT/.sedpack-hpc/jobs/, and the same command run\n"
    "again imports only the rest (--restart: from scratch; --no-journal: a stopped job\n"
    "removes what it wrote).\n",
    "  sedpack import-trs capture.trs -o ds\n"
    "      every field of the file, in its own dtype\n"
    "  sedpack import-trs part1.trs part2.trs -c map.json -o ds --progress\n"
    "      two files appended, attributes renamed as map.json says\n"
    "  srun -n 8 sedpack import-trs big.trs -o big --memory-budget 512\n"
    "      eight ranks, each a contiguous range of traces\n",
    MpiMode::kParallel,
};

const CommandSpec kInspectTrsSpec = {
    "inspect-trs", "FILE.trs [--mapping] [--json [FILE|-]]",
    "show a .trs trace set's header, record layout and fields",
    "Print the header of the TRS file FILE (version, traces, samples and coding, data\n"
    "layout, trace parameter definitions, trace set parameters, unknown tags) and the\n"
    "fields an import maps. --mapping prints a starting mapping config for import-trs;\n"
    "--json the header as JSON.\n",
    "  sedpack inspect-trs capture.trs\n"
    "      header, record layout and fields\n"
    "  sedpack inspect-trs capture.trs --mapping > map.json\n"
    "      a mapping config for import-trs to edit\n",
    MpiMode::kSerial,
};

const CommandSpec kExportTrsSpec = {
    "export-trs", "DATASET -s SPLIT -o OUT.trs [options]",
    "write one split of a dataset as a TRS v2 trace set",
    "Write split SPLIT of DATASET as the TRS v2 file OUT.trs (readable by Inspector,\n"
    "trsfile, Jlsca, Daredevil). The samples are --trace (default: the largest 1-D\n"
    "numeric attribute, the first on a tie; the summary line names it). TRS codes\n"
    "samples as int8, int16, int32 or float32: bool is stored as int8 0/1, uint8 as\n"
    "int16, uint16 as int32, float16 as float32 (all exact); uint32, int64 and uint64\n"
    "as int32 and float64 as float32 only when every value fits exactly (otherwise\n"
    "exit 2 naming the example and value; --round-float64 rounds float64); str, bytes\n"
    "and multi-dimensional attributes are refused (exit 2). A str attribute \"title\"\n"
    "(or --title) becomes the trace titles; every other fixed-size attribute becomes a\n"
    "trace parameter (TRACE_PARAMETER_DEFINITIONS) of its type, together at most 65535\n"
    "bytes a trace. The trace attribute's name is kept in the trace set parameter\n"
    "SEDPACK_TRACE (import-trs names the samples after it). OUT.trs is written under a\n"
    "temporary name and renamed into place; an existing file is not replaced.\n"
    "The export keeps a journal beside OUT.trs (OUT.trs.sedpack-journal; the unfinished\n"
    "file is .OUT.trs.sedpack-partial): stopped by SIGTERM/SIGINT, a kill or a full\n"
    "disk, the same command run again checks the row ranges written and writes only\n"
    "the rest (\"resumed job ...: k of n row ranges kept\"). A journal of other\n"
    "parameters is refused (exit 2, naming the difference); --restart throws it away;\n"
    "--no-journal writes without one.\n",
    "  sedpack export-trs ds -s train -o train.trs\n"
    "      the train split as a TRS v2 file\n"
    "  sedpack export-trs ds -s test -o test.trs --trace power --title label\n"
    "      samples and titles from other attributes\n",
    MpiMode::kSerial,
};

void AddCaptureImportOptions(po::options_description* options) {
  options->add_options()
      ("out,o", po::value<std::string>()->value_name("OUT"), "dataset folder to create (required)")
      ("config,c", po::value<std::string>()->value_name("MAPPING"),
       "mapping config (JSON); default: every field, as inspect --mapping prints it")
      ("threads,j", po::value<std::string>()->value_name("N"), "shard writing threads per rank, 0 = all cores")
      ("memory-budget", po::value<std::string>()->value_name("MB"),
       "memory per rank for read blocks and pending shards (default 256)")
      ("quiet,q", po::bool_switch(), "print nothing but errors");
  AddProgressOption(options);
  AddJournalOptions(options);
  AddStructureOptions(options);
}

int ReportCaptureError(const Status& status) {
  if (status.code() == StatusCode::kCorruption) {
    std::cerr << "sedpack: " << status.ToString() << "\n";
    return kExitProblems;
  }
  return ReportError(status, /*input_stage=*/true);
}

namespace {

// A failure of a collective step, printed once; corrupt capture input is a
// dataset problem (exit 1).
int CollectiveFailure(CliComm& cc, const Status& status) {
  const int code = cc.ReportFailure(status);
  return status.code() == StatusCode::kCorruption ? kExitProblems : code;
}

std::string ProgressLine(std::string_view command, const CaptureImportProgress& p) {
  char buf[240];
  const double pct = p.rows_total ? 100.0 * p.rows_done / p.rows_total : 100.0;
  const double rate = p.seconds > 0 ? p.bytes_done / p.seconds : 0;
  std::snprintf(buf, sizeof(buf), "%.*s: %llu/%llu traces (%.1f%%), %s, %s/s", static_cast<int>(command.size()),
                command.data(), static_cast<unsigned long long>(p.rows_done),
                static_cast<unsigned long long>(p.rows_total), pct, FormatBytes(static_cast<double>(p.bytes_done)).c_str(),
                FormatBytes(rate).c_str());
  return buf;
}

}  // namespace

int RunCaptureImport(std::string_view command, std::string_view key, const po::variables_map& vm,
                     const std::function<Result<std::vector<std::unique_ptr<CaptureInput>>>(std::vector<std::string>*)>& open,
                     const std::function<void(CaptureImportConfig*)>& adjust, CaptureImportOptions options) {
  if (!vm.count("out")) return UsageError(command, "missing -o/--out OUT");
  const std::string out = vm["out"].as<std::string>();
  const bool quiet = vm["quiet"].as<bool>();
  auto journal = JournalOptions(vm);
  if (!journal.ok()) return UsageError(command, journal.status().message());
  options.resumable = journal->resumable;
  options.restart = journal->restart;
  options.command = std::string(command);
  if (options.resumable) {
    options.config_digest =
        MappingDigest(vm, {"threads", "memory-budget", "complete-records", "traces-float32", "allow-rounding"});
  }
  auto started = StartComm();
  if (!started.ok()) return ReportError(started.status());
  CliComm& cc = **started;
  const bool root = cc.is_root();
  std::vector<std::string> notes;
  auto inputs = open(&notes);
  // Every rank opens the inputs; they must agree that they could.
  Status opened = AgreeOnStatus(cc.comm(), inputs.status());
  if (!opened.ok()) return CollectiveFailure(cc, inputs.ok() ? opened : inputs.status());
  if (root && !quiet) {
    for (const std::string& n : notes) std::cerr << "note: " << n << "\n";
  }
  Result<CaptureImportConfig> config = Status::OK();
  if (vm.count("config")) {
    config = LoadCaptureImportConfig(vm["config"].as<std::string>(), key);
  } else {
    const std::string text = SuggestCaptureMapping(*inputs->front(), key);
    config = ParseCaptureImportConfig(text, "the default mapping", key);
    if (config.ok() && adjust) adjust(&*config);
  }
  if (!config.ok()) return ReportError(config.status(), /*input_stage=*/true);
  CaptureImportParams& p = config->params;
  if (Status st = ParseThreadsOption(vm, &p.threads); !st.ok()) return UsageError(command, st.message());
  if (vm.count("memory-budget")) {
    auto mb = ParseUInt(vm["memory-budget"].as<std::string>(), "--memory-budget");
    if (!mb.ok() || *mb < 16 || *mb > (1ULL << 22)) return UsageError(command, "--memory-budget: 16 to 4194304 MB");
    p.memory_budget_bytes = *mb << 20;
  }
  auto wants_progress = ProgressOption(vm, p.progress);
  if (!wants_progress.ok()) return UsageError(command, wants_progress.status().message());
  if (vm.count("progress")) p.progress = *wants_progress;
  if (Status st = ApplyStructureOverrides(vm, &config->structure); !st.ok()) return UsageError(command, st.message());
  ProgressPrinter printer(root && !quiet && *wants_progress);
  if (printer.enabled()) {
    options.progress = [&](const CaptureImportProgress& g) { printer.Update(ProgressLine(command, g), g.finished); };
  }
  auto summary = ImportCapture(cc.comm(), *config, *inputs, out, options);
  printer.Finish();
  if (!summary.ok()) return CollectiveFailure(cc, summary.status());
  if (root && summary->journal_shards > 0) {
    std::cerr << "sedpack " << command << ": resumed job " << summary->job_id << ": " << summary->kept_shards
              << " of " << summary->journal_shards << " shards kept\n";
  }
  if (root && !quiet) {
    const CaptureImportSummary& s = *summary;
    std::printf("imported %llu traces (train %llu, test %llu, holdout %llu) from %zu input%s into %s with %d rank%s "
                "(job %s)\n",
                static_cast<unsigned long long>(s.examples_total), static_cast<unsigned long long>(s.examples[0]),
                static_cast<unsigned long long>(s.examples[1]), static_cast<unsigned long long>(s.examples[2]),
                inputs->size(), inputs->size() == 1 ? "" : "s", out.c_str(), cc.comm().size(),
                cc.comm().size() == 1 ? "" : "s", s.job_id.c_str());
    std::printf("  %s read in %s: %s/s; per rank: blocks of %llu traces, %d write threads\n",
                FormatBytes(static_cast<double>(s.source_bytes)).c_str(), FormatDuration(s.seconds).c_str(),
                FormatBytes(s.source_bytes / std::max(s.seconds, 1e-9)).c_str(),
                static_cast<unsigned long long>(s.block_rows), s.write_threads);
    if (options.allow_inexact_float32) std::printf("  float64 -> float32: largest rounding error %.9g\n", s.max_float32_error);
    std::fflush(stdout);
  }
  return kExitOk;
}

int RunImportTrs(const std::vector<std::string>& args) {
  po::options_description options("Options");
  options.add_options()
      ("files", po::value<std::vector<std::string>>()->value_name("FILE"), "TRS files, in order")
      ("complete-records", po::bool_switch(),
       "when NUMBER_TRACES disagrees with the file size, import the complete records only");
  AddCaptureImportOptions(&options);
  po::positional_options_description positional;
  positional.add("files", -1);
  po::variables_map vm;
  if (auto code = ParseCommandLine(kImportTrsSpec, options, positional, args, &vm)) return *code;
  if (!vm.count("files")) return UsageError("import-trs", "missing FILE.trs");
  const auto files = vm["files"].as<std::vector<std::string>>();
  const TrsCountPolicy policy =
      vm["complete-records"].as<bool>() ? TrsCountPolicy::kCompleteRecords : TrsCountPolicy::kStrict;
  auto open = [&](std::vector<std::string>* notes) -> Result<std::vector<std::unique_ptr<CaptureInput>>> {
    std::vector<std::unique_ptr<CaptureInput>> inputs;
    for (const std::string& f : files) {
      SEDPACK_ASSIGN_OR_RETURN(auto in, OpenTrsInput(f, policy, notes));
      inputs.push_back(std::move(in));
    }
    return inputs;
  };
  CaptureImportOptions io;
  io.input_files = files;
  return RunCaptureImport("import-trs", "import_trs", vm, open, nullptr, io);
}

namespace {

std::string FieldLine(const CaptureField& f) {
  std::string s = "  " + f.name + "  " + std::string(DTypeName(f.dtype));
  if (f.dtype != DType::kStr) s += " " + ShapeToString(f.shape);
  s += ", " + std::to_string(f.row_bytes) + " bytes a trace";
  if (!f.suggested_attribute.empty()) s += "  -> attribute \"" + f.suggested_attribute + "\"";
  return s;
}

// Write `text` to the --json target ("-" = stdout).
int WriteJson(const po::variables_map& vm, const std::string& text) {
  const std::string target = vm["json"].as<std::string>();
  if (target == "-") {
    std::cout << text << "\n";
    return kExitOk;
  }
  if (!WriteUserOutput(target, text + "\n").ok()) return ReportError(Status::IOError(target, ": cannot write"));
  return kExitOk;
}

}  // namespace

int RunInspectTrs(const std::vector<std::string>& args) {
  po::options_description options("Options");
  options.add_options()
      ("file", po::value<std::string>()->value_name("FILE"), "TRS file")
      ("mapping", po::bool_switch(), "print a starting mapping config for import-trs")
      ("json", po::value<std::string>()->value_name("FILE|-")->implicit_value("-"), "the header as JSON")
      ("complete-records", po::bool_switch(), "accept a NUMBER_TRACES that disagrees with the file size");
  po::positional_options_description positional;
  positional.add("file", 1);
  po::variables_map vm;
  if (auto code = ParseCommandLine(kInspectTrsSpec, options, positional, args, &vm)) return *code;
  if (!vm.count("file")) return UsageError("inspect-trs", "missing FILE.trs");
  const std::string path = vm["file"].as<std::string>();
  const TrsCountPolicy policy =
      vm["complete-records"].as<bool>() ? TrsCountPolicy::kCompleteRecords : TrsCountPolicy::kStrict;
  auto file = TrsFile::Open(path, policy);
  if (!file.ok()) return ReportCaptureError(file.status());
  std::vector<std::string> notes;
  auto input = OpenTrsInput(path, policy, &notes);
  if (!input.ok()) return ReportCaptureError(input.status());
  if (vm["mapping"].as<bool>()) {
    std::cout << SuggestCaptureMapping(**input, "import_trs");
    for (const std::string& n : notes) std::cerr << "note: " << n << "\n";
    return kExitOk;
  }
  const TrsHeader& h = (*file)->header();
  if (vm.count("json")) return WriteJson(vm, TrsHeaderJson(h, (*file)->traces()));
  std::cout << path << ": TRS version " << h.version << ", " << (*file)->traces() << " traces of "
            << h.number_samples << " " << DTypeName(h.sample_dtype) << " samples\n";
  std::cout << "  header " << h.header_bytes << " bytes, records of " << h.record_bytes << " bytes (title "
            << h.title_space << ", data " << h.length_data << ", samples " << h.sample_bytes << ")\n";
  if (!h.description.empty()) std::cout << "  description: " << h.description << "\n";
  if (h.scale_x) std::cout << "  scale x: " << *h.scale_x << "\n";
  if (h.scale_y) std::cout << "  scale y: " << *h.scale_y << "  (kept in custom_metadata, not applied)\n";
  for (const TrsSetParameter& p : h.set_parameters) {
    std::cout << "  trace set parameter " << p.name << ": " << DTypeName(TrsParamDType(p.type).value()) << " x"
              << p.count << "\n";
  }
  std::cout << "fields:\n";
  for (const CaptureField& f : (*input)->fields()) std::cout << FieldLine(f) << "\n";
  for (const std::string& n : notes) std::cout << "note: " << n << "\n";
  return kExitOk;
}

int RunExportTrs(const std::vector<std::string>& args) {
  po::options_description options("Options");
  options.add_options()
      ("dataset", po::value<std::string>()->value_name("DATASET"), "dataset folder")
      ("split,s", po::value<std::string>()->value_name("SPLIT")->default_value("train"), "split to export")
      ("out,o", po::value<std::string>()->value_name("OUT.trs"), "TRS file to write (required)")
      ("trace", po::value<std::string>()->value_name("NAME"), "attribute holding the samples (default: the largest 1-D numeric one)")
      ("title", po::value<std::string>()->value_name("NAME"), "str attribute holding the trace titles")
      ("round-float64", po::bool_switch(), "round float64 samples to float32 (reports the largest error)")
      ("no-journal", po::bool_switch(), "keep no journal: a stopped export starts over")
      ("restart", po::bool_switch(), "throw away an earlier run's journal and unfinished file first")
      ("quiet,q", po::bool_switch(), "print nothing but errors");
  po::positional_options_description positional;
  positional.add("dataset", 1);
  po::variables_map vm;
  if (auto code = ParseCommandLine(kExportTrsSpec, options, positional, args, &vm)) return *code;
  if (!vm.count("dataset")) return UsageError("export-trs", "missing DATASET");
  if (!vm.count("out")) return UsageError("export-trs", "missing -o/--out OUT.trs");
  auto split = ParseSplits({vm["split"].as<std::string>()});
  if (!split.ok()) return UsageError("export-trs", split.status().message());
  auto ds = OpenDatasetArg(vm["dataset"].as<std::string>());
  if (!ds.ok()) return ReportError(ds.status(), /*input_stage=*/true);
  TrsExportOptions eo;
  if (vm.count("trace")) eo.trace_attribute = vm["trace"].as<std::string>();
  if (vm.count("title")) eo.title_attribute = vm["title"].as<std::string>();
  eo.round_float64 = vm["round-float64"].as<bool>();
  eo.journal = !vm["no-journal"].as<bool>();
  eo.restart = vm["restart"].as<bool>();
  if (!eo.journal && eo.restart) return UsageError("export-trs", "--restart and --no-journal exclude each other");
  SetResumableJob(eo.journal, "the exported row ranges");
  auto s = ExportTrs(*ds, split->front(), vm["out"].as<std::string>(), eo);
  if (!s.ok()) return ReportError(s.status(), /*input_stage=*/s.status().code() == StatusCode::kInvalidArgument);
  if (!s->journal_note.empty()) std::cerr << "sedpack export-trs: " << s->journal_note << "\n";
  if (s->resumed) {
    std::cerr << "sedpack export-trs: resumed job " << s->job_id << ": " << s->kept_units << " of " << s->units
              << " row ranges kept\n";
  }
  if (!vm["quiet"].as<bool>()) {
    for (const std::string& n : s->notes) std::cerr << "note: " << n << "\n";
    const std::string coded = s->trace_dtype == s->sample_dtype
                                  ? std::string(DTypeName(s->sample_dtype))
                                  : std::string(DTypeName(s->trace_dtype)) + " as " +
                                        std::string(DTypeName(s->sample_dtype));
    std::printf("wrote %llu traces (%s) to %s: samples from \"%s\" (%llu %s%s)\n",
                static_cast<unsigned long long>(s->traces), FormatBytes(static_cast<double>(s->bytes)).c_str(),
                vm["out"].as<std::string>().c_str(), s->trace_attribute.c_str(),
                static_cast<unsigned long long>(s->samples), coded.c_str(),
                s->trace_chosen ? ", the largest 1-D numeric attribute" : "");
    if (eo.round_float64) std::printf("  float64 -> float32: largest rounding error %.9g\n", s->max_float32_error);
  }
  return kExitOk;
}

}  // namespace sedpack::cli
