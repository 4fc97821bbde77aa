// SPDX-License-Identifier: Apache-2.0
// The checks sidecar (.sedpack-hpc/checks.bin) as the readers use it: written
// by the Filler (and carried over by appends), verified fetches of one
// example equal to whole-shard decodes, every one-byte mutation of a shard
// caught, stale and damaged sidecars ignored with one warning, and
// strict_hashes forcing the recorded hashes.
#include <filesystem>
#include <fstream>
#include <iterator>

#include "codecs/decode_points_internal.h"
#include "sedpack/codecs/compress.h"
#include "sedpack/io/file.h"
#include "sidecar/sidecar_internal.h"
#include "dataset/verified_read.h"
#include "sedpack/index/fetch.h"
#include "shard/example_read.h"
#include "sidecar/checks_internal.h"
#include "sidecar/sidecar_files.h"
#include "unit/index/index_test_util.h"

namespace sedpack {
namespace {

using sidecar_internal::ChecksSidecar;
using testing::TempDir;

std::vector<std::byte> ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::vector<char> c((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::byte> out(c.size());
  std::memcpy(out.data(), c.data(), c.size());
  return out;
}

void WriteAll(const std::string& path, const std::vector<std::byte>& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

Attribute Attr(const char* name, const char* dtype, std::vector<std::int64_t> shape) {
  Attribute a;
  a.name = name;
  a.dtype = dtype;
  a.shape = std::move(shape);
  return a;
}

// fb shards of `per_shard` examples: a float trace of `trace` samples, a
// label, a str and a bytes value of varying sizes. Written by `fillers`
// fillers (appends), `per_filler` examples each.
Result<std::shared_ptr<Dataset>> MakeDataset(const std::string& root, Compression compression, int trace,
                                             int per_shard, int fillers, int per_filler) {
  DatasetStructure s;
  s.saved_data_description = {Attr("trace", "float32", {trace}), Attr("label", "int64", {}),
                              Attr("note", "str", {}), Attr("blob", "bytes", {})};
  s.compression = compression;
  s.examples_per_shard = per_shard;
  SEDPACK_ASSIGN_OR_RETURN(std::shared_ptr<Dataset> ds, Dataset::Create(root, Metadata{}, s));
  std::int64_t next = 0;
  for (int f = 0; f < fillers; ++f) {
    FillerOptions fo;
    fo.concurrency = 1;
    SEDPACK_ASSIGN_OR_RETURN(auto filler, Filler::Make(ds, fo));
    for (int k = 0; k < per_filler; ++k, ++next) {
      std::vector<float> t(static_cast<std::size_t>(trace));
      for (std::size_t i = 0; i < t.size(); ++i) t[i] = static_cast<float>(next * 7 + i);
      std::vector<std::uint8_t> blob(static_cast<std::size_t>(next % 5) * 3);
      for (std::size_t i = 0; i < blob.size(); ++i) blob[i] = static_cast<std::uint8_t>(next + 3 * i);
      const std::string note = "n" + std::to_string(next);
      const ValueView values[] = {ValueView::Array(t, {trace}), ValueView::Int(next), ValueView::Str(note),
                                  ValueView::Bytes(blob)};
      SEDPACK_RETURN_NOT_OK(filler->WriteExample(Split::kTrain, values));
    }
    SEDPACK_RETURN_NOT_OK(filler->Finish());
  }
  SEDPACK_RETURN_NOT_OK(ds->Reload());
  return ds;
}

std::shared_ptr<const SampleIndex> IndexOf(const std::shared_ptr<Dataset>& ds) {
  auto contents = BuildIndexContents(ds);
  EXPECT_TRUE(contents.ok());
  return *SampleIndex::FromContents(*contents);
}

// A dataset of one shard, its fresh sidecar and that shard's entry.
struct OneShard {
  std::shared_ptr<Dataset> ds;
  std::shared_ptr<const ChecksSidecar> checks;
  ShardInfo shard;
};

Result<OneShard> MakeOneShard(const std::string& root, Compression compression, int trace, int examples) {
  OneShard out;
  SEDPACK_ASSIGN_OR_RETURN(out.ds, MakeDataset(root, compression, trace, examples, 1, examples));
  out.checks = sidecar_internal::LoadFreshChecks(out.ds->root(), nullptr);
  if (!out.checks) return Status::Internal("no fresh checks sidecar");
  SEDPACK_ASSIGN_OR_RETURN(auto shards, ListShards(out.ds, Split::kTrain));
  if (shards.size() != 1) return Status::Internal(shards.size(), " shards");
  out.shard = shards[0];
  return out;
}

FetchOptions Checked() {
  FetchOptions o;
  o.cache_bytes = 0;
  return o;
}

TEST(ChecksSidecarTest, FillerRecordsEveryShardAndAppendsCarryThemOver) {
  TempDir tmp;
  ASSERT_OK_AND_ASSIGN(auto ds, MakeDataset(tmp.path() + "/ds", Compression::kNone, 64, 4, 3, 6));
  int warnings = 0;
  auto checks = sidecar_internal::LoadFreshChecks(ds->root(), [&](const std::string&) { ++warnings; });
  ASSERT_NE(checks, nullptr);
  EXPECT_EQ(warnings, 0);
  ASSERT_OK_AND_ASSIGN(auto shards, ListShards(ds, Split::kTrain));
  ASSERT_EQ(shards.size(), 6u);  // three fillers of 4 + 2 examples
  EXPECT_EQ(checks->size(), shards.size());
  for (const ShardInfo& info : shards) {
    const std::string& rel = info.file_infos[0].file_path;
    const auto record = checks->Find(rel);
    ASSERT_NE(record, nullptr) << rel;
    const std::vector<std::byte> file = ReadAll(ds->PathOf(rel));
    EXPECT_EQ(record->stored_size(), file.size());
    EXPECT_EQ(record->stored_checksum(), codecs_internal::FastChecksum(file));
    EXPECT_EQ(record->decoded_size(), file.size());
    ASSERT_EQ(record->num_examples(), static_cast<std::size_t>(info.number_of_examples));
    ASSERT_EQ(record->values_per_example(), 4u);
    // Each range holds exactly the value a whole-shard decode gives.
    ASSERT_OK_AND_ASSIGN(auto decoded, ReadShard(*ds, info));
    for (std::size_t e = 0; e < record->num_examples(); ++e) {
      codecs_internal::FastChecksummer sum;
      for (std::size_t j = 0; j < 4; ++j) {
        const auto r = record->value(e, j);
        const auto v = decoded->Get(e, j).data;
        ASSERT_EQ(r.size, v.size());
        EXPECT_EQ(0, std::memcmp(file.data() + r.offset, v.data(), v.size())) << rel << " " << e << " " << j;
        sum.Update(v);
      }
      EXPECT_EQ(sum.Digest(), record->example_checksum(e));
    }
  }
  // Not a fresh sidecar for another dataset_info.json: a shard not in it is
  // simply absent.
  EXPECT_EQ(checks->Find("train/none.fb"), nullptr);
}

// Verified fetches, and unverified ones of compressed shards (from their
// decode points), read one example, equal to what a whole-shard read gives.
TEST(ChecksSidecarTest, VerifiedFetchesReadOneExampleAndEqualWholeShards) {
  TempDir tmp;
  for (Compression c : {Compression::kNone, Compression::kLz4, Compression::kGzip}) {
    SCOPED_TRACE(CompressionName(c));
    ASSERT_OK_AND_ASSIGN(auto ds, MakeDataset(tmp.path() + "/" + std::string(CompressionName(c)), c, 256, 8, 2, 13));
    auto index = IndexOf(ds);
    ASSERT_OK_AND_ASSIGN(auto one, ExampleFetcher::Make(ds, index, Checked()));
    FetchOptions strict = Checked();
    strict.strict_hashes = true;
    ASSERT_OK_AND_ASSIGN(auto whole, ExampleFetcher::Make(ds, index, strict));
    FetchOptions unverified = Checked();
    unverified.verify_hashes = false;
    ASSERT_OK_AND_ASSIGN(auto fast, ExampleFetcher::Make(ds, index, unverified));
    ASSERT_OK_AND_ASSIGN(testing::SequentialRead seq, testing::ReadSequentially(ds, Split::kTrain));
    ASSERT_EQ(seq.values.size(), 26u);
    for (std::uint64_t i = 0; i < 26; ++i) {
      ASSERT_OK_AND_ASSIGN(Example a, one->Get(Split::kTrain, i));
      ASSERT_OK_AND_ASSIGN(Example b, whole->Get(Split::kTrain, i));
      EXPECT_EQ(testing::ValuesHex(a), seq.values[i]) << i;
      EXPECT_EQ(testing::ValuesHex(b), seq.values[i]) << i;
      ASSERT_OK_AND_ASSIGN(Example f, fast->Get(Split::kTrain, i));
      EXPECT_EQ(testing::ValuesHex(f), seq.values[i]) << i;
    }
    EXPECT_EQ(whole->stats().example_reads, 0u);
    EXPECT_EQ(one->stats().example_reads, 26u);
    EXPECT_EQ(fast->stats().example_reads, 26u);
    EXPECT_TRUE(FetchReadsExamplesAlone(*ds, FetchOptions{}));
    EXPECT_FALSE(FetchReadsExamplesAlone(*ds, strict));
    EXPECT_TRUE(FetchReadsExamplesAlone(*ds, unverified));
  }
}

// The covering-range reader on the decoded bytes of a compressed shard (what
// a fetch through decode points hands it): the same values as the decoder.
TEST(ChecksSidecarTest, RangeReaderOverDecodedBytesOfACompressedShard) {
  TempDir tmp;
  ASSERT_OK_AND_ASSIGN(OneShard one, MakeOneShard(tmp.path() + "/ds", Compression::kZstd, 100, 8));
  const auto& ds = one.ds;
  const std::vector<ShardInfo> shards = {one.shard};
  const auto record = one.checks->Find(shards[0].file_infos[0].file_path);
  ASSERT_NE(record, nullptr);
  ASSERT_OK_AND_ASSIGN(auto decoded, ReadShard(*ds, shards[0]));
  // The decoded FlatBuffer: the ranges are offsets into it.
  std::vector<std::byte> plain;
  {
    ASSERT_OK_AND_ASSIGN(auto stored, ReadFileBytes(ds->PathOf(shards[0].file_infos[0].file_path)));
    ASSERT_OK_AND_ASSIGN(auto codec, MakeCodec(Compression::kZstd));
    ASSERT_OK(codec->Decompress(stored, 1ULL << 30, &plain));
  }
  ASSERT_EQ(plain.size(), record->decoded_size());
  std::vector<AttributeSpec> schema = ds->schema();
  int reads = 0;
  const shard_internal::ReadAt from_plain = [&](std::uint64_t off, std::span<std::byte> out) {
    ++reads;
    std::memcpy(out.data(), plain.data() + off, out.size());
    return Status::OK();
  };
  for (std::size_t e = 0; e < record->num_examples(); ++e) {
    std::vector<shard_internal::ValueRange> ranges;
    for (std::size_t j = 0; j < 4; ++j) ranges.push_back({record->value(e, j).offset, record->value(e, j).size});
    reads = 0;
    auto one = shard_internal::ReadFbExampleByRanges(schema, e, ranges, record->example_checksum(e), from_plain);
    ASSERT_TRUE(one.ok()) << one.status().ToString();
    EXPECT_EQ(reads, 1);  // one covering range
    for (std::size_t j = 0; j < 4; ++j) {
      const auto x = one->values->Get(0, j).data;
      const auto y = decoded->Get(e, j).data;
      ASSERT_EQ(x.size(), y.size());
      EXPECT_EQ(0, std::memcmp(x.data(), y.data(), x.size()));
    }
    // A flipped byte of the example's values is caught.
    const auto r = record->value(e, 0);
    plain[r.offset + r.size / 2] ^= std::byte{1};
    auto bad = shard_internal::ReadFbExampleByRanges(schema, e, ranges, record->example_checksum(e), from_plain);
    EXPECT_EQ(bad.status().detail(), StatusDetail::kHashMismatch);
    plain[r.offset + r.size / 2] ^= std::byte{1};
  }
}

// Every byte of a small uncompressed shard flipped in turn: the whole-shard
// check (sequential reads) catches every one, and a fetch of any example
// either fails with Corruption or returns that example's true values.
TEST(ChecksSidecarTest, EveryOneByteMutationIsCaught) {
  TempDir tmp;
  ASSERT_OK_AND_ASSIGN(auto ds, MakeDataset(tmp.path() + "/ds", Compression::kNone, 4, 3, 1, 3));
  auto index = IndexOf(ds);
  ASSERT_OK_AND_ASSIGN(testing::SequentialRead seq, testing::ReadSequentially(ds, Split::kTrain));
  ASSERT_OK_AND_ASSIGN(auto shards, ListShards(ds, Split::kTrain));
  ASSERT_EQ(shards.size(), 1u);
  const std::string path = ds->PathOf(shards[0].file_infos[0].file_path);
  const std::vector<std::byte> original = ReadAll(path);
  ASSERT_GT(original.size(), 100u);
  auto checks = sidecar_internal::LoadFreshChecks(ds->root(), nullptr);
  ASSERT_NE(checks, nullptr);
  std::size_t fetch_caught = 0;
  for (std::size_t pos = 0; pos < original.size(); ++pos) {
    std::vector<std::byte> bytes = original;
    bytes[pos] ^= std::byte{0x10};
    WriteAll(path, bytes);
    auto whole = dataset_internal::ReadShardChecked(*ds, shards[0], {}, true, checks.get());
    ASSERT_FALSE(whole.ok()) << "byte " << pos;
    EXPECT_EQ(whole.status().detail(), StatusDetail::kHashMismatch) << pos;
    ASSERT_OK_AND_ASSIGN(auto fetcher, ExampleFetcher::Make(ds, index, Checked()));
    bool any = false;
    for (std::uint64_t i = 0; i < 3; ++i) {
      auto ex = fetcher->Get(Split::kTrain, i);
      if (!ex.ok()) {
        EXPECT_EQ(ex.status().code(), StatusCode::kCorruption) << pos;
        EXPECT_NE(ex.status().message().find(path), std::string::npos) << ex.status().ToString();
        EXPECT_NE(ex.status().message().find("example " + std::to_string(i)), std::string::npos);
        any = true;
        continue;
      }
      EXPECT_EQ(testing::ValuesHex(*ex), seq.values[i]) << "byte " << pos << " example " << i;
    }
    fetch_caught += any ? 1 : 0;
  }
  WriteAll(path, original);
  // The value bytes are a good part of this shard: their mutations were caught by a fetch.
  EXPECT_GT(fetch_caught, 40u);
}

// A shard of several of the sequential reader's read pieces (it checksums
// each piece as it arrives): a clean read passes, and a flipped byte in the
// first piece, on either side of a piece boundary or in the last byte is a
// hash mismatch, uncompressed and LZ4.
TEST(ChecksSidecarTest, ShardsLargerThanAReadPieceAreCheckedWhole) {
  for (Compression c : {Compression::kNone, Compression::kLz4}) {
    TempDir tmp;
    ASSERT_OK_AND_ASSIGN(OneShard one, MakeOneShard(tmp.path() + "/ds", c, 300000, 3));
    const std::string path = one.ds->PathOf(one.shard.file_infos[0].file_path);
    const std::vector<std::byte> original = ReadAll(path);
    constexpr std::size_t kMiB = std::size_t{1} << 20;
    ASSERT_GT(original.size(), 2 * kMiB + 1) << CompressionName(c);
    ASSERT_OK(dataset_internal::ReadShardChecked(*one.ds, one.shard, {}, true, one.checks.get()).status());
    for (std::size_t pos : {std::size_t{7}, kMiB - 1, kMiB, 2 * kMiB + 1, original.size() - 1}) {
      std::vector<std::byte> bytes = original;
      bytes[pos] ^= std::byte{0x01};
      WriteAll(path, bytes);
      auto read = dataset_internal::ReadShardChecked(*one.ds, one.shard, {}, true, one.checks.get());
      EXPECT_EQ(read.status().detail(), StatusDetail::kHashMismatch) << CompressionName(c) << " byte " << pos;
    }
    WriteAll(path, original);
  }
}

// A checks.bin made for another dataset_info.json, or damaged: one warning,
// then the recorded hashes are checked as without a sidecar.
TEST(ChecksSidecarTest, StaleAndDamagedSidecarsAreIgnoredWithOneWarning) {
  TempDir tmp;
  ASSERT_OK_AND_ASSIGN(auto ds, MakeDataset(tmp.path() + "/ds", Compression::kNone, 16, 4, 1, 8));
  const std::string sidecar = SidecarPath(ds->root(), sidecar_internal::kChecksFileName);
  const std::vector<std::byte> first = ReadAll(sidecar);
  {
    // An append: the sidecar now belongs to the new dataset_info.json.
    FillerOptions fo;
    ASSERT_OK_AND_ASSIGN(auto filler, Filler::Make(ds, fo));
    std::vector<float> t(16, 1.0f);
    const ValueView values[] = {ValueView::Array(t, {16}), ValueView::Int(99), ValueView::Str("x"),
                                ValueView::Bytes(std::span<const std::uint8_t>())};
    ASSERT_OK(filler->WriteExample(Split::kTrain, values));
    ASSERT_OK(filler->Finish());
    ASSERT_OK(ds->Reload());
  }
  auto fresh = sidecar_internal::LoadFreshChecks(ds->root(), nullptr);
  ASSERT_NE(fresh, nullptr);
  EXPECT_EQ(fresh->size(), 3u);  // two shards carried over, one new
  std::vector<std::byte> damaged = ReadAll(sidecar);
  damaged[damaged.size() / 2] ^= std::byte{4};
  ASSERT_OK_AND_ASSIGN(auto shards, ListShards(ds, Split::kTrain));
  const std::string shard = ds->PathOf(shards[0].file_infos[0].file_path);
  const std::vector<std::byte> shard_bytes = ReadAll(shard);
  auto index = IndexOf(ds);
  for (const auto& [name, bytes] : {std::pair<std::string, std::vector<std::byte>>{"stale", first}, {"damaged", damaged}}) {
    SCOPED_TRACE(name);
    WriteAll(sidecar, bytes);
    std::vector<std::string> warnings;
    ReadOptions ro;
    ro.warn = [&](const std::string& w) { warnings.push_back(w); };
    ASSERT_OK_AND_ASSIGN(auto reader, ExampleReader::Make(ds, Split::kTrain, ro));
    std::size_t n = 0;
    for (;;) {
      ASSERT_OK_AND_ASSIGN(auto e, reader->Next());
      if (!e) break;
      ++n;
    }
    EXPECT_EQ(n, 9u);
    FetchOptions fo = Checked();
    fo.warn = ro.warn;
    ASSERT_OK_AND_ASSIGN(auto fetcher, ExampleFetcher::Make(ds, index, fo));
    ASSERT_OK(fetcher->Get(Split::kTrain, 0).status());
    ASSERT_EQ(warnings.size(), 2u);  // one per reader
    EXPECT_NE(warnings[0].find(name), std::string::npos) << warnings[0];
    EXPECT_EQ(fetcher->stats().example_reads, 0u);
    // Still verified: by the recorded hash.
    std::vector<std::byte> bad = shard_bytes;
    bad[bad.size() / 2] ^= std::byte{1};
    WriteAll(shard, bad);
    ASSERT_OK_AND_ASSIGN(auto reader2, ExampleReader::Make(ds, Split::kTrain, ro));
    Status st;
    for (;;) {
      auto e = reader2->Next();
      if (!e.ok()) {
        st = e.status();
        break;
      }
      if (!*e) break;
    }
    EXPECT_EQ(st.detail(), StatusDetail::kHashMismatch) << st.ToString();
    EXPECT_EQ(st.message().find("checks sidecar"), std::string::npos) << st.ToString();
    WriteAll(shard, shard_bytes);
  }
}

// A shard altered together with a sidecar rewritten to match it: the default
// (sidecar) checks accept it, strict_hashes catches it by the recorded hash.
TEST(ChecksSidecarTest, StrictHashesCatchAShardRewrittenWithItsSidecar) {
  TempDir tmp;
  ASSERT_OK_AND_ASSIGN(OneShard one, MakeOneShard(tmp.path() + "/ds", Compression::kNone, 16, 4));
  const auto& ds = one.ds;
  const std::string rel = one.shard.file_infos[0].file_path;
  sidecar_internal::ShardChecks record = one.checks->Find(rel)->ToChecks();
  std::vector<std::byte> bytes = ReadAll(ds->PathOf(rel));
  // Change example 2's trace and make the sidecar agree.
  const auto r = record.values[2 * 4];
  bytes[r.offset] ^= std::byte{0x40};
  WriteAll(ds->PathOf(rel), bytes);
  record.stored_checksum = codecs_internal::FastChecksum(bytes);
  codecs_internal::FastChecksummer sum;
  for (std::size_t j = 0; j < 4; ++j) {
    const auto v = record.values[2 * 4 + j];
    sum.Update(std::span<const std::byte>(bytes.data() + v.offset, v.size));
  }
  record.example_checksums[2] = sum.Digest();
  ASSERT_OK_AND_ASSIGN(DatasetInfoDigest digest, DatasetInfoSha256(ds->root()));
  ASSERT_OK(sidecar_internal::WriteChecks(ds->root(), digest, nullptr, {record}));
  auto index = IndexOf(ds);
  ASSERT_OK_AND_ASSIGN(auto lax, ExampleFetcher::Make(ds, index, Checked()));
  EXPECT_TRUE(lax->Get(Split::kTrain, 2).ok());
  FetchOptions strict = Checked();
  strict.strict_hashes = true;
  ASSERT_OK_AND_ASSIGN(auto fetcher, ExampleFetcher::Make(ds, index, strict));
  EXPECT_EQ(fetcher->Get(Split::kTrain, 2).status().detail(), StatusDetail::kHashMismatch);
  ReadOptions ro;
  ro.strict_hashes = true;
  ASSERT_OK_AND_ASSIGN(auto reader, ExampleReader::Make(ds, Split::kTrain, ro));
  EXPECT_EQ(reader->Next().status().detail(), StatusDetail::kHashMismatch);
  ReadOptions lax_read;
  ASSERT_OK_AND_ASSIGN(auto reader2, ExampleReader::Make(ds, Split::kTrain, lax_read));
  EXPECT_TRUE(reader2->Next().ok());
}

}  // namespace
}  // namespace sedpack
