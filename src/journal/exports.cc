// SPDX-License-Identifier: Apache-2.0
// Journals of exports (exports_internal.h).
#include "journal/exports_internal.h"
#include "journal/stats_internal.h"

#include <cerrno>
#include <cstdio>
#include <optional>
#include <cstring>
#include <charconv>
#include <filesystem>
#include <span>

#include "codecs/compress_internal.h"
#include "sedpack/codecs/hash.h"
#include "sedpack/io/file.h"

namespace sedpack::journal_internal {
namespace {

// Form 2: the range's checksum is a CRC-64 (form 1, "rows", held an XXH3-64:
// a rerun by this build ignores such records and exports those rows again).
constexpr std::string_view kRowRangeKind = "rows 2";

bool ParseU64(std::string_view* in, std::uint64_t* out) {
  const auto [end, ec] = std::from_chars(in->data(), in->data() + in->size(), *out);
  if (ec != std::errc() || end == in->data()) return false;
  in->remove_prefix(static_cast<std::size_t>(end - in->data()));
  if (in->empty() || in->front() != ' ') return false;
  in->remove_prefix(1);
  return true;
}

}  // namespace

JournalEntry EncodeRowRange(const RowRange& r) {
  return JournalEntry{std::string(kRowRangeKind), std::to_string(r.first) + " " + std::to_string(r.rows) + " " +
                                                      std::to_string(r.offset) + " " + std::to_string(r.bytes) +
                                                      " " + r.hash};
}

std::optional<RowRange> DecodeRowRange(const JournalEntry& entry) {
  if (entry.kind != kRowRangeKind) return std::nullopt;
  std::string_view in = entry.data;
  RowRange r;
  if (!ParseU64(&in, &r.first) || !ParseU64(&in, &r.rows) || !ParseU64(&in, &r.offset) ||
      !ParseU64(&in, &r.bytes)) {
    return std::nullopt;
  }
  if (in.size() != 16 || in.find_first_not_of("0123456789abcdef") != std::string_view::npos) return std::nullopt;
  r.hash = std::string(in);
  return r;
}

ExportPaths ExportPathsFor(const std::string& out) {
  const std::filesystem::path p(out);
  ExportPaths paths;
  paths.folder = p.has_parent_path() ? p.parent_path().string() : std::string(".");
  const std::string name = p.filename().string();
  paths.journal = name + ".sedpack-journal";
  paths.partial = paths.folder + "/." + name + ".sedpack-partial";
  return paths;
}

Result<ExportJournalState> ReadExportJournal(const std::string& command, const std::string& out,
                                             const JobParameters& parameters, bool restart, FileSystem* fs) {
  const ExportPaths paths = ExportPathsFor(out);
  const std::string journal = paths.folder + "/" + paths.journal;
  ExportJournalState state;
  FileSystem& f = FileSystemOr(fs);
  if (restart) {
    for (const std::string& p : {journal, paths.partial}) {
      if (f.Unlink(p.c_str()) != 0 && errno != ENOENT) {
        return Status::IOError(p, ": cannot remove it for --restart: ", std::strerror(errno));
      }
    }
    return state;
  }
  auto read = ReadJournal(paths.folder, paths.journal, fs);
  if (read.status().code() == StatusCode::kNotFound) return state;
  state.found = true;
  if (!read.ok()) {
    state.note = read.status().message() + ": starting over";
    return state;
  }
  const std::string differs = DifferingParameter(read->parameters, parameters);
  if (!differs.empty()) {
    return Status::InvalidArgument(command, ": ", journal, " is the journal of another export to ", out, " (",
                                   differs, "); run with --restart to throw it away, or remove it");
  }
  for (const JournalEntry& e : read->entries) {
    auto r = DecodeRowRange(e);
    if (!r) break;
    state.recorded.push_back(std::move(*r));
  }
  return state;
}

Result<std::unique_ptr<JournalWriter>> OpenExportJournal(const std::string& out, const JobParameters& parameters,
                                                         const std::vector<RowRange>& kept, FileSystem* fs) {
  const ExportPaths paths = ExportPathsFor(out);
  std::vector<JournalEntry> entries;
  for (const RowRange& r : kept) entries.push_back(EncodeRowRange(r));
  return JournalWriter::Create(paths.folder, paths.journal, parameters, entries, fs);
}

std::string ExportJobId(const JobParameters& parameters) {
  std::string identity;
  for (const auto& [name, value] : parameters) identity += name + "=" + value + "\n";
  return JobIdFor(identity);
}

std::string DigestOf(std::string_view text) {
  JournalTimer timer;
  const HashAlgorithm sha[] = {HashAlgorithm::kSha256};
  auto h = HashBytes(sha, std::as_bytes(std::span<const char>(text.data(), text.size())));
  return h.ok() && !h->empty() ? (*h)[0] : std::string();
}

std::string DigestOfShards(const std::vector<ShardInfo>& shards) {
  std::string listed;
  for (const ShardInfo& s : shards) {
    if (!s.file_infos.empty()) {
      listed += s.file_infos[0].file_path;
      for (const std::string& h : s.file_infos[0].hash_checksums) listed += " " + h;
    }
    listed += " " + std::to_string(s.number_of_examples) + "\n";
  }
  return DigestOf(listed);
}

// CRC-64 (codecs' Crc64): an export-trs hashes every byte it writes, and
// XXH64 cost it a tenth of its time, XXH3-64 (dispatched to AVX2) 3%.
struct RangeHasher::State {
  std::uint64_t crc = 0;
};

RangeHasher::RangeHasher() : state_(std::make_unique<State>()) {}
RangeHasher::~RangeHasher() = default;

void RangeHasher::Update(const void* data, std::size_t size) {
  JournalComputeTimer timer;
  state_->crc = Crc64(std::span<const std::byte>(static_cast<const std::byte*>(data), size), state_->crc);
}

std::string RangeHasher::Finish() {
  JournalTimer timer;
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(state_->crc));
  state_->crc = 0;
  return hex;
}

}  // namespace sedpack::journal_internal
