#include "tessera/codec/blosc1_zstd_encoder.h"

#include "tessera/codec/byte_shuffle.h"

#include <blosc.h>
#include <zstd.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <string>

namespace tessera {
namespace {

// c-blosc 1's constants that are not in blosc.h (blosc.c: MIN_BUFFERSIZE, L1).
constexpr int32_t kMinBufferBytes = 128;  // smaller buffers are stored memcpy'ed
constexpr int32_t kL1Bytes = 32 * 1024;   // the block size c-blosc scales by clevel
constexpr size_t kHeaderBytes = BLOSC_MAX_OVERHEAD;
constexpr uint8_t kNotSplitFlag = 0x10;
constexpr int kFlagsCompressorShift = 5;

// A thread keeps its zstd context and shuffle scratch between buffers only while they are this small
// (clevel <= 5 on blocks of <= 256 KiB stays below it); the high levels' multi-MiB workspaces are
// freed after each buffer instead of pinning memory in every compression thread.
constexpr size_t kKeptWorkspaceBytes = 4 << 20;

struct CCtxDeleter {
  void operator()(ZSTD_CCtx* ctx) const { ZSTD_freeCCtx(ctx); }
};

struct ThreadBlockState {
  std::unique_ptr<ZSTD_CCtx, CCtxDeleter> cctx;
  Bytes shuffled;  // one byte-shuffled block
};

ThreadBlockState& ThisThreadsBlockState() {
  thread_local ThreadBlockState state;
  return state;
}

void StoreLe32(uint8_t* p, int32_t value) {
  const uint32_t v = static_cast<uint32_t>(value);
  p[0] = static_cast<uint8_t>(v);
  p[1] = static_cast<uint8_t>(v >> 8);
  p[2] = static_cast<uint8_t>(v >> 16);
  p[3] = static_cast<uint8_t>(v >> 24);
}

// c-blosc's mapping of its clevel 1..9 onto zstd's levels (zstd_wrap_compress).
int ZstdLevel(int clevel) {
  int level = clevel < 9 ? clevel * 2 - 1 : ZSTD_maxCLevel();
  if (level == 8) level = ZSTD_maxCLevel() - 2;
  return level;
}

// c-blosc's block size for zstd (compute_blocksize): zstd is one of its "high compression ratio"
// codecs, so the automatic size is 2 x L1 scaled by clevel; a forced size is clamped to
// [MIN_BUFFERSIZE, BLOSC_MAX_BLOCKSIZE]; never more than the buffer; a multiple of typesize when
// larger than it. No enlargement for splitting: zstd blocks are not split.
int32_t BlockBytes(int clevel, int32_t typesize, int32_t nbytes, int32_t forced_blocksize) {
  if (nbytes < typesize) return 1;
  int32_t blocksize = nbytes;
  if (forced_blocksize != 0) {
    blocksize = std::clamp<int32_t>(forced_blocksize, kMinBufferBytes, BLOSC_MAX_BLOCKSIZE);
  } else if (nbytes >= kL1Bytes) {
    blocksize = 2 * kL1Bytes;
    switch (clevel) {
      case 0: blocksize /= 4; break;
      case 1: blocksize /= 2; break;
      case 2: break;
      case 3: blocksize *= 2; break;
      case 4:
      case 5: blocksize *= 4; break;
      case 6:
      case 7:
      case 8: blocksize *= 8; break;
      default: blocksize *= 16; break;  // 9: 8x, and 2x more for high-ratio codecs
    }
  }
  if (blocksize > nbytes) blocksize = nbytes;
  if (blocksize > typesize) blocksize = blocksize / typesize * typesize;
  return blocksize;
}

struct BufferPlan {
  int32_t typesize;
  int32_t nbytes;
  int32_t blocksize;
  int32_t nblocks;
  int32_t leftover_bytes;  // bytes of the last, shorter block; 0 when all blocks are whole
};

// Asks for block `j`'s input while zstd works on the block before it: a stream's tiles come from an
// epoch buffer far larger than the caches, and the shuffle's first pass over a block otherwise
// waits on memory (about 4% of the encoder's time at clevel 1).
void PrefetchBlock(const uint8_t* src, const BufferPlan& plan, int32_t j) {
  constexpr int32_t kCacheLineBytes = 64;
  const bool last_partial = j == plan.nblocks - 1 && plan.leftover_bytes > 0;
  const int32_t block_bytes = last_partial ? plan.leftover_bytes : plan.blocksize;
  const uint8_t* block = src + static_cast<size_t>(j) * plan.blocksize;
  for (int32_t offset = 0; offset < block_bytes; offset += kCacheLineBytes) __builtin_prefetch(block + offset);
}

// The blocks after the header and bstarts, as c-blosc's serial compressor writes them. Returns the
// buffer's total length, or 0 when a block does not fit in `capacity` (c-blosc then stores the
// buffer memcpy'ed).
Result<int32_t> CompressBlocks(const BufferPlan& plan, int clevel, bool byte_shuffle, const uint8_t* src,
                               uint8_t* dest, int32_t capacity) {
  ThreadBlockState& state = ThisThreadsBlockState();
  if (!state.cctx) {
    state.cctx.reset(ZSTD_createCCtx());
    if (!state.cctx) return OutOfResources("blosc zstd encoder: ZSTD_createCCtx failed");
  }
  const bool shuffles = byte_shuffle && plan.typesize > 1;
  if (shuffles && state.shuffled.size() < static_cast<size_t>(plan.blocksize)) state.shuffled.resize(plan.blocksize);
  const int level = ZstdLevel(clevel);

  // 64 bits: near BLOSC_MAX_BUFFERSIZE a buffer's end is close to INT32_MAX, and `written` plus a
  // block (or plus the next size field) passes it, and an int32 sum would wrap past the fit checks
  // (c-blosc's own int32 checks do). Every value stored is <= capacity.
  int64_t written = static_cast<int64_t>(kHeaderBytes) + 4 * int64_t{plan.nblocks};
  for (int32_t j = 0; j < plan.nblocks; ++j) {
    StoreLe32(dest + kHeaderBytes + 4 * static_cast<size_t>(j), static_cast<int32_t>(written));  // bstarts[j]
    const bool last_partial = j == plan.nblocks - 1 && plan.leftover_bytes > 0;
    const int32_t block_bytes = last_partial ? plan.leftover_bytes : plan.blocksize;
    const uint8_t* block = src + static_cast<size_t>(j) * plan.blocksize;
    if (shuffles) {
      ByteShuffle(static_cast<size_t>(plan.typesize), static_cast<size_t>(block_bytes), block, state.shuffled.data());
      block = state.shuffled.data();
    }
    if (j + 1 < plan.nblocks) PrefetchBlock(src, plan, j + 1);
    written += 4;  // the block's compressed-size field
    // zstd may use at most the block's own size, and never more than the buffer has left.
    const int64_t left = capacity - written;
    if (left <= 0) return 0;
    const int32_t max_out = static_cast<int32_t>(std::min<int64_t>(block_bytes, left));
    const size_t zstd_bytes =
        ZSTD_compressCCtx(state.cctx.get(), dest + written, static_cast<size_t>(max_out), block, block_bytes, level);
    int32_t block_out = ZSTD_isError(zstd_bytes) ? 0 : static_cast<int32_t>(zstd_bytes);
    if (block_out == 0 || block_out == block_bytes) {  // did not shrink: stored raw (shuffled)
      if (written + block_bytes > capacity) return 0;
      std::memcpy(dest + written, block, block_bytes);
      block_out = block_bytes;
    }
    StoreLe32(dest + written - 4, block_out);
    written += block_out;
  }
  return static_cast<int32_t>(written);
}

// Frees what a thread holds past a high-level buffer, so idle compression threads stay small.
void TrimThreadBlockState() {
  ThreadBlockState& state = ThisThreadsBlockState();
  if (state.cctx && ZSTD_sizeof_CCtx(state.cctx.get()) > kKeptWorkspaceBytes) state.cctx.reset();
  if (state.shuffled.size() > kKeptWorkspaceBytes) Bytes().swap(state.shuffled);
}

}  // namespace

bool Blosc1ZstdEncoderHandles(const BloscOptions& options) {
  return options.cname == "zstd" && options.shuffle != BloscShuffle::kBitShuffle;
}

Status EncodeBlosc1Zstd(const BloscOptions& options, ByteView in, Bytes* out) {
  // The preconditions, checked: every size below is an int32, and a typesize of 0 would divide by
  // zero; c-blosc refuses the same values.
  if (in.size() > static_cast<size_t>(BLOSC_MAX_BUFFERSIZE) || options.clevel < 0 || options.clevel > 9 ||
      options.typesize < 1 || options.blocksize < 0) {
    return InvalidArgument("blosc zstd encoder: " + std::to_string(in.size()) + " bytes (at most " +
                           std::to_string(BLOSC_MAX_BUFFERSIZE) + "), clevel " + std::to_string(options.clevel) +
                           " (0..9), typesize " + std::to_string(options.typesize) + " (>= 1), blocksize " +
                           std::to_string(options.blocksize) + " (>= 0)");
  }
  BufferPlan plan;
  plan.typesize = options.typesize > BLOSC_MAX_TYPESIZE ? 1 : options.typesize;
  plan.nbytes = static_cast<int32_t>(in.size());
  plan.blocksize = BlockBytes(options.clevel, plan.typesize, plan.nbytes, options.blocksize);
  plan.nblocks = plan.nbytes / plan.blocksize;
  plan.leftover_bytes = plan.nbytes % plan.blocksize;
  if (plan.leftover_bytes > 0) ++plan.nblocks;

  const int32_t capacity = plan.nbytes + static_cast<int32_t>(kHeaderBytes);
  out->resize(static_cast<size_t>(capacity));
  uint8_t* dest = out->data();
  const bool byte_shuffle = options.shuffle == BloscShuffle::kShuffle;
  uint8_t flags = kNotSplitFlag | static_cast<uint8_t>(BLOSC_ZSTD_FORMAT << kFlagsCompressorShift);
  if (byte_shuffle) flags |= BLOSC_DOSHUFFLE;
  dest[0] = BLOSC_VERSION_FORMAT;
  dest[1] = BLOSC_ZSTD_VERSION_FORMAT;
  dest[3] = static_cast<uint8_t>(plan.typesize);
  StoreLe32(dest + 4, plan.nbytes);
  StoreLe32(dest + 8, plan.blocksize);

  int32_t written = 0;
  if (options.clevel > 0 && plan.nbytes >= kMinBufferBytes) {
    TESSERA_ASSIGN_OR_RETURN(written, CompressBlocks(plan, options.clevel, byte_shuffle, in.data(), dest, capacity));
    TrimThreadBlockState();
  }
  if (written == 0) {  // too small, clevel 0, or a block would not fit: the input copied whole
    flags |= BLOSC_MEMCPYED;
    if (!in.empty()) std::memcpy(dest + kHeaderBytes, in.data(), in.size());
    written = capacity;
  }
  dest[2] = flags;
  StoreLe32(dest + 12, written);
  out->resize(static_cast<size_t>(written));
  return Status::Ok();
}

}  // namespace tessera
