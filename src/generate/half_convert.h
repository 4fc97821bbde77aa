// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstddef>

#include "sedpack/value.h"

namespace sedpack::generate_internal {

/// Convert `n` floats to IEEE binary16, rounding to nearest even. Gives the same
/// bits as Float16::FromFloat for every non-NaN input (NaN payloads may differ),
/// so output does not depend on which code path the CPU takes. Uses F16C when
/// the CPU has it.
void FloatToHalf(const float* in, Float16* out, std::size_t n);

/// True if FloatToHalf uses the hardware (F16C) path on this CPU.
bool FloatToHalfIsAccelerated();

}  // namespace sedpack::generate_internal
