// tessera's own encoder of c-blosc 1 buffers whose blocks are compressed with zstd, producing the
// bytes `blosc_compress_ctx(clevel, shuffle, typesize, ..., "zstd", blocksize, 1)` produces.
//
// Why it exists: c-blosc 1.21 compresses every block with `ZSTD_compress`, which builds a fresh zstd
// context per block: it allocates the workspace and clears its hash tables each time. At the low
// levels acquisitions use (clevel 1: 32 KiB blocks, zstd level 1) that set-up is about a fifth of
// the zstd time. This encoder keeps one `ZSTD_CCtx` per thread and reuses it across blocks and
// buffers (`ZSTD_compressCCtx` output does not depend on what the context compressed before), so the
// stream writer's compression threads skip the set-up. Decoding stays with c-blosc.
//
// What it reproduces (c-blosc's README_CHUNK_FORMAT and its compressor, read, not copied):
//
//   byte 0      format version (BLOSC_VERSION_FORMAT)   byte 1   zstd format version
//   byte 2      flags: bit 0 byte shuffle, bit 1 memcpy'ed, bit 4 blocks not split, bits 5-7 zstd
//   byte 3      typesize (a typesize over 255 is written, and shuffled, as 1)
//   bytes 4-7   uncompressed bytes     8-11 block bytes     12-15 total buffer bytes (all LE)
//   then        one int32 start offset per block (bstarts), then each block as
//               [int32 compressed bytes][zstd frame, or the shuffled block raw when it did not shrink]
//   or, when a buffer is under 128 bytes, clevel is 0, or a block would not fit: the flag "memcpy'ed"
//               and the input copied whole after the 16-byte header.
//
// The block size follows c-blosc's choice for zstd (twice the L1 size scaled by clevel, or the
// forced blocksize clamped), and blocks are never split, which is c-blosc's default split mode for
// zstd (a process that calls blosc_set_splitmode changes c-blosc's output, not this encoder's).
// Bit shuffle is left to c-blosc (Blosc1ZstdEncoderHandles is false): tessera's codec falls back.
#pragma once

#include "tessera/codec/blosc_codec.h"
#include "tessera/core/status.h"

namespace tessera {

// True when EncodeBlosc1Zstd writes c-blosc's bytes for these options: cname "zstd" with no shuffle
// or byte shuffle.
bool Blosc1ZstdEncoderHandles(const BloscOptions& options);

// Encodes `in` as one blosc 1 buffer into `out` (resized to the buffer's length, at most
// in.size() + BLOSC_MAX_OVERHEAD). Preconditions: Blosc1ZstdEncoderHandles(options), options valid
// (clevel 0..9, typesize >= 1, blocksize >= 0) and in.size() <= BLOSC_MAX_BUFFERSIZE, else
// kInvalidArgument. Thread-safe: the zstd context and the shuffle scratch are the calling thread's
// own. kOutOfResources when zstd cannot allocate its context. On an error *out holds nothing usable.
Status EncodeBlosc1Zstd(const BloscOptions& options, ByteView in, Bytes* out);

}  // namespace tessera
