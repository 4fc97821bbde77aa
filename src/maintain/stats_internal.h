// SPDX-License-Identifier: Apache-2.0
// The per-value step of `stats`, shared with the report so that both give the
// same moments for the same data.
#pragma once

#include <string>
#include <vector>

#include "sedpack/maintain/stats.h"
#include "sedpack/value.h"

namespace sedpack::maintain_internal {

/// Add every element of the numeric value `v` to `m`: the moments of the
/// value, block by block of kMomentsBlock elements, then merged into `m`
/// (integer extremes stay exact).
void AddValueToMoments(const ValueView& v, Moments& m);

/// One block of AddValueToMoments: elements [start, start + len) of `v`,
/// already converted to `block` by ToDoubles (NaNs are squeezed out of
/// `block`). A pass that also needs the doubles for something else adds the
/// blocks of a value in order to a Moments of its own and merges that, and
/// gets the same bits as AddValueToMoments.
inline constexpr std::size_t kMomentsBlock = 1024;
void AddBlockToMoments(const ValueView& v, std::size_t start, double* block, std::size_t len, Moments& m);

/// Elements [begin, end) of the numeric value `v` as doubles, written to
/// `out`; returns how many (fewer if the value is shorter).
std::size_t ToDoubles(const ValueView& v, std::size_t begin, std::size_t end, double* out);

/// Moments and an example count as text for sending between ranks (exact:
/// hex floats); DecodeMoments fills `ms`, which must have the encoded size.
std::string EncodeMoments(const std::vector<Moments>& ms, std::uint64_t examples);
Status DecodeMoments(const std::string& text, std::vector<Moments>* ms, std::uint64_t* examples);

}  // namespace sedpack::maintain_internal
