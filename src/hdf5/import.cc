// SPDX-License-Identifier: Apache-2.0
// `sedpack import-hdf5`: plan (every rank checks every input), then each
// split of each file is an ImportSource of the shared engine
// (import/import_internal.h) that reads blocks of whole chunks and converts
// them exactly. See import.h for the contract.
#include "sedpack/hdf5/import.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <memory>

#include <nlohmann/json.hpp>

#include "hdf5/convert_internal.h"
#include "hdf5/h5_internal.h"
#include "import/import_internal.h"

namespace sedpack {
namespace {

using h5::BlockReader;
using h5::ByteRows;
using h5::ReadAs;
using h5::ResolvedSource;

using import_internal::ImportColumn;
using import_internal::ImportSplit;

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
  std::size_t primary = 0;  // attribute with the most bytes per row: its chunks set the cuts
};

struct Plan {
  std::vector<std::string> inputs;
  std::vector<h5::Handle> files;
  std::vector<SplitPlan> splits;
};

bool IsByteDType(DType d) { return d == DType::kStr || d == DType::kBytes; }

// A numeric source read as the bytes of a bytes attribute (a uint8 array).
bool NumbersAsBytes(const ResolvedSource& r, const AttributeSpec& attr) {
  return attr.dtype == DType::kBytes && !r.elem.is_bytes() && r.type.size == 1 && r.type.kind != h5::NumKind::kFloat;
}

// Whether the values of `r` can fill `attr`: numbers go to numeric and bool
// attributes element for element; strings, opaque data and byte sequences
// (one a row) to str and bytes; 1-byte integers to bytes, a row's elements
// as its bytes.
Status CheckSourceFits(const ResolvedSource& r, const AttributeSpec& attr) {
  const std::string target = "attribute \"" + attr.name + "\" (" + std::string(DTypeName(attr.dtype)) + " of shape " +
                             ShapeText(attr.shape) + ")";
  if (r.elem.is_bytes()) {
    if (!IsByteDType(attr.dtype)) {
      return Status::InvalidArgument(r.Where(), ": ", r.elem.Name(), " values cannot fill ", target,
                                     "; map them to a str or bytes attribute");
    }
    if (r.row_elements != 1) {
      return Status::InvalidArgument(r.Where(), ": each row holds ", ShapeText(r.row_shape), " ", r.elem.Name(),
                                     " values, but ", target, " takes one a row");
    }
    const bool fixed_elem = r.elem.kind == h5::ElemKind::kFixedString || r.elem.kind == h5::ElemKind::kOpaque;
    if (!attr.IsVariableSize() && fixed_elem && static_cast<std::int64_t>(r.elem.size) != attr.shape[0]) {
      return Status::InvalidArgument(r.Where(), ": ", r.elem.Name(), " values cannot fill ", target,
                                     "; give it shape [", r.elem.size, "] or [] (any length)");
    }
    return Status::OK();
  }
  if (attr.dtype == DType::kStr) {
    return Status::InvalidArgument(r.Where(), ": ", r.elem.Name(), " values cannot fill ", target,
                                   "; a str comes from an HDF5 string (or opaque data, byte sequences)");
  }
  if (attr.dtype == DType::kBytes && !NumbersAsBytes(r, attr)) {
    return Status::InvalidArgument(r.Where(), ": ", r.elem.Name(), " values cannot fill ", target,
                                   "; bytes come from strings, opaque data, byte sequences or 1-byte integers");
  }
  const std::uint64_t want = attr.IsVariableSize() ? r.row_elements : Elements(attr.shape);
  if (r.row_elements != want) {
    return Status::InvalidArgument(r.Where(), ": each row holds ", ShapeText(r.row_shape), " = ", r.row_elements,
                                   " values, but attribute \"", attr.name, "\" has shape ", ShapeText(attr.shape),
                                   " = ", want, " values");
  }
  return Status::OK();
}

// Bytes a row of `attr` takes in the read buffers.
std::uint64_t SourceRowBytes(const ResolvedSource& r, const AttributeSpec& attr) {
  if (r.elem.is_bytes()) return 2 * r.bytes_per_row + 8;  // HDF5's copy, ours and the offset
  if (attr.dtype == DType::kBytes) return r.row_elements;
  return Elements(attr.shape) * DTypeItemSize(attr.dtype);
}

Result<Plan> MakePlan(const Hdf5ImportConfig& config, const std::vector<std::string>& inputs, FileSystem* fs) {
  Plan plan;
  plan.inputs = inputs;
  if (inputs.empty()) return Status::InvalidArgument("no input HDF5 file given");
  for (const std::string& path : inputs) {
    SEDPACK_ASSIGN_OR_RETURN(h5::Handle f, h5::OpenFile(path, fs));
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
        SEDPACK_RETURN_NOT_OK(CheckSourceFits(r, attr));
        attr_src.push_back(std::move(r));
      }
      for (const auto& [key, src] : m.shard_custom_metadata) {
        SEDPACK_ASSIGN_OR_RETURN(ResolvedSource r, h5::Resolve(plan.files[f].get(), file, src));
        if (r.elem.is_bytes() && (r.row_elements != 1 || src.dtype)) {
          return Status::InvalidArgument(r.Where(), ": shard_custom_metadata \"", key, "\" from ",
                                         r.elem.Name(), src.dtype ? " takes no dtype" : " needs one string a row");
        }
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
      sp.rows.push_back(range);
      sp.attr_src.push_back(std::move(attr_src));
      sp.meta_src.push_back(std::move(meta_src));
    }
    for (std::size_t a = 0; a < schema.size(); ++a) {
      const std::uint64_t b = SourceRowBytes(sp.attr_src.front()[a], schema[a]);
      if (b > best_row_bytes) {
        best_row_bytes = b;
        sp.primary = a;
      }
    }
    plan.splits.push_back(std::move(sp));
  }
  return plan;
}

// Half the budget for shards, half for read blocks less 1/8 for HDF5's chunk caches.
import_internal::ImportSizing ChooseSizing(const Hdf5ImportConfig& config, const Plan& plan) {
  const std::uint64_t budget = config.params.memory_budget_bytes;
  std::uint64_t row_bytes = 1;
  for (const SplitPlan& sp : plan.splits) {
    std::uint64_t b = 0;
    for (std::size_t a = 0; a < sp.attrs.size(); ++a) {
      if (IsByteDType(sp.attrs[a].dtype)) {
        std::uint64_t most = 0;
        for (const auto& per_file : sp.attr_src) most = std::max(most, SourceRowBytes(per_file[a], sp.attrs[a]));
        b += most;
        continue;
      }
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
      for (const ResolvedSource& r : sp.meta_src.front()) b += r.row_elements * 16 + 2 * r.bytes_per_row;
    }
    row_bytes = std::max(row_bytes, b);
  }
  return import_internal::ChooseImportSizing(budget, config.params.threads, row_bytes, budget / 8);
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

std::uint64_t DestRowBytes(const AttributeSpec& a) { return Elements(a.shape) * DTypeItemSize(a.dtype); }

// Bounds for the values of one block: a quarter of the budget each (the
// sizing planned far less; this stops a file whose values are much longer
// than the first rows let expect).
h5::ByteRowRules RulesFor(const AttributeSpec& a, std::uint64_t budget, bool strip) {
  h5::ByteRowRules rules;
  rules.max_block_bytes = std::max<std::uint64_t>(budget / 4, 1 << 20);
  rules.max_value_bytes = rules.max_block_bytes;
  rules.strip_padding = strip;
  rules.exact_bytes = a.IsVariableSize() ? 0 : Elements(a.shape);
  rules.utf8 = a.dtype == DType::kStr;
  return rules;
}

// One input file as the rows of one split: a BlockReader per source, values
// converted exactly to the attribute's dtype, shard custom_metadata as JSON.
class SplitSource : public import_internal::ImportSource {
 public:
  SplitSource(const SplitPlan& sp, std::size_t f, hid_t file, const std::string& name, std::uint64_t budget)
      : sp_(sp), f_(f), file_(file), name_(name), budget_(budget) {}

  std::string Describe() const override { return name_; }
  const std::vector<AttributeSpec>& fields() const override { return sp_.attrs; }
  std::uint64_t rows() const override { return sp_.attr_src[f_].front().rows; }
  std::uint64_t preferred_block_rows() const override { return sp_.attr_src[f_][sp_.primary].chunk_rows; }

  void Release() override {
    readers_.clear();
    meta_readers_.clear();
    raw_.clear();
    converted_.clear();
    meta_raw_.clear();
    meta_scratch_.clear();
    bytes_.clear();
    meta_bytes_.clear();
  }

  Status ReadBlock(std::uint64_t r, std::uint64_t n, std::vector<ImportColumn>* columns) override {
    if (readers_.empty()) SEDPACK_RETURN_NOT_OK(OpenReaders());
    block_first_ = r;
    const std::size_t na = sp_.attrs.size();
    columns->resize(na);
    for (std::size_t a = 0; a < na; ++a) {
      const AttributeSpec& attr = sp_.attrs[a];
      const ResolvedSource& src = sp_.attr_src[f_][a];
      if (src.elem.is_bytes()) {
        // A fixed-size bytes attribute keeps a fixed string's padding.
        const h5::ByteRowRules rules = RulesFor(attr, budget_, attr.IsVariableSize() || attr.dtype == DType::kStr);
        SEDPACK_RETURN_NOT_OK(readers_[a].ReadBytes(r, n, rules, &bytes_[a]));
        (*columns)[a] = ImportColumn{bytes_[a].data.data(), 0, 0, false, bytes_[a].offsets.data()};
        continue;
      }
      SEDPACK_RETURN_NOT_OK(readers_[a].Read(r, n, &raw_[a]));
      if (NumbersAsBytes(src, attr)) {
        (*columns)[a] = ImportColumn{raw_[a].data(), src.row_elements, src.row_elements, false};
        continue;
      }
      const std::uint64_t row_bytes = DestRowBytes(sp_.attrs[a]);
      if (readers_[a].read_as() != ReadAs::kDirect) {
        converted_[a].resize(n * row_bytes);
        h5::InexactValue bad;
        if (!h5::ConvertExact(readers_[a].read_as(), raw_[a].data(), n * sp_.attr_src[f_][a].row_elements,
                              sp_.attrs[a].dtype, converted_[a].data(), &bad)) {
          return Status::InvalidArgument(InexactMessage(sp_.attr_src[f_][a], r, bad, sp_.attrs[a].dtype,
                                                        "attribute \"" + sp_.attrs[a].name + "\""));
        }
      }
      const std::vector<std::byte>& buf = readers_[a].read_as() == ReadAs::kDirect ? raw_[a] : converted_[a];
      (*columns)[a] = ImportColumn{buf.data(), row_bytes, row_bytes, false};
    }
    for (std::size_t k = 0; k < sp_.meta_keys.size(); ++k) {
      if (sp_.meta_src[f_][k].elem.is_bytes()) {
        const AttributeSpec text{sp_.meta_keys[k], DType::kStr, {}};
        SEDPACK_RETURN_NOT_OK(meta_readers_[k].ReadBytes(r, n, RulesFor(text, budget_, true), &meta_bytes_[k]));
        continue;
      }
      SEDPACK_RETURN_NOT_OK(meta_readers_[k].Read(r, n, &meta_raw_[k]));
      const auto& dtype = sp_.mapping->shard_custom_metadata[k].second.dtype;
      if (dtype) {
        meta_scratch_[k].resize(n * sp_.meta_src[f_][k].row_elements * 8);
        h5::InexactValue bad;
        if (!h5::ConvertExact(meta_readers_[k].read_as(), meta_raw_[k].data(), n * sp_.meta_src[f_][k].row_elements,
                              *dtype, meta_scratch_[k].data(), &bad)) {
          return Status::InvalidArgument(InexactMessage(sp_.meta_src[f_][k], r, bad, *dtype,
                                                        "shard_custom_metadata \"" + sp_.meta_keys[k] + "\""));
        }
      }
    }
    return Status::OK();
  }

  Result<const JsonValue*> RowMetadata(std::uint64_t i) override {
    if (sp_.meta_keys.empty()) return nullptr;
    meta_text_ = "{";
    for (std::size_t k = 0; k < sp_.meta_keys.size(); ++k) {
      const ResolvedSource& src = sp_.meta_src[f_][k];
      const auto& dtype = sp_.mapping->shard_custom_metadata[k].second.dtype;
      if (k) meta_text_ += ",";
      meta_text_ += "\"" + sp_.meta_keys[k] + "\":";
      if (src.elem.is_bytes()) {
        const ByteRows& b = meta_bytes_[k];
        const std::string value(reinterpret_cast<const char*>(b.data.data()) + b.offsets[i],
                                b.offsets[i + 1] - b.offsets[i]);
        meta_text_ += nlohmann::json(value).dump();
        continue;
      }
      const bool scalar = src.row_shape.empty();
      if (!scalar) meta_text_ += "[";
      for (std::uint64_t e = 0; e < src.row_elements; ++e) {
        if (e) meta_text_ += ",";
        const std::size_t idx = i * src.row_elements + e;
        if (meta_readers_[k].read_as() == ReadAs::kFloat64 && !dtype) {
          double d;
          std::memcpy(&d, meta_raw_[k].data() + idx * 8, 8);
          if (!std::isfinite(d)) {
            return Status::InvalidArgument(src.Where(), ": row ", block_first_ + i,
                                           ": NaN or infinity cannot be JSON custom_metadata");
          }
        }
        AppendMetaValue(meta_readers_[k].read_as(), meta_raw_[k].data(), dtype, idx, &meta_text_);
      }
      if (!scalar) meta_text_ += "]";
    }
    meta_text_ += "}";
    if (meta_text_ != meta_json_text_) {
      auto parsed = JsonValue::Parse(meta_text_);
      if (!parsed.ok()) return parsed.status().WithPrefix("shard_custom_metadata: ");
      meta_json_ = std::move(parsed).value();
      meta_json_text_ = meta_text_;
    }
    return &meta_json_;
  }

 private:
  Status OpenReaders() {
    const std::uint64_t cache_total = budget_ / 8;
    const std::size_t na = sp_.attrs.size(), nm = sp_.meta_keys.size();
    for (std::size_t a = 0; a < na; ++a) {
      const ResolvedSource& src = sp_.attr_src[f_][a];
      const std::uint64_t band = src.chunk_bytes * src.chunks_per_row_band;
      const std::uint64_t cache = std::min(band, a == sp_.primary ? cache_total / 2 : cache_total / (2 * na));
      // A uint8 (or int8) array read as bytes keeps its own type.
      const DType dest = NumbersAsBytes(src, sp_.attrs[a]) ? h5::NaturalDType(src.type).ValueOr(DType::kUInt8)
                                                           : sp_.attrs[a].dtype;
      SEDPACK_ASSIGN_OR_RETURN(BlockReader r, BlockReader::Open(file_, src, dest,
                                                                std::max<std::uint64_t>(cache, 1 << 20)));
      readers_.push_back(std::move(r));
    }
    for (std::size_t k = 0; k < nm; ++k) {
      SEDPACK_ASSIGN_OR_RETURN(BlockReader r, BlockReader::Open(file_, sp_.meta_src[f_][k], DType::kFloat64, 1 << 20,
                                                                /*wide_only=*/true));
      meta_readers_.push_back(std::move(r));
    }
    raw_.resize(na);
    converted_.resize(na);
    bytes_.resize(na);
    meta_bytes_.resize(nm);
    meta_raw_.resize(nm);
    meta_scratch_.resize(nm);
    return Status::OK();
  }

  const SplitPlan& sp_;
  std::size_t f_;
  hid_t file_;
  std::string name_;
  std::uint64_t budget_;
  std::vector<BlockReader> readers_, meta_readers_;
  std::vector<std::vector<std::byte>> raw_, converted_, meta_raw_, meta_scratch_;
  std::vector<ByteRows> bytes_, meta_bytes_;
  std::uint64_t block_first_ = 0;
  std::string meta_text_, meta_json_text_;
  JsonValue meta_json_;
};

std::vector<ImportSplit> ToImportSplits(const Plan& plan, const Hdf5ImportConfig& config) {
  std::vector<ImportSplit> splits;
  for (const SplitPlan& sp : plan.splits) {
    ImportSplit& out = splits.emplace_back();
    out.split = sp.split;
    out.rows = sp.rows;
    for (std::size_t a = 0; a < sp.attrs.size(); ++a) {
      out.row_bytes += IsByteDType(sp.attrs[a].dtype) ? sp.attr_src.front()[a].bytes_per_row : DestRowBytes(sp.attrs[a]);
    }
    for (std::size_t f = 0; f < plan.inputs.size(); ++f) {
      out.inputs.push_back(std::make_unique<SplitSource>(sp, f, plan.files[f].get(), plan.inputs[f],
                                                         config.params.memory_budget_bytes));
    }
  }
  return splits;
}

}  // namespace

Result<Hdf5ImportSummary> ImportHdf5(Comm& comm, const Hdf5ImportConfig& config,
                                     const std::vector<std::string>& inputs, const std::string& out,
                                     const Hdf5ImportOptions& options) {
  import_internal::ImportJob job;
  // Check everything before anything is created.
  Status planned = ValidateHdf5ImportConfig(config);
  Result<Plan> plan = planned.ok() ? MakePlan(config, inputs, options.file_system) : Result<Plan>(planned);
  std::vector<ImportSplit> splits;
  if (plan.ok()) {
    splits = ToImportSplits(*plan, config);
    job.sizing = ChooseSizing(config, *plan);
  }
  job.metadata = config.metadata;
  job.structure = config.structure;
  job.level = config.params.level;
  job.job_id = options.job_id;
  job.progress = options.progress;
  job.who = "import-hdf5";
  job.file_system = options.file_system;
  if (options.resumable || options.restart) {
    job.resume_parameters = {{"command", "import-hdf5"}, {"config", options.config_digest}};
    for (auto& p : import_internal::InputParameters(inputs, options.file_system)) job.resume_parameters.push_back(p);
    job.restart = options.restart;
  }
  SEDPACK_ASSIGN_OR_RETURN(import_internal::ImportResult r,
                           import_internal::Import(comm, plan.status(), splits, out, job));
  return Hdf5ImportSummary(std::move(r));
}

}  // namespace sedpack
