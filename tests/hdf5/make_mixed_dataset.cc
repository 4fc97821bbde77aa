// SPDX-License-Identifier: Apache-2.0
// Writes a dataset with an attribute of every dtype family for the export tests:
//   sedpack_make_mixed_dataset DIR EXAMPLES EXAMPLES_PER_SHARD
// Three splits (about 70/20/10), small shards so that ranks get uneven shares;
// values depend on the example number only, with NaN, -0.0 and non-ASCII text.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <string>
#include <vector>

#include "sedpack/dataset/dataset.h"
#include "sedpack/dataset/filler.h"

int main(int argc, char** argv) {
  using namespace sedpack;
  if (argc != 4) {
    std::fprintf(stderr, "usage: %s DIR EXAMPLES EXAMPLES_PER_SHARD\n", argv[0]);
    return 2;
  }
  const int examples = std::atoi(argv[2]);
  DatasetStructure st;
  st.compression = Compression::kLz4;
  st.examples_per_shard = std::atoi(argv[3]);
  st.saved_data_description = {{"trace", "float16", {5}, {}}, {"power", "float32", {3}, {}},
                               {"x", "float64", {2, 2}, {}},  {"label", "int", {}, {}},
                               {"key", "uint8", {16}, {}},    {"count", "int32", {1}, {}},
                               {"flag", "bool", {1}, {}},     {"note", "str", {}, {}},
                               {"blob", "bytes", {}, {}},     {"serial", "bytes", {4}, {}}};
  Metadata m;
  m.description = "export-hdf5 ranks test";
  auto ds = Dataset::Create(argv[1], m, st);
  if (!ds.ok()) {
    std::fprintf(stderr, "%s\n", ds.status().ToString().c_str());
    return 1;
  }
  FillerOptions fo;
  fo.concurrency = 1;
  auto f = Filler::Make(*ds, fo);
  if (!f.ok()) return 1;
  for (int i = 0; i < examples; ++i) {
    const std::vector<std::uint16_t> trace = {static_cast<std::uint16_t>(0x3c00 + i), 0xbc00, 0x7bff, 0x8000,
                                              0x7e00};
    const std::vector<float> power = {i * 0.5f, -0.0f, std::numeric_limits<float>::quiet_NaN()};
    const std::vector<double> x = {i * 0.1, -1e300, 1.0 / 3, static_cast<double>(i)};
    std::vector<std::uint8_t> key(16);
    for (int k = 0; k < 16; ++k) key[k] = static_cast<std::uint8_t>(i * 16 + k);
    const std::vector<std::int32_t> count = {-i * 1000};
    const std::vector<std::uint8_t> flag = {static_cast<std::uint8_t>(i % 3 == 0)};
    const std::string note = i % 5 == 0 ? std::string() : "capture \xc3\xa9" + std::string(i % 7, 'x') + std::to_string(i);
    const std::string blob = std::string("\0\x01\xff", 3) + std::string(i % 4, '\0') + std::to_string(i);
    const std::vector<std::uint8_t> serial = {0xde, 0xad, static_cast<std::uint8_t>(i), 0};
    std::vector<ValueView> v = {ValueView{DType::kFloat16, {5}, std::as_bytes(std::span(trace))},
                                ValueView::Array(power, {3}),
                                ValueView::Array(x, {2, 2}),
                                ValueView::Int(i - 5),
                                ValueView::Array(key, {16}),
                                ValueView::Array(count, {1}),
                                ValueView{DType::kBool, {1}, std::as_bytes(std::span(flag))},
                                ValueView::Str(note),
                                ValueView::Bytes(std::as_bytes(std::span(blob.data(), blob.size()))),
                                ValueView::FixedBytes(serial)};
    const Split split = i % 10 < 7 ? Split::kTrain : (i % 10 < 9 ? Split::kTest : Split::kHoldout);
    if (Status st = (*f)->WriteExample(split, v); !st.ok()) {
      std::fprintf(stderr, "%s\n", st.ToString().c_str());
      return 1;
    }
  }
  if (Status st = (*f)->Finish(); !st.ok()) {
    std::fprintf(stderr, "%s\n", st.ToString().c_str());
    return 1;
  }
  return 0;
}
