// SPDX-License-Identifier: Apache-2.0
// The TRS header wire format, shared by the reader (trs.cc, trs_input.cc) and
// the writer (export_trs.cc); users see only the parsed TrsHeader (trs.h).
//
// Layout: a sequence of header objects [tag u8][length][value], little-endian,
// where length is one byte, or, when its bit 0x80 is set, the low 7 bits give
// how many little-endian length bytes follow. The header ends with the empty
// TRACE_BLOCK object (0x5F); then NUMBER_TRACES records of
// [title: TITLE_SPACE bytes][data: LENGTH_DATA bytes][samples: NUMBER_SAMPLES x coding size].
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "sedpack/capture/trs.h"
#include "sedpack/status.h"
#include "sedpack/types.h"

namespace sedpack {

/// Header tags this library interprets (the rest are kept as raw bytes).
enum TrsTag : std::uint8_t {
  kTrsNumberTraces = 0x41,
  kTrsNumberSamples = 0x42,
  kTrsSampleCoding = 0x43,
  kTrsLengthData = 0x44,
  kTrsTitleSpace = 0x45,
  kTrsTraceTitle = 0x46,
  kTrsDescription = 0x47,
  kTrsOffsetX = 0x48,
  kTrsLabelX = 0x49,
  kTrsLabelY = 0x4A,
  kTrsScaleX = 0x4B,
  kTrsScaleY = 0x4C,
  kTrsTraceOffset = 0x4D,
  kTrsLogScale = 0x4E,
  kTrsVersion = 0x4F,
  kTrsTraceBlock = 0x5F,
  kTrsInputOffset = 0x6B,
  kTrsOutputOffset = 0x6C,
  kTrsKeyOffset = 0x6D,
  kTrsInputLength = 0x6E,
  kTrsOutputLength = 0x6F,
  kTrsKeyLength = 0x70,
  kTrsTraceSetParameters = 0x76,
  kTrsTraceParameterDefinitions = 0x77,
};

/// Trace set parameter (a string) in which export-trs records the name of the
/// attribute the samples came from; the importer suggests that name for them.
inline constexpr std::string_view kTrsTraceNameParameter = "SEDPACK_TRACE";

/// Bytes per element of a parameter type (1 for strings).
std::size_t TrsParamItemSize(std::uint8_t type);

/// Parse the header at the start of `prefix`. `more_follows`: the file goes
/// on past `prefix`; then a header object that runs past its end gives
/// ResourceExhausted (read more and parse again) instead of Corruption.
/// Corruption names `where` and the offset: a truncated object, a length past
/// the end, a missing NUMBER_SAMPLES or SAMPLE_CODING, an unknown coding,
/// sizes that overflow, definitions that pass LENGTH_DATA.
Result<TrsHeader> ParseTrsHeader(std::span<const std::byte> prefix, bool more_follows,
                                 const std::string& where);

/// Description of a TRS v2 file to write.
struct TrsWriteLayout {
  std::uint64_t number_traces = 0;
  std::uint64_t number_samples = 0;
  std::uint8_t sample_coding = 0x14;
  std::uint64_t title_space = 0;
  std::string description;
  std::optional<double> scale_y;
  std::vector<TrsDataField> parameter_definitions;  ///< offsets packed in order
  std::vector<TrsSetParameter> set_parameters;
};

/// The coding of a sample dtype (int8/int16/int32/float32); InvalidArgument otherwise.
Result<std::uint8_t> TrsCodingOf(DType dtype);

/// Serialize the header (ending with TRACE_BLOCK) of a TRS v2 file.
Result<std::vector<std::byte>> FormatTrsHeader(const TrsWriteLayout& layout);

}  // namespace sedpack
