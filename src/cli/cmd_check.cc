// SPDX-License-Identifier: Apache-2.0
// `sedpack check DATASET`: verify the hash tree (and optionally decode every shard).
#include <algorithm>
#include <filesystem>
#include <iostream>
#include <optional>
#include <mutex>
#include <sstream>
#include <thread>
#include <atomic>
#include <memory>

#include <nlohmann/json.hpp>

#include "cli/cli_comm.h"
#include "cli/cli_common.h"
#include "sedpack/maintain/content.h"
#include "sedpack/io/pack.h"
#include "sedpack/check/check.h"
#include "sedpack/check/report.h"
#include "sedpack/io/file.h"
#include "io/user_output_internal.h"
#include "sedpack/check/verify.h"

namespace sedpack::cli {

const CommandSpec kCheckSpec = {
    "check", "DATASET [--expect HASH... | --expect-file FILE] [--deep] [--split S]... [options]",
    "verify every checksum and count (exit 1 on problems)",
    "Verify a dataset: dataset_info.json against trusted checksums (if given), every\n"
    "shards_list.json and every shard file against the hashes recorded above it, and\n"
    "the recorded counts. Every problem is printed, not only the first.\n\n"
    "Trusted checksums are those `sedpack info DATASET --checksums` printed when the\n"
    "dataset was made: pass them with --expect (hex digests in the order of the dataset's\n"
    "hash_checksum_algorithms) or --expect-file (lines \"<hex>\" or \"<algorithm> <hex>\";\n"
    "'#' starts a comment). Without them, dataset_info.json itself is trusted.\n"
    "--deep also decodes every shard and checks its examples against the schema;\n"
    "a dataset without a fresh checks sidecar (.sedpack-hpc/checks.bin) gets one,\n"
    "from the shards whose recorded hashes matched (for fast verified reads).\n"
    "Problems go to stdout as \"ERROR <kind> <path>: <message>\" (orphan files and very\n"
    "large shards_list.json files, over 64 MiB or 100,000 entries, as WARNING),\n"
    "then a summary line. Exit code 0: intact, 1: problems found, 2: could not run.\n"
    "Same as `sedpack verify`; see its help for --partial, --json and --strict.\n",
    "  sedpack check ds\n"
    "      verify every hash and count\n"
    "  sedpack check ds --expect-file ds.sums --deep\n"
    "      against saved root checksums, decoding every shard\n",
    MpiMode::kParallel,
};

const CommandSpec kVerifySpec = {
    "verify", "DATASET [--expect HASH...|--expect-file FILE] [--deep] [--split S]... [--partial PATH...] [--strict] [--json [FILE]]",
    "verify a dataset in parallel (mpirun/srun) or serially",
    "Verify a dataset, serially or as every rank of an MPI job (mpirun -n N / srun\n"
    "--mpi=pmix). Rank 0 reads dataset_info.json and every shards_list.json (hashing\n"
    "them), cuts the shard files into per-rank sets balanced by bytes and scatters them;\n"
    "every rank hashes its files with every configured algorithm (and with --deep\n"
    "decodes them, and leaves a checks sidecar if none is fresh, as `check --deep`);\n"
    "rank 0 prints one report listing every problem: hash mismatches\n"
    "(path, algorithm, expected, found), missing files, malformed metadata, counts that\n"
    "do not add up, paths that escape the root, and (warnings) files no metadata lists.\n\n"
    "--partial PATH... verifies only those parts (a shards_list.json, a folder or a shard\n"
    "file), still hashing every list from the split down so the chain of hashes up to\n"
    "dataset_info.json is checked. --expect/--expect-file check dataset_info.json itself\n"
    "against checksums saved earlier (`sedpack checksums DATASET > FILE`).\n"
    "PATH may be dataset-relative (train/shards_list.json), relative to the current\n"
    "folder (ds/train/...) or absolute, as long as it lies inside DATASET.\n"
    "--json [FILE] writes the report as JSON, schema \"sedpack-hpc/verify/1\": {schema,\n"
    "dataset, ok, errors, warnings, files_checked, bytes_checked, shards_checked,\n"
    "examples_checked, seconds, problems: [{severity, kind, path, message, algorithm?,\n"
    "expected?, found?}]}. Without FILE or with - it goes to standard output (the text\n"
    "report then goes to stderr); a symbolic link, named pipe or device (/dev/stdout) is\n"
    "written through, never replaced; a regular file is replaced atomically; its folder\n"
    "must exist. Progress (bytes/s, ETA) and a final line go to stderr.\n"
    "Exit code 0: intact, 1: problems found (with --strict also warnings alone), 2: could\n"
    "not run.\n",
    "  sedpack verify ds\n"
    "      hash every file, check every count\n"
    "  mpirun -n 8 sedpack verify ds --deep --json=report.json\n"
    "      eight ranks, decoding every shard, with a JSON report\n"
    "  sedpack verify ds --partial ds/train/shards_list.json --strict\n"
    "      only the train split's list and shards; warnings fail too\n",
    MpiMode::kParallel,
};

namespace {

// A --partial PATH as the check wants it: relative to the dataset root. Paths
// that exist from the current folder (absolute, ./ds/..., ds/...) and lie inside
// the root are made relative to it; anything else is taken as dataset-relative.
Result<std::string> DatasetRelative(const std::string& root, const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path given(path);
  if (!given.is_absolute() && !PathExists(path)) return path;
  const fs::path base = WeaklyCanonical(fs::absolute(root, ec).string());
  const fs::path full = WeaklyCanonical(fs::absolute(given, ec).string());
  const fs::path rel = full.lexically_relative(base);
  if (rel.empty() || *rel.begin() == "..") {
    if (!given.is_absolute()) return path;  // e.g. "train" beside a folder named so
    return Status::InvalidArgument("--partial ", path, " is not inside the dataset ", root);
  }
  return rel == "." ? std::string(".") : rel.generic_string();
}

}  // namespace

const CommandSpec kChecksumsSpec = {
    "checksums", "DATASET",
    "print the checksums of dataset_info.json (the root of the hash tree)",
    "Print the hashes of DATASET/dataset_info.json, one \"<algorithm> <hex>\" line per\n"
    "algorithm of the dataset. Keep them somewhere safe: `sedpack verify DATASET\n"
    "--expect-file FILE` then also detects a rewritten dataset_info.json.\n\n"
    "--json: schema \"sedpack-hpc/checksums/1\": {schema, dataset, checksums:\n"
    "[{algorithm, hex}]}.\n",
    "  sedpack checksums ds > ds.sums\n"
    "      keep them\n"
    "  sedpack verify ds --expect-file ds.sums\n"
    "      later: verify a copy against them\n"
    "  sedpack checksums ds --json\n"
    "      as JSON\n",
};

namespace {

// Read an --expect-file. Named lines are reordered to the dataset's algorithm
// order, so the file may list them in any order.
Result<std::vector<std::string>> ReadExpectFile(const std::string& path, const std::string& root) {
  SEDPACK_ASSIGN_OR_RETURN(std::string text, ReadFileText(path, 1 << 20));
  std::vector<std::string> plain;
  std::vector<std::pair<HashAlgorithm, std::string>> named;
  std::istringstream lines(text);
  std::string line;
  int line_no = 0;
  while (std::getline(lines, line)) {
    ++line_no;
    if (auto hash = line.find('#'); hash != std::string::npos) line.resize(hash);
    std::istringstream words(line);
    std::vector<std::string> tokens;
    for (std::string w; words >> w;) tokens.push_back(w);
    if (tokens.empty()) continue;
    if (tokens.size() == 1) {
      plain.push_back(tokens[0]);
    } else if (tokens.size() == 2) {
      auto algo = ParseHashAlgorithm(tokens[0]);
      if (!algo.ok()) {
        return Status::InvalidArgument(path, ":", line_no, ": unknown hash algorithm \"",
                                       tokens[0], "\"");
      }
      named.emplace_back(*algo, tokens[1]);
    } else {
      return Status::InvalidArgument(path, ":", line_no,
                                     ": expected \"<hex>\" or \"<algorithm> <hex>\"");
    }
  }
  if (!plain.empty() && !named.empty()) {
    return Status::InvalidArgument(path, ": mixes lines with and without algorithm names");
  }
  if (named.empty()) {
    if (plain.empty()) return Status::InvalidArgument(path, ": no checksums in the file");
    return plain;
  }
  // The order comes from the dataset; if it cannot be opened, keep file order
  // and let the check report the mismatch.
  auto ds = Dataset::Open(root);
  if (!ds.ok()) {
    std::vector<std::string> out;
    for (auto& [a, h] : named) out.push_back(h);
    return out;
  }
  std::vector<std::string> out;
  for (HashAlgorithm a : (*ds)->info().dataset_structure.hash_checksum_algorithms) {
    auto it = std::find_if(named.begin(), named.end(), [&](const auto& p) { return p.first == a; });
    if (it == named.end()) {
      return Status::InvalidArgument(path, ": no checksum for algorithm ", HashAlgorithmName(a),
                                     ", which the dataset uses");
    }
    out.push_back(it->second);
  }
  return out;
}

}  // namespace

namespace {

// What `check` / `verify` was asked to do.
struct VerifyArgs {
  std::string root;
  CheckOptions check;
  bool progress = false;
};

// Parses and checks the command line and the dataset argument: an exit code
// when the command ends here.
std::optional<int> ParseVerifyArgs(const CommandSpec& spec, const std::vector<std::string>& args,
                                   po::variables_map& vm, VerifyArgs* parsed) {
  po::options_description options("Options");
  options.add_options()
      ("dataset", po::value<std::string>(), "dataset folder")
      ("expect", po::value<std::vector<std::string>>()->multitoken()->value_name("HASH"),
       "trusted dataset_info.json checksums, in hash_checksum_algorithms order")
      ("expect-file", po::value<std::string>()->value_name("FILE"), "file with the trusted checksums")
      ("deep", po::bool_switch(), "also decode every shard and check its examples")
      ("content", po::bool_switch(),
       "also recompute every shard's content digest and compare with .sedpack-hpc/content.json "
       "(written by `sedpack digest`; unchanged by recompress)")
      ("split,s", po::value<std::vector<std::string>>()->composing()->value_name("S"),
       "only this split; repeatable; default: all")
      ("progress", po::value<std::string>()->value_name("BOOL")->implicit_value("true"),
       "print progress on stderr (default: only when stderr is a terminal)")
      ("partial", po::value<std::vector<std::string>>()->multitoken()->value_name("PATH"),
       "only these parts: shards_list.json files, folders or shard files (inside DATASET)")
      ("strict", po::bool_switch(), "warnings fail too (exit 1)")
      ("quiet,q", po::bool_switch(), "print only problems, no summary line");
  AddJsonOption(&options);
  AddThreadsOption(&options,
                   "threads hashing and decoding per process (0 = the cores it may use; under mpirun, the rank's)");
  po::positional_options_description positional;
  positional.add("dataset", 1);
  const std::string name(spec.name);
  if (auto code = ParseCommandLine(spec, options, positional, args, &vm)) return code;
  if (!vm.count("dataset")) return UsageError(name, "missing DATASET argument");
  const std::string& root = parsed->root = vm["dataset"].as<std::string>();
  if (vm.count("expect") && vm.count("expect-file")) {
    return UsageError(name, "give --expect or --expect-file, not both");
  }

  CheckOptions& check = parsed->check;
  check.deep = vm["deep"].as<bool>();
  // A deep check reads every shard: it leaves the checks sidecar behind for
  // the verified reads that follow.
  check.record_checks = check.deep;
  if (vm.count("split")) {
    auto splits = ParseSplits(vm["split"].as<std::vector<std::string>>());
    if (!splits.ok()) return UsageError(name, splits.status().message());
    check.splits = *splits;
  }
  if (vm.count("partial")) {
    for (const std::string& p : vm["partial"].as<std::vector<std::string>>()) {
      auto rel = DatasetRelative(root, p);
      if (!rel.ok()) return UsageError(name, rel.status().message());
      check.partial.push_back(*rel);
    }
  }
  if (Status st = ParseThreadsOption(vm, &check.threads); !st.ok()) return UsageError(name, st.message());
  auto progress = ProgressOption(vm);  // --progress, --no-progress, -q, a terminal
  if (!progress.ok()) return UsageError(name, progress.status().message());
  parsed->progress = *progress;
  if (!PathExists(root)) return ReportError(Status::NotFound("no such dataset folder: ", root), /*input_stage=*/true);
  // A dataset_info.json that does not parse is a damaged dataset (exit 1).
  if (auto opened = OpenDatasetArg(root); !opened.ok()) {
    return ReportError(opened.status(), /*input_stage=*/true);
  } else if (Status st = RequireSplits(**opened, check.splits); !st.ok()) {
    return UsageError(name, st.message());
  }
  if (vm.count("expect")) {
    check.expected_root_checksums = vm["expect"].as<std::vector<std::string>>();
  } else if (vm.count("expect-file")) {
    auto expected = ReadExpectFile(vm["expect-file"].as<std::string>(), root);
    if (!expected.ok()) return ReportError(expected.status(), /*input_stage=*/true);
    check.expected_root_checksums = *expected;
  }
  return std::nullopt;
}

// The progress line: until the end the total is an estimate (recorded shards x mean size).
// The bytes a whole check hashes, estimated from the folder (the files under
// the checked splits' folders: shards and their lists), walked on a thread of
// its own while the check runs. The engine's own estimate (the mean size of
// the files hashed so far times the recorded shard count) starts from the
// small shards_list.json files, and put "3.92 kB of about 4.70 kB" on a 30 MB
// dataset.
class CheckedBytesEstimate {
 public:
  CheckedBytesEstimate(const std::string& root, const DatasetInfo& info, const std::vector<Split>& splits) {
    std::vector<std::filesystem::path> dirs;
    for (const auto& [split, entry] : info.splits) {
      if (splits.empty() || std::find(splits.begin(), splits.end(), split) != splits.end()) {
        dirs.push_back(std::filesystem::path(root) / SplitName(split));
      }
    }
    thread_ = std::thread([this, dirs] {
      std::uint64_t total = 0;
      for (const auto& dir : dirs) {
        std::error_code ec;
        for (auto it = std::filesystem::recursive_directory_iterator(
                 dir, std::filesystem::directory_options::skip_permission_denied, ec);
             !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
          if (stop_.load(std::memory_order_relaxed)) return;
          const std::string file = it->path().filename().string();
          if (file.starts_with(".")) {  // temporary files, sidecars
            if (it->is_directory(ec)) it.disable_recursion_pending();
            continue;
          }
          std::error_code size_ec;
          if (it->is_regular_file(size_ec)) {
            const std::uintmax_t size = it->file_size(size_ec);
            if (!size_ec) total += size;
          }
        }
      }
      total_.store(total, std::memory_order_relaxed);
      done_.store(true, std::memory_order_release);
    });
  }
  ~CheckedBytesEstimate() {
    stop_ = true;
    thread_.join();
  }
  /// The estimate, nullopt until the walk is over.
  std::optional<std::uint64_t> total() const {
    if (!done_.load(std::memory_order_acquire)) return std::nullopt;
    return total_.load(std::memory_order_relaxed);
  }

 private:
  std::atomic<bool> stop_{false}, done_{false};
  std::atomic<std::uint64_t> total_{0};
  std::thread thread_;
};

// "verify: 1.20 MB of about 30.1 MB (7 shard files), 80 MB/s, ETA 0.4s": the
// bytes hashed so far against `estimate` (CheckedBytesEstimate); without one
// (a partial check has the exact total in `p`) the engine's total if exact.
std::string VerifyProgressLine(const std::string& name, const VerifyProgress& p,
                               std::optional<std::uint64_t> estimate, bool partial) {
  std::optional<std::uint64_t> total;
  if (partial || p.bytes_total == p.bytes_done) total = p.bytes_total;
  if (estimate) total = std::max(*estimate, p.bytes_done);
  std::string line = name + ": " + FormatBytes(static_cast<double>(p.bytes_done));
  if (total) {
    line += std::string(" of ") + (*total > p.bytes_done ? "about " : "") + FormatBytes(static_cast<double>(*total));
  }
  line += " (" + std::to_string(p.files_total) + " shard files)";
  if (p.seconds > 0) {
    const double rate = p.bytes_done / p.seconds;
    line += ", " + FormatBytes(rate) + "/s";
    if (total && rate > 0 && *total > p.bytes_done) {
      line += ", ETA " + FormatDuration((*total - p.bytes_done) / rate);
    }
  }
  return line;
}

void PrintVerifySummary(std::ostream& text, const CheckReport& report, double s, int ranks, bool deep) {
  const std::size_t errors = report.error_count();
  const std::size_t warnings = report.problems.size() - errors;
  text << "checked " << report.files_checked << " files ("
            << FormatBytes(static_cast<double>(report.bytes_checked)) << ") in "
            << FormatDuration(s) << ", " << report.shards_checked << " shards";
  if (ranks > 1) text << ", " << ranks << " ranks";
  if (deep) text << ", " << report.examples_checked << " examples decoded";
  text << ": ";
  if (errors == 0) {
    text << "OK";
  } else {
    text << errors << " error" << (errors == 1 ? "" : "s");
  }
  if (warnings) text << ", " << warnings << " warning" << (warnings == 1 ? "" : "s");
  text << "\n";
}

void PrintContentCheck(std::ostream& text, const ContentCheck& content) {
  for (const ContentMismatch& m : content.mismatches) {
    text << "ERROR content " << m.path << ": "
              << (m.expected.empty() ? "no recorded content digest" : "content digest expected " + m.expected)
              << ", found " << m.found << "\n";
  }
  for (const std::string& p : content.unlisted) {
    text << "ERROR content " << p << ": has a recorded digest but is not in the dataset\n";
  }
  text << "content id " << content.current_id
            << (content.ok() ? " matches the recorded one" : " differs from the recorded " + content.recorded_id)
            << (content.sidecar_stale ? " (digests recorded for an earlier dataset_info.json)" : "") << "\n";
}

int RunVerifyCommand(const CommandSpec& spec, const std::vector<std::string>& args) {
  po::variables_map vm;
  VerifyArgs parsed;
  if (auto code = ParseVerifyArgs(spec, args, vm, &parsed)) return *code;
  const std::string name(spec.name);
  const std::string& root = parsed.root;
  const CheckOptions& check = parsed.check;
  const bool progress = parsed.progress;

  auto started = StartComm();
  if (!started.ok()) return ReportError(started.status());
  CliComm& cc = **started;
  const bool root_rank = cc.is_root();
  const std::string json_path = vm.count("json") ? vm["json"].as<std::string>() : "";
  // `--json -`: standard output holds only the JSON, the text report goes to stderr.
  const bool json_to_stdout = json_path == "-";
  if (vm.count("json")) {
    // A bad --json path (a folder, a missing folder) fails now, not after hours
    // of hashing. Rank 0 writes the report, so its answer counts for every rank.
    Status usable;
    std::string exit_code;  // empty: usable
    if (root_rank) {
      usable = CheckUserOutput(json_path).WithPrefix("--json: ");
      if (!usable.ok()) exit_code = std::to_string(ExitCodeFor(usable, /*input_stage=*/true));
    }
    if (Status st = cc.comm().Bcast(&exit_code, 0); !st.ok()) return ReportError(st);
    if (!exit_code.empty()) return root_rank ? ReportError(usable, /*input_stage=*/true) : std::stoi(exit_code);
  }
  ProgressPrinter printer(progress && root_rank);
  const auto start = std::chrono::steady_clock::now();
  VerifyOptions verify;
  verify.check = check;
  std::unique_ptr<CheckedBytesEstimate> estimate;
  const bool partial = !check.partial.empty();
  if (printer.enabled() && !partial && std::filesystem::is_directory(root)) {
    if (auto opened = OpenDatasetArg(root); opened.ok()) {
      estimate = std::make_unique<CheckedBytesEstimate>(root, (*opened)->info(), check.splits);
    }
  }
  if (printer.enabled()) {
    verify.progress = [&](const VerifyProgress& p) {
      printer.Update(VerifyProgressLine(name, p, estimate ? estimate->total() : std::nullopt, partial));
    };
  }
  auto report = VerifyDataset(cc.comm(), root, verify);
  estimate.reset();
  if (printer.enabled() && report.ok()) {
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const std::string checked = FormatBytes(static_cast<double>(report->bytes_checked));
    printer.Update(name + ": done, " + checked + " of " + checked + " in " +
                       FormatDuration(s) + ", " + FormatBytes(report->bytes_checked / std::max(s, 1e-9)) + "/s",
                   /*force=*/true);
  }
  printer.Finish();
  if (!report.ok()) {
    if (!root_rank) return ExitCodeFor(report.status(), /*input_stage=*/true);
    return ReportError(report.status(), /*input_stage=*/true);
  }
  std::optional<ContentCheck> content;
  if (vm["content"].as<bool>()) {
    auto c = CheckContentDigests(cc.comm(), root);
    if (!c.ok()) {
      if (!root_rank) return ExitCodeFor(c.status(), /*input_stage=*/true);
      return ReportError(c.status(), /*input_stage=*/true);
    }
    content = std::move(c).value();
  }
  if (!root_rank) return kExitOk;  // rank 0 prints the one report
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (vm.count("json")) {
    Status st = WriteUserOutput(json_path, CheckReportToJson(*report, root, seconds, JsonSchemaName("verify")));
    if (!st.ok()) return ReportError(st.WithPrefix("--json: "));
  }
  std::ostream& text = json_to_stdout ? std::cerr : std::cout;
  text << CheckProblemsToText(*report);
  const std::size_t warnings = report->problems.size() - report->error_count();
  if (!vm["quiet"].as<bool>()) {
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    PrintVerifySummary(text, *report, s, cc.comm().size(), check.deep);
  }
  if (content) PrintContentCheck(text, *content);
  const bool content_ok = !content || content->ok();
  text << std::flush;
  const bool strict_ok = !vm["strict"].as<bool>() || warnings == 0;
  return report->ok() && content_ok && strict_ok ? kExitOk : kExitProblems;
}

}  // namespace

int RunCheck(const std::vector<std::string>& args) { return RunVerifyCommand(kCheckSpec, args); }
int RunVerify(const std::vector<std::string>& args) { return RunVerifyCommand(kVerifySpec, args); }

int RunChecksums(const std::vector<std::string>& args) {
  po::options_description options("Options");
  options.add_options()("dataset", po::value<std::string>(), "dataset folder");
  AddJsonOption(&options);
  po::positional_options_description positional;
  positional.add("dataset", 1);
  po::variables_map vm;
  if (auto code = ParseCommandLine(kChecksumsSpec, options, positional, args, &vm)) return *code;
  if (!vm.count("dataset")) return UsageError("checksums", "missing DATASET argument");
  auto ds = OpenDatasetArg(vm["dataset"].as<std::string>());
  if (!ds.ok()) return ReportError(ds.status(), /*input_stage=*/true);
  auto sums = (*ds)->MetadataChecksums();
  if (!sums.ok()) return ReportError(sums.status());
  const auto& algos = (*ds)->info().dataset_structure.hash_checksum_algorithms;
  if (algos.empty()) {
    std::cerr << "sedpack: the dataset has no hash algorithms (hash_checksum_algorithms is empty)\n";
    return kExitUsage;
  }
  if (const auto json = JsonOption(vm)) {
    nlohmann::json list = nlohmann::json::array();
    for (std::size_t i = 0; i < algos.size() && i < sums->size(); ++i) {
      list.push_back({{"algorithm", HashAlgorithmName(algos[i])}, {"hex", (*sums)[i]}});
    }
    const nlohmann::json doc = {{"schema", JsonSchemaName("checksums")}, {"dataset", (*ds)->root()}, {"checksums", list}};
    if (Status st = WriteJsonOutput(*json, doc.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n"); !st.ok()) return ReportError(st);
    if (*json == "-") return kExitOk;
  }
  for (std::size_t i = 0; i < algos.size(); ++i) {
    std::cout << HashAlgorithmName(algos[i]) << " " << (*sums)[i] << "\n";
  }
  return kExitOk;
}

}  // namespace sedpack::cli
