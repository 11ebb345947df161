// H5Z_FILTER_SZIP (4), read through libaec's szip-compatible interface (libsz). The stored chunk:
// a 4-byte little-endian decoded size, then the szip stream. Client data (as H5Z_set_local_szip
// writes it): options mask, pixels per block, bits per pixel, pixels per scanline.
// szlib.h declares C functions without extern "C".
extern "C" {
#include <szlib.h>
}

#include "tessera/hdf5/filter_decoders.h"

namespace tessera::hdf5 {

Status DecodeSzip(const Filter& filter, ByteView in, size_t expected_bytes, bool exact, const std::string& what, Bytes* out) {
  const std::vector<uint32_t>& cd = filter.client_data;
  const std::string prefix = what + ": szip filter: ";
  if (cd.size() < 4)
    return CorruptData(prefix + "client data has " + std::to_string(cd.size()) +
                       " values, expected 4 (options mask, pixels per block, bits per pixel, pixels per scanline)");
  if (in.size() < 4)
    return CorruptData(prefix + std::to_string(in.size()) + " bytes cannot hold the 4-byte decoded size");
  const uint32_t stated = DecodeFixed32LE(in.data());
  if (!StageSizeFits(stated, expected_bytes, exact))
    return CorruptData(prefix + "states a decoded size of " + std::to_string(stated) + " bytes" + (exact ? ", the chunk holds " : ", the stage holds at most ") +
                       std::to_string(expected_bytes));
  expected_bytes = stated;
  // libaec sizes its buffers from these before it checks them: refuse what no szip writer makes
  // (pixels per block even, at most 32; at most 4096 blocks per scanline; at most 64 bits a pixel).
  const uint32_t pixels_per_block = cd[1], bits_per_pixel = cd[2], pixels_per_scanline = cd[3];
  if (pixels_per_block == 0 || pixels_per_block > 32 || pixels_per_block % 2 != 0 || bits_per_pixel == 0 ||
      bits_per_pixel > 64 || pixels_per_scanline == 0 || pixels_per_scanline > uint64_t{4096} * pixels_per_block)
    return CorruptData(prefix + "client data out of range: pixels per block " + std::to_string(pixels_per_block) +
                       " (expected even, 2..32), bits per pixel " + std::to_string(bits_per_pixel) +
                       " (1..64), pixels per scanline " + std::to_string(pixels_per_scanline) +
                       " (1..4096 blocks)");
  SZ_com_t params{};
  params.options_mask = static_cast<int>(cd[0]);
  params.pixels_per_block = static_cast<int>(cd[1]);
  params.bits_per_pixel = static_cast<int>(cd[2]);
  params.pixels_per_scanline = static_cast<int>(cd[3]);
  out->resize(expected_bytes);
  size_t produced = expected_bytes;
  const int rc = SZ_BufftoBuffDecompress(out->data(), &produced, in.data() + 4, in.size() - 4, &params);
  if (rc == SZ_PARAM_ERROR)
    return CorruptData(prefix + "libaec refuses the parameters (options mask " + std::to_string(cd[0]) +
                       ", pixels per block " + std::to_string(cd[1]) + ", bits per pixel " + std::to_string(cd[2]) +
                       ", pixels per scanline " + std::to_string(cd[3]) + ")");
  if (rc == SZ_MEM_ERROR) return OutOfResources(prefix + "libaec could not allocate its state");
  if (rc != SZ_OK) return CorruptData(prefix + "the szip stream is corrupt (libaec error " + std::to_string(rc) + ")");
  if (produced != expected_bytes)
    return CorruptData(prefix + "decodes to " + std::to_string(produced) + " bytes" + (exact ? ", the chunk holds " : ", the stage holds at most ") +
                       std::to_string(expected_bytes));
  expected_bytes = stated;
  return Status::Ok();
}

}  // namespace tessera::hdf5
