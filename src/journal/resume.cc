// SPDX-License-Identifier: Apache-2.0
#include "journal/resume_internal.h"

#include <fcntl.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <optional>
#include <set>
#include <span>

#include "codecs/decode_points_internal.h"
#include "codecs/hash_fd.h"
#include "sedpack/io/file.h"
#include "sidecar/checks_internal.h"

namespace sedpack::journal_internal {
namespace {

// Whether the open shard's stored bytes have the checks sidecar record's fast
// checksum (XXH3, several GB/s, as a verified read checks a shard); nullopt
// when the unit has no record of its size to check against.
std::optional<bool> FastChecksumHolds(FileSystem& fs, int fd, const JournalUnit& u) {
  auto checks = sidecar_internal::DecodeShardChecksList(u.checks);
  if (!checks.ok() || checks->size() != 1 || (*checks)[0].stored_size != u.size) return std::nullopt;
  codecs_internal::FastChecksummer sum;
  std::vector<std::byte> buffer(std::min<std::uint64_t>(u.size, 4ULL << 20));
  for (std::uint64_t at = 0; at < u.size;) {
    const long got = fs.Pread(fd, buffer.data(), std::min<std::uint64_t>(buffer.size(), u.size - at),
                              static_cast<std::int64_t>(at));
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return false;
    sum.Update(std::span<const std::byte>(buffer.data(), static_cast<std::size_t>(got)));
    at += static_cast<std::uint64_t>(got);
  }
  return sum.Digest() == (*checks)[0].stored_checksum;
}

// Whether the unit's file is the one the journal recorded: inside the rank's
// folders, of the recorded size, with the recorded checksum (or hashes).
bool UnitHolds(const Dataset& dataset, const std::string& folder, const JournalUnit& u) {
  const std::string& rel = u.shard.file_infos[0].file_path;
  const std::string prefix = std::string(SplitName(u.split)) + "/" + folder + "/";
  if (rel.compare(0, prefix.size(), prefix) != 0 || rel.find("..") != std::string::npos) return false;
  if (!CheckStaysBeneath(dataset.root(), rel, dataset.file_system()).ok()) return false;
  auto size = FileSize(dataset.PathOf(rel), dataset.file_system());
  if (!size.ok() || *size != u.size) return false;
  FileSystem& fs = FileSystemOr(dataset.file_system());
  const std::string path = dataset.PathOf(rel);
  const int fd = fs.Open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  bool holds = false;
  if (std::optional<bool> fast = FastChecksumHolds(fs, fd, u)) {
    holds = *fast;
  } else {
    auto hashes = HashFd(dataset.info().dataset_structure.hash_checksum_algorithms, fd, path, dataset.file_system());
    holds = hashes.ok() && *hashes == u.shard.file_infos[0].hash_checksums;
  }
  (void)fs.Close(fd);
  return holds;
}

// The units to keep: seq 0, 1, 2, ... as long as each holds. A gap (a shard
// that was in flight when the job stopped) ends the run: what follows it in
// close order is written again, so the output stays in order.
std::vector<JournalUnit> KeptPrefix(const Dataset& dataset, const std::string& folder,
                                    std::vector<JournalUnit> units) {
  std::map<std::uint64_t, JournalUnit> by_seq;
  for (auto& u : units) by_seq.try_emplace(u.seq, std::move(u));
  std::vector<JournalUnit> kept;
  std::uint64_t next = 0;
  for (auto& [seq, u] : by_seq) {
    if (seq != next || !UnitHolds(dataset, folder, u)) break;
    kept.push_back(std::move(u));
    ++next;
  }
  return kept;
}

// Remove what is below the rank's folders and is not kept: shards of a torn
// or unverified tail, temporary files, leaf lists of the stopped run.
Status RemoveUnkept(const Dataset& dataset, const std::string& folder, const std::set<std::string>& keep) {
  FileSystem* fs = dataset.file_system();
  for (Split s : AllSplits()) {
    const std::string top = std::string(SplitName(s)) + "/" + folder;
    const std::string abs = dataset.PathOf(top);
    if (!PathExists(abs, fs)) continue;
    std::vector<std::string> files, dirs;
    SEDPACK_RETURN_NOT_OK(WalkTree(
        abs,
        [&](const TreeEntry& e, bool*) {
          const std::string rel = top + "/" + e.relative;
          if (e.type == FileType::kDirectory) {
            dirs.push_back(rel);
          } else if (!keep.count(rel)) {
            files.push_back(rel);
          }
          return Status::OK();
        },
        fs));
    for (const std::string& f : files) SEDPACK_RETURN_NOT_OK(RemoveTree(dataset.PathOf(f), fs));
    // Deepest first; a folder that still holds a kept shard stays.
    for (auto it = dirs.rbegin(); it != dirs.rend(); ++it) (void)FileSystemOr(fs).Rmdir(dataset.PathOf(*it).c_str());
  }
  return Status::OK();
}

}  // namespace

namespace {

// Where a shard stands in its rank's job: the same fields on both sides.
template <typename To, typename From>
To WithPlace(const From& from) {
  To to;
  to.seq = from.seq;
  to.split = from.split;
  to.first = from.first;
  to.size = from.size;
  return to;
}

}  // namespace

JournalUnit ToJournalUnit(const FilledShard& shard) {
  auto u = WithPlace<JournalUnit>(shard);
  u.shard = shard.info;
  if (auto e = sidecar_internal::EncodeShardChecks(shard.checks); e.ok()) u.checks = std::move(e).value();
  return u;
}

FilledShard ToFilledShard(const JournalUnit& unit) {
  auto f = WithPlace<FilledShard>(unit);
  f.info = unit.shard;
  auto checks = sidecar_internal::DecodeShardChecksList(unit.checks);
  if (checks.ok() && checks->size() == 1) {
    f.checks = std::move((*checks)[0]);
  } else {
    f.checks.path = unit.shard.file_infos[0].file_path;  // no record: reads check the hashes
  }
  return f;
}

Result<RankResume> ResumeRank(const Dataset& dataset, const std::string& job_id, int rank,
                              const std::string& folder, const JobParameters& parameters, bool restart) {
  FileSystem* fs = dataset.file_system();
  const std::string rel = JournalPath(job_id, rank);
  std::vector<JournalUnit> units;
  RankResume out;
  if (!restart && PathExists(dataset.PathOf(rel), fs)) {
    auto read = ReadJournal(dataset.root(), rel, fs);
    // A journal whose very header is torn (killed while it was first written)
    // holds nothing to keep.
    if (read.ok()) {
      if (std::string diff = DifferingParameter(read->parameters, parameters); !diff.empty()) {
        return Status::InvalidArgument("job ", job_id, " has a journal (", rel, ") of a run with other parameters: ",
                                       diff, "; run it with --restart to throw that work away");
      }
      out.recorded = read->units.size();
      units = KeptPrefix(dataset, folder, std::move(read->units));
    }
  }
  std::set<std::string> keep;
  for (const JournalUnit& u : units) keep.insert(u.shard.file_infos[0].file_path);
  SEDPACK_RETURN_NOT_OK(RemoveUnkept(dataset, folder, keep));
  for (const JournalUnit& u : units) {
    out.kept_examples[static_cast<int>(u.split)] += static_cast<std::uint64_t>(u.shard.number_of_examples);
    out.kept.push_back(ToFilledShard(u));
  }
  SEDPACK_RETURN_NOT_OK(CreateDirectories(dataset.PathOf(kJournalDir), fs));
  // A kill while the journal was being rewritten left its temporary file.
  const std::string own = "_of_" + job_id + ".r" + std::to_string(rank) + ".journal";
  for (const DirEntry& e : ListDirectory(dataset.PathOf(kJournalDir), fs).ValueOr({})) {
    if (IsAtomicWriteTempName(e.name) && e.name.size() > own.size() &&
        e.name.compare(e.name.size() - own.size(), own.size(), own) == 0) {
      // Appended: gcc 12 -O2 gives a false -Warray-bounds on `std::string(...) + "/"`.
      std::string temp(kJournalDir);
      temp += '/';
      temp += e.name;
      (void)RemoveTree(dataset.PathOf(temp), fs);
    }
  }
  SEDPACK_ASSIGN_OR_RETURN(out.journal, JournalWriter::Create(dataset.root(), rel, parameters, units, fs));
  return out;
}

Status StartJournal(const std::string& root, const std::string& job_id, const JobParameters& parameters,
                    FileSystem* fs) {
  SEDPACK_RETURN_NOT_OK(CreateDirectories(JoinRoot(root, kJournalDir), fs));
  SEDPACK_ASSIGN_OR_RETURN(auto journal, JournalWriter::Create(root, JournalPath(job_id, 0), parameters, std::vector<JournalUnit>{}, fs));
  return Status::OK();
}

void ClearUnstartedJournal(const std::string& root, FileSystem* fs) {
  const std::string sidecar = JoinRoot(root, ".sedpack-hpc");
  auto top = ListDirectory(root, fs);
  if (!top.ok() || top->size() != 1 || (*top)[0].name != ".sedpack-hpc") return;
  auto mid = ListDirectory(sidecar, fs);
  if (!mid.ok() || mid->size() > 1 || (mid->size() == 1 && (*mid)[0].name != "jobs")) return;
  for (const DirEntry& e : ListDirectory(JoinRoot(sidecar, "jobs"), fs).ValueOr({})) {
    if (!IsAtomicWriteTempName(e.name)) return;
  }
  (void)RemoveTree(sidecar, fs);
}

Status DiscardJob(const std::string& root, const std::string& job_id, FileSystem* fs) {
  SEDPACK_ASSIGN_OR_RETURN(auto journals, ListJournals(root, fs));
  for (const JournalFile& j : journals) {
    if (j.job_id == job_id) SEDPACK_RETURN_NOT_OK(RemoveTree(JoinRoot(root, j.rel), fs));
  }
  SEDPACK_RETURN_NOT_OK(RemoveJobPartials(root, job_id, fs));
  if (JobCommitted(root, job_id, fs)) return Status::OK();
  const std::string prefix = job_id + "-r";
  for (Split s : AllSplits()) {
    const std::string split_dir = JoinRoot(root, SplitName(s));
    if (!IsDirectory(split_dir, fs)) continue;
    SEDPACK_ASSIGN_OR_RETURN(auto entries, ListDirectory(split_dir, fs));
    for (const DirEntry& e : entries) {
      const std::string rest = e.name.compare(0, prefix.size(), prefix) == 0 ? e.name.substr(prefix.size()) : "";
      if (e.type == FileType::kDirectory && !rest.empty() && rest.find_first_not_of("0123456789") == std::string::npos) {
        SEDPACK_RETURN_NOT_OK(RemoveTree(JoinRoot(split_dir, e.name), fs));
      }
    }
  }
  return Status::OK();
}

bool JobCommitted(const std::string& root, const std::string& job_id, FileSystem* fs) {
  for (Split s : AllSplits()) {
    const std::string rel = std::string(SplitName(s)) + "/shards_list.json";
    if (!PathExists(JoinRoot(root, rel), fs)) continue;
    auto text = ReadFileTextBeneath(root, rel, 1ULL << 30, fs);
    if (text.ok() && text->find("\"" + std::string(SplitName(s)) + "/" + job_id + "-r") != std::string::npos) {
      return true;
    }
  }
  return false;
}

}  // namespace sedpack::journal_internal
