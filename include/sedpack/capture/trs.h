// SPDX-License-Identifier: Apache-2.0
// Inspector trace sets (`.trs`, Riscure/Keysight; also written by trsfile,
// Jlsca, Daredevil): what a header says and an open file's trace records.
// Needs no external library. The header wire format (tags, parser, writer)
// is private: capture/trs_internal.h.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sedpack/io/file_system.h"
#include "sedpack/status.h"
#include "sedpack/types.h"

namespace sedpack {

/// Parameter types of TRS v2 (trace set parameters and trace parameter definitions).
enum TrsParamType : std::uint8_t {
  kTrsParamByte = 0x01,    ///< uint8 values
  kTrsParamShort = 0x02,   ///< int16
  kTrsParamInt = 0x04,     ///< int32
  kTrsParamFloat = 0x14,   ///< float32
  kTrsParamLong = 0x08,    ///< int64
  kTrsParamDouble = 0x18,  ///< float64
  kTrsParamString = 0x20,  ///< UTF-8, count = bytes
  kTrsParamBool = 0x31,    ///< one byte each
};

/// The dtype of a parameter type (kStr for strings, kBool for bools);
/// InvalidArgument for an unknown type byte.
Result<DType> TrsParamDType(std::uint8_t type);
/// One named slice of every trace's data bytes.
struct TrsDataField {
  std::string name;             ///< "INPUT", "OUTPUT", "KEY", ...
  std::uint8_t type = kTrsParamByte;
  std::uint32_t count = 0;      ///< elements (bytes for strings)
  std::uint32_t offset = 0;     ///< byte offset inside the data
};

/// One trace set parameter (TRS v2): a global, typed value.
struct TrsSetParameter {
  std::string name;
  std::uint8_t type = kTrsParamByte;
  std::uint32_t count = 0;
  std::vector<std::byte> value;  ///< count * item size bytes, little-endian
};

/// What a TRS header says.
struct TrsHeader {
  int version = 1;                    ///< 2 if TRS_VERSION says so or v2 objects are present
  std::uint64_t number_traces = 0;
  std::uint64_t number_samples = 0;
  std::uint8_t sample_coding = 0x01;
  DType sample_dtype = DType::kInt8;
  std::uint64_t length_data = 0;
  std::uint64_t title_space = 0;
  std::string global_title, description, label_x, label_y;
  std::optional<std::int64_t> offset_x, trace_offset;
  std::optional<double> scale_x, scale_y;
  std::optional<std::uint64_t> logarithmic_scale;
  /// Legacy (v1) data layout objects, when present.
  std::optional<std::uint64_t> input_offset, input_length, output_offset, output_length, key_offset,
      key_length;
  std::vector<TrsSetParameter> set_parameters;
  /// v2 trace parameter definitions, in file order.
  std::vector<TrsDataField> parameter_definitions;
  /// Header objects not listed above (tag, value), in file order.
  std::vector<std::pair<std::uint8_t, std::vector<std::byte>>> other_objects;
  /// Unknown tags skipped and similar remarks, for the user.
  std::vector<std::string> notes;
  /// Offset of the first trace record.
  std::uint64_t header_bytes = 0;
  std::uint64_t sample_bytes = 0;     ///< number_samples * coding size
  std::uint64_t record_bytes = 0;     ///< title_space + length_data + sample_bytes

  /// The named slices of the data bytes: the v2 definitions, else the legacy
  /// input/output/key objects, else empty (the data stays one bytes value).
  std::vector<TrsDataField> DataFields() const;
};

/// How to treat a NUMBER_TRACES that disagrees with the file size.
enum class TrsCountPolicy {
  kStrict,          ///< refuse (the default)
  kCompleteRecords  ///< use the complete records the file holds
};

/// An open TRS file: the header, and records read with pread (64-bit offsets,
/// through the FileSystem interface), never more than asked for.
class TrsFile {
 public:
  /// Reads go through `fs` (nullptr: CurrentFileSystem()), which must outlive
  /// the TrsFile.
  static Result<std::unique_ptr<TrsFile>> Open(const std::string& path,
                                               TrsCountPolicy policy = TrsCountPolicy::kStrict,
                                               FileSystem* fs = nullptr);
  ~TrsFile();
  const TrsHeader& header() const { return header_; }
  const std::string& path() const { return path_; }
  /// Records in use (NUMBER_TRACES, or the complete records under kCompleteRecords).
  std::uint64_t traces() const { return traces_; }
  std::uint64_t file_size() const { return file_size_; }
  /// Read records [first, first + n) into `out` (n * record_bytes bytes).
  Status ReadRecords(std::uint64_t first, std::uint64_t n, std::vector<std::byte>* out) const;

 private:
  TrsFile() = default;
  std::string path_;
  FileSystem* fs_ = nullptr;
  int fd_ = -1;
  TrsHeader header_;
  std::uint64_t traces_ = 0;
  std::uint64_t file_size_ = 0;
};

}  // namespace sedpack
