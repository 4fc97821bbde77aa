// SPDX-License-Identifier: Apache-2.0
// Shared pieces of the `sedpack` tool: exit codes, option parsing, error
// printing, progress lines. Private to src/cli.
#pragma once

#include <boost/program_options.hpp>

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "sedpack/dataset/dataset.h"
#include "sedpack/status.h"
#include "sedpack/types.h"

namespace sedpack::cli {

namespace po = boost::program_options;

/// Exit codes of the sedpack tool. Scripts rely on them: do not renumber.
enum ExitCode : int {
  kExitOk = 0,        ///< success (`check`: the dataset is intact)
  kExitProblems = 1,  ///< `check` found problems (corrupt, missing or miscounted files)
  kExitUsage = 2,     ///< usage or input error: bad option, missing/invalid config, not a dataset
  kExitFailure = 3,   ///< runtime or I/O failure while working
  kExitNotBuilt = 4,  ///< feature not built in or not supported yet (MPI, ...)
  // 128 + the signal number when a writing command was interrupted by SIGINT
  // (130) or SIGTERM (143) and undid what it had not committed.
  kExitSigint = 130,
  kExitSigterm = 143,
};

/// Install the SIGINT/SIGTERM handlers of the writing commands: the handler only
/// requests cancellation (sedpack/cancel.h); the work stops at its next check,
/// cleans up, and the command exits 130/143 with one "interrupted" line.
/// `command` names the command in that line.
void InstallInterruptHandlers(std::string_view command);

/// True if `status` is the failure of interrupted work: a kCancelled status, or
/// any failure once cancellation was requested (a system call the signal broke
/// off may fail with EINTR before a cancellation check is reached).
bool IsInterrupted(const Status& status);

/// Print the one "sedpack <command>: interrupted (SIGTERM); nothing was
/// committed" line (on rank 0 only under MPI) and return 128 + the signal.
int ReportInterrupted();

/// This process's rank under MPI (StartComm sets it); 0 otherwise. Used so that
/// a line every rank would print is printed once.
void SetReportingRank(int rank);

/// The exit-code table as printed by `sedpack --help`.
std::string_view ExitCodeHelp();

/// Exit code for a failed Status. `input_stage`: the failure happened while
/// opening the user's input (config, dataset), so malformed content is a usage
/// error (2) rather than a runtime failure (3).
int ExitCodeFor(const Status& status, bool input_stage = false);

/// Print "sedpack: <status>" to stderr and return ExitCodeFor(status, input_stage).
int ReportError(const Status& status, bool input_stage = false);

/// Print "sedpack <command>: <message>" and a --help hint to stderr; return kExitUsage.
int UsageError(std::string_view command, std::string_view message);

/// Describes one subcommand's command line.
struct CommandSpec {
  std::string_view name;     ///< "info"
  std::string_view usage;    ///< "DATASET [options]"
  std::string_view brief;    ///< one short line, for the list in `sedpack --help`
  std::string_view details;  ///< paragraphs printed by `sedpack <name> --help`
};

/// Parse `args` (after the subcommand name) into `vm`. `--help` is added to
/// `options`. Returns an exit code when the command must stop (help printed: 0;
/// bad usage: 2, message printed), nullopt to go on.
std::optional<int> ParseCommandLine(const CommandSpec& spec, po::options_description options,
                                    const po::positional_options_description& positional,
                                    const std::vector<std::string>& args, po::variables_map* vm);

/// Open a dataset named on the command line with clear messages for a missing
/// folder or a folder that is not a dataset.
Result<std::shared_ptr<Dataset>> OpenDatasetArg(const std::string& path);

/// Parse split names (each "train", "test" or "holdout").
Result<std::vector<Split>> ParseSplits(const std::vector<std::string>& names);

/// Parse a non-negative decimal integer option value ("-1", "1x", "" are errors
/// naming `option`, e.g. "--seed").
Result<std::uint64_t> ParseUInt(std::string_view text, std::string_view option);
/// The --threads option, if given, into `*threads` (0 = all cores, at most 4096);
/// usage errors name the option. Leaves `*threads` alone when it is absent.
Status ParseThreadsOption(const po::variables_map& vm, int* threads);
/// Help text of the --level option (the levels of every codec and the defaults).
std::string LevelOptionHelp(std::string_view config_key);
/// The --level option, if given, into `*level` (a decimal integer, negative
/// allowed; the range is the codec's, checked later). Leaves `*level` alone
/// when it is absent.
Status ParseLevelOption(const po::variables_map& vm, int* level);
/// Parse a finite decimal number.
Result<double> ParseDouble(std::string_view text, std::string_view option);
/// Parse true/false/1/0/yes/no/on/off.
Result<bool> ParseBool(std::string_view text, std::string_view option);

/// The options every job command offers to override its config's
/// dataset_structure: --compression, --examples-per-shard, --shard-file-type,
/// --hash-algorithms.
void AddStructureOptions(po::options_description* options);
/// Apply those options (usage errors name the option).
Status ApplyStructureOverrides(const po::variables_map& vm, DatasetStructure* structure);

/// "12.3 MB", "1.50 GB" (decimal units).
std::string FormatBytes(double bytes);
/// "1h02m03s", "4m05s", "7.2s".
std::string FormatDuration(double seconds);

/// True if file descriptor 2 is a terminal.
bool StderrIsTty();

/// Throttled progress lines on stderr: on a terminal one line rewritten in
/// place (at most a few times per second), otherwise a new line at most once
/// a second. Does nothing unless enabled.
class ProgressPrinter {
 public:
  explicit ProgressPrinter(bool enabled);
  ~ProgressPrinter();
  bool enabled() const { return enabled_; }
  /// Print `line` if enough time passed since the last one (always if `force`).
  void Update(const std::string& line, bool force = false);
  /// End the in-place line (newline on a terminal), if anything was printed.
  void Finish();

 private:
  bool enabled_;
  bool tty_;
  bool printed_ = false;
  std::size_t last_len_ = 0;
  std::chrono::steady_clock::time_point last_;
};

// Subcommands: each returns the process exit code.
int RunInfo(const std::vector<std::string>& args);
int RunLs(const std::vector<std::string>& args);
int RunCheck(const std::vector<std::string>& args);
int RunVerify(const std::vector<std::string>& args);
int RunChecksums(const std::vector<std::string>& args);
int RunFix(const std::vector<std::string>& args);
int RunCat(const std::vector<std::string>& args);
int RunGenerate(const std::vector<std::string>& args);
int RunImportHdf5(const std::vector<std::string>& args);
int RunRecompress(const std::vector<std::string>& args);
int RunStats(const std::vector<std::string>& args);
int RunDigest(const std::vector<std::string>& args);
int RunPack(const std::vector<std::string>& args);
int RunUnpack(const std::vector<std::string>& args);
int RunInspectHdf5(const std::vector<std::string>& args);
int RunIndex(const std::vector<std::string>& args);
int RunGet(const std::vector<std::string>& args);

/// The subcommand table, in the order `sedpack --help` lists it.
struct Subcommand {
  const CommandSpec* spec;
  int (*run)(const std::vector<std::string>& args);
  /// The command writes (a dataset, a sidecar, a pack): SIGINT/SIGTERM cancel
  /// it cleanly (InstallInterruptHandlers) instead of killing it.
  bool writes = false;
};
std::span<const Subcommand> Subcommands();

extern const CommandSpec kInfoSpec;
extern const CommandSpec kLsSpec;
extern const CommandSpec kCheckSpec;
extern const CommandSpec kVerifySpec;
extern const CommandSpec kChecksumsSpec;
extern const CommandSpec kFixSpec;
extern const CommandSpec kCatSpec;
extern const CommandSpec kGenerateSpec;
extern const CommandSpec kImportHdf5Spec;
extern const CommandSpec kRecompressSpec;
extern const CommandSpec kStatsSpec;
extern const CommandSpec kDigestSpec;
extern const CommandSpec kPackSpec;
extern const CommandSpec kUnpackSpec;
extern const CommandSpec kInspectHdf5Spec;
extern const CommandSpec kIndexSpec;
extern const CommandSpec kGetSpec;

}  // namespace sedpack::cli
