// SPDX-License-Identifier: Apache-2.0
// Shared pieces of the `sedpack` tool: exit codes, option parsing, error
// printing, progress lines. Private to src/cli.
#pragma once

#include <boost/program_options.hpp>

#include <chrono>
#include <initializer_list>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "sedpack/dataset/dataset.h"
#include "sedpack/maintain/shard_pass.h"
#include "sedpack/status.h"
#include "sedpack/types.h"

namespace sedpack::cli {

namespace po = boost::program_options;

/// Exit codes of the sedpack tool, one table for every command. Scripts rely on
/// them: do not renumber.
enum ExitCode : int {
  kExitOk = 0,        ///< success (`verify`: the dataset is intact)
  kExitProblems = 1,  ///< dataset problems: corrupt or inconsistent data, garbled metadata
  kExitUsage = 2,     ///< usage or config error: bad option, invalid config, not a dataset, absent split
  kExitFailure = 3,   ///< runtime or I/O failure while working (also a failed write to stdout)
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
/// A resumable job: ReportInterrupted says that the finished work is kept,
/// naming it as `kept` does ("the finished shards", "the exported row ranges").
void SetResumableJob(bool resumable, std::string_view kept = "the finished shards");

/// The exit-code table as printed by `sedpack --help`.
std::string_view ExitCodeHelp();

/// Exit code for a failed Status: kInvalidArgument and kAlreadyExists are usage
/// errors (2); kCorruption (a corrupt shard, a hash mismatch, garbled metadata)
/// is a dataset problem (1); kIOError, kInternal, kResourceExhausted are
/// failures (3); kNotImplemented is 4. kNotFound is a usage error when
/// `input_stage` (the user named something that is not there) and a dataset
/// problem otherwise (a file the metadata lists is gone).
int ExitCodeFor(const Status& status, bool input_stage = false);

/// Exit code for a failure while working on a dataset that opened and with
/// arguments already checked: whatever is wrong now is in the data, so
/// kInvalidArgument (a shards_list.json that does not parse, counts that do
/// not add up) and kNotFound (a listed file is gone) are dataset problems (1)
/// like kCorruption; other codes as ExitCodeFor.
int ExitCodeForData(const Status& status);

/// Print "sedpack: <status>" to stderr and return ExitCodeFor(status, input_stage).
int ReportError(const Status& status, bool input_stage = false);
/// Print "sedpack: <status>" to stderr and return ExitCodeForData(status).
int ReportDataError(const Status& status);

/// Print "sedpack <command>: <message>" and a --help hint to stderr; return kExitUsage.
int UsageError(std::string_view command, std::string_view message);

/// An option spelling that scripts may still use for one release: it is
/// rewritten to `replacement` with a deprecation note on stderr.
struct DeprecatedOption {
  std::string_view old_name;     ///< "--output"
  std::string_view replacement;  ///< "--out"
};

/// How a command behaves under mpirun/srun (stated in its help).
enum class MpiMode {
  kSerial,    ///< under several ranks only rank 0 runs it; the others exit 0
  kParallel,  ///< every rank takes part
};

/// Describes one subcommand's command line.
struct CommandSpec {
  std::string_view name;     ///< "info"
  std::string_view usage;    ///< "DATASET [options]"
  std::string_view brief;    ///< one short line, for the list in `sedpack --help`
  std::string_view details;  ///< paragraphs printed by `sedpack <name> --help`
  /// Lines "sedpack info ds\n    what it shows\n", printed under "Examples:".
  std::string_view examples = {};
  MpiMode mpi = MpiMode::kSerial;
  std::span<const DeprecatedOption> deprecated = {};
};

/// Parse `args` (after the subcommand name) into `vm`. `--help` is added to
/// `options`. Options are never guessed from a prefix; an unknown option gets a
/// "did you mean" when one is close. A bare `--json` is a flag (standard
/// output) and never takes the next argument; a file is `--json=FILE` (`--json -`
/// and, deprecated, `--json F.json` still work). Returns an
/// exit code when the command must stop (help printed: 0; bad usage: 2, message
/// printed), nullopt to go on.
std::optional<int> ParseCommandLine(const CommandSpec& spec, po::options_description options,
                                    const po::positional_options_description& positional,
                                    const std::vector<std::string>& args, po::variables_map* vm);

/// One option of a command, as the help, the man page and the completion show it.
struct OptionRow {
  std::string long_name;   ///< "split"
  std::string short_name;  ///< "s" or ""
  std::string value_name;  ///< "S", "" for a switch
  bool value_optional = false;
  std::string description;
};
struct CommandOptions {
  const CommandSpec* spec = nullptr;
  std::vector<OptionRow> options;
};
/// Every command's options, collected by running each command's parser in a
/// mode where it records its table instead of parsing (no command runs).
std::vector<CommandOptions> CollectCommandOptions();
/// The closest of `candidates` to `word` (edit distance, or a prefix), "" if none is close.
std::string ClosestMatch(std::string_view word, const std::vector<std::string>& candidates);

/// Open a dataset named on the command line with clear messages for a missing
/// folder or a folder that is not a dataset. A dataset_info.json that does not
/// parse is a dataset problem (kCorruption, exit 1).
Result<std::shared_ptr<Dataset>> OpenDatasetArg(const std::string& path);

/// NotFound-style usage error (exit 2) naming the splits the dataset has, for
/// each of `splits` the dataset does not have.
Status RequireSplits(const Dataset& ds, const std::vector<Split>& splits);

// --- The shared vocabulary: every command spells these options the same way. ---

/// -s/--split S, repeatable (`repeatable` false: one split).
void AddSplitOption(po::options_description* options, std::string_view help, bool repeatable = true);
/// The --split values (empty if none was given); usage errors name the option.
Result<std::vector<Split>> SplitsOption(const po::variables_map& vm);
/// -o/--out PATH.
void AddOutputOption(po::options_description* options, std::string_view help, std::string_view value_name = "OUT");
/// -j/--threads N (0 = all cores); read it with ParseThreadsOption.
void AddThreadsOption(po::options_description* options, std::string_view help = "threads per rank, 0 = all cores");
/// --progress[=BOOL]: progress on stderr (default: when stderr is a terminal).
/// ParseCommandLine adds --no-progress to every command that has --progress.
void AddProgressOption(po::options_description* options);
/// Whether progress is wanted: --progress=BOOL if given (a usage error with
/// --no-progress), else none with --no-progress or -q/--quiet, else `hint` (a
/// config's "progress") or whether stderr is a terminal.
Result<bool> ProgressOption(const po::variables_map& vm, bool hint = false);
/// -q/--quiet: no summary on stdout, only errors.
void AddQuietOption(po::options_description* options);
bool QuietOption(const po::variables_map& vm);
/// --resumable (the default, still accepted), --no-journal, --restart of the
/// writing commands that journal their finished shards.
void AddJournalOptions(po::options_description* options);
struct JournalChoice {
  bool resumable = true;  ///< journal finished shards; a stopped job keeps them
  bool restart = false;   ///< throw an earlier run's journal and shards away first
};
/// The choice of AddJournalOptions (a usage error names the clashing options);
/// also tells ReportInterrupted whether the finished work is kept.
Result<JournalChoice> JournalOptions(const po::variables_map& vm);
/// What identifies a job's mapping for its journal: a digest of the --config
/// file's text (if given) and of the `options` given on the command line.
std::string MappingDigest(const po::variables_map& vm, std::initializer_list<const char*> options);
/// --json[=FILE]: the report as JSON (standard output for a bare --json or -, else FILE).
void AddJsonOption(po::options_description* options);
/// The --json target ("-" for standard output), nullopt without --json.
std::optional<std::string> JsonOption(const po::variables_map& vm);
/// Write a JSON document (text, newline-terminated) to a --json target: "-" is
/// standard output; a file is replaced atomically (see io/user_output_internal.h).
Status WriteJsonOutput(const std::string& target, const std::string& text);
/// "sedpack-hpc/<command>/<version>", the "schema" field of every --json document.
std::string JsonSchemaName(std::string_view command, int version = 1);

/// A codec name from the command line: case-insensitive, "none" (or "") for no
/// compression. With `type`, a codec that this shard type cannot use is a usage
/// error listing the ones it can.
Result<Compression> ParseCodecArg(std::string_view text, std::optional<ShardFileType> type,
                                  std::string_view option = "--compression");
/// "none, GZIP, ZLIB, ..." (the codecs `type` allows; all when nullopt).
std::string CodecList(std::optional<ShardFileType> type);

/// For a serial command started as one of several MPI ranks (mpirun/srun,
/// detected from the launcher's environment without starting MPI): rank 0 goes
/// on (nullopt), every other rank returns kExitOk at once.
std::optional<int> SerialCommandGuard(std::string_view command);

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

/// "<what>: 12.3 MB of 45.6 MB (27.0%) in 9 shards, 80.1 MB/s": a progress line
/// of a pass over every shard (stats, digest).
std::string ShardPassLine(std::string_view what, const ShardPassProgress& p);

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
int RunExportHdf5(const std::vector<std::string>& args);
int RunReport(const std::vector<std::string>& args);

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
extern const CommandSpec kExportHdf5Spec;
extern const CommandSpec kReportSpec;

}  // namespace sedpack::cli
