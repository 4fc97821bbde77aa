// SPDX-License-Identifier: Apache-2.0
// The `sedpack` tool: dispatch to a subcommand. All logic lives in the library
// and in src/cli/cmd_*.cc; this file only picks the command.
#include <malloc.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>
#include <string_view>
#include <vector>

#include "cli/cli_common.h"
#include "cli/cmd_capture.h"
#include "sedpack/config.h"
#include "sedpack/metadata/models.h"

namespace sedpack::cli {

std::span<const Subcommand> Subcommands() {
  static const Subcommand kTable[] = {
      {&kInfoSpec, &RunInfo}, {&kLsSpec, &RunLs},   {&kCheckSpec, &RunCheck},
      {&kCatSpec, &RunCat},   {&kGenerateSpec, &RunGenerate, true}, {&kVerifySpec, &RunVerify},
      {&kChecksumsSpec, &RunChecksums}, {&kFixSpec, &RunFix, true},
      {&kIndexSpec, &RunIndex, true}, {&kGetSpec, &RunGet},
      {&kRecompressSpec, &RunRecompress, true}, {&kDigestSpec, &RunDigest, true},
      {&kStatsSpec, &RunStats, true}, {&kPackSpec, &RunPack, true}, {&kUnpackSpec, &RunUnpack, true},
      {&kImportHdf5Spec, &RunImportHdf5, true}, {&kInspectHdf5Spec, &RunInspectHdf5},
      {&kImportTrsSpec, &RunImportTrs, true}, {&kInspectTrsSpec, &RunInspectTrs},
      {&kExportTrsSpec, &RunExportTrs, true},
      {&kImportChipWhispererSpec, &RunImportChipWhisperer, true},
      {&kInspectChipWhispererSpec, &RunInspectChipWhisperer},
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
    name.resize(std::max<std::size_t>(name.size() + 2, 14), ' ');
    os << "  " << name << c.spec->brief << "\n";
  }
  os << "\nGlobal options:\n"
        "  -h [ --help ]      show this help and exit\n"
        "  --version          print the version and exit\n\n"
     << ExitCodeHelp();
}

// Shards are built and compressed in buffers of a few MB to tens of MB, one after
// the other. With glibc's defaults each such buffer is mmap()ed and unmapped
// again, so every shard pays page faults on fresh memory; on virtual machines
// that dominated the HDF5 import (139 MB/s -> 342 MB/s with these settings on a
// 2-vCPU VM, same output). Keep freed buffers in the heap instead. A user who sets
// GLIBC_TUNABLES for malloc keeps their own choice.
void ConfigureAllocator() {
  const char* tunables = std::getenv("GLIBC_TUNABLES");
  if (tunables && std::strstr(tunables, "glibc.malloc.")) return;
  mallopt(M_MMAP_THRESHOLD, 32 << 20);  // glibc's maximum (64-bit)
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
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
  ConfigureAllocator();
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
    if (c.spec->name != command) continue;
    if (c.writes) InstallInterruptHandlers(command);
    return c.run(args);
  }
  if (!command.empty() && command[0] == '-') {
    return UsageError("", "unknown option '" + std::string(command) + "' (a command comes first)");
  }
  return UsageError("", "unknown command '" + std::string(command) + "'");
}
