// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: dataset_info.json and shards_list.json parsing (and the
// pydantic-exact re-serialization of whatever parses).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "sedpack/metadata/models.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  if (auto info = sedpack::ParseDatasetInfo(text, "fuzz"); info.ok()) {
    (void)sedpack::SerializeDatasetInfo(*info);
    (void)info->dataset_structure.Schema();
  }
  if (auto list = sedpack::ParseShardsList(text, "fuzz"); list.ok()) (void)sedpack::SerializeShardsList(*list);
  return 0;
}
