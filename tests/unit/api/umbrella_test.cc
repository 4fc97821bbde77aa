// SPDX-License-Identifier: Apache-2.0
// A user's program: of sedpack it includes only the umbrella header, and it is built
// without the src/ include directory, so it fails to compile if sedpack.h
// stops providing what a core user needs (create, fill, read, check, Comm).
// It writes a small dataset to argv[1] (which must not exist), reads it back,
// checks it (deep), then corrupts one shard and expects the check to say so.
#include <sedpack/sedpack.h>

#include <cstdint>
#include <cstdio>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace {

int failures = 0;

void Expect(bool condition, const char* what) {
  if (!condition) {
    ++failures;
    std::fprintf(stderr, "FAILED: %s\n", what);
  }
}

sedpack::Status Run(const std::string& root) {
  using namespace sedpack;
  DatasetStructure structure;
  structure.saved_data_description = {
      Attribute{"x", "float32", {4}, {}},
      Attribute{"label", "int", {}, {}},
  };
  structure.compression = Compression::kZstd;
  structure.examples_per_shard = 3;
  structure.hash_checksum_algorithms = {HashAlgorithm::kSha256, HashAlgorithm::kXxh64};
  SEDPACK_ASSIGN_OR_RETURN(std::shared_ptr<Dataset> created,
                           Dataset::Create(root, Metadata{}, structure));

  FillerOptions filler_options;
  filler_options.concurrency = 2;
  SEDPACK_ASSIGN_OR_RETURN(std::unique_ptr<Filler> filler, Filler::Make(created, filler_options));
  constexpr int kExamples = 10;
  for (int i = 0; i < kExamples; ++i) {
    const std::vector<float> x = {float(i), float(i) + 0.5f, -float(i), 1.0f};
    const std::int64_t label = 100 + i;
    const ValueView values[] = {ValueView::Array(x, {4}), ValueView::Int(label)};
    SEDPACK_RETURN_NOT_OK(filler->WriteExample(Split::kTrain, values));
  }
  SEDPACK_RETURN_NOT_OK(filler->Finish());
  filler.reset();

  SEDPACK_ASSIGN_OR_RETURN(std::shared_ptr<Dataset> dataset, Dataset::Open(root));
  const ShardListInfo* train = dataset->info().FindSplit(Split::kTrain);
  Expect(train != nullptr && train->number_of_examples == kExamples, "train split holds every example");
  Expect(dataset->schema().size() == 2, "schema has two attributes");

  ReadOptions read_options;
  read_options.prefetch_shards = 1;
  SEDPACK_ASSIGN_OR_RETURN(std::unique_ptr<ExampleReader> reader,
                           ExampleReader::Make(dataset, Split::kTrain, read_options));
  Expect(reader->shards().size() == 4, "10 examples at 3 per shard make 4 shards");
  int seen = 0;
  for (;;) {
    SEDPACK_ASSIGN_OR_RETURN(std::optional<Example> example, reader->Next());
    if (!example) break;
    const ValueView x = example->Get(0);
    const ValueView label = example->Get(1);
    Expect(x.dtype == DType::kFloat32 && x.shape == Shape{4}, "x keeps dtype and shape");
    Expect(x.At<float>(1) == float(seen) + 0.5f, "x reads back in write order");
    Expect(label.At<std::int64_t>(0) == 100 + seen, "label reads back in write order");
    ++seen;
  }
  Expect(seen == kExamples, "the reader returns every example once");

  CheckOptions check_options;
  check_options.deep = true;
  SEDPACK_ASSIGN_OR_RETURN(std::vector<std::string> root_hashes, dataset->MetadataChecksums());
  check_options.expected_root_checksums = root_hashes;
  SEDPACK_ASSIGN_OR_RETURN(CheckReport clean, CheckDataset(root, check_options));
  Expect(clean.ok(), "a freshly written dataset checks clean");
  Expect(clean.shards_checked == 4 && clean.examples_checked == kExamples, "the deep check saw every shard");

  // One flipped byte in the first shard must be found.
  SEDPACK_ASSIGN_OR_RETURN(std::vector<ShardInfo> shards, ListShards(dataset, Split::kTrain));
  const std::string shard = shards.at(0).file_infos.at(0).file_path;
  SEDPACK_ASSIGN_OR_RETURN(std::vector<std::byte> bytes, dataset->ReadBytes(shard));
  bytes.at(bytes.size() / 2) ^= std::byte{0x40};
  SEDPACK_RETURN_NOT_OK(WriteFileAtomic(JoinRoot(root, shard), std::span<const std::byte>(bytes)));
  SEDPACK_ASSIGN_OR_RETURN(CheckReport corrupt, CheckDataset(root, check_options));
  Expect(!corrupt.ok(), "a corrupted shard fails the check");
  bool named = false;
  for (const CheckProblem& p : corrupt.problems) {
    named = named || (p.kind == CheckProblem::Kind::kHashMismatch && p.path == shard);
  }
  Expect(named, "the problem is a hash mismatch naming the shard");

  // The one-rank communicator is part of the core API too.
  SerialComm comm;
  SEDPACK_ASSIGN_OR_RETURN(std::int64_t sum, comm.AllreduceSum(7));
  Expect(comm.size() == 1 && sum == 7, "SerialComm reduces over one rank");
  Expect(AgreeOnStatus(comm, Status::IOError("x")).code() == StatusCode::kIOError,
         "AgreeOnStatus hands one rank its own failure back");
  return Status::OK();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s <new dataset folder>\n", argv[0]);
    return 2;
  }
  const sedpack::Status status = Run(argv[1]);
  if (!status.ok()) {
    std::fprintf(stderr, "FAILED: %s\n", status.ToString().c_str());
    return 1;
  }
  return failures == 0 ? 0 : 1;
}
