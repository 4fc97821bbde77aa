// SPDX-License-Identifier: Apache-2.0
#include "sedpack/codecs/hash.h"

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "codecs_test_util.h"
#include "support/test_support.h"

namespace sedpack {
namespace {

using ::sedpack::testing::AsBytes;
using Bytes = std::vector<std::byte>;

struct Vector {
  HashAlgorithm algorithm;
  const char* empty;
  const char* abc;
  const char* big;  // Of BigPattern(), computed with hashlib / python-xxhash 3.0.0.
};

// Reference values from CPython hashlib and python-xxhash (seed 0, hexdigest()).
const Vector kVectors[] = {
    {HashAlgorithm::kMd5, "d41d8cd98f00b204e9800998ecf8427e", "900150983cd24fb0d6963f7d28e17f72",
     "19cd247f426767e9d4789bcb9b6a0fe5"},
    {HashAlgorithm::kSha1, "da39a3ee5e6b4b0d3255bfef95601890afd80709",
     "a9993e364706816aba3e25717850c26c9cd0d89d", "568c9c0f430f16b0d86ef51e65dc2586d6ca21bd"},
    {HashAlgorithm::kSha224, "d14a028c2a3a2bc9476102bb288234c415a2b01f828ea62ac5b3e42f",
     "23097d223405d8228642a477bda255b32aadbce4bda0b3f7e36c9da7",
     "e52a5d74ff9eab59b1de8825a4393ebd45babc51292a9ae302ac6f3a"},
    {HashAlgorithm::kSha256, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
     "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
     "edfc2d29cebe58465b97b4ae7272c2e84ad670b97a9d8a213c9a4d167e0cae7c"},
    {HashAlgorithm::kSha384,
     "38b060a751ac96384cd9327eb1b1e36a21fdb71114be07434c0cc7bf63f6e1da274edebfe76f65fbd51ad2f14898b"
     "95b",
     "cb00753f45a35e8bb5a03d699ac65007272c32ab0eded1631a8b605a43ff5bed8086072ba1e7cc2358baeca134c82"
     "5a7",
     "bff3ffd92abf9c73d5b8a54b24e647aba8057ea1e7992eac597db3ad66c87956f1b3a123f40638446576a854f65df"
     "d3a"},
    {HashAlgorithm::kSha512,
     "cf83e1357eefb8bdf1542850d66d8007d620e4050b5715dc83f4a921d36ce9ce47d0d13c5d85f2b0ff8318d2877ee"
     "c2f"
     "63b931bd47417a81a538327af927da3e",
     "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a2192992a274fc1a836ba3c23a3fee"
     "bbd"
     "454d4423643ce80e2a9ac94fa54ca49f",
     "83290cb31db3e170345b24207dede076472f8aea0fa22e17cc2685b8afc638ca498d0a529ca45d7c03581664fb784"
     "328"
     "472a490ee162c400cf4763e5d998be4d"},
    {HashAlgorithm::kSha3_224, "6b4e03423667dbb73b6e15454f0eb1abd4597f9a1b078e3f5b5a6bc7",
     "e642824c3f8cf24ad09234ee7d3c766fc9a3a5168d0c94ad73b46fdf",
     "246de62bf51df14b8da89cbac45f9c7615f2ccc76b3cc245dc17953a"},
    {HashAlgorithm::kSha3_256, "a7ffc6f8bf1ed76651c14756a061d662f580ff4de43b49fa82d80a4b80f8434a",
     "3a985da74fe225b2045c172d6bd390bd855f086e3e9d525b46bfe24511431532",
     "91f188211acc4da1554f16f4edcb3340d8c92a90ed32729e4b28a69bb82bcb40"},
    {HashAlgorithm::kSha3_384,
     "0c63a75b845e4f7d01107d852e4c2485c51a50aaaa94fc61995e71bbee983a2ac3713831264adb47fb6bd1e058d5f"
     "004",
     "ec01498288516fc926459f58e2c6ad8df9b473cb0fc08c2596da7cf0e49be4b298d88cea927ac7f539f1edf228376"
     "d25",
     "2c81c439c76257fb526fa86f0d3b719e9015d89c0c025790b2e7476a2eb86d22226a2c906f472223052e942c66d50"
     "eca"},
    {HashAlgorithm::kSha3_512,
     "a69f73cca23a9ac5c8b567dc185a756e97c982164fe25859e0d1dcc1475c80a615b2123af1f5f94c11e3e9402c3ac"
     "558"
     "f500199d95b6d3e301758586281dcd26",
     "b751850b1a57168a5693cd924b6b096e08f621827444f70d884f5d0240d2712e10e116e9192af3c91a7ec57647e39"
     "340"
     "57340b4cf408d5a56592f8274eec53f0",
     "914ac6bff027b06bcc04eaf4f7e2517a3393877df0656f681c181eadbef2a7b8c661e0b0dc9f199a1dd4e26aa9c6d"
     "f7a"
     "bd45369c73693dd6d3f5f71357b13ad8"},
    {HashAlgorithm::kXxh32, "02cc5d05", "32d153ff", "8d438441"},
    {HashAlgorithm::kXxh64, "ef46db3751d8e999", "44bc2cf5ad770999", "c4522bf43dfdf209"},
    {HashAlgorithm::kXxh128, "99aa06d3014798d86001c324468d497f", "06b05ab6733a618578af5f94892f3950",
     "999d9e1d54723fca5f78c63298f28067"},
};

// bytes((i * 7 + (i >> 11)) % 251 for i in range(3 * 2**20 + 17)): several
// file chunks, not a multiple of any block size.
Bytes BigPattern() {
  Bytes out(3 * (std::size_t{1} << 20) + 17);
  for (std::size_t i = 0; i < out.size(); ++i) {
    out[i] = static_cast<std::byte>((i * 7 + (i >> 11)) % 251);
  }
  return out;
}

std::string HashOne(HashAlgorithm a, std::span<const std::byte> data) {
  const HashAlgorithm algs[] = {a};
  auto r = HashBytes(algs, data);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? r->at(0) : std::string();
}

TEST(HashTest, CoversEveryAlgorithm) {
  EXPECT_EQ(std::size(kVectors), AllHashAlgorithms().size());
  for (std::size_t i = 0; i < std::size(kVectors); ++i) {
    EXPECT_EQ(kVectors[i].algorithm, AllHashAlgorithms()[i]);
  }
}

TEST(HashTest, KnownAnswers) {
  const Bytes big = BigPattern();
  for (const Vector& v : kVectors) {
    SCOPED_TRACE(HashAlgorithmName(v.algorithm));
    EXPECT_EQ(HashOne(v.algorithm, {}), v.empty);
    EXPECT_EQ(HashOne(v.algorithm, AsBytes("abc")), v.abc);
    EXPECT_EQ(HashOne(v.algorithm, big), v.big);
  }
}

TEST(HashTest, HasherMatchesInAnySplit) {
  const Bytes big = BigPattern();
  for (const Vector& v : kVectors) {
    SCOPED_TRACE(HashAlgorithmName(v.algorithm));
    ASSERT_OK_AND_ASSIGN(auto h, MakeHasher(v.algorithm));
    EXPECT_EQ(h->algorithm(), v.algorithm);
    // Odd-sized pieces, including empty ones.
    std::size_t pos = 0, step = 1;
    while (pos < big.size()) {
      const std::size_t n = std::min(step, big.size() - pos);
      h->Update(std::span<const std::byte>(big).subspan(pos, n));
      h->Update({});
      pos += n;
      step = step * 3 + 1;
    }
    EXPECT_EQ(h->FinishHex(), v.big);
  }
}

TEST(HashTest, MultiHasherKeepsOrder) {
  std::vector<HashAlgorithm> algs;
  for (auto it = std::rbegin(kVectors); it != std::rend(kVectors); ++it) {
    algs.push_back(it->algorithm);
  }
  algs.push_back(HashAlgorithm::kSha256);  // Duplicates are allowed.
  const Bytes big = BigPattern();
  ASSERT_OK_AND_ASSIGN(MultiHasher m, MultiHasher::Make(algs));
  m.Update(std::span<const std::byte>(big).first(1000));
  m.Update(std::span<const std::byte>(big).subspan(1000));
  const std::vector<std::string> got = m.FinishHex();
  ASSERT_EQ(got.size(), algs.size());
  for (std::size_t i = 0; i + 1 < algs.size(); ++i) {
    EXPECT_EQ(got[i], std::rbegin(kVectors)[static_cast<std::ptrdiff_t>(i)].big)
        << HashAlgorithmName(algs[i]);
  }
  EXPECT_EQ(got.back(), "edfc2d29cebe58465b97b4ae7272c2e84ad670b97a9d8a213c9a4d167e0cae7c");
}

TEST(HashTest, EmptyAlgorithmList) {
  ASSERT_OK_AND_ASSIGN(auto digests, HashBytes({}, AsBytes("abc")));
  EXPECT_TRUE(digests.empty());
}

TEST(HashTest, InvalidAlgorithm) {
  EXPECT_EQ(MakeHasher(static_cast<HashAlgorithm>(99)).status().code(),
            StatusCode::kInvalidArgument);
}

TEST(HashFileTest, MatchesHashBytes) {
  sedpack::testing::TempDir dir;
  const Bytes big = BigPattern();
  const std::string path = dir.path() + "/big.bin";
  {
    std::ofstream f(path, std::ios::binary);
    f.write(reinterpret_cast<const char*>(big.data()), static_cast<std::streamsize>(big.size()));
  }
  std::vector<HashAlgorithm> algs(AllHashAlgorithms().begin(), AllHashAlgorithms().end());
  ASSERT_OK_AND_ASSIGN(auto from_file, HashFile(algs, path));
  ASSERT_EQ(from_file.size(), algs.size());
  for (std::size_t i = 0; i < algs.size(); ++i) EXPECT_EQ(from_file[i], kVectors[i].big);

  const std::string empty_path = dir.path() + "/empty.bin";
  { std::ofstream f(empty_path, std::ios::binary); }
  ASSERT_OK_AND_ASSIGN(auto empty, HashFile(algs, empty_path));
  for (std::size_t i = 0; i < algs.size(); ++i) EXPECT_EQ(empty[i], kVectors[i].empty);
}

TEST(HashFileTest, ErrorsNameThePath) {
  sedpack::testing::TempDir dir;
  const HashAlgorithm algs[] = {HashAlgorithm::kSha256};
  const std::string missing = dir.path() + "/no/such/file.fb";
  EXPECT_STATUS(StatusCode::kNotFound, missing, HashFile(algs, missing));
  EXPECT_STATUS(StatusCode::kIOError, dir.path(), HashFile(algs, dir.path()));
}

}  // namespace
}  // namespace sedpack
