// SPDX-License-Identifier: Apache-2.0
#include <fcntl.h>

#include <algorithm>
#include <limits>
#include <string>

#include "hdf5/h5_internal.h"
#include "sedpack/io/file_system.h"

namespace sedpack::h5 {
namespace {

// Datasets with more dimensions than this are not captures.
constexpr int kMaxRank = 8;

herr_t CollectError(unsigned n, const H5E_error2_t* err, void* data) {
  auto* out = static_cast<std::string*>(data);
  // The stack runs from the innermost call outwards; keep the two innermost.
  if (n < 2 && err && err->desc && *err->desc) {
    if (!out->empty()) out->append(": ");
    out->append(err->desc);
  }
  return 0;
}

std::string WithHdf5Reason(std::string message) {
  const std::string why = LastError();
  if (!why.empty()) message += " (HDF5: " + why + ")";
  return message;
}

}  // namespace

void Handle::Reset() {
  if (id_ < 0) return;
  switch (H5Iget_type(id_)) {
    case H5I_FILE: H5Fclose(id_); break;
    case H5I_GROUP: H5Gclose(id_); break;
    case H5I_DATATYPE: H5Tclose(id_); break;
    case H5I_DATASPACE: H5Sclose(id_); break;
    case H5I_DATASET: H5Dclose(id_); break;
    case H5I_ATTR: H5Aclose(id_); break;
    case H5I_GENPROP_LST: H5Pclose(id_); break;
    default: H5Idec_ref(id_); break;
  }
  id_ = H5I_INVALID_HID;
}

void SilenceLibraryErrors() { H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr); }

std::string LastError() {
  std::string out;
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, &CollectError, &out);
  H5Eclear2(H5E_DEFAULT);
  return out;
}

Result<Handle> OpenFile(const std::string& path, FileSystem* fs) {
  SilenceLibraryErrors();
  if (H5Fis_hdf5(path.c_str()) <= 0) {
    FileSystem& files = FileSystemOr(fs);
    const int fd = files.Open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return Status::NotFound(path, ": cannot open the file");
    files.Close(fd);
    LastError();
    return Status::InvalidArgument(path, ": not an HDF5 file");
  }
  Handle fapl(H5Pcreate(H5P_FILE_ACCESS));
  if (fapl.valid()) H5Pset_file_locking(fapl.get(), false, true);
  Handle file(H5Fopen(path.c_str(), H5F_ACC_RDONLY, fapl.valid() ? fapl.get() : H5P_DEFAULT));
  if (!file.valid()) return Status::IOError(WithHdf5Reason(path + ": cannot open as HDF5"));
  return file;
}

bool ObjectExists(hid_t file, const std::string& path) {
  // H5Lexists needs each intermediate link to exist, so walk the components.
  std::string prefix;
  std::size_t pos = 0;
  while (pos <= path.size()) {
    const std::size_t next = path.find('/', pos);
    const std::string part = path.substr(pos, next == std::string::npos ? std::string::npos : next - pos);
    if (!part.empty()) {
      prefix += (prefix.empty() ? "" : "/") + part;
      if (H5Lexists(file, prefix.c_str(), H5P_DEFAULT) <= 0) {
        LastError();
        return false;
      }
    }
    if (next == std::string::npos) break;
    pos = next + 1;
  }
  return !prefix.empty();
}

Result<NumType> DescribeNumType(hid_t type, const std::string& what) {
  const H5T_class_t cls = H5Tget_class(type);
  const std::size_t size = H5Tget_size(type);
  NumType t;
  t.size = size;
  if (cls == H5T_INTEGER) {
    if (size != 1 && size != 2 && size != 4 && size != 8) {
      return Status::NotImplemented(what, ": ", size, "-byte integers are not supported");
    }
    t.kind = H5Tget_sign(type) == H5T_SGN_NONE ? NumKind::kUnsigned : NumKind::kSigned;
    return t;
  }
  if (cls == H5T_FLOAT) {
    if (size != 2 && size != 4 && size != 8) {
      return Status::NotImplemented(what, ": ", size, "-byte floats are not supported");
    }
    t.kind = NumKind::kFloat;
    std::size_t spos = 0, epos = 0, esize = 0, mpos = 0, msize = 0;
    H5Tget_fields(type, &spos, &epos, &esize, &mpos, &msize);
    const std::size_t ebias = H5Tget_ebias(type);
    if (size == 2) t.ieee = spos == 15 && epos == 10 && esize == 5 && mpos == 0 && msize == 10 && ebias == 15;
    if (size == 4) t.ieee = spos == 31 && epos == 23 && esize == 8 && mpos == 0 && msize == 23 && ebias == 127;
    if (size == 8) t.ieee = spos == 63 && epos == 52 && esize == 11 && mpos == 0 && msize == 52 && ebias == 1023;
    return t;
  }
  const char* name = cls == H5T_STRING     ? "a string"
                     : cls == H5T_COMPOUND ? "a compound"
                     : cls == H5T_ARRAY    ? "a nested array"
                     : cls == H5T_ENUM     ? "an enum"
                                           : "a non-numeric";
  return Status::NotImplemented(what, " has ", name, " type; only integer and float values can be imported");
}

std::string NumTypeName(const NumType& t) {
  const std::string bits = std::to_string(t.size * 8);
  switch (t.kind) {
    case NumKind::kSigned: return "int" + bits;
    case NumKind::kUnsigned: return "uint" + bits;
    case NumKind::kFloat: return (t.ieee ? "float" : "nonstandard float") + bits;
  }
  return "?";
}

Result<DType> NaturalDType(const NumType& t) {
  switch (t.kind) {
    case NumKind::kSigned:
      return t.size == 1 ? DType::kInt8 : t.size == 2 ? DType::kInt16 : t.size == 4 ? DType::kInt32 : DType::kInt64;
    case NumKind::kUnsigned:
      return t.size == 1 ? DType::kUInt8 : t.size == 2 ? DType::kUInt16 : t.size == 4 ? DType::kUInt32 : DType::kUInt64;
    case NumKind::kFloat:
      if (!t.ieee) break;
      return t.size == 2 ? DType::kFloat16 : t.size == 4 ? DType::kFloat32 : DType::kFloat64;
  }
  return Status::NotImplemented("no sedpack dtype for ", NumTypeName(t));
}

std::string ResolvedSource::Where() const { return file + ": " + spec.Describe(); }

Result<ResolvedSource> Resolve(hid_t file, const std::string& file_name, const Hdf5Source& spec) {
  ResolvedSource r;
  r.file = file_name;
  r.spec = spec;
  const std::string where = r.Where();
  if (!ObjectExists(file, spec.dataset)) {
    return Status::NotFound(file_name, ": no dataset /", spec.dataset, " in the file");
  }
  Handle ds(H5Dopen2(file, spec.dataset.c_str(), H5P_DEFAULT));
  if (!ds.valid()) {
    return Status::InvalidArgument(WithHdf5Reason(file_name + ": /" + spec.dataset + " is not a dataset"));
  }
  Handle space(H5Dget_space(ds.get()));
  const int rank = H5Sget_simple_extent_ndims(space.get());
  if (rank < 1 || rank > kMaxRank) {
    return Status::InvalidArgument(file_name, ": /", spec.dataset, " has ", rank,
                                   " dimensions; a source needs rows (1 to ", kMaxRank, " dimensions)");
  }
  r.dims.resize(static_cast<std::size_t>(rank));
  H5Sget_simple_extent_dims(space.get(), r.dims.data(), nullptr);
  r.rows = r.dims[0];

  Handle type(H5Dget_type(ds.get()));
  Handle elem;
  if (!spec.field.empty()) {
    if (H5Tget_class(type.get()) != H5T_COMPOUND) {
      return Status::InvalidArgument(file_name, ": /", spec.dataset,
                                     " is not a compound dataset, so it has no field \"", spec.field, "\"");
    }
    const int idx = H5Tget_member_index(type.get(), spec.field.c_str());
    if (idx < 0) {
      LastError();
      std::string names;
      const int n = H5Tget_nmembers(type.get());
      for (int i = 0; i < n; ++i) {
        char* name = H5Tget_member_name(type.get(), static_cast<unsigned>(i));
        if (name) {
          names += (names.empty() ? "" : ", ") + std::string(name);
          H5free_memory(name);
        }
      }
      return Status::NotFound(file_name, ": /", spec.dataset, " has no field \"", spec.field,
                              "\" (fields: ", names, ")");
    }
    Handle member(H5Tget_member_type(type.get(), static_cast<unsigned>(idx)));
    if (H5Tget_class(member.get()) == H5T_ARRAY) {
      const int nd = H5Tget_array_ndims(member.get());
      if (nd < 1 || nd > kMaxRank) return Status::InvalidArgument(where, ": unsupported array field");
      r.field_dims.resize(static_cast<std::size_t>(nd));
      H5Tget_array_dims2(member.get(), r.field_dims.data());
      elem = Handle(H5Tget_super(member.get()));
    } else {
      elem = std::move(member);
    }
  } else {
    elem = std::move(type);
  }
  SEDPACK_ASSIGN_OR_RETURN(r.type, DescribeNumType(elem.get(), where));

  for (std::size_t i = 1; i < r.dims.size(); ++i) r.row_shape.push_back(static_cast<std::int64_t>(r.dims[i]));
  if (spec.columns) {
    if (r.dims.size() < 2) {
      return Status::InvalidArgument(where, ": a column window needs a dataset of at least 2 dimensions; /",
                                     spec.dataset, " has 1");
    }
    const auto [a, b] = *spec.columns;
    if (static_cast<std::uint64_t>(b) > r.dims.back()) {
      return Status::InvalidArgument(where, ": the window ends at column ", b, " but rows have ",
                                     r.dims.back(), " columns");
    }
    r.row_shape.back() = b - a;
  }
  for (hsize_t d : r.field_dims) r.row_shape.push_back(static_cast<std::int64_t>(d));
  r.row_elements = 1;
  for (std::int64_t d : r.row_shape) {
    if (d != 0 && r.row_elements > std::numeric_limits<std::uint64_t>::max() / static_cast<std::uint64_t>(d)) {
      return Status::InvalidArgument(where, ": row size overflows");
    }
    r.row_elements *= static_cast<std::uint64_t>(d);
  }

  Handle dcpl(H5Dget_create_plist(ds.get()));
  if (dcpl.valid() && H5Pget_layout(dcpl.get()) == H5D_CHUNKED) {
    std::vector<hsize_t> chunk(r.dims.size());
    if (H5Pget_chunk(dcpl.get(), rank, chunk.data()) == rank) {
      r.chunk_rows = chunk[0];
      Handle ftype(H5Dget_type(ds.get()));
      r.chunk_bytes = H5Tget_size(ftype.get());
      for (std::size_t i = 0; i < chunk.size(); ++i) {
        r.chunk_bytes *= chunk[i];
        if (i > 0 && chunk[i] > 0) r.chunks_per_row_band *= (r.dims[i] + chunk[i] - 1) / chunk[i];
      }
    }
  }
  LastError();
  return r;
}

ReadAs ChooseReadAs(const NumType& src, DType dest) {
  const std::size_t dsize = DTypeItemSize(dest);
  const bool dest_float = dest == DType::kFloat16 || dest == DType::kFloat32 || dest == DType::kFloat64;
  const bool dest_unsigned = dest == DType::kUInt8 || dest == DType::kUInt16 || dest == DType::kUInt32 ||
                             dest == DType::kUInt64;
  if (src.size == dsize) {
    if (src.kind == NumKind::kFloat && dest_float && src.ieee) return ReadAs::kDirect;
    if (src.kind == NumKind::kUnsigned && dest_unsigned) return ReadAs::kDirect;
    if (src.kind == NumKind::kSigned && !dest_float && !dest_unsigned) return ReadAs::kDirect;
  }
  switch (src.kind) {
    case NumKind::kSigned: return ReadAs::kInt64;
    case NumKind::kUnsigned: return ReadAs::kUInt64;
    case NumKind::kFloat: return ReadAs::kFloat64;
  }
  return ReadAs::kFloat64;
}

namespace {

// A little-endian IEEE binary16 memory type (HDF5 1.10 has no predefined one).
Handle HalfType() {
  Handle t(H5Tcopy(H5T_IEEE_F32LE));
  H5Tset_fields(t.get(), 15, 10, 5, 0, 10);
  H5Tset_size(t.get(), 2);
  H5Tset_ebias(t.get(), 15);
  return t;
}

}  // namespace

Handle NativeType(DType d) {
  switch (d) {
    case DType::kInt8: return Handle(H5Tcopy(H5T_NATIVE_INT8));
    case DType::kInt16: return Handle(H5Tcopy(H5T_NATIVE_INT16));
    case DType::kInt32: return Handle(H5Tcopy(H5T_NATIVE_INT32));
    case DType::kInt64: case DType::kInt: return Handle(H5Tcopy(H5T_NATIVE_INT64));
    case DType::kUInt8: return Handle(H5Tcopy(H5T_NATIVE_UINT8));
    case DType::kUInt16: return Handle(H5Tcopy(H5T_NATIVE_UINT16));
    case DType::kUInt32: return Handle(H5Tcopy(H5T_NATIVE_UINT32));
    case DType::kUInt64: return Handle(H5Tcopy(H5T_NATIVE_UINT64));
    case DType::kFloat16: return HalfType();
    case DType::kFloat32: return Handle(H5Tcopy(H5T_NATIVE_FLOAT));
    case DType::kFloat64: return Handle(H5Tcopy(H5T_NATIVE_DOUBLE));
    default: return Handle();
  }
}

Result<BlockReader> BlockReader::Open(hid_t file, const ResolvedSource& src, DType dest,
                                      std::uint64_t cache_bytes, bool wide_only) {
  BlockReader b;
  b.src_ = &src;
  Handle dapl(H5Pcreate(H5P_DATASET_ACCESS));
  if (src.chunk_rows > 0 && dapl.valid()) {
    // Enough cache for one band of chunks, so a block that ends inside a chunk
    // does not decompress it again for the next block. 12421 is a prime slot
    // count as HDF5 advises.
    H5Pset_chunk_cache(dapl.get(), 12421, static_cast<std::size_t>(cache_bytes), 1.0);
  }
  b.dataset_ = Handle(H5Dopen2(file, src.spec.dataset.c_str(), dapl.valid() ? dapl.get() : H5P_DEFAULT));
  if (!b.dataset_.valid()) {
    return Status::IOError(WithHdf5Reason(src.Where() + ": cannot open the dataset"));
  }
  b.read_as_ = ChooseReadAs(src.type, dest);
  if (wide_only && b.read_as_ == ReadAs::kDirect) {
    b.read_as_ = src.type.kind == NumKind::kFloat    ? ReadAs::kFloat64
                 : src.type.kind == NumKind::kSigned ? ReadAs::kInt64
                                                     : ReadAs::kUInt64;
  }
  switch (b.read_as_) {
    case ReadAs::kDirect: b.elem_type_ = NativeType(dest); b.mem_item_size_ = DTypeItemSize(dest); break;
    case ReadAs::kInt64: b.elem_type_ = Handle(H5Tcopy(H5T_NATIVE_INT64)); b.mem_item_size_ = 8; break;
    case ReadAs::kUInt64: b.elem_type_ = Handle(H5Tcopy(H5T_NATIVE_UINT64)); b.mem_item_size_ = 8; break;
    case ReadAs::kFloat64: b.elem_type_ = Handle(H5Tcopy(H5T_NATIVE_DOUBLE)); b.mem_item_size_ = 8; break;
  }
  if (!b.elem_type_.valid()) return Status::Internal(src.Where(), ": no memory type");
  if (src.spec.field.empty()) {
    b.mem_type_ = Handle(H5Tcopy(b.elem_type_.get()));
  } else {
    // A one-member compound: HDF5 picks the field out during the read.
    Handle member;
    if (src.field_dims.empty()) {
      member = Handle(H5Tcopy(b.elem_type_.get()));
    } else {
      member = Handle(H5Tarray_create2(b.elem_type_.get(), static_cast<unsigned>(src.field_dims.size()),
                                       src.field_dims.data()));
    }
    const std::size_t bytes = H5Tget_size(member.get());
    b.mem_type_ = Handle(H5Tcreate(H5T_COMPOUND, bytes));
    if (H5Tinsert(b.mem_type_.get(), src.spec.field.c_str(), 0, member.get()) < 0) {
      return Status::Internal(WithHdf5Reason(src.Where() + ": cannot build the memory type"));
    }
  }
  return b;
}

Status BlockReader::Read(std::uint64_t first, std::uint64_t count, std::vector<std::byte>* out) {
  const ResolvedSource& src = *src_;
  if (first > src.rows || count > src.rows - first) {
    return Status::Internal(src.Where(), ": rows [", first, ", ", first + count, ") outside ", src.rows);
  }
  out->resize(count * src.row_elements * mem_item_size_);
  if (count == 0 || src.row_elements == 0) return Status::OK();
  const std::size_t rank = src.dims.size();
  std::vector<hsize_t> start(rank, 0), block(src.dims);
  start[0] = first;
  block[0] = count;
  if (src.spec.columns) {
    start[rank - 1] = static_cast<hsize_t>(src.spec.columns->first);
    block[rank - 1] = static_cast<hsize_t>(src.spec.columns->second - src.spec.columns->first);
  }
  Handle fspace(H5Dget_space(dataset_.get()));
  Handle mspace(H5Screate_simple(static_cast<int>(rank), block.data(), nullptr));
  if (!fspace.valid() || !mspace.valid() ||
      H5Sselect_hyperslab(fspace.get(), H5S_SELECT_SET, start.data(), nullptr, block.data(), nullptr) < 0) {
    return Status::Internal(WithHdf5Reason(src.Where() + ": cannot select rows"));
  }
  if (H5Dread(dataset_.get(), mem_type_.get(), mspace.get(), fspace.get(), H5P_DEFAULT, out->data()) < 0) {
    return Status::IOError(WithHdf5Reason(src.Where() + ": reading rows " + std::to_string(first) + " to " +
                                          std::to_string(first + count) + " failed"));
  }
  return Status::OK();
}

}  // namespace sedpack::h5
