// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "sedpack/io/file_system.h"
#include "sedpack/status.h"

namespace sedpack {

// ---- Containment ---------------------------------------------------------------
// Paths inside a dataset come from its metadata, which is untrusted input, and
// the tree itself may hold symbolic links. Every file of a dataset is opened
// beneath its root (openat2 with RESOLVE_BENEATH, or canonical paths compared
// where that is refused), so that nothing a dataset contains makes us read a
// file outside it, and every writer checks its target folder with
// CheckStaysBeneath before it writes or deletes.
//
// Every function here goes through the FileSystem `fs` (file_system.h; nullptr:
// CurrentFileSystem()).

/// ReadFileBytes / ReadFileText / FileSize of `<root>/<relative>`, opened so that
/// neither `relative` nor a symbolic link in the tree leaves `root`: an absolute
/// path, a ".." above `root` or a link whose target lies outside gives
/// InvalidArgument "<root>/<relative> leads outside the dataset root <root>
/// (...)" (see IsOutsideRoot). Links that stay inside are followed; `root`
/// itself may be a link. Anything but a regular file is IOError.
Result<std::vector<std::byte>> ReadFileBytesBeneath(const std::string& root, std::string_view relative,
                                                    std::uint64_t max_bytes = (1ULL << 40),
                                                    FileSystem* fs = nullptr);
Result<std::string> ReadFileTextBeneath(const std::string& root, std::string_view relative,
                                        std::uint64_t max_bytes = (1ULL << 30), FileSystem* fs = nullptr);
Result<std::uint64_t> FileSizeBeneath(const std::string& root, std::string_view relative,
                                      FileSystem* fs = nullptr);

/// For writers and deleters of `<root>/<relative>`: the deepest folder on the
/// way to it that exists already (its parent, or an ancestor of the parent not
/// created yet) must lie beneath `root` (the rule and error of ReadFileBytesBeneath). The
/// file itself may be a symbolic link: an atomic write renames over the link
/// and a removal removes the link, neither follows it.
Status CheckStaysBeneath(const std::string& root, std::string_view relative, FileSystem* fs = nullptr);

/// True for the error the *Beneath functions and CheckStaysBeneath give for a
/// path that leads outside the root (as opposed to a missing or unreadable
/// file): its detail is StatusDetail::kOutsideRoot.
bool IsOutsideRoot(const Status& status);

/// Read a whole file. NotFound if missing; ResourceExhausted if larger than
/// `max_bytes` (checked before allocating); IOError otherwise. Messages name the path.
Result<std::vector<std::byte>> ReadFileBytes(const std::string& path,
                                             std::uint64_t max_bytes = (1ULL << 40), FileSystem* fs = nullptr);
/// Read a whole text file (same errors as ReadFileBytes).
Result<std::string> ReadFileText(const std::string& path, std::uint64_t max_bytes = (1ULL << 30),
                                 FileSystem* fs = nullptr);

/// Options for WriteFileAtomic.
struct AtomicWriteOptions {
  /// fsync the file (and its directory after the rename) for durability.
  bool sync = false;
  /// Fail with AlreadyExists instead of replacing an existing file.
  bool no_replace = false;
  /// The FileSystem written through (nullptr: CurrentFileSystem()).
  FileSystem* file_system = nullptr;
};

/// Write `data` to `path` so that the file appears complete or not at all: the bytes
/// go to a temporary file in the same folder named like the reference's
/// ("update_<time>_<32hex>_of_<name>"), then it is renamed over `path`. The temporary
/// file is removed on any failure. Creates missing parent folders.
Status WriteFileAtomic(const std::string& path, std::span<const std::byte> data,
                       const AtomicWriteOptions& options = {});
Status WriteFileAtomic(const std::string& path, std::string_view text,
                       const AtomicWriteOptions& options = {});
/// Receives the bytes of a streamed write, one piece at a time.
using ByteSink = std::function<Status(std::span<const std::byte>)>;
/// WriteFileAtomic for bytes that need not be in memory at once: `produce`
/// passes them to the sink it is given, in order, in pieces of any size (small
/// ones are gathered into larger writes). A non-OK status from `produce` fails
/// the write, and the temporary file is removed.
Status WriteFileAtomicStreamed(const std::string& path, const std::function<Status(const ByteSink&)>& produce,
                               const AtomicWriteOptions& options = {});
/// True for a file name WriteFileAtomic gives its temporary files
/// ("update_*_of_*"): what a process killed in the middle of a write leaves.
bool IsAtomicWriteTempName(std::string_view file_name);

/// Rename `from` (a file written by other means than WriteFileAtomic, e.g. a
/// library that writes its own files) over `to` durably: fsync `from`, rename,
/// fsync the folder of `to` (best effort, as WriteFileAtomic). IOError naming
/// the path that failed; `what` prefixes the messages.
Status MoveIntoPlace(const std::string& from, const std::string& to, std::string_view what = {},
                     FileSystem* fs = nullptr);

/// mkdir -p; IOError naming the path.
Status CreateDirectories(const std::string& path, FileSystem* fs = nullptr);
/// rm -r: removes `path` and, if it is a folder, everything in it; symbolic
/// links are removed, never followed. A missing `path` is OK. IOError naming
/// the first entry that could not be removed.
Status RemoveTree(const std::string& path, FileSystem* fs = nullptr);
/// Whether `path` names anything, links followed (false on any error).
bool PathExists(const std::string& path, FileSystem* fs = nullptr);
/// Whether `path` is a folder, links followed (false on any error).
bool IsDirectory(const std::string& path, FileSystem* fs = nullptr);
/// Whether `path` is a regular file, links followed (false on any error).
bool IsRegularFile(const std::string& path, FileSystem* fs = nullptr);
/// Whether `path` is a folder with nothing in it (false on any error).
bool IsEmptyDirectory(const std::string& path, FileSystem* fs = nullptr);
/// Size of a regular file; NotFound / IOError.
Result<std::uint64_t> FileSize(const std::string& path, FileSystem* fs = nullptr);
/// The entries of folder `path`, sorted by name; NotFound / IOError.
Result<std::vector<DirEntry>> ListDirectory(const std::string& path, FileSystem* fs = nullptr);
/// std::filesystem::weakly_canonical through the FileSystem: the canonical
/// form (RealPath) of the longest leading part of `path` that exists, with the
/// rest appended and normalized. `path` should be absolute.
std::string WeaklyCanonical(const std::string& path, FileSystem* fs = nullptr);
/// The target of the symbolic link `path`; IOError naming the path.
Result<std::string> ReadSymlink(const std::string& path, FileSystem* fs = nullptr);

/// An entry met by WalkTree.
struct TreeEntry {
  std::string relative;  ///< "a/b/c" below the root of the walk
  FileType type = FileType::kOther;  ///< as Lstat: links are not followed
  int depth = 0;  ///< 0 for the entries of the root itself
};
/// Visit everything below folder `root`, a folder before its contents, each
/// folder's entries in name order, without following symbolic links (a link
/// to a folder is visited, not entered). `visit` may set *descend to false to
/// skip a folder's contents; its first non-OK status ends the walk. IOError
/// naming the folder that cannot be listed (`root` too).
Status WalkTree(const std::string& root, const std::function<Status(const TreeEntry&, bool* descend)>& visit,
                FileSystem* fs = nullptr);
/// Join a root folder and a relative path with '/'.
std::string JoinRoot(const std::string& root, std::string_view relative);

}  // namespace sedpack
