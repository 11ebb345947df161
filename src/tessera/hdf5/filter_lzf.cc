// h5py's LZF filter (32000), read through liblzf: the chunk is one raw LZF stream (no header; the
// client data's third value is the chunk's decoded size, which DecodeChunk already knows).
#include <lzf.h>

#include <cerrno>

#include "tessera/hdf5/filter_decoders.h"

namespace tessera::hdf5 {

Status DecodeLzf(ByteView in, size_t expected_bytes, bool exact, const std::string& what, Bytes* out) {
  out->resize(expected_bytes);
  if (in.empty() || expected_bytes == 0)
    return CorruptData(what + ": lzf filter: " + std::to_string(in.size()) + " stored bytes for a chunk of " +
                       std::to_string(expected_bytes));
  errno = 0;
  const unsigned produced = lzf_decompress(in.data(), static_cast<unsigned>(in.size()), out->data(),
                                           static_cast<unsigned>(expected_bytes));
  if (produced == 0) {
    if (errno == E2BIG)
      return CorruptData(what + ": lzf filter: the stream decodes to more than the chunk's " +
                         std::to_string(expected_bytes) + " bytes");
    return CorruptData(what + ": lzf filter: the stream is corrupt (a back reference before its start or past its end)");
  }
  if (!StageSizeFits(produced, expected_bytes, exact))
    return CorruptData(what + ": lzf filter: decodes to " + std::to_string(produced) + " bytes" + (exact ? ", the chunk holds " : ", the stage holds at most ") +
                       std::to_string(expected_bytes));
  out->resize(produced);
  return Status::Ok();
}

}  // namespace tessera::hdf5
