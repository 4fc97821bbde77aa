// SPDX-License-Identifier: Apache-2.0
#include "sedpack/maintain/content.h"

#include <nlohmann/json.hpp>

#include <atomic>
#include <filesystem>
#include <mutex>
#include <set>

#include "journal/entries_internal.h"
#include "maintain/shard_tasks_internal.h"
#include "sedpack/cancel.h"
#include "sedpack/codecs/hash.h"
#include "sedpack/dataset/reader.h"
#include "sedpack/io/file.h"
#include "sidecar/sidecar_internal.h"
#include "sidecar/sidecar_files.h"

namespace sedpack {
namespace {

using Json = nlohmann::ordered_json;
constexpr std::string_view kFormat = "sedpack-hpc content digests 1";

// Length-prefixed fields into one hasher, so no two different inputs can
// produce the same byte stream.
class Feeder {
 public:
  Feeder() : h_(std::move(MakeHasher(HashAlgorithm::kSha256)).value()) {}
  void Field(std::span<const std::byte> bytes) {
    U64(bytes.size());
    h_->Update(bytes);
  }
  void Field(std::string_view s) { Field(std::as_bytes(std::span<const char>(s.data(), s.size()))); }
  void U64(std::uint64_t v) {
    std::byte b[8];
    for (int i = 0; i < 8; ++i) b[i] = static_cast<std::byte>(v >> (8 * i));
    h_->Update(b);
  }
  void Shape(const Shape& shape) {
    U64(shape.size());
    for (std::int64_t d : shape) U64(static_cast<std::uint64_t>(d));
  }
  std::string Hex() { return h_->FinishHex(); }

 private:
  std::unique_ptr<Hasher> h_;
};

// Every shard of every split, in read order.
Result<std::vector<std::pair<Split, ShardInfo>>> AllShards(const std::shared_ptr<const Dataset>& ds) {
  std::vector<std::pair<Split, ShardInfo>> out;
  for (Split s : AllSplits()) {
    if (!ds->info().FindSplit(s)) continue;
    SEDPACK_ASSIGN_OR_RETURN(std::vector<ShardInfo> shards, ListShards(ds, s));
    for (ShardInfo& sh : shards) out.emplace_back(s, std::move(sh));
  }
  return out;
}

}  // namespace

std::string ShardContentDigest(const std::vector<AttributeSpec>& schema, const DecodedShard& shard) {
  Feeder f;
  f.Field(kFormat);
  f.U64(schema.size());
  for (const AttributeSpec& a : schema) {
    f.Field(a.name);
    f.Field(DTypeName(a.dtype));
    f.Shape(a.shape);
  }
  f.U64(shard.num_examples());
  for (std::size_t e = 0; e < shard.num_examples(); ++e) {
    for (std::size_t a = 0; a < schema.size() && a < shard.num_attributes(); ++a) {
      const ValueView v = shard.Get(e, a);
      f.Shape(v.shape);
      f.Field(v.data);
    }
  }
  return f.Hex();
}

Result<std::string> ContentIdOf(const Dataset& dataset, const std::map<std::string, std::string>& shards) {
  auto shared = std::shared_ptr<const Dataset>(&dataset, [](const Dataset*) {});
  SEDPACK_ASSIGN_OR_RETURN(auto all, AllShards(shared));
  Feeder f;
  f.Field(kFormat);
  for (const auto& [split, shard] : all) {
    const std::string& path = shard.file_infos.at(0).file_path;
    const auto it = shards.find(path);
    if (it == shards.end()) return Status::NotFound(path, ": no content digest");
    f.Field(SplitName(split));
    f.U64(static_cast<std::uint64_t>(shard.number_of_examples));
    f.Field(it->second);
  }
  return f.Hex();
}

std::string SerializeContentDigests(const ContentDigests& d) {
  Json j;
  j["format"] = kFormat;
  j["dataset_info_sha256"] = d.dataset_info_sha256;
  j["content_id"] = d.content_id;
  j["shards"] = Json::object();
  for (const auto& [path, digest] : d.shards) j["shards"][path] = digest;
  return j.dump(2) + "\n";
}

Result<ContentDigests> ParseContentDigests(std::string_view text, std::string_view source) {
  Json j = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object() || j.value("format", "") != kFormat || !j.contains("shards") || !j["shards"].is_object() ||
      !j.contains("content_id") || !j["content_id"].is_string() || !j.contains("dataset_info_sha256") ||
      !j["dataset_info_sha256"].is_string()) {
    return Status::Corruption(source, ": not a content digest sidecar (", kFormat, ")");
  }
  ContentDigests d;
  d.dataset_info_sha256 = j["dataset_info_sha256"].get<std::string>();
  d.content_id = j["content_id"].get<std::string>();
  for (const auto& [path, digest] : j["shards"].items()) {
    if (!digest.is_string()) return Status::Corruption(source, ": digest of ", path, " is not a string");
    d.shards[path] = digest.get<std::string>();
  }
  return d;
}

Result<ContentDigests> ComputeContentDigests(Comm& comm, const std::string& root, int threads) {
  ShardPassOptions pass;
  pass.threads = threads;
  return ComputeContentDigests(comm, root, pass);
}

namespace {

namespace journal = journal_internal;
constexpr std::string_view kDigestKind = "shard content digest";

// A digest journaled by a stopped run, with what identifies the shard it was
// computed from.
struct KnownDigest {
  std::uint64_t size = 0;
  std::int64_t examples = 0;
  std::vector<std::string> hashes;
  std::string digest;
};

journal::JournalEntry EncodeDigestEntry(const ShardCheckTask& task, const std::string& digest) {
  std::vector<std::string> f = {task.path, std::to_string(task.size), std::to_string(task.number_of_examples), digest};
  f.insert(f.end(), task.expected.begin(), task.expected.end());
  return {std::string(kDigestKind), journal::PackFields(f)};
}

bool IsDecimal(const std::string& s) {
  return !s.empty() && s.size() <= 19 && s.find_first_not_of("0123456789") == std::string::npos;
}

// The journaled digests by shard path (the last entry of a path counts);
// entries of another kind or that do not parse are ignored.
std::map<std::string, KnownDigest> DecodeDigestEntries(const std::vector<journal::JournalEntry>& entries) {
  std::map<std::string, KnownDigest> out;
  std::vector<std::string> f;
  for (const auto& e : entries) {
    if (e.kind != kDigestKind || !journal::UnpackFields(e.data, &f) || f.size() < 4 || !IsDecimal(f[1]) ||
        !IsDecimal(f[2]) || f[3].empty()) {
      continue;
    }
    out[f[0]] = KnownDigest{std::stoull(f[1]), std::stoll(f[2]), {f.begin() + 4, f.end()}, f[3]};
  }
  return out;
}

// What a digest pass keeps from a stopped run, and where it journals.
struct DigestJournal {
  const std::map<std::string, KnownDigest>* known = nullptr;
  journal::JournalQueue* queue = nullptr;
  std::atomic<std::uint64_t> kept{0};
};

Result<ContentDigests> ComputeDigests(Comm& comm, const std::shared_ptr<Dataset>& ds, const ShardPassOptions& pass,
                                      DigestJournal* job) {
  std::map<std::string, std::string> mine;
  std::mutex mu;
  maintain_internal::ShardSkipFn skip;
  if (job && job->known) {
    skip = [&](const ShardCheckTask& task) {
      const auto it = job->known->find(task.path);
      // Kept only for the same shard as listed now: its size, examples and hashes.
      if (it == job->known->end() || it->second.size != task.size ||
          it->second.examples != task.number_of_examples || it->second.hashes != task.expected) {
        return false;
      }
      std::lock_guard<std::mutex> lock(mu);
      mine[task.path] = it->second.digest;
      ++job->kept;
      return true;
    };
  }
  SEDPACK_RETURN_NOT_OK(maintain_internal::ForEachShard(
      comm, *ds, CheckOptions{}, pass, nullptr,
      [&](int, const ShardCheckTask& task, const DecodedShard& shard) -> Status {
        std::string digest = ShardContentDigest(ds->schema(), shard);
        if (job && job->queue) {
          SEDPACK_RETURN_NOT_OK(job->queue->status());  // a journal that cannot be written stops the pass
          job->queue->Push(EncodeDigestEntry(task, digest));
        }
        std::lock_guard<std::mutex> lock(mu);
        mine[task.path] = std::move(digest);
        return Status::OK();
      },
      skip));
  std::string text;
  for (const auto& [path, digest] : mine) text += path + "\t" + digest + "\n";
  SEDPACK_ASSIGN_OR_RETURN(std::vector<std::string> gathered, comm.Gatherv(text, 0));
  ContentDigests out;
  std::string wire;
  Status local;
  if (comm.rank() == 0) {
    for (const std::string& g : gathered) {
      std::size_t pos = 0;
      while (pos < g.size()) {
        const std::size_t nl = g.find('\n', pos), tab = g.find('\t', pos);
        out.shards[g.substr(pos, tab - pos)] = g.substr(tab + 1, nl - tab - 1);
        pos = nl + 1;
      }
    }
    auto id = ContentIdOf(*ds, out.shards);
    local = id.status();
    if (id.ok()) out.content_id = *id;
    wire = SerializeContentDigests(out);
  }
  SEDPACK_RETURN_NOT_OK(AgreeOnStatus(comm, local));
  SEDPACK_RETURN_NOT_OK(comm.Bcast(&wire, 0));
  return ParseContentDigests(wire, "content digests");
}

}  // namespace

Result<ContentDigests> ComputeContentDigests(Comm& comm, const std::string& root, const ShardPassOptions& pass) {
  SEDPACK_ASSIGN_OR_RETURN(std::shared_ptr<Dataset> ds, Dataset::Open(root));
  return ComputeDigests(comm, ds, pass, nullptr);
}

Result<DigestJob> DigestDataset(Comm& comm, const std::string& root, const ShardPassOptions& pass,
                                const DigestJobOptions& options) {
  auto opened = Dataset::Open(root);
  SEDPACK_RETURN_NOT_OK(AgreeOnStatus(comm, opened.status()));
  std::shared_ptr<Dataset> ds = std::move(opened).value();
  DigestJob out;
  if (!options.journal) {
    SEDPACK_ASSIGN_OR_RETURN(out.digests, ComputeDigests(comm, ds, pass, nullptr));
    SEDPACK_RETURN_NOT_OK(AgreeOnStatus(comm, comm.rank() == 0 ? WriteContentDigests(root, out.digests) : Status::OK()));
    return out;
  }
  FileSystem* fs = ds->file_system();
  auto sha = DatasetInfoSha256(root);
  SEDPACK_RETURN_NOT_OK(AgreeOnStatus(comm, sha.status()));
  const journal::JobParameters parameters = {{"job", "digest"}, {"dataset_info.json sha256", DigestHex(*sha)}};
  const std::string id =
      journal::JobIdFor("digest\n" + std::filesystem::absolute(root).lexically_normal().string());
  Status local;
  if (options.restart && comm.rank() == 0) local = journal::RemoveJobJournals(root, id, fs);
  SEDPACK_RETURN_NOT_OK(AgreeOnStatus(comm, local));
  auto recorded = journal::ReadJobEntries(root, id, parameters, "digest", fs);
  SEDPACK_RETURN_NOT_OK(AgreeOnStatus(comm, recorded.status()));
  const std::map<std::string, KnownDigest> known = DecodeDigestEntries(recorded->entries);
  // Rank 0's journal takes over every rank's entries before the others start
  // theirs afresh, so that a stop at any moment loses none of them.
  std::unique_ptr<journal::JournalWriter> writer;
  for (int turn = 0; turn < 2; ++turn) {
    local = Status::OK();
    if ((comm.rank() == 0) == (turn == 0)) {
      std::vector<journal::JournalEntry> keep;
      if (comm.rank() == 0) keep = recorded->entries;
      auto started = journal::StartEntryJournal(root, id, comm.rank(), parameters, keep, fs);
      local = started.status();
      if (started.ok()) writer = std::move(started).value();
    }
    SEDPACK_RETURN_NOT_OK(AgreeOnStatus(comm, local));
  }
  journal::JournalQueue queue(writer.get());
  DigestJournal job;
  job.known = &known;
  job.queue = &queue;
  auto computed = ComputeDigests(comm, ds, pass, &job);
  // What was computed is journaled, whatever the outcome, before the ranks agree.
  const Status journaled = queue.Finish();
  SEDPACK_RETURN_NOT_OK(computed.status());
  SEDPACK_RETURN_NOT_OK(AgreeOnStatus(comm, journaled));
  out.digests = std::move(computed).value();
  SEDPACK_ASSIGN_OR_RETURN(std::int64_t kept, comm.AllreduceSum(static_cast<std::int64_t>(job.kept.load())));
  out.shards_kept = static_cast<std::uint64_t>(kept);
  if (kept > 0) out.resumed_job = id;
  local = Status::OK();
  if (comm.rank() == 0) {
    local = WriteContentDigests(root, out.digests);
    // The sidecar is written: the journals' work is in it.
    if (local.ok()) local = journal::RemoveJobJournals(root, id, fs);
    // An empty jobs folder says nothing: it goes.
    if (local.ok()) (void)FileSystemOr(fs).Rmdir(JoinRoot(root, journal::kJournalDir).c_str());
  }
  SEDPACK_RETURN_NOT_OK(AgreeOnStatus(comm, local));
  return out;
}

Status WriteContentDigests(const std::string& root, ContentDigests digests) {
  SEDPACK_RETURN_NOT_OK(CheckCancelled());
  SEDPACK_ASSIGN_OR_RETURN(DatasetInfoDigest sha, DatasetInfoSha256(root));
  digests.dataset_info_sha256 = DigestHex(sha);
  const std::string text = SerializeContentDigests(digests);
  return WriteSidecar(root, kContentSidecarName, std::as_bytes(std::span<const char>(text.data(), text.size())));
}

Result<ContentDigests> ReadContentDigests(const std::string& root) {
  const std::string path = SidecarPath(root, kContentSidecarName);
  auto text = ReadSidecarText(root, kContentSidecarName, 1ULL << 30);
  if (!text.ok()) {
    if (text.status().code() == StatusCode::kNotFound) {
      return Status::NotFound(root, ": no content digests (run `sedpack digest ", root, "` first)");
    }
    return text.status();
  }
  return ParseContentDigests(*text, path);
}

Result<ContentCheck> CheckContentDigests(Comm& comm, const std::string& root, int threads) {
  // Every rank reads the sidecar (a shared file system) before the collective pass.
  // The sidecar and the dataset_info.json it is compared with are read before
  // the collective pass, so every rank judges the same state.
  Result<ContentDigests> recorded = ReadContentDigests(root);
  auto sha = DatasetInfoSha256(root);
  SEDPACK_RETURN_NOT_OK(AgreeOnStatus(comm, recorded.status()));
  SEDPACK_ASSIGN_OR_RETURN(ContentDigests current, ComputeContentDigests(comm, root, threads));
  ContentCheck c;
  c.recorded_id = recorded->content_id;
  c.current_id = current.content_id;
  c.sidecar_stale = !sha.ok() || DigestHex(*sha) != recorded->dataset_info_sha256;
  for (const auto& [path, digest] : current.shards) {
    const auto it = recorded->shards.find(path);
    if (it == recorded->shards.end()) {
      c.mismatches.push_back({path, "", digest});
    } else if (it->second != digest) {
      c.mismatches.push_back({path, it->second, digest});
    }
  }
  for (const auto& [path, digest] : recorded->shards) {
    if (!current.shards.count(path)) c.unlisted.push_back(path);
  }
  return c;
}

}  // namespace sedpack
