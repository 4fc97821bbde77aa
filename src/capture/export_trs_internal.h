// SPDX-License-Identifier: Apache-2.0
// The plan of a TRS export, made in export_trs_plan.cc and followed by
// export_trs.cc: which attribute gives the samples, which the titles, which
// become trace parameters, and how each value is converted into a record.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "capture/trs_internal.h"
#include "sedpack/capture/export.h"
#include "sedpack/dataset/dataset.h"
#include "sedpack/status.h"
#include "sedpack/types.h"
#include "sedpack/value.h"

namespace sedpack::trs_export_internal {

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
Status PlanSamples(const Dataset& dataset, const TrsExportOptions& options, ExportPlan* plan);

// The titles: the str attribute asked for, else "title" if it is a str.
Status PlanTitle(const std::vector<AttributeSpec>& schema, const TrsExportOptions& options, ExportPlan* plan);

// Every other attribute: a trace parameter where a fixed-size type fits,
// else a note saying it is left out.
Status PlanParameters(const std::vector<AttributeSpec>& schema, ExportPlan* plan, std::vector<std::string>* notes);

// Why element `k` of a sample value could not be stored exactly.
std::string InexactSample(const Column& c, const ValueView& v, std::uint64_t k);

}  // namespace sedpack::trs_export_internal
