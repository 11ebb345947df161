// Decoders of the HDF5 filters tessera reads but does not write: n-bit (5), scale-offset (6), szip (4), and the
// registered third-party filters h5py and hdf5plugin users meet: lzf (32000), blosc (32001), lz4
// (32004), bitshuffle (32008, with its LZ4 and zstd modes) and zstd (32015).
//
// Each undoes one filter over one chunk's bytes. `expected_bytes` is what undoing the filter must
// give (DecodeChunk's stage size): exactly, or at most when `exact` is false (a compressor applied
// after scale-offset, whose output size only its own stream states); a stream that states another
// size, or decodes to another, is corrupt. `out` holds what the filter decoded. Errors start with `what`, which names the chunk (file and byte range): kCorruptData for
// bytes that do not decode, kUnsupported for filter parameters this decoder does not implement.
// Every decoder is pure (bytes in memory) and bounds-checks all it reads: garbage never crashes.
#pragma once

#include <cstddef>
#include <string>

#include "tessera/core/bytes.h"
#include "tessera/core/status.h"
#include "tessera/hdf5/filters.h"

namespace tessera::hdf5 {

inline constexpr uint16_t kFilterLzf = 32000;
inline constexpr uint16_t kFilterBlosc = 32001;
inline constexpr uint16_t kFilterLz4 = 32004;
inline constexpr uint16_t kFilterBitshuffle = 32008;
inline constexpr uint16_t kFilterZstd = 32015;

// The bytes scale-offset's stream adds before its packed elements.
inline constexpr size_t kScaleOffsetHeaderBytes = 21;

// H5Z_FILTER_SCALEOFFSET: integers stored as (value - minimum) in the fewest bits, floats first
// scaled by 10^D and rounded (D-scaling); client data as H5Z_set_local_scaleoffset writes it.
Status DecodeScaleOffset(const Filter& filter, ByteView in, size_t expected_bytes, bool exact, const std::string& what,
                         Bytes* out);

// H5Z_FILTER_NBIT: each element's significant bits (atomic types, and the leaves of array and
// compound types) packed with no gaps; client data as H5Z_set_local_nbit writes it.
Status DecodeNbit(const Filter& filter, ByteView in, size_t expected_bytes, bool exact, const std::string& what, Bytes* out);

// H5Z_FILTER_SZIP through libaec: a 4-byte little-endian decoded size, then the szip stream.
Status DecodeSzip(const Filter& filter, ByteView in, size_t expected_bytes, bool exact, const std::string& what, Bytes* out);

// h5py's LZF filter through liblzf: one raw LZF stream for the whole chunk.
Status DecodeLzf(ByteView in, size_t expected_bytes, bool exact, const std::string& what, Bytes* out);

// The blosc filter (c-blosc 1 framing, what hdf5plugin.Blosc writes): one blosc buffer.
Status DecodeBloscFilter(ByteView in, size_t expected_bytes, bool exact, const std::string& what, Bytes* out);

// The zstd filter: one zstd frame (or several, concatenated) for the whole chunk.
Status DecodeZstdFilter(ByteView in, size_t expected_bytes, bool exact, const std::string& what, Bytes* out);

// The LZ4 filter's framing: 8-byte big-endian decoded size, 4-byte big-endian block size, then per
// block a 4-byte big-endian stored size and the LZ4 block (stored raw when that size equals the
// block's decoded size).
Status DecodeLz4Filter(ByteView in, size_t expected_bytes, bool exact, const std::string& what, Bytes* out);

// The bitshuffle filter: bits transposed within blocks of elements, optionally each block LZ4- or
// zstd-compressed (client data: version, version, element size, block size, compression, level).
Status DecodeBitshuffle(const Filter& filter, size_t element_size, ByteView in, size_t expected_bytes,
                        bool exact, const std::string& what, Bytes* out);

// Whether a decoded size fits the stage: equal to `expected_bytes`, or at most that when not exact.
inline bool StageSizeFits(uint64_t decoded_bytes, size_t expected_bytes, bool exact) {
  return exact ? decoded_bytes == expected_bytes : decoded_bytes <= expected_bytes;
}

// Undoes the bit transpose of one bitshuffle block of `count` elements (a multiple of 8) of
// `element_size` bytes: the input holds, for bit k of byte j of the element (row 8j + k), one bit
// per element, element i at bit i % 8 of the row's byte i / 8.
void BitUnshuffleBlock(const uint8_t* in, size_t count, size_t element_size, uint8_t* out);
void BitShuffleBlock(const uint8_t* in, size_t count, size_t element_size, uint8_t* out);  // for tests

}  // namespace tessera::hdf5
