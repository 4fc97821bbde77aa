// SPDX-License-Identifier: Apache-2.0
// `sedpack import-chipwhisperer`, `inspect-chipwhisperer`: ChipWhisperer projects in.
#include <filesystem>
#include <iostream>

#include "cli/cmd_capture.h"
#include "sedpack/capture/chipwhisperer.h"

namespace sedpack::cli {

const CommandSpec kImportChipWhispererSpec = {
    "import-chipwhisperer", "PROJECT.cwp|PROJECT.zip -o OUT [options]",
    "convert a ChipWhisperer project into a new dataset, in parallel",
    "Convert the enabled trace segments of a ChipWhisperer project (the .cwp file, or a\n"
    ".zip of the project folder) into the new dataset OUT, serially or under\n"
    "mpirun/srun. Segments append in tracefile order; each contributes numTraces rows\n"
    "of its arrays (the arrays may hold more: ChipWhisperer saves them whole).\n\n"
    "Without --config, every array becomes an attribute in its own dtype: traces ->\n"
    "trace (float64), textin, textout, keylist (uint8 (16,)), ...; the project's segment\n"
    "configs go into the dataset's custom_metadata under \"chipwhisperer\". Object\n"
    "(pickled) arrays such as knownkey.npy are never unpickled: skipped with a note.\n"
    "`sedpack inspect-chipwhisperer PROJECT --mapping` prints that config (key\n"
    "\"import_chipwhisperer\", the shape of import-hdf5's) to rename or drop attributes.\n\n"
    "--traces-float32 stores the traces as float32 when every value converts exactly\n"
    "(else it fails naming the first value and its error); with --allow-rounding it\n"
    "rounds and reports the largest error. Paths in the project naming \"..\", a drive\n"
    "or an absolute path are refused. A stopped job keeps its finished shards and the\n"
    "same command run again imports only the rest, as import-trs.\n",
    "  sedpack import-chipwhisperer project.cwp -o ds\n"
    "      every enabled segment, every numeric array\n"
    "  sedpack import-chipwhisperer project.zip -o ds --traces-float32\n"
    "      from a zipped project, traces stored as float32 when exact\n"
    "  mpirun -n 4 sedpack import-chipwhisperer project.cwp -o ds --progress\n"
    "      four ranks\n",
    MpiMode::kParallel,
};

const CommandSpec kInspectChipWhispererSpec = {
    "inspect-chipwhisperer", "PROJECT.cwp|PROJECT.zip [--mapping] [--json [FILE|-]]",
    "list a ChipWhisperer project's segments and arrays",
    "List the trace segments of a ChipWhisperer project (enabled or not, numTraces, the\n"
    "config entries) and each segment's .npy arrays (dtype, shape; skipped ones with the\n"
    "reason). --mapping prints a starting mapping config for import-chipwhisperer;\n"
    "--json the listing as JSON.\n",
    "  sedpack inspect-chipwhisperer project.cwp\n"
    "      segments, numTraces and arrays\n"
    "  sedpack inspect-chipwhisperer project.cwp --mapping > map.json\n"
    "      a mapping config for import-chipwhisperer\n",
    MpiMode::kSerial,
};

namespace {

std::string Dims(const std::vector<std::uint64_t>& d) {
  std::string t = "(";
  for (std::size_t i = 0; i < d.size(); ++i) t += (i ? ", " : "") + std::to_string(d[i]);
  if (d.size() == 1) t += ",";
  return t + ")";
}

std::string Quote(const std::string& s) {
  std::string o = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') {
      o += '\\';
      o += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\u%04x", c);
      o += buf;
    } else {
      o += c;
    }
  }
  return o + "\"";
}

// The files a project's import reads (the project, each enabled segment's
// config and arrays; a zipped project is one file), for a resumable job's
// parameters. A project that does not load names only itself: the import
// reports why.
std::vector<std::string> ProjectFiles(const std::string& project) {
  std::vector<std::string> files{project};
  auto p = InspectChipWhisperer(project);
  if (!p.ok() || p->zipped) return files;
  const std::filesystem::path dir = std::filesystem::path(project).parent_path();
  for (const CwSegment& seg : p->segments) {
    if (!seg.enabled) continue;
    files.push_back((dir / seg.config_file).string());
    for (const CwArrayInfo& a : seg.arrays) {
      if (!a.skipped) files.push_back((dir / a.file).string());
    }
  }
  return files;
}

}  // namespace

int RunImportChipWhisperer(const std::vector<std::string>& args) {
  po::options_description options("Options");
  options.add_options()
      ("project", po::value<std::string>()->value_name("PROJECT"), "the .cwp file or a .zip of the project")
      ("traces-float32", po::bool_switch(), "store the traces as float32 (exact values only)")
      ("allow-rounding", po::bool_switch(), "with --traces-float32: round, and report the largest error");
  AddCaptureImportOptions(&options);
  po::positional_options_description positional;
  positional.add("project", 1);
  po::variables_map vm;
  if (auto code = ParseCommandLine(kImportChipWhispererSpec, options, positional, args, &vm)) return *code;
  if (!vm.count("project")) return UsageError("import-chipwhisperer", "missing PROJECT.cwp");
  const bool f32 = vm["traces-float32"].as<bool>();
  if (vm["allow-rounding"].as<bool>() && !f32) {
    return UsageError("import-chipwhisperer", "--allow-rounding goes with --traces-float32");
  }
  if (f32 && vm.count("config")) {
    return UsageError("import-chipwhisperer", "--traces-float32 changes the default mapping; with --config give "
                                              "the trace attribute dtype float32 in the config instead");
  }
  const std::string project = vm["project"].as<std::string>();
  auto open = [&](std::vector<std::string>* notes) { return OpenChipWhispererInputs(project, notes); };
  auto adjust = [&](CaptureImportConfig* c) {
    if (!f32) return;
    for (Attribute& a : c->structure.saved_data_description) {
      if (a.name == "trace" && a.dtype == "float64") a.dtype = "float32";
    }
  };
  CaptureImportOptions io;
  io.allow_inexact_float32 = vm["allow-rounding"].as<bool>();
  io.input_files = ProjectFiles(project);
  return RunCaptureImport("import-chipwhisperer", "import_chipwhisperer", vm, open, adjust, io);
}

int RunInspectChipWhisperer(const std::vector<std::string>& args) {
  po::options_description options("Options");
  options.add_options()
      ("project", po::value<std::string>()->value_name("PROJECT"), "the .cwp file or a .zip of the project")
      ("mapping", po::bool_switch(), "print a starting mapping config for import-chipwhisperer")
      ("json", po::value<std::string>()->value_name("FILE|-")->implicit_value("-"), "the listing as JSON");
  po::positional_options_description positional;
  positional.add("project", 1);
  po::variables_map vm;
  if (auto code = ParseCommandLine(kInspectChipWhispererSpec, options, positional, args, &vm)) return *code;
  if (!vm.count("project")) return UsageError("inspect-chipwhisperer", "missing PROJECT.cwp");
  const std::string path = vm["project"].as<std::string>();
  if (vm["mapping"].as<bool>()) {
    std::vector<std::string> notes;
    auto inputs = OpenChipWhispererInputs(path, &notes);
    if (!inputs.ok()) return ReportCaptureError(inputs.status());
    std::cout << SuggestCaptureMapping(*inputs->front(), "import_chipwhisperer");
    for (const std::string& n : notes) std::cerr << "note: " << n << "\n";
    return kExitOk;
  }
  auto p = InspectChipWhisperer(path);
  if (!p.ok()) return ReportCaptureError(p.status());
  if (vm.count("json")) {
    std::string j = "{\"project\": " + Quote(p->path) + ", \"zipped\": " + (p->zipped ? "true" : "false") +
                    ", \"segments\": [";
    for (std::size_t i = 0; i < p->segments.size(); ++i) {
      const CwSegment& s = p->segments[i];
      j += std::string(i ? ", " : "") + "{\"index\": " + std::to_string(s.index) + ", \"tracefile\": " +
           Quote(s.config_file) + ", \"enabled\": " + (s.enabled ? "true" : "false") +
           ", \"num_traces\": " + std::to_string(s.num_traces) + ", \"arrays\": [";
      for (std::size_t k = 0; k < s.arrays.size(); ++k) {
        const CwArrayInfo& a = s.arrays[k];
        j += std::string(k ? ", " : "") + "{\"name\": " + Quote(a.name) + ", \"file\": " + Quote(a.file) +
             ", \"descr\": " + Quote(a.descr) + ", \"shape\": [";
        for (std::size_t d = 0; d < a.shape.size(); ++d) j += (d ? ", " : "") + std::to_string(a.shape[d]);
        j += std::string("], \"skipped\": ") + (a.skipped ? "true" : "false") + "}";
      }
      j += "]}";
    }
    j += "], \"notes\": [";
    for (std::size_t i = 0; i < p->notes.size(); ++i) j += (i ? ", " : "") + Quote(p->notes[i]);
    j += "]}";
    const std::string target = vm["json"].as<std::string>();
    if (target == "-") {
      std::cout << j << "\n";
    } else if (Status st = WriteFileAtomic(target, j + "\n"); !st.ok()) {
      return ReportError(st);
    }
    return kExitOk;
  }
  std::cout << path << (p->zipped ? " (zip)" : "") << "\n";
  for (const CwSegment& s : p->segments) {
    std::cout << "  segment " << s.index << ": " << s.config_file << (s.enabled ? "" : "  (disabled)");
    if (s.enabled) std::cout << ", " << s.num_traces << " traces";
    std::cout << "\n";
    for (const CwArrayInfo& a : s.arrays) {
      std::cout << "      " << a.name << "  " << a.descr << " " << Dims(a.shape) << (a.skipped ? "  (skipped)" : "")
                << "\n";
    }
  }
  for (const std::string& n : p->notes) std::cout << "note: " << n << "\n";
  return kExitOk;
}

}  // namespace sedpack::cli
