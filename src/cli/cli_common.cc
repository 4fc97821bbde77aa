// SPDX-License-Identifier: Apache-2.0
#include "cli/cli_common.h"

#include "sedpack/io/pack.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <iostream>

#include "sedpack/cancel.h"
#include "sedpack/codecs/compress.h"
#include "sedpack/io/file.h"

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

int ReportInterrupted() {
  const int sig = CancellationSignal() != 0 ? CancellationSignal() : SIGINT;
  if (g_rank == 0) {
    const char* name = sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : nullptr;
    // One write, so that mpirun does not interleave it with other ranks' output.
    const std::string line = "sedpack" + (g_command.empty() ? "" : " " + g_command) + ": interrupted (" +
                             (name ? std::string(name) : "signal " + std::to_string(sig)) +
                             "); nothing was committed\n";
    std::cerr << line << std::flush;
  }
  return 128 + sig;
}

std::string_view ExitCodeHelp() {
  return "Exit codes:\n"
         "  0  success (check: the dataset is intact)\n"
         "  1  check found problems in the dataset; a file read does not match its recorded hash\n"
         "  2  usage or input error (bad option, missing or invalid config, not a dataset)\n"
         "  3  runtime or I/O failure\n"
         "  4  feature not built in or not supported yet (e.g. MPI)\n"
         "  130, 143  interrupted by SIGINT or SIGTERM; what was not committed was removed\n";
}

int ExitCodeFor(const Status& status, bool input_stage) {
  if (IsInterrupted(status)) return 128 + (CancellationSignal() != 0 ? CancellationSignal() : SIGINT);
  switch (status.code()) {
    case StatusCode::kOk:
      return kExitOk;
    case StatusCode::kInvalidArgument:
    case StatusCode::kNotFound:
    case StatusCode::kAlreadyExists:
      return kExitUsage;
    case StatusCode::kNotImplemented:
      return kExitNotBuilt;
    case StatusCode::kCorruption:
      // A file that does not match the hash its metadata records is corrupt
      // data, what `verify` reports with exit 1; a reader finding it says the same.
      if (status.detail() == StatusDetail::kHashMismatch) return kExitProblems;
      // A config or dataset_info.json that does not parse is bad input; a shard
      // that turns out corrupt in the middle of the work is a runtime failure.
      return input_stage ? kExitUsage : kExitFailure;
    case StatusCode::kIOError:
    case StatusCode::kInternal:
    case StatusCode::kResourceExhausted:
    case StatusCode::kCancelled:
      return kExitFailure;
  }
  return kExitFailure;
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

std::optional<int> ParseCommandLine(const CommandSpec& spec, po::options_description options,
                                    const po::positional_options_description& positional,
                                    const std::vector<std::string>& args, po::variables_map* vm) {
  options.add_options()("help,h", "show this help and exit");
  try {
    po::store(po::command_line_parser(args).options(options).positional(positional).run(), *vm);
    if (vm->count("help")) {
      std::cout << "Usage: sedpack " << spec.name << " " << spec.usage << "\n\n"
                << spec.details;
      std::cout << "\n" << options << "\n" << ExitCodeHelp();
      return kExitOk;
    }
    po::notify(*vm);
  } catch (const po::error& e) {
    return UsageError(spec.name, e.what());
  } catch (const std::exception& e) {
    return UsageError(spec.name, e.what());
  }
  return std::nullopt;
}

Result<std::shared_ptr<Dataset>> OpenDatasetArg(const std::string& path) {
  if (!PathExists(path)) return Status::NotFound("no such dataset folder: ", path);
  if (PackReader::IsPack(path)) return Dataset::Open(path);  // a packed dataset (sedpack pack)
  if (!PathExists(JoinRoot(path, "dataset_info.json"))) {
    return Status::InvalidArgument(path, " is not a sedpack dataset (it has no dataset_info.json)");
  }
  return Dataset::Open(path);
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
       "shard compression: none, GZIP, ZLIB, BZ2, LZMA, LZ4, ZSTD (dataset_structure.compression)")
      ("examples-per-shard", po::value<std::string>()->value_name("N"), "(dataset_structure.examples_per_shard)")
      ("shard-file-type", po::value<std::string>()->value_name("TYPE"), "fb, npz or tfrec (dataset_structure.shard_file_type)")
      ("hash-algorithms", po::value<std::string>()->value_name("LIST"),
       "comma-separated, e.g. sha256,xxh64 (dataset_structure.hash_checksum_algorithms)");
}

Status ApplyStructureOverrides(const po::variables_map& vm, DatasetStructure* structure) {
  if (vm.count("compression")) {
    // "none" is accepted as a spelling of the reference's "".
    const std::string t = vm["compression"].as<std::string>();
    auto comp = ParseCompression(t == "none" ? std::string() : t);
    if (!comp.ok()) return comp.status().WithPrefix("option --compression: ");
    structure->compression = *comp;
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

void ProgressPrinter::Finish() {
  if (enabled_ && tty_ && printed_) std::cerr << "\n" << std::flush;
  printed_ = false;
  last_len_ = 0;
}

}  // namespace sedpack::cli
