// SPDX-License-Identifier: Apache-2.0
#include "cli/cli_common.h"

#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <iostream>

#include "sedpack/io/file.h"

namespace sedpack::cli {

std::string_view ExitCodeHelp() {
  return "Exit codes:\n"
         "  0  success (check: the dataset is intact)\n"
         "  1  check found problems in the dataset\n"
         "  2  usage or input error (bad option, missing or invalid config, not a dataset)\n"
         "  3  runtime or I/O failure\n"
         "  4  feature not built in or not supported yet (e.g. MPI)\n";
}

int ExitCodeFor(const Status& status, bool input_stage) {
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
      // A config or dataset_info.json that does not parse is bad input; a shard
      // that turns out corrupt in the middle of the work is a runtime failure.
      return input_stage ? kExitUsage : kExitFailure;
    case StatusCode::kIOError:
    case StatusCode::kInternal:
    case StatusCode::kResourceExhausted:
      return kExitFailure;
  }
  return kExitFailure;
}

int ReportError(const Status& status, bool input_stage) {
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
