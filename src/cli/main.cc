// SPDX-License-Identifier: Apache-2.0
// The `sedpack` tool: dispatch to a subcommand. All logic lives in the library
// and in src/cli/cmd_*.cc; this file only picks the command.
#include <malloc.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>
#include <string_view>
#include <vector>

#include "cli/cli_common.h"
#include "cli/cmd_capture.h"
#include "cli/cli_docs.h"
#include "sedpack/config.h"
#include "sedpack/metadata/models.h"
#ifdef SEDPACK_HAVE_HDF5
#include "sedpack/hdf5/export.h"
#endif

namespace sedpack::cli {

std::span<const Subcommand> Subcommands() {
  static const Subcommand kTable[] = {
      {&kInfoSpec, &RunInfo}, {&kLsSpec, &RunLs},   {&kCheckSpec, &RunCheck},
      {&kCatSpec, &RunCat},   {&kGenerateSpec, &RunGenerate, true}, {&kVerifySpec, &RunVerify},
      {&kChecksumsSpec, &RunChecksums}, {&kFixSpec, &RunFix, true},
      {&kIndexSpec, &RunIndex, true}, {&kGetSpec, &RunGet},
      {&kRecompressSpec, &RunRecompress, true}, {&kDigestSpec, &RunDigest, true},
      {&kStatsSpec, &RunStats, true}, {&kReportSpec, &RunReport, true}, {&kPackSpec, &RunPack, true}, {&kUnpackSpec, &RunUnpack, true},
      {&kImportHdf5Spec, &RunImportHdf5, true}, {&kInspectHdf5Spec, &RunInspectHdf5},
      {&kImportTrsSpec, &RunImportTrs, true}, {&kInspectTrsSpec, &RunInspectTrs},
      {&kExportTrsSpec, &RunExportTrs, true},
      {&kImportChipWhispererSpec, &RunImportChipWhisperer, true},
      {&kInspectChipWhispererSpec, &RunInspectChipWhisperer},
      {&kExportHdf5Spec, &RunExportHdf5, true},
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
        "  -h [ --help ]      show this help and exit (sedpack help COMMAND: a command's help)\n"
        "  --version          print the version and the features built in, and exit\n\n"
        "Options every command spells the same way (where it has them):\n"
        "  -o [ --out ] PATH        what the command writes\n"
        "  -s [ --split ] S         train, test or holdout (repeatable where several make sense)\n"
        "  -j [ --threads ] N       threads per rank, 0 = all cores\n"
        "  --progress[=BOOL]        progress on stderr, with a final line\n"
        "  -q [ --quiet ]           no summary, only errors\n"
        "  --json [FILE|-]          the report as JSON (schema \"sedpack-hpc/<command>/1\")\n"
        "  --compression NAME       codec, any case; none for no compression\n\n"
     << ExitCodeHelp();
}

const Subcommand* FindCommand(std::string_view name) {
  for (const Subcommand& c : Subcommands()) {
    if (c.spec->name == name) return &c;
  }
  return nullptr;
}

int UnknownCommand(std::string_view command) {
  std::vector<std::string> names;
  for (const Subcommand& c : Subcommands()) names.emplace_back(c.spec->name);
  names.emplace_back("help");
  std::string message = "unknown command '" + std::string(command) + "'";
  if (const std::string near = ClosestMatch(command, names); !near.empty()) {
    message += "; did you mean '" + near + "'?";
  }
  return UsageError("", message);
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
            << "up to sedpack_version " << kReaderSedpackVersion << "\n"
            << "features:\n"
#ifdef SEDPACK_HAVE_MPI
            << "  MPI      yes (parallel commands run under mpirun/srun)\n"
#else
            << "  MPI      no (built without MPI)\n"
#endif
#ifdef SEDPACK_HAVE_HDF5
            << "  HDF5     yes (" << Hdf5LibraryDescription() << "; import-hdf5, inspect-hdf5, export-hdf5)\n"
#else
            << "  HDF5     no (built without HDF5)\n"
#endif
#ifdef SEDPACK_HAVE_PYTHON
            << "  Python   yes (module sedpack_hpc built beside the tool)\n"
#else
            << "  Python   no (module sedpack_hpc not built)\n"
#endif
            << "  codecs   " << CodecList(std::nullopt)
#ifdef SEDPACK_HAVE_ISAL
            << " (GZIP/ZLIB shards: ISA-L at levels 1-3, zlib above)"
#else
            << " (GZIP/ZLIB shards: zlib; built without ISA-L)"
#endif
            << "\n"
            << "  hashes   md5, sha1, sha224, sha256, sha384, sha512, sha3_*, xxh32, xxh64, xxh128\n";
}

// After the command: what it printed must have reached standard output
// (`sedpack info DS > /dev/full` is a failure, not a success with the output lost).
int CheckStdout(int code) {
  std::cout.flush();
  const bool failed = !std::cout || std::fflush(stdout) != 0 || std::ferror(stdout);
  if (!failed) return code;
  std::cerr << "sedpack: cannot write to standard output: " << std::strerror(errno ? errno : EIO) << "\n";
  return code == kExitOk || code == kExitProblems ? kExitFailure : code;
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
  if (command == "help" && argc >= 3) {
    // `sedpack help CMD` is `sedpack CMD --help`.
    const Subcommand* c = FindCommand(argv[2]);
    if (!c) return UnknownCommand(argv[2]);
    return CheckStdout(c->run({"--help"}));
  }
  if (command == "--help" || command == "-h" || command == "help") {
    PrintUsage(std::cout);
    return CheckStdout(kExitOk);
  }
  if (command == "--version" || command == "version") {
    PrintVersion();
    return CheckStdout(kExitOk);
  }
  // Hidden: the documents generated from the option tables at build time.
  if (command == "--dump-options") return CheckStdout(PrintOptionTables(std::cout));
  if (command == "--dump-completion") return CheckStdout(PrintBashCompletion(std::cout));
  if (command == "--dump-man") return CheckStdout(PrintManPage(std::cout));
  const std::vector<std::string> args(argv + 2, argv + argc);
  if (const Subcommand* c = FindCommand(command)) {
    if (c->spec->mpi == MpiMode::kSerial) {
      if (auto code = SerialCommandGuard(command)) return *code;
    }
    if (c->writes) InstallInterruptHandlers(command);
    return CheckStdout(c->run(args));
  }
  if (!command.empty() && command[0] == '-') {
    return UsageError("", "unknown option '" + std::string(command) + "' (a command comes first)");
  }
  return UnknownCommand(command);
}
