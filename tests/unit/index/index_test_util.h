// SPDX-License-Identifier: Apache-2.0
// Datasets and sequential reads shared by the index, fetch and order tests.
#pragma once

#include <string>
#include <vector>

#include "sedpack/dataset/dataset.h"
#include "sedpack/dataset/filler.h"
#include "sedpack/dataset/reader.h"
#include "sedpack/index/index.h"
#include "support/test_support.h"

namespace sedpack::testing {

/// A dataset with a nested shards_list tree and uneven shards: schema
/// (id int64 (), tag str ()), 4 examples per shard; train is written by three
/// fillers (".", "a", "a/b") with custom_metadata changes that close shards
/// early, test by one. Example ids are unique: 1000 * split + k.
inline Result<std::shared_ptr<Dataset>> MakeTreeDataset(const std::string& root) {
  DatasetStructure s;
  Attribute id;
  id.name = "id";
  id.dtype = "int64";
  id.shape = {};
  Attribute tag;
  tag.name = "tag";
  tag.dtype = "str";
  tag.shape = {};
  s.saved_data_description = {id, tag};
  s.compression = Compression::kZstd;
  s.examples_per_shard = 4;
  SEDPACK_ASSIGN_OR_RETURN(std::shared_ptr<Dataset> ds, Dataset::Create(root, Metadata{}, s));
  struct Part {
    Split split;
    const char* folder;
    int count;
  };
  const Part parts[] = {{Split::kTrain, ".", 7}, {Split::kTrain, "a", 13}, {Split::kTrain, "a/b", 9},
                        {Split::kTest, ".", 6}};
  std::int64_t next[3] = {0, 0, 0};
  for (const Part& p : parts) {
    FillerOptions fo;
    fo.relative_path_from_split = p.folder;
    fo.concurrency = 1;
    SEDPACK_ASSIGN_OR_RETURN(auto filler, Filler::Make(ds, fo));
    for (int k = 0; k < p.count; ++k) {
      const std::int64_t v = 1000 * static_cast<int>(p.split) + next[static_cast<int>(p.split)]++;
      const std::string text = "ex" + std::to_string(v);
      const ValueView values[] = {ValueView::Int(v), ValueView::Str(text)};
      // A new group every 5 examples closes the open shard early: sizes 4,1,4,1,...
      SEDPACK_ASSIGN_OR_RETURN(JsonValue meta,
                               JsonValue::Parse("{\"group\": " + std::to_string(k / 5) + "}"));
      SEDPACK_RETURN_NOT_OK(filler->WriteExample(p.split, values, &meta));
    }
    SEDPACK_RETURN_NOT_OK(filler->Finish());
  }
  SEDPACK_RETURN_NOT_OK(ds->Reload());
  return ds;
}

/// Every example of a split in sequential read order: each value's bytes (hex,
/// attribute order) and its (shard ordinal, row).
struct SequentialRead {
  std::vector<std::vector<std::string>> values;
  std::vector<SampleIndex::Location> locations;
};

inline std::vector<std::string> ValuesHex(const Example& ex) {
  std::vector<std::string> out;
  for (std::size_t j = 0; j < ex.shard->num_attributes(); ++j) {
    const ValueView v = ex.Get(j);
    out.push_back(std::string(DTypeName(v.dtype)) + ":" + ToHex(v.data.data(), v.data.size()));
  }
  return out;
}

inline Result<SequentialRead> ReadSequentially(const std::shared_ptr<const Dataset>& ds, Split split) {
  ReadOptions o;
  o.prefetch_shards = 0;
  SEDPACK_ASSIGN_OR_RETURN(auto reader, ExampleReader::Make(ds, split, o));
  SequentialRead out;
  const DecodedShard* current = nullptr;
  std::uint64_t shard = 0;
  std::size_t last_row = 0;
  for (;;) {
    SEDPACK_ASSIGN_OR_RETURN(std::optional<Example> ex, reader->Next());
    if (!ex) break;
    // A new shard starts when the decoded shard object changes or the row restarts.
    if (current != nullptr && (ex->shard.get() != current || ex->index <= last_row)) ++shard;
    // Empty shards in between are skipped by the reader; count them from the list.
    while (shard < reader->shards().size() && reader->shards()[shard].number_of_examples == 0) ++shard;
    current = ex->shard.get();
    last_row = ex->index;
    out.values.push_back(ValuesHex(*ex));
    out.locations.push_back({shard, ex->index});
  }
  return out;
}

}  // namespace sedpack::testing
