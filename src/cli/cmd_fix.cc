// SPDX-License-Identifier: Apache-2.0
// `sedpack fix DATASET`: list (and with --remove-orphans delete) files under the
// splits that no metadata lists, e.g. the shards of a parallel job that died
// before its merge, or temporary files of an interrupted write.
#include <filesystem>
#include <iostream>

#include "cli/cli_common.h"
#include "sedpack/dataset/check.h"

namespace sedpack::cli {

const CommandSpec kFixSpec = {
    "fix", "DATASET [--remove-orphans]",
    "list or remove orphan files (e.g. of a dead parallel job)",
    "List the files under DATASET's split folders that no shards_list.json lists:\n"
    "shards of a job that died before rank 0 merged it, or temporary files of an\n"
    "interrupted write. They are never read and never verified. With --remove-orphans\n"
    "they are deleted, with the folders that become empty. Listed files and all\n"
    "metadata are never touched. Only the metadata is read (no shard is hashed).\n"
    "Exit code 0: done (or nothing to do), 2: not a dataset, 3: a file could not be removed.\n",
};

int RunFix(const std::vector<std::string>& args) {
  po::options_description options("Options");
  options.add_options()("dataset", po::value<std::string>(), "dataset folder")(
      "remove-orphans", po::bool_switch(), "delete the orphan files and the folders left empty");
  po::positional_options_description positional;
  positional.add("dataset", 1);
  po::variables_map vm;
  if (auto code = ParseCommandLine(kFixSpec, options, positional, args, &vm)) return *code;
  if (!vm.count("dataset")) return UsageError("fix", "missing DATASET argument");
  auto ds = OpenDatasetArg(vm["dataset"].as<std::string>());
  if (!ds.ok()) return ReportError(ds.status(), /*input_stage=*/true);
  CheckOptions check;
  auto walk = WalkMetadata(**ds, check);
  if (!walk.ok()) return ReportError(walk.status());
  CheckReport orphans;
  FindOrphans(**ds, check, walk->listed, &orphans);
  const bool remove = vm["remove-orphans"].as<bool>();
  if (remove && (*ds)->pack()) {
    return UsageError("fix", "a packed dataset is read-only; unpack it to remove files");
  }
  int failures = 0;
  std::uint64_t bytes = 0;
  for (const CheckProblem& p : orphans.problems) {
    const std::filesystem::path file = (*ds)->PathOf(p.path);
    std::error_code ec;
    bytes += std::filesystem::file_size(file, ec);
    if (!remove) {
      std::cout << "orphan " << p.path << "\n";
      continue;
    }
    if (!std::filesystem::remove(file, ec) || ec) {
      std::cerr << "sedpack: cannot remove " << file.string() << ": " << ec.message() << "\n";
      ++failures;
      continue;
    }
    std::cout << "removed " << p.path << "\n";
    // Remove the folders this leaves empty, up to (not including) the split folder.
    const std::filesystem::path split_dir = (*ds)->PathOf(p.path.substr(0, p.path.find('/')));
    for (auto dir = file.parent_path(); dir != split_dir && dir.string().size() > split_dir.string().size();
         dir = dir.parent_path()) {
      if (!std::filesystem::is_empty(dir, ec) || ec || !std::filesystem::remove(dir, ec)) break;
    }
  }
  std::cout << orphans.problems.size() << " orphan file" << (orphans.problems.size() == 1 ? "" : "s")
            << " (" << FormatBytes(static_cast<double>(bytes)) << ")"
            << (remove ? " removed" : "; rerun with --remove-orphans to delete them") << "\n";
  return failures ? kExitFailure : kExitOk;
}

}  // namespace sedpack::cli
