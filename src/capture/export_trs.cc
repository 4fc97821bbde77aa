// SPDX-License-Identifier: Apache-2.0
// TRS v2 export: the split is counted from its shard lists (NUMBER_TRACES
// goes first in the header), then streamed example by example into records.
#include <fcntl.h>
#include <nlohmann/json.hpp>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <random>
#include <sstream>
#include <utility>

#include "sedpack/capture/export.h"
#include "capture/trs_internal.h"
#include "sedpack/dataset/reader.h"
#include "sedpack/io/file.h"
#include "sedpack/io/file_system.h"
#include "sedpack/value.h"

namespace sedpack {
namespace {

// How a value is converted on its way into a record. The *ToI32 steps are
// checked: a value outside int32 stops the export (TRS has no 64-bit sample
// coding), as an inexact float64 -> float32 step does unless rounding is asked.
enum class Widen {
  kNone,
  kU8ToI16,
  kU16ToI32,
  kI8ToI16,
  kU32ToI64,
  kF16ToF32,
  kF64ToF32,
  kBoolToI8,
  kU32ToI32,
  kI64ToI32,
  kU64ToI32,
};

struct Column {
  std::size_t attr = 0;
  Widen widen = Widen::kNone;
  std::uint64_t elements = 0;
  std::uint64_t out_bytes = 0;
  std::uint64_t offset = 0;  // in the record
};

// Parameter type and widening for an attribute dtype; nullopt if none fits.
std::optional<std::pair<std::uint8_t, Widen>> ParamTypeOf(DType d) {
  switch (d) {
    case DType::kUInt8: case DType::kBytes: return std::make_pair(std::uint8_t{kTrsParamByte}, Widen::kNone);
    case DType::kInt8: return std::make_pair(std::uint8_t{kTrsParamShort}, Widen::kI8ToI16);
    case DType::kInt16: return std::make_pair(std::uint8_t{kTrsParamShort}, Widen::kNone);
    case DType::kUInt16: return std::make_pair(std::uint8_t{kTrsParamInt}, Widen::kU16ToI32);
    case DType::kInt32: return std::make_pair(std::uint8_t{kTrsParamInt}, Widen::kNone);
    case DType::kUInt32: return std::make_pair(std::uint8_t{kTrsParamLong}, Widen::kU32ToI64);
    case DType::kInt64: case DType::kInt: return std::make_pair(std::uint8_t{kTrsParamLong}, Widen::kNone);
    case DType::kFloat16: return std::make_pair(std::uint8_t{kTrsParamFloat}, Widen::kF16ToF32);
    case DType::kFloat32: return std::make_pair(std::uint8_t{kTrsParamFloat}, Widen::kNone);
    case DType::kFloat64: return std::make_pair(std::uint8_t{kTrsParamDouble}, Widen::kNone);
    case DType::kBool: return std::make_pair(std::uint8_t{kTrsParamBool}, Widen::kNone);
    default: return std::nullopt;
  }
}

template <typename S, typename D>
void WidenCopy(const std::byte* in, std::uint64_t n, std::byte* out) {
  for (std::uint64_t i = 0; i < n; ++i) {
    S s;
    std::memcpy(&s, in + i * sizeof(S), sizeof(S));
    const D d = static_cast<D>(s);
    std::memcpy(out + i * sizeof(D), &d, sizeof(D));
  }
}

template <typename S>
bool NarrowToI32(const std::byte* in, std::uint64_t n, std::byte* out, std::uint64_t* bad) {
  for (std::uint64_t i = 0; i < n; ++i) {
    S s;
    std::memcpy(&s, in + i * sizeof(S), sizeof(S));
    if (!std::in_range<std::int32_t>(s)) {
      *bad = i;
      return false;
    }
    const auto d = static_cast<std::int32_t>(s);
    std::memcpy(out + i * 4, &d, 4);
  }
  return true;
}

// Copy one value into the record. False when a checked step cannot be exact
// (*bad: the element); float64 -> float32 errors are allowed with `round`
// (the largest goes to *max_err).
bool Put(const Column& c, const ValueView& v, bool round, std::byte* out, double* max_err, std::uint64_t* bad) {
  const std::byte* in = v.data.data();
  switch (c.widen) {
    case Widen::kNone: std::memcpy(out, in, c.out_bytes); return true;
    case Widen::kU8ToI16: WidenCopy<std::uint8_t, std::int16_t>(in, c.elements, out); return true;
    case Widen::kI8ToI16: WidenCopy<std::int8_t, std::int16_t>(in, c.elements, out); return true;
    case Widen::kU16ToI32: WidenCopy<std::uint16_t, std::int32_t>(in, c.elements, out); return true;
    case Widen::kU32ToI64: WidenCopy<std::uint32_t, std::int64_t>(in, c.elements, out); return true;
    case Widen::kBoolToI8:
      for (std::uint64_t i = 0; i < c.elements; ++i) out[i] = std::byte{in[i] != std::byte{0}};
      return true;
    case Widen::kU32ToI32: return NarrowToI32<std::uint32_t>(in, c.elements, out, bad);
    case Widen::kI64ToI32: return NarrowToI32<std::int64_t>(in, c.elements, out, bad);
    case Widen::kU64ToI32: return NarrowToI32<std::uint64_t>(in, c.elements, out, bad);
    case Widen::kF16ToF32:
      for (std::uint64_t i = 0; i < c.elements; ++i) {
        Float16 h;
        std::memcpy(&h.bits, in + 2 * i, 2);
        const float f = h.ToFloat();
        std::memcpy(out + 4 * i, &f, 4);
      }
      return true;
    case Widen::kF64ToF32:
      for (std::uint64_t i = 0; i < c.elements; ++i) {
        double d;
        std::memcpy(&d, in + 8 * i, 8);
        const float f = static_cast<float>(d);
        const double e = std::isnan(d) ? 0.0 : std::fabs(static_cast<double>(f) - d);
        if (e > 0 || (std::isinf(f) && !std::isinf(d))) {
          if (!round) {
            *bad = i;
            return false;
          }
          *max_err = std::max(*max_err, std::isinf(f) ? HUGE_VAL : e);
        }
        std::memcpy(out + 4 * i, &f, 4);
      }
      return true;
  }
  return true;
}

// Why element `k` of a sample value could not be stored exactly.
std::string InexactSample(const Column& c, const ValueView& v, std::uint64_t k) {
  const std::byte* at = v.data.data() + k * DTypeItemSize(v.dtype);
  auto read = [at]<typename T>(T) {
    T x;
    std::memcpy(&x, at, sizeof(T));
    return x;
  };
  switch (c.widen) {
    case Widen::kF64ToF32: {
      const double d = read(double{});
      const float f = static_cast<float>(d);
      const double e = std::isinf(f) ? HUGE_VAL : std::fabs(static_cast<double>(f) - d);
      std::ostringstream os;
      os.precision(17);
      os << "float64 sample " << d << " (element " << k << ") is not exactly a float32 (error " << e
         << "); allow rounding (--round-float64) to export it";
      return os.str();
    }
    case Widen::kU32ToI32:
      return "uint32 sample " + std::to_string(read(std::uint32_t{})) + " (element " + std::to_string(k) +
             ") does not fit the int32 TRS sample coding";
    case Widen::kI64ToI32:
      return std::string(DTypeName(v.dtype)) + " sample " + std::to_string(read(std::int64_t{})) + " (element " +
             std::to_string(k) + ") does not fit the int32 TRS sample coding";
    case Widen::kU64ToI32:
      return "uint64 sample " + std::to_string(read(std::uint64_t{})) + " (element " + std::to_string(k) +
             ") does not fit the int32 TRS sample coding";
    default:
      return "sample " + std::to_string(k) + " cannot be stored exactly";
  }
}

class OutFile {
 public:
  explicit OutFile(FileSystem& fs) : fs_(fs) {}
  ~OutFile() {
    if (fd_ >= 0) fs_.Close(fd_);
    if (!tmp_.empty()) fs_.Unlink(tmp_.c_str());
  }
  Status Open(const std::string& out) {
    out_ = out;
    std::random_device rd;
    const std::filesystem::path p(out);
    tmp_ = (p.has_parent_path() ? p.parent_path().string() + "/" : std::string()) + "." + p.filename().string() +
           ".part-" + std::to_string(rd());
    fd_ = fs_.Open(tmp_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd_ < 0) {
      tmp_.clear();
      return Status::IOError(out, ": cannot create: ", std::strerror(errno));
    }
    return Status::OK();
  }
  Status Write(std::span<const std::byte> b) {
    std::size_t done = 0;
    while (done < b.size()) {
      const long r = fs_.Write(fd_, b.data() + done, b.size() - done);
      if (r < 0 && errno == EINTR) continue;
      if (r < 0) return Status::IOError(out_, ": write failed: ", std::strerror(errno));
      done += static_cast<std::size_t>(r);
    }
    return Status::OK();
  }
  Status Commit() {
    if (fs_.Fsync(fd_) != 0) return Status::IOError(out_, ": fsync failed: ", std::strerror(errno));
    fs_.Close(fd_);
    fd_ = -1;
    if (fs_.RenameNoReplace(tmp_.c_str(), out_.c_str()) != 0) {
      const int e = errno;
      if (e == EEXIST) return Status::AlreadyExists(out_, " already exists; export-trs does not overwrite");
      return Status::IOError(out_, ": rename failed: ", std::strerror(e));
    }
    tmp_.clear();
    return Status::OK();
  }

 private:
  FileSystem& fs_;
  std::string out_, tmp_;
  int fd_ = -1;
};

struct SampleCoding {
  DType coding;
  Widen widen;
};

// The TRS sample coding (int8, int16, int32, float32) of an attribute dtype:
// those four as they are, bool as int8 0/1, uint8/uint16 and float16 widened
// exactly, the 32/64-bit integers checked into int32 and float64 checked into
// float32 (values that do not fit stop the export). None for str and bytes.
std::optional<SampleCoding> SampleCodingOf(DType d) {
  switch (d) {
    case DType::kInt8: case DType::kInt16: case DType::kInt32: case DType::kFloat32: return SampleCoding{d, Widen::kNone};
    case DType::kBool: return SampleCoding{DType::kInt8, Widen::kBoolToI8};
    case DType::kUInt8: return SampleCoding{DType::kInt16, Widen::kU8ToI16};
    case DType::kUInt16: return SampleCoding{DType::kInt32, Widen::kU16ToI32};
    case DType::kUInt32: return SampleCoding{DType::kInt32, Widen::kU32ToI32};
    case DType::kInt64: case DType::kInt: return SampleCoding{DType::kInt32, Widen::kI64ToI32};
    case DType::kUInt64: return SampleCoding{DType::kInt32, Widen::kU64ToI32};
    case DType::kFloat16: return SampleCoding{DType::kFloat32, Widen::kF16ToF32};
    case DType::kFloat64: return SampleCoding{DType::kFloat32, Widen::kF64ToF32};
    default: return std::nullopt;
  }
}

bool IsSampleCandidate(const AttributeSpec& a) { return a.shape.size() == 1 && SampleCodingOf(a.dtype).has_value(); }

std::optional<std::size_t> FindAttribute(const std::vector<AttributeSpec>& schema, const std::string& name) {
  for (std::size_t i = 0; i < schema.size(); ++i) {
    if (schema[i].name == name) return i;
  }
  return std::nullopt;
}

// What goes into each record: the samples, the title, the trace parameters
// packed in schema order (data_bytes of them), and the header describing it.
struct ExportPlan {
  Column samples;
  std::optional<std::size_t> title;
  std::vector<Column> params;
  std::uint64_t data_bytes = 0;
  DType sample_dtype = DType::kFloat32;  ///< the TRS coding of the samples
  TrsWriteLayout layout;
};

// The samples: the attribute asked for, else the largest 1-D numeric
// attribute (by element count; the first in schema order on a tie).
Status PlanSamples(const Dataset& dataset, const TrsExportOptions& options, ExportPlan* plan) {
  const std::vector<AttributeSpec>& schema = dataset.schema();
  std::optional<std::size_t> trace;
  if (!options.trace_attribute.empty()) {
    trace = FindAttribute(schema, options.trace_attribute);
    if (!trace) return Status::InvalidArgument("no attribute \"", options.trace_attribute, "\" in ", dataset.root());
  } else {
    for (std::size_t i = 0; i < schema.size(); ++i) {
      if (IsSampleCandidate(schema[i]) && (!trace || schema[i].shape[0] > schema[*trace].shape[0])) trace = i;
    }
    if (!trace) return Status::InvalidArgument(dataset.root(), ": no 1-D numeric attribute to export as samples (--trace NAME)");
  }
  const AttributeSpec& ta = schema[*trace];
  if (!IsSampleCandidate(ta)) {
    return Status::InvalidArgument("attribute \"", ta.name, "\" is ", DTypeName(ta.dtype), " ", ShapeToString(ta.shape),
                                   ": TRS samples are one 1-D numeric array a trace (int8, int16, int32 or float32 "
                                   "coded; other numeric dtypes are converted)");
  }
  const SampleCoding coding = *SampleCodingOf(ta.dtype);
  Column& tc = plan->samples;
  tc.attr = *trace;
  tc.elements = static_cast<std::uint64_t>(ta.shape[0]);
  tc.widen = coding.widen;
  tc.out_bytes = tc.elements * DTypeItemSize(coding.coding);
  plan->sample_dtype = coding.coding;
  TrsWriteLayout& layout = plan->layout;
  SEDPACK_ASSIGN_OR_RETURN(layout.sample_coding, TrsCodingOf(coding.coding));
  layout.number_samples = tc.elements;
  layout.description = dataset.info().metadata.description;
  const auto& described = dataset.info().dataset_structure.saved_data_description;
  try {
    const auto cm = nlohmann::json::parse(described[*trace].custom_metadata.text());
    if (cm.is_object() && cm.contains("scale_y") && cm["scale_y"].is_number()) layout.scale_y = cm["scale_y"].get<double>();
  } catch (const nlohmann::json::exception&) {
  }
  return Status::OK();
}

// The titles: the str attribute asked for, else "title" if it is a str.
Status PlanTitle(const std::vector<AttributeSpec>& schema, const TrsExportOptions& options, ExportPlan* plan) {
  if (!options.title_attribute.empty()) {
    plan->title = FindAttribute(schema, options.title_attribute);
    if (!plan->title || schema[*plan->title].dtype != DType::kStr) {
      return Status::InvalidArgument("--title ", options.title_attribute, ": not a str attribute");
    }
  } else if (auto t = FindAttribute(schema, "title"); t && schema[*t].dtype == DType::kStr) {
    plan->title = t;
  }
  if (plan->title) plan->layout.title_space = 255;
  return Status::OK();
}

// Every other attribute: a trace parameter where a fixed-size type fits,
// else a note saying it is left out.
Status PlanParameters(const std::vector<AttributeSpec>& schema, ExportPlan* plan, std::vector<std::string>* notes) {
  std::uint64_t offset = 0;
  for (std::size_t i = 0; i < schema.size(); ++i) {
    if (i == plan->samples.attr || (plan->title && i == *plan->title)) continue;
    const AttributeSpec& a = schema[i];
    auto type = ParamTypeOf(a.dtype);
    auto size = a.FixedByteSize();
    if (!type || a.IsVariableSize() || !size.ok()) {
      notes->push_back("attribute \"" + a.name + "\" (" + std::string(DTypeName(a.dtype)) + " " +
                       ShapeToString(a.shape) + ") has no fixed-size TRS parameter type: left out");
      continue;
    }
    Column c;
    c.attr = i;
    c.widen = type->second;
    c.elements = a.dtype == DType::kBytes ? *size : *size / DTypeItemSize(a.dtype);
    c.out_bytes = c.elements * TrsParamItemSize(type->first);
    c.offset = offset;
    // Only the trace data (the parameters) has 16-bit sizes; the samples do not.
    if (c.elements > 0xFFFF || offset + c.out_bytes > 0xFFFF) {
      return Status::InvalidArgument("attribute \"", a.name, "\" (", DTypeName(a.dtype), " ", ShapeToString(a.shape),
                                     ", ", c.out_bytes, " bytes) does not fit the trace data of a TRS record (at most "
                                     "65535 bytes and 65535 elements a parameter, ", offset,
                                     " bytes taken before it); only the samples (--trace) may be larger");
    }
    plan->layout.parameter_definitions.push_back({a.name, type->first, static_cast<std::uint32_t>(c.elements),
                                                  static_cast<std::uint32_t>(offset)});
    offset += c.out_bytes;
    plan->params.push_back(c);
  }
  plan->data_bytes = offset;
  return Status::OK();
}

// Stream the split's examples into records, in buffers of about 8 MiB.
Status WriteRecords(const std::shared_ptr<const Dataset>& dataset, Split split, const ExportPlan& plan,
                    const TrsExportOptions& options, OutFile& file, TrsExportSummary* summary) {
  const std::uint64_t title_space = plan.layout.title_space, data_bytes = plan.data_bytes;
  const Column& tc = plan.samples;
  const std::uint64_t record = title_space + data_bytes + tc.out_bytes;
  const std::uint64_t per_buffer = std::max<std::uint64_t>(1, (8ULL << 20) / record);
  std::vector<std::byte> buf;
  buf.reserve(per_buffer * record);
  ReadOptions ro;
  ro.prefetch_shards = options.prefetch_shards;
  SEDPACK_ASSIGN_OR_RETURN(auto reader, ExampleReader::Make(dataset, split, ro));
  for (;;) {
    SEDPACK_ASSIGN_OR_RETURN(std::optional<Example> ex, reader->Next());
    if (!ex) break;
    const std::size_t at = buf.size();
    buf.resize(at + record, std::byte{0});
    std::byte* r = buf.data() + at;
    if (plan.title) {
      const ValueView v = ex->Get(*plan.title);
      if (v.data.size() > title_space) {
        return Status::InvalidArgument("example ", summary->traces, ": title of ", v.data.size(),
                                       " bytes is longer than the 255 a TRS title holds");
      }
      std::memcpy(r, v.data.data(), v.data.size());
    }
    for (const Column& c : plan.params) {
      double unused = 0;
      std::uint64_t none = 0;
      Put(c, ex->Get(c.attr), true, r + title_space + c.offset, &unused, &none);
    }
    const ValueView samples = ex->Get(tc.attr);
    std::uint64_t bad = 0;
    if (!Put(tc, samples, options.round_float64, r + title_space + data_bytes, &summary->max_float32_error, &bad)) {
      return Status::InvalidArgument("example ", summary->traces, " of \"", dataset->schema()[tc.attr].name,
                                     "\": ", InexactSample(tc, samples, bad));
    }
    ++summary->traces;
    if (buf.size() >= per_buffer * record) {
      SEDPACK_RETURN_NOT_OK(file.Write(buf));
      summary->bytes += buf.size();
      buf.clear();
    }
  }
  SEDPACK_RETURN_NOT_OK(file.Write(buf));
  summary->bytes += buf.size();
  return Status::OK();
}

}  // namespace

Result<TrsExportSummary> ExportTrs(const std::shared_ptr<const Dataset>& dataset, Split split, const std::string& out,
                                   const TrsExportOptions& options) {
  TrsExportSummary summary;
  ExportPlan plan;
  SEDPACK_RETURN_NOT_OK(PlanSamples(*dataset, options, &plan));
  SEDPACK_RETURN_NOT_OK(PlanTitle(dataset->schema(), options, &plan));
  SEDPACK_RETURN_NOT_OK(PlanParameters(dataset->schema(), &plan, &summary.notes));
  TrsWriteLayout& layout = plan.layout;
  // Count first: NUMBER_TRACES leads the header.
  SEDPACK_ASSIGN_OR_RETURN(std::vector<ShardInfo> shards, ListShards(dataset, split, /*verify_hashes=*/true));
  for (const ShardInfo& s : shards) layout.number_traces += static_cast<std::uint64_t>(s.number_of_examples);
  const std::string split_name(SplitName(split));
  TrsSetParameter origin{"SEDPACK_SPLIT", kTrsParamString, static_cast<std::uint32_t>(split_name.size()), {}};
  for (char ch : split_name) origin.value.push_back(static_cast<std::byte>(ch));
  layout.set_parameters.push_back(std::move(origin));
  // The samples' own name, so that import-trs gives them back under it.
  const AttributeSpec& trace = dataset->schema()[plan.samples.attr];
  TrsSetParameter name{std::string(kTrsTraceNameParameter), kTrsParamString,
                       static_cast<std::uint32_t>(trace.name.size()), {}};
  for (char ch : trace.name) name.value.push_back(static_cast<std::byte>(ch));
  layout.set_parameters.push_back(std::move(name));
  summary.trace_attribute = trace.name;
  summary.trace_dtype = trace.dtype;
  summary.sample_dtype = plan.sample_dtype;
  summary.samples = plan.samples.elements;
  summary.trace_chosen = options.trace_attribute.empty();
  SEDPACK_ASSIGN_OR_RETURN(std::vector<std::byte> header, FormatTrsHeader(layout));

  OutFile file(FileSystemOr(options.file_system != nullptr ? options.file_system : dataset->file_system()));
  SEDPACK_RETURN_NOT_OK(file.Open(out));
  SEDPACK_RETURN_NOT_OK(file.Write(header));
  summary.bytes = header.size();
  SEDPACK_RETURN_NOT_OK(WriteRecords(dataset, split, plan, options, file, &summary));
  if (summary.traces != layout.number_traces) {
    return Status::Corruption(dataset->root(), ": split ", split_name, " lists ", layout.number_traces,
                              " examples but holds ", summary.traces);
  }
  SEDPACK_RETURN_NOT_OK(file.Commit());
  return summary;
}

}  // namespace sedpack
