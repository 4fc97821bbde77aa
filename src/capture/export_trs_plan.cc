// SPDX-License-Identifier: Apache-2.0
// The plan of a TRS export (export_trs_internal.h): the samples, titles and
// trace parameters of a record chosen from the schema, with the conversion of
// each value into its TRS coding.
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstring>
#include <sstream>
#include <utility>

#include "capture/export_trs_internal.h"

namespace sedpack::trs_export_internal {
namespace {

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

}  // namespace

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

}  // namespace sedpack::trs_export_internal
