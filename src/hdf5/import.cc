// SPDX-License-Identifier: Apache-2.0
// `sedpack import-hdf5`: plan (every rank checks every input), cut rows into
// per-rank ranges at chunk boundaries, read blocks, convert exactly, write
// through the DistributedWriter. See import.h for the contract.
#include "sedpack/hdf5/import.h"
#include "io/output_folder.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <memory>
#include <numeric>
#include <thread>

#include "hdf5/convert_internal.h"
#include "hdf5/h5_internal.h"
#include "sedpack/cancel.h"
#include "parallel/worker_pool.h"
#include "sedpack/dataset/dataset.h"
#include "sedpack/mpi/distributed_write.h"

namespace sedpack {
namespace {

using h5::BlockReader;
using h5::ReadAs;
using h5::ResolvedSource;

constexpr std::uint64_t kMinShardBudget = 1ULL << 20;
constexpr std::uint64_t kMaxShardBudget = 1ULL << 30;

std::string ShapeText(const Shape& s) {
  std::string t = "(";
  for (std::size_t i = 0; i < s.size(); ++i) t += (i ? ", " : "") + std::to_string(s[i]);
  if (s.size() == 1) t += ",";
  return t + ")";
}

std::uint64_t Elements(const Shape& s) {
  std::uint64_t n = 1;
  for (std::int64_t d : s) n *= static_cast<std::uint64_t>(std::max<std::int64_t>(d, 0));
  return n;
}

// One split, resolved against every input.
struct SplitPlan {
  Split split = Split::kTrain;
  const Hdf5SplitMapping* mapping = nullptr;
  std::vector<AttributeSpec> attrs;                   // schema order
  std::vector<std::string> meta_keys;
  std::vector<std::vector<ResolvedSource>> attr_src;  // [file][attr]
  std::vector<std::vector<ResolvedSource>> meta_src;  // [file][meta key]
  std::vector<std::pair<std::uint64_t, std::uint64_t>> rows;  // [file] local [first, last)
  std::vector<std::uint64_t> offset;                  // [file] first global row
  std::uint64_t total = 0;
  std::size_t primary = 0;  // attribute with the most bytes per row: its chunks set the cuts
};

struct Plan {
  std::vector<std::string> inputs;
  std::vector<h5::Handle> files;
  std::vector<SplitPlan> splits;
};

Result<Plan> MakePlan(const Hdf5ImportConfig& config, const std::vector<std::string>& inputs) {
  Plan plan;
  plan.inputs = inputs;
  if (inputs.empty()) return Status::InvalidArgument("no input HDF5 file given");
  for (const std::string& path : inputs) {
    SEDPACK_ASSIGN_OR_RETURN(h5::Handle f, h5::OpenFile(path));
    plan.files.push_back(std::move(f));
  }
  SEDPACK_ASSIGN_OR_RETURN(std::vector<AttributeSpec> schema, config.structure.Schema());
  for (const Hdf5SplitMapping& m : config.params.splits) {
    SplitPlan sp;
    sp.split = m.split;
    sp.mapping = &m;
    sp.attrs = schema;
    for (const auto& [key, src] : m.shard_custom_metadata) sp.meta_keys.push_back(key);
    std::uint64_t best_row_bytes = 0;
    for (std::size_t f = 0; f < inputs.size(); ++f) {
      const std::string& file = inputs[f];
      std::vector<ResolvedSource> attr_src, meta_src;
      for (const AttributeSpec& attr : schema) {
        const auto it = std::find_if(m.attributes.begin(), m.attributes.end(),
                                     [&](const auto& p) { return p.first == attr.name; });
        SEDPACK_ASSIGN_OR_RETURN(ResolvedSource r, h5::Resolve(plan.files[f].get(), file, it->second));
        if (r.row_elements != Elements(attr.shape)) {
          return Status::InvalidArgument(r.Where(), ": each row holds ", ShapeText(r.row_shape), " = ",
                                         r.row_elements, " values, but attribute \"", attr.name,
                                         "\" has shape ", ShapeText(attr.shape), " = ",
                                         Elements(attr.shape), " values");
        }
        attr_src.push_back(std::move(r));
      }
      for (const auto& [key, src] : m.shard_custom_metadata) {
        SEDPACK_ASSIGN_OR_RETURN(ResolvedSource r, h5::Resolve(plan.files[f].get(), file, src));
        meta_src.push_back(std::move(r));
      }
      // Every source of a split must have the same number of rows.
      const ResolvedSource& first = attr_src.front();
      const std::uint64_t rows = first.rows;
      for (const auto* list : {&attr_src, &meta_src}) {
        for (const ResolvedSource& r : *list) {
          if (r.rows != rows) {
            return Status::InvalidArgument(file, ": split ", SplitName(m.split), ": ", r.spec.Describe(),
                                           " has ", r.rows, " rows but ", first.spec.Describe(), " has ",
                                           rows);
          }
        }
      }
      std::pair<std::uint64_t, std::uint64_t> range{0, rows};
      if (m.rows) {
        if (m.rows->second > rows) {
          return Status::InvalidArgument(file, ": split ", SplitName(m.split), ": rows [", m.rows->first,
                                         ", ", m.rows->second, ") asked for, but ",
                                         attr_src.front().spec.Describe(), " has ", rows, " rows");
        }
        range = *m.rows;
      }
      sp.offset.push_back(sp.total);
      sp.total += range.second - range.first;
      sp.rows.push_back(range);
      sp.attr_src.push_back(std::move(attr_src));
      sp.meta_src.push_back(std::move(meta_src));
    }
    for (std::size_t a = 0; a < schema.size(); ++a) {
      const std::uint64_t b = Elements(schema[a].shape) * DTypeItemSize(schema[a].dtype);
      if (b > best_row_bytes) {
        best_row_bytes = b;
        sp.primary = a;
      }
    }
    plan.splits.push_back(std::move(sp));
  }
  return plan;
}

// Global cut points of a split for `ranks` ranks: near-equal shares, each cut
// moved to the nearest chunk boundary of the primary source (or file edge),
// so no two ranks decompress the same chunk.
std::vector<std::uint64_t> CutPoints(const SplitPlan& sp, int ranks) {
  std::vector<std::uint64_t> cuts(static_cast<std::size_t>(ranks) + 1, 0);
  cuts.back() = sp.total;
  for (int r = 1; r < ranks; ++r) {
    const std::uint64_t ideal =
        static_cast<std::uint64_t>((static_cast<unsigned __int128>(sp.total) * r) / ranks);
    // The file holding `ideal`.
    std::size_t f = 0;
    while (f + 1 < sp.offset.size() && sp.offset[f + 1] <= ideal) ++f;
    const auto [lo, hi] = sp.rows[f];
    const std::uint64_t local = lo + (ideal - sp.offset[f]);
    const std::uint64_t cr = sp.attr_src[f][sp.primary].chunk_rows;
    std::uint64_t snapped = local;
    if (cr > 1) {
      const std::uint64_t down = std::max(lo, local / cr * cr);
      const std::uint64_t up = std::min(hi, (local + cr - 1) / cr * cr);
      snapped = (local - down <= up - local) ? down : up;
    }
    cuts[static_cast<std::size_t>(r)] = std::max(cuts[static_cast<std::size_t>(r) - 1], sp.offset[f] + (snapped - lo));
  }
  for (int r = ranks - 1; r > 0; --r) {
    cuts[static_cast<std::size_t>(r)] = std::min(cuts[static_cast<std::size_t>(r)], cuts[static_cast<std::size_t>(r) + 1]);
  }
  return cuts;
}


// Sizes derived from the memory budget.
struct Sizing {
  std::uint64_t block_rows = 1;
  std::uint64_t shard_byte_budget = kMaxShardBudget;
  int threads = 1;
};

Sizing ChooseSizing(const Hdf5ImportConfig& config, const Plan& plan) {
  Sizing s;
  const std::uint64_t budget = config.params.memory_budget_bytes;
  s.threads = ResolveThreads(config.params.threads);
  // Half the budget for shards being filled, compressed and written (raw and
  // encoded copies of at most 2 * threads + 1 shards), half for read blocks.
  const std::uint64_t shard_share = budget / 2;
  s.shard_byte_budget = std::clamp<std::uint64_t>(
      shard_share / (2 * (2 * static_cast<std::uint64_t>(s.threads) + 1)), kMinShardBudget,
      kMaxShardBudget);
  std::uint64_t row_bytes = 1;
  for (const SplitPlan& sp : plan.splits) {
    std::uint64_t b = 0;
    for (std::size_t a = 0; a < sp.attrs.size(); ++a) {
      const std::uint64_t n = Elements(sp.attrs[a].shape);
      const std::size_t dsize = DTypeItemSize(sp.attrs[a].dtype);
      // A wide read needs the 8-byte buffer and the converted copy.
      bool any_wide = false;
      for (const auto& per_file : sp.attr_src) {
        any_wide |= h5::ChooseReadAs(per_file[a].type, sp.attrs[a].dtype) != ReadAs::kDirect;
      }
      b += n * (any_wide ? 8 + dsize : dsize);
    }
    if (!sp.meta_src.empty() && !sp.meta_src.front().empty()) {
      for (const ResolvedSource& r : sp.meta_src.front()) b += r.row_elements * 16;
    }
    row_bytes = std::max(row_bytes, b);
  }
  const std::uint64_t read_share = budget / 2 - budget / 8;  // 1/8 for HDF5 chunk caches
  s.block_rows = std::max<std::uint64_t>(1, read_share / row_bytes);
  return s;
}

// End of the block starting at local row `r` of a segment ending at `hi`:
// whole chunks of the primary source where the budget allows.
std::uint64_t BlockEnd(std::uint64_t r, std::uint64_t hi, std::uint64_t block_rows, std::uint64_t chunk_rows) {
  std::uint64_t end = r + block_rows;
  if (chunk_rows > 1 && block_rows >= chunk_rows) {
    const std::uint64_t aligned = end / chunk_rows * chunk_rows;
    if (aligned > r) end = aligned;
  }
  return std::min(end, hi);
}

std::string InexactMessage(const ResolvedSource& src, std::uint64_t first_row, const h5::InexactValue& bad,
                           DType dest, const std::string& target) {
  const std::uint64_t n = std::max<std::uint64_t>(1, src.row_elements);
  std::string s = src.Where() + ": row " + std::to_string(first_row + bad.index / n);
  if (src.row_elements > 1) s += " element " + std::to_string(bad.index % n);
  s += ": value " + bad.value + " is not exactly representable as " + std::string(DTypeName(dest)) +
       " (" + target + ")";
  return s;
}

bool IsIntegerDType(DType d) {
  return d != DType::kFloat16 && d != DType::kFloat32 && d != DType::kFloat64;
}

// JSON for element i of a metadata source: from the converted values if the
// config gives a dtype (so 43.0 -> uint8 is written 43), else as read.
void AppendMetaValue(ReadAs from, const std::byte* wide, std::optional<DType> dtype, std::size_t i,
                     std::string* out) {
  if (dtype && IsIntegerDType(*dtype) && from == ReadAs::kFloat64) {
    double d;
    std::memcpy(&d, wide + i * 8, 8);
    if (d < 0) {
      out->append(std::to_string(static_cast<std::int64_t>(d)));
    } else {
      out->append(std::to_string(static_cast<std::uint64_t>(d)));
    }
    return;
  }
  if (dtype && !IsIntegerDType(*dtype) && from != ReadAs::kFloat64) {
    h5::AppendJsonNumber(from, wide, i, out);
    out->append(".0");
    return;
  }
  h5::AppendJsonNumber(from, wide, i, out);
}

struct RankWork {
  std::uint64_t rows = 0;
  std::uint64_t bytes = 0;
};

class Importer {
 public:
  Importer(Comm& comm, const Hdf5ImportConfig& config, Plan& plan, const Sizing& sizing,
           DistributedWriter& writer, const Hdf5ImportOptions& options)
      : comm_(comm), config_(config), plan_(plan), sizing_(sizing), writer_(writer), options_(options) {}

  Status Run(std::array<std::uint64_t, 3>* examples, std::uint64_t* bytes) {
    start_ = std::chrono::steady_clock::now();
    std::vector<std::vector<std::uint64_t>> cuts;
    for (const SplitPlan& sp : plan_.splits) {
      cuts.push_back(CutPoints(sp, comm_.size()));
      progress_.rows_total += cuts.back()[comm_.rank() + 1] - cuts.back()[comm_.rank()];
      global_rows_ += sp.total;
      std::uint64_t row_bytes = 0;
      for (const AttributeSpec& a : sp.attrs) row_bytes += Elements(a.shape) * DTypeItemSize(a.dtype);
      global_bytes_ += sp.total * row_bytes;
    }
    for (std::size_t s = 0; s < plan_.splits.size(); ++s) {
      const SplitPlan& sp = plan_.splits[s];
      const std::uint64_t g0 = cuts[s][comm_.rank()], g1 = cuts[s][comm_.rank() + 1];
      for (std::size_t f = 0; f < plan_.inputs.size() && g0 < g1; ++f) {
        const std::uint64_t f0 = sp.offset[f];
        const std::uint64_t f1 = f0 + (sp.rows[f].second - sp.rows[f].first);
        const std::uint64_t a = std::max(g0, f0), b = std::min(g1, f1);
        if (a >= b) continue;
        const std::uint64_t lo = sp.rows[f].first + (a - f0), hi = sp.rows[f].first + (b - f0);
        SEDPACK_RETURN_NOT_OK(Segment(sp, f, lo, hi));
        (*examples)[static_cast<int>(sp.split)] += hi - lo;
      }
    }
    *bytes = progress_.bytes_done;
    return Status::OK();
  }

 private:
  Status Segment(const SplitPlan& sp, std::size_t f, std::uint64_t lo, std::uint64_t hi) {
    const hid_t file = plan_.files[f].get();
    const std::uint64_t cache_total = config_.params.memory_budget_bytes / 8;
    std::vector<BlockReader> readers, meta_readers;
    for (std::size_t a = 0; a < sp.attrs.size(); ++a) {
      const ResolvedSource& src = sp.attr_src[f][a];
      const std::uint64_t band = src.chunk_bytes * src.chunks_per_row_band;
      const std::uint64_t cache = std::min(band, a == sp.primary ? cache_total / 2 : cache_total / (2 * sp.attrs.size()));
      SEDPACK_ASSIGN_OR_RETURN(BlockReader r, BlockReader::Open(file, src, sp.attrs[a].dtype, std::max<std::uint64_t>(cache, 1 << 20)));
      readers.push_back(std::move(r));
    }
    for (std::size_t k = 0; k < sp.meta_keys.size(); ++k) {
      const ResolvedSource& src = sp.meta_src[f][k];
      SEDPACK_ASSIGN_OR_RETURN(BlockReader r, BlockReader::Open(file, src, DType::kFloat64, 1 << 20, /*wide_only=*/true));
      meta_readers.push_back(std::move(r));
    }
    const std::size_t na = sp.attrs.size(), nm = sp.meta_keys.size();
    std::vector<std::vector<std::byte>> raw(na), converted(na), meta_raw(nm), meta_scratch(nm);
    std::vector<ValueView> values(na);
    std::vector<std::uint64_t> dest_row_bytes(na);
    for (std::size_t a = 0; a < na; ++a) {
      values[a].dtype = sp.attrs[a].dtype;
      values[a].shape = sp.attrs[a].shape;
      dest_row_bytes[a] = Elements(sp.attrs[a].shape) * DTypeItemSize(sp.attrs[a].dtype);
    }
    const std::uint64_t chunk_rows = sp.attr_src[f][sp.primary].chunk_rows;
    std::string meta_text;
    JsonValue meta_json;
    std::string meta_json_text;
    for (std::uint64_t r = lo; r < hi;) {
      SEDPACK_RETURN_NOT_OK(CheckCancelled());
      const std::uint64_t end = BlockEnd(r, hi, sizing_.block_rows, chunk_rows);
      const std::uint64_t n = end - r;
      for (std::size_t a = 0; a < na; ++a) {
        SEDPACK_RETURN_NOT_OK(readers[a].Read(r, n, &raw[a]));
        progress_.bytes_done += n * dest_row_bytes[a];
        if (readers[a].read_as() != ReadAs::kDirect) {
          converted[a].resize(n * dest_row_bytes[a]);
          h5::InexactValue bad;
          if (!h5::ConvertExact(readers[a].read_as(), raw[a].data(), n * sp.attr_src[f][a].row_elements,
                                sp.attrs[a].dtype, converted[a].data(), &bad)) {
            return Status::InvalidArgument(InexactMessage(sp.attr_src[f][a], r, bad, sp.attrs[a].dtype,
                                                          "attribute \"" + sp.attrs[a].name + "\""));
          }
        }
      }
      for (std::size_t k = 0; k < nm; ++k) {
        SEDPACK_RETURN_NOT_OK(meta_readers[k].Read(r, n, &meta_raw[k]));
        const auto& dtype = sp.mapping->shard_custom_metadata[k].second.dtype;
        if (dtype) {
          meta_scratch[k].resize(n * sp.meta_src[f][k].row_elements * 8);
          h5::InexactValue bad;
          if (!h5::ConvertExact(meta_readers[k].read_as(), meta_raw[k].data(),
                                n * sp.meta_src[f][k].row_elements, *dtype, meta_scratch[k].data(), &bad)) {
            return Status::InvalidArgument(InexactMessage(sp.meta_src[f][k], r, bad, *dtype,
                                                          "shard_custom_metadata \"" + sp.meta_keys[k] + "\""));
          }
        }
      }
      for (std::uint64_t i = 0; i < n; ++i) {
        for (std::size_t a = 0; a < na; ++a) {
          const std::vector<std::byte>& buf = readers[a].read_as() == ReadAs::kDirect ? raw[a] : converted[a];
          values[a].data = std::span<const std::byte>(buf.data() + i * dest_row_bytes[a], dest_row_bytes[a]);
        }
        const JsonValue* meta = nullptr;
        if (nm > 0) {
          meta_text = "{";
          for (std::size_t k = 0; k < nm; ++k) {
            const ResolvedSource& src = sp.meta_src[f][k];
            if (k) meta_text += ",";
            meta_text += "\"" + sp.meta_keys[k] + "\":";
            const bool scalar = src.row_shape.empty();
            if (!scalar) meta_text += "[";
            for (std::uint64_t e = 0; e < src.row_elements; ++e) {
              if (e) meta_text += ",";
              const std::size_t idx = i * src.row_elements + e;
              if (meta_readers[k].read_as() == ReadAs::kFloat64 &&
                  !sp.mapping->shard_custom_metadata[k].second.dtype) {
                double d;
                std::memcpy(&d, meta_raw[k].data() + idx * 8, 8);
                if (!std::isfinite(d)) {
                  return Status::InvalidArgument(src.Where(), ": row ", r + i,
                                                 ": NaN or infinity cannot be JSON custom_metadata");
                }
              }
              AppendMetaValue(meta_readers[k].read_as(), meta_raw[k].data(),
                              sp.mapping->shard_custom_metadata[k].second.dtype, idx, &meta_text);
            }
            if (!scalar) meta_text += "]";
          }
          meta_text += "}";
          if (meta_text != meta_json_text) {
            auto parsed = JsonValue::Parse(meta_text);
            if (!parsed.ok()) return parsed.status().WithPrefix("shard_custom_metadata: ");
            meta_json = std::move(parsed).value();
            meta_json_text = meta_text;
          }
          meta = &meta_json;
        }
        SEDPACK_RETURN_NOT_OK(writer_.WriteExample(sp.split, values, meta));
      }
      progress_.rows_done += n;
      Report(false);
      r = end;
    }
    return Status::OK();
  }

  // Rank 0 reports the sum over ranks; the others send their row counts to it.
  void Report(bool final) {
    const auto now = std::chrono::steady_clock::now();
    if (!final && now - last_report_ < std::chrono::milliseconds(200)) return;
    last_report_ = now;
    if (comm_.rank() != 0) {
      comm_.SendProgress(0, static_cast<std::int64_t>(progress_.rows_done), final);
      return;
    }
    auto total = [&] {
      if (!others_final_) {
        if (auto p = comm_.ReceiveProgress(); p.ok()) {
          others_ = p->values;
          others_final_ = p->all_final;  // the channel resets after this answer: latch it
        }
      }
      Hdf5ImportProgress g;
      g.rows_done = progress_.rows_done;
      for (std::size_t r = 1; r < others_.size(); ++r) g.rows_done += static_cast<std::uint64_t>(others_[r]);
      g.rows_total = global_rows_;
      g.bytes_total = global_bytes_;
      g.bytes_done = global_rows_ ? static_cast<std::uint64_t>(static_cast<double>(global_bytes_) *
                                                             g.rows_done / global_rows_)
                                  : 0;
      g.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
      return g;
    };
    if (!final) {
      if (options_.progress) options_.progress(total());
      return;
    }
    while (comm_.size() > 1 && !others_final_) {
      Hdf5ImportProgress g = total();
      if (others_final_) break;
      if (options_.progress) options_.progress(g);
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    Hdf5ImportProgress g = total();
    g.finished = true;
    if (options_.progress) options_.progress(g);
  }

 public:
  // Called once on every rank after Run, whatever it returned, so rank 0 never
  // waits for a rank that stopped early.
  void FinalReport() { Report(true); }

 private:
  Comm& comm_;
  const Hdf5ImportConfig& config_;
  Plan& plan_;
  const Sizing& sizing_;
  DistributedWriter& writer_;
  const Hdf5ImportOptions& options_;
  Hdf5ImportProgress progress_;  // this rank's
  std::uint64_t global_rows_ = 0, global_bytes_ = 0;
  std::vector<std::int64_t> others_;
  bool others_final_ = false;
  std::chrono::steady_clock::time_point start_, last_report_;
};

Status CheckOutputFree(const std::string& out, bool* existed) {
  *existed = PathExists(out);
  if (*existed && !IsEmptyDirectory(out)) {
    return Status::AlreadyExists(out, " already exists; import-hdf5 writes a new dataset, choose a new or "
                                      "empty folder");
  }
  return Status::OK();
}

}  // namespace

Result<Hdf5ImportSummary> ImportHdf5(Comm& comm, const Hdf5ImportConfig& config,
                                     const std::vector<std::string>& inputs, const std::string& out,
                                     const Hdf5ImportOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  // 1. Check everything before anything is created.
  Status planned = ValidateHdf5ImportConfig(config);
  Result<Plan> plan = planned.ok() ? MakePlan(config, inputs) : Result<Plan>(planned);
  bool existed = false;
  Status local = plan.status();
  if (local.ok() && comm.rank() == 0) local = CheckOutputFree(out, &existed);
  SEDPACK_RETURN_NOT_OK(AgreeOnStatus(comm, local));
  const Sizing sizing = ChooseSizing(config, *plan);

  // 2. Open the writer (rank 0 creates the dataset) and import this rank's rows.
  DistributedWriteOptions wo;
  wo.create_metadata = config.metadata;
  wo.create_structure = config.structure;
  wo.job_id = options.job_id;
  wo.filler.concurrency = sizing.threads;
  wo.filler.max_pending_shards = sizing.threads;
  wo.filler.shard_byte_budget = sizing.shard_byte_budget;
  wo.filler.codec.level = config.params.level;
  auto writer = DistributedWriter::Open(comm, out, wo);
  if (!writer.ok()) {
    if (comm.rank() == 0) io_internal::RestoreOutputFolder(out, existed);
    return writer.status();
  }
  std::array<std::uint64_t, 3> examples{};
  std::uint64_t bytes = 0;
  Importer importer(comm, config, *plan, sizing, **writer, options);
  Status mine = importer.Run(&examples, &bytes);
  if (!mine.ok()) (*writer)->Fail(mine);
  importer.FinalReport();
  Status finished = (*writer)->Finish();
  if (!finished.ok()) {
    // Every rank removes its own shards, then rank 0 the dataset it created.
    for (Split s : AllSplits()) {
      (void)RemoveTree((std::filesystem::path(out) / SplitName(s) / (*writer)->RankFolder()).string());
    }
    (void)comm.Barrier();
    if (comm.rank() == 0) io_internal::RestoreOutputFolder(out, existed);
    (void)comm.Barrier();
    return finished;
  }

  Hdf5ImportSummary summary;
  for (int s = 0; s < 3; ++s) {
    SEDPACK_ASSIGN_OR_RETURN(std::int64_t n, comm.AllreduceSum(static_cast<std::int64_t>(examples[s])));
    summary.examples[s] = static_cast<std::uint64_t>(n);
    summary.examples_total += summary.examples[s];
  }
  SEDPACK_ASSIGN_OR_RETURN(std::int64_t total_bytes, comm.AllreduceSum(static_cast<std::int64_t>(bytes)));
  summary.source_bytes = static_cast<std::uint64_t>(total_bytes);
  summary.job_id = (*writer)->job_id();
  SEDPACK_ASSIGN_OR_RETURN(summary.root_checksums, (*writer)->dataset()->MetadataChecksums());
  summary.block_rows = sizing.block_rows;
  summary.shard_byte_budget = sizing.shard_byte_budget;
  summary.write_threads = sizing.threads;
  summary.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return summary;
}

}  // namespace sedpack
