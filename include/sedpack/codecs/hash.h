// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "sedpack/status.h"
#include "sedpack/types.h"

namespace sedpack {

class FileSystem;  // sedpack/io/file_system.h

/// Streaming hasher for one algorithm. Hex output matches the reference:
/// lowercase hexdigest for md5/sha*; canonical big-endian hex for xxh32/xxh64
/// and XXH3-128 (high 64 bits first) for xxh128, all with seed 0.
class Hasher {
 public:
  virtual ~Hasher() = default;
  virtual HashAlgorithm algorithm() const = 0;
  virtual void Update(std::span<const std::byte> data) = 0;
  /// Return the hex digest. The hasher must not be used afterwards.
  virtual std::string FinishHex() = 0;
};

Result<std::unique_ptr<Hasher>> MakeHasher(HashAlgorithm algorithm);

/// Several algorithms fed in one pass over the data (each Update goes to all).
class MultiHasher {
 public:
  static Result<MultiHasher> Make(std::span<const HashAlgorithm> algorithms);
  void Update(std::span<const std::byte> data);
  /// Hex digests in the order the algorithms were given.
  std::vector<std::string> FinishHex();

 private:
  std::vector<std::unique_ptr<Hasher>> hashers_;
};

/// Hex digests of `data` for each algorithm, in order.
Result<std::vector<std::string>> HashBytes(std::span<const HashAlgorithm> algorithms,
                                           std::span<const std::byte> data);
/// Hex digests of the file at `path`, streamed in chunks (no whole-file buffer),
/// read through `fs` (nullptr: the default). NotFound / IOError name the path.
Result<std::vector<std::string>> HashFile(std::span<const HashAlgorithm> algorithms,
                                          const std::string& path, FileSystem* fs = nullptr);

}  // namespace sedpack
