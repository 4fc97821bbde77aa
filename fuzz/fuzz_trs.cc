// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: a TRS file, header and records. The input is parsed as a
// header, then written to a scratch file and opened as an import input (the
// complete-records policy, so that any body size is accepted) and every field
// of every record is read, as import-trs reads them.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "capture/trs_internal.h"
#include "sedpack/capture/sources.h"
#include "sedpack/capture/trs.h"

namespace {

const std::string& ScratchPath() {
  static const std::string path = "/tmp/fuzz_trs_" + std::to_string(getpid()) + ".trs";
  return path;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const std::byte> bytes(reinterpret_cast<const std::byte*>(data), size);
  (void)sedpack::ParseTrsHeader(bytes, /*more_follows=*/false, "fuzz");
  (void)sedpack::ParseTrsHeader(bytes, /*more_follows=*/true, "fuzz");
  std::FILE* f = std::fopen(ScratchPath().c_str(), "wb");
  if (!f) return 0;
  std::fwrite(data, 1, size, f);
  std::fclose(f);
  auto in = sedpack::OpenTrsInput(ScratchPath(), sedpack::TrsCountPolicy::kCompleteRecords, nullptr);
  if (in.ok()) {
    std::vector<std::size_t> which;
    for (std::size_t i = 0; i < (*in)->fields().size(); ++i) which.push_back(i);
    std::vector<sedpack::CaptureRows> out;
    const std::uint64_t rows = (*in)->rows();
    for (std::uint64_t r = 0; r < rows && r < 64; r += 8) {
      (void)(*in)->Read(r, std::min<std::uint64_t>(8, rows - r), which, &out);
    }
    (void)sedpack::SuggestCaptureMapping(**in, "import_trs");
  }
  return 0;
}
