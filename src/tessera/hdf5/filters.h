// HDF5 filter pipelines (the Filter Pipeline message, type 0x000B): the filters tessera writes and
// reads — shuffle (2), deflate (1) and fletcher32 (3) — applied to one chunk's bytes; on read also
// those of filter_decoders.h (scale-offset, szip, lzf, blosc, lz4, bitshuffle, zstd).
//
// On write the filters run in pipeline order; on read in reverse, skipping those whose bit is
// set in the chunk's filter mask (an optional filter the library chose not to apply).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tessera/core/bytes.h"
#include "tessera/core/status.h"

namespace tessera::hdf5 {

inline constexpr uint16_t kFilterDeflate = 1;
inline constexpr uint16_t kFilterShuffle = 2;
inline constexpr uint16_t kFilterFletcher32 = 3;
inline constexpr uint16_t kFilterSzip = 4;
inline constexpr uint16_t kFilterNbit = 5;
inline constexpr uint16_t kFilterScaleOffset = 6;

// Filter flags (the message's "Flags" field): bit 0 = optional (may be skipped per chunk).
inline constexpr uint16_t kFilterOptional = 0x0001;

struct Filter {
  uint16_t id = 0;
  uint16_t flags = 0;
  std::string name;                  // may be empty
  std::vector<uint32_t> client_data;  // deflate: {level}; shuffle: {element size}
};
using FilterPipeline = std::vector<Filter>;

// The filters h5py (and the HDF5 library) writes for shuffle / gzip level / fletcher32.
Filter ShuffleFilter(uint32_t element_size);
Filter DeflateFilter(uint32_t level);
Filter Fletcher32Filter();

// The filter's name for messages ("deflate", "shuffle", "fletcher32", or "filter N").
std::string FilterName(uint16_t id);

// Runs `pipeline` over one chunk's raw bytes. `element_size` is the dataset's element size
// (shuffle's byte groups). kUnsupported for filters tessera does not implement.
Status EncodeChunk(const FilterPipeline& pipeline, size_t element_size, ByteView raw, Bytes* out);

// Undoes `pipeline` over one stored chunk: filters run last to first; bit i of `filter_mask` set
// means filter i was not applied to this chunk. The result must be exactly `expected_size` bytes.
// Errors (kCorruptData: deflate garbage, fletcher32 mismatch, wrong size; kUnsupported: unknown
// filter) start with `what`, which names the chunk (file and byte range).
Status DecodeChunk(const FilterPipeline& pipeline, uint32_t filter_mask, size_t element_size, ByteView stored,
                   size_t expected_size, const std::string& what, Bytes* out);

// HDF5's Fletcher-32 (H5_checksum_fletcher32): 16-bit words taken big-endian, an odd last byte
// as the high byte of a word.
uint32_t Fletcher32(ByteView data);

// Byte shuffle: out holds byte 0 of every element, then byte 1, ...; trailing bytes that do not
// form a whole element are copied unchanged (as HDF5 does).
void Shuffle(const uint8_t* in, size_t nbytes, size_t element_size, uint8_t* out);
void Unshuffle(const uint8_t* in, size_t nbytes, size_t element_size, uint8_t* out);

}  // namespace tessera::hdf5
