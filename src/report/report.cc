// SPDX-License-Identifier: Apache-2.0
// BuildReport: one pass over the shards of each split, on the shard-pass
// skeleton of `stats` (rank 0 walks the metadata, shards are spread over the
// ranks by bytes, each is hash-checked and decoded once), then a merge in
// rank order on rank 0.
#include <algorithm>
#include <charconv>
#include <map>
#include <mutex>

#include <nlohmann/json.hpp>

#include "maintain/shard_tasks_internal.h"
#include "maintain/stats_internal.h"
#include "parallel/worker_pool.h"
#include "report/accumulate_internal.h"
#include "sedpack/check/check.h"
#include "sedpack/dataset/dataset.h"
#include "sedpack/dataset/reader.h"
#include "sedpack/report/report.h"

namespace sedpack {
namespace {

using report_internal::Accumulator;
using report_internal::Plan;

constexpr std::size_t kMaxMetadataValues = 20;

bool IsNumeric(DType d) { return d != DType::kStr && d != DType::kBytes; }

std::uint64_t Elements(const AttributeSpec& spec) {
  std::uint64_t n = 1;
  for (std::int64_t d : spec.shape) n *= static_cast<std::uint64_t>(d);
  return n;
}

bool Histogrammed(const AttributeSpec& spec) {
  switch (spec.dtype) {
    case DType::kBool: case DType::kInt8: case DType::kUInt8: case DType::kInt16: case DType::kUInt16:
      return Elements(spec) <= 16;
    default:
      return false;
  }
}

Result<Plan> MakePlan(const std::vector<AttributeSpec>& schema, const ReportOptions& options) {
  Plan plan;
  plan.schema = schema;
  plan.max_classes = std::max<std::size_t>(options.max_classes, 1);
  for (std::size_t a = 0; a < schema.size(); ++a) {
    const AttributeSpec& s = schema[a];
    if (!IsNumeric(s.dtype)) continue;
    if (s.shape.size() == 1 && s.shape[0] > 16) {
      if (s.name == options.snr_attribute) plan.snr_profile = plan.profiled.size();
      plan.profiled.push_back(a);
      const auto len = static_cast<std::uint64_t>(s.shape[0]);
      plan.lengths.push_back(options.max_samples ? std::min(len, options.max_samples) : len);
    } else if (Histogrammed(s)) {
      plan.histogrammed.push_back(a);
    }
  }
  if (!options.snr_attribute.empty()) {
    if (plan.profiled.empty() || schema[plan.profiled[plan.snr_profile]].name != options.snr_attribute) {
      return Status::InvalidArgument("SNR attribute \"", options.snr_attribute,
                                     "\" is not a 1-D numeric attribute of more than 16 elements");
    }
  }
  if (!options.snr.empty() && plan.profiled.empty()) {
    return Status::InvalidArgument("--snr needs a 1-D numeric attribute of more than 16 elements (a trace); "
                                   "the dataset has none");
  }
  for (const std::string& text : options.snr) {
    SEDPACK_ASSIGN_OR_RETURN(SnrExpression e, SnrExpression::Parse(text, schema));
    plan.expressions.push_back(std::move(e));
  }
  return plan;
}

// Length-prefixed parts of one rank's message.
void PutPart(std::string* out, const std::string& part) {
  *out += std::to_string(part.size());
  *out += '\n';
  *out += part;
}

bool GetPart(const std::string& in, std::size_t* pos, std::string_view* part) {
  const std::size_t nl = in.find('\n', *pos);
  if (nl == std::string::npos) return false;
  std::size_t n = 0;
  const auto [p, ec] = std::from_chars(in.data() + *pos, in.data() + nl, n);
  if (ec != std::errc() || p != in.data() + nl || in.size() - nl - 1 < n) return false;
  *part = std::string_view(in).substr(nl + 1, n);
  *pos = nl + 1 + n;
  return true;
}

std::string EncodeShards(const std::vector<ShardSummary>& shards) {
  nlohmann::json j = nlohmann::json::array();
  for (const ShardSummary& s : shards) j.push_back({s.path, s.examples, s.bytes, s.raw_bytes});
  return j.dump();
}

Status DecodeShards(const std::string& text, std::vector<ShardSummary>* out) {
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (!j.is_array()) return Status::Internal("malformed shard list between ranks");
  for (const auto& s : j) {
    if (!s.is_array() || s.size() != 4) return Status::Internal("malformed shard list between ranks");
    out->push_back({s[0].get<std::string>(), s[1].get<std::uint64_t>(), s[2].get<std::uint64_t>(),
                    s[3].get<std::uint64_t>()});
  }
  return Status::OK();
}

// Rank 0: the custom_metadata keys of the split's shards, from the shard lists.
Result<std::vector<MetadataKeyCount>> CountCustomMetadata(const std::shared_ptr<Dataset>& ds, Split split) {
  SEDPACK_ASSIGN_OR_RETURN(auto it, ShardInfoIterator::Make(ds, split));
  std::map<std::string, std::map<std::string, std::uint64_t>> counts;
  std::map<std::string, std::uint64_t> shards;
  for (;;) {
    SEDPACK_ASSIGN_OR_RETURN(std::optional<ShardInfo> info, it->Next());
    if (!info) break;
    const nlohmann::json j = nlohmann::json::parse(info->custom_metadata.text(), nullptr, false);
    if (!j.is_object()) continue;
    for (const auto& [key, value] : j.items()) {
      ++counts[key][value.dump()];
      ++shards[key];
    }
  }
  std::vector<MetadataKeyCount> out;
  for (auto& [key, values] : counts) {
    MetadataKeyCount k{key, shards[key], values.size(), {values.begin(), values.end()}};
    std::stable_sort(k.values.begin(), k.values.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
    if (k.values.size() > kMaxMetadataValues) k.values.resize(kMaxMetadataValues);
    out.push_back(std::move(k));
  }
  return out;
}

// One split's share of this rank's pass.
struct RankPart {
  std::vector<Moments> moments;
  std::uint64_t examples = 0;
  std::vector<ShardSummary> shards;
};

// The split a shard belongs to: the first folder of the list that lists it
// (every split's lists live below `<split>/`).
Result<std::size_t> SplitOf(const ShardCheckTask& task, const std::vector<Split>& splits) {
  const std::string top = task.list_path.substr(0, task.list_path.find('/'));
  for (std::size_t i = 0; i < splits.size(); ++i) {
    if (top == SplitName(splits[i])) return i;
  }
  return Status::Internal(task.path, ": listed by ", task.list_path, ", outside the splits of the report");
}

// This rank's pass over the shards of every split at once (so that a split
// of fewer shards than threads does not leave threads idle): per-thread and
// per-split accumulators (merged in thread order) and, as `stats` keeps them,
// per-shard moments merged in path order.
Status PassOverShards(Comm& comm, const Dataset& ds, const Plan& plan, const std::vector<Split>& splits,
                      const ShardPassOptions& pass, std::vector<Accumulator>* totals, std::vector<RankPart>* parts) {
  const std::size_t attrs = plan.schema.size();
  const int threads = ResolveThreads(pass.threads);
  // [thread][split]
  std::vector<std::vector<std::unique_ptr<Accumulator>>> per_thread(static_cast<std::size_t>(threads));
  for (auto& v : per_thread) v.resize(splits.size());
  std::vector<std::map<std::string, std::vector<Moments>>> per_shard(splits.size());
  parts->assign(splits.size(), RankPart{});
  std::mutex mu;
  CheckOptions walk;
  walk.splits = splits;
  ShardPassOptions p = pass;
  p.threads = threads;
  SEDPACK_RETURN_NOT_OK(maintain_internal::ForEachShard(
      comm, ds, walk, p, nullptr, [&](int thread, const ShardCheckTask& task, const DecodedShard& shard) -> Status {
        SEDPACK_ASSIGN_OR_RETURN(const std::size_t split, SplitOf(task, splits));
        auto& acc = per_thread[static_cast<std::size_t>(thread)][split];
        if (!acc) acc = std::make_unique<Accumulator>(plan);
        std::vector<Moments> moments(attrs);
        SEDPACK_RETURN_NOT_OK(acc->AddShard(shard, &moments));
        std::uint64_t raw = 0;
        for (std::size_t e = 0; e < shard.num_examples(); ++e) {
          for (std::size_t a = 0; a < attrs; ++a) raw += shard.Get(e, a).data.size();
        }
        std::lock_guard<std::mutex> lock(mu);
        per_shard[split][task.path] = std::move(moments);
        (*parts)[split].shards.push_back({task.path, shard.num_examples(), task.size, raw});
        return Status::OK();
      }));
  for (std::size_t i = 0; i < splits.size(); ++i) {
    // The first thread's sums become the total (as merging them into zeros
    // would: 0 + x is x), the others are added in thread order.
    bool first = true;
    for (const auto& acc : per_thread) {
      if (!acc[i]) continue;
      if (first) {
        (*totals)[i] = std::move(*acc[i]);
        first = false;
      } else {
        SEDPACK_RETURN_NOT_OK((*totals)[i].Merge(std::move(*acc[i])));
      }
    }
    RankPart& part = (*parts)[i];
    part.moments.resize(attrs);
    for (const auto& [path, m] : per_shard[i]) {
      for (std::size_t a = 0; a < attrs; ++a) part.moments[a].Merge(m[a]);
    }
    part.examples = (*totals)[i].examples();
  }
  return Status::OK();
}

// Rank 0: one split's parts of every rank's message, merged in rank order;
// rank 0's own sums are `own` (not sent to itself), taken over.
Status MergeSplit(const std::shared_ptr<Dataset>& ds, const Plan& plan, const std::vector<std::string>& gathered,
                  std::vector<std::size_t>* positions, Accumulator* own, SplitReport* out) {
  const Status bad = Status::Internal("malformed report message between ranks");
  Accumulator all = std::move(*own), part(plan);
  std::vector<Moments> moments(plan.schema.size());
  std::uint64_t examples = 0;
  for (std::size_t r = 0; r < gathered.size(); ++r) {
    std::string_view m, a, s;
    std::size_t& pos = (*positions)[r];
    if (!GetPart(gathered[r], &pos, &m) || !GetPart(gathered[r], &pos, &a) || !GetPart(gathered[r], &pos, &s)) {
      return bad;
    }
    std::vector<Moments> rank_moments(plan.schema.size());
    std::uint64_t n = 0;
    SEDPACK_RETURN_NOT_OK(maintain_internal::DecodeMoments(std::string(m), &rank_moments, &n));
    for (std::size_t i = 0; i < moments.size(); ++i) moments[i].Merge(rank_moments[i]);
    examples += n;
    if (r > 0) {
      SEDPACK_RETURN_NOT_OK(part.Decode(a));
      SEDPACK_RETURN_NOT_OK(all.Merge(std::move(part)));
    }
    SEDPACK_RETURN_NOT_OK(DecodeShards(std::string(s), &out->shards));
  }
  std::sort(out->shards.begin(), out->shards.end(), [](const auto& x, const auto& y) { return x.path < y.path; });
  out->stats.split = out->split;
  out->stats.examples = examples;
  for (std::size_t i = 0; i < plan.schema.size(); ++i) {
    if (!IsNumeric(plan.schema[i].dtype)) continue;
    out->stats.attributes.push_back(AttributeStats{plan.schema[i].name, plan.schema[i].dtype, moments[i]});
  }
  all.Finish(out);
  SEDPACK_ASSIGN_OR_RETURN(out->custom_metadata, CountCustomMetadata(ds, out->split));
  return Status::OK();
}

Result<std::vector<SplitReport>> ReportSplits(Comm& comm, const std::shared_ptr<Dataset>& ds, const Plan& plan,
                                              const std::vector<Split>& splits, const ShardPassOptions& pass) {
  std::vector<Accumulator> totals(splits.size(), Accumulator(plan));
  std::vector<RankPart> parts;
  SEDPACK_RETURN_NOT_OK(PassOverShards(comm, *ds, plan, splits, pass, &totals, &parts));
  std::string message;
  if (comm.rank() != 0) {
    std::size_t size = 0;
    for (const Accumulator& t : totals) size += t.EncodedSize() + 32;
    message.reserve(size);
  }
  for (std::size_t i = 0; i < splits.size(); ++i) {
    PutPart(&message, maintain_internal::EncodeMoments(parts[i].moments, parts[i].examples));
    // Written in place (the sums of a long trace are tens of MB); rank 0
    // keeps its own.
    if (comm.rank() == 0) {
      PutPart(&message, std::string());
    } else {
      message += std::to_string(totals[i].EncodedSize());
      message += '\n';
      totals[i].EncodeTo(&message);
    }
    PutPart(&message, EncodeShards(parts[i].shards));
  }
  SEDPACK_ASSIGN_OR_RETURN(std::vector<std::string> gathered, comm.Gatherv(message, 0));
  std::vector<SplitReport> out(splits.size());
  for (std::size_t i = 0; i < splits.size(); ++i) out[i].split = splits[i];
  Status local;
  if (comm.rank() == 0) {
    std::vector<std::size_t> positions(gathered.size(), 0);
    for (std::size_t i = 0; i < splits.size() && local.ok(); ++i) {
      local = MergeSplit(ds, plan, gathered, &positions, &totals[i], &out[i]);
    }
  }
  SEDPACK_RETURN_NOT_OK(AgreeOnStatus(comm, local));
  return out;
}

}  // namespace

Result<Report> BuildReport(Comm& comm, const std::string& root, const ReportOptions& options) {
  SEDPACK_ASSIGN_OR_RETURN(std::shared_ptr<Dataset> ds, Dataset::Open(root));
  Report report;
  report.root = root;
  report.info = ds->info();
  std::vector<Split> splits = options.splits;
  if (splits.empty()) {
    for (const auto& [split, info] : ds->info().splits) splits.push_back(split);
  }
  for (Split s : splits) {
    if (!ds->info().FindSplit(s)) {
      return Status::NotFound(root, ": the dataset has no split \"", SplitName(s), "\"");
    }
  }
  SEDPACK_ASSIGN_OR_RETURN(Plan plan, MakePlan(ds->schema(), options));
  // A split named twice is reported once.
  std::vector<Split> unique;
  for (Split s : splits) {
    if (std::find(unique.begin(), unique.end(), s) == unique.end()) unique.push_back(s);
  }
  SEDPACK_ASSIGN_OR_RETURN(report.splits, ReportSplits(comm, ds, plan, unique, options.pass));
  return report;
}

}  // namespace sedpack
