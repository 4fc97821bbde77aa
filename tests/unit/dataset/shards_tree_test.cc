// SPDX-License-Identifier: Apache-2.0
// The one shards_list tree walk: its order (Enter pre-order, Leave once the
// subtree is done), its cycle rule and depth limit, and the subtree planner.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "dataset/shards_tree_internal.h"
#include "sedpack/dataset/dataset.h"
#include "sedpack/io/file.h"
#include "support/test_support.h"

namespace sedpack {
namespace {

using dataset_internal::ShardsTreeNode;
using testing::CopyTree;
using testing::GoldenDir;
using testing::TempDir;

class ShardsTreeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = tmp_.path() + "/ds";
    CopyTree(GoldenDir() + "/fb_none/dataset", root_);
  }

  // holdout/<dir>/shards_list.json naming the lists of `children` (folders below holdout/).
  void WriteList(const std::string& dir, const std::vector<std::string>& children) {
    const std::string self = "holdout/" + (dir.empty() ? "" : dir + "/") + "shards_list.json";
    nlohmann::json j = {{"relative_path_self", self}};
    j["children_shard_lists"] = nlohmann::json::array();
    for (const std::string& c : children) {
      j["children_shard_lists"].push_back({{"shard_list_info_file", {{"file_path", "holdout/" + c + "/shards_list.json"}}}});
    }
    ASSERT_OK(WriteFileAtomic(root_ + "/" + self, j.dump(2)));
  }

  TempDir tmp_;
  std::string root_;
};

struct Recorder : dataset_internal::ShardsTreeVisitor {
  std::vector<std::string> events;
  Status Enter(ShardsTreeNode& node) override {
    events.push_back("enter " + node.path() + " " + std::to_string(node.depth));
    return Status::OK();
  }
  Status Leave(ShardsTreeNode& node) override {
    events.push_back("leave " + node.path());
    return Status::OK();
  }
};

TEST_F(ShardsTreeTest, EntersInPreOrderAndLeavesAfterTheSubtree) {
  WriteList("", {"a", "b"});
  WriteList("a", {"a/c"});
  WriteList("a/c", {});
  WriteList("b", {});
  ASSERT_OK_AND_ASSIGN(auto ds, Dataset::Open(root_));
  Recorder r;
  ASSERT_OK(dataset_internal::WalkShardsTree(*ds, Split::kHoldout, r));
  const std::vector<std::string> want = {
      "enter holdout/shards_list.json 0", "enter holdout/a/shards_list.json 1",
      "enter holdout/a/c/shards_list.json 2", "leave holdout/a/c/shards_list.json",
      "leave holdout/a/shards_list.json", "enter holdout/b/shards_list.json 1",
      "leave holdout/b/shards_list.json", "leave holdout/shards_list.json"};
  EXPECT_EQ(r.events, want);
}

TEST_F(ShardsTreeTest, RefusesARepeatedChildAndATooDeepTree) {
  WriteList("", {"a", "a"});
  WriteList("a", {});
  ASSERT_OK_AND_ASSIGN(auto ds, Dataset::Open(root_));
  Recorder r;
  EXPECT_STATUS(StatusCode::kCorruption, "holdout/a/shards_list.json is listed more than once",
                dataset_internal::WalkShardsTree(*ds, Split::kHoldout, r));

  std::string dir;
  WriteList("", {"d"});
  for (int i = 0; i < 70; ++i) {
    dir += dir.empty() ? "d" : "/d";
    WriteList(dir, {dir + "/d"});
  }
  Recorder deep;
  EXPECT_STATUS(StatusCode::kCorruption, "shards_list tree deeper than 64 levels",
                dataset_internal::WalkShardsTree(*ds, Split::kHoldout, deep));
  EXPECT_EQ(deep.events.size(), 64u);  // depths 0..63 entered, none left
}

TEST_F(ShardsTreeTest, PlannerCutsTheTopIntoOwnListsAndSubtrees) {
  WriteList("", {"a", "b"});
  WriteList("a", {});
  WriteList("b", {});
  ASSERT_OK_AND_ASSIGN(auto ds, Dataset::Open(root_));
  std::vector<std::string> visited;
  ASSERT_OK_AND_ASSIGN(auto units,
                       dataset_internal::PlanShardsSubtrees(*ds, {*ds->info().FindSplit(Split::kHoldout)}, 2, &visited));
  ASSERT_EQ(units.size(), 3u);
  EXPECT_FALSE(units[0].subtree);
  EXPECT_EQ(units[0].entry.shard_list_info_file.file_path, "holdout/shards_list.json");
  EXPECT_TRUE(units[0].list.children_shard_lists.empty());
  EXPECT_TRUE(units[1].subtree);
  EXPECT_EQ(units[1].entry.shard_list_info_file.file_path, "holdout/a/shards_list.json");
  EXPECT_EQ(units[1].depth, 1u);
  EXPECT_EQ(units[2].entry.shard_list_info_file.file_path, "holdout/b/shards_list.json");
  EXPECT_EQ(visited, std::vector<std::string>{"holdout/shards_list.json"});
}

}  // namespace
}  // namespace sedpack
