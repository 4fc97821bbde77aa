// SPDX-License-Identifier: Apache-2.0
// `sedpack pack DATASET -o FILE` and `sedpack unpack FILE OUT`.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <span>

#include "cli/cli_common.h"
#include "sedpack/io/pack.h"

namespace sedpack::cli {

namespace {
constexpr DeprecatedOption kPackDeprecatedList[] = {{"--output", "--out"}};
constexpr std::span<const DeprecatedOption> kPackDeprecated(kPackDeprecatedList);
}  // namespace

const CommandSpec kPackSpec = {
    "pack", "DATASET -o FILE [options]",
    "put a whole dataset into one file (for file systems that dislike many files)",
    "Write every file of DATASET (metadata, shards, sidecars) into the single new file\n"
    "FILE. Shards are copied as raw bytes, nothing is decompressed or re-encoded, so\n"
    "`sedpack unpack` restores the tree byte for byte. FILE must not exist; it appears\n"
    "complete or not at all (written under a temporary name beside it, fsync'ed, then\n"
    "renamed). FILE - writes the pack to standard output; a named pipe, a device or a\n"
    "symbolic link to a file not there yet is written through, never replaced. Its\n"
    "folder must exist. (--output is the old spelling of --out.)\n",
    "  sedpack pack ds -o ds.sedpack\n"
    "      one file for the whole dataset\n"
    "  sedpack pack ds -o - | ssh host 'cat > ds.sedpack'\n"
    "      to standard output\n"
    "  sedpack verify ds.sedpack\n"
    "      a pack is read like a folder\n",
    MpiMode::kSerial,
    kPackDeprecated,
};

const CommandSpec kUnpackSpec = {
    "unpack", "FILE (OUT | -o OUT) [options]",
    "restore a packed dataset into a folder, byte for byte",
    "Write every file of the pack FILE into the new folder OUT (it must not exist, or\n"
    "be empty). The pack's index is validated first (paths must stay inside OUT,\n"
    "offsets inside the file). On failure OUT is removed.\n",
    "  sedpack unpack ds.sedpack -o ds\n"
    "      restore the folder\n"
    "  sedpack unpack ds.sedpack ds -q\n"
    "      the same, without the summary\n",
};

int RunPack(const std::vector<std::string>& args) {
  po::options_description options("Options");
  options.add_options()
      ("dataset", po::value<std::string>()->value_name("DATASET"), "dataset folder");
  AddOutputOption(&options, "pack file to create (- for standard output); required", "FILE");
  AddProgressOption(&options);
  AddQuietOption(&options);
  po::positional_options_description positional;
  positional.add("dataset", 1);
  po::variables_map vm;
  if (auto code = ParseCommandLine(kPackSpec, options, positional, args, &vm)) return *code;
  if (!vm.count("dataset")) return UsageError("pack", "missing DATASET");
  if (!vm.count("out")) return UsageError("pack", "missing -o FILE");
  auto progress = ProgressOption(vm);
  if (!progress.ok()) return UsageError("pack", progress.status().message());
  const std::string root = vm["dataset"].as<std::string>();
  if (auto ds = OpenDatasetArg(root); !ds.ok()) return ReportError(ds.status(), /*input_stage=*/true);
  const std::string out = vm["out"].as<std::string>();
  const auto start = std::chrono::steady_clock::now();
  auto s = PackTree(root, out);
  if (!s.ok()) return ReportError(s.status(), /*input_stage=*/true);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (*progress) {
    std::fprintf(stderr, "pack: done, %s in %s, %s/s\n", FormatBytes(static_cast<double>(s->bytes)).c_str(),
                 FormatDuration(seconds).c_str(), FormatBytes(s->bytes / std::max(seconds, 1e-9)).c_str());
  }
  if (QuietOption(vm)) return kExitOk;
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
      ("out-folder", po::value<std::string>()->value_name("OUT"), "folder to create");
  AddOutputOption(&options, "folder to create (or the second argument)");
  AddQuietOption(&options);
  po::positional_options_description positional;
  positional.add("pack", 1).add("out-folder", 1);
  po::variables_map vm;
  if (auto code = ParseCommandLine(kUnpackSpec, options, positional, args, &vm)) return *code;
  if (vm.count("out") && vm.count("out-folder")) return UsageError("unpack", "give OUT or -o OUT, not both");
  const std::string out = vm.count("out") ? vm["out"].as<std::string>()
                          : vm.count("out-folder") ? vm["out-folder"].as<std::string>() : std::string();
  if (!vm.count("pack") || out.empty()) return UsageError("unpack", "usage: sedpack unpack FILE -o OUT");
  auto s = UnpackTree(vm["pack"].as<std::string>(), out);
  if (!s.ok()) return ReportError(s.status(), /*input_stage=*/true);
  if (QuietOption(vm)) return kExitOk;
  std::printf("unpacked %llu files (%s) into %s\n", static_cast<unsigned long long>(s->files),
              FormatBytes(static_cast<double>(s->bytes)).c_str(), out.c_str());
  return kExitOk;
}

}  // namespace sedpack::cli
