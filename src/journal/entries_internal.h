// SPDX-License-Identifier: Apache-2.0
// Jobs whose units are not shards of the dataset (a recompressed shard in a
// staging tree, a shard's content digest): their ranks journal JournalEntry
// records (journal_internal.h), and a rerun takes over what every rank of the
// earlier run recorded, whatever the number of ranks then and now.
// Project-private (src/ include directory), not installed.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "journal/journal_internal.h"

namespace sedpack::journal_internal {

/// What the journals of `job_id` under `root` hold.
struct RecordedEntries {
  bool found = false;                 ///< at least one journal of the job is there
  std::vector<JournalEntry> entries;  ///< of every rank's journal, rank by rank, in file order
};

/// Reads every journal of `job_id` under `root` (none: nothing found).
/// AlreadyExists (a usage error, exit 2) naming the first parameter that differs from `parameters`
/// ("... differs from the stopped run's (<difference>); run the same command,
/// or add --restart to throw the stopped run's work away"); `what` names the
/// job in that message. A journal whose header does not validate is ignored.
Result<RecordedEntries> ReadJobEntries(const std::string& root, const std::string& job_id,
                                       const JobParameters& parameters, const std::string& what, FileSystem* fs);
/// ReadJobEntries, the entries left in the bytes read (EntryView).
struct RecordedEntryViews {
  bool found = false;
  std::vector<EntryView> entries;
};
Result<RecordedEntryViews> ReadJobEntriesInPlace(const std::string& root, const std::string& job_id,
                                                 const JobParameters& parameters, const std::string& what,
                                                 FileSystem* fs);

/// This rank's journal of `job_id`, replaced by one holding `kept` and open
/// for appends.
Result<std::unique_ptr<JournalWriter>> StartEntryJournal(const std::string& root, const std::string& job_id, int rank,
                                                         const JobParameters& parameters,
                                                         const std::vector<JournalEntry>& kept, FileSystem* fs);

/// Remove every journal of `job_id` under `root` (any rank); a missing one is fine.
Status RemoveJobJournals(const std::string& root, const std::string& job_id, FileSystem* fs);

/// Appends entries to a journal on a thread of its own, so that the workers
/// that finish units do not wait for its fsyncs (nor for the fsync of a
/// unit's own file, `before`), nor for its thread's wake-up: the thread
/// wakes every 10 ms, or once half of `limit` entries wait. At most `limit`
/// entries wait (Push blocks beyond): a kill, or a full disk, loses at most
/// those (and the last 10 ms), which the rerun redoes; Finish (a stop honoured,
/// the job's end) appends them all.
class JournalQueue {
 public:
  explicit JournalQueue(JournalWriter* writer, std::size_t limit = 16);
  ~JournalQueue();
  JournalQueue(const JournalQueue&) = delete;
  JournalQueue& operator=(const JournalQueue&) = delete;

  /// Queue `entry`; on the queue's thread `before` (if set: e.g. make the
  /// unit's file durable) runs first, and the entry is appended only if it
  /// returns OK.
  void Push(JournalEntry entry, std::function<Status()> before = {});
  /// An appended entry's data, emptied with its room kept (or an empty
  /// string if none is spare): a worker that encodes its next entry into it
  /// writes to memory already paged in. Records of hundreds of kB (an index
  /// build's) each cost fresh pages otherwise, which on a VM where a page
  /// fault is dear cost more than encoding them.
  std::string Spare();
  /// The first failure so far (a full disk): the job should stop.
  Status status();
  /// Append everything queued, end the thread; the first failure.
  Status Finish();

 private:
  void Run();
  JournalWriter* writer_;
  std::mutex mu_;
  std::condition_variable cv_, room_;
  std::size_t limit_;
  std::deque<std::pair<JournalEntry, std::function<Status()>>> queue_;
  std::vector<std::string> spares_;
  bool done_ = false;
  Status first_error_;
  std::thread thread_;
};

/// Length-prefixed fields, so that a journal entry's data splits back into
/// exactly the fields it was made of.
std::string PackFields(const std::vector<std::string>& fields);
/// False if `data` is not a sequence of whole fields.
bool UnpackFields(std::string_view data, std::vector<std::string>* fields);

}  // namespace sedpack::journal_internal
