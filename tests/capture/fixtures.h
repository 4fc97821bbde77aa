// SPDX-License-Identifier: Apache-2.0
// Test fixtures for the capture importers, written byte by byte here (not with
// the library's own writer): TRS files of every coding, .npy arrays and
// ChipWhisperer project folders.
#pragma once

#include <cstdint>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

namespace sedpack::testing {

inline void PutLe(std::vector<std::uint8_t>* b, std::uint64_t v, int n) {
  for (int i = 0; i < n; ++i) b->push_back(static_cast<std::uint8_t>(v >> (8 * i)));
}

/// One TLV; `long_form` forces the 0x80 length form (with 4 length bytes).
inline void Tlv(std::vector<std::uint8_t>* b, std::uint8_t tag, const std::vector<std::uint8_t>& v,
                bool long_form = false) {
  b->push_back(tag);
  if (v.size() < 0x80 && !long_form) {
    b->push_back(static_cast<std::uint8_t>(v.size()));
  } else {
    b->push_back(0x84);
    PutLe(b, v.size(), 4);
  }
  b->insert(b->end(), v.begin(), v.end());
}

inline std::vector<std::uint8_t> Le(std::uint64_t v, int n) {
  std::vector<std::uint8_t> b;
  PutLe(&b, v, n);
  return b;
}

inline std::vector<std::uint8_t> Str(const std::string& s) { return {s.begin(), s.end()}; }

/// A deterministic sample/byte value for (seed, row, column).
inline std::int64_t Pattern(std::uint64_t seed, std::uint64_t row, std::uint64_t col) {
  std::uint64_t x = seed * 0x9E3779B97F4A7C15ULL + row * 0xBF58476D1CE4E5B9ULL + col * 0x94D049BB133111EBULL;
  x ^= x >> 29;
  x *= 0xBF58476D1CE4E5B9ULL;
  x ^= x >> 32;
  return static_cast<std::int64_t>(x);
}

struct TrsSpec {
  std::uint64_t seed = 1;
  std::uint64_t traces = 10;
  std::uint64_t header_traces = UINT64_MAX;  ///< NUMBER_TRACES to write (default: traces)
  std::uint32_t samples = 50;
  std::uint8_t coding = 0x14;
  std::uint8_t title_space = 0;
  std::uint16_t data = 0;
  bool v2 = false;          ///< trace parameter definitions INPUT (uint8 x16), OUTPUT, COUNTER (int32)
  bool legacy = false;      ///< legacy input/output offsets (v1)
  bool long_description = false;
  float scale_y = 0;        ///< 0: none
  bool unknown_tag = false;
  std::uint64_t extra_bytes = 0;  ///< garbage after the last record
};

inline std::size_t CodingSize(std::uint8_t c) { return c == 0x01 ? 1 : c == 0x02 ? 2 : 4; }

/// Value of sample `s` of trace `t` as the fixture stores it (as a double).
inline double SampleValue(const TrsSpec& spec, std::uint64_t t, std::uint64_t s) {
  const std::int64_t p = Pattern(spec.seed, t, s);
  switch (spec.coding) {
    case 0x01: return static_cast<std::int8_t>(p);
    case 0x02: return static_cast<std::int16_t>(p);
    case 0x04: return static_cast<std::int32_t>(p);
    default: return static_cast<float>(static_cast<std::int32_t>(p % 100000)) / 64.0f;
  }
}

inline std::uint8_t DataByte(const TrsSpec& spec, std::uint64_t t, std::uint64_t i) {
  return static_cast<std::uint8_t>(Pattern(spec.seed + 1000, t, i));
}

inline std::string TitleOf(std::uint64_t t) { return "trace " + std::to_string(t); }

inline std::vector<std::uint8_t> TrsHeaderBytes(const TrsSpec& s) {
  std::vector<std::uint8_t> h;
  Tlv(&h, 0x41, Le(s.header_traces == UINT64_MAX ? s.traces : s.header_traces, 4));
  Tlv(&h, 0x42, Le(s.samples, 4));
  Tlv(&h, 0x43, Le(s.coding, 1));
  if (s.data) Tlv(&h, 0x44, Le(s.data, 2));
  if (s.title_space) Tlv(&h, 0x45, Le(s.title_space, 1));
  Tlv(&h, 0x46, Str("fixture"));
  Tlv(&h, 0x47, Str(s.long_description ? std::string(300, 'd') : "short"), s.long_description);
  if (s.scale_y != 0) {
    std::vector<std::uint8_t> f(4);
    std::memcpy(f.data(), &s.scale_y, 4);
    Tlv(&h, 0x4C, f);
  }
  if (s.unknown_tag) Tlv(&h, 0xE0, Str("xyz"));
  if (s.legacy) {
    Tlv(&h, 0x6B, Le(0, 4));
    Tlv(&h, 0x6E, Le(16, 4));
    Tlv(&h, 0x6C, Le(16, 4));
    Tlv(&h, 0x6F, Le(static_cast<std::uint64_t>(s.data) - 16, 4));
  }
  if (s.v2) {
    Tlv(&h, 0x4F, Le(2, 1));
    // Trace set parameters: "NAME" string, "GAIN" double[1].
    std::vector<std::uint8_t> p;
    PutLe(&p, 2, 2);
    PutLe(&p, 4, 2);
    for (char c : std::string("NAME")) p.push_back(static_cast<std::uint8_t>(c));
    p.push_back(0x20);
    PutLe(&p, 3, 2);
    for (char c : std::string("aes")) p.push_back(static_cast<std::uint8_t>(c));
    PutLe(&p, 4, 2);
    for (char c : std::string("GAIN")) p.push_back(static_cast<std::uint8_t>(c));
    p.push_back(0x18);
    PutLe(&p, 1, 2);
    const double g = 2.5;
    std::uint8_t gb[8];
    std::memcpy(gb, &g, 8);
    p.insert(p.end(), gb, gb + 8);
    Tlv(&h, 0x76, p);
    // Definitions: INPUT uint8 x16 @0, OUTPUT uint8 x16 @16, COUNTER int32 x1 @32 (data = 36).
    std::vector<std::uint8_t> d;
    PutLe(&d, 3, 2);
    auto def = [&](const std::string& name, std::uint8_t type, std::uint16_t n, std::uint16_t off) {
      PutLe(&d, name.size(), 2);
      for (char c : name) d.push_back(static_cast<std::uint8_t>(c));
      d.push_back(type);
      PutLe(&d, n, 2);
      PutLe(&d, off, 2);
    };
    def("INPUT", 0x01, 16, 0);
    def("OUTPUT", 0x01, 16, 16);
    def("COUNTER", 0x04, 1, 32);
    Tlv(&h, 0x77, d);
  }
  h.push_back(0x5F);
  h.push_back(0x00);
  return h;
}

/// Data bytes of trace t: for v2 the COUNTER int32 at 32 is t.
inline std::vector<std::uint8_t> DataOf(const TrsSpec& s, std::uint64_t t) {
  std::vector<std::uint8_t> d(s.data);
  for (std::size_t i = 0; i < d.size(); ++i) d[i] = DataByte(s, t, i);
  if (s.v2) {
    const std::int32_t c = static_cast<std::int32_t>(t) - 5;
    std::memcpy(d.data() + 32, &c, 4);
  }
  return d;
}

inline void WriteTrs(const std::string& path, const TrsSpec& s) {
  std::vector<std::uint8_t> b = TrsHeaderBytes(s);
  for (std::uint64_t t = 0; t < s.traces; ++t) {
    if (s.title_space) {
      std::string title = TitleOf(t);
      title.resize(s.title_space, '\0');
      b.insert(b.end(), title.begin(), title.end());
    }
    const auto d = DataOf(s, t);
    b.insert(b.end(), d.begin(), d.end());
    for (std::uint32_t i = 0; i < s.samples; ++i) {
      const double v = SampleValue(s, t, i);
      std::uint8_t raw[4];
      switch (s.coding) {
        case 0x01: { const auto x = static_cast<std::int8_t>(v); std::memcpy(raw, &x, 1); break; }
        case 0x02: { const auto x = static_cast<std::int16_t>(v); std::memcpy(raw, &x, 2); break; }
        case 0x04: { const auto x = static_cast<std::int32_t>(v); std::memcpy(raw, &x, 4); break; }
        default: { const auto x = static_cast<float>(v); std::memcpy(raw, &x, 4); break; }
      }
      b.insert(b.end(), raw, raw + CodingSize(s.coding));
    }
  }
  b.insert(b.end(), s.extra_bytes, 0xAB);
  std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
}

/// A .npy file (version 1.0) of `descr` and `shape` holding `data`.
inline void WriteNpy(const std::string& path, const std::string& descr, const std::vector<std::uint64_t>& shape,
                     const std::vector<std::uint8_t>& data) {
  std::string dict = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': (";
  for (std::size_t i = 0; i < shape.size(); ++i) dict += std::to_string(shape[i]) + (shape.size() == 1 || i + 1 < shape.size() ? ", " : "");
  dict += "), }";
  while ((10 + dict.size() + 1) % 64 != 0) dict += ' ';
  dict += '\n';
  std::string out = "\x93NUMPY";
  out += '\x01';
  out += '\x00';
  out += static_cast<char>(dict.size() & 0xFF);
  out += static_cast<char>(dict.size() >> 8);
  out += dict;
  out.append(reinterpret_cast<const char*>(data.data()), data.size());
  std::ofstream(path, std::ios::binary) << out;
}

inline double CwTrace(std::uint64_t seg, std::uint64_t row, std::uint64_t col) {
  // Multiples of 1/1024 (ChipWhisperer's ADC steps): exactly a float32.
  return static_cast<double>(Pattern(seg, row, col) % 1024) / 1024.0 - 0.5;
}
inline std::uint8_t CwByte(std::uint64_t seg, const std::string& what, std::uint64_t row, std::uint64_t col) {
  return static_cast<std::uint8_t>(Pattern(seg * 31 + what.size(), row, col));
}

/// A segment: `rows` rows in the arrays, numTraces = `num`.
inline void WriteCwSegment(const std::string& dir, const std::string& prefix, std::uint64_t seg, std::uint64_t rows,
                           std::uint64_t num, std::uint64_t points, bool knownkey_object) {
  std::ofstream(dir + "/config_" + prefix + ".cfg") << "[Trace Config]\nnumTraces = " << num
                                                    << "\nformat = native\nnumPoints = " << points
                                                    << "\nprefix = " << prefix << "\ntargetHW = fixture\n";
  std::vector<std::uint8_t> t(rows * points * 8);
  for (std::uint64_t r = 0; r < rows; ++r) {
    for (std::uint64_t c = 0; c < points; ++c) {
      const double v = CwTrace(seg, r, c);
      std::memcpy(t.data() + (r * points + c) * 8, &v, 8);
    }
  }
  WriteNpy(dir + "/" + prefix + "traces.npy", "<f8", {rows, points}, t);
  for (const std::string what : {"textin", "textout", "keylist"}) {
    std::vector<std::uint8_t> b(rows * 16);
    for (std::uint64_t r = 0; r < rows; ++r) {
      for (std::uint64_t c = 0; c < 16; ++c) b[r * 16 + c] = CwByte(seg, what, r, c);
    }
    WriteNpy(dir + "/" + prefix + what + ".npy", "|u1", {rows, 16}, b);
  }
  if (knownkey_object) {
    // A pickled object array: the importer must skip it without reading the pickle.
    WriteNpy(dir + "/" + prefix + "knownkey.npy", "|O", {1}, {0x80, 0x04, 0x95, 0x00, 0x2E});
  }
}

}  // namespace sedpack::testing
