// SPDX-License-Identifier: Apache-2.0
// Parse time of one (large) shards_list.json, e.g. one written by
// bench/make_shards_list.py:
//
//   sedpack_bench_lists FILE [--parser fast|tree|public]
//
//   fast   (default) the readers' path: the file's text handed over to
//          ParseShardsListOwned (simdjson, padding appended in place);
//   tree   the general parser over the JSON tree (the only parser before
//          simdjson);
//   public ParseShardsList(string_view) (one padded copy first).
//
// Prints read and parse seconds (wall clock, and the parse's CPU seconds) and
// the number of entries. Run it under
// `/usr/bin/time -v` for the peak RSS; one parser per process so that the
// figure is that parser's.
#include <chrono>
#include <cstdio>
#include <ctime>
#include <cstring>
#include <string>
#include <utility>

#include "metadata/shards_list_parse.h"
#include "sedpack/io/file.h"
#include "sedpack/metadata/models.h"

namespace {

// CPU seconds of this process: on a shared machine the wall clock mostly
// measures the wait for a core.
double CpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

}  // namespace

int main(int argc, char** argv) {
  using Clock = std::chrono::steady_clock;
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s FILE [--parser fast|tree|public]\n", argv[0]);
    return 2;
  }
  std::string parser = "fast";
  for (int i = 2; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--parser") == 0) parser = argv[i + 1];
  }
  const auto t0 = Clock::now();
  auto text = sedpack::ReadFileText(argv[1], std::uint64_t{4} << 30);
  if (!text.ok()) {
    std::fprintf(stderr, "%s\n", text.status().ToString().c_str());
    return 1;
  }
  const std::size_t bytes = text->size();
  const auto t1 = Clock::now();
  const double c1 = CpuSeconds();
  sedpack::Result<sedpack::ShardsList> list = sedpack::Status::InvalidArgument("no parser");
  if (parser == "tree") {
    list = sedpack::metadata_internal::ParseShardsListTree(*text, argv[1]);
  } else if (parser == "public") {
    list = sedpack::ParseShardsList(*text, argv[1]);
  } else if (parser == "fast") {
    list = sedpack::metadata_internal::ParseShardsListOwned(std::move(*text), argv[1]);
  } else {
    std::fprintf(stderr, "unknown parser %s\n", parser.c_str());
    return 2;
  }
  const auto t2 = Clock::now();
  const double c2 = CpuSeconds();
  if (!list.ok()) {
    std::fprintf(stderr, "%s\n", list.status().ToString().c_str());
    return 1;
  }
  const double read_s = std::chrono::duration<double>(t1 - t0).count();
  const double parse_s = std::chrono::duration<double>(t2 - t1).count();
  const double parse_cpu_s = c2 - c1;
  std::printf(
      "parser=%s bytes=%zu shard_files=%zu children=%zu read_s=%.3f parse_s=%.3f parse_cpu_s=%.3f "
      "MB/s(cpu)=%.1f\n",
      parser.c_str(), bytes, list->shard_files.size(), list->children_shard_lists.size(), read_s,
      parse_s, parse_cpu_s, static_cast<double>(bytes) / 1e6 / parse_cpu_s);
  return 0;
}
