// SPDX-License-Identifier: Apache-2.0
// The progress journal of one rank of a writing job, so that a stopped job
// (SIGTERM at a time limit, SIGKILL, a full disk) keeps the shards it finished
// and a rerun of the same command writes only the rest.
//
// A journal is `.sedpack-hpc/jobs/<job-id>.r<rank>.journal` under the dataset
// root: a header record with the job's parameters, then one record per unit
// (a shard written and hashed), appended and synced at least every second. Every
// record is framed and checksummed; reading stops at the first record that does
// not validate, so a record torn by a crash is ignored with everything after it;
// a rerun checks every kept unit against its files before it keeps it.
// Project-private (src/ include directory), not installed.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sedpack/io/file_system.h"
#include "sedpack/metadata/models.h"
#include "sedpack/status.h"
#include "sedpack/types.h"

namespace sedpack::journal_internal {

/// What identifies a job's output: (name, value) pairs in a fixed order. A
/// rerun whose pairs differ from the journal's is refused, naming the first.
using JobParameters = std::vector<std::pair<std::string, std::string>>;

/// One finished unit: a shard file of the rank's folder.
struct JournalUnit {
  std::uint64_t seq = 0;    ///< close order of the shard in the rank's job (0, 1, ...)
  Split split = Split::kTrain;
  std::uint64_t first = 0;  ///< its first example, counted in its split from the rank's start
  std::uint64_t size = 0;   ///< stored bytes of the file
  ShardInfo shard;          ///< as it goes into a shards list (path, examples, hashes, metadata)
  std::vector<std::byte> checks;  ///< its checks sidecar record (sidecar/checks_internal.h), may be empty
};

/// One finished unit of a job whose units are not shards of the dataset (an
/// exported row range, a shard's digest or index entries): `kind` names what
/// `data` holds; the job encodes and validates `data` itself.
struct JournalEntry {
  std::string kind;
  std::string data;
};

/// A JournalEntry as read back, in place: `kind` and `data` view the journal
/// file's bytes, which `file` keeps. A rerun of a job whose entries are large
/// (an index build's: a copy of the walk's result) keeps them without a copy
/// each: on a machine where a fresh page costs a fault, copying a journal of
/// tens of MB cost a rerun more than decoding it.
struct EntryView {
  std::string_view kind;
  std::string_view data;
  std::shared_ptr<const std::string> file;
};

/// A journal as read back, its entries in place (ReadJournalInPlace).
struct JournalView {
  JobParameters parameters;
  std::vector<JournalUnit> units;
  std::vector<EntryView> entries;
  bool torn_tail = false;
};

/// A journal as read back.
struct JournalContents {
  JobParameters parameters;
  std::vector<JournalUnit> units;  ///< the shard records that validated, in file order
  std::vector<JournalEntry> entries;  ///< the other records that validated, in file order
  bool torn_tail = false;          ///< bytes after the last valid record were ignored
};

/// The folder of the journals (and of the job id reservations), relative to the root.
inline constexpr std::string_view kJournalDir = ".sedpack-hpc/jobs";

/// `.sedpack-hpc/jobs/<job_id>.r<rank>.journal`.
std::string JournalPath(const std::string& job_id, int rank);
/// A job id derived from what identifies a resumable job ("j" + 11 hex digits),
/// so that the same command finds its journal again.
std::string JobIdFor(std::string_view identity);

/// What makes two runs of a journaling command the same job, in this order
/// (docs/cli.md, "Jobs"): a name the user gave (`--job-id`, Python's
/// `job_id`); else, under SLURM, the job and array task ids (so that a
/// requeued task finds its journal) together with `parameters`; else
/// `parameters` alone (the command's options, never what it found in the
/// output, such as an append's starting counts, which depend on timing).
/// Returns the text JobIdFor hashes; `command` keeps commands apart.
std::string JobIdentity(std::string_view command, std::string_view user_name, std::string_view parameters);
/// The SLURM part of JobIdentity ("slurm job 17 task 3", "slurm job 18"), or
/// empty outside a SLURM job.
std::string SlurmJobIdentity();

/// Read and validate a journal (`rel` below `root`). NotFound if there is none;
/// DataLoss if not even its header validates.
Result<JournalContents> ReadJournal(const std::string& root, const std::string& rel, FileSystem* fs);
/// ReadJournal, the entries left in the bytes read.
Result<JournalView> ReadJournalInPlace(const std::string& root, const std::string& rel, FileSystem* fs);

/// The parts of a dataset structure a user changes between runs, each a
/// parameter of its own (examples per shard, compression, shard file type,
/// hash checksums, attributes as "name dtype[shape]"), for a job's parameters
/// ahead of any digest: a refused rerun then names the option that changed.
JobParameters StructureParameters(const DatasetStructure& structure);

/// Empty if `now` equals `recorded`; else "<name>: the journal has <a>, this run <b>"
/// for the first parameter that differs (or is missing on either side).
std::string DifferingParameter(const JobParameters& recorded, const JobParameters& now);

/// Appends units to a journal. Thread-safe: shard writers report from their threads.
class JournalWriter {
 public:
  /// Replace the journal at `rel` (write-and-rename, fsynced) with a header of
  /// `parameters` and `units`, then keep it open for appends.
  static Result<std::unique_ptr<JournalWriter>> Create(const std::string& root, const std::string& rel,
                                                       const JobParameters& parameters,
                                                       const std::vector<JournalUnit>& units, FileSystem* fs);
  /// As above, for a job that journals entries.
  static Result<std::unique_ptr<JournalWriter>> Create(const std::string& root, const std::string& rel,
                                                       const JobParameters& parameters,
                                                       const std::vector<JournalEntry>& entries, FileSystem* fs);
  ~JournalWriter();
  JournalWriter(const JournalWriter&) = delete;
  JournalWriter& operator=(const JournalWriter&) = delete;

  /// Append one unit. It survives the process when this returns OK; it is
  /// synced to disk within kSyncInterval (a lost node may lose the records of
  /// that last interval, which a rerun redoes).
  Status Append(const JournalUnit& unit);
  /// Append one entry, as above.
  Status Append(const JournalEntry& entry);
  static constexpr std::chrono::milliseconds kSyncInterval{1000};
  /// Close and remove the journal (the job is committed or thrown away).
  Status Remove();

 private:
  JournalWriter(std::string path, int fd, FileSystem* fs) : path_(std::move(path)), fd_(fd), fs_(fs) {}
  static Result<std::unique_ptr<JournalWriter>> CreateWith(const std::string& root, const std::string& rel,
                                                           std::string text, FileSystem* fs);
  Status AppendRecord(const std::string& record);
  std::mutex mu_;
  std::string path_;
  int fd_ = -1;
  FileSystem* fs_ = nullptr;
  std::chrono::steady_clock::time_point last_sync_ = std::chrono::steady_clock::now();
};

/// A journal found under a dataset.
struct JournalFile {
  std::string job_id;
  int rank = 0;
  std::string rel;  ///< relative to the root
};
/// The journals under `root` (none if the folder is missing).
Result<std::vector<JournalFile>> ListJournals(const std::string& root, FileSystem* fs);
/// Remove the other files a job keeps beside its journals
/// (`<kJournalDir>/<job_id>.<what>.partial`: an index build's partial index);
/// a missing folder is fine.
Status RemoveJobPartials(const std::string& root, const std::string& job_id, FileSystem* fs);

}  // namespace sedpack::journal_internal
