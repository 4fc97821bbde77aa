// SPDX-License-Identifier: Apache-2.0
// The ISA-L (igzip) half of the GZIP/ZLIB fb codec, built when the build has
// libisal (SEDPACK_WITH_ISAL): levels 1..3 compress and every fb shard
// decompresses through it; gzip_codec.cc chooses between it and zlib.
//
// ISA-L members are cut into 4 MiB input segments compressed independently
// (each primed with the 32 KiB before it, see kIsalSegment), so a shard can be
// compressed by several threads and streamed to its file segment by segment
// without a shard-sized output buffer, in the same bytes either way.
#include <isa-l/crc.h>
#include <isa-l/igzip_lib.h>
#include <zlib.h>

#include <algorithm>
#include <array>
#include <condition_variable>
#include <cstring>
#include <ctime>
#include <mutex>
#include <new>
#include <optional>
#include <system_error>
#include <thread>
#include <vector>

#include "codecs/deflate_internal.h"
#include "codecs/isal_internal.h"

namespace sedpack::codecs_internal {
namespace {

// XFL of the gzip header, as CPython's gzip.compress and zlib set it.
unsigned char GzipXfl(int level) { return level == 9 ? 2 : level == 1 ? 4 : 0; }

// The 10-byte gzip header CPython's gzip.compress writes: no name, extra or
// comment, mtime = now, OS = 255 (unknown).
void WritePythonGzipHeader(int level, std::byte* dst) {
  const auto mtime = static_cast<std::uint32_t>(static_cast<std::uint64_t>(std::time(nullptr)));
  const unsigned char h[10] = {0x1f, 0x8b, 8, 0,
                               static_cast<unsigned char>(mtime), static_cast<unsigned char>(mtime >> 8),
                               static_cast<unsigned char>(mtime >> 16), static_cast<unsigned char>(mtime >> 24),
                               GzipXfl(level), 0xff};
  std::memcpy(dst, h, sizeof(h));
}

// ISA-L counts bytes in uint32_t; larger buffers go in slices.
constexpr std::size_t kMaxIsalChunk = std::size_t{1} << 30;

// The level buffer holds the tokens of one DEFLATE block. For levels 1 and 2
// it is 8x ISA-L's default (room for 512 Ki tokens, about 2 MiB): on a 41 MB
// TinyAES shard level 1 then compresses in 86 ms instead of 140 ms (median of
// 15 on the 2-core VM) for 0.34% more bytes. Level 3 gains nothing from it.
std::size_t IsalLevelBufSize(int level) {
  constexpr std::size_t kTokens = 512 * IGZIP_K;
  switch (level) {
    case 1:
      return ISAL_DEF_LVL1_REQ + ISAL_DEF_LVL1_TOKEN_SIZE * kTokens;
    case 2:
      return ISAL_DEF_LVL2_REQ + ISAL_DEF_LVL2_TOKEN_SIZE * kTokens;
    default:
      return ISAL_DEF_LVL3_DEFAULT;
  }
}

// A member is compressed in independent segments of this many input bytes,
// each primed with the 32 KiB of input before it (so the ratio is that of one
// stream to within a few bytes per segment) and byte-aligned by a sync flush,
// then concatenated. Segments are what lets several threads compress one
// shard; they are cut the same way whatever the number of threads, so the
// bytes never depend on it. With decode points (block_bytes > 0) a segment is
// one block and is not primed: its start is then a full-flush point, where
// inflate can begin without the bytes before it.
constexpr std::size_t kIsalSegment = std::size_t{4} << 20;
constexpr std::size_t kIsalHistory = 32u << 10;

// How a member is cut.
struct SegmentPlan {
  explicit SegmentPlan(std::uint64_t block_bytes)
      : length(block_bytes > 0 ? static_cast<std::size_t>(std::min<std::uint64_t>(block_bytes, kMaxIsalChunk))
                               : kIsalSegment),
        primed(block_bytes == 0) {}
  std::size_t length;
  bool primed;
  std::size_t Count(std::size_t n) const { return n == 0 ? 1 : (n + length - 1) / length; }
  // Input bytes of segment `index` of an `n`-byte input.
  std::size_t Length(std::size_t n, std::size_t index) const { return std::min(n - index * length, length); }
};

// Worst case of one segment: ISA-L falls back to stored blocks (5 bytes per
// 64 KiB at most) when a block would expand, plus the sync flush.
std::size_t IsalSegmentBound(std::size_t n) { return n + (n >> 10) + 64; }

}  // namespace

// Worst case of a whole member: header, every segment, trailer.
std::size_t IsalBound(std::size_t n, std::uint64_t block_bytes) {
  return n + (n >> 10) + 64 * SegmentPlan(block_bytes).Count(n) + (64u << 10);
}

namespace {

void StoreLe32(std::uint32_t v, std::byte* p) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<std::byte>((v >> (8 * i)) & 0xff);
}

// Append `bytes` to `out`, making room as needed.
Status PutBytes(std::span<const std::byte> bytes, DeflateOutput* out, std::string_view label) {
  while (!bytes.empty()) {
    if (out->avail() == 0) SEDPACK_RETURN_NOT_OK(out->MakeRoom(label));
    const std::size_t n = std::min(bytes.size(), out->avail());
    std::memcpy(out->next(), bytes.data(), n);
    out->Advance(n);
    bytes = bytes.subspan(n);
  }
  return Status::OK();
}

// ISA-L's deflate state and its level buffer (pooled: it is large enough that
// a fresh one would be faulted in for every shard), reused across segments.
struct IsalDeflater {
  explicit IsalDeflater(int level)
      : zs(std::make_unique<isal_zstream>()),
        level_buf(PooledBlock::Allocate(IsalLevelBufSize(level))),
        level(level) {}
  std::unique_ptr<isal_zstream> zs;
  PooledBlock level_buf;
  int level;
};

// Segment `index` of `input` as raw DEFLATE blocks into `out`: the last one
// ends the stream (final block), the others end byte-aligned (sync flush).
// Its CRC-32 goes to `*crc`.
Status IsalCompressSegment(IsalDeflater* d, const SegmentPlan& plan, std::span<const std::byte> input,
                           std::size_t index, DeflateOutput* out, std::uint32_t* crc, std::string_view label) {
  isal_zstream* zs = d->zs.get();
  isal_deflate_init(zs);
  zs->level = static_cast<std::uint32_t>(d->level);
  zs->level_buf = reinterpret_cast<std::uint8_t*>(d->level_buf.data());
  zs->level_buf_size = static_cast<std::uint32_t>(IsalLevelBufSize(d->level));
  zs->gzip_flag = IGZIP_DEFLATE;
  const std::size_t begin = index * plan.length;
  const std::size_t end = begin + plan.Length(input.size(), index);
  const bool last = end == input.size();
  if (begin > 0 && plan.primed) {
    const std::size_t dict = std::min(begin, kIsalHistory);
    auto* p = const_cast<std::uint8_t*>(reinterpret_cast<const std::uint8_t*>(input.data() + begin - dict));
    if (isal_deflate_set_dict(zs, p, static_cast<std::uint32_t>(dict)) != COMP_OK) {
      return Status::Internal(label, " compression: cannot set the ISA-L dictionary");
    }
  }
  zs->flush = last ? NO_FLUSH : SYNC_FLUSH;
  zs->end_of_stream = last ? 1 : 0;
  const auto* in = reinterpret_cast<const std::uint8_t*>(input.data() + begin);
  zs->next_in = const_cast<std::uint8_t*>(in);
  zs->avail_in = static_cast<std::uint32_t>(end - begin);  // At most kMaxIsalChunk.
  for (;;) {
    if (out->avail() == 0) SEDPACK_RETURN_NOT_OK(out->MakeRoom(label));
    const auto out_chunk = static_cast<std::uint32_t>(std::min(out->avail(), kMaxIsalChunk));
    zs->next_out = reinterpret_cast<std::uint8_t*>(out->next());
    zs->avail_out = out_chunk;
    const std::uint32_t in_before = zs->avail_in;
    const int ret = isal_deflate(zs);
    AfterIsalCall();
    if (ret != COMP_OK) return Status::Internal(label, " compression failed (ISA-L error ", ret, ")");
    const std::size_t produced = out_chunk - zs->avail_out;
    out->Advance(produced);
    // Done: the stream ended, or (sync flush) all input was taken and the
    // output did not fill, so the flush is complete.
    if (last ? zs->internal_state.state == ZSTATE_END : (zs->avail_in == 0 && zs->avail_out > 0)) break;
    if (produced == 0 && zs->avail_in == in_before) {
      return Status::Internal(label, " compression made no progress");
    }
  }
  *crc = crc32_gzip_refl(0, const_cast<std::uint8_t*>(in), end - begin);
  AfterIsalCall();
  return Status::OK();
}

// The gzip trailer: CRC-32 and the input size mod 2^32.
std::array<std::byte, 8> GzipTrailer(std::uint32_t crc, std::size_t size) {
  std::array<std::byte, 8> t;
  StoreLe32(crc, t.data());
  StoreLe32(static_cast<std::uint32_t>(size & 0xffffffffu), t.data() + 4);
  return t;
}

// CRC-32 of a member so far, extended by segment `index` (whose own CRC-32 is `seg_crc`).
std::uint32_t CombineSegmentCrc(const SegmentPlan& plan, std::uint32_t crc, std::uint32_t seg_crc, std::size_t n,
                                std::size_t index) {
  return static_cast<std::uint32_t>(crc32_combine(crc, seg_crc, static_cast<z_off_t>(plan.Length(n, index))));
}

// Decode points: the first after the header, then every segment start.
void StartPoints(const SegmentPlan& plan, std::size_t n, std::vector<DecodePoint>* points) {
  if (points == nullptr) return;
  points->clear();
  if (!plan.primed && n > 0) points->push_back({kPythonGzipHeaderBytes, 0});
}
void AddSegmentPoint(const SegmentPlan& plan, std::size_t n, std::size_t index, std::uint64_t stored_end,
                     std::vector<DecodePoint>* points) {
  if (points == nullptr || plan.primed || (index + 1) * plan.length >= n) return;
  points->push_back({stored_end, (index + 1) * plan.length});
}

}  // namespace

// One gzip member (CPython's header, DEFLATE at `level` 1..3, CRC-32/ISIZE
// trailer) into `out`, which holds IsalBound(input.size()) bytes. ISA-L's
// output depends on the room it is given, so every segment gets at least
// IsalSegmentBound of it, here as in the streamed path: the bytes are the same.
Status IsalCompressMember(int level, std::uint64_t block_bytes, std::span<const std::byte> input,
                          DeflateOutput* out, std::string_view label, std::vector<DecodePoint>* points) {
  const SegmentPlan plan(block_bytes);
  StartPoints(plan, input.size(), points);
  std::byte header[kPythonGzipHeaderBytes];
  WritePythonGzipHeader(level, header);
  SEDPACK_RETURN_NOT_OK(PutBytes(header, out, label));
  IsalDeflater d(level);
  std::uint32_t crc = 0;
  const std::size_t segments = plan.Count(input.size());
  for (std::size_t i = 0; i < segments; ++i) {
    std::uint32_t seg_crc = 0;
    SEDPACK_RETURN_NOT_OK(IsalCompressSegment(&d, plan, input, i, out, &seg_crc, label));
    crc = CombineSegmentCrc(plan, crc, seg_crc, input.size(), i);
    AddSegmentPoint(plan, input.size(), i, out->total(), points);
  }
  SEDPACK_RETURN_NOT_OK(PutBytes(GzipTrailer(crc, input.size()), out, label));
  return out->Finish();
}

// The same member handed to `sink` one segment at a time. With threads > 1,
// that many threads compress segments while this one hands them to the sink
// in order (doing its hashing and writing meanwhile); at most 2 * threads
// segment buffers exist at a time.
Status IsalCompressMemberStreamed(int level, std::uint64_t block_bytes, std::span<const std::byte> input,
                                  int threads, const ByteSink& sink, std::string_view label,
                                  std::vector<DecodePoint>* points) {
  const SegmentPlan plan(block_bytes);
  StartPoints(plan, input.size(), points);
  const std::size_t segments = plan.Count(input.size());
  const std::size_t bound = IsalSegmentBound(std::min(input.size(), plan.length));
  const std::size_t workers =
      threads > 1 ? std::min<std::size_t>(static_cast<std::size_t>(threads), segments) : 0;
  const std::size_t window = std::max<std::size_t>(1, 2 * workers);
  struct Slot {
    PooledBlock buf;
    std::size_t size = 0;
    std::uint32_t crc = 0;
    Status status;
    bool ready = false;
  };
  std::vector<Slot> slots(window);
  std::mutex mu;
  std::condition_variable cv;
  std::size_t next = 0;     // The next segment to claim.
  std::size_t emitted = 0;  // Segments handed to the sink.
  bool stop = false;
  // Compress segment `i` into its slot.
  auto compress = [&](std::optional<IsalDeflater>& d, std::size_t i) {
    Slot& slot = slots[i % window];
    Status st;
    std::uint32_t crc = 0;
    std::size_t size = 0;
    try {
      if (!d) d.emplace(level);
      if (slot.buf.capacity() < bound) slot.buf = PooledBlock::Allocate(bound);
      DeflateOutput out(slot.buf.data(), slot.buf.capacity());
      st = IsalCompressSegment(&*d, plan, input, i, &out, &crc, label);
      size = out.total();
    } catch (const std::bad_alloc&) {
      st = Status::ResourceExhausted(label, " compression: out of memory");
    }
    std::lock_guard<std::mutex> lock(mu);
    slot.size = size;
    slot.crc = crc;
    slot.status = std::move(st);
    slot.ready = true;
  };
  auto work = [&] {
    std::optional<IsalDeflater> d;
    for (;;) {
      std::size_t i = 0;
      {
        std::unique_lock<std::mutex> lock(mu);
        cv.wait(lock, [&] { return stop || next >= segments || next < emitted + window; });
        if (stop || next >= segments) return;
        i = next++;
      }
      compress(d, i);
      cv.notify_all();
    }
  };
  std::vector<std::thread> pool;
  pool.reserve(workers);
  for (std::size_t t = 0; t < workers; ++t) {
    try {
      pool.emplace_back(work);
    } catch (const std::system_error&) {
      break;  // No more threads to be had: those that started do the work.
    }
  }
  std::optional<IsalDeflater> own;  // This thread's, when no thread started.
  std::byte header[kPythonGzipHeaderBytes];
  WritePythonGzipHeader(level, header);
  Status result = sink(header);
  std::uint64_t stored = kPythonGzipHeaderBytes;
  std::uint32_t crc = 0;
  for (std::size_t i = 0; i < segments && result.ok(); ++i) {
    Slot& slot = slots[i % window];
    if (pool.empty()) {
      next = i + 1;
      compress(own, i);
    }
    {
      std::unique_lock<std::mutex> lock(mu);
      cv.wait(lock, [&] { return slot.ready; });
    }
    result = slot.status;
    if (result.ok()) result = sink(std::span<const std::byte>(slot.buf.data(), slot.size));
    crc = CombineSegmentCrc(plan, crc, slot.crc, input.size(), i);
    stored += slot.size;
    AddSegmentPoint(plan, input.size(), i, stored, points);
    {
      std::lock_guard<std::mutex> lock(mu);
      slot.ready = false;
      ++emitted;
    }
    cv.notify_all();
  }
  {
    std::lock_guard<std::mutex> lock(mu);
    stop = true;
  }
  cv.notify_all();
  for (auto& t : pool) t.join();
  if (!result.ok()) return result;
  return sink(GzipTrailer(crc, input.size()));
}
namespace {

std::string_view IsalInflateError(int ret) {
  switch (ret) {
    case ISAL_INCORRECT_CHECKSUM:
      return "CRC-32 or length check failed";
    case ISAL_INVALID_WRAPPER:
      return "not a gzip member";
    case ISAL_UNSUPPORTED_METHOD:
      return "unsupported compression method";
    case ISAL_INVALID_LOOKBACK:
      return "invalid distance";
    case ISAL_INVALID_SYMBOL:
      return "invalid symbol";
    case ISAL_NEED_DICT:
      return "a preset dictionary is required";
    default:
      return "invalid block";
  }
}

// Inflate one gzip member from the front of `*in` into `w` (header parsed and
// CRC-32/ISIZE checked by ISA-L); `*in` is advanced past the member.
template <class Vec>
Status IsalInflateMember(inflate_state* st, std::span<const std::byte>* in, BasicCappedOutput<Vec>* w,
                         Compression c, std::string_view label) {
  isal_inflate_reset(st);
  st->crc_flag = ISAL_GZIP;
  for (;;) {
    if (w->avail() == 0 && !w->Grow()) return ExceededStatus(c, w->max_output());
    const auto in_chunk = static_cast<std::uint32_t>(std::min(in->size(), kMaxIsalChunk));
    const auto out_chunk = static_cast<std::uint32_t>(std::min(w->avail(), kMaxIsalChunk));
    st->next_in = const_cast<std::uint8_t*>(reinterpret_cast<const std::uint8_t*>(in->data()));
    st->avail_in = in_chunk;
    st->next_out = reinterpret_cast<std::uint8_t*>(w->next());
    st->avail_out = out_chunk;
    const int ret = isal_inflate(st);
    AfterIsalCall();
    *in = in->subspan(in_chunk - st->avail_in);
    w->Advance(out_chunk - st->avail_out);
    if (w->Exceeded()) return ExceededStatus(c, w->max_output());
    if (ret < 0 || ret == ISAL_NEED_DICT) {
      return Status::Corruption(label, " decompression: corrupt data (", IsalInflateError(ret), ")");
    }
    if (st->block_state == ISAL_BLOCK_FINISH) return Status::OK();
    if (in->empty() && st->avail_out != 0) {
      return Status::Corruption(label,
                                " decompression: truncated input (end of stream not reached)");
    }
  }
}

}  // namespace

struct IsalInflater::State {
  inflate_state st;
};

IsalInflater::IsalInflater() : state_(std::make_unique<State>()) {}
IsalInflater::~IsalInflater() = default;

Status IsalInflater::InflateMember(std::span<const std::byte>* in, CappedOutput* w, Compression c,
                                   std::string_view label) {
  return IsalInflateMember(&state_->st, in, w, c, label);
}

Status IsalInflater::InflateMember(std::span<const std::byte>* in, BasicCappedOutput<ByteBuffer>* w,
                                   Compression c, std::string_view label) {
  return IsalInflateMember(&state_->st, in, w, c, label);
}

}  // namespace sedpack::codecs_internal
