// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <array>
#include <cstdint>

namespace sedpack::generate_internal {

using AesBlock = std::array<std::uint8_t, 16>;

/// The AES S-box (FIPS-197, Figure 7).
std::uint8_t AesSbox(std::uint8_t x);

/// Encrypt one block with AES-128 (FIPS-197). Plain table-based code: it only
/// computes labels for synthetic traces, so it makes no constant-time claims.
AesBlock Aes128Encrypt(const AesBlock& key, const AesBlock& plaintext);

}  // namespace sedpack::generate_internal
