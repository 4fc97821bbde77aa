// SPDX-License-Identifier: Apache-2.0
// The per-value step of `stats`, shared with the report so that both give the
// same moments for the same data.
#pragma once

#include <string>
#include <vector>

#include "sedpack/maintain/stats.h"
#include "sedpack/value.h"

namespace sedpack::maintain_internal {

/// Add every element of the numeric value `v` to `m` (integers through
/// AddInteger/AddUnsigned, so that their extremes stay exact).
void AddValueToMoments(const ValueView& v, Moments& m);

/// Moments and an example count as text for sending between ranks (exact:
/// hex floats); DecodeMoments fills `ms`, which must have the encoded size.
std::string EncodeMoments(const std::vector<Moments>& ms, std::uint64_t examples);
Status DecodeMoments(const std::string& text, std::vector<Moments>* ms, std::uint64_t* examples);

}  // namespace sedpack::maintain_internal
