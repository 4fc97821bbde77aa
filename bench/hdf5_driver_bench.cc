// SPDX-License-Identifier: Apache-2.0
// HDF5's sec2 driver against the driver over a FileSystem (src/hdf5/fs_driver.cc)
// on the I/O export-hdf5 and import-hdf5 do: write a chunked float32 dataset
// of ROWS x 700 plus a uint8 column in blocks of shards (export), then read it
// back in 64 MiB blocks (import) and open the file for its metadata many times
// (inspect / plan). Each rep runs both drivers, in alternating order; the
// table gives the median per phase and the ratio fs/sec2 (target <= 1.02).
// Usage: sedpack_bench_hdf5_driver DIR [ROWS=200000] [REPS=5]
#include <hdf5.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "hdf5/fs_driver_internal.h"

namespace {

using Clock = std::chrono::steady_clock;
constexpr hsize_t kCols = 700;

double Since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

hid_t Fapl(bool ours) {
  if (!ours) return H5Pcreate(H5P_FILE_ACCESS);  // sec2, the library default
  auto fapl = sedpack::h5::FileAccessFor(nullptr);
  if (!fapl.ok()) {
    std::fprintf(stderr, "%s\n", fapl.status().ToString().c_str());
    std::exit(1);
  }
  const hid_t id = fapl->get();
  H5Iinc_ref(id);  // outlives the Handle
  return id;
}

void Check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "HDF5 failed: %s\n", what);
    std::exit(1);
  }
}

double Write(const std::string& path, hsize_t rows, bool ours) {
  const auto t0 = Clock::now();
  const hid_t fapl = Fapl(ours);
  const hid_t file = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
  Check(file >= 0, "create");
  const hsize_t dims[2] = {rows, kCols}, chunk[2] = {374, kCols};  // about 1 MiB a chunk, as export-hdf5
  const hid_t space = H5Screate_simple(2, dims, nullptr), dcpl = H5Pcreate(H5P_DATASET_CREATE);
  H5Pset_chunk(dcpl, 2, chunk);
  const hid_t trace = H5Dcreate2(file, "/trace", H5T_NATIVE_FLOAT, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
  const hsize_t ldims[1] = {rows}, lchunk[1] = {std::min<hsize_t>(rows, 1 << 16)};
  const hid_t lspace = H5Screate_simple(1, ldims, nullptr), ldcpl = H5Pcreate(H5P_DATASET_CREATE);
  H5Pset_chunk(ldcpl, 1, lchunk);
  const hid_t label = H5Dcreate2(file, "/label", H5T_NATIVE_UINT8, lspace, H5P_DEFAULT, ldcpl, H5P_DEFAULT);
  Check(trace >= 0 && label >= 0, "datasets");
  const hsize_t block = 1000;  // one shard's rows
  std::vector<float> values(block * kCols);
  std::vector<std::uint8_t> labels(block);
  for (hsize_t first = 0; first < rows; first += block) {
    const hsize_t n = std::min(block, rows - first);
    for (std::size_t i = 0; i < n * kCols; ++i) values[i] = static_cast<float>((first + i) % 251);
    for (hsize_t i = 0; i < n; ++i) labels[i] = static_cast<std::uint8_t>(first + i);
    const hsize_t start[2] = {first, 0}, count[2] = {n, kCols};
    H5Sselect_hyperslab(space, H5S_SELECT_SET, start, nullptr, count, nullptr);
    const hid_t mem = H5Screate_simple(2, count, nullptr);
    Check(H5Dwrite(trace, H5T_NATIVE_FLOAT, mem, space, H5P_DEFAULT, values.data()) >= 0, "write");
    H5Sclose(mem);
    H5Sselect_hyperslab(lspace, H5S_SELECT_SET, start, nullptr, count, nullptr);
    const hid_t lmem = H5Screate_simple(1, count, nullptr);
    Check(H5Dwrite(label, H5T_NATIVE_UINT8, lmem, lspace, H5P_DEFAULT, labels.data()) >= 0, "write");
    H5Sclose(lmem);
    if ((first / block) % 32 == 31) Check(H5Fflush(file, H5F_SCOPE_LOCAL) >= 0, "flush");  // a journal round
  }
  H5Dclose(trace), H5Dclose(label), H5Sclose(space), H5Sclose(lspace), H5Pclose(dcpl), H5Pclose(ldcpl);
  Check(H5Fclose(file) >= 0, "close");
  H5Pclose(fapl);
  return Since(t0);
}

double Read(const std::string& path, hsize_t rows, bool ours) {
  const auto t0 = Clock::now();
  const hid_t fapl = Fapl(ours);
  const hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDONLY, fapl);
  Check(file >= 0, "open");
  const hid_t trace = H5Dopen2(file, "/trace", H5P_DEFAULT);
  const hid_t space = H5Dget_space(trace);
  const hsize_t block = (64u << 20) / (kCols * sizeof(float));
  std::vector<float> values(block * kCols);
  double sum = 0;
  for (hsize_t first = 0; first < rows; first += block) {
    const hsize_t n = std::min(block, rows - first);
    const hsize_t start[2] = {first, 0}, count[2] = {n, kCols};
    H5Sselect_hyperslab(space, H5S_SELECT_SET, start, nullptr, count, nullptr);
    const hid_t mem = H5Screate_simple(2, count, nullptr);
    Check(H5Dread(trace, H5T_NATIVE_FLOAT, mem, space, H5P_DEFAULT, values.data()) >= 0, "read");
    H5Sclose(mem);
    sum += values[0];
  }
  H5Sclose(space), H5Dclose(trace), H5Fclose(file), H5Pclose(fapl);
  if (sum < 0) std::printf("%f\n", sum);
  return Since(t0);
}

double Opens(const std::string& path, hsize_t rows, int times, bool ours) {
  const auto t0 = Clock::now();
  for (int i = 0; i < times; ++i) {
    const hid_t fapl = Fapl(ours);
    const hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDONLY, fapl);
    Check(file >= 0, "open");
    const hid_t d = H5Dopen2(file, "/label", H5P_DEFAULT);
    std::uint8_t first[16];
    const hsize_t start[1] = {(static_cast<hsize_t>(i) * 16) % (rows - 16)}, count[1] = {16};
    const hid_t space = H5Dget_space(d), mem = H5Screate_simple(1, count, nullptr);
    H5Sselect_hyperslab(space, H5S_SELECT_SET, start, nullptr, count, nullptr);
    Check(H5Dread(d, H5T_NATIVE_UINT8, mem, space, H5P_DEFAULT, first) >= 0, "read");
    H5Sclose(mem), H5Sclose(space), H5Dclose(d), H5Fclose(file), H5Pclose(fapl);
  }
  return Since(t0);
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s DIR [ROWS] [REPS]\n", argv[0]);
    return 2;
  }
  const std::string dir = argv[1];
  const hsize_t rows = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 200000;
  const int reps = argc > 3 ? std::atoi(argv[3]) : 5;
  if (rows < 1000 || reps < 1) {
    std::fprintf(stderr, "ROWS must be >= 1000 and REPS >= 1\n");
    return 2;
  }
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  const char* phases[3] = {"write (export)", "read (import)", "open+read x2000"};
  std::vector<double> t[3][2];  // [phase][0: sec2, 1: fs]
  for (int r = 0; r < reps; ++r) {
    for (int k = 0; k < 2; ++k) {
      const bool ours = (r + k) % 2 == 1;  // alternate which driver goes first
      const std::string path = dir + (ours ? "/fs.h5" : "/sec2.h5");
      t[0][ours].push_back(Write(path, rows, ours));
      t[1][ours].push_back(Read(path, rows, ours));
      t[2][ours].push_back(Opens(path, rows, 2000, ours));
    }
  }
  std::printf("rows %llu x %llu float32 (%.0f MiB), %d interleaved reps, medians\n",
              static_cast<unsigned long long>(rows), static_cast<unsigned long long>(kCols),
              static_cast<double>(rows * kCols * 4) / (1 << 20), reps);
  std::printf("%-18s %10s %10s %10s\n", "phase", "sec2 s", "fs s", "fs/sec2");
  for (int p = 0; p < 3; ++p) {
    const double a = Median(t[p][0]), b = Median(t[p][1]);
    std::printf("%-18s %10.3f %10.3f %10.3f\n", phases[p], a, b, b / a);
  }
  return 0;
}
