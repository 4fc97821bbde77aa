// SPDX-License-Identifier: Apache-2.0
// Write your own traces into a new sedpack dataset with the Filler.
// Run: ./write_traces OUT_DIR   (then ./read_traces OUT_DIR checks what was written)
//
// Every example holds one trace (float16), the key it was captured with (16
// bytes) and its capture number. The values are a formula of the capture number
// so that read_traces can check every one of them.
#include <cstdint>
#include <cstdio>
#include <memory>
#include <vector>

#include <sedpack/sedpack.h>

namespace {

constexpr std::int64_t kTraceLength = 1000;
constexpr std::int64_t kTrainExamples = 300;
constexpr std::int64_t kTestExamples = 50;

// Stand-in for an oscilloscope capture: small multiples of 0.5 are exact in float16.
void Capture(std::int64_t n, std::vector<sedpack::Float16>& trace, std::vector<std::uint8_t>& key) {
  for (std::int64_t j = 0; j < kTraceLength; ++j) {
    trace[j] = sedpack::Float16::FromFloat(0.5f * static_cast<float>((n % 50) - (j % 13)));
  }
  for (std::size_t b = 0; b < key.size(); ++b) key[b] = static_cast<std::uint8_t>(n * 7 + b);
}

sedpack::Status Write(const char* root) {
  sedpack::Metadata metadata;
  metadata.description = "Example traces written by examples/write_traces.cc";

  sedpack::DatasetStructure structure;
  structure.saved_data_description = {{"trace", "float16", {kTraceLength}, {}},
                                      {"key", "uint8", {16}, {}},
                                      {"capture", "int", {}, {}}};
  structure.compression = sedpack::Compression::kZstd;
  structure.examples_per_shard = 64;
  structure.hash_checksum_algorithms = {sedpack::HashAlgorithm::kSha256,
                                        sedpack::HashAlgorithm::kXxh64};

  // AlreadyExists if there is a dataset at `root`: datasets are not overwritten.
  SEDPACK_ASSIGN_OR_RETURN(std::shared_ptr<sedpack::Dataset> dataset,
                           sedpack::Dataset::Create(root, metadata, structure));
  SEDPACK_ASSIGN_OR_RETURN(std::unique_ptr<sedpack::Filler> filler,
                           sedpack::Filler::Make(dataset));

  std::vector<sedpack::Float16> trace(kTraceLength);
  std::vector<std::uint8_t> key(16);
  for (std::int64_t n = 0; n < kTrainExamples + kTestExamples; ++n) {
    Capture(n, trace, key);
    const std::int64_t capture = n;
    // Views of our own buffers: nothing is copied until the shard is built.
    const sedpack::ValueView values[] = {sedpack::ValueView::Array(trace, {kTraceLength}),
                                         sedpack::ValueView::Array(key, {16}),
                                         sedpack::ValueView::Int(capture)};
    const sedpack::Split split = n < kTrainExamples ? sedpack::Split::kTrain : sedpack::Split::kTest;
    SEDPACK_RETURN_NOT_OK(filler->WriteExample(split, values));
  }
  // Shard lists and dataset_info.json are written only now: a program that
  // fails before this leaves no half-listed dataset behind.
  SEDPACK_RETURN_NOT_OK(filler->Finish());
  std::printf("wrote %llu examples (%llu value bytes) into %s\n",
              static_cast<unsigned long long>(filler->examples_written()),
              static_cast<unsigned long long>(filler->bytes_written()), root);
  return sedpack::Status::OK();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s OUT_DIR\n", argv[0]);
    return 2;
  }
  const sedpack::Status status = Write(argv[1]);
  if (!status.ok()) {
    std::fprintf(stderr, "write_traces: %s\n", status.ToString().c_str());
    return 1;
  }
  return 0;
}
