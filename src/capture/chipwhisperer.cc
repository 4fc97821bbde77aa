// SPDX-License-Identifier: Apache-2.0
// ChipWhisperer projects (a folder or a .zip) as CaptureInputs. Every path a
// project file names is untrusted: backslashes become slashes, and absolute
// paths, drive letters and ".." are refused before anything is opened.
#include "sedpack/capture/chipwhisperer.h"

#include <fcntl.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <map>

#include "codecs/compress_internal.h"
#include "sedpack/io/file.h"
#include "sedpack/io/file_system.h"
#include "npy/npy_internal.h"
#include "npy/zip_internal.h"

namespace sedpack {
namespace {

using Json = nlohmann::ordered_json;
namespace npz = npz_internal;

std::string Trim(std::string_view s) {
  std::size_t a = 0, b = s.size();
  while (a < b && (s[a] == ' ' || s[a] == '\t' || s[a] == '\r')) ++a;
  while (b > a && (s[b - 1] == ' ' || s[b - 1] == '\t' || s[b - 1] == '\r')) --b;
  return std::string(s.substr(a, b - a));
}

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// Random access to one file's bytes: a real file or a zip member in memory.
class Blob {
 public:
  virtual ~Blob() = default;
  virtual std::uint64_t size() const = 0;
  virtual Status ReadAt(std::uint64_t offset, std::uint64_t n, std::byte* out) const = 0;
};

class FileBlob final : public Blob {
 public:
  static Result<std::shared_ptr<Blob>> Open(const std::string& path, FileSystem& fs) {
    auto b = std::make_shared<FileBlob>();
    b->path_ = path;
    b->fs_ = &fs;
    SEDPACK_ASSIGN_OR_RETURN(b->size_, FileSize(path, &fs));
    b->fd_ = fs.Open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (b->fd_ < 0) return Status::IOError(path, ": cannot open: ", std::strerror(errno));
    return std::shared_ptr<Blob>(std::move(b));
  }
  ~FileBlob() override {
    if (fd_ >= 0) fs_->Close(fd_);
  }
  std::uint64_t size() const override { return size_; }
  Status ReadAt(std::uint64_t offset, std::uint64_t n, std::byte* out) const override {
    std::uint64_t got = 0;
    while (got < n) {
      const std::size_t chunk = static_cast<std::size_t>(std::min<std::uint64_t>(n - got, 1ULL << 30));
      const long r = fs_->Pread(fd_, out + got, chunk, static_cast<std::int64_t>(offset + got));
      if (r < 0 && errno == EINTR) continue;
      if (r < 0) return Status::IOError(path_, ": read failed: ", std::strerror(errno));
      if (r == 0) return Status::IOError(path_, ": ends at ", offset + got, " (it shrank while being read)");
      got += static_cast<std::uint64_t>(r);
    }
    return Status::OK();
  }

 private:
  std::string path_;
  FileSystem* fs_ = nullptr;
  int fd_ = -1;
  std::uint64_t size_ = 0;
};

class MemBlob final : public Blob {
 public:
  MemBlob(std::shared_ptr<const std::vector<std::byte>> owner, std::span<const std::byte> data)
      : owner_(std::move(owner)), data_(data) {}
  std::uint64_t size() const override { return data_.size(); }
  Status ReadAt(std::uint64_t offset, std::uint64_t n, std::byte* out) const override {
    if (offset > data_.size() || n > data_.size() - offset) return Status::Internal("read past a zip member");
    std::memcpy(out, data_.data() + offset, n);
    return Status::OK();
  }

 private:
  std::shared_ptr<const std::vector<std::byte>> owner_;
  std::span<const std::byte> data_;
};

// A project folder, or a zip of one.
class Container {
 public:
  static Result<std::unique_ptr<Container>> Open(const std::string& path, FileSystem* fs, std::string* cwp_rel) {
    std::unique_ptr<Container> c(new Container());
    c->path_ = path;
    c->fs_ = &FileSystemOr(fs);
    if (Lower(std::filesystem::path(path).extension().string()) != ".zip") {
      const std::filesystem::path p(path);
      c->root_ = p.has_parent_path() ? p.parent_path().string() : ".";
      *cwp_rel = p.filename().string();
      return c;
    }
    c->zipped_ = true;
    SEDPACK_ASSIGN_OR_RETURN(std::vector<std::byte> bytes, ReadFileBytes(path, 16ULL << 30, c->fs_));
    c->zip_ = std::make_shared<const std::vector<std::byte>>(std::move(bytes));
    auto dir = npz::ReadZipDirectory(*c->zip_);
    if (!dir.ok()) return dir.status().WithPrefix(path + ": ");
    std::vector<std::string> cwps;
    for (npz::ZipEntry& e : *dir) {
      if (e.name.empty() || e.name.back() == '/') continue;
      auto rel = CwRelativePath(e.name, path);
      if (!rel.ok()) return rel.status();
      if (Lower(std::filesystem::path(*rel).extension().string()) == ".cwp") cwps.push_back(*rel);
      c->entries_[*rel] = std::move(e);
    }
    if (cwps.size() != 1) {
      return Status::InvalidArgument(path, ": a project zip holds exactly one .cwp file, this one holds ",
                                     cwps.size());
    }
    *cwp_rel = cwps[0];
    return c;
  }

  bool zipped() const { return zipped_; }
  std::string Name(const std::string& rel) const { return zipped_ ? path_ + ":" + rel : JoinRoot(root_, rel); }

  Result<std::string> ReadText(const std::string& rel) {
    if (!zipped_) return ReadFileTextBeneath(root_, rel, 16 << 20, fs_);
    SEDPACK_ASSIGN_OR_RETURN(std::shared_ptr<Blob> b, OpenBlob(rel));
    std::string s(b->size(), '\0');
    SEDPACK_RETURN_NOT_OK(b->ReadAt(0, b->size(), reinterpret_cast<std::byte*>(s.data())));
    return s;
  }

  Result<std::shared_ptr<Blob>> OpenBlob(const std::string& rel) {
    if (!zipped_) {
      // Containment: the file must lie beneath the project folder, links included.
      SEDPACK_ASSIGN_OR_RETURN(std::uint64_t size, FileSizeBeneath(root_, rel, fs_));
      (void)size;
      return FileBlob::Open(JoinRoot(root_, rel), *fs_);
    }
    auto it = entries_.find(rel);
    if (it == entries_.end()) return Status::NotFound(Name(rel), ": no such member");
    const npz::ZipEntry& e = it->second;
    auto raw = npz::ZipEntryData(*zip_, e);
    if (!raw.ok()) return raw.status().WithPrefix(Name(rel) + ": ");
    if (e.flags & npz::kFlagEncrypted) return Status::NotImplemented(Name(rel), ": encrypted zip members are not supported");
    if (e.method == npz::kMethodStored) return std::shared_ptr<Blob>(new MemBlob(zip_, *raw));
    if (e.method != npz::kMethodDeflated) {
      return Status::NotImplemented(Name(rel), ": zip method ", e.method, " (stored and deflate are supported)");
    }
    if (e.uncompressed_size > (16ULL << 30) || e.uncompressed_size / 1032 > raw->size() + 1) {
      return Status::Corruption(Name(rel), ": claims ", e.uncompressed_size, " bytes from ", raw->size(),
                                " compressed bytes");
    }
    auto owned = std::make_shared<std::vector<std::byte>>();
    SEDPACK_RETURN_NOT_OK(InflateRaw(*raw, e.uncompressed_size, owned.get()).WithPrefix(Name(rel) + ": "));
    if (owned->size() != e.uncompressed_size) return Status::Corruption(Name(rel), ": inflates to the wrong size");
    std::span<const std::byte> view(*owned);
    return std::shared_ptr<Blob>(new MemBlob(std::move(owned), view));
  }

  // Files of folder `dir` (relative) whose names start with `prefix` and end with ".npy".
  std::vector<std::string> List(const std::string& dir, const std::string& prefix) const {
    std::vector<std::string> out;
    auto matches = [&](const std::string& name) {
      return name.size() >= prefix.size() + 4 && name.compare(0, prefix.size(), prefix) == 0 &&
             name.compare(name.size() - 4, 4, ".npy") == 0;
    };
    if (zipped_) {
      for (const auto& [rel, e] : entries_) {
        const std::filesystem::path p(rel);
        if (p.parent_path().string() == dir && matches(p.filename().string())) out.push_back(rel);
      }
    } else {
      const std::string folder = JoinRoot(root_, dir.empty() ? "." : dir);
      for (const DirEntry& d : ListDirectory(folder).ValueOr({})) {
        const std::string& name = d.name;
        if (matches(name) && IsRegularFile(JoinRoot(folder, name))) out.push_back(dir.empty() ? name : dir + "/" + name);
      }
    }
    std::sort(out.begin(), out.end());
    return out;
  }

 private:
  Container() = default;
  std::string path_, root_;
  FileSystem* fs_ = nullptr;
  bool zipped_ = false;
  std::shared_ptr<const std::vector<std::byte>> zip_;
  std::map<std::string, npz::ZipEntry> entries_;
};

struct Array {
  CwArrayInfo info;
  std::shared_ptr<Blob> blob;
  std::uint64_t data_offset = 0;
  DType dtype = DType::kUInt8;
  std::uint64_t row_bytes = 0;
};

// Read and check an array's header; `skip_note` set when it is not importable.
Result<Array> OpenArray(Container& c, const std::string& rel, const std::string& name) {
  Array a;
  a.info.name = name;
  a.info.file = rel;
  SEDPACK_ASSIGN_OR_RETURN(a.blob, c.OpenBlob(rel));
  const std::string where = c.Name(rel);
  std::vector<std::byte> head(std::min<std::uint64_t>(a.blob->size(), 1 << 16));
  SEDPACK_RETURN_NOT_OK(a.blob->ReadAt(0, head.size(), head.data()));
  auto h = npz::ParseNpyHeader(head);
  if (!h.ok()) return h.status().WithPrefix(where + ": ");
  a.info.descr = h->descr;
  a.info.shape = h->shape;
  a.data_offset = h->data_offset;
  if (h->descr.find('O') != std::string::npos) {
    a.info.skipped = true;
    a.info.note = where + ": object array (pickled Python objects): skipped, never unpickled";
    return a;
  }
  auto d = npz::ParseNpyDescr(h->descr);
  if (!d.ok() || d->dtype == DType::kStr) {
    a.info.skipped = true;
    a.info.note = where + ": dtype '" + h->descr + "' is not importable: skipped";
    return a;
  }
  if (h->shape.empty()) {
    a.info.skipped = true;
    a.info.note = where + ": a 0-d array has no rows: skipped";
    return a;
  }
  a.dtype = d->dtype;
  std::uint64_t row = d->itemsize;
  for (std::size_t i = 1; i < h->shape.size(); ++i) {
    if (h->shape[i] != 0 && row > (1ULL << 40) / h->shape[i]) return Status::Corruption(where, ": rows too large");
    row *= h->shape[i];
  }
  a.row_bytes = row;
  if (row != 0 && h->shape[0] > (a.blob->size() - std::min(a.blob->size(), a.data_offset)) / row) {
    return Status::Corruption(where, ": shape ", h->shape[0], " rows of ", row, " bytes passes the end of the file (",
                              a.blob->size(), " bytes)");
  }
  return a;
}

struct Project {
  CwProject info;
  std::unique_ptr<Container> container;
  std::vector<std::vector<Array>> arrays;  // per segment
};

Result<bool> ParseBoolText(const std::string& v, const std::string& where) {
  const std::string l = Lower(v);
  if (l == "true" || l == "1" || l == "yes" || l == "on") return true;
  if (l == "false" || l == "0" || l == "no" || l == "off") return false;
  return Status::InvalidArgument(where, ": expected True or False, got \"", v, "\"");
}

// The segments [Trace Management] lists: tracefileN (relative to the .cwp's
// folder) and enabledN, by N.
Result<std::map<int, CwSegment>> ListSegments(const Container& c, const std::string& cwp,
                                              const std::vector<std::pair<std::string, std::string>>& tm) {
  std::map<int, CwSegment> segs;
  for (const auto& [k, v] : tm) {
    const std::string key = Lower(k);
    auto index_of = [&](std::string_view stem) -> int {
      if (key.compare(0, stem.size(), stem) != 0 || key.size() == stem.size() || key.size() - stem.size() > 6) return -1;
      int n = 0;
      for (char ch : key.substr(stem.size())) {
        if (ch < '0' || ch > '9') return -1;
        n = n * 10 + (ch - '0');
      }
      return n;
    };
    if (int n = index_of("tracefile"); n >= 0) {
      SEDPACK_ASSIGN_OR_RETURN(std::string rel, CwRelativePath(v, c.Name(cwp) + ": " + k));
      // Relative to the folder of the .cwp (inside a zip, it may sit in a folder).
      const std::string base = std::filesystem::path(cwp).parent_path().string();
      segs[n].config_file = base.empty() ? rel : base + "/" + rel;
      segs[n].index = n;
    } else if (int m = index_of("enabled"); m >= 0) {
      SEDPACK_ASSIGN_OR_RETURN(segs[m].enabled, ParseBoolText(v, c.Name(cwp) + ": " + k));
      segs[m].index = m;
    }
  }
  return segs;
}

// An enabled segment: its [Trace Config], the arrays beside it (prefix*.npy,
// traces first) and its row count, every array checked.
Status LoadSegment(Container& c, CwSegment& seg, std::vector<Array>* arrays, std::vector<std::string>* notes) {
  const std::string cfg_where = c.Name(seg.config_file);
  SEDPACK_ASSIGN_OR_RETURN(std::string cfg_text, c.ReadText(seg.config_file));
  SEDPACK_ASSIGN_OR_RETURN(auto cfg, ParseIni(cfg_text, cfg_where));
  std::string prefix;
  std::optional<std::uint64_t> num;
  for (const auto& [name, entries] : cfg) {
    if (Lower(name) != "trace config") continue;
    seg.config = entries;
    for (const auto& [k, v] : entries) {
      if (Lower(k) == "prefix") prefix = v;
      if (Lower(k) == "numtraces") {
        std::uint64_t x = 0;
        if (v.empty() || v.size() > 18 || v.find_first_not_of("0123456789") != std::string::npos) {
          return Status::InvalidArgument(cfg_where, ": numTraces \"", v, "\" is not a count");
        }
        for (char ch : v) x = x * 10 + static_cast<std::uint64_t>(ch - '0');
        num = x;
      }
    }
  }
  const std::filesystem::path cfg_path(seg.config_file);
  if (prefix.empty()) {
    std::string stem = cfg_path.stem().string();
    if (stem.compare(0, 7, "config_") == 0) prefix = stem.substr(7);
  }
  if (prefix.find('/') != std::string::npos || prefix.find('\\') != std::string::npos || prefix.find("..") != std::string::npos) {
    return Status::InvalidArgument(cfg_where, ": prefix \"", prefix, "\" must be a plain file name prefix");
  }
  const std::string dir = cfg_path.parent_path().string();
  std::uint64_t min_rows = UINT64_MAX;
  for (const std::string& rel : c.List(dir, prefix)) {
    std::string name = std::filesystem::path(rel).stem().string().substr(prefix.size());
    // "traces", "textin", ...: a name starting with a digit belongs to a
    // longer prefix (another segment saved in the same folder).
    if (name.empty() || !std::isalpha(static_cast<unsigned char>(name[0]))) continue;
    SEDPACK_ASSIGN_OR_RETURN(Array a, OpenArray(c, rel, name));
    if (a.info.skipped) {
      notes->push_back(a.info.note);
    } else {
      min_rows = std::min<std::uint64_t>(min_rows, a.info.shape[0]);
    }
    seg.arrays.push_back(a.info);
    arrays->push_back(std::move(a));
  }
  if (min_rows == UINT64_MAX) {
    return Status::InvalidArgument(cfg_where, ": no importable ", prefix, "*.npy array beside it");
  }
  if (!num) {
    notes->push_back(cfg_where + ": no numTraces: using the " + std::to_string(min_rows) + " rows of its arrays");
    num = min_rows;
  }
  if (*num > min_rows) {
    return Status::Corruption(cfg_where, ": numTraces is ", *num, " but an array holds only ", min_rows, " rows");
  }
  seg.num_traces = *num;
  // traces first, then the texts and keys, then anything else (sorted).
  static const char* kOrder[] = {"traces", "textin", "textout", "keylist"};
  auto rank = [](const std::string& n) {
    for (int i = 0; i < 4; ++i) {
      if (n == kOrder[i]) return i;
    }
    return 4;
  };
  std::stable_sort(arrays->begin(), arrays->end(), [&](const Array& x, const Array& y) {
    return rank(x.info.name) < rank(y.info.name);
  });
  seg.arrays.clear();
  for (const Array& a : *arrays) seg.arrays.push_back(a.info);
  return Status::OK();
}

Result<Project> LoadProject(const std::string& path, FileSystem* fs) {
  Project p;
  p.info.path = path;
  std::string cwp;
  SEDPACK_ASSIGN_OR_RETURN(p.container, Container::Open(path, fs, &cwp));
  p.info.zipped = p.container->zipped();
  Container& c = *p.container;
  SEDPACK_ASSIGN_OR_RETURN(std::string text, c.ReadText(cwp));
  SEDPACK_ASSIGN_OR_RETURN(auto ini, ParseIni(text, c.Name(cwp)));
  const std::vector<std::pair<std::string, std::string>>* tm = nullptr;
  for (const auto& [name, entries] : ini) {
    if (Lower(name) == "trace management") tm = &entries;
  }
  if (!tm) return Status::InvalidArgument(c.Name(cwp), ": no [Trace Management] section: not a ChipWhisperer project");
  SEDPACK_ASSIGN_OR_RETURN(auto segs, ListSegments(c, cwp, *tm));
  for (auto& [n, seg] : segs) {
    if (seg.config_file.empty()) return Status::InvalidArgument(c.Name(cwp), ": enabled", n, " without tracefile", n);
    std::vector<Array> arrays;
    if (!seg.enabled) {
      p.info.notes.push_back(c.Name(cwp) + ": segment " + std::to_string(n) + " (" + seg.config_file +
                             ") is disabled: skipped");
    } else {
      SEDPACK_RETURN_NOT_OK(LoadSegment(c, seg, &arrays, &p.info.notes));
    }
    p.info.segments.push_back(std::move(seg));
    p.arrays.push_back(std::move(arrays));
  }
  if (segs.empty()) return Status::InvalidArgument(c.Name(cwp), ": [Trace Management] lists no tracefile");
  return p;
}

class CwInput final : public CaptureInput {
 public:
  CwInput(std::string where, std::uint64_t rows, std::vector<Array> arrays, std::string meta)
      : where_(std::move(where)), rows_(rows), meta_(std::move(meta)) {
    for (Array& a : arrays) {
      if (a.info.skipped) continue;
      CaptureField f;
      f.name = a.info.name;
      f.dtype = a.dtype;
      for (std::size_t i = 1; i < a.info.shape.size(); ++i) f.shape.push_back(static_cast<std::int64_t>(a.info.shape[i]));
      if (f.shape.empty()) f.shape.push_back(1);
      f.row_bytes = a.row_bytes;
      f.suggested_attribute = f.name == "traces" ? "trace" : f.name;
      read_row_bytes_ += a.row_bytes;
      fields_.push_back(std::move(f));
      arrays_.push_back(std::move(a));
    }
  }
  std::string Describe() const override { return where_; }
  const std::vector<CaptureField>& fields() const override { return fields_; }
  std::uint64_t rows() const override { return rows_; }
  std::uint64_t read_row_bytes() const override { return read_row_bytes_; }
  std::string dataset_custom_metadata() const override { return meta_; }
  Status Read(std::uint64_t first, std::uint64_t n, std::span<const std::size_t> which,
              std::vector<CaptureRows>* out) override {
    out->resize(which.size());
    buffers_.resize(which.size());
    for (std::size_t k = 0; k < which.size(); ++k) {
      const Array& a = arrays_[which[k]];
      buffers_[k].resize(n * a.row_bytes);
      SEDPACK_RETURN_NOT_OK(a.blob->ReadAt(a.data_offset + first * a.row_bytes, n * a.row_bytes, buffers_[k].data()));
      (*out)[k] = CaptureRows{buffers_[k].data(), a.row_bytes};
    }
    return Status::OK();
  }

 private:
  std::string where_;
  std::uint64_t rows_;
  std::string meta_;
  std::vector<CaptureField> fields_;
  std::vector<Array> arrays_;
  std::uint64_t read_row_bytes_ = 0;
  std::vector<std::vector<std::byte>> buffers_;
};

}  // namespace

Result<std::vector<std::pair<std::string, std::vector<std::pair<std::string, std::string>>>>> ParseIni(
    std::string_view text, std::string_view where) {
  std::vector<std::pair<std::string, std::vector<std::pair<std::string, std::string>>>> out;
  std::size_t pos = 0, line_no = 0;
  while (pos <= text.size()) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    const std::string line = Trim(text.substr(pos, end - pos));
    ++line_no;
    pos = end + 1;
    if (line.empty() || line[0] == '#' || line[0] == ';') continue;
    if (line.front() == '[') {
      if (line.back() != ']') return Status::InvalidArgument(where, ": line ", line_no, ": unclosed section header");
      out.emplace_back(Trim(std::string_view(line).substr(1, line.size() - 2)),
                       std::vector<std::pair<std::string, std::string>>{});
      continue;
    }
    const std::size_t eq = line.find_first_of("=:");
    if (eq == std::string::npos) {
      return Status::InvalidArgument(where, ": line ", line_no, ": expected key = value, got \"", line, "\"");
    }
    if (out.empty()) return Status::InvalidArgument(where, ": line ", line_no, ": key before any [section]");
    std::string key = Trim(std::string_view(line).substr(0, eq));
    std::string value = Trim(std::string_view(line).substr(eq + 1));
    auto& entries = out.back().second;
    auto it = std::find_if(entries.begin(), entries.end(), [&](const auto& e) { return e.first == key; });
    if (it != entries.end()) {
      it->second = std::move(value);
    } else {
      entries.emplace_back(std::move(key), std::move(value));
    }
  }
  return out;
}

Result<std::string> CwRelativePath(std::string_view raw, std::string_view where) {
  std::string s(raw);
  std::replace(s.begin(), s.end(), '\\', '/');
  auto refuse = [&](std::string_view why) {
    return Status::InvalidArgument(where, ": path \"", raw, "\" ", why, "; project paths must stay inside the project");
  };
  if (s.empty()) return refuse("is empty");
  if (s[0] == '/') return refuse("is absolute");
  if (s.size() >= 2 && s[1] == ':') return refuse("names a drive");
  std::string out;
  std::size_t pos = 0;
  while (pos <= s.size()) {
    std::size_t end = s.find('/', pos);
    if (end == std::string::npos) end = s.size();
    const std::string part = s.substr(pos, end - pos);
    pos = end + 1;
    if (part.empty() || part == ".") continue;
    if (part == "..") return refuse("climbs out with \"..\"");
    out += (out.empty() ? "" : "/") + part;
  }
  if (out.empty()) return refuse("names no file");
  return out;
}

Result<CwProject> InspectChipWhisperer(const std::string& path, FileSystem* fs) {
  SEDPACK_ASSIGN_OR_RETURN(Project p, LoadProject(path, fs));
  return std::move(p.info);
}

Result<std::vector<std::unique_ptr<CaptureInput>>> OpenChipWhispererInputs(const std::string& path,
                                                                          std::vector<std::string>* notes,
                                                                          FileSystem* fs) {
  SEDPACK_ASSIGN_OR_RETURN(Project p, LoadProject(path, fs));
  if (notes) notes->insert(notes->end(), p.info.notes.begin(), p.info.notes.end());
  Json segs = Json::array();
  for (const CwSegment& s : p.info.segments) {
    Json cfg = Json::object();
    for (const auto& [k, v] : s.config) cfg[k] = v;
    segs.push_back({{"tracefile", s.config_file}, {"enabled", s.enabled}, {"num_traces", s.num_traces}, {"config", cfg}});
  }
  Json meta = {{"chipwhisperer", {{"project", std::filesystem::path(path).filename().string()}, {"segments", segs}}}};
  const std::string meta_text = meta.dump(-1, ' ', false, Json::error_handler_t::replace);
  std::vector<std::unique_ptr<CaptureInput>> out;
  for (std::size_t i = 0; i < p.info.segments.size(); ++i) {
    const CwSegment& s = p.info.segments[i];
    if (!s.enabled) continue;
    out.push_back(std::make_unique<CwInput>(p.container->Name(s.config_file), s.num_traces, std::move(p.arrays[i]),
                                            meta_text));
  }
  if (out.empty()) return Status::InvalidArgument(path, ": no enabled segment");
  return out;
}

}  // namespace sedpack
