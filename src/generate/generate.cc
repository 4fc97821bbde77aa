// SPDX-License-Identifier: Apache-2.0
// GenerateDataset: worker threads generate batches of examples into a ring of
// slots; the calling thread hands them to the Filler strictly in index order
// (the Filler is not thread-safe, and shard boundaries then depend only on the
// indices, never on thread timing). The Filler compresses, hashes and writes
// shards on its own workers.
#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <thread>

#include "parallel/worker_pool.h"
#include "sedpack/cancel.h"
#include "io/output_folder.h"
#include "sedpack/generate/generate.h"
#include "sedpack/metadata/json_value.h"

namespace sedpack {
namespace {

// Examples per batch: enough to amortize synchronization, small enough that the
// ring of slots stays a few tens of MB with the default 160 KB traces.
std::uint64_t BatchSize(std::uint64_t example_bytes) {
  constexpr std::uint64_t kTargetBatchBytes = 2ULL << 20;
  return std::clamp<std::uint64_t>(kTargetBatchBytes / std::max<std::uint64_t>(1, example_bytes), 1,
                                   256);
}

struct Job {
  Split split;
  std::uint64_t first;
  std::uint64_t count;
};

struct Slot {
  std::vector<ExampleBuffers> examples;
  Status status;
  // Job number whose results the slot holds when `ready`.
  std::uint64_t job = 0;
  bool ready = false;
};

// Ring of slots shared by the generating workers and the writing thread.
class Pipeline {
 public:
  Pipeline(const ExampleGenerator& generator, std::vector<Job> jobs, int threads)
      : generator_(generator), jobs_(std::move(jobs)),
        slots_(static_cast<std::size_t>(2 * threads + 2)) {
    workers_ = internal::StartThreads(threads, [this](int) { WorkerLoop(); });
  }
  ~Pipeline() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    for (auto& t : workers_) t.join();
  }

  std::size_t num_jobs() const { return jobs_.size(); }
  const Job& job(std::size_t i) const { return jobs_[i]; }

  /// Wait for job `j` (called in order 0, 1, ...); the slot stays owned by the
  /// caller until Release(j).
  Slot& Wait(std::uint64_t j) {
    Slot& slot = slots_[j % slots_.size()];
    if (workers_.empty()) {
      // Not even one worker could start: generate the job here, in order.
      Produce(j, slot);
      return slot;
    }
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return slot.ready && slot.job == j; });
    return slot;
  }
  void Release(std::uint64_t j) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      Slot& slot = slots_[j % slots_.size()];
      slot.ready = false;
      released_ = j + 1;
    }
    cv_.notify_all();
  }

 private:
  void WorkerLoop() {
    for (;;) {
      std::uint64_t j;
      {
        std::unique_lock<std::mutex> lock(mu_);
        if (stop_ || next_job_ >= jobs_.size()) return;
        j = next_job_++;
        // A slot is reused only after the writer released the job that held it.
        cv_.wait(lock, [&] { return stop_ || j < released_ + slots_.size(); });
        if (stop_) return;
      }
      Produce(j, slots_[j % slots_.size()]);
      cv_.notify_all();
    }
  }

  void Produce(std::uint64_t j, Slot& slot) {
    const Job& job = jobs_[j];
    slot.examples.resize(job.count);
    Status st;
    for (std::uint64_t k = 0; k < job.count && st.ok(); ++k) {
      st = CheckCancelled();
      if (st.ok()) st = generator_.Generate(job.split, job.first + k, &slot.examples[k]);
    }
    std::lock_guard<std::mutex> lock(mu_);
    slot.status = std::move(st);
    slot.job = j;
    slot.ready = true;
  }

  const ExampleGenerator& generator_;
  const std::vector<Job> jobs_;
  std::vector<Slot> slots_;
  std::vector<std::thread> workers_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::uint64_t next_job_ = 0;
  std::uint64_t released_ = 0;
  bool stop_ = false;
};

Status CheckStructureMatches(const DatasetStructure& want, const DatasetStructure& have) {
  if (want.saved_data_description.size() != have.saved_data_description.size()) {
    return Status::InvalidArgument("the dataset's schema has ", have.saved_data_description.size(),
                                   " attributes, the config's ", want.saved_data_description.size());
  }
  for (std::size_t i = 0; i < want.saved_data_description.size(); ++i) {
    const Attribute& a = want.saved_data_description[i];
    const Attribute& b = have.saved_data_description[i];
    if (a.name != b.name || a.shape != b.shape) {
      return Status::InvalidArgument("attribute ", i, " differs: config has \"", a.name, "\" ",
                                     ShapeToString(a.shape), ", the dataset \"", b.name, "\" ",
                                     ShapeToString(b.shape));
    }
    auto da = ParseDType(a.dtype), db = ParseDType(b.dtype);
    if (!da.ok() || !db.ok() || *da != *db) {
      return Status::InvalidArgument("attribute \"", a.name, "\" has dtype ", b.dtype,
                                     " in the dataset and ", a.dtype, " in the config");
    }
  }
  return Status::OK();
}

}  // namespace

Result<GenerateSummary> GenerateIntoDataset(const GenerateConfig& config,
                                            std::shared_ptr<Dataset> dataset,
                                            const GenerateOptions& options) {
  SEDPACK_ASSIGN_OR_RETURN(auto generator, ExampleGenerator::Make(config));
  SEDPACK_RETURN_NOT_OK(CheckStructureMatches(config.structure, dataset->info().dataset_structure));
  const auto start = std::chrono::steady_clock::now();

  GenerateSummary summary;
  summary.generate_threads = ResolveThreads(config.params.threads);
  FillerOptions filler_options = options.filler;
  if (filler_options.concurrency == 0) filler_options.concurrency = summary.generate_threads;
  if (filler_options.codec.level == kDefaultCodecLevel) filler_options.codec.level = config.params.level;
  summary.write_threads = ResolveThreads(filler_options.concurrency);

  // Cut the requested ranges into batches, in writing order.
  const std::uint64_t batch = BatchSize(generator->example_bytes());
  std::vector<Job> jobs;
  std::uint64_t total = 0;
  for (Split split : AllSplits()) {
    const IndexRange& r = options.ranges[static_cast<int>(split)];
    const std::uint64_t end = std::min(r.end, config.examples(split));
    for (std::uint64_t i = r.begin; i < end; i += batch) {
      jobs.push_back(Job{split, i, std::min(batch, end - i)});
    }
    if (end > r.begin) {
      summary.examples[static_cast<int>(split)] = end - r.begin;
      total += end - r.begin;
    }
  }

  std::unique_ptr<Filler> filler;
  if (!options.sink) {
    SEDPACK_ASSIGN_OR_RETURN(filler, Filler::Make(dataset, filler_options));
  }
  GenerateProgress progress;
  progress.examples_total = total;
  auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  {
    Pipeline pipeline(*generator, std::move(jobs), summary.generate_threads);
    // Shard metadata is rebuilt only when the key group changes.
    std::optional<std::uint64_t> meta_group;
    JsonValue meta;
    for (std::uint64_t j = 0; j < pipeline.num_jobs(); ++j) {
      Slot& slot = pipeline.Wait(j);
      SEDPACK_RETURN_NOT_OK(slot.status);
      SEDPACK_RETURN_NOT_OK(CheckCancelled());
      const Job& job = pipeline.job(j);
      for (std::uint64_t k = 0; k < job.count; ++k) {
        const ExampleBuffers& ex = slot.examples[k];
        const JsonValue* custom = nullptr;
        if (config.params.shard_by_key) {
          if (meta_group != ex.key_index) {
            SEDPACK_ASSIGN_OR_RETURN(
                meta, JsonValue::Parse("{\"key_index\":" + std::to_string(ex.key_index) + "}"));
            meta_group = ex.key_index;
          }
          custom = &meta;
        }
        const std::vector<ValueView> views = ex.Views();
        SEDPACK_RETURN_NOT_OK(filler ? filler->WriteExample(job.split, views, custom)
                                     : options.sink(job.split, views, custom));
      }
      pipeline.Release(j);
      progress.examples_done += job.count;
      progress.bytes_done = progress.examples_done * generator->example_bytes();
      if (options.progress) {
        progress.seconds = elapsed();
        options.progress(progress);
      }
    }
  }
  summary.examples_total = total;
  if (!filler) {
    summary.bytes = total * generator->example_bytes();
    summary.seconds = elapsed();
    return summary;
  }
  SEDPACK_RETURN_NOT_OK(filler->Finish());
  summary.bytes = filler->bytes_written();
  summary.updated_infos = filler->updated_infos();
  if (filler_options.auto_update_dataset) {
    SEDPACK_ASSIGN_OR_RETURN(summary.root_checksums, dataset->MetadataChecksums());
  }
  summary.seconds = elapsed();
  if (options.progress) {
    progress.seconds = summary.seconds;
    progress.finished = true;
    options.progress(progress);
  }
  return summary;
}

Result<GenerateSummary> GenerateDataset(const GenerateConfig& config, const std::string& out_root,
                                        const GenerateOptions& options) {
  // Validate before creating anything, so a bad config leaves no folder behind.
  SEDPACK_RETURN_NOT_OK(ValidateGenerateConfig(config));
  SEDPACK_RETURN_NOT_OK(CheckCancelled());
  // A failed or interrupted job leaves no dataset behind: the folder goes back
  // to how it was (absent, or empty as PrepareGenerateOutput requires).
  const bool existed = io_internal::OutputExists(out_root);
  auto dataset = Dataset::Create(out_root, config.metadata, config.structure);
  if (!dataset.ok()) {
    // AlreadyExists: another dataset is there, which is not this job's to remove.
    if (dataset.status().code() != StatusCode::kAlreadyExists) io_internal::RestoreOutputFolder(out_root, existed);
    return dataset.status();
  }
  auto summary = GenerateIntoDataset(config, std::move(dataset).value(), options);
  if (!summary.ok()) io_internal::RestoreOutputFolder(out_root, existed);
  return summary;
}

}  // namespace sedpack
