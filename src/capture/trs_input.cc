// SPDX-License-Identifier: Apache-2.0
// A TRS file as a CaptureInput: one pread per block of records, scattered
// into the requested fields.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstring>

#include "sedpack/capture/sources.h"
#include "capture/trs_internal.h"

namespace sedpack {
namespace {

using Json = nlohmann::ordered_json;

std::string HexTag(std::uint8_t b) {
  static const char* d = "0123456789ABCDEF";
  return std::string("0x") + d[b >> 4] + d[b & 15];
}

template <typename T>
T Load(const std::byte* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

Json Number(double d) { return std::isfinite(d) ? Json(d) : Json(nullptr); }

Json ParamValue(const TrsSetParameter& p) {
  if (p.type == kTrsParamString) return std::string(reinterpret_cast<const char*>(p.value.data()), p.value.size());
  Json list = Json::array();
  const std::size_t item = TrsParamItemSize(p.type);
  for (std::size_t i = 0; i < p.count && (i + 1) * item <= p.value.size(); ++i) {
    const std::byte* e = p.value.data() + i * item;
    switch (p.type) {
      case kTrsParamByte: list.push_back(Load<std::uint8_t>(e)); break;
      case kTrsParamShort: list.push_back(Load<std::int16_t>(e)); break;
      case kTrsParamInt: list.push_back(Load<std::int32_t>(e)); break;
      case kTrsParamLong: list.push_back(Load<std::int64_t>(e)); break;
      case kTrsParamFloat: list.push_back(Number(Load<float>(e))); break;
      case kTrsParamDouble: list.push_back(Number(Load<double>(e))); break;
      case kTrsParamBool: list.push_back(Load<std::uint8_t>(e) != 0); break;
      default: break;
    }
  }
  return list;
}

std::string Hex(const std::vector<std::byte>& v) {
  static const char* d = "0123456789abcdef";
  std::string s;
  for (std::byte b : v) {
    s += d[static_cast<int>(b) >> 4];
    s += d[static_cast<int>(b) & 15];
  }
  return s;
}

// The header as stored in the dataset's custom_metadata under "trs".
Json HeaderObject(const TrsHeader& h) {
  Json j = Json::object();
  j["version"] = h.version;
  j["number_samples"] = h.number_samples;
  j["sample_coding"] = std::string(DTypeName(h.sample_dtype));
  j["length_data"] = h.length_data;
  j["title_space"] = h.title_space;
  if (!h.global_title.empty()) j["global_title"] = h.global_title;
  if (!h.description.empty()) j["description"] = h.description;
  if (!h.label_x.empty()) j["label_x"] = h.label_x;
  if (!h.label_y.empty()) j["label_y"] = h.label_y;
  if (h.scale_x) j["scale_x"] = Number(*h.scale_x);
  if (h.scale_y) j["scale_y"] = Number(*h.scale_y);
  if (h.offset_x) j["offset_x"] = *h.offset_x;
  if (h.trace_offset) j["trace_offset"] = *h.trace_offset;
  if (h.logarithmic_scale) j["logarithmic_scale"] = *h.logarithmic_scale;
  if (!h.set_parameters.empty()) {
    Json p = Json::object();
    for (const TrsSetParameter& s : h.set_parameters) p[s.name] = ParamValue(s);
    j["trace_set_parameters"] = p;
  }
  if (!h.other_objects.empty()) {
    Json o = Json::object();
    for (const auto& [tag, v] : h.other_objects) o[HexTag(tag)] = Hex(v);
    j["other_header_objects"] = o;
  }
  return j;
}

class TrsInput final : public CaptureInput {
 public:
  explicit TrsInput(std::unique_ptr<TrsFile> file) : file_(std::move(file)) {
    const TrsHeader& h = file_->header();
    if (h.title_space > 0) {
      Add("title", DType::kStr, {}, 0, h.title_space, "title");
    }
    const std::vector<TrsDataField> named = h.DataFields();
    if (h.length_data > 0) {
      Add("data", DType::kBytes, {static_cast<std::int64_t>(h.length_data)}, h.title_space, h.length_data,
          named.empty() ? "data" : "");
    }
    for (const TrsDataField& f : named) {
      const DType d = TrsParamDType(f.type).value();
      const std::uint64_t bytes = f.count * TrsParamItemSize(f.type);
      if (d == DType::kStr) {
        Add("data." + f.name, DType::kStr, {}, h.title_space + f.offset, bytes, f.name);
      } else {
        Add("data." + f.name, d, {static_cast<std::int64_t>(f.count)}, h.title_space + f.offset, bytes, f.name);
      }
    }
    Json cm = Json::object();
    if (h.scale_y) cm["scale_y"] = Number(*h.scale_y);
    if (h.scale_x) cm["scale_x"] = Number(*h.scale_x);
    if (h.offset_x) cm["offset_x"] = *h.offset_x;
    if (!h.label_x.empty()) cm["label_x"] = h.label_x;
    if (!h.label_y.empty()) cm["label_y"] = h.label_y;
    if (h.number_samples > 0) {
      Add("samples", h.sample_dtype, {static_cast<std::int64_t>(h.number_samples)}, h.title_space + h.length_data,
          h.sample_bytes, SamplesName(h));
      fields_.back().custom_metadata = cm.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    }
  }

  // "trace", or the name export-trs recorded for the samples when no other
  // field is suggested under it.
  std::string SamplesName(const TrsHeader& h) const {
    for (const TrsSetParameter& p : h.set_parameters) {
      if (p.name != kTrsTraceNameParameter || p.type != kTrsParamString) continue;
      std::string name(reinterpret_cast<const char*>(p.value.data()), p.value.size());
      // Header bytes are untrusted: only plain names are taken over.
      const bool plain = !name.empty() && name.size() <= 255 && std::all_of(name.begin(), name.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.';
      });
      if (!plain) break;
      for (const CaptureField& f : fields_) {
        if (f.suggested_attribute == name) return "trace";
      }
      return name;
    }
    return "trace";
  }

  std::string Describe() const override { return file_->path(); }
  const std::vector<CaptureField>& fields() const override { return fields_; }
  std::uint64_t rows() const override { return file_->traces(); }
  std::uint64_t read_row_bytes() const override { return file_->header().record_bytes; }
  // Header text need not be UTF-8 (Inspector writes the system code page):
  // invalid bytes become U+FFFD instead of an exception.
  std::string dataset_custom_metadata() const override {
    Json j = Json::object();
    j["trs"] = HeaderObject(file_->header());
    return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  }

  Status Read(std::uint64_t first, std::uint64_t n, std::span<const std::size_t> which,
              std::vector<CaptureRows>* out) override {
    SEDPACK_RETURN_NOT_OK(file_->ReadRecords(first, n, &block_));
    out->resize(which.size());
    for (std::size_t k = 0; k < which.size(); ++k) {
      (*out)[k] = CaptureRows{block_.data() + offsets_[which[k]], file_->header().record_bytes};
    }
    return Status::OK();
  }

 private:
  void Add(std::string name, DType d, Shape shape, std::uint64_t offset, std::uint64_t bytes, std::string attr) {
    CaptureField f;
    f.name = std::move(name);
    f.dtype = d;
    f.shape = std::move(shape);
    f.row_bytes = bytes;
    f.suggested_attribute = std::move(attr);
    fields_.push_back(std::move(f));
    offsets_.push_back(offset);
  }

  std::unique_ptr<TrsFile> file_;
  std::vector<CaptureField> fields_;
  std::vector<std::uint64_t> offsets_;
  std::vector<std::byte> block_;
};

}  // namespace

Result<std::unique_ptr<CaptureInput>> OpenTrsInput(const std::string& path, TrsCountPolicy policy,
                                                   std::vector<std::string>* notes, FileSystem* fs) {
  SEDPACK_ASSIGN_OR_RETURN(std::unique_ptr<TrsFile> file, TrsFile::Open(path, policy, fs));
  if (notes) notes->insert(notes->end(), file->header().notes.begin(), file->header().notes.end());
  return std::unique_ptr<CaptureInput>(new TrsInput(std::move(file)));
}

std::string TrsHeaderJson(const TrsHeader& h, std::uint64_t traces_in_file) {
  Json j = HeaderObject(h);
  j["number_traces"] = h.number_traces == UINT64_MAX ? Json(nullptr) : Json(h.number_traces);
  j["traces_in_file"] = traces_in_file;
  j["header_bytes"] = h.header_bytes;
  j["record_bytes"] = h.record_bytes;
  Json defs = Json::array();
  for (const TrsDataField& f : h.DataFields()) {
    defs.push_back({{"name", f.name},
                    {"dtype", std::string(DTypeName(TrsParamDType(f.type).value()))},
                    {"count", f.count},
                    {"offset", f.offset}});
  }
  j["data_fields"] = defs;
  j["notes"] = h.notes;
  return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace sedpack
