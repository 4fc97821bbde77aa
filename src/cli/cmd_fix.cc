// SPDX-License-Identifier: Apache-2.0
// `sedpack fix DATASET`: diagnose what dead jobs and deliberate edits leave
// behind, and clean it up on request. Nothing here repairs corrupt data.
#include <iostream>

#include <sstream>

#include <nlohmann/json.hpp>

#include "cli/cli_common.h"
#include "dataset/check_parts.h"
#include "sedpack/dataset/check.h"
#include "sedpack/index/index.h"
#include "io/beneath.h"
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
    "fix", "DATASET [--gc [--apply]] [--rebuild-index] [--rewrite-digests --reason TEXT]",
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
    "  sidecar     a stale or invalid sample index or content digest file\n\n"
    "A commit that a killed writer left half done (.sedpack-hpc/commit-journal) is\n"
    "rolled back to the last completed commit whenever the dataset is opened, by this\n"
    "command or any other; `fix` reports when it did so.\n\n"
    "--gc removes the orphans, temporary files, stale locks and interrupted-recompress\n"
    "folder; it\n"
    "only lists them (a dry run) unless --apply is given. --remove-orphans is\n"
    "--gc --apply (kept for scripts). Listed files and metadata are never touched.\n"
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

int RunFix(const std::vector<std::string>& args) {
  po::options_description options("Options");
  options.add_options()
      ("dataset", po::value<std::string>(), "dataset folder")
      ("gc", po::bool_switch(), "remove orphans, temporary files and an interrupted recompress (with --apply)")
      ("apply", po::bool_switch(), "with --gc: really remove (default: list only)")
      ("dry-run", po::bool_switch(), "with --gc: only list (the default)")
      ("remove-orphans", po::bool_switch(), "the same as --gc --apply")
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
  std::ostream& out = json && *json == "-" ? static_cast<std::ostream&>(discarded) : std::cout;
  nlohmann::json doc = {{"schema", JsonSchemaName("fix")}, {"dataset", root}, {"recovered_commit", false},
                        {"unsafe", nlohmann::json::array()}, {"unreadable", nlohmann::json::array()},
                        {"sidecars", nlohmann::json::array()}, {"locks_held", nlohmann::json::array()},
                        {"leftovers", nlohmann::json::array()}};
  auto emit = [&](int code) {
    if (!json) return code;
    doc["exit_code"] = code;
    if (Status st = WriteJsonOutput(*json, doc.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n"); !st.ok()) return ReportError(st);
    return code;
  };
  const bool gc = vm["gc"].as<bool>() || vm["remove-orphans"].as<bool>();
  const bool apply = vm["remove-orphans"].as<bool>() || (vm["apply"].as<bool>() && !vm["dry-run"].as<bool>());
  if (vm["apply"].as<bool>() && !vm["gc"].as<bool>()) return UsageError("fix", "--apply goes with --gc");
  const bool rewrite = vm["rewrite-digests"].as<bool>();
  if (rewrite && (!vm.count("reason") || vm["reason"].as<std::string>().empty())) {
    return UsageError("fix", "--rewrite-digests needs --reason TEXT (it is recorded in the audit log)");
  }
  // Opening rolls back a half-done commit; do it here first so it can be reported.
  if (!PackReader::IsPack(root)) {
    auto recovered = RecoverInterruptedCommit(root);
    if (!recovered.ok()) return ReportError(recovered.status());
    if (*recovered) {
      doc["recovered_commit"] = true;
      out << "commit " << kCommitJournalPath
                << ": cleaned up the commit a killed writer left half done; the dataset is at its last completed commit\n";
    }
  }
  auto ds = OpenDatasetArg(root);
  if (!ds.ok()) return ReportError(ds.status(), /*input_stage=*/true);
  if ((gc && apply) || rewrite || vm["rebuild-index"].as<bool>()) {
    if ((*ds)->pack()) return UsageError("fix", "a packed dataset is read-only; unpack it first");
  }

  if (rewrite) {
    auto s = RestampHashes(root, vm["reason"].as<std::string>());
    if (!s.ok()) return ReportError(s.status());
    out << "re-stamped " << s->shards_changed << " shard hash entr" << (s->shards_changed == 1 ? "y" : "ies")
              << " and rewrote " << s->lists_changed << " shards_list.json file" << (s->lists_changed == 1 ? "" : "s")
              << "; recorded in " << SidecarPath(root, kAuditSidecarName) << "\n";
    for (std::size_t i = 0; i < s->new_root.size(); ++i) {
      out << "  dataset_info.json " << s->new_root[i] << " (was " << (i < s->old_root.size() ? s->old_root[i] : "")
                << ")\n";
    }
    auto reopened = OpenDatasetArg(root);
    if (!reopened.ok()) return ReportError(reopened.status());
    ds = std::move(reopened);
  }

  auto diagnosed = DiagnoseDataset(**ds);
  if (!diagnosed.ok()) return ReportError(diagnosed.status());
  const DatasetDiagnosis& d = *diagnosed;
  auto print = [&out](std::string_view kind, const CheckProblem& p) {
    std::string_view message = p.message;
    if (message.starts_with(p.path + ": ")) message.remove_prefix(p.path.size() + 2);
    out << kind << " " << p.path << ": " << message << "\n";
  };
  for (const CheckProblem& p : d.unsafe) doc["unsafe"].push_back({{"path", p.path}, {"message", p.message}});
  for (const CheckProblem& p : d.unreadable) doc["unreadable"].push_back({{"path", p.path}, {"message", p.message}});
  if (!d.unsafe.empty()) {
    for (const CheckProblem& p : d.unsafe) print("unsafe", p);
    std::cerr << "sedpack: " << root << " has " << d.unsafe.size() << " path" << (d.unsafe.size() == 1 ? "" : "s")
              << " leading outside the dataset root (listed above); nothing was removed or rewritten\n";
    return emit(kExitProblems);
  }
  if (!d.SafeToCollect().ok()) {
    for (const CheckProblem& p : d.unreadable) print("unreadable", p);
    std::cerr << "sedpack: " << root << ": " << d.unreadable.size() << " metadata file"
              << (d.unreadable.size() == 1 ? "" : "s")
              << " could not be followed (listed above), so the files they list look like orphans; nothing was "
                 "removed (run `sedpack verify`)\n";
    return emit(kExitProblems);
  }

  // Sidecars.
  if (!d.packed) {
    if (d.index_needs_rebuild()) {
      doc["sidecars"].push_back({{"path", d.index->path},
                                 {"state", IndexFreshnessName(d.index->freshness)},
                                 {"message", d.index->message},
                                 {"rebuilt", vm["rebuild-index"].as<bool>()}});
      if (vm["rebuild-index"].as<bool>()) {
        auto built = BuildIndexFile(*ds);
        if (!built.ok()) return ReportError(built.status());
        out << "rebuilt " << d.index->path << "\n";
      } else {
        out << "sidecar " << d.index->path << ": " << IndexFreshnessName(d.index->freshness)
                  << (d.index->message.empty() ? "" : " (" + d.index->message + ")")
                  << "; --rebuild-index rewrites it\n";
      }
    } else if (vm["rebuild-index"].as<bool>()) {
      out << "the sample index is " << (d.index ? IndexFreshnessName(d.index->freshness) : "unreadable")
                << "; nothing to rebuild\n";
    }
    if (d.content == ContentSidecarState::kStale || d.content == ContentSidecarState::kInvalid) {
      doc["sidecars"].push_back({{"path", d.content_path},
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

  for (const std::string& held : d.held_locks) {
    out << "lock " << held << "; left alone\n";
    doc["locks_held"].push_back(held);
  }
  const bool remove = gc && apply;
  auto collected = CollectGarbage(**ds, d, remove);
  if (!collected.ok()) return ReportError(collected.status());
  for (const GarbageOutcome& o : collected->outcomes) {
    const Leftover& l = o.leftover;
    nlohmann::json entry = {{"kind", LeftoverKindName(l.kind)}, {"path", l.path}, {"removed", o.removed}};
    if (!o.error.ok()) entry["error"] = o.error.message();
    doc["leftovers"].push_back(std::move(entry));
    if (!o.error.ok()) {
      std::cerr << "sedpack: " << o.error.message() << "\n";
    } else if (o.removed) {
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
  doc["orphans"] = n_orphans;
  doc["temporary"] = n_temp;
  doc["leftover_bytes"] = d.leftover_bytes();
  doc["applied"] = remove;
  return emit(collected->failures() ? kExitFailure : kExitOk);
}

}  // namespace sedpack::cli
