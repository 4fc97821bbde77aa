// SPDX-License-Identifier: Apache-2.0
// `sedpack pack DATASET -o FILE` and `sedpack unpack FILE OUT`.
#include <cstdio>

#include "cli/cli_common.h"
#include "sedpack/io/pack.h"

namespace sedpack::cli {

const CommandSpec kPackSpec = {
    "pack", "DATASET -o FILE",
    "put a whole dataset into one file (for file systems that dislike many files)",
    "Write every file of DATASET (metadata, shards, sidecars) into the single new file\n"
    "FILE. Shards are copied as raw bytes, nothing is decompressed or re-encoded, so\n"
    "`sedpack unpack` restores the tree byte for byte. FILE must not exist; it appears\n"
    "complete or not at all (written under a temporary name beside it, fsync'ed, then\n"
    "renamed). FILE - writes the pack to standard output; a named pipe, a device or a\n"
    "symbolic link to a file not there yet is written through, never replaced. Its\n"
    "folder must exist.\n",
};

const CommandSpec kUnpackSpec = {
    "unpack", "FILE OUT",
    "restore a packed dataset into a folder, byte for byte",
    "Write every file of the pack FILE into the new folder OUT (it must not exist, or\n"
    "be empty). The pack's index is validated first (paths must stay inside OUT,\n"
    "offsets inside the file). On failure OUT is removed.\n",
};

int RunPack(const std::vector<std::string>& args) {
  po::options_description options("Options");
  options.add_options()
      ("dataset", po::value<std::string>()->value_name("DATASET"), "dataset folder")
      ("output,o", po::value<std::string>()->value_name("FILE"), "pack file to create (- for standard output)");
  po::positional_options_description positional;
  positional.add("dataset", 1);
  po::variables_map vm;
  if (auto code = ParseCommandLine(kPackSpec, options, positional, args, &vm)) return *code;
  if (!vm.count("dataset")) return UsageError("pack", "missing DATASET");
  if (!vm.count("output")) return UsageError("pack", "missing -o FILE");
  const std::string root = vm["dataset"].as<std::string>();
  if (auto ds = OpenDatasetArg(root); !ds.ok()) return ReportError(ds.status(), /*input_stage=*/true);
  const std::string out = vm["output"].as<std::string>();
  auto s = PackTree(root, out);
  if (!s.ok()) return ReportError(s.status(), /*input_stage=*/true);
  // With -o - the pack is standard output; the summary goes to stderr then.
  std::fprintf(out == "-" ? stderr : stdout, "packed %llu files (%s) of %s into %s\n",
               static_cast<unsigned long long>(s->files), FormatBytes(static_cast<double>(s->bytes)).c_str(),
               root.c_str(), out == "-" ? "standard output" : out.c_str());
  return kExitOk;
}

int RunUnpack(const std::vector<std::string>& args) {
  po::options_description options("Options");
  options.add_options()
      ("pack", po::value<std::string>()->value_name("FILE"), "pack file")
      ("out", po::value<std::string>()->value_name("OUT"), "folder to create");
  po::positional_options_description positional;
  positional.add("pack", 1).add("out", 1);
  po::variables_map vm;
  if (auto code = ParseCommandLine(kUnpackSpec, options, positional, args, &vm)) return *code;
  if (!vm.count("pack") || !vm.count("out")) return UsageError("unpack", "usage: sedpack unpack FILE OUT");
  auto s = UnpackTree(vm["pack"].as<std::string>(), vm["out"].as<std::string>());
  if (!s.ok()) return ReportError(s.status(), /*input_stage=*/true);
  std::printf("unpacked %llu files (%s) into %s\n", static_cast<unsigned long long>(s->files),
              FormatBytes(static_cast<double>(s->bytes)).c_str(), vm["out"].as<std::string>().c_str());
  return kExitOk;
}

}  // namespace sedpack::cli
