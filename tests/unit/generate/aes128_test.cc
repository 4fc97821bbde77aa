// SPDX-License-Identifier: Apache-2.0
#include "generate/aes128.h"

#include <gtest/gtest.h>

#include <string>

namespace sedpack::generate_internal {
namespace {

AesBlock Hex(const std::string& hex) {
  AesBlock b{};
  for (int i = 0; i < 16; ++i) b[i] = static_cast<std::uint8_t>(std::stoi(hex.substr(2 * i, 2), nullptr, 16));
  return b;
}

TEST(Aes128Test, Fips197AppendixC1) {
  EXPECT_EQ(Aes128Encrypt(Hex("000102030405060708090a0b0c0d0e0f"),
                          Hex("00112233445566778899aabbccddeeff")),
            Hex("69c4e0d86a7b0430d8cdb78070b4c55a"));
}

TEST(Aes128Test, Fips197AppendixB) {
  EXPECT_EQ(Aes128Encrypt(Hex("2b7e151628aed2a6abf7158809cf4f3c"),
                          Hex("3243f6a8885a308d313198a2e0370734")),
            Hex("3925841d02dc09fbdc118597196a0b32"));
}

TEST(Aes128Test, Sp80038aEcbVector) {
  // NIST SP 800-38A F.1.1, ECB-AES128 block 1.
  EXPECT_EQ(Aes128Encrypt(Hex("2b7e151628aed2a6abf7158809cf4f3c"),
                          Hex("6bc1bee22e409f96e93d7e117393172a")),
            Hex("3ad77bb40d7a3660a89ecaf32466ef97"));
}

TEST(Aes128Test, Sbox) {
  EXPECT_EQ(AesSbox(0x00), 0x63);
  EXPECT_EQ(AesSbox(0x53), 0xed);
  EXPECT_EQ(AesSbox(0xff), 0x16);
  // A permutation.
  bool seen[256] = {};
  for (int i = 0; i < 256; ++i) seen[AesSbox(static_cast<std::uint8_t>(i))] = true;
  for (bool s : seen) EXPECT_TRUE(s);
}

}  // namespace
}  // namespace sedpack::generate_internal
