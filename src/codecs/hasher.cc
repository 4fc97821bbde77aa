// SPDX-License-Identifier: Apache-2.0
// Hashers: OpenSSL EVP for md5/sha*/sha3_*, libxxhash for xxh32/xxh64/xxh128.
#include <fcntl.h>
#include <openssl/evp.h>
#include <unistd.h>
#include <xxhash.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <memory>

#include "sedpack/codecs/hash.h"
#include "sedpack/io/file_system.h"
#include "codecs/hash_fd.h"

namespace sedpack {
namespace {

// File reads are this large; fewer syscalls, and big enough for readahead.
constexpr std::size_t kFileChunk = std::size_t{1} << 20;
// With several hashers, the data is handed to each in slices of this size so
// that a slice is still in L2 when the next hasher reads it.
constexpr std::size_t kMultiSlice = std::size_t{128} << 10;

std::string ToHex(const unsigned char* data, std::size_t size) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string hex(size * 2, '\0');
  for (std::size_t i = 0; i < size; ++i) {
    hex[2 * i] = kDigits[data[i] >> 4];
    hex[2 * i + 1] = kDigits[data[i] & 0xf];
  }
  return hex;
}

// OpenSSL 3 looks a digest up by name on every init of a legacy EVP_MD
// (implicit fetch); fetch each one once per process instead. The fetched
// objects live until exit.
const EVP_MD* FetchDigest(HashAlgorithm a) {
  static const auto kTable = [] {
    std::array<const EVP_MD*, 10> t{};
    struct Entry {
      const char* name;
      const EVP_MD* (*legacy)();
    };
    const Entry entries[10] = {
        {"MD5", EVP_md5},           {"SHA1", EVP_sha1},         {"SHA2-224", EVP_sha224},
        {"SHA2-256", EVP_sha256},   {"SHA2-384", EVP_sha384},   {"SHA2-512", EVP_sha512},
        {"SHA3-224", EVP_sha3_224}, {"SHA3-256", EVP_sha3_256}, {"SHA3-384", EVP_sha3_384},
        {"SHA3-512", EVP_sha3_512},
    };
    for (std::size_t i = 0; i < t.size(); ++i) {
      const EVP_MD* md = nullptr;
#if OPENSSL_VERSION_NUMBER >= 0x30000000L
      md = EVP_MD_fetch(nullptr, entries[i].name, nullptr);
#endif
      t[i] = md != nullptr ? md : entries[i].legacy();
    }
    return t;
  }();
  const auto index = static_cast<std::size_t>(a) - static_cast<std::size_t>(HashAlgorithm::kMd5);
  return index < kTable.size() ? kTable[index] : nullptr;
}

class EvpHasher final : public Hasher {
 public:
  EvpHasher(HashAlgorithm algorithm, EVP_MD_CTX* ctx) : algorithm_(algorithm), ctx_(ctx) {}
  ~EvpHasher() override { EVP_MD_CTX_free(ctx_); }
  EvpHasher(const EvpHasher&) = delete;
  EvpHasher& operator=(const EvpHasher&) = delete;

  HashAlgorithm algorithm() const override { return algorithm_; }
  void Update(std::span<const std::byte> data) override {
    if (!data.empty()) EVP_DigestUpdate(ctx_, data.data(), data.size());
  }
  std::string FinishHex() override {
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned int size = 0;
    if (EVP_DigestFinal_ex(ctx_, digest, &size) != 1) return {};
    return ToHex(digest, size);
  }

 private:
  HashAlgorithm algorithm_;
  EVP_MD_CTX* ctx_;
};

class Xxh32Hasher final : public Hasher {
 public:
  explicit Xxh32Hasher(XXH32_state_t* state) : state_(state) {}
  ~Xxh32Hasher() override { XXH32_freeState(state_); }
  Xxh32Hasher(const Xxh32Hasher&) = delete;
  Xxh32Hasher& operator=(const Xxh32Hasher&) = delete;
  HashAlgorithm algorithm() const override { return HashAlgorithm::kXxh32; }
  void Update(std::span<const std::byte> data) override {
    XXH32_update(state_, data.data(), data.size());
  }
  std::string FinishHex() override {
    XXH32_canonical_t c;
    XXH32_canonicalFromHash(&c, XXH32_digest(state_));
    return ToHex(c.digest, sizeof(c.digest));
  }

 private:
  XXH32_state_t* state_;
};

class Xxh64Hasher final : public Hasher {
 public:
  explicit Xxh64Hasher(XXH64_state_t* state) : state_(state) {}
  ~Xxh64Hasher() override { XXH64_freeState(state_); }
  Xxh64Hasher(const Xxh64Hasher&) = delete;
  Xxh64Hasher& operator=(const Xxh64Hasher&) = delete;
  HashAlgorithm algorithm() const override { return HashAlgorithm::kXxh64; }
  void Update(std::span<const std::byte> data) override {
    XXH64_update(state_, data.data(), data.size());
  }
  std::string FinishHex() override {
    XXH64_canonical_t c;
    XXH64_canonicalFromHash(&c, XXH64_digest(state_));
    return ToHex(c.digest, sizeof(c.digest));
  }

 private:
  XXH64_state_t* state_;
};

// python-xxhash's xxh128 is XXH3-128; its canonical form is big-endian with
// the high 64 bits first.
class Xxh128Hasher final : public Hasher {
 public:
  explicit Xxh128Hasher(XXH3_state_t* state) : state_(state) {}
  ~Xxh128Hasher() override { XXH3_freeState(state_); }
  Xxh128Hasher(const Xxh128Hasher&) = delete;
  Xxh128Hasher& operator=(const Xxh128Hasher&) = delete;
  HashAlgorithm algorithm() const override { return HashAlgorithm::kXxh128; }
  void Update(std::span<const std::byte> data) override {
    XXH3_128bits_update(state_, data.data(), data.size());
  }
  std::string FinishHex() override {
    XXH128_canonical_t c;
    XXH128_canonicalFromHash(&c, XXH3_128bits_digest(state_));
    return ToHex(c.digest, sizeof(c.digest));
  }

 private:
  XXH3_state_t* state_;
};

Status OutOfMemory(HashAlgorithm a) {
  return Status::ResourceExhausted("cannot allocate a ", HashAlgorithmName(a), " hasher");
}

}  // namespace

Result<std::unique_ptr<Hasher>> MakeHasher(HashAlgorithm algorithm) {
  switch (algorithm) {
    case HashAlgorithm::kXxh32: {
      XXH32_state_t* s = XXH32_createState();
      if (s == nullptr) return OutOfMemory(algorithm);
      XXH32_reset(s, 0);
      return std::unique_ptr<Hasher>(std::make_unique<Xxh32Hasher>(s));
    }
    case HashAlgorithm::kXxh64: {
      XXH64_state_t* s = XXH64_createState();
      if (s == nullptr) return OutOfMemory(algorithm);
      XXH64_reset(s, 0);
      return std::unique_ptr<Hasher>(std::make_unique<Xxh64Hasher>(s));
    }
    case HashAlgorithm::kXxh128: {
      XXH3_state_t* s = XXH3_createState();
      if (s == nullptr) return OutOfMemory(algorithm);
      XXH3_128bits_reset(s);  // Seed 0, default secret.
      return std::unique_ptr<Hasher>(std::make_unique<Xxh128Hasher>(s));
    }
    case HashAlgorithm::kMd5:
    case HashAlgorithm::kSha1:
    case HashAlgorithm::kSha224:
    case HashAlgorithm::kSha256:
    case HashAlgorithm::kSha384:
    case HashAlgorithm::kSha512:
    case HashAlgorithm::kSha3_224:
    case HashAlgorithm::kSha3_256:
    case HashAlgorithm::kSha3_384:
    case HashAlgorithm::kSha3_512: {
      const EVP_MD* md = FetchDigest(algorithm);
      if (md == nullptr) {
        return Status::NotImplemented("hash algorithm ", HashAlgorithmName(algorithm),
                                      " is not available in OpenSSL");
      }
      EVP_MD_CTX* ctx = EVP_MD_CTX_new();
      if (ctx == nullptr) return OutOfMemory(algorithm);
      if (EVP_DigestInit_ex(ctx, md, nullptr) != 1) {
        EVP_MD_CTX_free(ctx);
        return Status::NotImplemented("hash algorithm ", HashAlgorithmName(algorithm),
                                      " cannot be initialized in OpenSSL");
      }
      return std::unique_ptr<Hasher>(std::make_unique<EvpHasher>(algorithm, ctx));
    }
  }
  return Status::InvalidArgument("unknown hash algorithm value ", static_cast<int>(algorithm));
}

Result<MultiHasher> MultiHasher::Make(std::span<const HashAlgorithm> algorithms) {
  MultiHasher m;
  m.hashers_.reserve(algorithms.size());
  for (HashAlgorithm a : algorithms) {
    SEDPACK_ASSIGN_OR_RETURN(auto h, MakeHasher(a));
    m.hashers_.push_back(std::move(h));
  }
  return m;
}

void MultiHasher::Update(std::span<const std::byte> data) {
  if (hashers_.empty()) return;
  if (hashers_.size() == 1) {
    hashers_.front()->Update(data);
    return;
  }
  for (std::size_t pos = 0; pos < data.size(); pos += kMultiSlice) {
    const auto slice = data.subspan(pos, std::min(kMultiSlice, data.size() - pos));
    for (auto& h : hashers_) h->Update(slice);
  }
}

std::vector<std::string> MultiHasher::FinishHex() {
  std::vector<std::string> digests;
  digests.reserve(hashers_.size());
  for (auto& h : hashers_) digests.push_back(h->FinishHex());
  return digests;
}

Result<std::vector<std::string>> HashBytes(std::span<const HashAlgorithm> algorithms,
                                           std::span<const std::byte> data) {
  SEDPACK_ASSIGN_OR_RETURN(MultiHasher m, MultiHasher::Make(algorithms));
  m.Update(data);
  return m.FinishHex();
}

Result<std::vector<std::string>> HashFile(std::span<const HashAlgorithm> algorithms,
                                          const std::string& path, FileSystem* fs) {
  FileSystem& files = FileSystemOr(fs);
  const int fd = files.Open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    if (err == ENOENT || err == ENOTDIR) {
      return Status::NotFound("cannot open ", path, ": ", std::strerror(err));
    }
    return Status::IOError("cannot open ", path, ": ", std::strerror(err));
  }
  struct FdCloser {
    FileSystem& files;
    int fd;
    ~FdCloser() { files.Close(fd); }
  } closer{files, fd};
  return HashFd(algorithms, fd, path, fs);
}

Result<std::vector<std::string>> HashFd(std::span<const HashAlgorithm> algorithms, int fd,
                                        const std::string& path, FileSystem* fs) {
  FileSystem& files = FileSystemOr(fs);
  SEDPACK_ASSIGN_OR_RETURN(MultiHasher m, MultiHasher::Make(algorithms));
  (void)files.AdviseSequential(fd);
  auto buffer = std::make_unique_for_overwrite<std::byte[]>(kFileChunk);
  for (;;) {
    const ssize_t n = files.Read(fd, buffer.get(), kFileChunk);
    if (n < 0) {
      if (errno == EINTR) continue;
      return Status::IOError("cannot read ", path, ": ", std::strerror(errno));
    }
    if (n == 0) break;
    m.Update(std::span<const std::byte>(buffer.get(), static_cast<std::size_t>(n)));
  }
  return m.FinishHex();
}

}  // namespace sedpack
