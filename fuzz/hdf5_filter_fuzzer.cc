// The HDF5 filters tessera reads but does not write (filter_decoders.h), through DecodeChunk, over
// garbage and over real chunks (fuzz/make_seeds.py: h5py and hdf5plugin's chunks with their client
// data). The input:
//
//   byte 0      the filter: low 3 bits pick scaleoffset, szip, lzf, blosc, lz4, bitshuffle, zstd,
//               or (7) scaleoffset under a second filter (bits 4..6 pick it: deflate, shuffle, lzf,
//               blosc, lz4, zstd), or n-bit alone when bit 3 is set too
//   byte 1      the dataset's element size
//   bytes 2..5  the chunk's decoded size, little-endian (at most 1 MiB here)
//   byte 6      n, the number of client data values (at most 20), then n little-endian u32
//   the rest    the stored chunk
//
// Invariants: a chunk that decodes has exactly the chunk's size; a failure is corrupt data,
// unsupported or out of resources, and its message starts with the chunk's name.
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_check.h"
#include "tessera/hdf5/filter_decoders.h"
#include "tessera/hdf5/filters.h"

using namespace tessera;
using namespace tessera::hdf5;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 7) return 0;
  const uint8_t selector = data[0];
  const size_t element_size = data[1] == 0 ? 1 : data[1];
  const size_t expected = DecodeFixed32LE(data + 2) % ((1u << 20) + 1);
  const size_t n = data[6] % 21;
  size_t pos = 7;
  if (size - pos < 4 * n) return 0;
  std::vector<uint32_t> client_data;
  for (size_t i = 0; i < n; ++i, pos += 4) client_data.push_back(DecodeFixed32LE(data + pos));
  const ByteView stored(data + pos, size - pos);

  static const uint16_t kSingle[] = {kFilterScaleOffset, kFilterSzip, kFilterLzf,       kFilterBlosc,
                                     kFilterLz4,         kFilterBitshuffle, kFilterZstd};
  static const uint16_t kUnder[] = {kFilterDeflate, kFilterShuffle, kFilterLzf, kFilterBlosc, kFilterLz4, kFilterZstd};
  FilterPipeline pipeline;
  const unsigned pick = selector & 7;
  if (pick < 7) {
    pipeline.push_back(Filter{kSingle[pick], 0, "", client_data});
  } else if (selector & 8) {
    pipeline.push_back(Filter{kFilterNbit, 0, "", client_data});
  } else {
    pipeline.push_back(Filter{kFilterScaleOffset, kFilterOptional, "", client_data});
    pipeline.push_back(Filter{kUnder[((selector >> 4) & 7) % 6], 0, "", {static_cast<uint32_t>(element_size)}});
  }
  const std::string what = "fuzz chunk at 0x10..0x20";
  Bytes out;
  const Status st = DecodeChunk(pipeline, 0, element_size, stored, expected, what, &out);
  if (st.ok()) {
    FUZZ_CHECK(out.size() == expected, "a decoded chunk has the chunk's size");
  } else {
    FUZZ_CHECK(st.kind() == ErrorKind::kCorruptData || st.kind() == ErrorKind::kUnsupported ||
                   st.kind() == ErrorKind::kOutOfResources,
               "failures are corrupt data, unsupported or out of resources");
    FUZZ_CHECK(st.message().rfind(what, 0) == 0, "a failure names the chunk first");
  }
  return 0;
}
