// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: the import-hdf5 mapping config parser and its validation.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "sedpack/hdf5/mapping.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  if (auto c = sedpack::ParseHdf5ImportConfig(text, "fuzz"); c.ok()) (void)sedpack::ValidateHdf5ImportConfig(*c);
  return 0;
}
