// SPDX-License-Identifier: Apache-2.0
// Built by install_package.sh with nothing but
//   c++ -std=c++20 pkgconfig_prog.cc $(pkg-config --cflags --libs sedpack)
// Reads the train split of DATASET and checks that it has EXPECTED examples; it
// touches the reader, codecs (zstd), hashing and metadata, so a library missing
// from sedpack.pc fails the link.
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>

#include "sedpack/config.h"
#include "sedpack/check/check.h"
#include "sedpack/dataset/dataset.h"
#include "sedpack/dataset/reader.h"

int main(int argc, char** argv) {
  if (argc != 3) return 2;
  auto dataset = sedpack::Dataset::Open(argv[1]);
  if (!dataset.ok()) {
    std::fprintf(stderr, "%s\n", dataset.status().ToString().c_str());
    return 1;
  }
  auto reader = sedpack::ExampleReader::Make(*dataset, sedpack::Split::kTrain);
  if (!reader.ok()) {
    std::fprintf(stderr, "%s\n", reader.status().ToString().c_str());
    return 1;
  }
  long long count = 0;
  while (true) {
    auto example = (*reader)->Next();
    if (!example.ok()) {
      std::fprintf(stderr, "%s\n", example.status().ToString().c_str());
      return 1;
    }
    if (!*example) break;
    ++count;
  }
  auto report = sedpack::CheckDataset(argv[1]);
  if (!report.ok() || !report->ok()) {
    std::fprintf(stderr, "check failed\n");
    return 1;
  }
  std::printf("sedpack %s: %lld train examples\n", SEDPACK_PROJECT_VERSION, count);
  return count == std::atoll(argv[2]) ? 0 : 1;
}
