// SPDX-License-Identifier: Apache-2.0
// The capture importers end to end: TRS files of every coding (v1, v2, titles,
// legacy offsets, long-length objects) and ChipWhisperer projects (two
// segments and a disabled one, a folder and a zip) written by the fixtures,
// imported, and every value compared with what the fixture wrote. The same
// tests run serially and under mpirun (tests/mpi/*_main.cc). Hostile headers
// and project paths get clear errors.
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>

#include "capture/fixtures.h"
#include "mpi/shared_dir.h"
#include "mpi/test_comm.h"
#include "sedpack/capture/chipwhisperer.h"
#include "sedpack/capture/export.h"
#include "sedpack/capture/import.h"
#include "sedpack/capture/sources.h"
#include "sedpack/capture/trs.h"
#include "capture/trs_internal.h"
#include "sedpack/check/check.h"
#include "sedpack/dataset/dataset.h"
#include "sedpack/dataset/filler.h"
#include "sedpack/generate/generate.h"
#include "sedpack/dataset/reader.h"
#include "npy/zip_internal.h"
#include "support/fault_fs.h"
#include "sidecar/checks_internal.h"
#include "support/test_support.h"

namespace sedpack {
namespace {

using testing::SharedDir;
using testing::TestComm;
using testing::TrsSpec;

template <typename Fn>
void OnRoot(Fn make) {
  if (TestComm().rank() == 0) make();
  EXPECT_OK(TestComm().Barrier());
}

double AsDouble(const ValueView& v, std::size_t i) {
  switch (v.dtype) {
    case DType::kInt8: return v.At<std::int8_t>(i);
    case DType::kUInt8: return v.At<std::uint8_t>(i);
    case DType::kInt16: return v.At<std::int16_t>(i);
    case DType::kInt32: return v.At<std::int32_t>(i);
    case DType::kFloat32: return v.At<float>(i);
    case DType::kFloat64: return v.At<double>(i);
    default: return NAN;
  }
}

std::vector<std::unique_ptr<CaptureInput>> OpenTrs(const std::vector<std::string>& files,
                                                   TrsCountPolicy policy = TrsCountPolicy::kStrict) {
  std::vector<std::unique_ptr<CaptureInput>> in;
  for (const std::string& f : files) {
    auto r = OpenTrsInput(f, policy, nullptr);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    if (r.ok()) in.push_back(std::move(r).value());
  }
  return in;
}

CaptureImportConfig DefaultConfig(const CaptureInput& in, std::string_view key) {
  auto c = ParseCaptureImportConfig(SuggestCaptureMapping(in, key), "suggested", key);
  EXPECT_TRUE(c.ok()) << c.status().ToString();
  return c.ok() ? *c : CaptureImportConfig{};
}

CaptureImportSummary Import(const CaptureImportConfig& c, const std::vector<std::unique_ptr<CaptureInput>>& in,
                            const std::string& out, CaptureImportOptions o = {}) {
  auto s = ImportCapture(TestComm(), c, in, out, o);
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  return s.ok() ? *s : CaptureImportSummary{};
}

void ExpectChecksClean(const std::string& out) {
  if (TestComm().rank() != 0) return;
  CheckOptions co;
  co.deep = true;
  auto report = CheckDataset(out, co);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_TRUE(report->ok()) << (report->problems.empty() ? "" : report->problems.front().message);
  // The import's writer left a fresh checks sidecar recording every shard.
  auto checks = sidecar_internal::LoadFreshChecks(out, nullptr);
  ASSERT_NE(checks, nullptr) << out;
  ASSERT_OK_AND_ASSIGN(auto ds, Dataset::Open(out));
  std::size_t shards = 0;
  for (Split split : {Split::kTrain, Split::kTest, Split::kHoldout}) {
    if (!ds->info().FindSplit(split)) continue;
    ASSERT_OK_AND_ASSIGN(auto listed, ListShards(ds, split));
    for (const ShardInfo& s : listed) EXPECT_NE(checks->Find(s.file_infos[0].file_path), nullptr);
    shards += listed.size();
  }
  EXPECT_EQ(checks->size(), shards);
}

std::size_t AttrIndex(const Dataset& ds, const std::string& name) {
  for (std::size_t i = 0; i < ds.schema().size(); ++i) {
    if (ds.schema()[i].name == name) return i;
  }
  ADD_FAILURE() << "no attribute " << name;
  return 0;
}

// Every value of the train split against the TRS fixtures `specs` (in order).
void ExpectTrsValues(const std::string& out, const std::vector<TrsSpec>& specs, std::uint64_t first_col = 0,
                     std::uint64_t cols = 0) {
  if (TestComm().rank() != 0) return;
  ASSERT_OK_AND_ASSIGN(auto ds, Dataset::Open(out));
  ReadOptions ro;
  ro.prefetch_shards = 0;
  ASSERT_OK_AND_ASSIGN(auto reader, ExampleReader::Make(ds, Split::kTrain, ro));
  const std::size_t trace = AttrIndex(*ds, "trace");
  for (const TrsSpec& s : specs) {
    for (std::uint64_t t = 0; t < s.traces; ++t) {
      ASSERT_OK_AND_ASSIGN(auto ex, reader->Next());
      ASSERT_TRUE(ex.has_value()) << "ends before trace " << t;
      const ValueView v = ex->Get(trace);
      const std::uint64_t n = cols ? cols : s.samples;
      ASSERT_EQ(v.data.size(), n * testing::CodingSize(s.coding));
      for (std::uint64_t i = 0; i < n; ++i) {
        ASSERT_EQ(AsDouble(v, i), testing::SampleValue(s, t, first_col + i)) << "trace " << t << " sample " << i;
      }
      if (s.title_space) {
        const ValueView title = ex->Get(AttrIndex(*ds, "title"));
        EXPECT_EQ(std::string(reinterpret_cast<const char*>(title.data.data()), title.data.size()),
                  testing::TitleOf(t));
      }
      const auto data = testing::DataOf(s, t);
      if (s.v2 || s.legacy) {
        const ValueView in = ex->Get(AttrIndex(*ds, "INPUT"));
        ASSERT_EQ(in.data.size(), 16u);
        EXPECT_EQ(std::memcmp(in.data.data(), data.data(), 16), 0) << "trace " << t;
        const ValueView outv = ex->Get(AttrIndex(*ds, "OUTPUT"));
        ASSERT_EQ(outv.data.size(), s.v2 ? 16u : s.data - 16u);
        EXPECT_EQ(std::memcmp(outv.data.data(), data.data() + 16, outv.data.size()), 0);
      }
      if (s.v2) {
        const ValueView c = ex->Get(AttrIndex(*ds, "COUNTER"));
        EXPECT_EQ(c.dtype, DType::kInt32);
        EXPECT_EQ(c.At<std::int32_t>(0), static_cast<std::int32_t>(t) - 5);
      } else if (s.data && !s.legacy) {
        const ValueView d = ex->Get(AttrIndex(*ds, "data"));
        ASSERT_EQ(d.data.size(), s.data);
        EXPECT_EQ(std::memcmp(d.data.data(), data.data(), s.data), 0);
      }
    }
  }
  ASSERT_OK_AND_ASSIGN(auto end, reader->Next());
  EXPECT_FALSE(end.has_value()) << "more examples than the fixtures hold";
}

TEST(TrsImport, EveryCodingV1WithTitlesAndData) {
  for (std::uint8_t coding : {0x01, 0x02, 0x04, 0x14}) {
    SharedDir dir;
    TrsSpec s;
    s.coding = coding;
    s.traces = 23;
    s.samples = 37;
    s.title_space = 12;
    s.data = 20;
    s.seed = coding;
    OnRoot([&] { testing::WriteTrs(dir / "a.trs", s); });
    auto in = OpenTrs({dir / "a.trs"});
    ASSERT_EQ(in.size(), 1u);
    CaptureImportConfig c = DefaultConfig(*in[0], "import_trs");
    c.structure.examples_per_shard = 5;
    const CaptureImportSummary sum = Import(c, in, dir / "out");
    EXPECT_EQ(sum.examples_total, 23u) << "coding " << int(coding);
    ExpectTrsValues(dir / "out", {s});
    ExpectChecksClean(dir / "out");
  }
}

TEST(TrsImport, LegacyOffsetsSplitTheData) {
  SharedDir dir;
  TrsSpec s;
  s.coding = 0x02;
  s.data = 24;
  s.legacy = true;
  OnRoot([&] { testing::WriteTrs(dir / "a.trs", s); });
  auto in = OpenTrs({dir / "a.trs"});
  ASSERT_EQ(in.size(), 1u);
  Import(DefaultConfig(*in[0], "import_trs"), in, dir / "out");
  ExpectTrsValues(dir / "out", {s});
}

// Counts every call it forwards: installed as the process default, it shows
// which code still reaches for the default instead of the FileSystem passed in.
class CountingFileSystem : public FileSystemWrapper {
 public:
  CountingFileSystem() : FileSystemWrapper(DefaultFileSystem()) {}
  std::int64_t calls() const { return calls_.load(); }

  int Open(const char* p, int f, unsigned m) override { return ++calls_, FileSystemWrapper::Open(p, f, m); }
  int OpenAt(int d, const char* p, int f, unsigned m) override { return ++calls_, FileSystemWrapper::OpenAt(d, p, f, m); }
  long OpenAt2(int d, const char* p, std::uint64_t h, std::uint64_t r) override {
    return ++calls_, FileSystemWrapper::OpenAt2(d, p, h, r);
  }
  int Close(int fd) override { return ++calls_, FileSystemWrapper::Close(fd); }
  long Read(int fd, void* b, std::size_t n) override { return ++calls_, FileSystemWrapper::Read(fd, b, n); }
  long Pread(int fd, void* b, std::size_t n, std::int64_t o) override {
    return ++calls_, FileSystemWrapper::Pread(fd, b, n, o);
  }
  long Write(int fd, const void* d, std::size_t n) override { return ++calls_, FileSystemWrapper::Write(fd, d, n); }
  long Pwrite(int fd, const void* d, std::size_t n, std::int64_t o) override {
    return ++calls_, FileSystemWrapper::Pwrite(fd, d, n, o);
  }
  long CopyFileRange(int in, std::int64_t* o, int out, std::size_t n) override {
    return ++calls_, FileSystemWrapper::CopyFileRange(in, o, out, n);
  }
  int Fsync(int fd) override { return ++calls_, FileSystemWrapper::Fsync(fd); }
  int Ftruncate(int fd, std::int64_t n) override { return ++calls_, FileSystemWrapper::Ftruncate(fd, n); }
  int AdviseSequential(int fd) override { return ++calls_, FileSystemWrapper::AdviseSequential(fd); }
  int StartWriteback(int fd, std::int64_t o, std::int64_t n) override {
    return ++calls_, FileSystemWrapper::StartWriteback(fd, o, n);
  }
  int Rename(const char* a, const char* b) override { return ++calls_, FileSystemWrapper::Rename(a, b); }
  int RenameExchange(const char* a, const char* b) override { return ++calls_, FileSystemWrapper::RenameExchange(a, b); }
  int RenameNoReplace(const char* a, const char* b) override {
    return ++calls_, FileSystemWrapper::RenameNoReplace(a, b);
  }
  int Link(const char* a, const char* b) override { return ++calls_, FileSystemWrapper::Link(a, b); }
  int Symlink(const char* a, const char* b) override { return ++calls_, FileSystemWrapper::Symlink(a, b); }
  int Unlink(const char* p) override { return ++calls_, FileSystemWrapper::Unlink(p); }
  int Mkdir(const char* p, unsigned m) override { return ++calls_, FileSystemWrapper::Mkdir(p, m); }
  int Rmdir(const char* p) override { return ++calls_, FileSystemWrapper::Rmdir(p); }
  int Stat(const char* p, FileStat* o) override { return ++calls_, FileSystemWrapper::Stat(p, o); }
  int Lstat(const char* p, FileStat* o) override { return ++calls_, FileSystemWrapper::Lstat(p, o); }
  int Fstat(int fd, FileStat* o) override { return ++calls_, FileSystemWrapper::Fstat(fd, o); }
  int ListDir(const char* p, std::vector<DirEntry>* e) override { return ++calls_, FileSystemWrapper::ListDir(p, e); }
  int ReadLink(const char* p, std::string* t) override { return ++calls_, FileSystemWrapper::ReadLink(p, t); }
  int RealPath(const char* p, std::string* r) override { return ++calls_, FileSystemWrapper::RealPath(p, r); }

 private:
  std::atomic<std::int64_t> calls_{0};
};

TEST(TrsImport, ReadsAndWritesThroughTheFileSystemPassedIn) {
  SharedDir dir;
  TrsSpec s;  // 10 float32 traces of 50 samples
  s.title_space = 8;
  OnRoot([&] { testing::WriteTrs(dir / "a.trs", s); });
  testing::FaultFileSystem passed;  // no fault planned: it only counts
  CountingFileSystem process_default;
  {
    testing::ScopedFileSystem scoped(&process_default);
    std::vector<std::unique_ptr<CaptureInput>> in;
    auto r = OpenTrsInput(dir / "a.trs", TrsCountPolicy::kStrict, nullptr, &passed);
    ASSERT_OK(r.status());
    in.push_back(std::move(r).value());
    CaptureImportConfig c = DefaultConfig(*in[0], "import_trs");
    c.structure.examples_per_shard = 5;
    CaptureImportOptions o;
    o.file_system = &passed;
    EXPECT_EQ(Import(c, in, dir / "out", o).examples_total, 10u);
  }
  EXPECT_EQ(process_default.calls(), 0);
  EXPECT_GT(passed.count(testing::FaultOp::kRead), 0);
  EXPECT_GT(passed.count(testing::FaultOp::kWrite), 0);
  EXPECT_GT(passed.count(testing::FaultOp::kRename), 0);
  ExpectTrsValues(dir / "out", {s});
  ExpectChecksClean(dir / "out");
}

TEST(TrsImport, Version2ParametersLongLengthScale) {
  SharedDir dir;
  TrsSpec s;
  s.v2 = true;
  s.data = 36;
  s.title_space = 10;
  s.long_description = true;
  s.scale_y = 0.125f;
  s.unknown_tag = true;
  s.traces = 17;
  OnRoot([&] { testing::WriteTrs(dir / "v2.trs", s); });
  std::vector<std::string> notes;
  ASSERT_OK_AND_ASSIGN(auto file, TrsFile::Open(dir / "v2.trs"));
  const TrsHeader& h = file->header();
  EXPECT_EQ(h.version, 2);
  EXPECT_EQ(h.description, std::string(300, 'd'));
  ASSERT_TRUE(h.scale_y.has_value());
  EXPECT_EQ(*h.scale_y, 0.125);
  ASSERT_EQ(h.parameter_definitions.size(), 3u);
  ASSERT_EQ(h.set_parameters.size(), 2u);
  EXPECT_EQ(h.set_parameters[0].name, "NAME");
  ASSERT_EQ(h.notes.size(), 1u);
  EXPECT_NE(h.notes[0].find("unknown header tag 0xE0"), std::string::npos) << h.notes[0];
  auto in = OpenTrs({dir / "v2.trs"});
  ASSERT_EQ(in.size(), 1u);
  Import(DefaultConfig(*in[0], "import_trs"), in, dir / "out");
  ExpectTrsValues(dir / "out", {s});
  if (TestComm().rank() == 0) {
    ASSERT_OK_AND_ASSIGN(auto ds, Dataset::Open(dir / "out"));
    const std::string cm = ds->info().metadata.custom_metadata.text();
    EXPECT_NE(cm.find("\"trace_set_parameters\":{\"NAME\":\"aes\",\"GAIN\":[2.5]}"), std::string::npos) << cm;
    const auto& attrs = ds->info().dataset_structure.saved_data_description;
    const std::string tcm = attrs[AttrIndex(*ds, "trace")].custom_metadata.text();
    EXPECT_NE(tcm.find("\"scale_y\":0.125"), std::string::npos) << tcm;
  }
}

TEST(TrsImport, WrongNumberOfTracesRefusedOrCompleteRecords) {
  SharedDir dir;
  TrsSpec s;
  s.traces = 9;
  s.header_traces = 12;       // an old count
  s.extra_bytes = 30;         // and a partial record
  OnRoot([&] { testing::WriteTrs(dir / "cut.trs", s); });
  auto strict = TrsFile::Open(dir / "cut.trs");
  ASSERT_FALSE(strict.ok());
  EXPECT_EQ(strict.status().code(), StatusCode::kCorruption);
  EXPECT_NE(strict.status().message().find("NUMBER_TRACES says 12"), std::string::npos) << strict.status().ToString();
  EXPECT_NE(strict.status().message().find("9 complete records"), std::string::npos) << strict.status().ToString();
  EXPECT_NE(strict.status().message().find("--complete-records"), std::string::npos);
  auto in = OpenTrs({dir / "cut.trs"}, TrsCountPolicy::kCompleteRecords);
  ASSERT_EQ(in.size(), 1u);
  EXPECT_EQ(in[0]->rows(), 9u);
  Import(DefaultConfig(*in[0], "import_trs"), in, dir / "out");
  ExpectTrsValues(dir / "out", {s});
  // An interrupted capture leaves 0.
  TrsSpec zero = s;
  zero.header_traces = 0;
  zero.extra_bytes = 0;
  OnRoot([&] { testing::WriteTrs(dir / "zero.trs", zero); });
  EXPECT_FALSE(TrsFile::Open(dir / "zero.trs").ok());
  ASSERT_OK_AND_ASSIGN(auto z, TrsFile::Open(dir / "zero.trs", TrsCountPolicy::kCompleteRecords));
  EXPECT_EQ(z->traces(), 9u);
}

TEST(TrsImport, FilesAppendInOrderAndMustAgree) {
  SharedDir dir;
  TrsSpec a, b, other;
  a.seed = 3;
  a.traces = 11;
  a.title_space = 8;
  b.seed = 4;
  b.traces = 6;
  b.title_space = 8;
  other = b;
  other.samples = 51;
  OnRoot([&] {
    testing::WriteTrs(dir / "a.trs", a);
    testing::WriteTrs(dir / "b.trs", b);
    testing::WriteTrs(dir / "c.trs", other);
  });
  auto in = OpenTrs({dir / "a.trs", dir / "b.trs"});
  ASSERT_EQ(in.size(), 2u);
  CaptureImportConfig c = DefaultConfig(*in[0], "import_trs");
  c.structure.examples_per_shard = 4;
  EXPECT_EQ(Import(c, in, dir / "out").examples_total, 17u);
  ExpectTrsValues(dir / "out", {a, b});
  auto bad = OpenTrs({dir / "a.trs", dir / "c.trs"});
  auto r = ImportCapture(TestComm(), c, bad, dir / "out2");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("must agree"), std::string::npos) << r.status().ToString();
  EXPECT_FALSE(std::filesystem::exists(dir / "out2"));
}

TEST(TrsImport, MappingRenamesDropsAndWindows) {
  SharedDir dir;
  TrsSpec s;
  s.coding = 0x02;
  s.v2 = true;
  s.data = 36;
  s.title_space = 10;
  OnRoot([&] { testing::WriteTrs(dir / "a.trs", s); });
  const std::string text = R"({
    "dataset_structure": {"saved_data_description": [
        {"name": "trace", "dtype": "int16", "shape": [10]},
        {"name": "plaintext", "dtype": "uint8", "shape": [16]}],
      "examples_per_shard": 3},
    "import_trs": {"splits": {"train": {"attributes": {
        "trace": {"dataset": "samples", "columns": [5, 15]},
        "plaintext": {"dataset": "data", "field": "INPUT"}}}}}})";
  ASSERT_OK_AND_ASSIGN(CaptureImportConfig c, ParseCaptureImportConfig(text, "inline", "import_trs"));
  auto in = OpenTrs({dir / "a.trs"});
  Import(c, in, dir / "out");
  if (TestComm().rank() == 0) {
    ASSERT_OK_AND_ASSIGN(auto ds, Dataset::Open(dir / "out"));
    ASSERT_EQ(ds->schema().size(), 2u);
    ASSERT_OK_AND_ASSIGN(auto reader, ExampleReader::Make(ds, Split::kTrain));
    for (std::uint64_t t = 0; t < s.traces; ++t) {
      ASSERT_OK_AND_ASSIGN(auto ex, reader->Next());
      ASSERT_TRUE(ex.has_value());
      for (std::uint64_t i = 0; i < 10; ++i) ASSERT_EQ(AsDouble(ex->Get(0), i), testing::SampleValue(s, t, 5 + i));
      const auto data = testing::DataOf(s, t);
      EXPECT_EQ(std::memcmp(ex->Get(1).data.data(), data.data(), 16), 0);
    }
  }
  // A wrong source and a dtype that does not match are refused before writing.
  for (const std::string& bad : {std::string("\"nonesuch\""), std::string("\"data.OUTPUT\"")}) {
    std::string t = text;
    t.replace(t.find("{\"dataset\": \"samples\", \"columns\": [5, 15]}"),
              std::string("{\"dataset\": \"samples\", \"columns\": [5, 15]}").size(), bad);
    ASSERT_OK_AND_ASSIGN(CaptureImportConfig c2, ParseCaptureImportConfig(t, "inline", "import_trs"));
    auto r = ImportCapture(TestComm(), c2, in, dir / "bad");
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument) << r.status().ToString();
    EXPECT_FALSE(std::filesystem::exists(dir / "bad"));
  }
  auto unknown = ParseCaptureImportConfig(R"({"import_trs": {"splits": {}, "bogus": 1}})", "inline", "import_trs");
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.status().message().find("bogus"), std::string::npos);
}

std::span<const std::byte> Bytes(const std::vector<std::uint8_t>& v) {
  return std::as_bytes(std::span<const std::uint8_t>(v));
}

TEST(TrsHeaderParse, HostileHeaders) {
  TrsSpec s;
  const std::vector<std::uint8_t> good = testing::TrsHeaderBytes(s);
  ASSERT_OK(ParseTrsHeader(Bytes(good), false, "x").status());
  // Truncated anywhere: a clear Corruption, never a crash.
  for (std::size_t n = 0; n + 1 < good.size(); ++n) {
    std::vector<std::uint8_t> cut(good.begin(), good.begin() + static_cast<std::ptrdiff_t>(n));
    auto r = ParseTrsHeader(Bytes(cut), false, "cut.trs");
    ASSERT_FALSE(r.ok()) << n;
    EXPECT_EQ(r.status().code(), StatusCode::kCorruption);
    EXPECT_NE(r.status().message().find("cut.trs"), std::string::npos);
  }
  // A length past the end.
  std::vector<std::uint8_t> past = {0x42, 0x04, 1, 0, 0, 0, 0x47, 0x84, 0xFF, 0xFF, 0x00, 0x00, 'a'};
  auto r = ParseTrsHeader(Bytes(past), false, "past.trs");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("truncated header"), std::string::npos) << r.status().ToString();
  // NUMBER_SAMPLES x coding size overflowing.
  std::vector<std::uint8_t> big;
  testing::Tlv(&big, 0x41, testing::Le(1, 4));
  testing::Tlv(&big, 0x42, testing::Le(0xFFFFFFFFFFFFFFFFULL, 8));
  testing::Tlv(&big, 0x43, testing::Le(0x04, 1));
  big.push_back(0x5F);
  big.push_back(0);
  r = ParseTrsHeader(Bytes(big), false, "big.trs");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("not a capture"), std::string::npos) << r.status().ToString();
  // An unknown coding, a missing NUMBER_SAMPLES, 9 length bytes.
  std::vector<std::uint8_t> coding;
  testing::Tlv(&coding, 0x42, testing::Le(5, 4));
  testing::Tlv(&coding, 0x43, testing::Le(0x03, 1));
  coding.push_back(0x5F);
  coding.push_back(0);
  r = ParseTrsHeader(Bytes(coding), false, "c.trs");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("SAMPLE_CODING"), std::string::npos);
  std::vector<std::uint8_t> no_ns = {0x43, 0x01, 0x01, 0x5F, 0x00};
  EXPECT_FALSE(ParseTrsHeader(Bytes(no_ns), false, "n.trs").ok());
  std::vector<std::uint8_t> nine = {0x47, 0x89, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0x5F, 0};
  EXPECT_FALSE(ParseTrsHeader(Bytes(nine), false, "9.trs").ok());
  // A trace parameter definition past LENGTH_DATA.
  TrsSpec v2;
  v2.v2 = true;
  v2.data = 20;  // COUNTER at 32 does not fit
  const auto h = testing::TrsHeaderBytes(v2);
  r = ParseTrsHeader(Bytes(h), false, "d.trs");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("LENGTH_DATA is 20"), std::string::npos) << r.status().ToString();
  // More of the file follows: ResourceExhausted, so the reader reads more.
  std::vector<std::uint8_t> half(good.begin(), good.begin() + 5);
  EXPECT_EQ(ParseTrsHeader(Bytes(half), true, "x").status().code(), StatusCode::kResourceExhausted);
}

// Random byte changes of a small v2 file: every outcome is a clean result or an
// error with a message (under the sanitizers: no read past a buffer).
TEST(TrsHeaderParse, MutatedFilesFailCleanly) {
  if (TestComm().rank() != 0) return;
  testing::TempDir dir;
  TrsSpec s;
  s.v2 = true;
  s.data = 36;
  s.title_space = 6;
  s.traces = 3;
  s.samples = 8;
  const std::string path = dir.path() + "/m.trs";
  testing::WriteTrs(path, s);
  std::ifstream f(path, std::ios::binary);
  const std::vector<char> good((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  std::uint64_t x = 12345;
  auto next = [&] { return x = x * 6364136223846793005ULL + 1442695040888963407ULL; };
  int opened = 0;
  for (int round = 0; round < 300; ++round) {
    std::vector<char> b = good;
    const int edits = 1 + static_cast<int>(next() % 4);
    for (int e = 0; e < edits; ++e) b[(next() >> 33) % b.size()] = static_cast<char>(next() >> 56);
    if (round % 5 == 0) b.resize((next() >> 33) % b.size());
    std::ofstream(path, std::ios::binary | std::ios::trunc).write(b.data(), static_cast<std::streamsize>(b.size()));
    auto in = OpenTrsInput(path, TrsCountPolicy::kCompleteRecords, nullptr);
    if (!in.ok()) {
      EXPECT_FALSE(in.status().message().empty());
      continue;
    }
    ++opened;
    std::vector<std::size_t> which;
    for (std::size_t i = 0; i < (*in)->fields().size(); ++i) which.push_back(i);
    std::vector<CaptureRows> rows;
    if ((*in)->rows() > 0) EXPECT_OK((*in)->Read(0, std::min<std::uint64_t>((*in)->rows(), 4), which, &rows));
  }
  EXPECT_GT(opened, 0);  // some mutations leave a readable file (e.g. a changed sample)
}

// ChipWhisperer: `proj.cwp` with segments 0 and 2 enabled and 1 disabled.
struct CwProjectFixture {
  std::uint64_t points = 40;
  std::vector<std::uint64_t> rows = {30, 25, 13}, num = {27, 20, 13};
  void Write(const std::string& root, const std::string& tracefile0 = "") const {
    std::filesystem::create_directories(root + "/proj_data/traces");
    std::ofstream cwp(root + "/proj.cwp");
    cwp << "[ChipWhisperer]\n[[General Settings]]\n\n[Trace Management]\n";
    for (int i = 0; i < 3; ++i) {
      const std::string prefix = "2024.01.0" + std::to_string(i + 1) + "-10.00.00_";
      testing::WriteCwSegment(root + "/proj_data/traces", prefix, static_cast<std::uint64_t>(i), rows[i], num[i],
                              points, i == 0);
      cwp << "tracefile" << i << " = "
          << (i == 0 && !tracefile0.empty() ? tracefile0 : "proj_data\\traces\\config_" + prefix + ".cfg") << "\n"
          << "enabled" << i << " = " << (i == 1 ? "False" : "True") << "\n";
    }
  }
};

void ExpectCwValues(const std::string& out, const CwProjectFixture& f, bool float32) {
  if (TestComm().rank() != 0) return;
  ASSERT_OK_AND_ASSIGN(auto ds, Dataset::Open(out));
  ASSERT_OK_AND_ASSIGN(auto reader, ExampleReader::Make(ds, Split::kTrain));
  const std::size_t trace = AttrIndex(*ds, "trace");
  for (std::uint64_t seg : {0, 2}) {
    for (std::uint64_t r = 0; r < f.num[seg]; ++r) {
      ASSERT_OK_AND_ASSIGN(auto ex, reader->Next());
      ASSERT_TRUE(ex.has_value()) << "segment " << seg << " row " << r;
      const ValueView v = ex->Get(trace);
      EXPECT_EQ(v.dtype, float32 ? DType::kFloat32 : DType::kFloat64);
      for (std::uint64_t c = 0; c < f.points; ++c) ASSERT_EQ(AsDouble(v, c), testing::CwTrace(seg, r, c));
      for (const std::string what : {"textin", "textout", "keylist"}) {
        const ValueView b = ex->Get(AttrIndex(*ds, what));
        ASSERT_EQ(b.data.size(), 16u);
        for (std::uint64_t c = 0; c < 16; ++c) {
          ASSERT_EQ(b.At<std::uint8_t>(c), testing::CwByte(seg, what, r, c)) << what << " seg " << seg << " row " << r;
        }
      }
    }
  }
  ASSERT_OK_AND_ASSIGN(auto end, reader->Next());
  EXPECT_FALSE(end.has_value());
  EXPECT_EQ(AttrIndex(*ds, "trace"), 0u);
  for (const AttributeSpec& a : ds->schema()) EXPECT_NE(a.name, "knownkey");
}

TEST(ChipWhispererImport, TwoSegmentsAndADisabledOne) {
  SharedDir dir;
  CwProjectFixture f;
  OnRoot([&] { f.Write(dir.path()); });
  std::vector<std::string> notes;
  ASSERT_OK_AND_ASSIGN(auto in, OpenChipWhispererInputs(dir / "proj.cwp", &notes));
  ASSERT_EQ(in.size(), 2u);
  EXPECT_EQ(in[0]->rows(), 27u);
  EXPECT_EQ(in[1]->rows(), 13u);
  bool pickled = false, disabled = false;
  for (const std::string& n : notes) {
    pickled |= n.find("knownkey.npy") != std::string::npos && n.find("never unpickled") != std::string::npos;
    disabled |= n.find("segment 1") != std::string::npos && n.find("disabled") != std::string::npos;
  }
  EXPECT_TRUE(pickled && disabled);
  CaptureImportConfig c = DefaultConfig(*in[0], "import_chipwhisperer");
  c.structure.examples_per_shard = 7;
  EXPECT_EQ(Import(c, in, dir / "out").examples_total, 40u);
  ExpectCwValues(dir / "out", f, false);
  ExpectChecksClean(dir / "out");
  // float32 traces: exact for these values.
  for (Attribute& a : c.structure.saved_data_description) {
    if (a.name == "trace") a.dtype = "float32";
  }
  const CaptureImportSummary s = Import(c, in, dir / "out32");
  EXPECT_EQ(s.max_float32_error, 0.0);
  ExpectCwValues(dir / "out32", f, true);
}

TEST(ChipWhispererImport, InexactFloat32RefusedOrRounded) {
  SharedDir dir;
  OnRoot([&] {
    std::filesystem::create_directories(dir / "p");
    std::ofstream(dir / "p/p.cwp") << "[Trace Management]\ntracefile0 = config_x_.cfg\nenabled0 = True\n";
    std::ofstream(dir / "p/config_x_.cfg") << "[Trace Config]\nnumTraces = 2\nprefix = x_\n";
    std::vector<std::uint8_t> t(2 * 3 * 8);
    const double vals[6] = {0.5, 0.1, -0.25, 1.0 / 3.0, 2.0, 0.75};
    std::memcpy(t.data(), vals, sizeof(vals));
    testing::WriteNpy(dir / "p/x_traces.npy", "<f8", {2, 3}, t);
  });
  ASSERT_OK_AND_ASSIGN(auto in, OpenChipWhispererInputs(dir / "p/p.cwp", nullptr));
  CaptureImportConfig c = DefaultConfig(*in[0], "import_chipwhisperer");
  c.structure.saved_data_description[0].dtype = "float32";
  auto r = ImportCapture(TestComm(), c, in, dir / "out");
  ASSERT_FALSE(r.ok());
  // Each rank meets the first inexact value of its own rows (or hears of the other's).
  if (TestComm().size() == 1) {
    EXPECT_NE(r.status().message().find("row 0 element 1 of traces: 0.1 is not exactly a float32"), std::string::npos)
        << r.status().ToString();
  }
  EXPECT_FALSE(std::filesystem::exists(dir / "out"));
  CaptureImportOptions o;
  o.allow_inexact_float32 = true;
  const CaptureImportSummary s = Import(c, in, dir / "out", o);
  EXPECT_GT(s.max_float32_error, 0.0);
  EXPECT_LT(s.max_float32_error, 1e-7);
}

TEST(ChipWhispererImport, PathsLeavingTheProjectAreRefused) {
  for (const std::string& bad : {std::string("..\\..\\etc\\config_x.cfg"), std::string("/etc/config_x.cfg"),
                                 std::string("C:\\data\\config_x.cfg"), std::string("proj_data/../../x.cfg")}) {
    SharedDir dir;
    CwProjectFixture f;
    OnRoot([&] { f.Write(dir.path(), bad); });
    auto r = OpenChipWhispererInputs(dir / "proj.cwp", nullptr);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(r.status().message().find("must stay inside the project"), std::string::npos) << r.status().ToString();
  }
  ASSERT_OK_AND_ASSIGN(std::string ok, CwRelativePath("a\\.\\b\\c.cfg", "x"));
  EXPECT_EQ(ok, "a/b/c.cfg");
}

TEST(ChipWhispererImport, AnArrayHeaderErrorKeepsItsCode) {
  SharedDir dir;
  CwProjectFixture f;
  OnRoot([&] {
    f.Write(dir.path());
    const std::string textin = dir / "proj_data/traces/2024.01.01-10.00.00_textin.npy";
    std::fstream io(textin, std::ios::in | std::ios::out | std::ios::binary);
    std::string head(128, '\0');
    io.read(head.data(), head.size());
    const std::size_t at = head.find("False");
    ASSERT_NE(at, std::string::npos);
    io.seekp(static_cast<std::streamoff>(at));
    io << "True ";  // a Fortran-order array, the header keeping its length
  });
  auto r = OpenChipWhispererInputs(dir / "proj.cwp", nullptr);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kNotImplemented) << r.status().ToString();
  EXPECT_NE(r.status().message().find("textin.npy: .npy arrays in Fortran order are not supported"), std::string::npos)
      << r.status().ToString();
}

TEST(ChipWhispererImport, ZippedProject) {
  SharedDir dir;
  CwProjectFixture f;
  OnRoot([&] {
    f.Write(dir / "tree");
    // The project tree as a zip (stored and deflated members), under a top folder.
    npz_internal::ZipWriter stored(false, 1 << 20), deflated(true, 1 << 20);
    for (const auto& e : std::filesystem::recursive_directory_iterator(dir / "tree")) {
      if (!e.is_regular_file()) continue;
      std::ifstream in(e.path(), std::ios::binary);
      std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      const auto span = std::as_bytes(std::span<const char>(bytes));
      const std::span<const std::byte> pieces[] = {span};
      const std::string name = "proj/" + std::filesystem::relative(e.path(), dir / "tree").string();
      ASSERT_OK(stored.AddMember(name, pieces));
      ASSERT_OK(deflated.AddMember(name, pieces));
    }
    const auto a = stored.Finish(), b = deflated.Finish();
    std::ofstream(dir / "stored.zip", std::ios::binary).write(reinterpret_cast<const char*>(a.data()), a.size());
    std::ofstream(dir / "deflated.zip", std::ios::binary).write(reinterpret_cast<const char*>(b.data()), b.size());
  });
  for (const char* z : {"stored.zip", "deflated.zip"}) {
    ASSERT_OK_AND_ASSIGN(auto in, OpenChipWhispererInputs(dir / z, nullptr));
    ASSERT_EQ(in.size(), 2u);
    Import(DefaultConfig(*in[0], "import_chipwhisperer"), in, dir / (std::string(z) + ".out"));
    ExpectCwValues(dir / (std::string(z) + ".out"), f, false);
  }
}

TEST(TrsExport, RoundTripThroughTheReader) {
  SharedDir dir;
  TrsSpec s;
  s.coding = 0x02;
  s.v2 = true;
  s.data = 36;
  s.title_space = 12;
  s.scale_y = 0.5f;
  OnRoot([&] { testing::WriteTrs(dir / "a.trs", s); });
  auto in = OpenTrs({dir / "a.trs"});
  Import(DefaultConfig(*in[0], "import_trs"), in, dir / "out");
  OnRoot([&] {
    ASSERT_OK_AND_ASSIGN(auto ds, Dataset::Open(dir / "out"));
    ASSERT_OK_AND_ASSIGN(auto sum, ExportTrs(ds, Split::kTrain, dir / "back.trs"));
    EXPECT_EQ(sum.traces, s.traces);
    EXPECT_TRUE(sum.notes.empty());
    // No overwrite.
    EXPECT_EQ(ExportTrs(ds, Split::kTrain, dir / "back.trs").status().code(), StatusCode::kAlreadyExists);
  });
  ASSERT_OK_AND_ASSIGN(auto back, TrsFile::Open(dir / "back.trs"));
  EXPECT_EQ(back->header().version, 2);
  EXPECT_EQ(back->header().scale_y.value_or(0), 0.5);
  EXPECT_EQ(back->header().parameter_definitions.size(), 3u);
  EXPECT_EQ(back->header().title_space, 255u);
  auto again = OpenTrs({dir / "back.trs"});
  ASSERT_EQ(again.size(), 1u);
  Import(DefaultConfig(*again[0], "import_trs"), again, dir / "out2");
  ExpectTrsValues(dir / "out2", {s});
}

// Counts the calls that make a written file durable.
class SyncCountingFileSystem : public FileSystemWrapper {
 public:
  SyncCountingFileSystem() : FileSystemWrapper(DefaultFileSystem()) {}
  int Fsync(int fd) override { return ++fsyncs, FileSystemWrapper::Fsync(fd); }
  int StartWriteback(int fd, std::int64_t o, std::int64_t n) override {
    return ++writebacks, FileSystemWrapper::StartWriteback(fd, o, n);
  }
  std::atomic<int> fsyncs{0}, writebacks{0};
};

TEST(TrsExport, WithoutAJournalEachRowRangeGoesToTheDiskAsItIsWritten) {
  SharedDir dir;
  TrsSpec s;
  s.traces = 40;
  OnRoot([&] { testing::WriteTrs(dir / "a.trs", s); });
  auto in = OpenTrs({dir / "a.trs"});
  CaptureImportConfig c = DefaultConfig(*in[0], "import_trs");
  c.structure.examples_per_shard = 4;
  Import(c, in, dir / "out");
  OnRoot([&] {
    ASSERT_OK_AND_ASSIGN(auto ds, Dataset::Open(dir / "out"));
    SyncCountingFileSystem fs;
    TrsExportOptions o;
    o.journal = false;
    o.file_system = &fs;
    ASSERT_OK_AND_ASSIGN(auto sum, ExportTrs(ds, Split::kTrain, dir / "back.trs", o));
    EXPECT_EQ(sum.traces, s.traces);
    // One writeback started per row range (of 4 rows: 10 shards, at least 16
    // ranges asked for), waited for once, before the rename.
    EXPECT_EQ(fs.writebacks.load(), 10);
    EXPECT_EQ(fs.fsyncs.load(), 1);
  });
  auto again = OpenTrs({dir / "back.trs"});
  Import(DefaultConfig(*again[0], "import_trs"), again, dir / "out2");
  ExpectTrsValues(dir / "out2", {s});
}

// Any numeric element as a double (exact for the values these tests use).
double NumberAt(const ValueView& v, std::size_t i) {
  switch (v.dtype) {
    case DType::kBool: return v.At<std::uint8_t>(i) != 0;
    case DType::kInt64: case DType::kInt: return static_cast<double>(v.At<std::int64_t>(i));
    case DType::kUInt16: return v.At<std::uint16_t>(i);
    case DType::kUInt32: return v.At<std::uint32_t>(i);
    case DType::kUInt64: return static_cast<double>(v.At<std::uint64_t>(i));
    case DType::kFloat16: {
      Float16 h;
      std::memcpy(&h.bits, v.data.data() + 2 * i, 2);
      return h.ToFloat();
    }
    default: return AsDouble(v, i);
  }
}

// The TinyAES layout (trace1 float16 (80000,), key/plaintext/ciphertext uint8
// (16,)) with few examples: export-trs picks trace1 by itself (the largest 1-D
// numeric attribute, not the first), widens it to float32, and import-trs
// gives every value back under the attributes' own names.
TEST(TrsExport, TinyAesLayoutRoundTripsValueForValue) {
  SharedDir dir;
  constexpr std::uint64_t kExamples = 24;
  OnRoot([&] {
    GenerateConfig config = DefaultGenerateConfig();
    config.params.examples = {kExamples, 8, 0};
    config.params.threads = 2;
    config.structure.examples_per_shard = 10;
    ASSERT_OK(GenerateDataset(config, dir / "aes").status());
    ASSERT_OK_AND_ASSIGN(auto ds, Dataset::Open(dir / "aes"));
    ASSERT_EQ(ds->schema()[0].name, "trace1");
    ASSERT_EQ(ds->schema()[0].dtype, DType::kFloat16);
    ASSERT_OK_AND_ASSIGN(TrsExportSummary sum, ExportTrs(ds, Split::kTrain, dir / "aes.trs"));
    EXPECT_EQ(sum.traces, kExamples);
    EXPECT_EQ(sum.trace_attribute, "trace1");
    EXPECT_TRUE(sum.trace_chosen);
    EXPECT_EQ(sum.trace_dtype, DType::kFloat16);
    EXPECT_EQ(sum.sample_dtype, DType::kFloat32);
    EXPECT_EQ(sum.samples, 80000u);
    EXPECT_TRUE(sum.notes.empty());
  });
  ASSERT_OK_AND_ASSIGN(auto file, TrsFile::Open(dir / "aes.trs"));
  EXPECT_EQ(file->header().sample_dtype, DType::kFloat32);
  EXPECT_EQ(file->header().length_data, 48u);
  auto in = OpenTrs({dir / "aes.trs"});
  ASSERT_EQ(in.size(), 1u);
  Import(DefaultConfig(*in[0], "import_trs"), in, dir / "back");
  if (TestComm().rank() != 0) return;
  ASSERT_OK_AND_ASSIGN(auto orig, Dataset::Open(dir / "aes"));
  ASSERT_OK_AND_ASSIGN(auto back, Dataset::Open(dir / "back"));
  ASSERT_EQ(back->schema().size(), 4u);
  EXPECT_EQ(back->schema()[AttrIndex(*back, "trace1")].dtype, DType::kFloat32);
  ASSERT_OK_AND_ASSIGN(auto a, ExampleReader::Make(orig, Split::kTrain));
  ASSERT_OK_AND_ASSIGN(auto b, ExampleReader::Make(back, Split::kTrain));
  std::uint64_t examples = 0, values = 0;
  for (;; ++examples) {
    ASSERT_OK_AND_ASSIGN(auto x, a->Next());
    ASSERT_OK_AND_ASSIGN(auto y, b->Next());
    ASSERT_EQ(x.has_value(), y.has_value()) << "example " << examples;
    if (!x) break;
    const ValueView t16 = x->Get(0), t32 = y->Get(AttrIndex(*back, "trace1"));
    ASSERT_EQ(t32.data.size(), 80000u * 4);
    for (std::size_t i = 0; i < 80000; ++i, ++values) {
      Float16 h;
      std::memcpy(&h.bits, t16.data.data() + 2 * i, 2);
      const float want = h.ToFloat(), got = t32.At<float>(i);
      // Bit for bit: float16 -> float32 is exact, signs of zero included.
      ASSERT_EQ(std::memcmp(&want, &got, 4), 0) << "example " << examples << " sample " << i;
    }
    for (const char* name : {"key", "plaintext", "ciphertext"}) {
      const ValueView u = x->Get(AttrIndex(*orig, name)), w = y->Get(AttrIndex(*back, name));
      EXPECT_EQ(w.dtype, DType::kUInt8) << name;
      ASSERT_EQ(u.data.size(), 16u);
      ASSERT_EQ(w.data.size(), 16u) << name;
      EXPECT_EQ(std::memcmp(u.data.data(), w.data.data(), 16), 0) << name << " of example " << examples;
      values += 16;
    }
  }
  EXPECT_EQ(examples, kExamples);
  EXPECT_EQ(values, kExamples * (80000 + 48));
}

// A dataset with one (6,) attribute of every numeric dtype, values every
// dtype holds exactly, plus values that no TRS sample coding holds.
constexpr DType kNumeric[] = {DType::kBool,   DType::kInt8,   DType::kInt16,   DType::kInt32,
                              DType::kInt64,  DType::kUInt8,  DType::kUInt16,  DType::kUInt32,
                              DType::kUInt64, DType::kFloat16, DType::kFloat32, DType::kFloat64};

double SmallValue(DType d, int example, int j) {
  const int k = (example * 7 + j * 3) % 41;
  if (d == DType::kBool) return k % 2;
  if (d == DType::kUInt8 || d == DType::kUInt16 || d == DType::kUInt32 || d == DType::kUInt64) return k;
  if (d == DType::kFloat16 || d == DType::kFloat32 || d == DType::kFloat64) return 0.25 * k - 3;
  return k - 20;
}

void PutElement(DType d, double x, std::vector<std::byte>* out) {
  auto put = [out](auto v) {
    const auto* p = reinterpret_cast<const std::byte*>(&v);
    out->insert(out->end(), p, p + sizeof(v));
  };
  switch (d) {
    case DType::kBool: put(static_cast<std::uint8_t>(x != 0)); break;
    case DType::kInt8: put(static_cast<std::int8_t>(x)); break;
    case DType::kInt16: put(static_cast<std::int16_t>(x)); break;
    case DType::kInt32: put(static_cast<std::int32_t>(x)); break;
    case DType::kInt64: put(static_cast<std::int64_t>(x)); break;
    case DType::kUInt8: put(static_cast<std::uint8_t>(x)); break;
    case DType::kUInt16: put(static_cast<std::uint16_t>(x)); break;
    case DType::kUInt32: put(static_cast<std::uint32_t>(x)); break;
    case DType::kUInt64: put(static_cast<std::uint64_t>(x)); break;
    case DType::kFloat16: put(Float16::FromFloat(static_cast<float>(x)).bits); break;
    case DType::kFloat32: put(static_cast<float>(x)); break;
    default: put(x); break;
  }
}

constexpr int kDTypeExamples = 9;

void MakeEveryDTypeDataset(const std::string& root) {
  DatasetStructure st;
  st.examples_per_shard = 4;
  for (DType d : kNumeric) st.saved_data_description.push_back({"a_" + std::string(DTypeName(d)), std::string(DTypeName(d)), {6}, {}});
  st.saved_data_description.push_back({"big_uint32", "uint32", {6}, {}});
  st.saved_data_description.push_back({"big_int64", "int64", {6}, {}});
  st.saved_data_description.push_back({"frac_float64", "float64", {6}, {}});
  st.saved_data_description.push_back({"text", "str", {}, {}});
  st.saved_data_description.push_back({"grid", "uint8", {2, 3}, {}});
  ASSERT_OK_AND_ASSIGN(auto ds, Dataset::Create(root, Metadata{}, st));
  FillerOptions fo;
  fo.concurrency = 1;
  ASSERT_OK_AND_ASSIGN(auto filler, Filler::Make(ds, fo));
  for (int e = 0; e < kDTypeExamples; ++e) {
    std::vector<std::vector<std::byte>> bytes;
    for (DType d : kNumeric) {
      bytes.emplace_back();
      for (int j = 0; j < 6; ++j) PutElement(d, SmallValue(d, e, j), &bytes.back());
    }
    bytes.emplace_back();
    for (int j = 0; j < 6; ++j) PutElement(DType::kUInt32, j == 4 && e == 5 ? 3000000000.0 : j, &bytes.back());
    bytes.emplace_back();
    for (int j = 0; j < 6; ++j) PutElement(DType::kInt64, j == 2 && e == 3 ? -1099511627776.0 : -j, &bytes.back());
    bytes.emplace_back();
    for (int j = 0; j < 6; ++j) PutElement(DType::kFloat64, j == 1 && e == 6 ? 0.1 : j * 0.5, &bytes.back());
    std::vector<ValueView> v;
    for (std::size_t a = 0; a < bytes.size(); ++a) {
      const DType d = a < std::size(kNumeric) ? kNumeric[a] : a == std::size(kNumeric) ? DType::kUInt32
                      : a == std::size(kNumeric) + 1 ? DType::kInt64 : DType::kFloat64;
      v.push_back(ValueView{d, {6}, bytes[a]});
    }
    v.push_back(ValueView::Str("example " + std::to_string(e)));
    const std::vector<std::uint8_t> grid = {1, 2, 3, 4, 5, static_cast<std::uint8_t>(e)};
    v.push_back(ValueView::Array(grid, {2, 3}));
    ASSERT_OK(filler->WriteExample(Split::kTrain, v));
  }
  ASSERT_OK(filler->Finish());
}

// Every numeric dtype as the samples: the TRS coding each is written as, and
// the values import-trs gives back (under the attribute's name); the values
// no coding holds and the non-numeric or multi-dimensional attributes are
// refused naming the attribute and its dtype.
TEST(TrsExport, EveryNumericDTypeAsSamples) {
  SharedDir dir;
  const std::map<DType, DType> coding = {
      {DType::kBool, DType::kInt8},     {DType::kInt8, DType::kInt8},       {DType::kInt16, DType::kInt16},
      {DType::kInt32, DType::kInt32},   {DType::kInt64, DType::kInt32},     {DType::kUInt8, DType::kInt16},
      {DType::kUInt16, DType::kInt32},  {DType::kUInt32, DType::kInt32},    {DType::kUInt64, DType::kInt32},
      {DType::kFloat16, DType::kFloat32}, {DType::kFloat32, DType::kFloat32}, {DType::kFloat64, DType::kFloat32}};
  OnRoot([&] {
    MakeEveryDTypeDataset(dir / "ds");
    ASSERT_OK_AND_ASSIGN(auto ds, Dataset::Open(dir / "ds"));
    // All the 1-D attributes have 6 elements: the first in schema order wins.
    ASSERT_OK_AND_ASSIGN(TrsExportSummary first, ExportTrs(ds, Split::kTrain, dir / "default.trs"));
    EXPECT_EQ(first.trace_attribute, "a_bool");
    for (DType d : kNumeric) {
      TrsExportOptions o;
      o.trace_attribute = "a_" + std::string(DTypeName(d));
      ASSERT_OK_AND_ASSIGN(TrsExportSummary sum, ExportTrs(ds, Split::kTrain, dir / (o.trace_attribute + ".trs"), o));
      EXPECT_EQ(sum.sample_dtype, coding.at(d)) << DTypeName(d);
      EXPECT_EQ(sum.trace_dtype, d);
      EXPECT_FALSE(sum.trace_chosen);
      // uint64 has no trace parameter type: left out with a note, never silently.
      ASSERT_EQ(sum.notes.size(), d == DType::kUInt64 ? 1u : 2u) << DTypeName(d);
      EXPECT_NE(sum.notes.back().find("\"text\" (str ())"), std::string::npos) << sum.notes.back();
    }
    auto refused = [&](const std::string& name, bool round, const std::vector<std::string>& words) {
      TrsExportOptions o;
      o.trace_attribute = name;
      o.round_float64 = round;
      const Status st = ExportTrs(ds, Split::kTrain, dir / ("refused_" + name + ".trs"), o).status();
      EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << name << ": " << st.ToString();
      for (const std::string& w : words) EXPECT_NE(st.message().find(w), std::string::npos) << st.ToString();
      EXPECT_FALSE(std::filesystem::exists(dir / ("refused_" + name + ".trs"))) << name;
    };
    refused("big_uint32", false, {"example 5 of \"big_uint32\"", "uint32 sample 3000000000 (element 4)", "int32"});
    refused("big_int64", false, {"example 3 of \"big_int64\"", "int64 sample -1099511627776 (element 2)"});
    refused("frac_float64", false, {"example 6 of \"frac_float64\"", "float64 sample 0.1", "--round-float64"});
    refused("text", false, {"\"text\" is str ()"});
    refused("grid", false, {"\"grid\" is uint8 (2, 3)"});
    TrsExportOptions round;
    round.trace_attribute = "frac_float64";
    round.round_float64 = true;
    ASSERT_OK_AND_ASSIGN(TrsExportSummary rounded, ExportTrs(ds, Split::kTrain, dir / "rounded.trs", round));
    EXPECT_GT(rounded.max_float32_error, 0);
    EXPECT_LT(rounded.max_float32_error, 1e-8);
  });
  for (DType d : kNumeric) {
    const std::string name = "a_" + std::string(DTypeName(d));
    auto in = OpenTrs({dir / (name + ".trs")});
    ASSERT_EQ(in.size(), 1u);
    Import(DefaultConfig(*in[0], "import_trs"), in, dir / ("back_" + name));
    if (TestComm().rank() != 0) continue;
    ASSERT_OK_AND_ASSIGN(auto back, Dataset::Open(dir / ("back_" + name)));
    ASSERT_OK_AND_ASSIGN(auto reader, ExampleReader::Make(back, Split::kTrain));
    for (int e = 0; e < kDTypeExamples; ++e) {
      ASSERT_OK_AND_ASSIGN(auto ex, reader->Next());
      ASSERT_TRUE(ex.has_value());
      const ValueView t = ex->Get(AttrIndex(*back, name));
      EXPECT_EQ(t.dtype, coding.at(d)) << name;
      for (int j = 0; j < 6; ++j) ASSERT_EQ(NumberAt(t, j), SmallValue(d, e, j)) << name << " " << e << " " << j;
      // The other attributes come back under their names, in their TRS parameter types.
      for (DType o : kNumeric) {
        if (o == d || o == DType::kUInt64) continue;
        const ValueView p = ex->Get(AttrIndex(*back, "a_" + std::string(DTypeName(o))));
        for (int j = 0; j < 6; ++j) ASSERT_EQ(NumberAt(p, j), SmallValue(o, e, j)) << name << ": " << DTypeName(o);
      }
      const ValueView grid = ex->Get(AttrIndex(*back, "grid"));
      ASSERT_EQ(grid.data.size(), 6u);
      EXPECT_EQ(NumberAt(grid, 5), e);
    }
  }
}

}  // namespace
}  // namespace sedpack
