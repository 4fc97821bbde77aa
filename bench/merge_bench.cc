// SPDX-License-Identifier: Apache-2.0
// The commit at rank 0 of a parallel write with many ranks, without the ranks:
//
//   sedpack_bench_merge [--ranks N] [--splits 1|2|3] [--dir DIR]
//
// Each simulated rank has written one subtree per split (its own leaf
// shards_list.json under <split>/<job>_<rank>/, real files with real hashes,
// four shards each) and sends its ShardListInfos in the wire form the
// DistributedWriter gathers. The benchmark times what rank 0 does with them:
// decode every rank's message, then Dataset::WriteConfig (merge into the split
// lists, commit dataset_info.json). Prints seconds, bytes gathered, the size of
// the lists written and the peak RSS. The merged dataset is then checked.
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "metadata/shard_list_info_wire.h"
#include "sedpack/codecs/hash.h"
#include "sedpack/check/check.h"
#include "sedpack/dataset/dataset.h"
#include "sedpack/io/file.h"
#include "sedpack/metadata/models.h"

namespace {

using Clock = std::chrono::steady_clock;

double Since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

long PeakRssMb() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss / 1024;
}

int Fail(const sedpack::Status& st) {
  std::fprintf(stderr, "sedpack_bench_merge: %s\n", st.ToString().c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace sedpack;
  int ranks = 1000, splits = 3;
  std::string dir = "/tmp/sedpack-merge-bench";
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--ranks")) ranks = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--splits")) splits = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--dir")) dir = argv[i + 1];
  }
  if (ranks < 1 || splits < 1 || splits > 3) {
    std::fprintf(stderr, "usage: %s [--ranks N] [--splits 1|2|3] [--dir DIR]\n", argv[0]);
    return 2;
  }
  std::filesystem::remove_all(dir);
  DatasetStructure structure;
  Attribute a;
  a.name = "trace";
  a.dtype = "float32";
  a.shape = {256};
  structure.saved_data_description = {a};
  structure.hash_checksum_algorithms = {HashAlgorithm::kXxh64};
  auto ds = Dataset::Create(dir, Metadata{}, structure);
  if (!ds.ok()) return Fail(ds.status());

  // What the ranks wrote and send (not timed).
  const char* names[] = {"train", "test", "holdout"};
  std::vector<std::string> messages(static_cast<std::size_t>(ranks));
  for (int r = 0; r < ranks; ++r) {
    for (int s = 0; s < splits; ++s) {
      char folder[64];
      std::snprintf(folder, sizeof(folder), "%s/job_%05d", names[s], r);
      ShardsList leaf;
      leaf.relative_path_self = std::string(folder) + "/shards_list.json";
      for (int k = 0; k < 4; ++k) {
        ShardInfo shard;
        shard.file_infos.push_back(
            FileInfo{std::string(folder) + "/shard_" + std::to_string(k) + ".fb", {"0123456789abcdef"}});
        shard.number_of_examples = 256;
        leaf.shard_files.push_back(std::move(shard));
      }
      leaf.number_of_examples = 4 * 256;
      const std::string text = SerializeShardsList(leaf);
      std::filesystem::create_directories(dir + "/" + folder);
      if (Status st = WriteFileAtomic(dir + "/" + leaf.relative_path_self, text); !st.ok()) return Fail(st);
      ShardListInfo info;
      info.shard_list_info_file.file_path = leaf.relative_path_self;
      auto sums = HashBytes(structure.hash_checksum_algorithms, std::as_bytes(std::span(text)));
      if (!sums.ok()) return Fail(sums.status());
      info.shard_list_info_file.hash_checksums = *sums;
      info.number_of_examples = leaf.number_of_examples;
      info.number_of_shards = 4;
      messages[static_cast<std::size_t>(r)] += SerializeShardListInfo(info) + "\n";
    }
  }
  std::size_t gathered = 0;
  for (const auto& m : messages) gathered += m.size();

  // Rank 0: decode every message, then merge and commit.
  auto t0 = Clock::now();
  std::vector<ShardListInfo> all;
  all.reserve(static_cast<std::size_t>(ranks * splits));
  for (std::size_t r = 0; r < messages.size(); ++r) {
    std::string_view rest = messages[r];
    while (!rest.empty()) {
      const auto nl = rest.find('\n');
      auto info = ParseShardListInfo(rest.substr(0, nl), "rank " + std::to_string(r));
      if (!info.ok()) return Fail(info.status());
      all.push_back(std::move(*info));
      rest.remove_prefix(nl == std::string_view::npos ? rest.size() : nl + 1);
    }
  }
  const double decode_s = Since(t0);
  auto t1 = Clock::now();
  auto root = (*ds)->WriteConfig(all);
  if (!root.ok()) return Fail(root.status());
  const double merge_s = Since(t1);
  const double total_s = Since(t0);
  std::uintmax_t list_bytes = 0;
  for (int s = 0; s < splits; ++s) {
    list_bytes += std::filesystem::file_size(dir + "/" + names[s] + "/shards_list.json");
  }
  std::printf("ranks %d x splits %d = %zu infos, %zu bytes gathered\n", ranks, splits, all.size(), gathered);
  std::printf("  decode  %8.4f s  %10.0f infos/s\n", decode_s, static_cast<double>(all.size()) / decode_s);
  std::printf("  merge + commit %8.4f s  (split lists written: %ju bytes)\n", merge_s, list_bytes);
  std::printf("  total   %8.4f s  %10.0f ranks/s, peak RSS %ld MB\n", total_s, ranks / total_s, PeakRssMb());
  // The tree must be sound: every list's hash and count (shards are not written).
  CheckOptions co;
  co.find_orphans = false;
  auto report = CheckDataset(dir, co);
  if (!report.ok()) return Fail(report.status());
  std::size_t list_problems = 0;
  for (const auto& p : report->problems) list_problems += p.path.ends_with("shards_list.json") ? 1 : 0;
  std::printf("  check of the merged lists: %zu problems in lists (shard files were not written)\n", list_problems);
  return list_problems == 0 ? 0 : 1;
}
