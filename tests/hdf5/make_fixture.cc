// SPDX-License-Identifier: Apache-2.0
// Writes one HDF5 fixture for the shell tests:
//   sedpack_make_h5_fixture LAYOUT FILE [key=value ...]
// LAYOUT: ascad1 | ascad2 | lascar. Keys: seed, profiling_rows, attack_rows,
// trace_len, chunk_rows, chunked (0/1), float_metadata (0/1), masks, fixed_key (0/1),
// bad_plaintext=ROW (plant 3.5 at element 0 of that row's plaintext; float metadata).
#include <cstdio>
#include <cstdlib>
#include <string>

#include "support/h5_fixtures.h"

int main(int argc, char** argv) {
  using namespace sedpack::testing;
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s ascad1|ascad2|lascar FILE [key=value ...]\n", argv[0]);
    return 2;
  }
  const std::string layout = argv[1], path = argv[2];
  H5FixtureSpec spec;
  long bad_row = -1;
  for (int i = 3; i < argc; ++i) {
    const std::string kv = argv[i];
    const auto eq = kv.find('=');
    if (eq == std::string::npos) return 2;
    const std::string k = kv.substr(0, eq);
    const unsigned long long v = std::strtoull(kv.c_str() + eq + 1, nullptr, 10);
    if (k == "seed") spec.seed = v;
    else if (k == "profiling_rows") spec.profiling_rows = v;
    else if (k == "attack_rows") spec.attack_rows = v;
    else if (k == "trace_len") spec.trace_len = v;
    else if (k == "chunk_rows") spec.chunk_rows = v;
    else if (k == "chunked") spec.chunked = v != 0;
    else if (k == "float_metadata") spec.profiling_float_metadata = spec.attack_float_metadata = v != 0;
    else if (k == "masks") spec.masks = static_cast<int>(v);
    else if (k == "fixed_key") spec.fixed_key = v != 0;
    else if (k == "bad_plaintext") bad_row = static_cast<long>(v);
    else {
      std::fprintf(stderr, "unknown key %s\n", k.c_str());
      return 2;
    }
  }
  try {
    if (layout == "ascad1") WriteAscadV1(path, spec);
    else if (layout == "ascad2") WriteAscadV2(path, spec);
    else if (layout == "lascar") WriteLascar(path, spec);
    else return 2;
    if (bad_row >= 0) {
      OverwriteValue(path, layout == "lascar" ? "values" : "Profiling_traces/metadata", "plaintext",
                     static_cast<std::uint64_t>(bad_row), 0, 3.5);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
  return 0;
}
