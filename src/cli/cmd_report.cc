// SPDX-License-Identifier: Apache-2.0
// `sedpack report DATASET -o report.html [--snr EXPR]... [--json [FILE]]`.
#include <charconv>
#include <cstdio>
#include <iostream>

#include "cli/cli_comm.h"
#include "cli/cli_common.h"
#include "io/user_output_internal.h"
#include "sedpack/report/report.h"

namespace sedpack::cli {

const CommandSpec kReportSpec = {
    "report", "DATASET -o report.html [--snr EXPR]... [options]",
    "one HTML page with statistics, mean traces, histograms and SNR plots",
    "Read every shard of the splits given (default: all) once, hashes checked, and\n"
    "write one self-contained HTML page (inline CSS and SVG, no script, no external\n"
    "reference; per-sample curves are decimated to a min/max pair per pixel column, so\n"
    "80,000-sample traces stay small): the metadata, the schema, the splits (examples,\n"
    "shards, bytes, codec ratio), histograms of examples and bytes per shard, the\n"
    "shards' custom_metadata keys and value counts; per numeric attribute the exact\n"
    "min/max/mean/std (as `sedpack stats`), for 1-D attributes of more than 16\n"
    "elements the per-sample mean with a std band and the min/max envelope, for small\n"
    "8/16-bit integer attributes a value histogram.\n\n"
    "--snr EXPR (repeatable) adds the signal-to-noise ratio per sample of the trace\n"
    "(--trace, default: the first 1-D attribute of more than 16 elements) for the\n"
    "class label EXPR: var over classes of the class means / mean over classes of\n"
    "the class variances; classes of fewer than 2 examples are skipped and named.\n"
    "EXPR: ATTR[i] (element i; ATTR alone for a one-element attribute), integers\n"
    "(decimal or 0x..), a ^ b (xor), sbox(x) (AES S-box), hw(x) (Hamming weight),\n"
    "parentheses; ATTR must have an integer dtype.\n\n"
    "--max-samples N limits the per-sample curves and the SNR to the first N samples\n"
    "(the statistics still cover everything). Under mpirun/srun the shards are\n"
    "spread over the ranks and the sums merged in rank order (integer data: the same\n"
    "bits for any rank count; float data: equal to about 1e-12 relative); rank 0\n"
    "writes. Memory does not grow with the number of examples (per thread: 40 bytes\n"
    "per sample, plus 16 bytes per sample and class for each --snr).\n\n"
    "--json: schema \"sedpack-hpc/report/1\": {schema, dataset, description, attributes,\n"
    "splits: [{split, examples, shards, bytes, decoded_bytes, codec_ratio,\n"
    "examples_per_shard, bytes_per_shard, attributes: [as stats], profiles,\n"
    "histograms, custom_metadata}], snr: {expression, attribute, split, samples,\n"
    "peak_sample, peak, median, classes, skipped_classes} (the first --snr on the\n"
    "first split, null without --snr), snrs: [every --snr on every split]}.\n",
    "  sedpack report ds -o report.html\n"
    "      the page for every split\n"
    "  sedpack report ds -o r.html -s train --snr 'hw(sbox(plaintext[0]^key[0]))'\n"
    "      with the SNR of the first SubBytes output byte's Hamming weight\n"
    "  mpirun -n 4 sedpack report ds -o r.html --snr 'hw(plaintext[0]^key[0])' --json -\n"
    "      four ranks; the numbers as JSON on standard output\n",
    MpiMode::kParallel,
};

namespace {

Result<std::uint64_t> ParseCount(const std::string& text, std::string_view option) {
  std::uint64_t n = 0;
  const auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (ec != std::errc() || p != text.data() + text.size()) {
    return Status::InvalidArgument(option, ": expected a non-negative integer, got \"", text, "\"");
  }
  return n;
}

// Rank 0 checks an output path before the pass; every rank gets its answer.
std::optional<int> CheckOutput(CliComm& cc, const std::string& path, std::string_view option) {
  Status usable;
  std::string code;
  if (cc.is_root()) {
    usable = CheckUserOutput(path).WithPrefix(std::string(option) + ": ");
    if (!usable.ok()) code = std::to_string(ExitCodeFor(usable, /*input_stage=*/true));
  }
  if (Status st = cc.comm().Bcast(&code, 0); !st.ok()) return ReportError(st);
  if (code.empty()) return std::nullopt;
  return cc.is_root() ? ReportError(usable, /*input_stage=*/true) : std::stoi(code);
}

void PrintSummary(const Report& r, const std::string& out, std::size_t html_bytes, std::FILE* to) {
  if (!out.empty()) std::fprintf(to, "wrote %s (%zu bytes)\n", out.c_str(), html_bytes);
  for (const SplitReport& s : r.splits) {
    std::fprintf(to, "split %s: %llu examples in %zu shards\n", std::string(SplitName(s.split)).c_str(),
                 static_cast<unsigned long long>(s.stats.examples), s.shards.size());
    for (const SnrCurve& c : s.snrs) {
      if (c.peak_sample < 0) {
        std::fprintf(to, "  snr %s: fewer than 2 classes of 2 examples\n", c.expression.c_str());
      } else {
        std::fprintf(to, "  snr %s: peak %.6g at sample %lld (median %.3g, %zu classes)\n", c.expression.c_str(),
                     c.peak, static_cast<long long>(c.peak_sample), c.median, c.classes.size());
      }
    }
  }
}

}  // namespace

int RunReport(const std::vector<std::string>& args) {
  po::options_description options("Options");
  options.add_options()("dataset", po::value<std::string>()->value_name("DATASET"), "dataset folder");
  AddOutputOption(&options, "the HTML page to write", "report.html");
  AddSplitOption(&options, "train, test or holdout; repeatable; default: every split");
  options.add_options()("snr", po::value<std::vector<std::string>>()->value_name("EXPR"),
                        "SNR of the class label EXPR, e.g. 'hw(sbox(plaintext[0]^key[0]))'; repeatable")(
      "trace", po::value<std::string>()->value_name("ATTR"), "the attribute the SNR is computed over")(
      "max-samples", po::value<std::string>()->value_name("N"), "per-sample curves of the first N samples only");
  AddThreadsOption(&options);
  AddProgressOption(&options);
  AddJsonOption(&options);
  po::positional_options_description positional;
  positional.add("dataset", 1);
  po::variables_map vm;
  if (auto code = ParseCommandLine(kReportSpec, options, positional, args, &vm)) return *code;
  if (!vm.count("dataset")) return UsageError("report", "missing DATASET");
  const auto json = JsonOption(vm);
  const std::string out = vm.count("out") ? vm["out"].as<std::string>() : "";
  if (out.empty() && !json) return UsageError("report", "missing -o report.html (or --json)");
  ReportOptions ro;
  auto splits = SplitsOption(vm);
  if (!splits.ok()) return UsageError("report", splits.status().message());
  ro.splits = *splits;
  if (vm.count("snr")) ro.snr = vm["snr"].as<std::vector<std::string>>();
  if (vm.count("trace")) ro.snr_attribute = vm["trace"].as<std::string>();
  if (vm.count("max-samples")) {
    auto n = ParseCount(vm["max-samples"].as<std::string>(), "--max-samples");
    if (!n.ok()) return UsageError("report", n.status().message());
    ro.max_samples = *n;
  }
  if (Status st = ParseThreadsOption(vm, &ro.pass.threads); !st.ok()) return UsageError("report", st.message());
  auto progress = ProgressOption(vm);
  if (!progress.ok()) return UsageError("report", progress.status().message());
  const std::string root = vm["dataset"].as<std::string>();
  auto opened = OpenDatasetArg(root);
  if (!opened.ok()) return ReportError(opened.status(), /*input_stage=*/true);
  if (Status st = RequireSplits(**opened, ro.splits); !st.ok()) return UsageError("report", st.message());
  for (const std::string& e : ro.snr) {
    if (auto parsed = SnrExpression::Parse(e, (*opened)->schema()); !parsed.ok()) {
      return UsageError("report", parsed.status().message());
    }
  }
  auto started = StartComm();
  if (!started.ok()) return ReportError(started.status());
  CliComm& cc = **started;
  if (!out.empty()) {
    if (auto code = CheckOutput(cc, out, "-o")) return *code;
  }
  if (json && *json != "-") {
    if (auto code = CheckOutput(cc, *json, "--json")) return *code;
  }
  ProgressPrinter printer(cc.is_root() && *progress);
  if (printer.enabled()) {
    ro.pass.progress = [&printer](const ShardPassProgress& p) { printer.Update(ShardPassLine("report", p), p.finished); };
  }
  auto report = BuildReport(cc.comm(), root, ro);
  printer.Finish();
  if (!report.ok()) {
    // A bad --trace or too many classes is the user's; the rest is the data's.
    const bool usage = report.status().code() == StatusCode::kInvalidArgument;
    if (usage && cc.is_root()) return UsageError("report", report.status().message());
    return cc.ReportFailure(report.status(), /*input_stage=*/false);
  }
  if (!cc.is_root()) return kExitOk;
  std::string html;
  if (!out.empty()) {
    html = ReportToHtml(*report);
    if (Status st = WriteUserOutput(out, html); !st.ok()) return ReportError(st);
  }
  if (json) {
    if (Status st = WriteJsonOutput(*json, ReportToJson(*report)); !st.ok()) return ReportError(st);
  }
  PrintSummary(*report, out, html.size(), json && *json == "-" ? stderr : stdout);
  return kExitOk;
}

}  // namespace sedpack::cli
