// SPDX-License-Identifier: Apache-2.0
// Containment: nothing a dataset holds (its metadata or symbolic links in its
// tree) makes the library read or write outside the dataset root, and hostile
// counts and shapes give an error before any allocation sized by them.
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "io/beneath.h"
#include "io/file_internal.h"
#include "sedpack/check/check.h"
#include "sedpack/dataset/filler.h"
#include "sedpack/dataset/reader.h"
#include "sedpack/index/fetch.h"
#include "sedpack/index/index.h"
#include "sedpack/io/file.h"
#include "sedpack/metadata/paths.h"
#include "sidecar/sidecar_internal.h"
#include "support/test_support.h"
#include "sidecar/sidecar_files.h"

namespace sedpack {
namespace {

namespace fs = std::filesystem;
using testing::CopyTree;
using testing::GoldenDir;
using testing::TempDir;

constexpr std::string_view kOutside = "leads outside the dataset root";

void WriteText(const std::string& path, const std::string& text) {
  fs::create_directories(fs::path(path).parent_path());
  std::ofstream(path, std::ios::binary) << text;
}

std::string ReadText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

nlohmann::json LoadJson(const std::string& path) { return nlohmann::json::parse(ReadText(path)); }
void SaveJson(const std::string& path, const nlohmann::json& j) { WriteText(path, j.dump(2)); }

bool EmptyFolder(const std::string& path) { return fs::is_directory(path) && fs::is_empty(path); }

// ---- OpenBeneath and CheckStaysBeneath, with openat2 and with the fallback ----

class BeneathTest : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override {
    io_internal::SetOpenBeneathFallbackForTesting(GetParam());
    root_ = tmp_.path() + "/root";
    out_ = tmp_.path() + "/outside";
    WriteText(root_ + "/a/file.txt", "inside");
    WriteText(out_ + "/secret.txt", "outside");
  }
  void TearDown() override { io_internal::SetOpenBeneathFallbackForTesting(false); }

  Result<std::string> Read(std::string_view rel) {
    SEDPACK_ASSIGN_OR_RETURN(std::string text, ReadFileTextBeneath(root_, rel));
    return text;
  }
  void ExpectOutside(std::string_view rel) {
    auto r = Read(rel);
    ASSERT_FALSE(r.ok()) << rel << " was read: " << *r;
    EXPECT_TRUE(IsOutsideRoot(r.status())) << r.status().ToString();
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
    // The message names the file and says why.
    EXPECT_NE(r.status().message().find(JoinRoot(root_, rel)), std::string::npos) << r.status().ToString();
    EXPECT_NE(r.status().message().find(kOutside), std::string::npos) << r.status().ToString();
  }

  TempDir tmp_;
  std::string root_, out_;
};

TEST_P(BeneathTest, ReadsFilesInsideTheRoot) {
  ASSERT_OK_AND_ASSIGN(std::string text, Read("a/file.txt"));
  EXPECT_EQ(text, "inside");
  ASSERT_OK_AND_ASSIGN(text, Read("a/../a/./file.txt"));  // ".." that stays inside
  EXPECT_EQ(text, "inside");
  ASSERT_OK_AND_ASSIGN(std::uint64_t size, FileSizeBeneath(root_, "a/file.txt"));
  EXPECT_EQ(size, 6u);
}

TEST_P(BeneathTest, MissingFilesAreNotFound) {
  EXPECT_STATUS(StatusCode::kNotFound, "a/nope.txt", Read("a/nope.txt"));
  EXPECT_STATUS(StatusCode::kNotFound, "a/file.txt/x", Read("a/file.txt/x"));  // a file as a folder
}

TEST_P(BeneathTest, DotDotAndAbsolutePathsAreOutside) {
  ExpectOutside("../outside/secret.txt");
  ExpectOutside("a/../../outside/secret.txt");
  ExpectOutside("/etc/passwd");
  ExpectOutside(out_ + "/secret.txt");
}

TEST_P(BeneathTest, LinksOutOfTheRootAreNotFollowed) {
  fs::create_symlink(out_ + "/secret.txt", root_ + "/a/abs_link.txt");
  fs::create_symlink("../../outside/secret.txt", root_ + "/a/rel_link.txt");
  fs::create_directory_symlink(out_, root_ + "/a/dir_link");
  fs::create_directory_symlink("../outside", root_ + "/rel_dir_link");
  fs::create_symlink("/proc/self/root" + out_ + "/secret.txt", root_ + "/a/magic_link.txt");
  ExpectOutside("a/abs_link.txt");
  ExpectOutside("a/rel_link.txt");
  ExpectOutside("a/dir_link/secret.txt");
  ExpectOutside("rel_dir_link/secret.txt");
  ExpectOutside("a/magic_link.txt");
  auto hashed = OpenBeneath(root_, "a/dir_link", O_PATH | O_DIRECTORY);
  EXPECT_TRUE(IsOutsideRoot(hashed.status())) << hashed.status().ToString();
}

TEST_P(BeneathTest, LinksThatStayInsideAreFollowed) {
  fs::create_symlink("file.txt", root_ + "/a/rel_link.txt");
  fs::create_symlink(fs::absolute(root_ + "/a/file.txt"), root_ + "/a/abs_link.txt");
  fs::create_directory_symlink("a", root_ + "/dir_link");
  for (const char* rel : {"a/rel_link.txt", "a/abs_link.txt", "dir_link/file.txt", "dir_link/abs_link.txt"}) {
    ASSERT_OK_AND_ASSIGN(std::string text, Read(rel));
    EXPECT_EQ(text, "inside") << rel;
  }
}

TEST_P(BeneathTest, TheRootItselfMayBeALink) {
  fs::create_directory_symlink(root_, tmp_.path() + "/root_link");
  ASSERT_OK_AND_ASSIGN(std::string text, ReadFileTextBeneath(tmp_.path() + "/root_link", "a/file.txt"));
  EXPECT_EQ(text, "inside");
}

TEST_P(BeneathTest, AFifoIsRefusedWithoutBlocking) {
  ASSERT_EQ(::mkfifo((root_ + "/a/fifo").c_str(), 0600), 0);
  EXPECT_STATUS(StatusCode::kIOError, "not a regular file", Read("a/fifo"));
}

TEST_P(BeneathTest, WritersCheckTheFolderTheyWriteInto) {
  fs::create_directory_symlink(out_, root_ + "/a/dir_link");
  fs::create_symlink(out_ + "/secret.txt", root_ + "/a/file_link.txt");
  EXPECT_OK(CheckStaysBeneath(root_, "a/new.txt"));
  EXPECT_OK(CheckStaysBeneath(root_, "a/not/yet/there/new.txt"));  // created inside a/
  EXPECT_OK(CheckStaysBeneath(root_, "new.txt"));
  // The file itself may be a link: a rename replaces the link, it does not follow it.
  EXPECT_OK(CheckStaysBeneath(root_, "a/file_link.txt"));
  for (const char* rel : {"a/dir_link/new.txt", "a/dir_link/sub/new.txt", "../outside/new.txt", "/tmp/x"}) {
    Status s = CheckStaysBeneath(root_, rel);
    EXPECT_TRUE(IsOutsideRoot(s)) << rel << ": " << s.ToString();
    EXPECT_EQ(s.detail(), StatusDetail::kOutsideRoot) << rel;
  }
}

// The classification is the status detail, not the wording: a message that
// merely reads like the error is not it, and the error keeps its detail when
// callers add context.
TEST(OutsideRootTest, ClassifiedByDetailNotByMessage) {
  EXPECT_FALSE(IsOutsideRoot(Status::InvalidArgument("x leads outside the dataset root . (...)")));
  EXPECT_FALSE(IsOutsideRoot(Status::OK()));
  const Status escaped = Status::IOError("reworded").WithDetail(StatusDetail::kOutsideRoot);
  EXPECT_TRUE(IsOutsideRoot(escaped));
  EXPECT_TRUE(IsOutsideRoot(escaped.WithPrefix("list: ")));
}

INSTANTIATE_TEST_SUITE_P(Openat2AndFallback, BeneathTest, ::testing::Values(false, true),
                         [](const auto& info) { return info.param ? "Fallback" : "Openat2"; });

// ---- Datasets with links out of the root -----------------------------------------

class DatasetLinkTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = tmp_.path() + "/ds";
    out_ = tmp_.path() + "/outside";
    fs::create_directories(out_);
    CopyTree(GoldenDir() + "/fb_none/dataset", root_);
    auto expected = LoadJson(GoldenDir() + "/fb_none/expected.json");
    shard0_ = expected["splits"]["train"]["shards"][0]["file_path"].get<std::string>();
  }
  std::shared_ptr<Dataset> Open() {
    auto ds = Dataset::Open(root_);
    EXPECT_TRUE(ds.ok()) << ds.status().ToString();
    return ds.ok() ? *ds : nullptr;
  }
  // Move `rel` (a file or folder of the dataset) outside and leave a link to it.
  void MoveOut(const std::string& rel) {
    const std::string target = out_ + "/" + fs::path(rel).filename().string();
    fs::rename(root_ + "/" + rel, target);
    fs::create_symlink(target, root_ + "/" + rel);
  }
  static std::size_t Count(const CheckReport& r, CheckProblem::Kind kind, const std::string& path) {
    std::size_t n = 0;
    for (const auto& p : r.problems) {
      if (p.kind == kind && p.path == path) {
        ++n;
        EXPECT_NE(p.message.find(kOutside), std::string::npos) << p.message;
      }
    }
    return n;
  }

  TempDir tmp_;
  std::string root_, out_, shard0_;
};

TEST_F(DatasetLinkTest, AShardLinkedOutIsNotReadByAnyReader) {
  MoveOut(shard0_);
  auto ds = Open();
  ASSERT_TRUE(ds);
  EXPECT_STATUS(StatusCode::kInvalidArgument, kOutside, ds->ReadBytes(shard0_));
  EXPECT_STATUS(StatusCode::kInvalidArgument, kOutside, ds->SizeOf(shard0_));
  EXPECT_STATUS(StatusCode::kInvalidArgument, kOutside, ds->HashOf(shard0_));
  ShardInfo shard;
  shard.file_infos.push_back(FileInfo{shard0_, {}});
  EXPECT_STATUS(StatusCode::kInvalidArgument, kOutside, ReadShard(*ds, shard));

  ASSERT_OK_AND_ASSIGN(auto reader, ExampleReader::Make(ds, Split::kTrain));
  EXPECT_STATUS(StatusCode::kInvalidArgument, kOutside, reader->Next());

  ASSERT_OK_AND_ASSIGN(IndexContents contents, BuildIndexContents(ds));
  ASSERT_OK_AND_ASSIGN(auto index, SampleIndex::FromContents(contents));
  ASSERT_OK_AND_ASSIGN(auto fetcher, ExampleFetcher::Make(ds, index));
  EXPECT_STATUS(StatusCode::kInvalidArgument, kOutside, fetcher->Get(Split::kTrain, 0));

  CheckOptions deep;
  deep.deep = true;
  ASSERT_OK_AND_ASSIGN(CheckReport report, CheckDataset(root_, deep));
  EXPECT_EQ(Count(report, CheckProblem::Kind::kPathEscape, shard0_), 1u);
  EXPECT_FALSE(report.ok());
}

TEST_F(DatasetLinkTest, ASplitSubfolderLinkedOutIsNotFollowed) {
  // train/<d1> holds a valid-looking subtree (lists and shards) outside the root.
  const std::string sub = "train/" + PathComponents(shard0_)[1];
  MoveOut(sub);
  WriteText(out_ + "/" + PathComponents(shard0_)[1] + "/stray.fb", "x");
  auto ds = Open();
  ASSERT_TRUE(ds);
  EXPECT_STATUS(StatusCode::kInvalidArgument, kOutside, ListShards(ds, Split::kTrain));
  EXPECT_STATUS(StatusCode::kInvalidArgument, kOutside, BuildIndexContents(ds));
  ASSERT_OK_AND_ASSIGN(CheckReport report, CheckDataset(root_));
  EXPECT_EQ(Count(report, CheckProblem::Kind::kPathEscape, sub + "/shards_list.json"), 1u);
  for (const auto& p : report.problems) EXPECT_EQ(p.path.find("stray"), std::string::npos) << p.path;
}

TEST_F(DatasetLinkTest, ASplitFolderLinkedOutIsNotScannedForOrphans) {
  MoveOut("train");
  WriteText(out_ + "/train/stray.fb", "x");
  ASSERT_OK_AND_ASSIGN(CheckReport report, CheckDataset(root_));
  EXPECT_EQ(Count(report, CheckProblem::Kind::kPathEscape, "train/shards_list.json"), 1u);
  EXPECT_EQ(Count(report, CheckProblem::Kind::kPathEscape, "train"), 1u);
  for (const auto& p : report.problems) EXPECT_NE(p.kind, CheckProblem::Kind::kOrphan) << p.path;
}

TEST_F(DatasetLinkTest, DatasetInfoLinkedOutIsNotOpened) {
  MoveOut("dataset_info.json");
  EXPECT_STATUS(StatusCode::kInvalidArgument, kOutside, Dataset::Open(root_));
  EXPECT_STATUS(StatusCode::kInvalidArgument, kOutside, DatasetInfoSha256(root_));
}

TEST_F(DatasetLinkTest, LinksInsideTheRootStillWork) {
  // The shard moves to a folder of the root that no split lists; the listed
  // path becomes a relative link to it.
  fs::create_directories(root_ + "/store");
  fs::rename(root_ + "/" + shard0_, root_ + "/store/shard.fb");
  fs::create_symlink("../../../../store/shard.fb", root_ + "/" + shard0_);
  CheckOptions deep;
  deep.deep = true;
  ASSERT_OK_AND_ASSIGN(CheckReport report, CheckDataset(root_, deep));
  EXPECT_TRUE(report.ok()) << (report.problems.empty() ? "" : report.problems[0].message);
}

TEST_F(DatasetLinkTest, SidecarsAreNotReadOrWrittenThroughALinkOut) {
  fs::create_directory_symlink(out_, root_ + "/" + std::string(kSidecarDirName));
  const std::byte data[3] = {};
  Status w = WriteSidecar(root_, "index.bin", data);
  EXPECT_TRUE(IsOutsideRoot(w)) << w.ToString();
  auto ds = Open();
  ASSERT_TRUE(ds);
  EXPECT_TRUE(IsOutsideRoot(BuildIndexFile(ds).status()));
  EXPECT_TRUE(EmptyFolder(out_));
  WriteText(out_ + "/index.bin", "not an index");
  WriteText(out_ + "/content.json", "{}");
  EXPECT_TRUE(IsOutsideRoot(SampleIndex::OpenInDataset(root_).status()));
  EXPECT_TRUE(IsOutsideRoot(ReadSidecarText(root_, "content.json", 1 << 20).status()));
}

TEST_F(DatasetLinkTest, TheWriterDoesNotWriteIntoASplitFolderLinkedOut) {
  auto golden = Open();
  ASSERT_TRUE(golden);
  const std::string root = tmp_.path() + "/new";
  DatasetStructure structure = golden->info().dataset_structure;
  structure.examples_per_shard = 2;
  ASSERT_OK_AND_ASSIGN(auto ds, Dataset::Create(root, Metadata{}, structure));
  fs::create_directory_symlink(out_, root + "/train");
  FillerOptions options;
  options.concurrency = 1;
  ASSERT_OK_AND_ASSIGN(auto filler, Filler::Make(ds, options));
  // One example of the golden dataset, written again and again.
  ASSERT_OK_AND_ASSIGN(auto reader, ExampleReader::Make(golden, Split::kTest));
  ASSERT_OK_AND_ASSIGN(std::optional<Example> e, reader->Next());
  ASSERT_TRUE(e);
  std::vector<ValueView> values;
  for (std::size_t j = 0; j < golden->schema().size(); ++j) values.push_back(e->Get(j));
  Status st;
  for (int i = 0; i < 8 && st.ok(); ++i) st = filler->WriteExample(Split::kTrain, values);
  if (st.ok()) st = filler->Finish();
  EXPECT_TRUE(IsOutsideRoot(st)) << st.ToString();
  EXPECT_TRUE(EmptyFolder(out_)) << "something was written through the link";
}

// ---- Hostile counts and shapes -----------------------------------------------------

class HostileNumbersTest : public ::testing::Test {
 protected:
  void Copy(const std::string& fixture) {
    root_ = tmp_.path() + "/" + fixture;
    CopyTree(GoldenDir() + "/" + fixture + "/dataset", root_);
  }
  void SetAttribute(std::size_t i, const std::string& dtype, const Shape& shape) {
    auto info = LoadJson(root_ + "/dataset_info.json");
    auto& a = info["dataset_structure"]["saved_data_description"][i];
    a["dtype"] = dtype;
    a["shape"] = shape;
    SaveJson(root_ + "/dataset_info.json", info);
  }
  TempDir tmp_;
  std::string root_;
};

TEST_F(HostileNumbersTest, CountsThatWrapAroundAreAMismatch) {
  Copy("fb_none");
  // Four shards of 2^62 examples add up to 2^64, which wraps to 0.
  const std::string leaf = "train/afc951b7ff/9254bea686/a604443be5/shards_list.json";
  auto list = LoadJson(root_ + "/" + leaf);
  list["number_of_examples"] = 0;
  auto& shards = list["shard_files"];
  while (shards.size() < 4) shards.push_back(shards[0]);
  for (auto& s : shards) s["number_of_examples"] = std::int64_t{1} << 62;
  SaveJson(root_ + "/" + leaf, list);
  ASSERT_OK_AND_ASSIGN(CheckReport report, CheckDataset(root_));
  bool found = false;
  for (const auto& p : report.problems) {
    found = found || (p.kind == CheckProblem::Kind::kCountMismatch && p.path == leaf &&
                      p.message.find("more than 2^64 - 1") != std::string::npos);
  }
  EXPECT_TRUE(found);
}

TEST_F(HostileNumbersTest, AHugeShapeIsAnErrorBeforeAnyAllocation) {
  for (const char* fixture : {"fb_none", "npz_none"}) {
    Copy(fixture);
    // u8 (index 7): 2^40 elements of uint8, the shards hold 16 per value.
    SetAttribute(7, "uint8", {1 << 20, 1 << 20});
    ASSERT_OK_AND_ASSIGN(auto ds, Dataset::Open(root_));
    ASSERT_OK_AND_ASSIGN(auto reader, ExampleReader::Make(ds, Split::kTrain));
    auto next = reader->Next();
    EXPECT_EQ(next.status().code(), StatusCode::kCorruption) << fixture << ": " << next.status().ToString();
    EXPECT_NE(next.status().message().find("(1048576, 1048576)"), std::string::npos) << next.status().ToString();
    EXPECT_NE(next.status().message().find("train/"), std::string::npos) << next.status().ToString();
  }
}

TEST_F(HostileNumbersTest, ShapesBeyondTheBoundAreRefusedWhenOpening) {
  Copy("fb_none");
  SetAttribute(7, "uint8", {std::int64_t{1} << 32, std::int64_t{1} << 32});
  EXPECT_STATUS(StatusCode::kInvalidArgument, "dataset_info.json: dataset_structure.saved_data_description[7]",
                Dataset::Open(root_));
  EXPECT_STATUS(StatusCode::kInvalidArgument, "is too large", Dataset::Open(root_));
  // 2^62 elements are allowed, 2^65 bytes are not (they would wrap to 0).
  SetAttribute(2, "float64", {std::int64_t{1} << 31, std::int64_t{1} << 31});
  SetAttribute(7, "uint8", {16});
  EXPECT_STATUS(StatusCode::kInvalidArgument, "saved_data_description[2]: attribute \"f64\"", Dataset::Open(root_));
  EXPECT_STATUS(StatusCode::kInvalidArgument, "bytes per value", Dataset::Open(root_));
}

TEST(FixedByteSizeTest, DoesNotWrapAround) {
  const AttributeSpec fits{"x", DType::kUInt8, {std::int64_t{1} << 31, std::int64_t{1} << 31}};
  ASSERT_OK_AND_ASSIGN(std::uint64_t bytes, fits.FixedByteSize());
  EXPECT_EQ(bytes, std::uint64_t{1} << 62);
  const AttributeSpec wraps{"x", DType::kFloat64, {std::int64_t{1} << 31, std::int64_t{1} << 31}};
  EXPECT_STATUS(StatusCode::kInvalidArgument, "bytes per value", wraps.FixedByteSize());
}

}  // namespace
}  // namespace sedpack
