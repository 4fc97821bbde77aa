// SPDX-License-Identifier: Apache-2.0
// ExportWriter and the shard wire format of export-hdf5 (export_internal.h).
#include <fcntl.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <optional>

#include "hdf5/export_internal.h"
#include "hdf5/fs_driver_internal.h"
#include "journal/stats_internal.h"
#include "sedpack/dataset/reader.h"

namespace sedpack::h5 {
namespace {

void PutU64(std::string* out, std::uint64_t v) { out->append(reinterpret_cast<const char*>(&v), 8); }

Result<std::uint64_t> GetU64(std::string_view* in) {
  if (in->size() < 8) return Status::Internal("export-hdf5: truncated shard message");
  std::uint64_t v;
  std::memcpy(&v, in->data(), 8);
  in->remove_prefix(8);
  return v;
}

Handle FileType(DType d) {
  if (d == DType::kBool) return Handle(H5Tcopy(H5T_NATIVE_UINT8));
  if (d == DType::kStr) {
    Handle t(H5Tcopy(H5T_C_S1));
    H5Tset_size(t.get(), H5T_VARIABLE);
    H5Tset_cset(t.get(), H5T_CSET_UTF8);
    return t;
  }
  if (d == DType::kBytes) return Handle(H5Tvlen_create(H5T_NATIVE_UINT8));
  return h5::NativeType(d);
}

Status WriteStringAttribute(hid_t object, const std::string& name, const std::string& value) {
  Handle type = FileType(DType::kStr);
  SEDPACK_ASSIGN_OR_RETURN(Handle space, H5Checked(H5Screate(H5S_SCALAR), "dataspace"));
  SEDPACK_ASSIGN_OR_RETURN(Handle attr, H5Checked(H5Acreate2(object, name.c_str(), type.get(), space.get(),
                                                             H5P_DEFAULT, H5P_DEFAULT),
                                                  "attribute " + name));
  const char* p = value.c_str();
  return H5Check(H5Awrite(attr.get(), type.get(), &p), "attribute " + name);
}

Status WriteU64Attribute(hid_t object, const std::string& name, const std::vector<std::uint64_t>& values) {
  const hsize_t dims[1] = {values.size()};
  SEDPACK_ASSIGN_OR_RETURN(Handle space, H5Checked(H5Screate_simple(1, dims, nullptr), "dataspace"));
  SEDPACK_ASSIGN_OR_RETURN(Handle attr, H5Checked(H5Acreate2(object, name.c_str(), H5T_STD_U64LE, space.get(),
                                                             H5P_DEFAULT, H5P_DEFAULT),
                                                  "attribute " + name));
  return H5Check(H5Awrite(attr.get(), H5T_NATIVE_UINT64, values.data()), "attribute " + name);
}

// `fapl` with the HDF5 1.8 file format (HDF5 1.8 and later read it): the
// 1.6 one keeps every attribute in its object's header, where one message is
// at most 64 KiB, and the per-shard attributes (shard_examples,
// shard_first_row: 8 bytes a shard) outgrow that at about 8000 shards. The 1.8
// format moves an attribute too large for the header into dense storage,
// whatever its size; the names and values readers see are the same.
Result<Handle> CreateAccess(hid_t fapl) {
  SEDPACK_ASSIGN_OR_RETURN(Handle copy, H5Checked(H5Pcopy(fapl), "file access property list"));
  SEDPACK_RETURN_NOT_OK(H5Check(H5Pset_libver_bounds(copy.get(), H5F_LIBVER_V18, H5F_LIBVER_V18),
                                "file format bounds"));
  return copy;
}

// Variable length: pointers into the column (NUL-terminated copies for str).
Status WriteVariable(hid_t dset, const AttributeSpec& a, std::uint64_t first, std::uint64_t examples,
                     std::string_view in, hid_t mem_space, hid_t file_space, hid_t dxpl) {
  std::vector<std::string> texts;
  std::vector<hvl_t> blobs;
  for (std::uint64_t i = 0; i < examples; ++i) {
    std::uint64_t len = 0;
    std::memcpy(&len, in.data(), 8);
    in.remove_prefix(8);
    if (a.dtype == DType::kStr) {
      // An HDF5 string ends at its first NUL: refuse rather than cut the value short.
      if (in.substr(0, len).find('\0') != std::string_view::npos) {
        return Status::InvalidArgument("export-hdf5: attribute \"", a.name, "\" row ", first + i,
                                       ": a str holding a NUL character cannot be an HDF5 string");
      }
      texts.emplace_back(in.substr(0, len));
    } else {
      blobs.push_back(hvl_t{len, const_cast<char*>(in.data())});
    }
    in.remove_prefix(len);
  }
  Handle type = FileType(a.dtype);
  if (a.dtype == DType::kStr) {
    std::vector<const char*> ptrs;
    for (const std::string& t : texts) ptrs.push_back(t.c_str());
    return H5Check(H5Dwrite(dset, type.get(), mem_space, file_space, dxpl, ptrs.data()), "writing " + a.name);
  }
  return H5Check(H5Dwrite(dset, type.get(), mem_space, file_space, dxpl, blobs.data()), "writing " + a.name);
}

}  // namespace

// The block of `dset` at `start` of extent `count`, selected in its file space.
static Result<Handle> SelectRows(hid_t dset, const std::vector<hsize_t>& start, const std::vector<hsize_t>& count) {
  SEDPACK_ASSIGN_OR_RETURN(Handle file_space, H5Checked(H5Dget_space(dset), "dataspace"));
  SEDPACK_RETURN_NOT_OK(H5Check(H5Sselect_hyperslab(file_space.get(), H5S_SELECT_SET, start.data(), nullptr,
                                                    count.data(), nullptr),
                                "selection"));
  return file_space;
}

Status H5Check(herr_t rc, const std::string& what) {
  if (rc < 0) return Status::IOError("export-hdf5: ", what, ": ", h5::LastError());
  return Status::OK();
}

Result<Handle> H5Checked(hid_t id, const std::string& what) {
  if (id < 0) return Status::IOError("export-hdf5: ", what, ": ", h5::LastError());
  return Handle(id);
}

// Decode `shard` and serialize its columns (checking every value against the schema).
Result<std::string> EncodeShard(const Dataset& ds, const ShardInfo& shard, bool verify) {
  SEDPACK_ASSIGN_OR_RETURN(auto decoded, ReadShard(ds, shard, {}, verify));
  const auto& schema = ds.schema();
  const std::string path = shard.file_infos.empty() ? std::string("?") : shard.file_infos[0].file_path;
  if (decoded->num_attributes() != schema.size()) {
    return Status::Corruption(path, ": ", decoded->num_attributes(), " attributes, the schema has ", schema.size());
  }
  if (static_cast<std::int64_t>(decoded->num_examples()) != shard.number_of_examples) {
    return Status::Corruption(path, ": ", decoded->num_examples(), " examples, its shards_list.json records ",
                              shard.number_of_examples);
  }
  std::string out;
  const std::size_t n = decoded->num_examples();
  PutU64(&out, n);
  for (std::size_t j = 0; j < schema.size(); ++j) {
    const AttributeSpec& a = schema[j];
    if (VariableLength(a.dtype)) {
      out.push_back(static_cast<char>(a.dtype));
      PutU64(&out, n);
      for (std::size_t i = 0; i < n; ++i) {
        const ValueView v = decoded->Get(i, j);
        PutU64(&out, v.data.size());
        out.append(reinterpret_cast<const char*>(v.data.data()), v.data.size());
      }
      continue;
    }
    // The stored dtype (npz may store another than declared); HDF5 converts it.
    const DType stored = n ? decoded->Get(0, j).dtype : a.dtype;
    SEDPACK_ASSIGN_OR_RETURN(std::uint64_t elements, ShapeElementCount(a.shape));
    const std::uint64_t value_bytes = elements * DTypeItemSize(stored);
    out.push_back(static_cast<char>(stored));
    PutU64(&out, value_bytes * n);
    for (std::size_t i = 0; i < n; ++i) {
      const ValueView v = decoded->Get(i, j);
      if (v.dtype != stored || v.data.size() != value_bytes) {
        return Status::Corruption(path, ": example ", i, " attribute \"", a.name, "\" is ", DTypeName(v.dtype), " of ",
                                  v.data.size(), " bytes, expected ", DTypeName(stored), " of ", value_bytes);
      }
      out.append(reinterpret_cast<const char*>(v.data.data()), v.data.size());
    }
  }
  return out;
}

namespace {

// Copy `bytes` into `column`, feeding `digest` (if any) each block right after
// its copy, while it is in cache. The digest's time is the journal's.
void CopyColumn(std::string_view bytes, std::string* column, RowDigest* digest) {
  if (digest == nullptr) {
    column->assign(bytes);
    return;
  }
  constexpr std::size_t kBlock = std::size_t{128} << 10;
  column->clear();
  column->reserve(bytes.size());
  for (std::size_t at = 0; at < bytes.size(); at += kBlock) {
    const std::string_view block = bytes.substr(at, kBlock);
    column->append(block);
    journal_internal::JournalComputeTimer timer;
    digest->Update(column->data() + at, block.size());
  }
}

}  // namespace

Result<ShardColumns> DecodeColumns(std::string_view in, std::size_t attributes, bool digest) {
  std::optional<RowDigest> hash;
  if (digest) hash.emplace();
  RowDigest* h = hash ? &*hash : nullptr;
  ShardColumns c;
  SEDPACK_ASSIGN_OR_RETURN(c.examples, GetU64(&in));
  for (std::size_t j = 0; j < attributes; ++j) {
    if (in.empty()) return Status::Internal("export-hdf5: truncated shard message");
    const DType d = static_cast<DType>(static_cast<unsigned char>(in[0]));
    in.remove_prefix(1);
    std::string column;
    if (VariableLength(d)) {
      SEDPACK_ASSIGN_OR_RETURN(std::uint64_t count, GetU64(&in));
      const char* begin = in.data();
      for (std::uint64_t i = 0; i < count; ++i) {
        SEDPACK_ASSIGN_OR_RETURN(std::uint64_t len, GetU64(&in));
        if (in.size() < len) return Status::Internal("export-hdf5: truncated shard message");
        in.remove_prefix(len);
      }
      CopyColumn(std::string_view(begin, static_cast<std::size_t>(in.data() - begin)), &column, h);
    } else {
      SEDPACK_ASSIGN_OR_RETURN(std::uint64_t bytes, GetU64(&in));
      if (in.size() < bytes) return Status::Internal("export-hdf5: truncated shard message");
      CopyColumn(in.substr(0, bytes), &column, h);
      in.remove_prefix(bytes);
    }
    c.dtypes.push_back(d);
    c.columns.push_back(std::move(column));
  }
  if (h != nullptr) c.digest = h->Hex();
  return c;
}

std::string EncodeVariableColumns(const ShardColumns& c) {
  std::string out;
  PutU64(&out, c.examples);
  for (std::size_t j = 0; j < c.dtypes.size(); ++j) {
    out.push_back(static_cast<char>(c.dtypes[j]));
    if (VariableLength(c.dtypes[j])) {
      PutU64(&out, c.examples);
      out += c.columns[j];
    } else {
      PutU64(&out, 0);
    }
  }
  return out;
}

Result<std::unique_ptr<ExportWriter>> ExportWriter::Create(const std::string& path, const Dataset& ds,
                                                         const std::vector<SplitPlan>& plans,
                                                         const Hdf5ExportOptions& o, hid_t fapl) {
  auto w = std::unique_ptr<ExportWriter>(new ExportWriter());
  w->schema_ = ds.schema();
  Handle serial_fapl;  // the serial writer's file goes through the FileSystem
  if (fapl == H5P_DEFAULT) {
    SEDPACK_ASSIGN_OR_RETURN(serial_fapl, FileAccessFor(o.file_system));
    fapl = serial_fapl.get();
  }
  SEDPACK_ASSIGN_OR_RETURN(Handle create_fapl, CreateAccess(fapl));
  SEDPACK_ASSIGN_OR_RETURN(w->file_, H5Checked(H5Fcreate(path.c_str(), H5F_ACC_EXCL, H5P_DEFAULT, create_fapl.get()),
                                               "cannot create " + path));
  w->OpenForWriteback(path, o.file_system);
  const DatasetInfo& info = ds.info();
  const Metadata& m = info.metadata;
  const hid_t root = w->file_.get();
  for (const auto& [name, value] : {std::pair<std::string, std::string>{"description", m.description},
                                    {"dataset_version", m.dataset_version},
                                    {"dataset_license", m.dataset_license},
                                    {"download_from", m.download_from},
                                    {"sedpack_version", m.sedpack_version},
                                    {"custom_metadata", m.custom_metadata.text()},
                                    {"sedpack_dataset_info", SerializeDatasetInfo(info)}}) {
    SEDPACK_RETURN_NOT_OK(WriteStringAttribute(root, name, value));
  }
  for (const SplitPlan& plan : plans) {
    const std::string group_name = "/" + std::string(SplitName(plan.split));
    SEDPACK_ASSIGN_OR_RETURN(Handle group, H5Checked(H5Gcreate2(root, group_name.c_str(), H5P_DEFAULT,
                                                                H5P_DEFAULT, H5P_DEFAULT),
                                                     "group " + group_name));
    std::string shard_metadata = "[";
    std::vector<std::uint64_t> shard_examples;
    for (std::size_t i = 0; i < plan.shards.size(); ++i) {
      shard_metadata += (i ? ", " : "") + plan.shards[i].custom_metadata.text();
      shard_examples.push_back(static_cast<std::uint64_t>(plan.shards[i].number_of_examples));
    }
    shard_metadata += "]";
    SEDPACK_RETURN_NOT_OK(WriteStringAttribute(group.get(), "shard_custom_metadata", shard_metadata));
    SEDPACK_RETURN_NOT_OK(WriteU64Attribute(group.get(), "shard_examples", shard_examples));
    SEDPACK_RETURN_NOT_OK(WriteU64Attribute(group.get(), "shard_first_row", plan.first_row));
    std::vector<Handle> datasets;
    for (std::size_t j = 0; j < w->schema_.size(); ++j) {
      const AttributeSpec& a = w->schema_[j];
      const Attribute& meta = info.dataset_structure.saved_data_description[j];
      std::vector<hsize_t> dims{plan.rows};
      std::uint64_t row_bytes = 16;
      if (!VariableLength(a.dtype)) {
        for (std::int64_t d : a.shape) dims.push_back(static_cast<hsize_t>(d));
        row_bytes = std::max<std::uint64_t>(1, a.FixedByteSize().ValueOr(1));
      } else if (!(a.shape.empty() || (a.dtype == DType::kBytes && a.shape.size() == 1))) {
        return Status::NotImplemented("export-hdf5: attribute \"", a.name, "\" (", DTypeName(a.dtype), " of shape ",
                                      ShapeToString(a.shape), ") has no HDF5 mapping");
      }
      std::vector<hsize_t> max_dims = dims;
      SEDPACK_ASSIGN_OR_RETURN(Handle space, H5Checked(H5Screate_simple(static_cast<int>(dims.size()), dims.data(),
                                                                        max_dims.data()),
                                                       "dataspace"));
      SEDPACK_ASSIGN_OR_RETURN(Handle dcpl, H5Checked(H5Pcreate(H5P_DATASET_CREATE), "property list"));
      if (plan.rows > 0) {
        std::vector<hsize_t> chunk = dims;
        const std::uint64_t rows =
            o.chunk_rows ? o.chunk_rows : std::max<std::uint64_t>(1, (std::uint64_t{1} << 20) / row_bytes);
        chunk[0] = std::min<hsize_t>(plan.rows, rows);
        SEDPACK_RETURN_NOT_OK(H5Check(H5Pset_chunk(dcpl.get(), static_cast<int>(chunk.size()), chunk.data()),
                                      "chunking"));
        if (o.deflate_level > 0) {
          if (!VariableLength(a.dtype)) SEDPACK_RETURN_NOT_OK(H5Check(H5Pset_shuffle(dcpl.get()), "shuffle"));
          SEDPACK_RETURN_NOT_OK(H5Check(H5Pset_deflate(dcpl.get(), static_cast<unsigned>(o.deflate_level)),
                                        "deflate"));
        }
      }
      Handle type = FileType(a.dtype);
      const std::string where = group_name + "/" + a.name;
      SEDPACK_ASSIGN_OR_RETURN(Handle dset, H5Checked(H5Dcreate2(group.get(), a.name.c_str(), type.get(),
                                                                 space.get(), H5P_DEFAULT, dcpl.get(), H5P_DEFAULT),
                                                      "dataset " + where));
      SEDPACK_RETURN_NOT_OK(WriteStringAttribute(dset.get(), "sedpack_dtype", meta.dtype));
      SEDPACK_RETURN_NOT_OK(WriteStringAttribute(dset.get(), "custom_metadata", meta.custom_metadata.text()));
      datasets.push_back(std::move(dset));
    }
    w->datasets_.push_back(std::move(datasets));
  }
  return w;
}


Status ExportWriter::WriteShard(std::size_t plan, std::uint64_t first, const ShardColumns& c, Columns which,
                                hid_t dxpl) {
  if (c.examples == 0) return Status::OK();
  for (std::size_t j = 0; j < schema_.size(); ++j) {
    const AttributeSpec& a = schema_[j];
    const bool variable = VariableLength(a.dtype);
    if ((which == Columns::kFixed && variable) || (which == Columns::kVariable && !variable)) continue;
    const hid_t dset = datasets_[plan][j].get();
    std::vector<hsize_t> start{first}, count{c.examples};
    if (!variable) {
      for (std::int64_t d : a.shape) {
        start.push_back(0);
        count.push_back(static_cast<hsize_t>(d));
      }
    }
    SEDPACK_ASSIGN_OR_RETURN(Handle file_space, SelectRows(dset, start, count));
    SEDPACK_ASSIGN_OR_RETURN(Handle mem_space, H5Checked(H5Screate_simple(static_cast<int>(count.size()),
                                                                          count.data(), nullptr),
                                                         "dataspace"));
    const std::string& col = c.columns[j];
    if (variable) {
      SEDPACK_RETURN_NOT_OK(WriteVariable(dset, a, first, c.examples, col, mem_space.get(), file_space.get(), dxpl));
      bytes_ += col.size() - 8 * c.examples;
      continue;
    }
    Handle mem_type = FileType(c.dtypes[j]);
    if (!mem_type.valid()) {
      return Status::Corruption("export-hdf5: attribute \"", a.name, "\" stored as ", DTypeName(c.dtypes[j]));
    }
    SEDPACK_RETURN_NOT_OK(H5Check(H5Dwrite(dset, mem_type.get(), mem_space.get(), file_space.get(), dxpl, col.data()),
                                  "writing " + a.name));
    bytes_ += col.size();
  }
  return Status::OK();
}

Status ExportWriter::WriteNothing(std::size_t plan, hid_t dxpl) {
  for (std::size_t j = 0; j < schema_.size(); ++j) {
    if (VariableLength(schema_[j].dtype)) continue;
    const hid_t dset = datasets_[plan][j].get();
    SEDPACK_ASSIGN_OR_RETURN(Handle file_space, H5Checked(H5Dget_space(dset), "dataspace"));
    SEDPACK_RETURN_NOT_OK(H5Check(H5Sselect_none(file_space.get()), "selection"));
    const hsize_t one[1] = {1};
    SEDPACK_ASSIGN_OR_RETURN(Handle mem_space, H5Checked(H5Screate_simple(1, one, nullptr), "dataspace"));
    SEDPACK_RETURN_NOT_OK(H5Check(H5Sselect_none(mem_space.get()), "selection"));
    SEDPACK_ASSIGN_OR_RETURN(Handle type, H5Checked(H5Dget_type(dset), "datatype"));
    // HDF5 wants a buffer even for an empty selection; nothing is read from it.
    const std::uint64_t unused = 0;
    SEDPACK_RETURN_NOT_OK(H5Check(H5Dwrite(dset, type.get(), mem_space.get(), file_space.get(), dxpl, &unused),
                                  "writing " + schema_[j].name));
  }
  return Status::OK();
}

Result<std::unique_ptr<ExportWriter>> ExportWriter::Reopen(const std::string& path, const Dataset& ds,
                                                           const std::vector<SplitPlan>& plans, FileSystem* fs,
                                                           hid_t fapl) {
  auto w = std::unique_ptr<ExportWriter>(new ExportWriter());
  w->schema_ = ds.schema();
  Handle serial_fapl;  // as in Create: the serial writer goes through the FileSystem
  if (fapl == H5P_DEFAULT) {
    SEDPACK_ASSIGN_OR_RETURN(serial_fapl, FileAccessFor(fs));
    fapl = serial_fapl.get();
  }
  SEDPACK_ASSIGN_OR_RETURN(w->file_, H5Checked(H5Fopen(path.c_str(), H5F_ACC_RDWR, fapl),
                                               "cannot reopen " + path));
  w->OpenForWriteback(path, fs);
  for (const SplitPlan& plan : plans) {
    std::vector<Handle> datasets;
    for (const AttributeSpec& a : w->schema_) {
      const std::string where = "/" + std::string(SplitName(plan.split)) + "/" + a.name;
      SEDPACK_ASSIGN_OR_RETURN(Handle dset, H5Checked(H5Dopen2(w->file_.get(), where.c_str(), H5P_DEFAULT),
                                                      "dataset " + where));
      datasets.push_back(std::move(dset));
    }
    w->datasets_.push_back(std::move(datasets));
  }
  return w;
}

Status ExportWriter::Close() {
  datasets_.clear();
  Status st = H5Check(H5Fflush(file_.get(), H5F_SCOPE_GLOBAL), "writing the file");
  file_ = Handle();
  writeback_.Reset();
  return st;
}

Status ExportWriter::Flush() { return H5Check(H5Fflush(file_.get(), H5F_SCOPE_LOCAL), "writing the file"); }

// Read-only is enough: writeback is of the file's pages, whoever wrote them.
// Best effort, as the hint it serves: without it the file is only written out later.
void ExportWriter::OpenForWriteback(const std::string& path, FileSystem* fs) {
  writeback_fs_ = &FileSystemOr(fs);
  writeback_ = FileDescriptor(writeback_fs_->Open(path.c_str(), O_RDONLY | O_CLOEXEC), writeback_fs_);
}

void ExportWriter::StartWriteback() {
  // 0 bytes: to the end of the file (sync_file_range(2)); pages already on
  // their way out are skipped, so a call costs about the pages new since the last.
  if (writeback_.valid()) (void)writeback_fs_->StartWriteback(writeback_.get(), 0, 0);
}

Status ExportWriter::CheckShapes(const std::vector<SplitPlan>& plans) {
  for (std::size_t p = 0; p < plans.size(); ++p) {
    for (std::size_t j = 0; j < schema_.size(); ++j) {
      const AttributeSpec& a = schema_[j];
      std::vector<hsize_t> want{plans[p].rows};
      if (!VariableLength(a.dtype)) {
        for (std::int64_t d : a.shape) want.push_back(static_cast<hsize_t>(d));
      }
      SEDPACK_ASSIGN_OR_RETURN(Handle space, H5Checked(H5Dget_space(datasets_[p][j].get()), "dataspace"));
      std::vector<hsize_t> dims(want.size() + 1);
      const int rank = H5Sget_simple_extent_dims(space.get(), dims.data(), nullptr);
      dims.resize(static_cast<std::size_t>(std::max(rank, 0)));
      Handle type(H5Dget_type(datasets_[p][j].get()));
      Handle expected = FileType(a.dtype);
      if (dims != want || !type.valid() || H5Tequal(type.get(), expected.get()) <= 0) {
        return Status::Corruption("/", SplitName(plans[p].split), "/", a.name,
                                  " does not have the type and shape this export writes");
      }
    }
  }
  return Status::OK();
}

Status ExportWriter::HashAttribute(std::size_t plan, std::size_t j, std::uint64_t first, std::uint64_t rows,
                                   RowDigest* hash) {
  const AttributeSpec& a = schema_[j];
  const hid_t dset = datasets_[plan][j].get();
  std::vector<hsize_t> start{first}, count{rows};
  std::uint64_t elements = 1;
  if (!VariableLength(a.dtype)) {
    for (std::int64_t d : a.shape) {
      start.push_back(0);
      count.push_back(static_cast<hsize_t>(d));
      elements *= static_cast<std::uint64_t>(d);
    }
  }
  SEDPACK_ASSIGN_OR_RETURN(Handle file_space, SelectRows(dset, start, count));
  SEDPACK_ASSIGN_OR_RETURN(Handle mem_space, H5Checked(H5Screate_simple(static_cast<int>(count.size()), count.data(),
                                                                        nullptr),
                                                       "dataspace"));
  SEDPACK_ASSIGN_OR_RETURN(Handle type, H5Checked(H5Dget_type(dset), "datatype"));
  if (!VariableLength(a.dtype)) {
    std::vector<std::byte> values(rows * elements * H5Tget_size(type.get()));
    SEDPACK_RETURN_NOT_OK(H5Check(H5Dread(dset, type.get(), mem_space.get(), file_space.get(), H5P_DEFAULT,
                                          values.data()),
                                  "reading " + a.name));
    hash->Update(values.data(), values.size());
    return Status::OK();
  }
  // One pointer (str) or hvl_t (bytes) a row, released by the library after.
  std::vector<hvl_t> blobs(a.dtype == DType::kBytes ? rows : 0);
  std::vector<char*> texts(a.dtype == DType::kStr ? rows : 0);
  void* buffer = a.dtype == DType::kStr ? static_cast<void*>(texts.data()) : static_cast<void*>(blobs.data());
  SEDPACK_RETURN_NOT_OK(H5Check(H5Dread(dset, type.get(), mem_space.get(), file_space.get(), H5P_DEFAULT, buffer),
                                "reading " + a.name));
  for (std::uint64_t i = 0; i < rows; ++i) {
    const char* p = a.dtype == DType::kStr ? texts[i] : static_cast<const char*>(blobs[i].p);
    const std::uint64_t len = a.dtype == DType::kStr ? (p ? std::strlen(p) : 0) : blobs[i].len;
    hash->Update(&len, 8);
    if (len) hash->Update(p, len);
  }
  return H5Check(H5Dvlen_reclaim(type.get(), mem_space.get(), H5P_DEFAULT, buffer), "reading " + a.name);
}

bool ExportWriter::StoredAsFile(std::size_t plan, std::size_t j, DType stored) {
  if (as_file_.size() != datasets_.size()) {
    as_file_.assign(datasets_.size(), std::vector<std::pair<int, bool>>(schema_.size(), {-1, false}));
  }
  std::pair<int, bool>& known = as_file_[plan][j];
  if (known.first != static_cast<int>(stored)) {
    Handle mem = FileType(stored);
    Handle type(H5Dget_type(datasets_[plan][j].get()));
    known = {static_cast<int>(stored), mem.valid() && type.valid() && H5Tequal(mem.get(), type.get()) > 0};
  }
  return known.second;
}

Result<std::string> ExportWriter::DigestWritten(std::size_t plan, std::uint64_t first, const ShardColumns& c) {
  RowDigest hash;
  if (c.examples == 0) return hash.Hex();
  bool as_copied = !c.digest.empty();
  for (std::size_t j = 0; j < schema_.size() && as_copied; ++j) {
    as_copied = VariableLength(schema_[j].dtype) || StoredAsFile(plan, j, c.dtypes[j]);
  }
  if (as_copied) return c.digest;
  for (std::size_t j = 0; j < schema_.size(); ++j) {
    if (VariableLength(schema_[j].dtype) || StoredAsFile(plan, j, c.dtypes[j])) {
      // The wire form of str/bytes is the (length, bytes) pairs HashAttribute feeds.
      hash.Update(c.columns[j].data(), c.columns[j].size());
    } else {
      // Converted on the way in: what the file holds is only known from the file.
      SEDPACK_RETURN_NOT_OK(HashAttribute(plan, j, first, c.examples, &hash));
    }
  }
  return hash.Hex();
}

// Whole chunks are read as stored only where their bytes are the values in
// row order: a chunked dataset without filters whose chunks span whole rows,
// of a size a buffer may take.
void ExportWriter::ProbeStored(std::size_t plan, std::size_t j, StoredChunks* s) {
  constexpr std::uint64_t kMaxChunkBytes = std::uint64_t{256} << 20;
  s->probed = true;
  if (VariableLength(schema_[j].dtype)) return;
  const hid_t dset = datasets_[plan][j].get();
  Handle dcpl(H5Dget_create_plist(dset));
  Handle space(H5Dget_space(dset));
  Handle type(H5Dget_type(dset));
  if (!dcpl.valid() || !space.valid() || !type.valid() || H5Pget_layout(dcpl.get()) != H5D_CHUNKED ||
      H5Pget_nfilters(dcpl.get()) != 0) {
    return;
  }
  const int rank = H5Sget_simple_extent_ndims(space.get());
  if (rank < 1) return;
  std::vector<hsize_t> dims(static_cast<std::size_t>(rank)), chunk(static_cast<std::size_t>(rank));
  if (H5Sget_simple_extent_dims(space.get(), dims.data(), nullptr) != rank ||
      H5Pget_chunk(dcpl.get(), rank, chunk.data()) != rank || chunk[0] == 0) {
    return;
  }
  std::uint64_t row_bytes = H5Tget_size(type.get());
  for (int d = 1; d < rank; ++d) {
    if (chunk[d] != dims[d]) return;
    row_bytes *= dims[d];
  }
  if (row_bytes == 0 || chunk[0] > kMaxChunkBytes / row_bytes) return;
  s->direct = true;
  s->chunk_rows = chunk[0];
  s->row_bytes = row_bytes;
  s->offset.assign(static_cast<std::size_t>(rank), 0);
  s->bytes.resize(static_cast<std::size_t>(chunk[0] * row_bytes));
}

// The file is untrusted here (what a killed run left): a chunk is read only
// once its stored size is that of a whole unfiltered chunk.
Status ExportWriter::LoadStoredChunk(std::size_t plan, std::size_t j, std::uint64_t chunk, StoredChunks* s) {
  const hid_t dset = datasets_[plan][j].get();
  s->loaded = ~std::uint64_t{0};
  s->offset[0] = chunk * s->chunk_rows;
  hsize_t stored = 0;
  const std::string what = "reading " + schema_[j].name + " (chunk at row " + std::to_string(s->offset[0]) + ")";
  SEDPACK_RETURN_NOT_OK(H5Check(H5Dget_chunk_storage_size(dset, s->offset.data(), &stored), what));
  if (stored != s->bytes.size()) {
    return Status::Corruption("export-hdf5: ", what, ": ", stored, " bytes stored, a chunk is ", s->bytes.size());
  }
  std::uint32_t filters = 0;
  SEDPACK_RETURN_NOT_OK(H5Check(H5Dread_chunk(dset, H5P_DEFAULT, s->offset.data(), &filters, s->bytes.data()), what));
  if (filters != 0) return Status::Corruption("export-hdf5: ", what, ": stored through a filter");
  s->loaded = chunk;
  return Status::OK();
}

Result<std::string> ExportWriter::DigestStored(std::size_t plan, std::uint64_t first, std::uint64_t rows) {
  RowDigest hash;
  if (stored_.size() != datasets_.size()) stored_.assign(datasets_.size(), std::vector<StoredChunks>(schema_.size()));
  for (std::size_t j = 0; j < schema_.size() && rows > 0; ++j) {
    StoredChunks& s = stored_[plan][j];
    if (!s.probed) ProbeStored(plan, j, &s);
    if (!s.direct) {
      SEDPACK_RETURN_NOT_OK(HashAttribute(plan, j, first, rows, &hash));
      continue;
    }
    for (std::uint64_t row = first; row < first + rows;) {
      const std::uint64_t chunk = row / s.chunk_rows;
      if (chunk != s.loaded) SEDPACK_RETURN_NOT_OK(LoadStoredChunk(plan, j, chunk, &s));
      const std::uint64_t in_chunk = row - chunk * s.chunk_rows;
      const std::uint64_t n = std::min(first + rows - row, s.chunk_rows - in_chunk);
      hash.Update(s.bytes.data() + in_chunk * s.row_bytes, n * s.row_bytes);
      row += n;
    }
  }
  return hash.Hex();
}

void ExportWriter::ReleaseStored() {
  stored_.clear();
  stored_.shrink_to_fit();
}

std::string RowDigest::Hex() const {
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(crc_));
  return hex;
}

std::string LibraryDescription() {
  unsigned major = 0, minor = 0, release = 0;
  H5get_libversion(&major, &minor, &release);
  std::string s = "HDF5 " + std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(release);
#if defined(H5_HAVE_PARALLEL) && defined(SEDPACK_HDF5_MPIIO)
  return s + " (parallel, MPI-IO)";
#elif defined(H5_HAVE_PARALLEL)
  return s + " (parallel library, used serially: built without MPI)";
#else
  return s + " (serial)";
#endif
}

}  // namespace sedpack::h5
