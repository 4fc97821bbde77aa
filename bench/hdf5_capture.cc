// SPDX-License-Identifier: Apache-2.0
// Companion of bench/hdf5_import.sh: makes a large ASCAD-shaped capture and
// times a plain sequential read of it, the baseline import-hdf5 is compared to.
//   sedpack_bench_hdf5 make FILE ROWS SAMPLES [CHUNK_ROWS [DEFLATE_LEVEL]]
//     Profiling_traces/{traces int8 ROWS x SAMPLES, labels uint8, metadata
//     compound (plaintext, key, ciphertext uint8[16], masks uint8[18])};
//     CHUNK_ROWS 0 = contiguous.
//   sedpack_bench_hdf5 read FILE [BLOCK_MB]
//     Reads every dataset of Profiling_traces front to back in row blocks with
//     hyperslabs into one reused buffer; prints bytes, seconds and MB/s.
#include <hdf5.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

std::uint64_t Mix(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

int Fail(const char* what) {
  std::fprintf(stderr, "sedpack_bench_hdf5: %s failed\n", what);
  return 1;
}

constexpr int kMetaBytes = 16 * 3 + 18;

int Make(const std::string& path, std::uint64_t rows, std::uint64_t samples, std::uint64_t chunk_rows,
         int deflate) {
  hid_t file = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  if (file < 0) return Fail("create");
  hid_t group = H5Gcreate2(file, "Profiling_traces", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  auto dcpl = [&](int rank, const hsize_t* dims) {
    hid_t p = H5Pcreate(H5P_DATASET_CREATE);
    if (chunk_rows > 0) {
      hsize_t chunk[2] = {std::min<hsize_t>(chunk_rows, dims[0]), rank > 1 ? dims[1] : 1};
      H5Pset_chunk(p, rank, chunk);
      if (deflate > 0) H5Pset_deflate(p, static_cast<unsigned>(deflate));
    }
    return p;
  };
  hsize_t tdims[2] = {rows, samples}, rdims[1] = {rows};
  hid_t tspace = H5Screate_simple(2, tdims, nullptr), rspace = H5Screate_simple(1, rdims, nullptr);
  hid_t tp = dcpl(2, tdims), rp = dcpl(1, rdims);
  hid_t traces = H5Dcreate2(group, "traces", H5T_STD_I8LE, tspace, H5P_DEFAULT, tp, H5P_DEFAULT);
  hid_t labels = H5Dcreate2(group, "labels", H5T_STD_U8LE, rspace, H5P_DEFAULT, rp, H5P_DEFAULT);
  hid_t meta_type = H5Tcreate(H5T_COMPOUND, kMetaBytes);
  hsize_t n16 = 16, n18 = 18;
  hid_t a16 = H5Tarray_create2(H5T_STD_U8LE, 1, &n16), a18 = H5Tarray_create2(H5T_STD_U8LE, 1, &n18);
  H5Tinsert(meta_type, "plaintext", 0, a16);
  H5Tinsert(meta_type, "key", 16, a16);
  H5Tinsert(meta_type, "ciphertext", 32, a16);
  H5Tinsert(meta_type, "masks", 48, a18);
  hid_t meta = H5Dcreate2(group, "metadata", meta_type, rspace, H5P_DEFAULT, rp, H5P_DEFAULT);
  if (traces < 0 || labels < 0 || meta < 0) return Fail("create datasets");
  // Traces look like captures: a slow wave plus noise, so deflate has work to do.
  const std::uint64_t block = std::max<std::uint64_t>(1, (64ULL << 20) / std::max<std::uint64_t>(samples, 1));
  std::vector<std::int8_t> tbuf(block * samples);
  std::vector<std::uint8_t> lbuf(block), mbuf(block * kMetaBytes);
  for (std::uint64_t r0 = 0; r0 < rows; r0 += block) {
    const std::uint64_t n = std::min(block, rows - r0);
    for (std::uint64_t i = 0; i < n; ++i) {
      std::uint64_t h = Mix(r0 + i);
      for (std::uint64_t s = 0; s < samples; ++s) {
        if ((s & 7) == 0) h = Mix(h);
        const int wave = static_cast<int>((s * 37 + (r0 + i) * 11) % 64) - 32;
        tbuf[i * samples + s] = static_cast<std::int8_t>(wave + static_cast<int>((h >> ((s & 7) * 8)) & 15) - 8);
      }
      lbuf[i] = static_cast<std::uint8_t>(h);
      for (int b = 0; b < kMetaBytes; ++b) mbuf[i * kMetaBytes + b] = static_cast<std::uint8_t>(Mix(h + b));
    }
    hsize_t start[2] = {r0, 0}, count[2] = {n, samples};
    hid_t fs = H5Dget_space(traces), ms = H5Screate_simple(2, count, nullptr);
    H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, nullptr, count, nullptr);
    if (H5Dwrite(traces, H5T_NATIVE_INT8, ms, fs, H5P_DEFAULT, tbuf.data()) < 0) return Fail("write traces");
    H5Sclose(fs);
    H5Sclose(ms);
    hid_t fs1 = H5Dget_space(labels), ms1 = H5Screate_simple(1, count, nullptr);
    H5Sselect_hyperslab(fs1, H5S_SELECT_SET, start, nullptr, count, nullptr);
    if (H5Dwrite(labels, H5T_NATIVE_UINT8, ms1, fs1, H5P_DEFAULT, lbuf.data()) < 0) return Fail("write labels");
    H5Sclose(fs1);
    hid_t fs2 = H5Dget_space(meta);
    H5Sselect_hyperslab(fs2, H5S_SELECT_SET, start, nullptr, count, nullptr);
    if (H5Dwrite(meta, meta_type, ms1, fs2, H5P_DEFAULT, mbuf.data()) < 0) return Fail("write metadata");
    H5Sclose(fs2);
    H5Sclose(ms1);
  }
  H5Dclose(traces);
  H5Dclose(labels);
  H5Dclose(meta);
  H5Tclose(a16);
  H5Tclose(a18);
  H5Tclose(meta_type);
  H5Pclose(tp);
  H5Pclose(rp);
  H5Sclose(tspace);
  H5Sclose(rspace);
  H5Gclose(group);
  H5Fclose(file);
  return 0;
}

// Read one dataset front to back in blocks of rows; returns bytes read.
std::uint64_t ReadAll(hid_t group, const char* name, std::uint64_t block_bytes, std::vector<char>* buf) {
  // A fair baseline: whole chunks per block and a chunk cache that holds one
  // band of chunks, as a careful reader would do.
  hid_t dapl = H5Pcreate(H5P_DATASET_ACCESS);
  H5Pset_chunk_cache(dapl, 12421, 64u << 20, 1.0);
  hid_t ds = H5Dopen2(group, name, dapl);
  H5Pclose(dapl);
  if (ds < 0) return 0;
  hid_t space = H5Dget_space(ds);
  const int rank = H5Sget_simple_extent_ndims(space);
  hsize_t dims[2] = {0, 1};
  H5Sget_simple_extent_dims(space, dims, nullptr);
  hid_t type = H5Dget_type(ds);
  hid_t mtype = H5Tget_native_type(type, H5T_DIR_ASCEND);
  const std::uint64_t row_bytes = H5Tget_size(mtype) * (rank > 1 ? dims[1] : 1);
  std::uint64_t block = std::min<std::uint64_t>(dims[0], std::max<std::uint64_t>(1, block_bytes / row_bytes));
  hid_t dcpl = H5Dget_create_plist(ds);
  hsize_t chunk[2] = {0, 0};
  if (H5Pget_layout(dcpl) == H5D_CHUNKED && H5Pget_chunk(dcpl, rank, chunk) == rank && chunk[0] > 0 &&
      block >= chunk[0]) {
    block = block / chunk[0] * chunk[0];
  }
  H5Pclose(dcpl);
  buf->resize(block * row_bytes);
  std::uint64_t total = 0;
  for (std::uint64_t r0 = 0; r0 < dims[0]; r0 += block) {
    const std::uint64_t n = std::min<std::uint64_t>(block, dims[0] - r0);
    hsize_t start[2] = {r0, 0}, count[2] = {n, dims[1]};
    hid_t ms = H5Screate_simple(rank, count, nullptr);
    H5Sselect_hyperslab(space, H5S_SELECT_SET, start, nullptr, count, nullptr);
    if (H5Dread(ds, mtype, ms, space, H5P_DEFAULT, buf->data()) < 0) std::exit(Fail("read"));
    H5Sclose(ms);
    total += n * row_bytes;
  }
  H5Tclose(mtype);
  H5Tclose(type);
  H5Sclose(space);
  H5Dclose(ds);
  return total;
}

int Read(const std::string& path, std::uint64_t block_mb) {
  const auto t0 = std::chrono::steady_clock::now();
  hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  if (file < 0) return Fail("open");
  hid_t group = H5Gopen2(file, "Profiling_traces", H5P_DEFAULT);
  std::vector<char> buf;
  std::uint64_t bytes = 0;
  for (const char* name : {"traces", "labels", "metadata"}) {
    const auto d0 = std::chrono::steady_clock::now();
    bytes += ReadAll(group, name, block_mb << 20, &buf);
    if (std::getenv("SEDPACK_BENCH_VERBOSE")) {
      std::fprintf(stderr, "  %s: %.3f s\n", name,
                   std::chrono::duration<double>(std::chrono::steady_clock::now() - d0).count());
    }
  }
  H5Gclose(group);
  H5Fclose(file);
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("read %llu bytes in %.3f s: %.1f MB/s\n", static_cast<unsigned long long>(bytes), secs,
              bytes / secs / 1e6);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc >= 5 && std::string(argv[1]) == "make") {
    return Make(argv[2], std::strtoull(argv[3], nullptr, 10), std::strtoull(argv[4], nullptr, 10),
                argc > 5 ? std::strtoull(argv[5], nullptr, 10) : 0, argc > 6 ? std::atoi(argv[6]) : 0);
  }
  if (argc >= 3 && std::string(argv[1]) == "read") {
    return Read(argv[2], argc > 3 ? std::strtoull(argv[3], nullptr, 10) : 64);
  }
  std::fprintf(stderr,
               "usage: %s make FILE ROWS SAMPLES [CHUNK_ROWS [DEFLATE_LEVEL]]\n"
               "       %s read FILE [BLOCK_MB]\n",
               argv[0], argv[0]);
  return 2;
}
