// SPDX-License-Identifier: Apache-2.0
// TRS header parsing, record reads and the v2 header writer. Every length in
// a header is untrusted: each is checked against what is left before it is
// used, and sizes are multiplied with overflow checks.
#include "capture/trs_internal.h"

#include <fcntl.h>

#include <cerrno>
#include <cstring>
#include <limits>

#include "sedpack/io/file.h"
#include "sedpack/io/file_system.h"

namespace sedpack {
namespace {

// No real capture has a header object this large; a bigger length is a
// corrupt file, not a reason to allocate.
constexpr std::uint64_t kMaxObjectBytes = 1ULL << 30;

std::uint64_t LoadLe(const std::byte* p, std::size_t n) {
  std::uint64_t v = 0;
  for (std::size_t i = 0; i < n; ++i) v |= static_cast<std::uint64_t>(p[i]) << (8 * i);
  return v;
}

std::string Hex(std::uint8_t b) {
  static const char* d = "0123456789ABCDEF";
  return std::string("0x") + d[b >> 4] + d[b & 15];
}

bool MulOk(std::uint64_t a, std::uint64_t b, std::uint64_t* out) {
  if (a != 0 && b > std::numeric_limits<std::uint64_t>::max() / a) return false;
  *out = a * b;
  return true;
}

// A little-endian reader over a parameter map's bytes.
class Cursor {
 public:
  Cursor(std::span<const std::byte> b, std::string where) : b_(b), where_(std::move(where)) {}
  Status Need(std::size_t n) const {
    if (b_.size() - pos_ < n) {
      return Status::Corruption(where_, ": ends after ", pos_, " of its ", b_.size(), " bytes (", n,
                                " more needed)");
    }
    return Status::OK();
  }
  Result<std::uint64_t> U(std::size_t n) {
    SEDPACK_RETURN_NOT_OK(Need(n));
    const std::uint64_t v = LoadLe(b_.data() + pos_, n);
    pos_ += n;
    return v;
  }
  Result<std::span<const std::byte>> Bytes(std::size_t n) {
    SEDPACK_RETURN_NOT_OK(Need(n));
    auto s = b_.subspan(pos_, n);
    pos_ += n;
    return s;
  }
  Result<std::string> Name() {
    SEDPACK_ASSIGN_OR_RETURN(std::uint64_t n, U(2));
    SEDPACK_ASSIGN_OR_RETURN(auto s, Bytes(n));
    return std::string(reinterpret_cast<const char*>(s.data()), s.size());
  }
  bool done() const { return pos_ == b_.size(); }
  std::size_t pos() const { return pos_; }
  const std::string& where() const { return where_; }

 private:
  std::span<const std::byte> b_;
  std::string where_;
  std::size_t pos_ = 0;
};

Status ParseSetParameters(std::span<const std::byte> v, const std::string& where, TrsHeader* h) {
  Cursor c(v, where + ": TRACE_SET_PARAMETERS");
  SEDPACK_ASSIGN_OR_RETURN(std::uint64_t n, c.U(2));
  for (std::uint64_t i = 0; i < n; ++i) {
    TrsSetParameter p;
    SEDPACK_ASSIGN_OR_RETURN(p.name, c.Name());
    SEDPACK_ASSIGN_OR_RETURN(std::uint64_t type, c.U(1));
    p.type = static_cast<std::uint8_t>(type);
    if (!TrsParamDType(p.type).ok()) {
      return Status::Corruption(c.where(), ": parameter \"", p.name, "\" has unknown type ", Hex(p.type));
    }
    SEDPACK_ASSIGN_OR_RETURN(std::uint64_t count, c.U(2));
    p.count = static_cast<std::uint32_t>(count);
    SEDPACK_ASSIGN_OR_RETURN(auto bytes, c.Bytes(count * TrsParamItemSize(p.type)));
    p.value.assign(bytes.begin(), bytes.end());
    h->set_parameters.push_back(std::move(p));
  }
  if (!c.done()) h->notes.push_back(c.where() + ": " + std::to_string(v.size() - c.pos()) + " trailing bytes ignored");
  return Status::OK();
}

Status ParseDefinitions(std::span<const std::byte> v, const std::string& where, TrsHeader* h) {
  Cursor c(v, where + ": TRACE_PARAMETER_DEFINITIONS");
  SEDPACK_ASSIGN_OR_RETURN(std::uint64_t n, c.U(2));
  for (std::uint64_t i = 0; i < n; ++i) {
    TrsDataField f;
    SEDPACK_ASSIGN_OR_RETURN(f.name, c.Name());
    SEDPACK_ASSIGN_OR_RETURN(std::uint64_t type, c.U(1));
    f.type = static_cast<std::uint8_t>(type);
    if (!TrsParamDType(f.type).ok()) {
      return Status::Corruption(c.where(), ": parameter \"", f.name, "\" has unknown type ", Hex(f.type));
    }
    SEDPACK_ASSIGN_OR_RETURN(std::uint64_t count, c.U(2));
    SEDPACK_ASSIGN_OR_RETURN(std::uint64_t offset, c.U(2));
    f.count = static_cast<std::uint32_t>(count);
    f.offset = static_cast<std::uint32_t>(offset);
    h->parameter_definitions.push_back(std::move(f));
  }
  if (!c.done()) h->notes.push_back(c.where() + ": " + std::to_string(v.size() - c.pos()) + " trailing bytes ignored");
  return Status::OK();
}

std::string Text(std::span<const std::byte> v) {
  return std::string(reinterpret_cast<const char*>(v.data()), v.size());
}

Result<std::uint64_t> IntValue(std::uint8_t tag, std::span<const std::byte> v, const std::string& where,
                               std::size_t max_len) {
  if (v.empty() || v.size() > max_len) {
    return Status::Corruption(where, ": header object ", Hex(tag), " has ", v.size(),
                              " bytes; an integer of 1 to ", max_len, " bytes was expected");
  }
  return LoadLe(v.data(), v.size());
}

Result<double> FloatValue(std::uint8_t tag, std::span<const std::byte> v, const std::string& where) {
  if (v.size() != 4) {
    return Status::Corruption(where, ": header object ", Hex(tag), " has ", v.size(), " bytes; a float32 was expected");
  }
  float f;
  std::memcpy(&f, v.data(), 4);
  return static_cast<double>(f);
}

Status CheckFieldsFit(const TrsHeader& h, const std::vector<TrsDataField>& fields, const std::string& where) {
  for (const TrsDataField& f : fields) {
    const std::uint64_t end = static_cast<std::uint64_t>(f.offset) + f.count * TrsParamItemSize(f.type);
    if (end > h.length_data) {
      return Status::Corruption(where, ": trace parameter \"", f.name, "\" covers data bytes [", f.offset, ", ",
                                end, ") but LENGTH_DATA is ", h.length_data);
    }
  }
  return Status::OK();
}

}  // namespace

Result<DType> TrsParamDType(std::uint8_t type) {
  switch (type) {
    case kTrsParamByte: return DType::kUInt8;
    case kTrsParamShort: return DType::kInt16;
    case kTrsParamInt: return DType::kInt32;
    case kTrsParamFloat: return DType::kFloat32;
    case kTrsParamLong: return DType::kInt64;
    case kTrsParamDouble: return DType::kFloat64;
    case kTrsParamString: return DType::kStr;
    case kTrsParamBool: return DType::kBool;
    default: return Status::InvalidArgument("unknown TRS parameter type ", Hex(type));
  }
}

std::size_t TrsParamItemSize(std::uint8_t type) {
  switch (type) {
    case kTrsParamShort: return 2;
    case kTrsParamInt: case kTrsParamFloat: return 4;
    case kTrsParamLong: case kTrsParamDouble: return 8;
    default: return 1;
  }
}

std::vector<TrsDataField> TrsHeader::DataFields() const {
  if (!parameter_definitions.empty()) return parameter_definitions;
  std::vector<TrsDataField> out;
  auto legacy = [&](const char* name, const std::optional<std::uint64_t>& off, const std::optional<std::uint64_t>& len) {
    if (len && *len > 0) {
      out.push_back({name, kTrsParamByte, static_cast<std::uint32_t>(*len),
                     static_cast<std::uint32_t>(off.value_or(0))});
    }
  };
  legacy("INPUT", input_offset, input_length);
  legacy("OUTPUT", output_offset, output_length);
  legacy("KEY", key_offset, key_length);
  return out;
}

namespace {

// Which of the objects that decide how the header is read have been seen.
struct SeenTags {
  bool number_samples = false, sample_coding = false, number_traces = false, version = false;
};

// One header object: its tag, the byte it starts at and its value.
struct HeaderObject {
  std::uint8_t tag = 0;
  std::size_t at = 0;
  std::span<const std::byte> value;
};

// A header object that runs past the end of `b`: read more if the file goes
// on, else the header is truncated.
Status Truncated(std::span<const std::byte> b, bool more_follows, const std::string& where, std::size_t at,
                 std::uint64_t need, std::string_view what) {
  if (more_follows) return Status::ResourceExhausted(where, ": header continues past byte ", b.size());
  return Status::Corruption(where, ": truncated header: ", what, " at byte ", at, " needs ", need,
                            " bytes, the file ends at ", b.size());
}

// The object at *pos: [tag u8][length][value], every length checked against
// the bytes there are before the value is taken; *pos moves past it.
Result<HeaderObject> NextHeaderObject(std::span<const std::byte> b, bool more_follows, const std::string& where,
                                      std::size_t* pos) {
  HeaderObject obj;
  obj.at = *pos;
  const std::size_t at = obj.at;
  if (b.size() - *pos < 2) return Truncated(b, more_follows, where, at, 2, "a header object");
  const auto tag = static_cast<std::uint8_t>(b[*pos]);
  obj.tag = tag;
  std::uint64_t len = static_cast<std::uint8_t>(b[*pos + 1]);
  *pos += 2;
  if (len & 0x80) {
    const std::size_t nbytes = len & 0x7F;
    if (nbytes == 0 || nbytes > 8) {
      return Status::Corruption(where, ": header object ", Hex(tag), " at byte ", at, " has a length of ",
                                nbytes, " bytes (1 to 8 allowed)");
    }
    if (b.size() - *pos < nbytes) return Truncated(b, more_follows, where, at, nbytes, "the length of object " + Hex(tag));
    len = LoadLe(b.data() + *pos, nbytes);
    *pos += nbytes;
  }
  if (len > kMaxObjectBytes) {
    return Status::Corruption(where, ": header object ", Hex(tag), " at byte ", at, " claims ", len,
                              " bytes, more than a header can hold");
  }
  if (b.size() - *pos < len) return Truncated(b, more_follows, where, at, len, "the value of object " + Hex(tag));
  obj.value = b.subspan(*pos, len);
  *pos += len;
  return obj;
}

// Take one object's value into `h`; true for the TRACE_BLOCK that ends the header.
Result<bool> ApplyHeaderObject(const HeaderObject& obj, const std::string& where, TrsHeader& h, SeenTags& seen) {
  const std::uint8_t tag = obj.tag;
  const std::span<const std::byte> v = obj.value;
  const std::size_t len = v.size();
  switch (tag) {
    case kTrsTraceBlock:
      if (len != 0) h.notes.push_back(where + ": TRACE_BLOCK carries " + std::to_string(len) + " bytes, ignored");
      return true;
    case kTrsNumberTraces: {
      SEDPACK_ASSIGN_OR_RETURN(h.number_traces, IntValue(tag, v, where, 8));
      seen.number_traces = true;
      break;
    }
    case kTrsNumberSamples: {
      SEDPACK_ASSIGN_OR_RETURN(h.number_samples, IntValue(tag, v, where, 8));
      seen.number_samples = true;
      break;
    }
    case kTrsSampleCoding: {
      SEDPACK_ASSIGN_OR_RETURN(std::uint64_t c, IntValue(tag, v, where, 1));
      h.sample_coding = static_cast<std::uint8_t>(c);
      seen.sample_coding = true;
      break;
    }
    case kTrsLengthData: {
      SEDPACK_ASSIGN_OR_RETURN(h.length_data, IntValue(tag, v, where, 8));
      break;
    }
    case kTrsTitleSpace: {
      SEDPACK_ASSIGN_OR_RETURN(h.title_space, IntValue(tag, v, where, 8));
      break;
    }
    case kTrsTraceTitle: h.global_title = Text(v); break;
    case kTrsDescription: h.description = Text(v); break;
    case kTrsLabelX: h.label_x = Text(v); break;
    case kTrsLabelY: h.label_y = Text(v); break;
    case kTrsOffsetX: case kTrsTraceOffset: {
      SEDPACK_ASSIGN_OR_RETURN(std::uint64_t x, IntValue(tag, v, where, 8));
      // Stored as a signed little-endian integer of the object's width.
      std::int64_t s = static_cast<std::int64_t>(x);
      if (v.size() < 8 && (x >> (8 * v.size() - 1)) & 1) s = static_cast<std::int64_t>(x | (~0ULL << (8 * v.size())));
      (tag == kTrsOffsetX ? h.offset_x : h.trace_offset) = s;
      break;
    }
    case kTrsScaleX: {
      SEDPACK_ASSIGN_OR_RETURN(double d, FloatValue(tag, v, where));
      h.scale_x = d;
      break;
    }
    case kTrsScaleY: {
      SEDPACK_ASSIGN_OR_RETURN(double d, FloatValue(tag, v, where));
      h.scale_y = d;
      break;
    }
    case kTrsLogScale: {
      SEDPACK_ASSIGN_OR_RETURN(std::uint64_t x, IntValue(tag, v, where, 8));
      h.logarithmic_scale = x;
      break;
    }
    case kTrsVersion: {
      SEDPACK_ASSIGN_OR_RETURN(std::uint64_t x, IntValue(tag, v, where, 8));
      h.version = static_cast<int>(std::min<std::uint64_t>(x, 1000));
      seen.version = true;
      break;
    }
    case kTrsInputOffset: case kTrsOutputOffset: case kTrsKeyOffset:
    case kTrsInputLength: case kTrsOutputLength: case kTrsKeyLength: {
      SEDPACK_ASSIGN_OR_RETURN(std::uint64_t x, IntValue(tag, v, where, 8));
      std::optional<std::uint64_t>* slot[] = {&h.input_offset, &h.output_offset, &h.key_offset,
                                              &h.input_length, &h.output_length, &h.key_length};
      *slot[tag - kTrsInputOffset] = x;
      break;
    }
    case kTrsTraceSetParameters:
      SEDPACK_RETURN_NOT_OK(ParseSetParameters(v, where, &h));
      if (!seen.version) h.version = 2;
      break;
    case kTrsTraceParameterDefinitions:
      SEDPACK_RETURN_NOT_OK(ParseDefinitions(v, where, &h));
      if (!seen.version) h.version = 2;
      break;
    default:
      // 0x55..0x5C and 0x60..0x75 are acquisition and display settings
      // (scope range, clock, XY scan, ...): kept raw. Anything else is unknown.
      if (!((tag >= 0x55 && tag <= 0x5C) || (tag >= 0x60 && tag <= 0x75))) {
        h.notes.push_back(where + ": unknown header tag " + Hex(tag) + " (" + std::to_string(len) +
                          " bytes) skipped");
      }
      h.other_objects.emplace_back(tag, std::vector<std::byte>(v.begin(), v.end()));
      break;
  }
  return false;
}

// The checks that need the whole header: the coding, the record size, the
// data fields inside LENGTH_DATA.
Status FinishTrsHeader(const SeenTags& seen, const std::string& where, TrsHeader& h) {
  if (!seen.number_samples) return Status::Corruption(where, ": the header has no NUMBER_SAMPLES (0x42)");
  if (!seen.sample_coding) return Status::Corruption(where, ": the header has no SAMPLE_CODING (0x43)");
  if (!seen.number_traces) h.notes.push_back(where + ": the header has no NUMBER_TRACES (0x41); the file size decides");
  std::size_t item = 0;
  switch (h.sample_coding) {
    case 0x01: h.sample_dtype = DType::kInt8; item = 1; break;
    case 0x02: h.sample_dtype = DType::kInt16; item = 2; break;
    case 0x04: h.sample_dtype = DType::kInt32; item = 4; break;
    case 0x14: h.sample_dtype = DType::kFloat32; item = 4; break;
    default:
      return Status::Corruption(where, ": unknown SAMPLE_CODING ", Hex(h.sample_coding),
                                " (0x01 int8, 0x02 int16, 0x04 int32, 0x14 float32)");
  }
  if (!MulOk(h.number_samples, item, &h.sample_bytes) || h.sample_bytes > (1ULL << 40) ||
      h.title_space > (1ULL << 32) || h.length_data > (1ULL << 32)) {
    return Status::Corruption(where, ": NUMBER_SAMPLES ", h.number_samples, " x ", item,
                              " bytes, TITLE_SPACE ", h.title_space, ", LENGTH_DATA ", h.length_data,
                              ": a trace record this large is not a capture");
  }
  h.record_bytes = h.title_space + h.length_data + h.sample_bytes;
  if (h.record_bytes == 0) return Status::Corruption(where, ": trace records of 0 bytes (no samples, no data)");
  SEDPACK_RETURN_NOT_OK(CheckFieldsFit(h, h.DataFields(), where));
  if (!h.parameter_definitions.empty() &&
      (h.input_length || h.output_length || h.key_length)) {
    h.notes.push_back(where + ": legacy input/output/key offsets ignored in favour of the trace parameter definitions");
  }
  if (!seen.number_traces) h.number_traces = std::numeric_limits<std::uint64_t>::max();
  return Status::OK();
}

}  // namespace

Result<TrsHeader> ParseTrsHeader(std::span<const std::byte> b, bool more_follows, const std::string& where) {
  TrsHeader h;
  SeenTags seen;
  std::size_t pos = 0;
  for (;;) {
    SEDPACK_ASSIGN_OR_RETURN(const HeaderObject obj, NextHeaderObject(b, more_follows, where, &pos));
    SEDPACK_ASSIGN_OR_RETURN(const bool end, ApplyHeaderObject(obj, where, h, seen));
    if (end) break;
  }
  h.header_bytes = pos;
  SEDPACK_RETURN_NOT_OK(FinishTrsHeader(seen, where, h));
  return h;
}

TrsFile::~TrsFile() {
  if (fd_ >= 0) fs_->Close(fd_);
}

Result<std::unique_ptr<TrsFile>> TrsFile::Open(const std::string& path, TrsCountPolicy policy, FileSystem* fs) {
  std::unique_ptr<TrsFile> f(new TrsFile());
  f->path_ = path;
  f->fs_ = &FileSystemOr(fs);
  SEDPACK_ASSIGN_OR_RETURN(f->file_size_, FileSize(path, f->fs_));
  f->fd_ = f->fs_->Open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (f->fd_ < 0) return Status::IOError(path, ": cannot open: ", std::strerror(errno));
  // Headers are small; read more only when one is not (long descriptions,
  // large parameter maps).
  std::vector<std::byte> buf;
  std::uint64_t want = 64 << 10;
  for (;;) {
    const std::uint64_t n = std::min<std::uint64_t>(want, f->file_size_);
    buf.resize(n);
    std::uint64_t got = 0;
    while (got < n) {
      const long r = f->fs_->Pread(f->fd_, buf.data() + got, n - got, static_cast<std::int64_t>(got));
      if (r < 0 && errno == EINTR) continue;
      if (r < 0) return Status::IOError(path, ": read failed: ", std::strerror(errno));
      if (r == 0) return Status::IOError(path, ": the file shrank while it was read");
      got += static_cast<std::uint64_t>(r);
    }
    auto h = ParseTrsHeader(buf, n < f->file_size_, path);
    if (h.ok()) {
      f->header_ = std::move(h).value();
      break;
    }
    if (h.status().code() != StatusCode::kResourceExhausted || want >= (2ULL << 30)) return h.status();
    want *= 4;
  }
  const TrsHeader& hd = f->header_;
  const std::uint64_t body = f->file_size_ - hd.header_bytes;
  const std::uint64_t complete = body / hd.record_bytes;
  const bool known = hd.number_traces != std::numeric_limits<std::uint64_t>::max();
  if (known && complete == hd.number_traces && body % hd.record_bytes == 0) {
    f->traces_ = hd.number_traces;
  } else if (policy == TrsCountPolicy::kCompleteRecords || !known) {
    if (!known && body % hd.record_bytes != 0 && policy == TrsCountPolicy::kStrict) {
      return Status::Corruption(path, ": no NUMBER_TRACES and ", body % hd.record_bytes,
                                " bytes of an incomplete record at the end (records of ", hd.record_bytes,
                                " bytes); --complete-records takes the ", complete, " complete records");
    }
    f->traces_ = complete;
    if (known) {
      f->header_.notes.push_back(path + ": NUMBER_TRACES says " + std::to_string(hd.number_traces) + ", the file holds " +
                                 std::to_string(complete) + " complete records: importing those");
    }
  } else {
    std::uint64_t need = 0;
    const bool fits = MulOk(hd.number_traces, hd.record_bytes, &need);
    return Status::Corruption(path, ": NUMBER_TRACES says ", hd.number_traces, " traces of ", hd.record_bytes,
                              " bytes (", fits ? std::to_string(need) : std::string("more than 2^64"),
                              " bytes after the ", hd.header_bytes, "-byte header), but the file holds ", body,
                              " bytes: ", complete, " complete records",
                              body % hd.record_bytes ? " and a partial one" : "",
                              " (an interrupted capture?); --complete-records imports the complete records only");
  }
  return f;
}

Status TrsFile::ReadRecords(std::uint64_t first, std::uint64_t n, std::vector<std::byte>* out) const {
  if (first > traces_ || n > traces_ - first) {
    return Status::InvalidArgument(path_, ": records [", first, ", ", first + n, ") asked for, the file has ", traces_);
  }
  const std::uint64_t bytes = n * header_.record_bytes;
  out->resize(bytes);
  const std::uint64_t base = header_.header_bytes + first * header_.record_bytes;
  std::uint64_t got = 0;
  while (got < bytes) {
    const std::size_t chunk = static_cast<std::size_t>(std::min<std::uint64_t>(bytes - got, 1ULL << 30));
    const long r = fs_->Pread(fd_, out->data() + got, chunk, static_cast<std::int64_t>(base + got));
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return Status::IOError(path_, ": read at offset ", base + got, " failed: ", std::strerror(errno));
    if (r == 0) return Status::IOError(path_, ": the file ends at ", base + got, " (it shrank while being read)");
    got += static_cast<std::uint64_t>(r);
  }
  return Status::OK();
}

Result<std::uint8_t> TrsCodingOf(DType dtype) {
  switch (dtype) {
    case DType::kInt8: return std::uint8_t{0x01};
    case DType::kInt16: return std::uint8_t{0x02};
    case DType::kInt32: return std::uint8_t{0x04};
    case DType::kFloat32: return std::uint8_t{0x14};
    default:
      return Status::InvalidArgument("TRS samples are int8, int16, int32 or float32, not ", DTypeName(dtype));
  }
}

namespace {

void PutLe(std::vector<std::byte>* out, std::uint64_t v, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) out->push_back(static_cast<std::byte>((v >> (8 * i)) & 0xFF));
}

void PutObject(std::vector<std::byte>* out, std::uint8_t tag, std::span<const std::byte> v) {
  out->push_back(static_cast<std::byte>(tag));
  if (v.size() < 0x80) {
    out->push_back(static_cast<std::byte>(v.size()));
  } else {
    out->push_back(static_cast<std::byte>(0x84));
    PutLe(out, v.size(), 4);
  }
  out->insert(out->end(), v.begin(), v.end());
}

void PutInt(std::vector<std::byte>* out, std::uint8_t tag, std::uint64_t v, std::size_t n) {
  std::vector<std::byte> b;
  PutLe(&b, v, n);
  PutObject(out, tag, b);
}

}  // namespace

Result<std::vector<std::byte>> FormatTrsHeader(const TrsWriteLayout& l) {
  std::vector<std::byte> out;
  if (l.number_traces > 0xFFFFFFFFULL) return Status::InvalidArgument("TRS holds at most 2^32-1 traces");
  if (l.number_samples > 0xFFFFFFFFULL) return Status::InvalidArgument("TRS holds at most 2^32-1 samples a trace");
  if (l.title_space > 255) return Status::InvalidArgument("TRS titles take at most 255 bytes");
  std::uint64_t length_data = 0;
  for (const TrsDataField& f : l.parameter_definitions) {
    if (f.count > 0xFFFF) return Status::InvalidArgument("trace parameter \"", f.name, "\": more than 65535 elements");
    length_data = std::max<std::uint64_t>(length_data, f.offset + f.count * TrsParamItemSize(f.type));
  }
  if (length_data > 0xFFFF) return Status::InvalidArgument("TRS trace data holds at most 65535 bytes");
  PutInt(&out, kTrsNumberTraces, l.number_traces, 4);
  PutInt(&out, kTrsNumberSamples, l.number_samples, 4);
  PutInt(&out, kTrsSampleCoding, l.sample_coding, 1);
  PutInt(&out, kTrsLengthData, length_data, 2);
  if (l.title_space) PutInt(&out, kTrsTitleSpace, l.title_space, 1);
  if (!l.description.empty()) PutObject(&out, kTrsDescription, std::as_bytes(std::span(l.description)));
  if (l.scale_y) {
    const float f = static_cast<float>(*l.scale_y);
    PutObject(&out, kTrsScaleY, std::as_bytes(std::span(&f, 1)));
  }
  PutInt(&out, kTrsVersion, 2, 1);
  std::vector<std::byte> sp;
  PutLe(&sp, l.set_parameters.size(), 2);
  for (const TrsSetParameter& p : l.set_parameters) {
    PutLe(&sp, p.name.size(), 2);
    for (char c : p.name) sp.push_back(static_cast<std::byte>(c));
    sp.push_back(static_cast<std::byte>(p.type));
    PutLe(&sp, p.count, 2);
    sp.insert(sp.end(), p.value.begin(), p.value.end());
  }
  PutObject(&out, kTrsTraceSetParameters, sp);
  std::vector<std::byte> defs;
  PutLe(&defs, l.parameter_definitions.size(), 2);
  for (const TrsDataField& f : l.parameter_definitions) {
    PutLe(&defs, f.name.size(), 2);
    for (char c : f.name) defs.push_back(static_cast<std::byte>(c));
    defs.push_back(static_cast<std::byte>(f.type));
    PutLe(&defs, f.count, 2);
    PutLe(&defs, f.offset, 2);
  }
  PutObject(&out, kTrsTraceParameterDefinitions, defs);
  out.push_back(static_cast<std::byte>(kTrsTraceBlock));
  out.push_back(std::byte{0});
  return out;
}

}  // namespace sedpack
