// SPDX-License-Identifier: Apache-2.0
#include "sedpack/check/verify.h"

#include <algorithm>
#include <chrono>
#include <numeric>
#include <thread>

#include "comm/progress_internal.h"
#include "comm/status_wire.h"
#include "check/check_internal.h"
#include "check/check_wire_internal.h"

namespace sedpack {
namespace {

using internal::DecodeStatus;
using internal::EncodeStatus;

using Clock = std::chrono::steady_clock;

// Every rank opens the dataset through the FileSystem the check names.
Result<std::shared_ptr<Dataset>> OpenForCheck(const std::string& root, const VerifyOptions& options) {
  OpenOptions open;
  open.file_system = options.check.file_system;
  return Dataset::Open(root, open);
}

// A whole check: every rank opens the dataset, then the streaming engine.
Result<CheckReport> VerifyWhole(Comm& comm, const std::string& root, const VerifyOptions& options) {
  // Rank 0 first: a caller that has just written the dataset on rank 0 needs
  // no barrier of its own before this collective.
  Result<std::shared_ptr<Dataset>> open = Status::Internal("not opened");
  std::string wire;
  if (comm.rank() == 0) {
    open = OpenForCheck(root, options);
    wire = EncodeStatus(open.status());
  }
  SEDPACK_RETURN_NOT_OK(comm.Bcast(&wire, 0));
  SEDPACK_RETURN_NOT_OK(DecodeStatus(wire));
  if (comm.rank() != 0) open = OpenForCheck(root, options);
  SEDPACK_RETURN_NOT_OK(AgreeOnStatus(comm, open.status()));
  CheckRunOptions run;
  run.check = options.check;
  run.progress_interval_s = options.progress_interval_s;
  run.before_unit = options.before_unit;
  run.progress = options.progress;
  return RunCheck(comm, **open, run);
}

// A partial check: rank 0 walks the lists down to the parts and scatters
// their shards, balanced by bytes.
Result<CheckReport> VerifyPartial(Comm& comm, const std::string& root, const VerifyOptions& options) {
  const int rank = comm.rank();
  const auto start = Clock::now();
  // 1. Rank 0 opens the dataset and walks the metadata.
  MetadataWalk walk;
  std::shared_ptr<Dataset> ds;
  std::string opened;
  std::vector<std::string> parts;
  std::uint64_t bytes_total = 0, files_total = 0;
  if (rank == 0) {
    Status st;
    auto open = OpenForCheck(root, options);
    st = open.status();
    if (open.ok()) {
      ds = std::move(open).value();
      CheckOptions co = options.check;
      co.progress = nullptr;
      auto w = WalkMetadata(*ds, co);
      st = w.status();
      if (w.ok()) walk = std::move(w).value();
    }
    opened = EncodeStatus(st);
    if (st.ok()) {
      for (const auto& t : walk.shards) bytes_total += t.size;
      files_total = walk.shards.size() + walk.report.files_checked;
      for (auto& p : PartitionShardTasks(walk.shards, comm.size())) parts.push_back(EncodeShardTasks(p));
    }
  }
  SEDPACK_RETURN_NOT_OK(comm.Bcast(&opened, 0));
  SEDPACK_RETURN_NOT_OK(DecodeStatus(opened));
  Status local;
  if (rank != 0) {
    auto open = OpenForCheck(root, options);
    local = open.status();
    if (open.ok()) ds = std::move(open).value();
  }
  SEDPACK_ASSIGN_OR_RETURN(std::int64_t bad, comm.AllreduceMin(local.ok() ? comm.size() : rank));
  if (bad < comm.size()) {
    return local.ok() ? Status::IOError("rank ", bad, " cannot open the dataset at ", root) : local;
  }
  // 2. Scatter the shard files, balanced by bytes.
  if (rank != 0) parts.clear();
  SEDPACK_ASSIGN_OR_RETURN(std::string mine_text, comm.Scatterv(parts, 0));
  SEDPACK_ASSIGN_OR_RETURN(std::vector<ShardCheckTask> mine, DecodeShardTasks(mine_text));

  // 3. Verify this rank's shards, reporting progress to rank 0.
  std::uint64_t my_bytes = 0;
  auto last_report = Clock::now();
  // Rank 0: fold in what the others sent and call the user's callback, at most
  // every progress_interval_s (always when `force` or once all ranks are done).
  internal::RankProgress collector(comm);
  auto report_progress = [&](bool force) -> Result<bool> {
    SEDPACK_RETURN_NOT_OK(collector.Poll());
    const auto now = Clock::now();
    force = force || collector.others_final();
    if (options.progress &&
        (force || std::chrono::duration<double>(now - last_report).count() >= options.progress_interval_s)) {
      last_report = now;
      VerifyProgress vp;
      vp.bytes_done = collector.Total(my_bytes);
      vp.bytes_total = bytes_total;
      vp.files_total = files_total;
      vp.seconds = std::chrono::duration<double>(now - start).count();
      options.progress(vp);
    }
    return collector.others_final();
  };
  CheckOptions co = options.check;
  co.progress = [&](std::uint64_t bytes, std::uint64_t) {
    my_bytes += bytes;
    if (rank == 0) {
      (void)report_progress(false);
    } else {
      collector.Send(my_bytes, false);
    }
  };
  CheckReport part;
  CheckShardFiles(*ds, mine, co, &part);
  if (rank != 0) {
    collector.Send(my_bytes, true);
  } else {
    // Keep reporting while the other ranks finish.
    for (;;) {
      SEDPACK_ASSIGN_OR_RETURN(bool all_final, report_progress(false));
      if (all_final) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }

  // 4. Gather the reports; rank 0 adds the metadata findings and orphans.
  SEDPACK_RETURN_NOT_OK(comm.IdleBarrier());
  SEDPACK_ASSIGN_OR_RETURN(std::vector<std::string> gathered, comm.Gatherv(EncodeCheckReport(part), 0));
  if (rank != 0) return part;
  CheckReport out = std::move(walk.report);
  for (std::size_t r = 0; r < gathered.size(); ++r) {
    auto rep = DecodeCheckReport(gathered[r]);
    if (!rep.ok()) return rep.status().WithPrefix("report of rank " + std::to_string(r) + ": ");
    out.files_checked += rep->files_checked;
    out.bytes_checked += rep->bytes_checked;
    out.shards_checked += rep->shards_checked;
    out.examples_checked += rep->examples_checked;
    for (auto& p : rep->problems) out.problems.push_back(std::move(p));
  }
  std::stable_sort(out.problems.begin(), out.problems.end(), [](const auto& a, const auto& b) {
    if (a.warning() != b.warning()) return !a.warning();
    return a.path < b.path;
  });
  return out;
}

}  // namespace

Result<CheckReport> VerifyDataset(Comm& comm, const std::string& root, const VerifyOptions& options) {
  if (options.check.partial.empty()) return VerifyWhole(comm, root, options);
  return VerifyPartial(comm, root, options);
}

}  // namespace sedpack
