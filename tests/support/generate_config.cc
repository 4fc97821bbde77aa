// SPDX-License-Identifier: Apache-2.0
#include "support/generate_config.h"

#include "support/test_support.h"

namespace sedpack::testing {

GenerateConfig SmallGenerateConfig(std::uint64_t seed) {
  GenerateConfig c = DefaultGenerateConfig();
  EXPECT_OK(SetTraceLength(&c, 256));
  c.structure.examples_per_shard = 4;
  c.params.seed = seed;
  c.params.examples = {64, 12, 0};
  c.params.threads = 1;
  return c;
}

}  // namespace sedpack::testing
