// SPDX-License-Identifier: Apache-2.0
// Fetches of one example from uncompressed fb shards by positioned reads
// (FetchOptions::positioned_reads): the same values as whole-shard reads for
// every example, a small part of the shard read, clear errors naming the file
// for damaged shards, and verified or compressed fetches still reading whole shards.
#include <filesystem>
#include <fstream>
#include <iterator>

#include "sedpack/index/fetch.h"
#include "support/fault_fs.h"
#include "unit/index/index_test_util.h"

namespace sedpack {
namespace {

using testing::GoldenDir;
using testing::TempDir;

FetchOptions Positioned() {
  FetchOptions o;
  o.cache_bytes = 0;
  o.verify_hashes = false;
  return o;
}

FetchOptions WholeShard() {
  FetchOptions o = Positioned();
  o.positioned_reads = false;
  return o;
}

// Uncompressed fb, 16 examples per shard of an 8 kB trace, a key, a label, a
// note and a blob; train in two folders (shards of 16, 16, 5 and 16, 3).
Result<std::shared_ptr<Dataset>> MakeUncompressedDataset(const std::string& root) {
  DatasetStructure s;
  auto attr = [](const char* name, const char* dtype, std::vector<std::int64_t> shape) {
    Attribute a;
    a.name = name;
    a.dtype = dtype;
    a.shape = std::move(shape);
    return a;
  };
  s.saved_data_description = {attr("trace", "float32", {2048}), attr("key", "uint8", {16}),
                              attr("label", "int64", {}), attr("note", "str", {}), attr("blob", "bytes", {})};
  s.compression = Compression::kNone;
  s.examples_per_shard = 16;
  SEDPACK_ASSIGN_OR_RETURN(std::shared_ptr<Dataset> ds, Dataset::Create(root, Metadata{}, s));
  std::int64_t next = 0;
  for (const auto& [folder, count] : {std::pair<const char*, int>{".", 37}, {"deeper", 19}}) {
    FillerOptions fo;
    fo.relative_path_from_split = folder;
    fo.concurrency = 1;
    SEDPACK_ASSIGN_OR_RETURN(auto filler, Filler::Make(ds, fo));
    for (int k = 0; k < count; ++k, ++next) {
      std::vector<float> trace(2048);
      for (std::size_t i = 0; i < trace.size(); ++i) trace[i] = static_cast<float>(next * 3 + i);
      std::vector<std::uint8_t> key(16), blob(static_cast<std::size_t>(next % 7) * 100);
      for (std::size_t i = 0; i < key.size(); ++i) key[i] = static_cast<std::uint8_t>(next + i);
      for (std::size_t i = 0; i < blob.size(); ++i) blob[i] = static_cast<std::uint8_t>(next ^ i);
      const std::string note = "example " + std::to_string(next) + (next % 3 ? " é" : "");
      const ValueView values[] = {ValueView::Array(trace, {2048}), ValueView::Array(key, {16}),
                                  ValueView::Int(next), ValueView::Str(note), ValueView::Bytes(blob)};
      SEDPACK_RETURN_NOT_OK(filler->WriteExample(Split::kTrain, values));
    }
    SEDPACK_RETURN_NOT_OK(filler->Finish());
  }
  SEDPACK_RETURN_NOT_OK(ds->Reload());
  return ds;
}

// Every example of every split through `a` and `b`: the same values. Returns
// the number of examples compared.
std::size_t ExpectSameValues(ExampleFetcher& a, ExampleFetcher& b, const Dataset& ds, const std::string& name) {
  std::size_t n = 0;
  for (const auto& [split, info] : ds.info().splits) {
    for (std::uint64_t i = 0; i < a.index().num_examples(split); ++i) {
      auto x = a.Get(split, i);
      auto y = b.Get(split, i);
      EXPECT_TRUE(x.ok()) << name << " #" << i << ": " << x.status().ToString();
      EXPECT_TRUE(y.ok()) << name << " #" << i << ": " << y.status().ToString();
      if (!x.ok() || !y.ok()) continue;
      EXPECT_EQ(testing::ValuesHex(*x), testing::ValuesHex(*y)) << name << " " << SplitName(split) << " #" << i;
      ++n;
    }
  }
  return n;
}

TEST(PositionedFetchTest, GoldenUncompressedFbAgreesWithWholeShards) {
  std::size_t total = 0;
  for (const char* fixture : {"fb_none", "fb_minimal"}) {
    SCOPED_TRACE(fixture);
    ASSERT_OK_AND_ASSIGN(std::shared_ptr<Dataset> ds, Dataset::Open(GoldenDir() + "/" + fixture + "/dataset"));
    ASSERT_EQ(ds->info().dataset_structure.compression, Compression::kNone);
    ASSERT_OK_AND_ASSIGN(IndexContents contents, BuildIndexContents(ds));
    ASSERT_OK_AND_ASSIGN(auto index, SampleIndex::FromContents(contents));
    ASSERT_OK_AND_ASSIGN(auto positioned, ExampleFetcher::Make(ds, index, Positioned()));
    // The reference path: whole shards, verified against the recorded hashes.
    FetchOptions verified;
    verified.cache_bytes = 0;
    ASSERT_OK_AND_ASSIGN(auto whole, ExampleFetcher::Make(ds, index, verified));
    const std::size_t n = ExpectSameValues(*positioned, *whole, *ds, fixture);
    total += n;
    EXPECT_EQ(positioned->stats().example_reads, n);
    EXPECT_EQ(positioned->stats().misses, 0u);
    EXPECT_EQ(whole->stats().example_reads, 0u);
  }
  EXPECT_GT(total, 20u);
}

TEST(PositionedFetchTest, GeneratedDatasetAgreesWithWholeShards) {
  TempDir tmp;
  ASSERT_OK_AND_ASSIGN(std::shared_ptr<Dataset> ds, MakeUncompressedDataset(tmp.path() + "/ds"));
  ASSERT_OK_AND_ASSIGN(IndexContents contents, BuildIndexContents(ds));
  ASSERT_OK_AND_ASSIGN(auto index, SampleIndex::FromContents(contents));
  ASSERT_EQ(index->num_shards(Split::kTrain), 5u);
  ASSERT_OK_AND_ASSIGN(auto positioned, ExampleFetcher::Make(ds, index, Positioned()));
  ASSERT_OK_AND_ASSIGN(auto whole, ExampleFetcher::Make(ds, index, WholeShard()));
  EXPECT_EQ(ExpectSameValues(*positioned, *whole, *ds, "generated"), 56u);
  EXPECT_EQ(positioned->stats().example_reads, 56u);
  EXPECT_EQ(whole->stats().example_reads, 0u);
  EXPECT_EQ(whole->stats().misses, 56u);
  // And against the sequential reader.
  ASSERT_OK_AND_ASSIGN(testing::SequentialRead seq, testing::ReadSequentially(ds, Split::kTrain));
  ASSERT_EQ(seq.values.size(), 56u);
  for (std::uint64_t i = 0; i < seq.values.size(); ++i) {
    ASSERT_OK_AND_ASSIGN(Example ex, positioned->Get(Split::kTrain, i));
    EXPECT_EQ(testing::ValuesHex(ex), seq.values[i]) << i;
    EXPECT_EQ(ex.shard->num_examples(), 1u);
  }
}

TEST(PositionedFetchTest, ReadsFarFewerBytesThanTheShard) {
  TempDir tmp;
  ASSERT_OK_AND_ASSIGN(std::shared_ptr<Dataset> ds, MakeUncompressedDataset(tmp.path() + "/ds"));
  ASSERT_OK_AND_ASSIGN(IndexContents contents, BuildIndexContents(ds));
  ASSERT_OK_AND_ASSIGN(auto index, SampleIndex::FromContents(contents));
  ASSERT_OK_AND_ASSIGN(std::uint64_t shard_size, FileSize(ds->root() + "/" + std::string(index->shard_path(Split::kTrain, 0))));
  ASSERT_GT(shard_size, 16u * 8192);
  ASSERT_OK_AND_ASSIGN(auto positioned, ExampleFetcher::Make(ds, index, Positioned()));
  ASSERT_OK_AND_ASSIGN(auto whole, ExampleFetcher::Make(ds, index, WholeShard()));
  testing::FaultFileSystem counting;
  testing::ScopedFileSystem installed(&counting);
  ASSERT_OK_AND_ASSIGN(Example ex, positioned->Get(Split::kTrain, 9));
  std::uint64_t example_bytes = 0;
  for (std::size_t j = 0; j < 5; ++j) example_bytes += ex.Get(j).data.size();
  const auto positioned_bytes = static_cast<std::uint64_t>(counting.bytes_read());
  EXPECT_GE(positioned_bytes, example_bytes);
  // The example's bytes and a few 4 KiB blocks of offsets.
  EXPECT_LE(positioned_bytes, example_bytes + 5 * 4096) << shard_size;
  EXPECT_LT(positioned_bytes * 4, shard_size);  // one example of 16, plus the offsets
  ASSERT_OK(whole->Get(Split::kTrain, 9).status());
  EXPECT_GE(static_cast<std::uint64_t>(counting.bytes_read()) - positioned_bytes, shard_size);
}

TEST(PositionedFetchTest, ReadErrorsAreReported) {
  TempDir tmp;
  ASSERT_OK_AND_ASSIGN(std::shared_ptr<Dataset> ds, MakeUncompressedDataset(tmp.path() + "/ds"));
  ASSERT_OK_AND_ASSIGN(IndexContents contents, BuildIndexContents(ds));
  ASSERT_OK_AND_ASSIGN(auto index, SampleIndex::FromContents(contents));
  ASSERT_OK_AND_ASSIGN(auto positioned, ExampleFetcher::Make(ds, index, Positioned()));
  for (std::int64_t at : {1, 2, 3, 4}) {
    testing::FaultPlan plan;
    plan.op = testing::FaultOp::kRead;
    plan.at = at;
    plan.error = EIO;
    testing::FaultFileSystem faulty(plan);
    testing::ScopedFileSystem installed(&faulty);
    SCOPED_TRACE(::testing::Message() << at);
    EXPECT_STATUS(StatusCode::kIOError, "cannot read", positioned->Get(Split::kTrain, 3));
    EXPECT_TRUE(faulty.fired());
  }
}

// Damaged shards: errors that name the file, never a crash. Only the bytes a
// fetch reads are checked: a fetch of another example may still succeed.
TEST(PositionedFetchTest, DamagedShardsGiveErrorsNamingTheFile) {
  TempDir tmp;
  ASSERT_OK_AND_ASSIGN(std::shared_ptr<Dataset> ds, MakeUncompressedDataset(tmp.path() + "/ds"));
  ASSERT_OK_AND_ASSIGN(IndexContents contents, BuildIndexContents(ds));
  ASSERT_OK_AND_ASSIGN(auto index, SampleIndex::FromContents(contents));
  const std::string rel(index->shard_path(Split::kTrain, 0));
  const std::string path = ds->root() + "/" + rel;
  std::string original;
  {
    std::ifstream in(path, std::ios::binary);
    original.assign(std::istreambuf_iterator<char>(in), {});
  }
  ASSERT_GT(original.size(), 1000u);
  auto write = [&](const std::string& bytes) { std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes; };
  auto expect_refused = [&](std::uint64_t example, const char* what) {
    ASSERT_OK_AND_ASSIGN(auto f, ExampleFetcher::Make(ds, index, Positioned()));
    auto r = f->Get(Split::kTrain, example);
    ASSERT_FALSE(r.ok()) << what;
    EXPECT_EQ(r.status().code(), StatusCode::kCorruption) << what << ": " << r.status().ToString();
    EXPECT_EQ(r.status().message().rfind(rel + ": fb shard", 0), 0u) << what << ": " << r.status().message();
  };
  // Cut in half: example 0 (written first, at the end of the file) is gone.
  write(original.substr(0, original.size() / 2));
  expect_refused(0, "truncated");
  write("");
  expect_refused(3, "empty");
  // Root offset pointing outside the file.
  std::string bytes = original;
  bytes[3] = '\x7f';
  write(bytes);
  expect_refused(3, "root offset");
  // More examples than the metadata records.
  write(original);
  {
    ASSERT_OK_AND_ASSIGN(auto whole, ExampleFetcher::Make(ds, index, WholeShard()));
    ASSERT_OK_AND_ASSIGN(Example ex, whole->Get(Split::kTrain, 0));
    (void)ex;
  }
  contents.splits[0].shard_examples[0] = 15;
  contents.splits[0].shard_examples[1] = 17;
  ASSERT_OK_AND_ASSIGN(auto wrong, SampleIndex::FromContents(contents));
  ASSERT_OK_AND_ASSIGN(auto f, ExampleFetcher::Make(ds, wrong, Positioned()));
  EXPECT_STATUS(StatusCode::kCorruption, "holds 16 examples, the metadata records 15", f->Get(Split::kTrain, 0));
  // A shard file that is a folder, or missing.
  std::filesystem::remove(path);
  ASSERT_OK_AND_ASSIGN(auto g, ExampleFetcher::Make(ds, index, Positioned()));
  EXPECT_STATUS(StatusCode::kNotFound, "", g->Get(Split::kTrain, 0));
  std::filesystem::create_directory(path);
  EXPECT_STATUS(StatusCode::kIOError, "not a regular file", g->Get(Split::kTrain, 0));
}

// Fetches verified by the recorded hashes (strict_hashes: the checks sidecar
// has its own tests, fetch_checks_test.cc) hash whole files, so they keep
// reading whole shards (a damaged byte is still a hash mismatch); compressed
// shards keep the shard path too; so does positioned_reads = false and a
// fetcher with a cache.
TEST(PositionedFetchTest, VerifiedCompressedAndCachedFetchesReadWholeShards) {
  TempDir tmp;
  ASSERT_OK_AND_ASSIGN(std::shared_ptr<Dataset> ds, MakeUncompressedDataset(tmp.path() + "/ds"));
  ASSERT_OK_AND_ASSIGN(IndexContents contents, BuildIndexContents(ds));
  ASSERT_OK_AND_ASSIGN(auto index, SampleIndex::FromContents(contents));
  FetchOptions verified;
  verified.cache_bytes = 0;
  verified.strict_hashes = true;
  FetchOptions cached = Positioned();
  cached.cache_bytes = 64 << 20;
  for (const FetchOptions& o : {verified, cached, WholeShard()}) {
    ASSERT_OK_AND_ASSIGN(auto f, ExampleFetcher::Make(ds, index, o));
    ASSERT_OK(f->Get(Split::kTrain, 20).status());
    EXPECT_EQ(f->stats().example_reads, 0u);
    EXPECT_EQ(f->stats().misses, 1u);
  }
  const std::string path = ds->root() + "/" + std::string(index->shard_path(Split::kTrain, 1));
  std::string bytes;
  {
    std::ifstream in(path, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  bytes[bytes.size() - 100] ^= 0x20;  // inside example 16's trace
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
  ASSERT_OK_AND_ASSIGN(auto f, ExampleFetcher::Make(ds, index, verified));
  auto r = f->Get(Split::kTrain, 16);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().detail(), StatusDetail::kHashMismatch) << r.status().ToString();
  // Unverified, the flipped value is read as it is.
  ASSERT_OK_AND_ASSIGN(auto u, ExampleFetcher::Make(ds, index, Positioned()));
  ASSERT_OK(u->Get(Split::kTrain, 16).status());

  TempDir tmp2;
  ASSERT_OK_AND_ASSIGN(std::shared_ptr<Dataset> zstd, testing::MakeTreeDataset(tmp2.path() + "/ds"));
  ASSERT_OK_AND_ASSIGN(IndexContents zc, BuildIndexContents(zstd));
  ASSERT_OK_AND_ASSIGN(auto zindex, SampleIndex::FromContents(zc));
  ASSERT_OK_AND_ASSIGN(auto z, ExampleFetcher::Make(zstd, zindex, Positioned()));
  for (std::uint64_t i = 0; i < 4; ++i) ASSERT_OK(z->Get(Split::kTrain, i).status());
  EXPECT_EQ(z->stats().example_reads, 0u);
  EXPECT_EQ(z->stats().misses, 4u);
}

}  // namespace
}  // namespace sedpack
