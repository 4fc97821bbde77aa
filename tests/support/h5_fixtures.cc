// SPDX-License-Identifier: Apache-2.0
#include "support/h5_fixtures.h"

#include <hdf5.h>

#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "sedpack/value.h"

namespace sedpack::testing {
namespace {

std::uint64_t Mix(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

void Check(herr_t rc, const char* what) {
  if (rc < 0) throw std::runtime_error(std::string("HDF5 fixture: ") + what);
}
hid_t CheckId(hid_t id, const char* what) {
  if (id < 0) throw std::runtime_error(std::string("HDF5 fixture: ") + what);
  return id;
}

// IEEE half, little-endian, laid out as h5py writes numpy float16.
hid_t HalfType() {
  hid_t t = CheckId(H5Tcopy(H5T_IEEE_F32LE), "copy");
  Check(H5Tset_fields(t, 15, 10, 5, 0, 10), "fields");
  Check(H5Tset_size(t, 2), "size");
  Check(H5Tset_ebias(t, 15), "ebias");
  return t;
}

// Element types used by the fixtures.
enum class Elem { kU8, kI8, kF16, kF32, kF64, kU32 };

hid_t ElemType(Elem e) {
  switch (e) {
    case Elem::kU8: return H5Tcopy(H5T_STD_U8LE);
    case Elem::kI8: return H5Tcopy(H5T_STD_I8LE);
    case Elem::kF16: return HalfType();
    case Elem::kF32: return H5Tcopy(H5T_IEEE_F32LE);
    case Elem::kF64: return H5Tcopy(H5T_IEEE_F64LE);
    case Elem::kU32: return H5Tcopy(H5T_STD_U32LE);
  }
  return -1;
}

std::size_t ElemSize(Elem e) {
  switch (e) {
    case Elem::kU8: case Elem::kI8: return 1;
    case Elem::kF16: return 2;
    case Elem::kF32: case Elem::kU32: return 4;
    case Elem::kF64: return 8;
  }
  return 0;
}

void StoreElem(Elem e, double v, std::byte* out) {
  switch (e) {
    case Elem::kU8: { auto x = static_cast<std::uint8_t>(v); std::memcpy(out, &x, 1); break; }
    case Elem::kI8: { auto x = static_cast<std::int8_t>(v); std::memcpy(out, &x, 1); break; }
    case Elem::kF16: { auto x = Float16::FromFloat(static_cast<float>(v)); std::memcpy(out, &x.bits, 2); break; }
    case Elem::kF32: { auto x = static_cast<float>(v); std::memcpy(out, &x, 4); break; }
    case Elem::kF64: std::memcpy(out, &v, 8); break;
    case Elem::kU32: { auto x = static_cast<std::uint32_t>(v); std::memcpy(out, &x, 4); break; }
  }
}

hid_t CreateProps(bool chunked, int rank, const hsize_t* dims, std::uint64_t chunk_rows, bool deflate) {
  hid_t dcpl = CheckId(H5Pcreate(H5P_DATASET_CREATE), "dcpl");
  if (chunked && dims[0] > 0) {
    std::vector<hsize_t> chunk(dims, dims + rank);
    chunk[0] = std::min<hsize_t>(chunk_rows, dims[0]);
    Check(H5Pset_chunk(dcpl, rank, chunk.data()), "chunk");
    if (deflate) Check(H5Pset_deflate(dcpl, 1), "deflate");
  }
  return dcpl;
}

struct Field {
  std::string name;
  Elem elem;
  std::uint64_t count;  // 1: scalar member, else a 1-D array member
  ValueKind kind;
};

// A plain dataset rows x cols (cols 0: 1-D).
void WritePlain(hid_t loc, const std::string& name, const std::string& key, std::uint64_t rows,
                std::uint64_t cols, Elem elem, ValueKind kind, const H5FixtureSpec& spec) {
  const int rank = cols ? 2 : 1;
  hsize_t dims[2] = {rows, cols};
  hid_t space = CheckId(H5Screate_simple(rank, dims, nullptr), "space");
  hid_t type = ElemType(elem);
  hid_t dcpl = CreateProps(spec.chunked, rank, dims, spec.chunk_rows, /*deflate=*/cols > 0);
  hid_t ds = CheckId(H5Dcreate2(loc, name.c_str(), type, space, H5P_DEFAULT, dcpl, H5P_DEFAULT), name.c_str());
  const std::uint64_t per_row = cols ? cols : 1;
  std::vector<std::byte> buf(rows * per_row * ElemSize(elem));
  for (std::uint64_t r = 0; r < rows; ++r) {
    for (std::uint64_t c = 0; c < per_row; ++c) {
      StoreElem(elem, FixtureValue(spec.seed, key, r, c, kind), buf.data() + (r * per_row + c) * ElemSize(elem));
    }
  }
  if (rows > 0) Check(H5Dwrite(ds, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf.data()), "write");
  H5Dclose(ds);
  H5Pclose(dcpl);
  H5Tclose(type);
  H5Sclose(space);
}

void WriteCompound(hid_t loc, const std::string& name, const std::string& key, std::uint64_t rows,
                   const std::vector<Field>& fields, const H5FixtureSpec& spec) {
  std::size_t row_size = 0;
  std::vector<std::size_t> offsets;
  for (const Field& f : fields) {
    offsets.push_back(row_size);
    row_size += ElemSize(f.elem) * f.count;
  }
  hid_t type = CheckId(H5Tcreate(H5T_COMPOUND, row_size), "compound");
  for (std::size_t i = 0; i < fields.size(); ++i) {
    hid_t base = ElemType(fields[i].elem);
    hid_t member = base;
    if (fields[i].count > 1) {
      hsize_t n = fields[i].count;
      member = H5Tarray_create2(base, 1, &n);
    }
    Check(H5Tinsert(type, fields[i].name.c_str(), offsets[i], member), "insert");
    if (member != base) H5Tclose(member);
    H5Tclose(base);
  }
  hsize_t dims[1] = {rows};
  hid_t space = CheckId(H5Screate_simple(1, dims, nullptr), "space");
  hid_t dcpl = CreateProps(spec.chunked, 1, dims, spec.chunk_rows, false);
  hid_t ds = CheckId(H5Dcreate2(loc, name.c_str(), type, space, H5P_DEFAULT, dcpl, H5P_DEFAULT), name.c_str());
  std::vector<std::byte> buf(rows * row_size);
  for (std::uint64_t r = 0; r < rows; ++r) {
    for (std::size_t i = 0; i < fields.size(); ++i) {
      for (std::uint64_t e = 0; e < fields[i].count; ++e) {
        const bool fixed = spec.fixed_key && fields[i].name == "key";
        StoreElem(fields[i].elem,
                  FixtureValue(spec.seed, key + "." + fields[i].name, fixed ? 0 : r, e, fields[i].kind),
                  buf.data() + r * row_size + offsets[i] + e * ElemSize(fields[i].elem));
      }
    }
  }
  if (rows > 0) Check(H5Dwrite(ds, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf.data()), "write");
  H5Dclose(ds);
  H5Pclose(dcpl);
  H5Sclose(space);
  H5Tclose(type);
}

Elem TraceElem(TraceType t) {
  return t == TraceType::kInt8 ? Elem::kI8 : t == TraceType::kFloat16 ? Elem::kF16 : Elem::kF32;
}

std::vector<Field> MetadataFields(const H5FixtureSpec& spec, bool float_metadata, int masks) {
  const Elem e = float_metadata ? Elem::kF64 : Elem::kU8;
  std::vector<Field> f = {{"plaintext", e, 16, ValueKind::kByte}, {"key", e, 16, ValueKind::kByte}};
  if (spec.ciphertext) f.push_back({"ciphertext", e, 16, ValueKind::kByte});
  if (masks > 0) f.push_back({"masks", e, static_cast<std::uint64_t>(masks), ValueKind::kByte});
  if (spec.desync) f.push_back({"desync", Elem::kU32, 1, ValueKind::kDesync});
  return f;
}

hid_t CreateFile(const std::string& path) {
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  return CheckId(H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT), path.c_str());
}

void WriteAscad(const std::string& path, const H5FixtureSpec& spec, bool v2) {
  hid_t file = CreateFile(path);
  for (int g = 0; g < 2; ++g) {
    const std::string group = g == 0 ? "Profiling_traces" : "Attack_traces";
    const std::uint64_t rows = g == 0 ? spec.profiling_rows : spec.attack_rows;
    const bool fm = g == 0 ? spec.profiling_float_metadata : spec.attack_float_metadata;
    hid_t grp = CheckId(H5Gcreate2(file, group.c_str(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), "group");
    WritePlain(grp, "traces", group + "/traces", rows, spec.trace_len, TraceElem(spec.trace_type),
               TraceKind(spec.trace_type), spec);
    if (v2) {
      WriteCompound(grp, "labels", group + "/labels", rows,
                    {{"alpha_mask", Elem::kU8, 1, ValueKind::kByte},
                     {"beta_mask", Elem::kU8, 1, ValueKind::kByte},
                     {"sbox_masked", Elem::kU8, 16, ValueKind::kByte},
                     {"sbox_masked_with_perm", Elem::kU8, 16, ValueKind::kByte},
                     {"perm_index", Elem::kU8, 16, ValueKind::kByte}},
                    spec);
    } else {
      WritePlain(grp, "labels", group + "/labels", rows, 0, Elem::kU8, ValueKind::kByte, spec);
    }
    WriteCompound(grp, "metadata", group + "/metadata", rows, MetadataFields(spec, fm, v2 ? 18 : spec.masks),
                  spec);
    H5Gclose(grp);
  }
  H5Fclose(file);
}

}  // namespace

double FixtureValue(std::uint64_t seed, std::string_view key, std::uint64_t row, std::uint64_t element,
                    ValueKind kind) {
  std::uint64_t h = Mix(seed);
  for (char c : key) h = Mix(h ^ static_cast<unsigned char>(c));
  h = Mix(h ^ Mix(row) ^ (Mix(element) << 1));
  switch (kind) {
    case ValueKind::kByte: return static_cast<double>(h & 0xff);
    case ValueKind::kSignedByte: return static_cast<double>(static_cast<std::int8_t>(h & 0xff));
    case ValueKind::kHalf: return (static_cast<double>(h % 2001) - 1000.0) / 1024.0;
    case ValueKind::kFloat: return (static_cast<double>(h % 200001) - 100000.0) / 4096.0;
    case ValueKind::kDesync: return static_cast<double>(h % 50);
  }
  return 0;
}

ValueKind TraceKind(TraceType t) {
  return t == TraceType::kInt8 ? ValueKind::kSignedByte : t == TraceType::kFloat16 ? ValueKind::kHalf
                                                                                  : ValueKind::kFloat;
}

void OverwriteValue(const std::string& path, const std::string& dataset, const std::string& field,
                    std::uint64_t row, std::uint64_t element, double value) {
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  hid_t file = CheckId(H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT), path.c_str());
  hid_t ds = CheckId(H5Dopen2(file, dataset.c_str(), H5P_DEFAULT), dataset.c_str());
  hid_t space = H5Dget_space(ds);
  const int rank = H5Sget_simple_extent_ndims(space);
  std::vector<hsize_t> dims(static_cast<std::size_t>(rank));
  H5Sget_simple_extent_dims(space, dims.data(), nullptr);
  std::vector<hsize_t> start(dims.size(), 0), count(dims);
  start[0] = row;
  count[0] = 1;
  Check(H5Sselect_hyperslab(space, H5S_SELECT_SET, start.data(), nullptr, count.data(), nullptr), "select");
  hid_t mspace = H5Screate_simple(rank, count.data(), nullptr);
  hid_t mtype;
  std::size_t n = 1;
  for (std::size_t i = 1; i < count.size(); ++i) n *= count[i];
  if (field.empty()) {
    mtype = H5Tcopy(H5T_NATIVE_DOUBLE);
  } else {
    hid_t ftype = H5Dget_type(ds);
    hid_t member = H5Tget_member_type(ftype, static_cast<unsigned>(H5Tget_member_index(ftype, field.c_str())));
    hid_t mem_member;
    if (H5Tget_class(member) == H5T_ARRAY) {
      hsize_t adims[8];
      const int nd = H5Tget_array_ndims(member);
      H5Tget_array_dims2(member, adims);
      for (int i = 0; i < nd; ++i) n *= adims[i];
      mem_member = H5Tarray_create2(H5T_NATIVE_DOUBLE, static_cast<unsigned>(nd), adims);
    } else {
      mem_member = H5Tcopy(H5T_NATIVE_DOUBLE);
    }
    mtype = H5Tcreate(H5T_COMPOUND, H5Tget_size(mem_member));
    Check(H5Tinsert(mtype, field.c_str(), 0, mem_member), "insert");
    H5Tclose(mem_member);
    H5Tclose(member);
    H5Tclose(ftype);
  }
  std::vector<double> buf(n);
  Check(H5Dread(ds, mtype, mspace, space, H5P_DEFAULT, buf.data()), "read");
  buf.at(element) = value;
  Check(H5Dwrite(ds, mtype, mspace, space, H5P_DEFAULT, buf.data()), "write");
  H5Tclose(mtype);
  H5Sclose(mspace);
  H5Sclose(space);
  H5Dclose(ds);
  H5Fclose(file);
}

void WriteAscadV1(const std::string& path, const H5FixtureSpec& spec) { WriteAscad(path, spec, false); }
void WriteAscadV2(const std::string& path, const H5FixtureSpec& spec) { WriteAscad(path, spec, true); }

void WriteLascar(const std::string& path, const H5FixtureSpec& spec) {
  hid_t file = CreateFile(path);
  WritePlain(file, "leakages", "/leakages", spec.profiling_rows, spec.trace_len, TraceElem(spec.trace_type),
             TraceKind(spec.trace_type), spec);
  const Elem e = spec.profiling_float_metadata ? Elem::kF64 : Elem::kU8;
  WriteCompound(file, "values", "/values", spec.profiling_rows,
                {{"plaintext", e, 16, ValueKind::kByte}, {"key", e, 16, ValueKind::kByte},
                 {"ciphertext", e, 16, ValueKind::kByte}},
                spec);
  H5Fclose(file);
}

}  // namespace sedpack::testing
