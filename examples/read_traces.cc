// SPDX-License-Identifier: Apache-2.0
// Read the dataset written by write_traces, check every value, and verify it.
// Run: ./read_traces DIR   Exit status: 0 all good, 1 a mismatch or an error.
#include <cstdint>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <sedpack/sedpack.h>

namespace {

// Must match write_traces.cc.
constexpr std::int64_t kTraceLength = 1000;
constexpr std::int64_t kTrainExamples = 300;
constexpr std::int64_t kTestExamples = 50;

float ExpectedSample(std::int64_t n, std::int64_t j) {
  return 0.5f * static_cast<float>((n % 50) - (j % 13));
}
std::uint8_t ExpectedKeyByte(std::int64_t n, std::size_t b) {
  return static_cast<std::uint8_t>(n * 7 + b);
}

// Check one example against the formula write_traces used; Corruption on a mismatch.
sedpack::Status CheckExample(const sedpack::Example& example, std::vector<bool>& seen,
                             std::int64_t first) {
  const std::int64_t n = example.Get(2).At<std::int64_t>(0);
  if (n < first || n >= first + static_cast<std::int64_t>(seen.size()) || seen[n - first]) {
    return sedpack::Status::Corruption("unexpected or repeated capture number ", n);
  }
  seen[n - first] = true;
  const sedpack::ValueView trace = example.Get(0);
  if (trace.dtype != sedpack::DType::kFloat16 || trace.shape != sedpack::Shape{kTraceLength}) {
    return sedpack::Status::Corruption("capture ", n, ": trace has the wrong type or shape");
  }
  for (std::int64_t j = 0; j < kTraceLength; ++j) {
    const float got = trace.At<sedpack::Float16>(j).ToFloat();
    if (got != ExpectedSample(n, j)) {
      return sedpack::Status::Corruption("capture ", n, ": trace[", j, "] = ", got, ", expected ",
                                         ExpectedSample(n, j));
    }
  }
  const sedpack::ValueView key = example.Get(1);
  if (key.data.size() != 16) return sedpack::Status::Corruption("capture ", n, ": key size");
  for (std::size_t b = 0; b < 16; ++b) {
    if (key.At<std::uint8_t>(b) != ExpectedKeyByte(n, b)) {
      return sedpack::Status::Corruption("capture ", n, ": key[", b, "] differs");
    }
  }
  return sedpack::Status::OK();
}

sedpack::Status ReadSplit(const std::shared_ptr<const sedpack::Dataset>& dataset,
                          sedpack::Split split, std::int64_t first, std::int64_t count) {
  SEDPACK_ASSIGN_OR_RETURN(std::unique_ptr<sedpack::ExampleReader> reader,
                           sedpack::ExampleReader::Make(dataset, split));
  std::vector<bool> seen(count, false);
  std::int64_t examples = 0;
  while (true) {
    SEDPACK_ASSIGN_OR_RETURN(std::optional<sedpack::Example> example, reader->Next());
    if (!example) break;
    SEDPACK_RETURN_NOT_OK(CheckExample(*example, seen, first));
    ++examples;
  }
  std::printf("  %-8s %5lld examples in %zu shards\n", std::string(sedpack::SplitName(split)).c_str(),
              static_cast<long long>(examples), reader->shards().size());
  if (examples != count) {
    return sedpack::Status::Corruption(sedpack::SplitName(split), ": read ", examples,
                                       " examples, expected ", count);
  }
  return sedpack::Status::OK();
}

sedpack::Status Read(const char* root) {
  SEDPACK_ASSIGN_OR_RETURN(std::shared_ptr<sedpack::Dataset> dataset, sedpack::Dataset::Open(root));
  const sedpack::DatasetInfo& info = dataset->info();
  std::printf("%s: \"%s\"\n", root, info.metadata.description.c_str());
  for (const sedpack::AttributeSpec& a : dataset->schema()) {
    std::printf("  attribute %-8s %-8s %s\n", a.name.c_str(),
                std::string(sedpack::DTypeName(a.dtype)).c_str(), sedpack::ShapeToString(a.shape).c_str());
  }
  SEDPACK_RETURN_NOT_OK(ReadSplit(dataset, sedpack::Split::kTrain, 0, kTrainExamples));
  SEDPACK_RETURN_NOT_OK(ReadSplit(dataset, sedpack::Split::kTest, kTrainExamples, kTestExamples));

  // Verify the whole Merkle tree (metadata, lists, every shard's hashes) and
  // decode every shard.
  sedpack::CheckOptions options;
  options.deep = true;
  SEDPACK_ASSIGN_OR_RETURN(sedpack::CheckReport report, sedpack::CheckDataset(root, options));
  for (const sedpack::CheckProblem& p : report.problems) {
    std::printf("  %s %s: %s\n", p.warning() ? "warning" : "problem", p.path.c_str(), p.message.c_str());
  }
  std::printf("  check: %llu files, %llu shards, %llu examples, %zu problems\n",
              static_cast<unsigned long long>(report.files_checked),
              static_cast<unsigned long long>(report.shards_checked),
              static_cast<unsigned long long>(report.examples_checked), report.error_count());
  if (!report.ok()) return sedpack::Status::Corruption("the dataset check found problems");
  return sedpack::Status::OK();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s DIR\n", argv[0]);
    return 2;
  }
  const sedpack::Status status = Read(argv[1]);
  if (!status.ok()) {
    std::fprintf(stderr, "read_traces: %s\n", status.ToString().c_str());
    return 1;
  }
  std::printf("all values as written\n");
  return 0;
}
