// SPDX-License-Identifier: Apache-2.0
#include "cli/cli_common.h"

#include "sedpack/io/pack.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>

#include "sedpack/cancel.h"
#include "sedpack/codecs/compress.h"
#include "sedpack/codecs/hash.h"
#include "sedpack/comm/comm.h"
#include "sedpack/io/file.h"
#include "io/user_output_internal.h"

namespace sedpack::cli {
namespace {

std::string g_command;  // for the "interrupted" line
int g_rank = 0;

extern "C" void OnInterruptSignal(int signal_number) {
  // Nothing else is safe here: the work notices the flag at its next check.
  RequestCancellation(signal_number);
}

}  // namespace

void InstallInterruptHandlers(std::string_view command) {
  g_command = command;
  struct sigaction sa {};
  sa.sa_handler = &OnInterruptSignal;
  sigemptyset(&sa.sa_mask);
  // No SA_RESTART: a blocking call (a read, a wait) returns EINTR, so that a
  // thread blocked in one notices the request without waiting for the call.
  sa.sa_flags = 0;
  ::sigaction(SIGINT, &sa, nullptr);
  ::sigaction(SIGTERM, &sa, nullptr);
}

bool IsInterrupted(const Status& status) {
  return !status.ok() && (IsCancelled(status) || CancellationRequested());
}

void SetReportingRank(int rank) { g_rank = rank; }

namespace {
bool g_resumable = false;
std::string g_kept = "the finished shards";
}  // namespace
void SetResumableJob(bool resumable, std::string_view kept) {
  g_resumable = resumable;
  g_kept = kept;
}

int ReportInterrupted() {
  const int sig = CancellationSignal() != 0 ? CancellationSignal() : SIGINT;
  if (g_rank == 0) {
    const char* name = sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : nullptr;
    // One write, so that mpirun does not interleave it with other ranks' output.
    const std::string line = "sedpack" + (g_command.empty() ? "" : " " + g_command) + ": interrupted (" +
                             (name ? std::string(name) : "signal " + std::to_string(sig)) +
                             "); nothing was committed" +
                             (g_resumable ? "; " + g_kept + " are kept: run the same command again to resume"
                                          : std::string()) +
                             "\n";
    std::cerr << line << std::flush;
  }
  return 128 + sig;
}

std::string_view ExitCodeHelp() {
  return "Exit codes (the same for every command):\n"
         "  0  success (verify: the dataset is intact)\n"
         "  1  dataset problems found: corrupt or inconsistent data, a hash mismatch,\n"
         "     a garbled dataset_info.json or shards_list.json\n"
         "  2  usage or config error (bad option, invalid config, not a dataset, absent split)\n"
         "  3  runtime or I/O failure (also a failed write to standard output)\n"
         "  4  feature not built in or not supported yet (e.g. MPI, HDF5)\n"
         "  130, 143  interrupted by SIGINT or SIGTERM; nothing uncommitted is visible: a\n"
         "            resumable job keeps its finished work for the same command to\n"
         "            resume (--restart discards it), any other removes it\n";
}

int ExitCodeFor(const Status& status, bool input_stage) {
  if (IsInterrupted(status)) return 128 + (CancellationSignal() != 0 ? CancellationSignal() : SIGINT);
  // Metadata (or a link in the tree) leading outside the dataset root: the
  // dataset is unsafe to follow, what `verify` reports as a problem (1).
  if (status.detail() == StatusDetail::kOutsideRoot || status.detail() == StatusDetail::kPathEscape) {
    return kExitProblems;
  }
  switch (status.code()) {
    case StatusCode::kOk:
      return kExitOk;
    case StatusCode::kInvalidArgument:
    case StatusCode::kAlreadyExists:
      return kExitUsage;
    case StatusCode::kNotFound:
      // The user named something that is not there (2), or a file the
      // metadata lists has gone (the dataset is inconsistent: 1).
      return input_stage ? kExitUsage : kExitProblems;
    case StatusCode::kNotImplemented:
      return kExitNotBuilt;
    case StatusCode::kCorruption:
      // Corrupt data, whoever finds it: a hash mismatch, a shard that does not
      // decode, a dataset_info.json that does not parse (OpenDatasetArg). The
      // same fault gives the same code in `cat`, `stats` and `verify`.
      return kExitProblems;
    case StatusCode::kIOError:
    case StatusCode::kInternal:
    case StatusCode::kResourceExhausted:
    case StatusCode::kCancelled:
      return kExitFailure;
  }
  return kExitFailure;
}

int ExitCodeForData(const Status& status) {
  switch (status.code()) {
    case StatusCode::kInvalidArgument:
    case StatusCode::kNotFound:
    case StatusCode::kCorruption:
      if (!IsInterrupted(status)) return kExitProblems;
      break;
    default:
      break;
  }
  return ExitCodeFor(status, /*input_stage=*/false);
}

int ReportDataError(const Status& status) {
  const int code = ExitCodeForData(status);
  if (IsInterrupted(status)) return ReportInterrupted();
  std::cerr << "sedpack: " << status.ToString() << "\n";
  return code;
}

int ReportError(const Status& status, bool input_stage) {
  if (IsInterrupted(status)) return ReportInterrupted();
  std::cerr << "sedpack: " << status.ToString() << "\n";
  if (status.code() == StatusCode::kNotImplemented) {
    std::cerr << "sedpack: (this build does not support it; see `sedpack --version`)\n";
  }
  return ExitCodeFor(status, input_stage);
}

int UsageError(std::string_view command, std::string_view message) {
  std::cerr << "sedpack";
  if (!command.empty()) std::cerr << " " << command;
  std::cerr << ": " << message << "\n";
  std::cerr << "Try 'sedpack " << (command.empty() ? "" : std::string(command) + " ")
            << "--help' for more information.\n";
  return kExitUsage;
}

namespace {

// Set while CollectCommandOptions runs the commands' parsers: each records its
// option table here and returns at once.
std::vector<CommandOptions>* g_collect = nullptr;

std::vector<std::string> PositionalNames(const po::positional_options_description& positional) {
  std::vector<std::string> names;
  const unsigned n = std::min(positional.max_total_count(), 16u);
  for (unsigned i = 0; i < n; ++i) {
    const std::string& name = positional.name_for_position(i);
    if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
  }
  return names;
}

// The options a user sees: positional arguments are in the synopsis, not here.
po::options_description VisibleOptions(const po::options_description& options,
                                       const std::vector<std::string>& positional) {
  po::options_description visible("Options");
  for (const auto& o : options.options()) {
    if (std::find(positional.begin(), positional.end(), o->long_name()) != positional.end()) continue;
    visible.add(o);
  }
  return visible;
}

OptionRow RowOf(const po::option_description& o) {
  OptionRow row;
  row.long_name = o.long_name();
  // format_name() is "-s [ --split ]" when there is a short name, "--split" otherwise.
  const std::string shown = o.format_name();
  if (shown.size() >= 2 && shown[0] == '-' && shown[1] != '-') row.short_name = shown.substr(1, 1);
  const auto semantic = o.semantic();
  if (semantic->max_tokens() > 0) {
    // boost decorates the name: "[=FILE(=-)]" (implicit value), "S (=train)" (default).
    std::string name = semantic->name();
    if (name.starts_with("[=")) name = name.substr(2, name.find_first_of("(]") - 2);
    if (const auto d = name.find(" (="); d != std::string::npos) name.resize(d);
    row.value_name = name;
    row.value_optional = semantic->min_tokens() == 0;
  }
  row.description = o.description();
  return row;
}

// Edit distance (optimal string alignment: a swap of neighbours costs 1).
std::size_t EditDistance(std::string_view a, std::string_view b) {
  std::vector<std::vector<std::size_t>> d(a.size() + 1, std::vector<std::size_t>(b.size() + 1));
  for (std::size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (std::size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
  }
  return d[a.size()][b.size()];
}

// Rewrite deprecated spellings (with a note) and a bare `--json` to `--json=-`.
std::vector<std::string> PrepareArgs(const CommandSpec& spec, const std::vector<std::string>& args) {
  std::vector<std::string> out;
  out.reserve(args.size());
  for (std::size_t i = 0; i < args.size(); ++i) {
    std::string a = args[i];
    if (a == "--") {  // the rest are positional
      out.insert(out.end(), args.begin() + static_cast<std::ptrdiff_t>(i), args.end());
      break;
    }
    for (const DeprecatedOption& d : spec.deprecated) {
      if (a == d.old_name || (a.starts_with(d.old_name) && a.size() > d.old_name.size() &&
                              a[d.old_name.size()] == '=')) {
        std::cerr << "sedpack " << spec.name << ": " << d.old_name << " is deprecated, use " << d.replacement
                  << " (the old spelling goes away in the next release)\n";
        a = std::string(d.replacement) + a.substr(d.old_name.size());
      }
    }
    if (a == "--json") {
      // A bare --json is a flag: the JSON goes to standard output, and the
      // next argument is never taken as its FILE (`sedpack info --json ds`
      // is ds's JSON); a file is named with --json=FILE. Two older spellings
      // still work: `--json -`, and for one release `--json F.json` (a name
      // ending in .json that is not a folder), with a deprecation note.
      if (i + 1 < args.size()) {
        const std::string& next = args[i + 1];
        std::error_code ec;
        if (next == "-") {
          out.push_back("--json=-");
          ++i;
          continue;
        }
        if (next.size() > 5 && next[0] != '-' && next.ends_with(".json") &&
            !std::filesystem::is_directory(next, ec)) {
          std::cerr << "sedpack " << spec.name << ": --json FILE is deprecated, use --json=" << next
                    << " (a bare --json will not take the next argument as its file in the next release)\n";
          out.push_back("--json=" + next);
          ++i;
          continue;
        }
      }
      out.push_back("--json=-");
      continue;
    }
    out.push_back(std::move(a));
  }
  return out;
}

void PrintCommandHelp(const CommandSpec& spec, const po::options_description& visible) {
  std::cout << "Usage: sedpack " << spec.name << " " << spec.usage << "\n\n" << spec.details;
  std::cout << "\n" << visible << "\n";
  if (!spec.examples.empty()) std::cout << "Examples:\n" << spec.examples << "\n";
  if (spec.mpi == MpiMode::kParallel) {
    std::cout << "MPI: parallel. Under mpirun/srun every rank takes part; rank 0 prints the output.\n\n";
  } else {
    std::cout << "MPI: serial. Under mpirun/srun with several ranks only rank 0 runs it.\n\n";
  }
  std::cout << ExitCodeHelp();
}

}  // namespace

std::string ClosestMatch(std::string_view word, const std::vector<std::string>& candidates) {
  std::string best;
  std::size_t best_distance = SIZE_MAX;
  for (const std::string& c : candidates) {
    if (c.empty()) continue;
    std::size_t d = EditDistance(word, c);
    // A typed prefix ("--dee" for "--deep") is close whatever its length.
    if (word.size() >= 2 && c.starts_with(word)) d = std::min<std::size_t>(d, 1);
    if (d < best_distance) {
      best_distance = d;
      best = c;
    }
  }
  const std::size_t limit = std::max<std::size_t>(1, std::min<std::size_t>(3, word.size() / 3));
  return best_distance <= limit ? best : std::string();
}

std::optional<int> ParseCommandLine(const CommandSpec& spec, po::options_description options,
                                    const po::positional_options_description& positional,
                                    const std::vector<std::string>& args, po::variables_map* vm) {
  // Every command with --progress also has --no-progress.
  if (options.find_nothrow("progress", false) && !options.find_nothrow("no-progress", false)) {
    options.add_options()("no-progress", po::bool_switch(), "no progress on stderr, not even on a terminal");
  }
  options.add_options()("help,h", "show this help and exit");
  const std::vector<std::string> positional_names = PositionalNames(positional);
  const po::options_description visible = VisibleOptions(options, positional_names);
  if (g_collect) {
    CommandOptions c;
    c.spec = &spec;
    for (const auto& o : visible.options()) c.options.push_back(RowOf(*o));
    g_collect->push_back(std::move(c));
    return kExitOk;
  }
  // No guessing: "--dee" must not silently mean "--deep" (a later option
  // "--deed" would change what old scripts do).
  const int style = po::command_line_style::default_style & ~po::command_line_style::allow_guessing;
  try {
    po::store(po::command_line_parser(PrepareArgs(spec, args))
                  .options(options)
                  .positional(positional)
                  .style(style)
                  .run(),
              *vm);
    if (vm->count("help")) {
      PrintCommandHelp(spec, visible);
      return kExitOk;
    }
    po::notify(*vm);
  } catch (const po::unknown_option& e) {
    std::string typed = e.get_option_name();
    std::vector<std::string> names;
    for (const auto& o : visible.options()) names.push_back("--" + o->long_name());
    std::string message = "unknown option '" + typed + "'";
    if (typed.starts_with("--")) {
      if (const std::string near = ClosestMatch(typed.substr(0, typed.find('=')), names); !near.empty()) {
        message += "; did you mean '" + near + "'?";
      }
    }
    return UsageError(spec.name, message);
  } catch (const po::too_many_positional_options_error&) {
    return UsageError(spec.name, "too many arguments (usage: sedpack " + std::string(spec.name) + " " +
                                     std::string(spec.usage) + ")");
  } catch (const po::error& e) {
    return UsageError(spec.name, e.what());
  } catch (const std::exception& e) {
    return UsageError(spec.name, e.what());
  }
  return std::nullopt;
}

std::vector<CommandOptions> CollectCommandOptions() {
  std::vector<CommandOptions> out;
  g_collect = &out;
  for (const Subcommand& c : Subcommands()) {
    const std::size_t before = out.size();
    (void)c.run({"--help"});
    if (out.size() == before) out.push_back(CommandOptions{c.spec, {}});  // a command not built in
    out.back().spec = c.spec;
  }
  g_collect = nullptr;
  return out;
}

Result<std::shared_ptr<Dataset>> OpenDatasetArg(const std::string& path) {
  if (!PathExists(path)) return Status::NotFound("no such dataset folder: ", path);
  const bool pack = PackReader::IsPack(path);  // a packed dataset (sedpack pack)
  if (!pack && !PathExists(JoinRoot(path, "dataset_info.json"))) {
    return Status::InvalidArgument(path, " is not a sedpack dataset (it has no dataset_info.json)");
  }
  auto ds = Dataset::Open(path);
  // The folder is a dataset, but its dataset_info.json does not parse or does
  // not make sense: the dataset is damaged, not the command line.
  if (!ds.ok() && ds.status().code() == StatusCode::kInvalidArgument) {
    return Status(StatusCode::kCorruption, ds.status().message(), ds.status().detail());
  }
  return ds;
}

Status RequireSplits(const Dataset& ds, const std::vector<Split>& splits) {
  for (Split s : splits) {
    if (ds.info().FindSplit(s) != nullptr) continue;
    std::string have;
    for (const auto& [split, sli] : ds.info().splits) have += (have.empty() ? "" : ", ") + std::string(SplitName(split));
    return Status::InvalidArgument("the dataset has no split ", SplitName(s), " (it has ",
                                   have.empty() ? std::string("none") : have, ")");
  }
  return Status::OK();
}

void AddSplitOption(po::options_description* options, std::string_view help, bool repeatable) {
  if (repeatable) {
    options->add_options()("split,s", po::value<std::vector<std::string>>()->composing()->value_name("S"),
                           std::string(help).c_str());
  } else {
    options->add_options()("split,s", po::value<std::string>()->value_name("S"), std::string(help).c_str());
  }
}

Result<std::vector<Split>> SplitsOption(const po::variables_map& vm) {
  if (!vm.count("split")) return std::vector<Split>{};
  std::vector<std::string> names;
  if (const auto* many = boost::any_cast<std::vector<std::string>>(&vm["split"].value())) {
    names = *many;
  } else {
    names.push_back(vm["split"].as<std::string>());
  }
  return ParseSplits(names);
}

void AddOutputOption(po::options_description* options, std::string_view help, std::string_view value_name) {
  options->add_options()("out,o", po::value<std::string>()->value_name(std::string(value_name)),
                         std::string(help).c_str());
}

void AddThreadsOption(po::options_description* options, std::string_view help) {
  options->add_options()("threads,j", po::value<std::string>()->value_name("N"), std::string(help).c_str());
}

void AddProgressOption(po::options_description* options) {
  options->add_options()("progress", po::value<std::string>()->value_name("BOOL")->implicit_value("true"),
                         "progress on stderr, with a final line (default: when stderr is a terminal, unless -q or "
                         "--no-progress)");
}

Result<bool> ProgressOption(const po::variables_map& vm, bool hint) {
  const bool off = vm.count("no-progress") && vm["no-progress"].as<bool>();
  if (vm.count("progress")) {
    SEDPACK_ASSIGN_OR_RETURN(const bool on, ParseBool(vm["progress"].as<std::string>(), "--progress"));
    if (off && on) return Status::InvalidArgument("--no-progress cannot be used with --progress");
    return on;
  }
  if (off || QuietOption(vm)) return false;
  return hint || StderrIsTty();
}

void AddQuietOption(po::options_description* options) {
  options->add_options()("quiet,q", po::bool_switch(), "no summary on standard output, only errors");
}

bool QuietOption(const po::variables_map& vm) { return vm.count("quiet") && vm["quiet"].as<bool>(); }

void AddJournalOptions(po::options_description* options) {
  options->add_options()
      ("resumable", po::bool_switch(),
       "the default: journal finished shards, so that the same command run again after a stop (signal, kill, "
       "full disk) keeps them and writes only the rest")
      ("no-journal", po::bool_switch(),
       "all or nothing: a stopped job removes what it wrote (the output as it was before)")
      ("restart", po::bool_switch(), "throw away an earlier run's journal and shards first");
}

Result<JournalChoice> JournalOptions(const po::variables_map& vm) {
  JournalChoice c;
  const bool off = vm.count("no-journal") && vm["no-journal"].as<bool>();
  c.restart = vm.count("restart") && vm["restart"].as<bool>();
  if (off && (c.restart || (vm.count("resumable") && vm["resumable"].as<bool>()))) {
    return Status::InvalidArgument("--no-journal cannot be used with ", c.restart ? "--restart" : "--resumable");
  }
  c.resumable = !off;
  SetResumableJob(c.resumable);
  return c;
}

std::string MappingDigest(const po::variables_map& vm, std::initializer_list<const char*> options) {
  std::string text = vm.count("config") ? ReadFileText(vm["config"].as<std::string>()).ValueOr("") : "";
  for (const char* o : options) {
    if (!vm.count(o)) continue;
    const auto& v = vm[o].value();
    if (const auto* str = boost::any_cast<std::string>(&v)) {
      text += std::string("\n--") + o + "=" + *str;
    } else if (const auto* on = boost::any_cast<bool>(&v); on && *on) {
      text += std::string("\n--") + o;
    }
  }
  auto digest = HashBytes(std::vector<HashAlgorithm>{HashAlgorithm::kSha256},
                          std::as_bytes(std::span<const char>(text.data(), text.size())));
  return digest.ok() ? (*digest)[0].substr(0, 16) : "?";
}

void AddJsonOption(po::options_description* options) {
  options->add_options()("json", po::value<std::string>()->value_name("FILE")->implicit_value("-"),
                         "the report as JSON: --json alone prints it on standard output instead of the text; "
                         "--json=FILE writes it into FILE");
}

std::optional<std::string> JsonOption(const po::variables_map& vm) {
  if (!vm.count("json")) return std::nullopt;
  return vm["json"].as<std::string>();
}

Status WriteJsonOutput(const std::string& target, const std::string& text) {
  if (target == "-") {
    std::cout << text << std::flush;
    if (!std::cout) return Status::IOError("cannot write to standard output");
    return Status::OK();
  }
  return WriteUserOutput(target, text).WithPrefix("--json: ");
}

std::string JsonSchemaName(std::string_view command, int version) {
  return "sedpack-hpc/" + std::string(command) + "/" + std::to_string(version);
}

std::string CodecList(std::optional<ShardFileType> type) {
  std::string out;
  for (Compression c : {Compression::kNone, Compression::kGzip, Compression::kZlib, Compression::kBz2,
                        Compression::kLzma, Compression::kLz4, Compression::kZstd, Compression::kZip}) {
    if (type ? !CompressionAllowed(*type, c) : false) continue;
    if (!out.empty()) out += ", ";
    out += c == Compression::kNone ? std::string("none") : std::string(CompressionName(c));
  }
  return out;
}

Result<Compression> ParseCodecArg(std::string_view text, std::optional<ShardFileType> type,
                                  std::string_view option) {
  std::string upper(text);
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  auto parsed = ParseCompression(upper == "NONE" ? std::string() : upper);
  if (!parsed.ok()) {
    return Status::InvalidArgument("option ", option, ": unknown codec \"", text, "\" (",
                                   type ? std::string(ShardFileTypeName(*type)) + " shards take: " : std::string(),
                                   CodecList(type), ")");
  }
  if (type && !CompressionAllowed(*type, *parsed)) {
    return Status::InvalidArgument("option ", option, ": ", *parsed == Compression::kNone ? "none" : upper,
                                   " does not fit ", ShardFileTypeName(*type), " shards (they take: ",
                                   CodecList(type), ")");
  }
  return *parsed;
}

std::optional<int> SerialCommandGuard(std::string_view command) {
  if (!LaunchedUnderMpi()) return std::nullopt;
  int rank = 0;
  for (const char* var : {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK", "SLURM_PROCID"}) {
    if (const char* v = std::getenv(var); v && *v) {
      rank = std::atoi(v);
      break;
    }
  }
  if (rank != 0) return kExitOk;
  std::cerr << "sedpack " << command << ": a serial command; of the several MPI ranks only rank 0 runs it\n";
  return std::nullopt;
}

Result<std::vector<Split>> ParseSplits(const std::vector<std::string>& names) {
  std::vector<Split> out;
  for (const std::string& n : names) {
    auto s = ParseSplit(n);
    if (!s.ok()) {
      return Status::InvalidArgument("unknown split \"", n, "\" (splits are train, test, holdout)");
    }
    if (std::find(out.begin(), out.end(), *s) == out.end()) out.push_back(*s);
  }
  return out;
}

Result<std::uint64_t> ParseUInt(std::string_view text, std::string_view option) {
  std::uint64_t v = 0;
  const char* end = text.data() + text.size();
  auto [p, ec] = std::from_chars(text.data(), end, v);
  if (text.empty() || ec != std::errc() || p != end) {
    return Status::InvalidArgument("option ", option, ": expected a non-negative integer, got \"",
                                   text, "\"");
  }
  return v;
}

Result<double> ParseDouble(std::string_view text, std::string_view option) {
  double v = 0;
  const char* end = text.data() + text.size();
  auto [p, ec] = std::from_chars(text.data(), end, v);
  if (text.empty() || ec != std::errc() || p != end || !std::isfinite(v)) {
    return Status::InvalidArgument("option ", option, ": expected a number, got \"", text, "\"");
  }
  return v;
}

Result<bool> ParseBool(std::string_view text, std::string_view option) {
  if (text == "true" || text == "1" || text == "yes" || text == "on") return true;
  if (text == "false" || text == "0" || text == "no" || text == "off") return false;
  return Status::InvalidArgument("option ", option, ": expected true or false, got \"", text, "\"");
}

Status ParseThreadsOption(const po::variables_map& vm, int* threads) {
  if (!vm.count("threads")) return Status::OK();
  SEDPACK_ASSIGN_OR_RETURN(std::uint64_t n, ParseUInt(vm["threads"].as<std::string>(), "--threads"));
  if (n > 4096) return Status::InvalidArgument("option --threads: at most 4096");
  *threads = static_cast<int>(n);
  return Status::OK();
}

std::string LevelOptionHelp(std::string_view config_key) {
  std::string text = "compression level (a job option, not stored in the dataset); default per codec:";
  for (Compression c : {Compression::kGzip, Compression::kBz2, Compression::kLzma, Compression::kLz4,
                        Compression::kZstd}) {
    auto r = CodecLevels(c);
    if (!r.ok()) continue;
    text += " " + std::string(CompressionName(c)) + " " + std::to_string(r->min) + ".." +
            std::to_string(r->max) + " (" + std::to_string(r->default_level) + ")";
    if (c == Compression::kGzip) text += " [" + std::string(r->note) + "]";
    text += c == Compression::kZstd ? "" : ",";
  }
  if (!config_key.empty()) text += " (" + std::string(config_key) + ")";
  return text;
}

Status ParseLevelOption(const po::variables_map& vm, int* level) {
  if (!vm.count("level")) return Status::OK();
  const std::string& text = vm["level"].as<std::string>();
  const bool negative = !text.empty() && text[0] == '-';
  SEDPACK_ASSIGN_OR_RETURN(std::uint64_t n,
                           ParseUInt(std::string_view(text).substr(negative ? 1 : 0), "--level"));
  if (n > 1000) return Status::InvalidArgument("option --level: ", text, " is not a compression level");
  *level = negative ? -static_cast<int>(n) : static_cast<int>(n);
  return Status::OK();
}

void AddStructureOptions(po::options_description* options) {
  options->add_options()
      ("compression", po::value<std::string>()->value_name("NAME"),
       "shard codec, any case: none, GZIP, ZLIB, BZ2, LZMA, LZ4, ZSTD (fb), none, ZIP (npz), none, GZIP, ZLIB (tfrec) (dataset_structure.compression)")
      ("examples-per-shard", po::value<std::string>()->value_name("N"), "(dataset_structure.examples_per_shard)")
      ("shard-file-type", po::value<std::string>()->value_name("TYPE"), "fb, npz or tfrec (dataset_structure.shard_file_type)")
      ("hash-algorithms", po::value<std::string>()->value_name("LIST"),
       "comma-separated, e.g. sha256,xxh64 (dataset_structure.hash_checksum_algorithms)");
}

Status ApplyStructureOverrides(const po::variables_map& vm, DatasetStructure* structure) {
  if (vm.count("compression")) {
    // Checked against the shard type (given or from the config) below.
    SEDPACK_ASSIGN_OR_RETURN(structure->compression, ParseCodecArg(vm["compression"].as<std::string>(), std::nullopt));
  }
  if (vm.count("examples-per-shard")) {
    SEDPACK_ASSIGN_OR_RETURN(std::uint64_t n,
                             ParseUInt(vm["examples-per-shard"].as<std::string>(), "--examples-per-shard"));
    if (n < 1 || n > static_cast<std::uint64_t>(INT64_MAX)) {
      return Status::InvalidArgument("option --examples-per-shard: must be >= 1");
    }
    structure->examples_per_shard = static_cast<std::int64_t>(n);
  }
  if (vm.count("shard-file-type")) {
    auto type = ParseShardFileType(vm["shard-file-type"].as<std::string>());
    if (!type.ok()) return type.status().WithPrefix("option --shard-file-type: ");
    structure->shard_file_type = *type;
  }
  if (vm.count("compression")) {
    SEDPACK_RETURN_NOT_OK(ParseCodecArg(vm["compression"].as<std::string>(), structure->shard_file_type).status());
  }
  if (vm.count("hash-algorithms")) {
    std::vector<HashAlgorithm> algos;
    std::stringstream ss(vm["hash-algorithms"].as<std::string>());
    for (std::string name; std::getline(ss, name, ',');) {
      if (name.empty()) continue;
      auto a = ParseHashAlgorithm(name);
      if (!a.ok()) return a.status().WithPrefix("option --hash-algorithms: ");
      algos.push_back(*a);
    }
    structure->hash_checksum_algorithms = algos;
  }
  return Status::OK();
}

std::string FormatBytes(double bytes) {
  static const char* kUnits[] = {"B", "kB", "MB", "GB", "TB", "PB"};
  int u = 0;
  while (bytes >= 1000.0 && u < 5) {
    bytes /= 1000.0;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof(buf), u == 0 ? "%.0f %s" : (bytes < 10 ? "%.2f %s" : "%.1f %s"), bytes,
                kUnits[u]);
  return buf;
}

std::string FormatDuration(double seconds) {
  char buf[32];
  if (!(seconds >= 0) || seconds > 1e8) return "?";
  if (seconds < 60) {
    std::snprintf(buf, sizeof(buf), "%.1fs", seconds);
  } else if (seconds < 3600) {
    const auto s = static_cast<long>(seconds);
    std::snprintf(buf, sizeof(buf), "%ldm%02lds", s / 60, s % 60);
  } else {
    const auto s = static_cast<long>(seconds);
    std::snprintf(buf, sizeof(buf), "%ldh%02ldm%02lds", s / 3600, (s / 60) % 60, s % 60);
  }
  return buf;
}

bool StderrIsTty() { return ::isatty(STDERR_FILENO) == 1; }

ProgressPrinter::ProgressPrinter(bool enabled) : enabled_(enabled), tty_(StderrIsTty()) {}

ProgressPrinter::~ProgressPrinter() { Finish(); }

void ProgressPrinter::Update(const std::string& line, bool force) {
  if (!enabled_) return;
  const auto now = std::chrono::steady_clock::now();
  const auto interval = tty_ ? std::chrono::milliseconds(250) : std::chrono::milliseconds(1000);
  if (printed_ && !force && now - last_ < interval) return;
  last_ = now;
  if (tty_) {
    // Pad with spaces to wipe a longer previous line without terminal escapes.
    std::string out = "\r" + line;
    if (line.size() < last_len_) out.append(last_len_ - line.size(), ' ');
    last_len_ = line.size();
    std::cerr << out << std::flush;
  } else {
    std::cerr << line << "\n" << std::flush;
  }
  printed_ = true;
}

std::string ShardPassLine(std::string_view what, const ShardPassProgress& p) {
  char buf[240];
  std::snprintf(buf, sizeof(buf), "%.*s: %s of %s (%.1f%%) in %llu shards, %s/s", static_cast<int>(what.size()),
                what.data(), FormatBytes(static_cast<double>(p.bytes_done)).c_str(),
                FormatBytes(static_cast<double>(p.bytes_total)).c_str(),
                p.bytes_total ? 100.0 * static_cast<double>(p.bytes_done) / static_cast<double>(p.bytes_total) : 100.0,
                static_cast<unsigned long long>(p.shards_total),
                FormatBytes(p.seconds > 0 ? static_cast<double>(p.bytes_done) / p.seconds : 0).c_str());
  return buf;
}

void ProgressPrinter::Finish() {
  if (enabled_ && tty_ && printed_) std::cerr << "\n" << std::flush;
  printed_ = false;
  last_len_ = 0;
}

}  // namespace sedpack::cli
