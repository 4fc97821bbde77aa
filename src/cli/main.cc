// SPDX-License-Identifier: Apache-2.0
// The `sedpack` tool: dispatch to a subcommand. All logic lives in the library
// and in src/cli/cmd_*.cc; this file only picks the command.
#include <iostream>
#include <string>
#include <string_view>
#include <vector>

#include "cli/cli_common.h"
#include "sedpack/config.h"
#include "sedpack/metadata/models.h"

namespace sedpack::cli {

std::span<const Subcommand> Subcommands() {
  static const Subcommand kTable[] = {
      {&kInfoSpec, &RunInfo}, {&kLsSpec, &RunLs},   {&kCheckSpec, &RunCheck},
      {&kCatSpec, &RunCat},   {&kGenerateSpec, &RunGenerate}, {&kVerifySpec, &RunVerify},
      {&kChecksumsSpec, &RunChecksums}, {&kFixSpec, &RunFix},
      {&kIndexSpec, &RunIndex}, {&kGetSpec, &RunGet},
      {&kRecompressSpec, &RunRecompress}, {&kStatsSpec, &RunStats},
      {&kPackSpec, &RunPack}, {&kUnpackSpec, &RunUnpack},
      {&kImportHdf5Spec, &RunImportHdf5}, {&kInspectHdf5Spec, &RunInspectHdf5},
  };
  return kTable;
}

namespace {

void PrintUsage(std::ostream& os) {
  os << "Usage: sedpack COMMAND [ARGS] [options]\n"
        "       sedpack COMMAND --help\n\n"
        "Read, write and verify datasets in the sedpack format.\n\n"
        "Commands:\n";
  for (const Subcommand& c : Subcommands()) {
    std::string name(c.spec->name);
    name.resize(14, ' ');
    os << "  " << name << c.spec->brief << "\n";
  }
  os << "\nGlobal options:\n"
        "  -h [ --help ]      show this help and exit\n"
        "  --version          print the version and exit\n\n"
     << ExitCodeHelp();
}

void PrintVersion() {
  std::cout << "sedpack (sedpack-hpc) " << SEDPACK_PROJECT_VERSION << "\n"
            << "writes sedpack_version " << kDefaultSedpackVersion << " by default; reads datasets "
            << "up to sedpack_version " << kReaderSedpackVersion << "\n";
}

}  // namespace
}  // namespace sedpack::cli

int main(int argc, char** argv) {
  using namespace sedpack::cli;
  if (argc < 2) {
    PrintUsage(std::cerr);
    return kExitUsage;
  }
  const std::string_view command = argv[1];
  if (command == "--help" || command == "-h" || command == "help") {
    PrintUsage(std::cout);
    return kExitOk;
  }
  if (command == "--version" || command == "version") {
    PrintVersion();
    return kExitOk;
  }
  const std::vector<std::string> args(argv + 2, argv + argc);
  for (const Subcommand& c : Subcommands()) {
    if (c.spec->name == command) return c.run(args);
  }
  if (!command.empty() && command[0] == '-') {
    return UsageError("", "unknown option '" + std::string(command) + "' (a command comes first)");
  }
  return UsageError("", "unknown command '" + std::string(command) + "'");
}
