// SPDX-License-Identifier: Apache-2.0
// `sedpack fix DATASET`: diagnose what dead jobs and deliberate edits leave
// behind, and clean it up on request. Nothing here repairs corrupt data.
#include <functional>
#include <iostream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cli/cli_common.h"
#include "sedpack/check/check.h"
#include "sedpack/index/index.h"
#include "io/beneath.h"
#include "io/timestamp.h"
#include "sedpack/io/file.h"
#include "sedpack/maintain/content.h"
#include "sedpack/maintain/fix.h"
#include "sedpack/maintain/recompress.h"
#include "sedpack/maintain/restamp.h"
#include "dataset/commit_internal.h"
#include "sidecar/sidecar_internal.h"
#include "sedpack/dataset/commit.h"
#include "sedpack/io/pack.h"

namespace sedpack::cli {

const CommandSpec kFixSpec = {
    "fix", "DATASET [--gc [--apply]] [--remove-abandoned-jobs] [--rebuild-index] [--rewrite-digests --reason TEXT]",
    "diagnose and clean up leftovers of dead jobs; rebuild stale sidecars",
    "Without options, list what needs attention (only metadata is read, no shard is\n"
    "hashed):\n"
    "  orphan      files under the splits that no shards_list.json lists: shards of a\n"
    "              job that died before rank 0 merged it\n"
    "  temporary   temporary files of an interrupted atomic write (update_*_of_*)\n"
    "  recompress  the folder of an interrupted `sedpack recompress` beside DATASET\n"
    "  lock        a lock of a dead job (.sedpack-hpc/commit.lock or jobs/*.lock): its\n"
    "              process is gone from this host, or its heartbeat is older than 60 s;\n"
    "              a live job's lock is listed and left alone\n"
    "  sidecar     a stale or invalid sample index or content digest file\n"
    "  resumable job  the kept shards of a stopped `--resumable` job (its journal\n"
    "              .sedpack-hpc/jobs/<job>.r<rank>.journal names them): not orphans;\n"
    "              the same command run again finishes the job\n\n"
    "A commit that a killed writer left half done (.sedpack-hpc/commit-journal) is\n"
    "rolled back to the last completed commit whenever the dataset is opened, by this\n"
    "command or any other; `fix` reports when it did so.\n\n"
    "--gc removes the orphans, temporary files, stale locks and interrupted-recompress\n"
    "folder; it\n"
    "only lists them (a dry run) unless --apply is given. --remove-orphans is\n"
    "--gc --apply (kept for scripts). Listed files and metadata are never touched.\n"
    "--remove-abandoned-jobs removes the journals and kept shards of resumable jobs\n"
    "that are not running (their job lock is not held by a live process).\n"
    "--rebuild-index rewrites a stale or invalid sample index.\n"
    "--rewrite-digests --reason TEXT re-stamps every hash of the tree (shards,\n"
    "shards_list.json files, dataset_info.json) to match the bytes on disk now, after\n"
    "a deliberate external edit, and records who, when and why in\n"
    ".sedpack-hpc/audit.jsonl.\n\n"
    "None of this repairs corrupt data: a damaged shard stays damaged (run `sedpack\n"
    "verify`), and --rewrite-digests would hide damage, which is why it needs a reason\n"
    "and leaves an audit record.\n"
    "A path that leads outside the dataset root (metadata naming one, or a symbolic\n"
    "link in the tree pointing out) is listed as `unsafe`; then nothing is removed.\n"
    "Neither is anything removed while a shards_list.json cannot be read (`unreadable`):\n"
    "the files it lists would look like orphans.\n"
    "Exit code 0: done (or nothing to do), 1: unsafe or unreadable paths (nothing removed),\n"
    "2: not a dataset or bad options, 3: a file could not be removed or written.\n\n"
    "--json: schema \"sedpack-hpc/fix/1\": {schema, dataset, recovered_commit, unsafe,\n"
    "unreadable: [{path, message}], sidecars: [{path, state, message, rebuilt}],\n"
    "locks_held: [path], leftovers: [{kind, path, removed, error?}], orphans, temporary,\n"
    "leftover_bytes, applied, exit_code}.\n",
    "  sedpack fix ds\n"
    "      what needs attention (nothing is changed)\n"
    "  sedpack fix ds --gc --apply\n"
    "      remove the leftovers of dead jobs\n"
    "  sedpack fix ds --rewrite-digests --reason \"fixed a typo in custom_metadata\"\n"
    "      re-stamp the hashes after a deliberate edit (audited)\n",
};

namespace {

// What `fix` writes: the lines on `out` (standard output, or nothing with
// --json -) and the JSON document.
struct FixOutput {
  std::ostream& out;
  nlohmann::json doc;
};

void PrintRestamp(const std::string& root, const RestampSummary& s, FixOutput* o) {
  std::ostream& out = o->out;
  out << "re-stamped " << s.shards_changed << " shard hash entr" << (s.shards_changed == 1 ? "y" : "ies")
            << " and rewrote " << s.lists_changed << " shards_list.json file" << (s.lists_changed == 1 ? "" : "s")
            << "; recorded in " << SidecarPath(root, kAuditSidecarName) << "\n";
  for (std::size_t i = 0; i < s.new_root.size(); ++i) {
    out << "  dataset_info.json " << s.new_root[i] << " (was " << (i < s.old_root.size() ? s.old_root[i] : "")
              << ")\n";
  }
}

// The unsafe or unreadable paths that stop a fix; the exit code.
int PrintRefusal(const std::string& root, const DatasetDiagnosis& d, FixOutput* o) {
  auto print = [o](std::string_view kind, const CheckProblem& p) {
    std::string_view message = p.message;
    if (message.starts_with(p.path + ": ")) message.remove_prefix(p.path.size() + 2);
    o->out << kind << " " << p.path << ": " << message << "\n";
  };
  if (!d.unsafe.empty()) {
    for (const CheckProblem& p : d.unsafe) print("unsafe", p);
    std::cerr << "sedpack: " << root << " has " << d.unsafe.size() << " path" << (d.unsafe.size() == 1 ? "" : "s")
              << " leading outside the dataset root (listed above); nothing was removed or rewritten\n";
    return kExitProblems;
  }
  for (const CheckProblem& p : d.unreadable) print("unreadable", p);
  std::cerr << "sedpack: " << root << ": " << d.unreadable.size() << " metadata file"
            << (d.unreadable.size() == 1 ? "" : "s")
            << " could not be followed (listed above), so the files they list look like orphans; nothing was "
               "removed (run `sedpack verify`)\n";
  return kExitProblems;
}

void PrintSidecars(const DatasetDiagnosis& d, bool rebuild_index, FixOutput* o) {
  std::ostream& out = o->out;
  if (d.index_needs_rebuild()) {
    o->doc["sidecars"].push_back({{"path", d.index->path},
                                  {"state", IndexFreshnessName(d.index->freshness)},
                                  {"message", d.index->message},
                                  {"rebuilt", rebuild_index}});
    if (rebuild_index) {
      out << "rebuilt " << d.index->path << "\n";
    } else {
      out << "sidecar " << d.index->path << ": " << IndexFreshnessName(d.index->freshness)
                << (d.index->message.empty() ? "" : " (" + d.index->message + ")")
                << "; --rebuild-index rewrites it\n";
    }
  } else if (rebuild_index) {
    out << "the sample index is " << (d.index ? IndexFreshnessName(d.index->freshness) : "unreadable")
              << "; nothing to rebuild\n";
  }
  if (d.content == ContentSidecarState::kStale || d.content == ContentSidecarState::kInvalid) {
    o->doc["sidecars"].push_back({{"path", d.content_path},
                                  {"state", d.content == ContentSidecarState::kStale ? "stale" : "invalid"},
                                  {"message", d.content_message},
                                  {"rebuilt", false}});
  }
  if (d.content == ContentSidecarState::kStale) {
    out << "sidecar " << d.content_path
              << ": recorded for another dataset_info.json (`sedpack verify --content` compares the data; "
                 "`sedpack digest` records it anew)\n";
  } else if (d.content == ContentSidecarState::kInvalid) {
    out << "sidecar " << d.content_path << ": invalid (" << d.content_message << ")\n";
  }
}

void PrintLeftovers(const DatasetDiagnosis& d, const GarbageReport& collected, bool remove, FixOutput* o) {
  std::ostream& out = o->out;
  for (const GarbageOutcome& g : collected.outcomes) {
    const Leftover& l = g.leftover;
    nlohmann::json entry = {{"kind", LeftoverKindName(l.kind)}, {"path", l.path}, {"removed", g.removed}};
    if (!g.error.ok()) entry["error"] = g.error.message();
    o->doc["leftovers"].push_back(std::move(entry));
    if (!g.error.ok()) {
      std::cerr << "sedpack: " << g.error.message() << "\n";
    } else if (g.removed) {
      out << "removed " << LeftoverKindName(l.kind) << " " << l.path << "\n";
    } else if (l.kind == Leftover::Kind::kRecompress) {
      out << "recompress " << l.path << " (an interrupted `sedpack recompress`; the dataset is whole)\n";
    } else {
      out << LeftoverKindName(l.kind) << " " << l.path << "\n";
    }
  }
  const std::size_t n_orphans = d.count(Leftover::Kind::kOrphan), n_temp = d.count(Leftover::Kind::kTemporary);
  if (const std::size_t n_locks = d.count(Leftover::Kind::kLock); n_locks > 0) {
    out << n_locks << " stale lock file" << (n_locks == 1 ? "" : "s") << " of dead jobs"
              << (remove ? " removed" : "; rerun with --gc --apply to remove them") << "\n";
  }
  out << n_orphans << " orphan file" << (n_orphans == 1 ? "" : "s") << " and " << n_temp << " temporary file"
            << (n_temp == 1 ? "" : "s") << " (" << FormatBytes(static_cast<double>(d.leftover_bytes())) << ")"
            << (remove ? " removed" : d.leftovers.empty() ? "" : "; rerun with --gc --apply to remove them")
            << "\n";
  o->doc["orphans"] = n_orphans;
  o->doc["temporary"] = n_temp;
  o->doc["leftover_bytes"] = d.leftover_bytes();
  o->doc["applied"] = remove;
}

// Prints what FixDataset did, in the order it did it; the exit code.
int PrintFix(const std::string& root, const FixOptions& options, const FixResult& r, FixOutput* o,
             const std::function<int(int)>& emit) {
  if (r.restamp) PrintRestamp(root, *r.restamp, o);
  if (r.failed_step == FixStep::kRestamp || r.failed_step == FixStep::kReopen ||
      r.failed_step == FixStep::kDiagnose) {
    return ReportError(r.status);
  }
  const DatasetDiagnosis& d = *r.diagnosis;
  for (const CheckProblem& p : d.unsafe) o->doc["unsafe"].push_back({{"path", p.path}, {"message", p.message}});
  for (const CheckProblem& p : d.unreadable) {
    o->doc["unreadable"].push_back({{"path", p.path}, {"message", p.message}});
  }
  if (r.refused) return emit(PrintRefusal(root, d, o));
  if (r.failed_step == FixStep::kRebuildIndex) return ReportError(r.status);
  if (!d.packed) PrintSidecars(d, options.rebuild_index, o);
  for (const std::string& held : d.held_locks) {
    o->out << "lock " << held << "; left alone\n";
    o->doc["locks_held"].push_back(held);
  }
  o->doc["resumable_jobs"] = nlohmann::json::array();
  for (const ResumableJob& job : d.resumable_jobs) {
    const bool removed = std::find(r.jobs_removed.begin(), r.jobs_removed.end(), job.job_id) != r.jobs_removed.end();
    const std::string last =
        job.last_record_ns > 0 ? io_internal::UtcTimestamp(job.last_record_ns / 1000000000) : std::string();
    o->out << "resumable job " << job.job_id << ": " << job.files << " files of a stopped run"
           << (last.empty() ? "" : ", last recorded " + last)
           << (removed        ? " removed"
               : job.running  ? " (running; left alone)"
                              : "; run the same command again to finish it, or --remove-abandoned-jobs to remove them")
           << "\n";
    o->doc["resumable_jobs"].push_back(
        {{"job_id", job.job_id}, {"files", job.files}, {"running", job.running}, {"removed", removed},
         {"last_record", last.empty() ? nlohmann::json(nullptr) : nlohmann::json(last)}});
  }
  if (r.failed_step == FixStep::kCollect) return ReportError(r.status);
  PrintLeftovers(d, *r.garbage, options.remove_leftovers, o);
  return emit(r.garbage->failures() ? kExitFailure : kExitOk);
}

}  // namespace

int RunFix(const std::vector<std::string>& args) {
  po::options_description options("Options");
  options.add_options()
      ("dataset", po::value<std::string>(), "dataset folder")
      ("gc", po::bool_switch(), "remove orphans, temporary files and an interrupted recompress (with --apply)")
      ("apply", po::bool_switch(), "with --gc: really remove (default: list only)")
      ("dry-run", po::bool_switch(), "with --gc: only list (the default)")
      ("remove-orphans", po::bool_switch(), "the same as --gc --apply")
      ("remove-abandoned-jobs", po::bool_switch(),
       "remove the journals and kept shards of stopped resumable jobs (not of running ones)")
      ("rebuild-index", po::bool_switch(), "rewrite a stale or invalid sample index")
      ("rewrite-digests", po::bool_switch(), "re-stamp every hash after a deliberate edit (needs --reason)")
      ("reason", po::value<std::string>()->value_name("TEXT"), "why the hashes are re-stamped (audit log)");
  AddJsonOption(&options);
  po::positional_options_description positional;
  positional.add("dataset", 1);
  po::variables_map vm;
  if (auto code = ParseCommandLine(kFixSpec, options, positional, args, &vm)) return *code;
  if (!vm.count("dataset")) return UsageError("fix", "missing DATASET argument");
  const std::string root = vm["dataset"].as<std::string>();
  const auto json = JsonOption(vm);
  // With --json - standard output holds only the JSON document.
  std::ostringstream discarded;
  FixOutput o{json && *json == "-" ? static_cast<std::ostream&>(discarded) : std::cout,
              {{"schema", JsonSchemaName("fix")}, {"dataset", root}, {"recovered_commit", false},
               {"unsafe", nlohmann::json::array()}, {"unreadable", nlohmann::json::array()},
               {"sidecars", nlohmann::json::array()}, {"locks_held", nlohmann::json::array()},
               {"leftovers", nlohmann::json::array()}}};
  auto emit = [&](int code) {
    if (!json) return code;
    o.doc["exit_code"] = code;
    if (Status st = WriteJsonOutput(*json, o.doc.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n"); !st.ok()) return ReportError(st);
    return code;
  };
  const bool gc = vm["gc"].as<bool>() || vm["remove-orphans"].as<bool>();
  const bool apply = vm["remove-orphans"].as<bool>() || (vm["apply"].as<bool>() && !vm["dry-run"].as<bool>());
  if (vm["apply"].as<bool>() && !vm["gc"].as<bool>()) return UsageError("fix", "--apply goes with --gc");
  const bool rewrite = vm["rewrite-digests"].as<bool>();
  if (rewrite && (!vm.count("reason") || vm["reason"].as<std::string>().empty())) {
    return UsageError("fix", "--rewrite-digests needs --reason TEXT (it is recorded in the audit log)");
  }
  FixOptions fix;
  if (rewrite) fix.restamp_reason = vm["reason"].as<std::string>();
  fix.rebuild_index = vm["rebuild-index"].as<bool>();
  fix.remove_leftovers = gc && apply;
  fix.remove_abandoned_jobs = vm["remove-abandoned-jobs"].as<bool>();
  // Opening rolls back a half-done commit; do it here first so it can be reported.
  if (!PackReader::IsPack(root)) {
    auto recovered = RecoverInterruptedCommit(root);
    if (!recovered.ok()) return ReportError(recovered.status());
    if (*recovered) {
      o.doc["recovered_commit"] = true;
      o.out << "commit " << kCommitJournalPath
                << ": cleaned up the commit a killed writer left half done; the dataset is at its last completed commit\n";
    }
  }
  auto ds = OpenDatasetArg(root);
  if (!ds.ok()) return ReportError(ds.status(), /*input_stage=*/true);
  if (fix.remove_leftovers || rewrite || fix.rebuild_index || fix.remove_abandoned_jobs) {
    if ((*ds)->pack()) return UsageError("fix", "a packed dataset is read-only; unpack it first");
  }
  return PrintFix(root, fix, FixDataset(std::move(ds).value(), fix), &o, emit);
}

}  // namespace sedpack::cli
