// The whole-chunk compressor filters of hdf5plugin: blosc (32001, one c-blosc 1 buffer; its client
// data — filter revision, blosc version, type size, chunk size, level, shuffle, compressor — only
// matter for writing, the buffer's own header says how to decode) and zstd (32015, zstd frames).
#include <blosc.h>
#include <zstd.h>
#include <zstd_errors.h>

#include "tessera/hdf5/filter_decoders.h"

namespace tessera::hdf5 {

Status DecodeBloscFilter(ByteView in, size_t expected_bytes, bool exact, const std::string& what, Bytes* out) {
  const std::string prefix = what + ": blosc filter: ";
  if (in.size() < BLOSC_MIN_HEADER_LENGTH)
    return CorruptData(prefix + std::to_string(in.size()) + " bytes cannot hold a blosc header");
  size_t stated = 0;
  if (blosc_cbuffer_validate(in.data(), in.size(), &stated) != 0)
    return CorruptData(prefix + "not a valid blosc buffer (its header disagrees with its " + std::to_string(in.size()) +
                       " bytes)");
  if (!StageSizeFits(stated, expected_bytes, exact))
    return CorruptData(prefix + "the buffer states " + std::to_string(stated) + " decoded bytes" + (exact ? ", the chunk holds " : ", the stage holds at most ") +
                       std::to_string(expected_bytes));
  expected_bytes = stated;
  out->resize(expected_bytes);
  const int decoded = blosc_decompress_ctx(in.data(), out->data(), out->size(), /*numinternalthreads=*/1);
  if (decoded < 0 || static_cast<size_t>(decoded) != expected_bytes)
    return CorruptData(prefix + "the buffer is corrupt (blosc_decompress_ctx returned " + std::to_string(decoded) + ")");
  return Status::Ok();
}

Status DecodeZstdFilter(ByteView in, size_t expected_bytes, bool exact, const std::string& what, Bytes* out) {
  out->resize(expected_bytes);
  const size_t produced = ZSTD_decompress(out->data(), out->size(), in.data(), in.size());
  if (ZSTD_isError(produced)) {
    if (ZSTD_getErrorCode(produced) == ZSTD_error_dstSize_tooSmall)
      return CorruptData(what + ": zstd filter: the frame decodes to more than the chunk's " +
                         std::to_string(expected_bytes) + " bytes");
    return CorruptData(what + ": zstd filter: the frame is corrupt (" + ZSTD_getErrorName(produced) + ")");
  }
  if (!StageSizeFits(produced, expected_bytes, exact))
    return CorruptData(what + ": zstd filter: decodes to " + std::to_string(produced) + " bytes" + (exact ? ", the chunk holds " : ", the stage holds at most ") +
                       std::to_string(expected_bytes));
  out->resize(produced);
  return Status::Ok();
}

}  // namespace tessera::hdf5
