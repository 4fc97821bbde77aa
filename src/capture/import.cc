// SPDX-License-Identifier: Apache-2.0
// The capture importer: every split's attributes resolved against the fields
// of the CaptureInputs (TRS files, ChipWhisperer segments), each input seen
// as an ImportSource of the shared engine (import/import_internal.h). See
// import.h for the contract.
#include "sedpack/capture/import.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>

#include "import/import_internal.h"
#include "sedpack/dataset/dataset.h"

namespace sedpack {

CaptureInput::~CaptureInput() = default;

namespace {

using import_internal::ImportColumn;
using import_internal::ImportSplit;

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

std::uint64_t BlockRowBytes(const std::vector<SplitPlan>& plans) {
  std::uint64_t row = 1;
  for (const SplitPlan& sp : plans) {
    std::uint64_t dst = 0;
    for (const AttrSource& a : sp.src) dst += a.conv == Conv::kF64ToF32 ? a.dst_row_bytes : 0;
    row = std::max(row, sp.read_row_bytes + sp.file_row_bytes + dst);
  }
  return row;
}

// One capture input as the rows of one split: the mapped fields read
// together, column windows applied, float64 narrowed to float32 where asked.
class SplitSource : public import_internal::ImportSource {
 public:
  SplitSource(const SplitPlan& sp, CaptureInput& in, bool allow_inexact)
      : sp_(sp), in_(in), allow_inexact_(allow_inexact), converted_(sp.attrs.size()) {}

  std::string Describe() const override { return in_.Describe(); }
  const std::vector<AttributeSpec>& fields() const override { return sp_.attrs; }
  std::uint64_t rows() const override { return in_.rows(); }
  double max_rounding_error() const override { return max_error_; }
  void Release() override { converted_.assign(sp_.attrs.size(), {}); }

  Status ReadBlock(std::uint64_t first, std::uint64_t n, std::vector<ImportColumn>* columns) override {
    SEDPACK_RETURN_NOT_OK(in_.Read(first, n, sp_.which, &raw_));
    columns->resize(sp_.attrs.size());
    for (std::size_t a = 0; a < sp_.attrs.size(); ++a) {
      const AttrSource& s = sp_.src[a];
      const CaptureRows& rows = raw_[sp_.slot[a]];
      ImportColumn& c = (*columns)[a];
      switch (s.conv) {
        case Conv::kCopy:
          c = ImportColumn{rows.data + s.first_byte, rows.stride, s.window_bytes, false};
          break;
        case Conv::kF64ToF32:
          SEDPACK_RETURN_NOT_OK(ToFloat32(a, first, n));
          c = ImportColumn{converted_[a].data(), s.dst_row_bytes, s.dst_row_bytes, false};
          break;
        case Conv::kStrip:
          c = ImportColumn{rows.data, rows.stride, s.src_row_bytes, true};
          break;
      }
    }
    return Status::OK();
  }

 private:
  Status ToFloat32(std::size_t a, std::uint64_t first, std::uint64_t n) {
    const AttrSource& s = sp_.src[a];
    const std::uint64_t per_row = s.dst_row_bytes / 4;
    std::vector<std::byte>& out = converted_[a];
    out.resize(n * s.dst_row_bytes);
    for (std::uint64_t i = 0; i < n; ++i) {
      const std::byte* row = raw_[sp_.slot[a]].data + i * raw_[sp_.slot[a]].stride + s.first_byte;
      for (std::uint64_t e = 0; e < per_row; ++e) {
        double d;
        std::memcpy(&d, row + e * 8, 8);
        const float f = static_cast<float>(d);
        const double err = std::isnan(d) ? 0.0 : std::fabs(static_cast<double>(f) - d);
        if (err > 0 || std::isinf(f) != std::isinf(d)) {
          if (!allow_inexact_) {
            return Status::InvalidArgument(in_.Describe(), ": row ", first + i, " element ", e, " of ",
                                           in_.fields()[s.field].name, ": ", d,
                                           " is not exactly a float32 (error ", err, "); keep it float64, or "
                                           "accept rounding explicitly");
          }
          max_error_ = std::max(max_error_, std::isinf(err) ? HUGE_VAL : err);
        }
        std::memcpy(out.data() + (i * per_row + e) * 4, &f, 4);
      }
    }
    return Status::OK();
  }

  const SplitPlan& sp_;
  CaptureInput& in_;
  bool allow_inexact_;
  std::vector<CaptureRows> raw_;
  std::vector<std::vector<std::byte>> converted_;
  double max_error_ = 0;
};

std::vector<ImportSplit> ToImportSplits(const std::vector<SplitPlan>& plans,
                                        std::span<const std::unique_ptr<CaptureInput>> inputs, bool allow_inexact) {
  std::vector<ImportSplit> splits;
  for (const SplitPlan& sp : plans) {
    ImportSplit& out = splits.emplace_back();
    out.split = sp.mapping->split;
    out.rows = sp.rows;
    out.row_bytes = sp.file_row_bytes;
    for (const auto& in : inputs) out.inputs.push_back(std::make_unique<SplitSource>(sp, *in, allow_inexact));
  }
  return splits;
}

}  // namespace

Result<CaptureImportSummary> ImportCapture(Comm& comm, const CaptureImportConfig& config,
                                           std::span<const std::unique_ptr<CaptureInput>> inputs,
                                           const std::string& out, const CaptureImportOptions& options) {
  import_internal::ImportJob job;
  Result<std::vector<SplitPlan>> plans = MakePlan(config, inputs);
  std::vector<ImportSplit> splits;
  if (plans.ok()) {
    splits = ToImportSplits(*plans, inputs, options.allow_inexact_float32);
    job.sizing = import_internal::ChooseImportSizing(config.params.memory_budget_bytes, config.params.threads,
                                                     BlockRowBytes(*plans));
  }
  job.metadata = config.metadata;
  job.structure = config.structure;
  job.job_id = options.job_id;
  job.progress = options.progress;
  job.name_rows_in_write_errors = true;
  job.file_system = options.file_system;
  if (!options.command.empty()) job.who = options.command;
  if (options.resumable || options.restart) {
    job.resume_parameters = {{"command", std::string(job.who)}, {"config", options.config_digest}};
    for (auto& p : import_internal::InputParameters(options.input_files, options.file_system)) {
      job.resume_parameters.push_back(std::move(p));
    }
    job.restart = options.restart;
  }
  SEDPACK_ASSIGN_OR_RETURN(import_internal::ImportResult r,
                           import_internal::Import(comm, plans.status(), splits, out, job));
  CaptureImportSummary summary;
  summary.max_float32_error = r.max_rounding_error;
  static_cast<ImportSummary&>(summary) = std::move(r);
  return summary;
}

}  // namespace sedpack
