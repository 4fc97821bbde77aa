// SPDX-License-Identifier: Apache-2.0
#include "journal/journal_internal.h"

#include <cstdlib>

#include <fcntl.h>

#include <cerrno>
#include <chrono>
#include <cstring>

#include "codecs/compress_internal.h"
#include "io/kill_point.h"
#include "journal/stats_internal.h"
#include "sedpack/codecs/hash.h"
#include "sedpack/io/file.h"

namespace sedpack::journal_internal {
namespace {

// Record framing: magic, type, payload size, payload, CRC-32C of type, size
// and payload. A header's size field is checked against kMaxPayload before
// anything is allocated.
constexpr char kMagic[4] = {'S', 'P', 'J', '1'};
constexpr std::uint8_t kHeader = 1;
constexpr std::uint8_t kUnit = 2;
constexpr std::uint8_t kEntry = 3;
constexpr std::size_t kFrame = 4 + 1 + 4;
constexpr std::uint32_t kMaxPayload = 16u << 20;
constexpr std::uint64_t kMaxJournalBytes = 1ULL << 32;

void PutU32(std::string* out, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) out->push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}
void PutU64(std::string* out, std::uint64_t v) {
  for (int i = 0; i < 8; ++i) out->push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}
void PutBytes(std::string* out, std::string_view b) {
  PutU32(out, static_cast<std::uint32_t>(b.size()));
  out->append(b);
}

// Reads fields from a payload whose every size is checked against what is left.
class Cursor {
 public:
  explicit Cursor(std::string_view data) : data_(data) {}
  bool U8(std::uint8_t* v) {
    if (data_.size() < 1) return false;
    *v = static_cast<std::uint8_t>(data_[0]);
    data_.remove_prefix(1);
    return true;
  }
  bool U32(std::uint32_t* v) {
    if (data_.size() < 4) return false;
    *v = 0;
    for (int i = 0; i < 4; ++i) *v |= static_cast<std::uint32_t>(static_cast<std::uint8_t>(data_[i])) << (8 * i);
    data_.remove_prefix(4);
    return true;
  }
  bool U64(std::uint64_t* v) {
    if (data_.size() < 8) return false;
    *v = 0;
    for (int i = 0; i < 8; ++i) *v |= static_cast<std::uint64_t>(static_cast<std::uint8_t>(data_[i])) << (8 * i);
    data_.remove_prefix(8);
    return true;
  }
  bool Bytes(std::string_view* v) {
    std::uint32_t n = 0;
    if (!U32(&n) || n > data_.size()) return false;
    *v = data_.substr(0, n);
    data_.remove_prefix(n);
    return true;
  }
  bool done() const { return data_.empty(); }

 private:
  std::string_view data_;
};

std::uint32_t FrameCrc(std::uint8_t type, std::string_view payload) {
  std::string head;
  head.push_back(static_cast<char>(type));
  PutU32(&head, static_cast<std::uint32_t>(payload.size()));
  std::uint32_t crc = Crc32c(std::as_bytes(std::span<const char>(head.data(), head.size())));
  return Crc32c(std::as_bytes(std::span<const char>(payload.data(), payload.size())), crc);
}

std::string Frame(std::uint8_t type, std::string_view payload) {
  std::string out;
  // Sized once: a record of a subtree's index entries is hundreds of kB.
  out.reserve(kFrame + payload.size() + 4);
  out.append(kMagic, 4);
  out.push_back(static_cast<char>(type));
  PutU32(&out, static_cast<std::uint32_t>(payload.size()));
  out.append(payload);
  PutU32(&out, FrameCrc(type, payload));
  return out;
}

std::string EncodeHeader(const JobParameters& parameters) {
  std::string p;
  PutU32(&p, static_cast<std::uint32_t>(parameters.size()));
  for (const auto& [name, value] : parameters) {
    PutBytes(&p, name);
    PutBytes(&p, value);
  }
  return Frame(kHeader, p);
}

std::string EncodeUnit(const JournalUnit& u) {
  ShardsList one;
  one.relative_path_self = "journal/shards_list.json";  // the list format wants one; never read
  one.number_of_examples = u.shard.number_of_examples;
  one.shard_files.push_back(u.shard);
  std::string p;
  PutU64(&p, u.seq);
  p.push_back(static_cast<char>(u.split));
  PutU64(&p, u.first);
  PutU64(&p, u.size);
  PutBytes(&p, SerializeShardsList(one));
  PutBytes(&p, std::string_view(reinterpret_cast<const char*>(u.checks.data()), u.checks.size()));
  return Frame(kUnit, p);
}

std::string EncodeEntry(const JournalEntry& e) {
  // Framed in place (Frame's layout), so that the data, hundreds of kB for a
  // subtree of an index build, is copied once.
  const std::size_t payload = 8 + e.kind.size() + e.data.size();
  std::string out;
  out.reserve(kFrame + payload + 4);
  out.append(kMagic, 4);
  out.push_back(static_cast<char>(kEntry));
  PutU32(&out, static_cast<std::uint32_t>(payload));
  PutBytes(&out, e.kind);
  PutBytes(&out, e.data);
  PutU32(&out, FrameCrc(kEntry, std::string_view(out).substr(kFrame)));
  return out;
}

bool DecodeEntry(std::string_view payload, EntryView* e) {
  Cursor c(payload);
  return c.Bytes(&e->kind) && c.Bytes(&e->data) && c.done() && !e->kind.empty();
}

bool DecodeHeader(std::string_view payload, JobParameters* out) {
  Cursor c(payload);
  std::uint32_t n = 0;
  if (!c.U32(&n)) return false;
  for (std::uint32_t i = 0; i < n; ++i) {
    std::string_view name, value;
    if (!c.Bytes(&name) || !c.Bytes(&value)) return false;
    out->emplace_back(std::string(name), std::string(value));
  }
  return c.done();
}

bool DecodeUnit(std::string_view payload, JournalUnit* u) {
  Cursor c(payload);
  std::uint8_t split = 0;
  std::string_view list, checks;
  if (!c.U64(&u->seq) || !c.U8(&split) || !c.U64(&u->first) || !c.U64(&u->size) || !c.Bytes(&list) ||
      !c.Bytes(&checks) || !c.done() || split > static_cast<std::uint8_t>(Split::kHoldout)) {
    return false;
  }
  u->split = static_cast<Split>(split);
  auto parsed = ParseShardsList(list, "journal record");
  if (!parsed.ok() || parsed->shard_files.size() != 1 || parsed->shard_files[0].file_infos.empty()) return false;
  u->shard = std::move(parsed->shard_files[0]);
  const auto* b = reinterpret_cast<const std::byte*>(checks.data());
  u->checks.assign(b, b + checks.size());
  return true;
}

// The next record at `*pos`: false (and *pos unchanged) if it does not validate.
bool NextRecord(std::string_view file, std::size_t* pos, std::uint8_t* type, std::string_view* payload) {
  std::string_view rest = file.substr(*pos);
  if (rest.size() < kFrame + 4 || std::memcmp(rest.data(), kMagic, 4) != 0) return false;
  Cursor c(rest.substr(4));
  std::uint32_t n = 0, crc = 0;
  (void)c.U8(type);
  (void)c.U32(&n);
  if (n > kMaxPayload || rest.size() < kFrame + n + 4) return false;
  *payload = rest.substr(kFrame, n);
  Cursor tail(rest.substr(kFrame + n, 4));
  (void)tail.U32(&crc);
  if (crc != FrameCrc(*type, *payload)) return false;
  *pos += kFrame + n + 4;
  return true;
}

Status WriteAll(FileSystem& fs, int fd, std::string_view data, const std::string& path) {
  while (!data.empty()) {
    const long n = fs.Write(fd, data.data(), data.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return Status::IOError(path, ": cannot write the job journal: ", std::strerror(n < 0 ? errno : EIO));
    data.remove_prefix(static_cast<std::size_t>(n));
  }
  return Status::OK();
}

}  // namespace

std::string JournalPath(const std::string& job_id, int rank) {
  return std::string(kJournalDir) + "/" + job_id + ".r" + std::to_string(rank) + ".journal";
}

std::string JobIdFor(std::string_view identity) {
  auto h = HashBytes(std::vector<HashAlgorithm>{HashAlgorithm::kSha256},
                     std::as_bytes(std::span<const char>(identity.data(), identity.size())));
  const std::string hex = h.ok() && !h->empty() ? (*h)[0] : std::string(64, '0');
  return "j" + hex.substr(0, 11);
}

std::string SlurmJobIdentity() {
  auto env = [](const char* name) -> std::string {
    const char* v = std::getenv(name);
    return v != nullptr ? std::string(v) : std::string();
  };
  // An array task keeps its array job id and task id across requeues; its
  // SLURM_JOB_ID is its own, and a plain job's is all there is.
  const std::string array = env("SLURM_ARRAY_JOB_ID"), task = env("SLURM_ARRAY_TASK_ID");
  if (!array.empty() && !task.empty()) return "slurm job " + array + " task " + task;
  const std::string job = env("SLURM_JOB_ID");
  return job.empty() ? std::string() : "slurm job " + job;
}

std::string JobIdentity(std::string_view command, std::string_view user_name, std::string_view parameters) {
  std::string out(command);
  if (!user_name.empty()) return out.append("\njob id ").append(user_name);
  if (const std::string slurm = SlurmJobIdentity(); !slurm.empty()) out.append("\n").append(slurm);
  return out.append("\n").append(parameters);
}

Result<JournalView> ReadJournalInPlace(const std::string& root, const std::string& rel, FileSystem* fs) {
  JournalTimer timer;
  SEDPACK_ASSIGN_OR_RETURN(std::string read, ReadFileTextBeneath(root, rel, kMaxJournalBytes, fs));
  const auto file = std::make_shared<const std::string>(std::move(read));
  const std::string_view text = *file;
  JournalView out;
  std::size_t pos = 0;
  std::uint8_t type = 0;
  std::string_view payload;
  if (!NextRecord(text, &pos, &type, &payload) || type != kHeader || !DecodeHeader(payload, &out.parameters)) {
    return Status::Corruption(JoinRoot(root, rel), ": the job journal's header does not validate");
  }
  while (pos < text.size()) {
    const std::size_t at = pos;
    JournalUnit u;
    EntryView e;
    bool ok = NextRecord(text, &pos, &type, &payload);
    if (ok && type == kUnit && DecodeUnit(payload, &u)) {
      out.units.push_back(std::move(u));
    } else if (ok && type == kEntry && DecodeEntry(payload, &e)) {
      e.file = file;
      out.entries.push_back(std::move(e));
    } else {
      pos = at;
      out.torn_tail = true;
      break;
    }
  }
  return out;
}

Result<JournalContents> ReadJournal(const std::string& root, const std::string& rel, FileSystem* fs) {
  SEDPACK_ASSIGN_OR_RETURN(JournalView view, ReadJournalInPlace(root, rel, fs));
  JournalTimer timer;
  JournalContents out{std::move(view.parameters), std::move(view.units), {}, view.torn_tail};
  out.entries.reserve(view.entries.size());
  for (const EntryView& e : view.entries) out.entries.push_back({std::string(e.kind), std::string(e.data)});
  return out;
}

JobParameters StructureParameters(const DatasetStructure& structure) {
  std::string hashes, attributes;
  for (HashAlgorithm h : structure.hash_checksum_algorithms) {
    hashes += (hashes.empty() ? "" : ",") + std::string(HashAlgorithmName(h));
  }
  for (const Attribute& a : structure.saved_data_description) {
    attributes += (attributes.empty() ? "" : ", ") + a.name + " " + a.dtype + "[";
    for (std::size_t i = 0; i < a.shape.size(); ++i) attributes += (i ? "," : "") + std::to_string(a.shape[i]);
    attributes += "]";
  }
  return {{"examples per shard", std::to_string(structure.examples_per_shard)},
          {"compression", std::string(CompressionName(structure.compression))},
          {"shard file type", std::string(ShardFileTypeName(structure.shard_file_type))},
          {"hash checksums", hashes},
          {"attributes", attributes}};
}

std::string DifferingParameter(const JobParameters& recorded, const JobParameters& now) {
  auto find = [](const JobParameters& p, const std::string& name) -> const std::string* {
    for (const auto& [n, v] : p) {
      if (n == name) return &v;
    }
    return nullptr;
  };
  for (const auto& [name, value] : now) {
    const std::string* old = find(recorded, name);
    if (!old) return name + ": the journal does not record it, this run has " + value;
    if (*old != value) return name + ": the journal has " + *old + ", this run " + value;
  }
  for (const auto& [name, value] : recorded) {
    if (!find(now, name)) return name + ": the journal has " + value + ", this run does not set it";
  }
  return {};
}

Result<std::unique_ptr<JournalWriter>> JournalWriter::Create(const std::string& root, const std::string& rel,
                                                             const JobParameters& parameters,
                                                             const std::vector<JournalUnit>& units,
                                                             FileSystem* fs) {
  JournalTimer timer;
  std::string text = EncodeHeader(parameters);
  for (const JournalUnit& u : units) text += EncodeUnit(u);
  return CreateWith(root, rel, std::move(text), fs);
}

Result<std::unique_ptr<JournalWriter>> JournalWriter::Create(const std::string& root, const std::string& rel,
                                                             const JobParameters& parameters,
                                                             const std::vector<JournalEntry>& entries,
                                                             FileSystem* fs) {
  JournalTimer timer;
  std::string text = EncodeHeader(parameters);
  for (const JournalEntry& e : entries) text += EncodeEntry(e);
  return CreateWith(root, rel, std::move(text), fs);
}

Result<std::unique_ptr<JournalWriter>> JournalWriter::CreateWith(const std::string& root, const std::string& rel,
                                                                 std::string text, FileSystem* fs) {
  SEDPACK_RETURN_NOT_OK(CheckStaysBeneath(root, rel, fs));
  const std::string path = JoinRoot(root, rel);
  AtomicWriteOptions wo;
  wo.sync = true;
  wo.file_system = fs;
  SEDPACK_RETURN_NOT_OK(WriteFileAtomic(path, text, wo));
  FileSystem& f = FileSystemOr(fs);
  const int fd = f.Open(path.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
  if (fd < 0) return Status::IOError(path, ": cannot open the job journal: ", std::strerror(errno));
  return std::unique_ptr<JournalWriter>(new JournalWriter(path, fd, fs));
}

JournalWriter::~JournalWriter() {
  if (fd_ >= 0) (void)FileSystemOr(fs_).Close(fd_);
}

Status JournalWriter::Append(const JournalUnit& unit) {
  JournalTimer timer;
  return AppendRecord(EncodeUnit(unit));
}

Status JournalWriter::Append(const JournalEntry& entry) {
  JournalTimer timer;
  return AppendRecord(EncodeEntry(entry));
}

Status JournalWriter::AppendRecord(const std::string& record) {
  std::lock_guard<std::mutex> lock(mu_);
  if (fd_ < 0) return Status::InvalidArgument(path_, ": the job journal is closed");
  FileSystem& f = FileSystemOr(fs_);
  SEDPACK_RETURN_NOT_OK(WriteAll(f, fd_, record, path_));
  CountJournalRecord(record.size());
  // A written record survives the death of the process (it is in the page
  // cache); only a lost node can lose the records since the last sync, and a
  // rerun then writes those units again: every kept unit is checked against
  // its files, never trusted. So the journal is synced at most every
  // kSyncInterval, not per record (a sync per shard cost a one-rank job a
  // tenth of its time).
  const auto now = std::chrono::steady_clock::now();
  if (now - last_sync_ >= kSyncInterval) {
    if (f.Fsync(fd_) != 0) return Status::IOError(path_, ": cannot fsync the job journal: ", std::strerror(errno));
    last_sync_ = now;
    CountJournalSync();
  }
  KillPoint("journal", path_);
  return Status::OK();
}

Status JournalWriter::Remove() {
  JournalTimer timer;
  std::lock_guard<std::mutex> lock(mu_);
  FileSystem& f = FileSystemOr(fs_);
  if (fd_ >= 0) (void)f.Close(fd_);
  fd_ = -1;
  if (f.Unlink(path_.c_str()) != 0 && errno != ENOENT) {
    return Status::IOError(path_, ": cannot remove the job journal: ", std::strerror(errno));
  }
  KillPoint("unlink", path_);
  return Status::OK();
}

Result<std::vector<JournalFile>> ListJournals(const std::string& root, FileSystem* fs) {
  std::vector<JournalFile> out;
  const std::string dir = JoinRoot(root, kJournalDir);
  if (!PathExists(dir, fs)) return out;
  SEDPACK_ASSIGN_OR_RETURN(auto entries, ListDirectory(dir, fs));
  constexpr std::string_view kExt = ".journal";
  for (const DirEntry& e : entries) {
    const std::string& n = e.name;
    if (e.type != FileType::kRegular || n.size() <= kExt.size() ||
        n.compare(n.size() - kExt.size(), kExt.size(), kExt) != 0) {
      continue;
    }
    const std::string stem = n.substr(0, n.size() - kExt.size());
    const std::size_t dot = stem.rfind(".r");
    if (dot == std::string::npos || dot == 0) continue;
    const std::string digits = stem.substr(dot + 2);
    if (digits.empty() || digits.size() > 6 || digits.find_first_not_of("0123456789") != std::string::npos) continue;
    out.push_back(JournalFile{stem.substr(0, dot), std::stoi(digits), std::string(kJournalDir) + "/" + n});
  }
  std::sort(out.begin(), out.end(), [](const JournalFile& a, const JournalFile& b) {
    return a.job_id != b.job_id ? a.job_id < b.job_id : a.rank < b.rank;
  });
  return out;
}

Status RemoveJobPartials(const std::string& root, const std::string& job_id, FileSystem* fs) {
  const std::string dir = JoinRoot(root, kJournalDir);
  if (!PathExists(dir, fs)) return Status::OK();
  SEDPACK_ASSIGN_OR_RETURN(auto entries, ListDirectory(dir, fs));
  constexpr std::string_view kExt = ".partial";
  const std::string prefix = job_id + ".";
  FileSystem& f = FileSystemOr(fs);
  for (const DirEntry& e : entries) {
    const std::string& n = e.name;
    if (n.size() <= prefix.size() + kExt.size() || n.compare(0, prefix.size(), prefix) != 0 ||
        n.compare(n.size() - kExt.size(), kExt.size(), kExt) != 0) {
      continue;
    }
    const std::string path = dir + "/" + n;
    if (f.Unlink(path.c_str()) != 0 && errno != ENOENT) {
      return Status::IOError(path, ": cannot remove the job's partial file: ", std::strerror(errno));
    }
  }
  return Status::OK();
}

}  // namespace sedpack::journal_internal
