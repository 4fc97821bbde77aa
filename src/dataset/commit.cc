// SPDX-License-Identifier: Apache-2.0
#include "sedpack/dataset/commit.h"
#include "sedpack/io/file_system.h"

#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <string_view>
#include <vector>

#include "sedpack/io/file.h"
#include "io/kill_point.h"
#include "sedpack/metadata/paths.h"
#include "dataset/commit_internal.h"
#include "sidecar/sidecar_internal.h"
#include "sidecar/sidecar_files.h"
#include "dataset/commit_metadata.h"

namespace sedpack {
namespace {

constexpr std::string_view kMagic = "sedpack-hpc commit journal 1\n";
constexpr std::string_view kInfoName = "dataset_info.json";
constexpr std::uint64_t kMaxJournalBytes = 1ULL << 31;

std::string HexOf(std::string_view bytes) {
  return DigestHex(Sha256Of(std::as_bytes(std::span<const char>(bytes.data(), bytes.size()))));
}

// Journal layout (text header, length-prefixed payloads, so any bytes round-trip):
//   sedpack-hpc commit journal 1
//   before <sha256 hex of dataset_info.json before>
//   after <sha256 hex of dataset_info.json after>
//   files <n>
//   then n times: "<relative path>\n" and either "absent\n" or "<size>\n<size bytes>\n"
struct Journal {
  std::string before, after;
  std::vector<MetadataWrite> files;  // `previous` only
};

std::string Serialize(const Journal& j) {
  std::string out(kMagic);
  out += "before " + j.before + "\nafter " + j.after + "\nfiles " + std::to_string(j.files.size()) + "\n";
  for (const MetadataWrite& f : j.files) {
    out += f.relative + "\n";
    if (!f.previous) {
      out += "absent\n";
    } else {
      out += std::to_string(f.previous->size()) + "\n";
      out += *f.previous;
      out += "\n";
    }
  }
  return out;
}

// Parses bytes that may have been tampered with: every length is checked against
// what is left, and every path must be a dataset-relative shards_list.json.
Result<Journal> Parse(std::string_view text, const std::string& where) {
  auto bad = [&](std::string_view what) { return Status::Corruption(where, ": ", what); };
  if (text.substr(0, kMagic.size()) != kMagic) return bad("not a commit journal (bad first line)");
  std::size_t pos = kMagic.size();
  auto line = [&](std::string_view* out) -> bool {
    const std::size_t nl = text.find('\n', pos);
    if (nl == std::string_view::npos) return false;
    *out = text.substr(pos, nl - pos);
    pos = nl + 1;
    return true;
  };
  auto number = [](std::string_view s, std::uint64_t* v) {
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *v);
    return ec == std::errc() && p == s.data() + s.size() && !s.empty();
  };
  Journal j;
  std::string_view l;
  if (!line(&l) || l.substr(0, 7) != "before " || l.size() != 7 + 64) return bad("bad 'before' line");
  j.before = std::string(l.substr(7));
  if (!line(&l) || l.substr(0, 6) != "after " || l.size() != 6 + 64) return bad("bad 'after' line");
  j.after = std::string(l.substr(6));
  std::uint64_t n = 0;
  if (!line(&l) || l.substr(0, 6) != "files " || !number(l.substr(6), &n)) return bad("bad 'files' line");
  // Each entry takes at least two lines, which bounds n by the bytes present.
  if (n > text.size() / 4) return bad("file count larger than the journal");
  for (std::uint64_t i = 0; i < n; ++i) {
    MetadataWrite f;
    if (!line(&l)) return bad("truncated");
    f.relative = std::string(l);
    SEDPACK_RETURN_NOT_OK(ValidateRelativePath(f.relative, "journal entry").WithPrefix(where + ": "));
    const std::string_view name = std::string_view(f.relative).substr(f.relative.rfind('/') + 1);
    if (name != "shards_list.json") return bad("entry " + f.relative + " is not a shards_list.json");
    if (!line(&l)) return bad("truncated");
    if (l != "absent") {
      std::uint64_t size = 0;
      if (!number(l, &size) || size > text.size() - pos || text.size() - pos - size < 1 ||
          text[pos + size] != '\n') {
        return bad("bad size for " + f.relative);
      }
      f.previous = std::string(text.substr(pos, size));
      pos += size + 1;
    }
    j.files.push_back(std::move(f));
  }
  if (pos != text.size()) return bad("trailing bytes");
  return j;
}

Status RemoveJournal(const std::string& journal, FileSystem* fs) {
  if (FileSystemOr(fs).Unlink(journal.c_str()) != 0 && errno != ENOENT) {
    return Status::IOError("cannot remove ", journal, ": ", std::strerror(errno));
  }
  KillPoint("remove", journal);
  return Status::OK();
}

Status RestoreLists(const std::string& root, const std::vector<MetadataWrite>& files, FileSystem* fs) {
  // Parents were written last; restore them first so that, if this is cut short
  // too, the next recovery simply repeats it.
  for (std::size_t i = files.size(); i-- > 0;) {
    const MetadataWrite& f = files[i];
    const std::string path = JoinRoot(root, f.relative);
    SEDPACK_RETURN_NOT_OK(CheckStaysBeneath(root, f.relative, fs));
    if (f.previous) {
      SEDPACK_RETURN_NOT_OK(WriteFileAtomic(path, *f.previous, {.file_system = fs}));
    } else if (FileSystemOr(fs).Unlink(path.c_str()) != 0 && errno != ENOENT) {
      return Status::IOError("cannot remove ", path, ": ", std::strerror(errno));
    } else {
      KillPoint("remove", path);
    }
  }
  return Status::OK();
}

// Recovery with the lock held.
Result<bool> RecoverLocked(const std::string& root, FileSystem* fs) {
  const std::string journal = JoinRoot(root, kCommitJournalPath);
  if (!PathExists(journal, fs)) return false;
  SEDPACK_ASSIGN_OR_RETURN(std::string text, ReadFileTextBeneath(root, kCommitJournalPath, kMaxJournalBytes, fs));
  SEDPACK_ASSIGN_OR_RETURN(Journal j, Parse(text, journal));
  SEDPACK_ASSIGN_OR_RETURN(std::string info, ReadFileTextBeneath(root, kInfoName, kMaxJournalBytes, fs));
  const std::string now = HexOf(info);
  if (now == j.after) {
    // The commit point was reached; only the clean-up was cut short.
    SEDPACK_RETURN_NOT_OK(RemoveJournal(journal, fs));
    return true;
  }
  if (now != j.before) {
    return Status::Corruption(journal, ": an interrupted commit cannot be rolled back: ", JoinRoot(root, kInfoName),
                              " is neither the file it started from nor the one it was writing");
  }
  SEDPACK_RETURN_NOT_OK(RestoreLists(root, j.files, fs).WithPrefix("rolling back " + journal + ": "));
  SEDPACK_RETURN_NOT_OK(RemoveJournal(journal, fs));
  return true;
}

}  // namespace

Result<std::unique_ptr<LockFile>> TakeCommitLock(const std::string& root, const CommitLockOptions& options) {
  FileSystem* const fs = options.file_system;
  SEDPACK_RETURN_NOT_OK(CheckStaysBeneath(root, kCommitLockPath, fs));
  SEDPACK_RETURN_NOT_OK(CreateDirectories(SidecarDir(root), fs));
  LockFileOptions lo;
  lo.wait_timeout = options.wait_timeout;
  lo.stale_timeout = options.stale_timeout;
  lo.file_system = fs;
  SEDPACK_ASSIGN_OR_RETURN(std::unique_ptr<LockFile> lock, LockFile::Acquire(JoinRoot(root, kCommitLockPath), lo));
  SEDPACK_RETURN_NOT_OK(RecoverLocked(root, fs).status());
  return lock;
}

Result<bool> RecoverInterruptedCommit(const std::string& root, const CommitLockOptions& options) {
  FileSystem* const fs = options.file_system;
  const std::string journal = JoinRoot(root, kCommitJournalPath);
  if (!PathExists(journal, fs)) return false;
  SEDPACK_RETURN_NOT_OK(CheckStaysBeneath(root, kCommitLockPath, fs));
  SEDPACK_RETURN_NOT_OK(CreateDirectories(SidecarDir(root), fs));
  LockFileOptions lo;
  lo.wait_timeout = options.wait_timeout;
  lo.stale_timeout = options.stale_timeout;
  lo.file_system = fs;
  auto lock = LockFile::Acquire(JoinRoot(root, kCommitLockPath), lo);
  if (!lock.ok()) {
    return lock.status().WithPrefix(journal + ": a killed writer left a commit half done; it is undone on the first "
                                    "open with write access (e.g. `sedpack fix`), which failed: ");
  }
  auto recovered = RecoverLocked(root, fs);
  (void)(*lock)->Release();
  return recovered;
}

namespace {

// The commit itself, with the lock held (or, without dataset_info_text, for a
// subtree no other writer touches).
Status WriteCommit(const std::string& root, std::span<const MetadataWrite> lists,
                   const std::string* dataset_info_text, const LockFile* held, FileSystem* fs) {
  const AtomicWriteOptions write{.file_system = fs};
  std::string journal;
  if (dataset_info_text) {
    SEDPACK_ASSIGN_OR_RETURN(std::string info, ReadFileTextBeneath(root, kInfoName, kMaxJournalBytes, fs));
    Journal j;
    j.before = HexOf(info);
    j.after = HexOf(*dataset_info_text);
    for (const MetadataWrite& w : lists) j.files.push_back(MetadataWrite{w.relative, {}, w.previous});
    journal = JoinRoot(root, kCommitJournalPath);
    SEDPACK_RETURN_NOT_OK(CheckStaysBeneath(root, kCommitJournalPath, fs));
    SEDPACK_RETURN_NOT_OK(WriteFileAtomic(journal, Serialize(j), write));
  }
  std::size_t done = 0;
  Status st;
  for (; done < lists.size(); ++done) {
    st = CheckStaysBeneath(root, lists[done].relative, fs);
    if (st.ok()) st = WriteFileAtomic(JoinRoot(root, lists[done].relative), lists[done].text, write);
    if (!st.ok()) break;
  }
  if (st.ok() && dataset_info_text) st = CheckStaysBeneath(root, kInfoName, fs);
  // Last look before the commit point: had another process wrongly broken the
  // lock, committing now could overwrite its commit.
  if (st.ok() && held) st = held->StillHeld();
  if (st.ok() && dataset_info_text) st = WriteFileAtomic(JoinRoot(root, kInfoName), *dataset_info_text, write);
  if (st.ok()) {
    // Committed. A journal that cannot be removed now is removed by the next
    // recovery (dataset_info.json is the one it was writing): the commit stands.
    if (!journal.empty()) (void)RemoveJournal(journal, fs);
    return st;
  }
  // Undo in this process what was written. If that fails too, the journal
  // stays, and the next open with write access rolls the commit back.
  std::vector<MetadataWrite> written(lists.begin(), lists.begin() + static_cast<long>(done));
  if (RestoreLists(root, written, fs).ok() && !journal.empty()) (void)RemoveJournal(journal, fs);
  return st;
}

}  // namespace

Status CommitMetadataLocked(const std::string& root, std::span<const MetadataWrite> lists,
                            const std::string& dataset_info_text, const LockFile& held) {
  return WriteCommit(root, lists, &dataset_info_text, &held, held.file_system());
}

Status CommitMetadata(const std::string& root, std::span<const MetadataWrite> lists,
                      const std::string* dataset_info_text, const CommitLockOptions& options) {
  if (!dataset_info_text) return WriteCommit(root, lists, nullptr, nullptr, options.file_system);
  SEDPACK_ASSIGN_OR_RETURN(std::unique_ptr<LockFile> lock, TakeCommitLock(root, options));
  // The outcome is the commit's: a lock that could not be removed is stale
  // once this process is gone, and the next writer breaks it.
  Status st = WriteCommit(root, lists, dataset_info_text, lock.get(), options.file_system);
  (void)lock->Release();
  return st;
}

}  // namespace sedpack
