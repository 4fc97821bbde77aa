// SPDX-License-Identifier: Apache-2.0
#include <fcntl.h>

#include <algorithm>
#include <cerrno>
#include <limits>
#include <cstring>
#include <string>

#include "hdf5/fs_driver_internal.h"
#include "hdf5/h5_internal.h"
#include "sedpack/io/file_system.h"
#include "shard/shard_internal.h"

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
    case H5I_FILE: CloseFile(id_); break;
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
  FileSystem& files = FileSystemOr(fs);
  const int fd = files.Open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Status::NotFound(path, ": cannot open the file: ", std::strerror(errno));
  files.Close(fd);
  // H5Fis_hdf5 would read the file with HDF5's own driver, around `files`:
  // a file without the signature is told apart by the error of the open.
  SEDPACK_ASSIGN_OR_RETURN(Handle fapl, FileAccessFor(&files));
  H5Pset_file_locking(fapl.get(), false, true);
  Handle file(H5Fopen(path.c_str(), H5F_ACC_RDONLY, fapl.get()));
  if (!file.valid()) {
    const std::string why = LastError();
    if (why.find("signature") != std::string::npos) return Status::InvalidArgument(path, ": not an HDF5 file");
    return Status::IOError(path, ": cannot open as HDF5", why.empty() ? "" : " (HDF5: " + why + ")");
  }
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

bool ReadStringAttribute(hid_t object, const char* name, std::size_t limit, std::string* out) {
  if (H5Aexists(object, name) <= 0) {
    LastError();
    return false;
  }
  Handle attr(H5Aopen(object, name, H5P_DEFAULT));
  Handle type(attr.valid() ? H5Aget_type(attr.get()) : H5I_INVALID_HID);
  Handle space(attr.valid() ? H5Aget_space(attr.get()) : H5I_INVALID_HID);
  bool ok = type.valid() && space.valid() && H5Tget_class(type.get()) == H5T_STRING &&
            H5Sget_simple_extent_npoints(space.get()) == 1;
  if (ok && H5Tis_variable_str(type.get()) > 0) {
    Handle mem(H5Tcopy(H5T_C_S1));
    H5Tset_size(mem.get(), H5T_VARIABLE);
    H5Tset_cset(mem.get(), H5Tget_cset(type.get()));
    char* p = nullptr;
    ok = H5Aread(attr.get(), mem.get(), &p) >= 0;
    if (ok && p) {
      const std::size_t n = strnlen(p, limit + 1);
      ok = n <= limit;
      if (ok) out->assign(p, n);
    }
    if (p) H5Dvlen_reclaim(mem.get(), space.get(), H5P_DEFAULT, &p);
  } else if (ok) {
    const std::size_t n = H5Tget_size(type.get());
    ok = n <= limit;
    if (ok) {
      std::string buf(n, '\0');
      ok = H5Aread(attr.get(), type.get(), buf.data()) >= 0;
      buf.resize(std::min(buf.size(), std::strlen(buf.c_str())));
      if (ok) *out = std::move(buf);
    }
  }
  LastError();
  return ok;
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
  return Status::NotImplemented(what, " has ", name,
                                " type; import-hdf5 reads numbers, strings, opaque data and byte sequences");
}

namespace {

// h5py stores numpy bools as a 1-byte enum {FALSE = 0, TRUE = 1}.
bool IsBoolEnum(hid_t type) {
  if (H5Tget_nmembers(type) != 2 || H5Tget_size(type) != 1) return false;
  for (unsigned i = 0; i < 2; ++i) {
    char* name = H5Tget_member_name(type, i);
    const std::string n = name ? name : "";
    if (name) H5free_memory(name);
    unsigned char value = 0xff;
    if (H5Tget_member_value(type, i, &value) < 0) {
      LastError();
      return false;
    }
    if (!((n == "FALSE" && value == 0) || (n == "TRUE" && value == 1))) return false;
  }
  return true;
}

}  // namespace

Result<ElemType> DescribeElemType(hid_t type, const std::string& what) {
  ElemType e;
  const H5T_class_t cls = H5Tget_class(type);
  if (cls == H5T_STRING) {
    const htri_t var = H5Tis_variable_str(type);
    e.pad = H5Tget_strpad(type);
    e.cset = H5Tget_cset(type);
    if (var < 0 || e.pad < 0 || e.cset < 0) {
      return Status::InvalidArgument(WithHdf5Reason(what + ": unreadable string type"));
    }
    if (e.cset != H5T_CSET_ASCII && e.cset != H5T_CSET_UTF8) {
      return Status::NotImplemented(what, ": string character set ", static_cast<int>(e.cset),
                                    " is not supported (ASCII and UTF-8 are)");
    }
    e.kind = var > 0 ? ElemKind::kVarString : ElemKind::kFixedString;
    e.size = var > 0 ? 0 : H5Tget_size(type);
    return e;
  }
  if (cls == H5T_OPAQUE) {
    e.kind = ElemKind::kOpaque;
    e.size = H5Tget_size(type);
    if (char* tag = H5Tget_tag(type)) {
      e.tag = tag;
      H5free_memory(tag);
    }
    LastError();
    return e;
  }
  if (cls == H5T_VLEN) {
    Handle base(H5Tget_super(type));
    if (base.valid() && H5Tget_class(base.get()) == H5T_INTEGER && H5Tget_size(base.get()) == 1) {
      e.kind = ElemKind::kVlenBytes;
      SEDPACK_ASSIGN_OR_RETURN(e.num, DescribeNumType(base.get(), what));
      return e;
    }
    LastError();
    return Status::NotImplemented(what, " holds variable-length sequences of other than 1-byte integers;",
                                  " only byte sequences (vlen uint8) can be imported");
  }
  if (cls == H5T_ENUM) {
    // HDF5 converts enum values to integers on read.
    Handle base(H5Tget_super(type));
    if (!base.valid() || H5Tget_class(base.get()) != H5T_INTEGER) {
      LastError();
      return Status::NotImplemented(what, " is an enum of other than integers");
    }
    SEDPACK_ASSIGN_OR_RETURN(e.num, DescribeNumType(base.get(), what));
    e.is_enum = true;
    e.bool_enum = IsBoolEnum(type);
    return e;
  }
  SEDPACK_ASSIGN_OR_RETURN(e.num, DescribeNumType(type, what));
  return e;
}

std::string ElemType::Name() const {
  const char* charset = cset == H5T_CSET_UTF8 ? "UTF-8" : "ASCII";
  switch (kind) {
    case ElemKind::kNumber:
      return bool_enum ? "bool (enum of " + NumTypeName(num) + ")"
                       : is_enum ? "enum of " + NumTypeName(num) : NumTypeName(num);
    case ElemKind::kVarString:
      // Not `std::string("string (variable, ") + charset + ")"`: gcc 12 gives a
      // false -Warray-bounds on a short literal's string appended to.
      return "string (variable, " + std::string(charset) + ")";
    case ElemKind::kFixedString: {
      const char* p = pad == H5T_STR_NULLPAD ? "NUL-padded" : pad == H5T_STR_SPACEPAD ? "space-padded"
                                                                                     : "NUL-terminated";
      return "string (" + std::to_string(size) + " bytes, " + charset + ", " + p + ")";
    }
    case ElemKind::kOpaque: return "opaque (" + std::to_string(size) + " bytes)";
    case ElemKind::kVlenBytes: return "vlen " + NumTypeName(num);
  }
  return "?";
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

namespace {

// The memory type of a byte-like element: the file's own layout, so HDF5
// copies the bytes as they are (no string padding or charset conversion).
Handle ByteElemType(const ElemType& e, std::size_t* item_size) {
  Handle t;
  switch (e.kind) {
    case ElemKind::kFixedString:
    case ElemKind::kVarString:
      t = Handle(H5Tcopy(H5T_C_S1));
      if (H5Tset_size(t.get(), e.kind == ElemKind::kVarString ? H5T_VARIABLE : e.size) < 0 ||
          H5Tset_strpad(t.get(), e.pad) < 0 || H5Tset_cset(t.get(), e.cset) < 0) {
        return Handle();
      }
      *item_size = e.kind == ElemKind::kVarString ? sizeof(char*) : e.size;
      return t;
    case ElemKind::kOpaque:
      t = Handle(H5Tcreate(H5T_OPAQUE, e.size));
      if (!e.tag.empty() && H5Tset_tag(t.get(), e.tag.c_str()) < 0) return Handle();
      *item_size = e.size;
      return t;
    case ElemKind::kVlenBytes:
      *item_size = sizeof(hvl_t);
      return Handle(H5Tvlen_create(e.num.kind == NumKind::kSigned ? H5T_NATIVE_INT8 : H5T_NATIVE_UINT8));
    case ElemKind::kNumber: break;
  }
  return Handle();
}

// The length of a fixed-length string once its padding is taken off.
std::size_t UnpaddedLength(const std::byte* p, std::size_t n, H5T_str_t pad) {
  if (pad == H5T_STR_NULLTERM) {
    const void* nul = std::memchr(p, 0, n);
    return nul ? static_cast<std::size_t>(static_cast<const std::byte*>(nul) - p) : n;
  }
  const std::byte fill = pad == H5T_STR_SPACEPAD ? std::byte{' '} : std::byte{0};
  while (n > 0 && p[n - 1] == fill) --n;
  return n;
}


// Rows sampled to estimate the memory of variable-length values.
constexpr hsize_t kSampleRows = 256;

Result<std::uint64_t> EstimateBytesPerRow(hid_t ds, const ResolvedSource& r) {
  std::size_t item = 0;
  Handle elem = ByteElemType(r.elem, &item);
  const bool vlen = r.elem.kind == ElemKind::kVarString || r.elem.kind == ElemKind::kVlenBytes;
  if (!vlen || r.rows == 0 || r.row_elements != 1) return std::max<std::uint64_t>(item, 1);
  Handle mem = r.spec.field.empty() ? Handle(H5Tcopy(elem.get())) : Handle(H5Tcreate(H5T_COMPOUND, item));
  if (!r.spec.field.empty()) H5Tinsert(mem.get(), r.spec.field.c_str(), 0, elem.get());
  std::vector<hsize_t> start(r.dims.size(), 0), count(r.dims);
  count[0] = std::min<hsize_t>(r.rows, kSampleRows);
  if (r.spec.columns) {
    start.back() = static_cast<hsize_t>(r.spec.columns->first);
    count.back() = static_cast<hsize_t>(r.spec.columns->second - r.spec.columns->first);
  }
  Handle space(H5Dget_space(ds));
  hsize_t need = 0;
  if (!mem.valid() || !space.valid() ||
      H5Sselect_hyperslab(space.get(), H5S_SELECT_SET, start.data(), nullptr, count.data(), nullptr) < 0 ||
      H5Dvlen_get_buf_size(ds, mem.get(), space.get(), &need) < 0) {
    return Status::IOError(WithHdf5Reason(r.Where() + ": cannot size the variable-length values"));
  }
  return item + (need + count[0] - 1) / count[0];
}

}  // namespace

std::string ResolvedSource::Where() const { return file + ": " + spec.Describe(); }

Result<ResolvedSource> Resolve(hid_t file, const std::string& file_name, const Hdf5Source& spec) {
  ResolvedSource r;
  r.file = file_name;
  r.spec = spec;
  const std::string where = r.Where();
  TakeIoError();
  if (!ObjectExists(file, spec.dataset)) {
    const std::string io = TakeIoError();
    if (!io.empty()) return Status::IOError(file_name, ": cannot read /", spec.dataset, ": ", io);
    return Status::NotFound(file_name, ": no dataset /", spec.dataset, " in the file");
  }
  Handle ds(H5Dopen2(file, spec.dataset.c_str(), H5P_DEFAULT));
  if (!ds.valid()) {
    const std::string io = TakeIoError();
    if (!io.empty()) return Status::IOError(file_name, ": cannot open /", spec.dataset, ": ", io);
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
  SEDPACK_ASSIGN_OR_RETURN(r.elem, DescribeElemType(elem.get(), where));
  r.type = r.elem.num;

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
  if (r.elem.is_bytes()) {
    SEDPACK_ASSIGN_OR_RETURN(r.bytes_per_row, EstimateBytesPerRow(ds.get(), r));
  }
  LastError();
  return r;
}

ReadAs ChooseReadAs(const NumType& src, DType dest) {
  // bool has no HDF5 memory type: read wide, then only 0 and 1 convert.
  const bool wide = dest == DType::kBool;
  const std::size_t dsize = DTypeItemSize(dest);
  const bool dest_float = dest == DType::kFloat16 || dest == DType::kFloat32 || dest == DType::kFloat64;
  const bool dest_unsigned = dest == DType::kUInt8 || dest == DType::kUInt16 || dest == DType::kUInt32 ||
                             dest == DType::kUInt64;
  if (src.size == dsize && !wide) {
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

void BlockReader::ChooseNumberType(DType dest, bool wide_only) {
  const ResolvedSource& src = *src_;
  read_as_ = ChooseReadAs(src.type, dest);
  if (wide_only && read_as_ == ReadAs::kDirect) {
    read_as_ = src.type.kind == NumKind::kFloat    ? ReadAs::kFloat64
                 : src.type.kind == NumKind::kSigned ? ReadAs::kInt64
                                                     : ReadAs::kUInt64;
  }
  switch (read_as_) {
    case ReadAs::kDirect: elem_type_ = NativeType(dest); mem_item_size_ = DTypeItemSize(dest); break;
    case ReadAs::kInt64: elem_type_ = Handle(H5Tcopy(H5T_NATIVE_INT64)); mem_item_size_ = 8; break;
    case ReadAs::kUInt64: elem_type_ = Handle(H5Tcopy(H5T_NATIVE_UINT64)); mem_item_size_ = 8; break;
    case ReadAs::kFloat64: elem_type_ = Handle(H5Tcopy(H5T_NATIVE_DOUBLE)); mem_item_size_ = 8; break;
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
  if (src.elem.is_bytes()) {
    b.elem_type_ = ByteElemType(src.elem, &b.mem_item_size_);
  } else {
    b.ChooseNumberType(dest, wide_only);
  }
  if (!b.elem_type_.valid()) return Status::Internal(WithHdf5Reason(src.Where() + ": no memory type"));
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

Status BlockReader::SelectRows(std::uint64_t first, std::uint64_t count, Handle* fspace, Handle* mspace) const {
  const ResolvedSource& src = *src_;
  const std::size_t rank = src.dims.size();
  std::vector<hsize_t> start(rank, 0), block(src.dims);
  start[0] = first;
  block[0] = count;
  if (src.spec.columns) {
    start[rank - 1] = static_cast<hsize_t>(src.spec.columns->first);
    block[rank - 1] = static_cast<hsize_t>(src.spec.columns->second - src.spec.columns->first);
  }
  *fspace = Handle(H5Dget_space(dataset_.get()));
  *mspace = Handle(H5Screate_simple(static_cast<int>(rank), block.data(), nullptr));
  if (!fspace->valid() || !mspace->valid() ||
      H5Sselect_hyperslab(fspace->get(), H5S_SELECT_SET, start.data(), nullptr, block.data(), nullptr) < 0) {
    return Status::Internal(WithHdf5Reason(src.Where() + ": cannot select rows"));
  }
  return Status::OK();
}

Status BlockReader::Read(std::uint64_t first, std::uint64_t count, std::vector<std::byte>* out) {
  const ResolvedSource& src = *src_;
  if (first > src.rows || count > src.rows - first) {
    return Status::Internal(src.Where(), ": rows [", first, ", ", first + count, ") outside ", src.rows);
  }
  out->resize(count * src.row_elements * mem_item_size_);
  if (count == 0 || src.row_elements == 0) return Status::OK();
  Handle fspace, mspace;
  SEDPACK_RETURN_NOT_OK(SelectRows(first, count, &fspace, &mspace));
  if (H5Dread(dataset_.get(), mem_type_.get(), mspace.get(), fspace.get(), H5P_DEFAULT, out->data()) < 0) {
    return Status::IOError(WithHdf5Reason(src.Where() + ": reading rows " + std::to_string(first) + " to " +
                                          std::to_string(first + count) + " failed"));
  }
  return Status::OK();
}

}  // namespace sedpack::h5

namespace sedpack::h5 {

Status BlockReader::AppendValue(std::uint64_t row, const std::byte* p, std::uint64_t n, const ByteRowRules& rules,
                                ByteRows* out) const {
  const ResolvedSource& src = *src_;
  if (n > rules.max_value_bytes) {
    return Status::InvalidArgument(src.Where(), ": row ", row, ": a value of ", n, " bytes, more than the ",
                                   rules.max_value_bytes, " allowed");
  }
  if (rules.exact_bytes != 0 && n != rules.exact_bytes) {
    return Status::InvalidArgument(src.Where(), ": row ", row, ": ", n, " bytes, but the attribute holds exactly ",
                                   rules.exact_bytes, " bytes a value (bytes of shape (", rules.exact_bytes,
                                   ",)); use shape [] for values of any length");
  }
  if (rules.utf8 && !shard_internal::IsValidUtf8({reinterpret_cast<const char*>(p), static_cast<std::size_t>(n)})) {
    return Status::InvalidArgument(src.Where(), ": row ", row,
                                   ": the value is not valid UTF-8, so it cannot be a str; "
                                   "map it with \"dtype\": \"bytes\" to import the raw bytes");
  }
  if (out->data.size() + n > rules.max_block_bytes) {
    return Status::InvalidArgument(src.Where(), ": row ", row, ": the block of rows holds more than ",
                                   rules.max_block_bytes, " bytes of values (raise the memory budget)");
  }
  out->data.insert(out->data.end(), p, p + n);
  out->offsets.push_back(out->data.size());
  return Status::OK();
}

Status BlockReader::CopyFixed(const std::vector<std::byte>& raw, std::uint64_t first, std::uint64_t count,
                              const ByteRowRules& rules, ByteRows* out) const {
  const ElemType& e = src_->elem;
  for (std::uint64_t i = 0; i < count; ++i) {
    const std::byte* p = raw.data() + i * mem_item_size_;
    std::size_t n = mem_item_size_;
    if (rules.strip_padding && e.kind == ElemKind::kFixedString) n = UnpaddedLength(p, n, e.pad);
    SEDPACK_RETURN_NOT_OK(AppendValue(first + i, p, n, rules, out));
  }
  return Status::OK();
}

Status BlockReader::ReadBytes(std::uint64_t first, std::uint64_t count, const ByteRowRules& rules, ByteRows* out) {
  const ResolvedSource& src = *src_;
  out->data.clear();
  out->offsets.assign(1, 0);
  if (first > src.rows || count > src.rows - first) {
    return Status::Internal(src.Where(), ": rows [", first, ", ", first + count, ") outside ", src.rows);
  }
  if (!src.elem.is_bytes() || src.row_elements != 1) {
    return Status::Internal(src.Where(), ": not one string or byte value a row");
  }
  if (count == 0) return Status::OK();
  Handle fspace, mspace;
  SEDPACK_RETURN_NOT_OK(SelectRows(first, count, &fspace, &mspace));
  const std::string rows_text = "rows " + std::to_string(first) + " to " + std::to_string(first + count);
  if (count > rules.max_block_bytes / std::max<std::size_t>(mem_item_size_, 1)) {
    return Status::InvalidArgument(src.Where(), ": ", rows_text, " of ", mem_item_size_,
                                   " bytes each are more than the ", rules.max_block_bytes, " bytes a block may hold (raise the memory budget)");
  }
  std::vector<std::byte> raw(count * mem_item_size_);
  const bool vlen = src.elem.kind == ElemKind::kVarString || src.elem.kind == ElemKind::kVlenBytes;
  if (!vlen) {
    if (H5Dread(dataset_.get(), mem_type_.get(), mspace.get(), fspace.get(), H5P_DEFAULT, raw.data()) < 0) {
      return Status::IOError(WithHdf5Reason(src.Where() + ": reading " + rows_text + " failed"));
    }
    return CopyFixed(raw, first, count, rules, out);
  }
  // HDF5 allocates variable-length data itself: ask how much first.
  hsize_t need = 0;
  if (H5Dvlen_get_buf_size(dataset_.get(), mem_type_.get(), fspace.get(), &need) < 0) {
    return Status::IOError(WithHdf5Reason(src.Where() + ": sizing " + rows_text + " failed"));
  }
  if (need > rules.max_block_bytes) {
    return Status::InvalidArgument(src.Where(), ": ", rows_text, " hold ", need,
                                   " bytes of variable-length data, more than the ", rules.max_block_bytes,
                                   " bytes a block may hold (raise the memory budget)");
  }
  // The buffer starts zeroed, so reclaiming after a failed read frees only
  // what HDF5 did allocate.
  const herr_t read = H5Dread(dataset_.get(), mem_type_.get(), mspace.get(), fspace.get(), H5P_DEFAULT, raw.data());
  Status st = read < 0 ? Status::IOError(WithHdf5Reason(src.Where() + ": reading " + rows_text + " failed"))
                       : Status::OK();
  for (std::uint64_t i = 0; st.ok() && i < count; ++i) {
    const std::byte* elem = raw.data() + i * mem_item_size_;
    if (src.elem.kind == ElemKind::kVarString) {
      const char* p = nullptr;
      std::memcpy(&p, elem, sizeof(p));
      // A null pointer is how HDF5 stores a string never written: empty.
      const std::size_t n = p ? std::strlen(p) : 0;
      st = AppendValue(first + i, reinterpret_cast<const std::byte*>(p), n, rules, out);
    } else {
      hvl_t v;
      std::memcpy(&v, elem, sizeof(v));
      if (v.len > 0 && v.p == nullptr) {
        st = Status::Corruption(src.Where(), ": row ", first + i, ": a sequence of ", v.len, " bytes without data");
      } else {
        st = AppendValue(first + i, static_cast<const std::byte*>(v.p), v.len, rules, out);
      }
    }
  }
  H5Dvlen_reclaim(mem_type_.get(), mspace.get(), H5P_DEFAULT, raw.data());
  LastError();
  return st;
}

}  // namespace sedpack::h5
