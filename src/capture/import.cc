// SPDX-License-Identifier: Apache-2.0
// The capture importer: a source-independent "rows of fixed-size fields ->
// dataset" loop over CaptureInputs (TRS files, ChipWhisperer segments). Each
// rank takes a contiguous range of every split's rows, reads bounded blocks,
// and writes through the DistributedWriter. See import.h for the contract.
#include "sedpack/capture/import.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <thread>

#include "io/output_folder.h"
#include "parallel/worker_pool.h"
#include "sedpack/cancel.h"
#include "sedpack/dataset/dataset.h"
#include "sedpack/io/file.h"
#include "sedpack/mpi/distributed_write.h"

namespace sedpack {

CaptureInput::~CaptureInput() = default;

namespace {

constexpr std::uint64_t kMinShardBudget = 1ULL << 20;
constexpr std::uint64_t kMaxShardBudget = 1ULL << 30;

std::uint64_t Elements(const Shape& s) {
  std::uint64_t n = 1;
  for (std::int64_t d : s) n *= static_cast<std::uint64_t>(std::max<std::int64_t>(d, 0));
  return n;
}

enum class Conv { kCopy, kF64ToF32, kStrip };

// How one attribute is filled from one field.
struct AttrSource {
  std::size_t field = 0;          // index into the input's fields()
  Conv conv = Conv::kCopy;
  std::uint64_t src_row_bytes = 0;
  std::uint64_t dst_row_bytes = 0;  // 0 for str (variable)
  // Column window as a byte range inside the row (the whole row if unset).
  std::uint64_t first_byte = 0, window_bytes = 0;
};

struct SplitPlan {
  const CaptureSplitMapping* mapping = nullptr;
  std::vector<AttributeSpec> attrs;
  std::vector<AttrSource> src;            // per attribute (same for every input)
  std::vector<std::size_t> which;         // distinct fields read
  std::vector<std::size_t> slot;          // per attribute: index into which
  std::vector<std::pair<std::uint64_t, std::uint64_t>> rows;  // per input
  std::vector<std::uint64_t> offset;
  std::uint64_t total = 0;
  std::uint64_t read_row_bytes = 0;  // the mapped fields' bytes a row
  std::uint64_t file_row_bytes = 0;  // what the input reads a row
};

const CaptureField* FindField(const CaptureInput& in, const std::string& name, std::size_t* index) {
  const auto& f = in.fields();
  for (std::size_t i = 0; i < f.size(); ++i) {
    if (f[i].name == name) {
      *index = i;
      return &f[i];
    }
  }
  return nullptr;
}

std::string FieldList(const CaptureInput& in) {
  std::string s;
  for (const CaptureField& f : in.fields()) s += (s.empty() ? "" : ", ") + f.name;
  return s;
}

std::string Layout(const CaptureField& f) {
  return std::string(DTypeName(f.dtype)) + " " + ShapeToString(f.shape);
}

Result<AttrSource> ResolveAttr(const CaptureInput& in, const AttributeSpec& a, const CaptureSource& s) {
  AttrSource r;
  const CaptureField* f = FindField(in, s.field, &r.field);
  if (!f) {
    return Status::InvalidArgument(in.Describe(), ": attribute \"", a.name, "\": no field ", s.Describe(),
                                   " (fields: ", FieldList(in), ")");
  }
  r.src_row_bytes = f->row_bytes;
  r.first_byte = 0;
  r.window_bytes = f->row_bytes;
  std::uint64_t elements = f->dtype == DType::kStr || f->dtype == DType::kBytes ? f->row_bytes : Elements(f->shape);
  const std::size_t item = f->dtype == DType::kStr || f->dtype == DType::kBytes ? 1 : DTypeItemSize(f->dtype);
  if (s.columns) {
    if (f->dtype == DType::kStr || f->shape.empty()) {
      return Status::InvalidArgument(in.Describe(), ": attribute \"", a.name, "\": a column window needs an array field, ",
                                     s.field, " is ", Layout(*f));
    }
    const std::uint64_t last_dim = static_cast<std::uint64_t>(f->shape.back());
    if (f->shape.size() != 1 || static_cast<std::uint64_t>(s.columns->second) > last_dim) {
      return Status::InvalidArgument(in.Describe(), ": attribute \"", a.name, "\": columns [", s.columns->first, ", ",
                                     s.columns->second, ") on ", s.field, " of shape ", ShapeToString(f->shape));
    }
    r.first_byte = static_cast<std::uint64_t>(s.columns->first) * item;
    elements = static_cast<std::uint64_t>(s.columns->second - s.columns->first);
    r.window_bytes = elements * item;
  }
  auto mismatch = [&](std::string_view why) {
    return Status::InvalidArgument(in.Describe(), ": attribute \"", a.name, "\" is ", DTypeName(a.dtype), " ",
                                   ShapeToString(a.shape), " but its source ", s.Describe(), " is ", Layout(*f), ": ",
                                   why);
  };
  if (a.dtype == DType::kStr) {
    if (f->dtype != DType::kStr) return mismatch("a str attribute takes a text field (e.g. \"title\")");
    r.conv = Conv::kStrip;
    r.dst_row_bytes = 0;
    return r;
  }
  if (f->dtype == DType::kStr) return mismatch("a text field feeds a str attribute");
  if (a.dtype == DType::kBytes) {
    if (a.IsVariableSize() || static_cast<std::uint64_t>(a.shape[0]) != r.window_bytes || a.shape.size() != 1) {
      return mismatch("a bytes attribute needs shape (" + std::to_string(r.window_bytes) + ",)");
    }
    r.dst_row_bytes = r.window_bytes;
    return r;
  }
  if (Elements(a.shape) != elements) {
    return mismatch("each row holds " + std::to_string(elements) + " values, the attribute " +
                    std::to_string(Elements(a.shape)));
  }
  const DType src = f->dtype == DType::kBytes ? DType::kUInt8 : f->dtype;
  if (src == a.dtype) {
    r.conv = Conv::kCopy;
  } else if (src == DType::kFloat64 && a.dtype == DType::kFloat32) {
    r.conv = Conv::kF64ToF32;
  } else {
    return mismatch("dtypes must match (values are stored as captured; float64 -> float32 is the one "
                    "conversion, exact values only)");
  }
  r.dst_row_bytes = elements * DTypeItemSize(a.dtype);
  return r;
}

Result<std::vector<SplitPlan>> MakePlan(const CaptureImportConfig& config,
                                        std::span<const std::unique_ptr<CaptureInput>> inputs) {
  if (inputs.empty()) return Status::InvalidArgument("no input given");
  SEDPACK_RETURN_NOT_OK(Dataset::ValidateStructure(config.structure));
  SEDPACK_ASSIGN_OR_RETURN(std::vector<AttributeSpec> schema, config.structure.Schema());
  if (schema.empty()) return Status::InvalidArgument("dataset_structure.saved_data_description: no attribute");
  std::vector<SplitPlan> plans;
  for (const CaptureSplitMapping& m : config.params.splits) {
    SplitPlan sp;
    sp.mapping = &m;
    sp.attrs = schema;
    const std::string where = std::string("split ") + std::string(SplitName(m.split));
    for (const auto& entry : m.attributes) {
      const std::string& name = entry.first;
      if (std::none_of(schema.begin(), schema.end(), [&](const AttributeSpec& a) { return a.name == name; })) {
        return Status::InvalidArgument(where, ": \"", name, "\" is not an attribute of saved_data_description");
      }
    }
    for (const AttributeSpec& a : schema) {
      const auto n = std::count_if(m.attributes.begin(), m.attributes.end(),
                                   [&](const auto& p) { return p.first == a.name; });
      if (n != 1) {
        return Status::InvalidArgument(where, ": attribute \"", a.name, n ? "\" is mapped more than once" : "\" has no source");
      }
    }
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      const CaptureInput& in = *inputs[i];
      for (std::size_t a = 0; a < schema.size(); ++a) {
        const auto it = std::find_if(m.attributes.begin(), m.attributes.end(),
                                     [&](const auto& p) { return p.first == schema[a].name; });
        if (i > 0) {
          // Every input must agree with the first on each mapped field's layout.
          const CaptureField& f0 = inputs[0]->fields()[sp.src[a].field];
          std::size_t k = 0;
          const CaptureField* fi = FindField(in, f0.name, &k);
          if (!fi || fi->dtype != f0.dtype || fi->shape != f0.shape || fi->row_bytes != f0.row_bytes) {
            return Status::InvalidArgument(
                in.Describe(), ": field \"", f0.name, "\" is ", fi ? Layout(*fi) : std::string("missing"), " but in ",
                inputs[0]->Describe(), " it is ", Layout(f0), ": inputs must agree on their layout");
          }
        }
        SEDPACK_ASSIGN_OR_RETURN(AttrSource r, ResolveAttr(in, schema[a], it->second));
        if (i == 0) {
          sp.src.push_back(r);
        } else if (r.field != sp.src[a].field) {
          return Status::InvalidArgument(in.Describe(), ": has fields ", FieldList(in), " but ", inputs[0]->Describe(),
                                         " has ", FieldList(*inputs[0]), ": inputs must agree on their layout");
        }
      }
      std::pair<std::uint64_t, std::uint64_t> range{0, in.rows()};
      if (m.rows) {
        if (m.rows->second > in.rows()) {
          return Status::InvalidArgument(in.Describe(), ": ", where, ": rows [", m.rows->first, ", ", m.rows->second,
                                         ") asked for, it has ", in.rows());
        }
        range = *m.rows;
      }
      sp.offset.push_back(sp.total);
      sp.total += range.second - range.first;
      sp.rows.push_back(range);
    }
    for (std::size_t a = 0; a < sp.src.size(); ++a) {
      auto it = std::find(sp.which.begin(), sp.which.end(), sp.src[a].field);
      if (it == sp.which.end()) {
        sp.which.push_back(sp.src[a].field);
        sp.read_row_bytes += sp.src[a].src_row_bytes;
        it = sp.which.end() - 1;
      }
      sp.slot.push_back(static_cast<std::size_t>(it - sp.which.begin()));
    }
    sp.file_row_bytes = inputs[0]->read_row_bytes();
    plans.push_back(std::move(sp));
  }
  return plans;
}

struct Sizing {
  std::uint64_t block_rows = 1;
  std::uint64_t shard_byte_budget = kMaxShardBudget;
  int threads = 1;
};

Sizing ChooseSizing(const CaptureImportConfig& config, const std::vector<SplitPlan>& plans) {
  Sizing s;
  const std::uint64_t budget = config.params.memory_budget_bytes;
  s.threads = ResolveThreads(config.params.threads);
  // Half the budget for shards being filled, compressed and written, half for
  // the read block and its converted copy.
  s.shard_byte_budget = std::clamp<std::uint64_t>(budget / 2 / (2 * (2 * static_cast<std::uint64_t>(s.threads) + 1)),
                                                  kMinShardBudget, kMaxShardBudget);
  std::uint64_t row = 1;
  for (const SplitPlan& sp : plans) {
    std::uint64_t dst = 0;
    for (const AttrSource& a : sp.src) dst += a.conv == Conv::kF64ToF32 ? a.dst_row_bytes : 0;
    row = std::max(row, sp.read_row_bytes + sp.file_row_bytes + dst);
  }
  s.block_rows = std::max<std::uint64_t>(1, budget / 2 / row);
  return s;
}

class Importer {
 public:
  Importer(Comm& comm, std::span<const std::unique_ptr<CaptureInput>> inputs, std::vector<SplitPlan>& plans,
           const Sizing& sizing, DistributedWriter& writer, const CaptureImportOptions& options)
      : comm_(comm), inputs_(inputs), plans_(plans), sizing_(sizing), writer_(writer), options_(options) {}

  Status Run(std::array<std::uint64_t, 3>* examples) {
    start_ = std::chrono::steady_clock::now();
    const auto ranks = static_cast<unsigned __int128>(comm_.size());
    for (const SplitPlan& sp : plans_) {
      global_rows_ += sp.total;
      global_bytes_ += sp.total * sp.file_row_bytes;
    }
    for (const SplitPlan& sp : plans_) {
      const std::uint64_t g0 = static_cast<std::uint64_t>(sp.total * static_cast<unsigned __int128>(comm_.rank()) / ranks);
      const std::uint64_t g1 =
          static_cast<std::uint64_t>(sp.total * static_cast<unsigned __int128>(comm_.rank() + 1) / ranks);
      for (std::size_t f = 0; f < inputs_.size() && g0 < g1; ++f) {
        const std::uint64_t f0 = sp.offset[f], f1 = f0 + (sp.rows[f].second - sp.rows[f].first);
        const std::uint64_t a = std::max(g0, f0), b = std::min(g1, f1);
        if (a >= b) continue;
        const std::uint64_t lo = sp.rows[f].first + (a - f0), hi = sp.rows[f].first + (b - f0);
        SEDPACK_RETURN_NOT_OK(Segment(sp, *inputs_[f], lo, hi));
        (*examples)[static_cast<int>(sp.mapping->split)] += hi - lo;
      }
    }
    return Status::OK();
  }

  std::uint64_t bytes_read() const { return bytes_read_; }
  double max_error() const { return max_error_; }

 private:
  Status Segment(const SplitPlan& sp, CaptureInput& in, std::uint64_t lo, std::uint64_t hi) {
    const std::size_t na = sp.attrs.size();
    std::vector<CaptureRows> raw(sp.which.size());
    std::vector<std::vector<std::byte>> converted(na);
    std::vector<ValueView> values(na);
    for (std::size_t a = 0; a < na; ++a) {
      values[a].dtype = sp.attrs[a].dtype;
      values[a].shape = sp.attrs[a].shape;
    }
    for (std::uint64_t r = lo; r < hi;) {
      SEDPACK_RETURN_NOT_OK(CheckCancelled());
      const std::uint64_t n = std::min(sizing_.block_rows, hi - r);
      SEDPACK_RETURN_NOT_OK(in.Read(r, n, sp.which, &raw));
      for (std::size_t a = 0; a < na; ++a) {
        if (sp.src[a].conv == Conv::kF64ToF32) SEDPACK_RETURN_NOT_OK(ToFloat32(sp, a, in, r, n, raw, &converted[a]));
      }
      bytes_read_ += n * sp.file_row_bytes;
      for (std::uint64_t i = 0; i < n; ++i) {
        for (std::size_t a = 0; a < na; ++a) {
          const AttrSource& s = sp.src[a];
          const std::byte* row = raw[sp.slot[a]].data + i * raw[sp.slot[a]].stride;
          switch (s.conv) {
            case Conv::kCopy:
              values[a].data = std::span<const std::byte>(row + s.first_byte, s.window_bytes);
              break;
            case Conv::kF64ToF32:
              values[a].data = std::span<const std::byte>(converted[a].data() + i * s.dst_row_bytes, s.dst_row_bytes);
              break;
            case Conv::kStrip: {
              std::size_t len = s.src_row_bytes;
              while (len > 0 && row[len - 1] == std::byte{0}) --len;
              values[a].data = std::span<const std::byte>(row, len);
              break;
            }
          }
        }
        Status st = writer_.WriteExample(sp.mapping->split, values);
        if (!st.ok()) {
          if (DistributedWriter::IsAbort(st)) return st;
          return st.WithPrefix(in.Describe() + ": row " + std::to_string(r + i) + ": ");
        }
      }
      rows_done_ += n;
      Report(false);
      r += n;
    }
    return Status::OK();
  }

  Status ToFloat32(const SplitPlan& sp, std::size_t a, const CaptureInput& in, std::uint64_t first, std::uint64_t n,
                   const std::vector<CaptureRows>& raw, std::vector<std::byte>* out) {
    const AttrSource& s = sp.src[a];
    const std::uint64_t per_row = s.dst_row_bytes / 4;
    out->resize(n * s.dst_row_bytes);
    for (std::uint64_t i = 0; i < n; ++i) {
      const std::byte* row = raw[sp.slot[a]].data + i * raw[sp.slot[a]].stride + s.first_byte;
      for (std::uint64_t e = 0; e < per_row; ++e) {
        double d;
        std::memcpy(&d, row + e * 8, 8);
        const float f = static_cast<float>(d);
        const double err = std::isnan(d) ? 0.0 : std::fabs(static_cast<double>(f) - d);
        if (err > 0 || std::isinf(f) != std::isinf(d)) {
          if (!options_.allow_inexact_float32) {
            return Status::InvalidArgument(in.Describe(), ": row ", first + i, " element ", e, " of ",
                                           inputs_[0]->fields()[s.field].name, ": ", d,
                                           " is not exactly a float32 (error ", err, "); keep it float64, or "
                                           "accept rounding explicitly");
          }
          max_error_ = std::max(max_error_, std::isinf(err) ? HUGE_VAL : err);
        }
        std::memcpy(out->data() + (i * per_row + e) * 4, &f, 4);
      }
    }
    return Status::OK();
  }

  void Report(bool final) {
    const auto now = std::chrono::steady_clock::now();
    if (!final && now - last_report_ < std::chrono::milliseconds(200)) return;
    last_report_ = now;
    if (comm_.rank() != 0) {
      comm_.SendProgress(0, static_cast<std::int64_t>(rows_done_), final);
      return;
    }
    auto total = [&] {
      if (!others_final_) {
        if (auto p = comm_.ReceiveProgress(); p.ok()) {
          others_ = p->values;
          others_final_ = p->all_final;
        }
      }
      CaptureImportProgress g;
      g.rows_done = rows_done_;
      for (std::size_t r = 1; r < others_.size(); ++r) g.rows_done += static_cast<std::uint64_t>(others_[r]);
      g.rows_total = global_rows_;
      g.bytes_total = global_bytes_;
      g.bytes_done = global_rows_ ? static_cast<std::uint64_t>(static_cast<double>(global_bytes_) * g.rows_done /
                                                               static_cast<double>(global_rows_))
                                  : 0;
      g.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
      return g;
    };
    if (!final) {
      if (options_.progress) options_.progress(total());
      return;
    }
    while (comm_.size() > 1 && !others_final_) {
      CaptureImportProgress g = total();
      if (others_final_) break;
      if (options_.progress) options_.progress(g);
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    CaptureImportProgress g = total();
    g.finished = true;
    if (options_.progress) options_.progress(g);
  }

 public:
  void FinalReport() { Report(true); }

 private:
  Comm& comm_;
  std::span<const std::unique_ptr<CaptureInput>> inputs_;
  std::vector<SplitPlan>& plans_;
  const Sizing& sizing_;
  DistributedWriter& writer_;
  const CaptureImportOptions& options_;
  std::uint64_t rows_done_ = 0, bytes_read_ = 0;
  std::uint64_t global_rows_ = 0, global_bytes_ = 0;
  double max_error_ = 0;
  std::vector<std::int64_t> others_;
  bool others_final_ = false;
  std::chrono::steady_clock::time_point start_, last_report_;
};

Status CheckOutputFree(const std::string& out, bool* existed) {
  *existed = PathExists(out);
  if (*existed && !IsEmptyDirectory(out)) {
    return Status::AlreadyExists(out, " already exists; an import writes a new dataset, choose a new or empty folder");
  }
  return Status::OK();
}

}  // namespace

Result<CaptureImportSummary> ImportCapture(Comm& comm, const CaptureImportConfig& config,
                                           std::span<const std::unique_ptr<CaptureInput>> inputs,
                                           const std::string& out, const CaptureImportOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  Result<std::vector<SplitPlan>> plans = MakePlan(config, inputs);
  bool existed = false;
  Status local = plans.status();
  if (local.ok() && comm.rank() == 0) local = CheckOutputFree(out, &existed);
  SEDPACK_RETURN_NOT_OK(AgreeOnStatus(comm, local));
  const Sizing sizing = ChooseSizing(config, *plans);

  DistributedWriteOptions wo;
  wo.create_metadata = config.metadata;
  wo.create_structure = config.structure;
  wo.job_id = options.job_id;
  wo.filler.concurrency = sizing.threads;
  wo.filler.max_pending_shards = sizing.threads;
  wo.filler.shard_byte_budget = sizing.shard_byte_budget;
  auto writer = DistributedWriter::Open(comm, out, wo);
  if (!writer.ok()) {
    if (comm.rank() == 0) io_internal::RestoreOutputFolder(out, existed);
    return writer.status();
  }
  std::array<std::uint64_t, 3> examples{};
  Importer importer(comm, inputs, *plans, sizing, **writer, options);
  Status mine = importer.Run(&examples);
  if (!mine.ok()) (*writer)->Fail(mine);
  importer.FinalReport();
  Status finished = (*writer)->Finish();
  if (!finished.ok()) {
    for (Split s : AllSplits()) {
      (void)RemoveTree((std::filesystem::path(out) / SplitName(s) / (*writer)->RankFolder()).string());
    }
    (void)comm.Barrier();
    if (comm.rank() == 0) io_internal::RestoreOutputFolder(out, existed);
    (void)comm.Barrier();
    return finished;
  }
  CaptureImportSummary summary;
  for (int s = 0; s < 3; ++s) {
    SEDPACK_ASSIGN_OR_RETURN(std::int64_t n, comm.AllreduceSum(static_cast<std::int64_t>(examples[s])));
    summary.examples[s] = static_cast<std::uint64_t>(n);
    summary.examples_total += summary.examples[s];
  }
  SEDPACK_ASSIGN_OR_RETURN(std::int64_t bytes, comm.AllreduceSum(static_cast<std::int64_t>(importer.bytes_read())));
  summary.source_bytes = static_cast<std::uint64_t>(bytes);
  // The largest rounding error over all ranks: non-negative doubles order as
  // their bit patterns do, so the integer maximum is the double maximum.
  std::int64_t bits;
  const double e = importer.max_error();
  std::memcpy(&bits, &e, 8);
  SEDPACK_ASSIGN_OR_RETURN(std::int64_t max_bits, comm.AllreduceMax(bits));
  std::memcpy(&summary.max_float32_error, &max_bits, 8);
  summary.job_id = (*writer)->job_id();
  SEDPACK_ASSIGN_OR_RETURN(summary.root_checksums, (*writer)->dataset()->MetadataChecksums());
  summary.block_rows = sizing.block_rows;
  summary.write_threads = sizing.threads;
  summary.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return summary;
}

}  // namespace sedpack
