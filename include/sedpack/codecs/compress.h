// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "sedpack/status.h"
#include "sedpack/types.h"

namespace sedpack {

/// Default cap on the size of any decompressed shard (4 GiB). A shard whose
/// decompressed size would pass the cap is refused with ResourceExhausted
/// before the memory is allocated.
inline constexpr std::uint64_t kDefaultMaxDecompressedBytes = 4ULL << 30;

/// `CodecOptions::level` meaning "the codec's default level" (CodecLevels).
inline constexpr int kDefaultCodecLevel = std::numeric_limits<int>::min();

/// CodecOptions::block_bytes meaning "the codec's default" (DefaultBlockBytes).
inline constexpr std::uint64_t kDefaultBlockBytes = std::numeric_limits<std::uint64_t>::max();

/// The decoded bytes between decode points a codec writes by default, chosen
/// with bench/codec_bench on TinyAES shards (docs/performance.md, "Decode
/// points"): LZ4 256 KiB (no size or speed cost, one-block fetches 100x a
/// whole-shard decode), GZIP/ZLIB 1 MiB (ISA-L pays for each block's
/// Huffman tables: 256 KiB cost 13% of its write speed, 1 MiB about 5%);
/// 0 for the codecs without points.
std::uint64_t DefaultBlockBytes(Compression c);

/// How a whole-file codec compresses (decompression takes no options). The
/// level is a choice of the writing job, never recorded in the dataset: any
/// level gives the same standard format, which every reader decodes.
struct CodecOptions {
  /// Compression level in the codec's own range (CodecLevels), or
  /// kDefaultCodecLevel for the codec's default.
  int level = kDefaultCodecLevel;
  /// Threads one compression call may use (ZSTD only, ZSTD_c_nbWorkers, and
  /// only for inputs of at least kZstdThreadedMinBytes; the result is still one
  /// frame with its content size). 1 = the calling thread only.
  int threads = 1;
  /// Decoded bytes between decode points (codecs that support them: LZ4,
  /// GZIP, ZLIB), so that a reader can decode one block of a shard instead of
  /// all of it; the file stays one standard frame/stream of its codec. 0 = no
  /// points (one block, the bytes of earlier versions); kDefaultBlockBytes =
  /// DefaultBlockBytes(codec). LZ4 rounds it down to a frame block size
  /// (64 KiB, 256 KiB, 1 MiB or 4 MiB).
  std::uint64_t block_bytes = kDefaultBlockBytes;
};

/// Smallest input ZSTD compresses on CodecOptions::threads workers; below it
/// the workers' start-up costs more than it saves.
inline constexpr std::uint64_t kZstdThreadedMinBytes = 8ULL << 20;

/// The levels a codec accepts and the one it uses by default.
struct CodecLevelRange {
  int min = 0;
  int max = 0;
  int default_level = 0;
  /// What the levels select (e.g. which library), for help texts.
  std::string_view note;
};

/// Levels of `c` for fb whole-file compression (kZip: the zip members of npz
/// shards). kNone has the single level 0.
///   GZIP, ZLIB: 1..9, default 1. 1..3 are ISA-L's levels 1..3 where the build
///     has ISA-L (zlib's 1..3 otherwise); 4..9 are zlib's, 9 being the
///     reference's gzip.compress(data, 9) byte for byte (but the mtime).
///   BZ2: 1..9 (block size in 100 kB), default 9 as the reference.
///   LZMA: xz presets 0..9, default 6 as the reference.
///   LZ4: 0..12, default 0 as the reference; 3..12 are LZ4HC (same frame
///     format, smaller and slower to write, as fast to read).
///   ZSTD: ZSTD_minCLevel()..ZSTD_maxCLevel() (negative = fast), default 3.
///   ZIP: zlib 1..9, default 6 (numpy's savez_compressed).
Result<CodecLevelRange> CodecLevels(Compression c);

/// OK when `level` is kDefaultCodecLevel or inside CodecLevels(c); otherwise
/// InvalidArgument naming the codec and its valid range.
Status ValidateCodecLevel(Compression c, int level);

/// `level`, or the codec's default for kDefaultCodecLevel (after validation).
Result<int> ResolveCodecLevel(Compression c, int level);

/// Whole-file compression of fb shards, in the reference's formats:
/// GZIP and ZLIB write one gzip member (the reference: level 9), BZ2 level 9,
/// LZMA an .xz stream (preset 6, CRC64), LZ4 one frame with content size, ZSTD
/// one frame (level 3) with content size. The level is CodecOptions'.
/// With CodecOptions::block_bytes > 0 (the default) LZ4 writes independent
/// blocks and GZIP/ZLIB a full flush every block_bytes: still the format every
/// reader decodes, but the reference's exact bytes need block_bytes = 0.
/// Thread-compatible: one instance per thread.
class Codec {
 public:
  virtual ~Codec() = default;
  virtual Compression type() const = 0;

  /// Compress `input` into `*out` (replacing its contents).
  virtual Status Compress(std::span<const std::byte> input, std::vector<std::byte>* out) = 0;

  /// Decompress `input` into `*out`. Fails with ResourceExhausted if the output
  /// would exceed `max_output` bytes, with Corruption on malformed or truncated
  /// input. Reads the first member/frame/stream as the reference readers do
  /// (BZ2/LZMA/GZIP: concatenated streams are accepted).
  virtual Status Decompress(std::span<const std::byte> input, std::uint64_t max_output,
                            std::vector<std::byte>* out) = 0;
};

/// Create the codec for `c`. kNone gives an identity codec. kZip is not a
/// whole-file codec (npz handles it) and gives InvalidArgument, as does a
/// level outside CodecLevels(c) or threads < 1.
Result<std::unique_ptr<Codec>> MakeCodec(Compression c, const CodecOptions& options = {});

/// Which DEFLATE library compresses GZIP/ZLIB fb shards at `level` in this
/// build ("ISA-L" or "zlib"), and which decompresses them.
std::string_view DeflateLibrary(int level);
std::string_view InflateLibrary();

/// Create the codec TensorFlow's TFRecordWriter applies to a whole record
/// stream, which differs from the fb one of MakeCodec: GZIP writes one gzip
/// member and ZLIB one zlib (RFC 1950) stream, both at zlib's default level.
/// Reading GZIP accepts concatenated members; ZLIB reads exactly one stream
/// (anything after it is Corruption). kNone gives the identity codec; every
/// other compression is InvalidArgument. `level`: zlib's 1..9 (default: zlib's
/// default, 6, as TensorFlow).
Result<std::unique_ptr<Codec>> MakeTfRecordCodec(Compression c, int level = kDefaultCodecLevel);

}  // namespace sedpack
