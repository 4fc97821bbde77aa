// SPDX-License-Identifier: Apache-2.0
#include "sedpack/generate/parallel.h"

#include <algorithm>
#include <array>
#include <cinttypes>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <thread>

#include "comm/progress_internal.h"
#include "sedpack/dataset/dataset.h"
#include "sedpack/io/file.h"
#include "parallel/worker_pool.h"
#include "io/output_folder.h"
#include "sedpack/cancel.h"
#include "sedpack/mpi/distributed_write.h"
#include "journal/resume_internal.h"
#include "sedpack/codecs/hash.h"

namespace sedpack {
namespace {

// --append: the job writes into the dataset at `out` with that dataset's own
// structure (so its compression, shard type and hashes are kept), and each
// split's indices continue from the count it holds. Fails, naming `out`, if the
// dataset's schema is not one the generator can fill.
Status PlanAppend(const std::string& out, const CommitLockOptions& lock, GenerateConfig* config,
                  std::array<std::uint64_t, 3>* base) {
  OpenOptions oo;
  oo.commit_lock = lock;
  auto ds = Dataset::Open(out, oo);
  if (!ds.ok()) return ds.status().WithPrefix("--append: ");
  const DatasetInfo& info = (*ds)->info();
  config->metadata = info.metadata;
  config->structure = info.dataset_structure;
  for (const auto& [split, list] : info.splits) {
    (*base)[static_cast<int>(split)] = static_cast<std::uint64_t>(std::max<std::int64_t>(0, list.number_of_examples));
  }
  return ValidateGenerateConfig(*config).WithPrefix(out + ": cannot append generated examples: ");
}

double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

Status PrepareGenerateOutput(const std::string& out) {
  namespace fs = std::filesystem;
  if (!PathExists(out)) return Status::OK();
  if (PathExists((fs::path(out) / "dataset_info.json").string())) {
    return Status::AlreadyExists(out, " already holds a sedpack dataset; add examples to it with --append, "
                                      "or choose a new folder");
  }
  if (!IsDirectory(out)) return Status::AlreadyExists(out, " exists and is not a folder");
  std::vector<std::string> temps;
  for (const DirEntry& e : ListDirectory(out).ValueOr({})) {
    const std::string path = JoinRoot(out, e.name);
    if (!IsRegularFile(path) || !IsAtomicWriteTempName(e.name)) {
      return Status::AlreadyExists(
          out, " already exists and is not empty; generate writes a new dataset, choose a new or empty folder");
    }
    temps.push_back(path);
  }
  for (const std::string& t : temps) (void)RemoveTree(t);
  return Status::OK();
}

namespace {

// What identifies a generate job's output, for its journal: every parameter
// that changes the examples, their order or their bytes (not the thread count:
// shard bytes do not depend on it).
std::vector<std::pair<std::string, std::string>> ResumeParameters(const GenerateConfig& config, int ranks,
                                                                  const std::array<std::uint64_t, 3>& base) {
  DatasetInfo info;
  info.metadata = config.metadata;
  info.dataset_structure = config.structure;
  const std::string text = SerializeDatasetInfo(info);
  auto digest = HashBytes(std::vector<HashAlgorithm>{HashAlgorithm::kSha256},
                          std::as_bytes(std::span<const char>(text.data(), text.size())));
  const GenerateParams& p = config.params;
  auto triple = [](const std::array<std::uint64_t, 3>& a) {
    return std::to_string(a[0]) + "/" + std::to_string(a[1]) + "/" + std::to_string(a[2]);
  };
  // The structure's options by name first (a refused rerun names the one that
  // changed), then the digest of the rest (metadata).
  journal_internal::JobParameters out = {{"command", "generate"}};
  for (auto& s : journal_internal::StructureParameters(config.structure)) out.push_back(std::move(s));
  out.insert(out.end(), {
          {"structure", digest.ok() ? (*digest)[0].substr(0, 16) : std::string("?")},
          {"seed", std::to_string(p.seed)},
          {"examples", triple(p.examples)},
          {"appended to", triple(base)},
          {"key group size", std::to_string(p.key_group_size)},
          {"shard by key", p.shard_by_key ? "true" : "false"},
          {"noise", std::to_string(p.noise_std)},
          {"leak scale", std::to_string(p.leak_scale)},
          {"level", std::to_string(p.level)},
          {"ranks", std::to_string(ranks)}});
  return out;
}

// A resumable job's id (journal_internal::JobIdentity): the same command on
// the same output finds it again. A new dataset has one job unless the user
// names it, so a rerun with another seed or config finds the journal and is
// refused, naming what changed. An append is named by the user, or by the
// SLURM task and its parameters, or by its parameters alone; never by the
// counts it finds, which depend on which other appends committed first.
std::string ResumableJobId(const GenerateConfig& config, const ParallelGenerateOptions& options) {
  if (!config.params.append) {
    return journal_internal::JobIdFor(options.job_name.empty() ? std::string("generate a new dataset")
                                                                : "generate a new dataset\njob id " + options.job_name);
  }
  std::string parameters;
  for (const auto& [name, value] : ResumeParameters(config, 1, {})) {
    // Neither the ranks nor the level change what is appended: a rerun with
    // another one finds the job and is refused, naming it.
    if (name == "appended to" || name == "ranks" || name == "level") continue;
    parameters += name + "=" + value + "\n";
  }
  return journal_internal::JobIdFor(journal_internal::JobIdentity("generate --append", options.job_name, parameters));
}

// The counts a stopped append started from (its rank 0 journal's "appended
// to"): its rerun continues from them whatever has been committed since.
std::optional<std::array<std::uint64_t, 3>> JournaledBase(const std::string& out, const std::string& job_id) {
  auto journal = journal_internal::ReadJournal(out, journal_internal::JournalPath(job_id, 0), nullptr);
  if (!journal.ok()) return std::nullopt;
  for (const auto& [name, value] : journal->parameters) {
    if (name != "appended to") continue;
    std::array<std::uint64_t, 3> base{};
    if (std::sscanf(value.c_str(), "%" SCNu64 "/%" SCNu64 "/%" SCNu64, &base[0], &base[1], &base[2]) != 3) {
      return std::nullopt;
    }
    return base;
  }
  return std::nullopt;
}

// Whether rank 0's journal of `job_id` is under `out`: a stopped run to resume.
bool HasJournal(const std::string& out, const std::string& job_id) {
  return PathExists(JoinRoot(out, journal_internal::JournalPath(job_id, 0)));
}

// How every rank's writer is opened: a new dataset is created with the
// config's metadata and structure, an append keeps the dataset's own.
DistributedWriteOptions GenerateWriteOptions(const GenerateConfig& config, const ParallelGenerateOptions& options) {
  DistributedWriteOptions wo;
  if (!config.params.append) {
    wo.create_metadata = config.metadata;
    wo.create_structure = config.structure;
  }
  wo.job_id = options.job_id;
  wo.commit_lock = options.commit_lock;
  wo.filler.concurrency = ResolveThreads(config.params.threads);
  wo.filler.codec.level = config.params.level;
  return wo;
}

// This rank's share of every split's indices (after `base`, the examples an
// append keeps), into `gen`; the config's counts become the end of each split.
// Returns the examples of the whole job.
std::uint64_t PlanRankRanges(int rank, int size, const std::array<std::uint64_t, 3>& base, GenerateConfig* config,
                             GenerateOptions* gen) {
  std::uint64_t total = 0;
  for (Split s : AllSplits()) {
    const int i = static_cast<int>(s);
    const std::uint64_t n = config->examples(s);
    total += n;
    gen->ranges[i] = IndexRange{base[i] + n * rank / size, base[i] + n * (rank + 1) / size};
    config->params.examples[i] = base[i] + n;  // ranges are clipped to this
  }
  return total;
}

// What the finished dataset says of itself: job id and root checksums.
ParallelGenerateSummary SummarizeJob(const DistributedWriter& writer) {
  ParallelGenerateSummary summary;
  summary.job_id = writer.job_id();
  summary.root_checksums = writer.dataset()->MetadataChecksums().ValueOr({});
  summary.checksum_algorithms = writer.dataset()->info().dataset_structure.hash_checksum_algorithms;
  return summary;
}

}  // namespace

Result<ParallelGenerateSummary> GenerateOverComm(Comm& comm, GenerateConfig config, const std::string& out,
                                                 const ParallelGenerateOptions& options) {
  const int rank = comm.rank(), size = comm.size();
  const bool append = config.params.append;
  std::array<std::uint64_t, 3> base{};
  Status planned = CheckCancelled();
  // Rank 0 notes whether a new dataset's folder was there, so that a failed or
  // interrupted job can put it back (remove the folder it created).
  bool existed = true;
  // An append's id depends on the dataset's structure, which PlanAppend reads.
  std::string job_id = options.resumable && options.job_id.empty() && !append ? ResumableJobId(config, options)
                                                                              : options.job_id;
  if (planned.ok() && append) {
    planned = PlanAppend(out, options.commit_lock, &config, &base);
    if (planned.ok() && options.resumable && options.job_id.empty()) job_id = ResumableJobId(config, options);
    if (planned.ok() && options.resumable && !options.restart) {
      if (auto journaled = JournaledBase(out, job_id)) base = *journaled;
    }
  } else if (planned.ok() && rank == 0) {
    existed = io_internal::OutputExists(out);
    // A stopped run of this job left its dataset (still empty) and journal.
    if (!options.resumable || !HasJournal(out, job_id)) {
      if (options.resumable) journal_internal::ClearUnstartedJournal(out, nullptr);
      planned = PrepareGenerateOutput(out);
      if (planned.ok() && options.resumable) {
        planned = journal_internal::StartJournal(out, job_id, ResumeParameters(config, size, base), nullptr);
      }
    }
  }
  SEDPACK_RETURN_NOT_OK(AgreeOnStatus(comm, planned));
  // Only a job that found no dataset there removes what it made; a resumable
  // one keeps it, with the shards its journal names.
  const bool fresh = !append && rank == 0 && !options.resumable;

  DistributedWriteOptions wo = GenerateWriteOptions(config, options);
  if (options.resumable) {
    wo.job_id = job_id;
    wo.resume_parameters = ResumeParameters(config, size, base);
    wo.restart = options.restart;
  }
  auto opened = DistributedWriter::Open(comm, out, wo);
  if (!opened.ok()) {
    if (fresh && opened.status().code() != StatusCode::kAlreadyExists) io_internal::RestoreOutputFolder(out, existed);
    return opened.status();
  }
  std::unique_ptr<DistributedWriter> writer = std::move(opened).value();

  GenerateOptions gen;
  const std::uint64_t total = PlanRankRanges(rank, size, base, &config, &gen);
  // What an earlier run kept of this rank's share is not written again.
  for (Split s : AllSplits()) {
    IndexRange& r = gen.ranges[static_cast<int>(s)];
    r.begin = std::min(r.end, r.begin + writer->kept_examples(s));
  }
  gen.filler = wo.filler;
  gen.sink = [&](Split s, std::span<const ValueView> v, const JsonValue* m) { return writer->WriteExample(s, v, m); };

  // Rank 0 sees the whole job: its own count plus what the other ranks send
  // over the progress channel. It drains the channel whether or not anyone
  // listens, so the other ranks' messages never pile up.
  std::uint64_t per_example = 0;
  if (auto schema = config.structure.Schema(); schema.ok()) {
    for (const auto& a : *schema) per_example += a.FixedByteSize().ValueOr(0);
  }
  internal::RankProgress collector(comm, options.report_interval);
  const auto start = std::chrono::steady_clock::now();
  auto report = [&](std::uint64_t mine, bool final) {
    if (!options.progress) return;
    GenerateProgress p;
    p.examples_done = collector.Total(mine);
    p.examples_total = total;
    p.bytes_done = p.examples_done * per_example;
    p.seconds = SecondsSince(start);
    p.finished = final;
    options.progress(p);
  };
  gen.progress = [&](const GenerateProgress& p) {
    if (rank == 0) {
      (void)collector.Poll();  // a lost progress message only delays the numbers
      report(p.examples_done, false);
    } else {
      collector.Send(p.examples_done, false);
    }
  };
  auto summary = GenerateIntoDataset(config, writer->dataset(), gen);
  // An abort this rank saw (another rank failed) is ignored by Fail: the
  // failing rank's reason is what Finish reports.
  if (!summary.ok()) writer->Fail(summary.status());
  const std::uint64_t mine = summary.ok() ? summary->examples_total : 0;
  if (rank != 0) {
    collector.Send(mine, true);
  } else {
    collector.WaitForOthersFinal([&] { report(mine, false); });
    report(mine, true);
  }
  const Status finished = writer->Finish();  // collective: agree, merge, broadcast
  // Collective too: made whatever Finish said, so that every rank takes part.
  auto examples = comm.AllreduceSum(static_cast<std::int64_t>(mine));
  auto bytes = comm.AllreduceSum(static_cast<std::int64_t>(summary.ok() ? summary->bytes : 0));
  if (!finished.ok()) {
    // Finish removed every rank's own shard folders before it returned on any
    // rank: rank 0 can take away the dataset it created.
    writer.reset();
    if (fresh) io_internal::RestoreOutputFolder(out, existed);
    return finished;
  }
  ParallelGenerateSummary out_summary = SummarizeJob(*writer);
  out_summary.examples_total = static_cast<std::uint64_t>(examples.ValueOr(0));
  out_summary.bytes = static_cast<std::uint64_t>(bytes.ValueOr(0));
  out_summary.seconds = SecondsSince(start);
  out_summary.ranks = size;
  out_summary.appended = append;
  out_summary.kept_shards = writer->kept_shards();
  out_summary.journal_shards = writer->journal_shards();
  return out_summary;
}

}  // namespace sedpack
