// SPDX-License-Identifier: Apache-2.0
// The index file's byte form, for the builders (the serial one in index.cc,
// the one over a Comm in sedpack_distributed) and tests. Project-private (src/
// include directory), not installed: users write an index with BuildIndexFile.
#pragma once

#include <cstddef>
#include <vector>

#include "sedpack/index/index.h"
#include "sedpack/status.h"

namespace sedpack {

/// Serialize (little-endian, see docs/format.md). InvalidArgument on contents that
/// cannot be represented (duplicate splits, a count overflowing uint64).
Result<std::vector<std::byte>> EncodeIndex(const IndexContents& contents);

}  // namespace sedpack
