// SPDX-License-Identifier: Apache-2.0
#include "sedpack/maintain/stats.h"

#include <nlohmann/json.hpp>

#include <atomic>
#include <cmath>
#include <cstring>
#include <map>
#include <mutex>
#include <sstream>
#include <thread>

#include "sedpack/codecs/hash.h"
#include "sedpack/dataset/check.h"
#include "sedpack/dataset/dataset.h"
#include "sedpack/dataset/reader.h"
#include "sedpack/cancel.h"
#include "maintain/shard_tasks_internal.h"
#include "parallel/worker_pool.h"
#include "sedpack/io/file.h"

namespace sedpack {
namespace {

bool IsNumeric(DType d) { return d != DType::kStr && d != DType::kBytes; }

double Element(const ValueView& v, std::size_t i) {
  switch (v.dtype) {
    case DType::kBool: return v.At<std::uint8_t>(i) ? 1 : 0;
    case DType::kInt8: return v.At<std::int8_t>(i);
    case DType::kUInt8: return v.At<std::uint8_t>(i);
    case DType::kInt16: return v.At<std::int16_t>(i);
    case DType::kUInt16: return v.At<std::uint16_t>(i);
    case DType::kInt32: return v.At<std::int32_t>(i);
    case DType::kUInt32: return v.At<std::uint32_t>(i);
    case DType::kInt64: case DType::kInt: return static_cast<double>(v.At<std::int64_t>(i));
    case DType::kUInt64: return static_cast<double>(v.At<std::uint64_t>(i));
    case DType::kFloat16: return Float16{v.At<std::uint16_t>(i)}.ToFloat();
    case DType::kFloat32: return v.At<float>(i);
    case DType::kFloat64: return v.At<double>(i);
    default: return NAN;
  }
}

// Moments as text for sending between ranks (hex floats are exact).
std::string Encode(const std::vector<Moments>& ms, std::uint64_t examples) {
  std::ostringstream out;
  out << examples << "\n";
  for (const Moments& m : ms) {
    out << m.count << " " << m.nan_count << " " << std::hexfloat << m.mean << " " << m.m2 << " " << m.min << " "
        << m.max << std::defaultfloat << "\n";
  }
  return out.str();
}

Status Decode(const std::string& text, std::vector<Moments>* ms, std::uint64_t* examples) {
  std::istringstream in(text);
  in >> *examples;
  for (Moments& m : *ms) {
    std::string mean, m2, min, max;
    in >> m.count >> m.nan_count >> mean >> m2 >> min >> max;
    m.mean = std::strtod(mean.c_str(), nullptr);
    m.m2 = std::strtod(m2.c_str(), nullptr);
    m.min = std::strtod(min.c_str(), nullptr);
    m.max = std::strtod(max.c_str(), nullptr);
  }
  if (!in) return Status::Internal("malformed statistics message");
  return Status::OK();
}

}  // namespace

void Moments::Add(double x) {
  if (std::isnan(x)) {
    ++nan_count;
    return;
  }
  if (count == 0) {
    min = max = x;
  } else {
    min = std::min(min, x);
    max = std::max(max, x);
  }
  ++count;
  const double d = x - mean;
  mean += d / static_cast<double>(count);
  m2 += d * (x - mean);
}

void Moments::Merge(const Moments& o) {
  nan_count += o.nan_count;
  if (o.count == 0) return;
  if (count == 0) {
    const std::uint64_t nans = nan_count;
    *this = o;
    nan_count = nans;
    return;
  }
  const double n = static_cast<double>(count) + static_cast<double>(o.count);
  const double d = o.mean - mean;
  mean += d * static_cast<double>(o.count) / n;
  m2 += o.m2 + d * d * static_cast<double>(count) * static_cast<double>(o.count) / n;
  count += o.count;
  min = std::min(min, o.min);
  max = std::max(max, o.max);
}

double Moments::StdDev() const { return count < 2 ? 0.0 : std::sqrt(m2 / static_cast<double>(count)); }

Result<SplitStats> ComputeSplitStats(Comm& comm, const std::string& root, Split split, int threads) {
  SEDPACK_ASSIGN_OR_RETURN(std::shared_ptr<Dataset> ds, Dataset::Open(root));
  const auto& schema = ds->schema();
  if (!ds->info().FindSplit(split)) {
    return Status::NotFound(root, ": the dataset has no split \"", SplitName(split), "\"");
  }
  CheckOptions walk;
  walk.splits = {split};
  // Each shard gets its own moments, merged in path order at the end: floating
  // point merges are not associative, so merging per thread (in whatever order
  // the threads happened to take the shards) would make the last digits
  // depend on the thread count and on timing.
  struct ShardMoments {
    std::vector<Moments> moments;
    std::uint64_t examples = 0;
  };
  std::map<std::string, ShardMoments> per_shard;
  std::mutex mu;
  SEDPACK_RETURN_NOT_OK(maintain_internal::ForEachShard(
      comm, *ds, walk, threads, nullptr,
      [&](int, const ShardCheckTask& task, const DecodedShard& shard) -> Status {
        ShardMoments m{std::vector<Moments>(schema.size()), shard.num_examples()};
        for (std::size_t e = 0; e < shard.num_examples(); ++e) {
          for (std::size_t a = 0; a < schema.size(); ++a) {
            if (!IsNumeric(schema[a].dtype)) continue;
            const ValueView v = shard.Get(e, a);
            const std::size_t item = DTypeItemSize(v.dtype);
            const std::size_t n = item ? v.data.size() / item : 0;
            for (std::size_t k = 0; k < n; ++k) m.moments[a].Add(Element(v, k));
          }
        }
        std::lock_guard<std::mutex> lock(mu);
        per_shard[task.path] = std::move(m);
        return Status::OK();
      }));
  std::vector<Moments> total(schema.size());
  std::uint64_t total_examples = 0;
  for (const auto& [path, m] : per_shard) {
    for (std::size_t a = 0; a < schema.size(); ++a) total[a].Merge(m.moments[a]);
    total_examples += m.examples;
  }
  // Rank 0 merges the ranks' moments (in rank order, so the result does not
  // depend on timing) and broadcasts them.
  SEDPACK_ASSIGN_OR_RETURN(std::vector<std::string> gathered, comm.Gatherv(Encode(total, total_examples), 0));
  std::string merged;
  if (comm.rank() == 0) {
    std::vector<Moments> all(schema.size());
    std::uint64_t all_examples = 0;
    for (const std::string& g : gathered) {
      std::vector<Moments> part(schema.size());
      std::uint64_t n = 0;
      SEDPACK_RETURN_NOT_OK(Decode(g, &part, &n));
      for (std::size_t a = 0; a < schema.size(); ++a) all[a].Merge(part[a]);
      all_examples += n;
    }
    merged = Encode(all, all_examples);
  }
  SEDPACK_RETURN_NOT_OK(comm.Bcast(&merged, 0));
  SEDPACK_RETURN_NOT_OK(Decode(merged, &total, &total_examples));
  SplitStats out;
  out.split = split;
  out.examples = total_examples;
  for (std::size_t a = 0; a < schema.size(); ++a) {
    if (!IsNumeric(schema[a].dtype)) continue;
    out.attributes.push_back(AttributeStats{schema[a].name, schema[a].dtype, total[a]});
  }
  return out;
}

Status WriteMinMax(const std::string& root, const SplitStats& stats) {
  SEDPACK_RETURN_NOT_OK(CheckCancelled());
  SEDPACK_ASSIGN_OR_RETURN(std::shared_ptr<Dataset> ds, Dataset::Open(root));
  DatasetInfo info = ds->info();
  for (Attribute& attr : info.dataset_structure.saved_data_description) {
    for (const AttributeStats& s : stats.attributes) {
      if (s.name != attr.name || s.moments.count == 0) continue;
      nlohmann::ordered_json j = nlohmann::ordered_json::parse(attr.custom_metadata.text(), nullptr, false);
      if (!j.is_object()) j = nlohmann::ordered_json::object();
      const bool integer = s.dtype != DType::kFloat16 && s.dtype != DType::kFloat32 && s.dtype != DType::kFloat64;
      if (integer && s.moments.min >= 0) {
        j["min"] = static_cast<std::uint64_t>(s.moments.min);
        j["max"] = static_cast<std::uint64_t>(s.moments.max);
      } else if (integer) {
        j["min"] = static_cast<std::int64_t>(s.moments.min);
        j["max"] = static_cast<std::int64_t>(s.moments.max);
      } else {
        j["min"] = s.moments.min;
        j["max"] = s.moments.max;
      }
      SEDPACK_ASSIGN_OR_RETURN(attr.custom_metadata, JsonValue::Parse(j.dump()));
    }
  }
  return ds->WriteFile("dataset_info.json", SerializeDatasetInfo(info));
}

}  // namespace sedpack
