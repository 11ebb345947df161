// The LZ4 filter (32004) as the HDF5 plugin frames it:
//
//   8 bytes  decoded size, big-endian
//   4 bytes  block size (decoded bytes per block; the last block may be shorter), big-endian
//   per block: 4 bytes stored size, big-endian, then that many bytes: an LZ4 block, or the block's
//              bytes as they are when the stored size equals its decoded size
#include <lz4.h>

#include <algorithm>
#include <cstring>

#include "tessera/hdf5/filter_decoders.h"

namespace tessera::hdf5 {
namespace {

uint64_t LoadBE(const uint8_t* p, size_t n) {
  uint64_t v = 0;
  for (size_t i = 0; i < n; ++i) v = (v << 8) | p[i];
  return v;
}

}  // namespace

Status DecodeLz4Filter(ByteView in, size_t expected_bytes, bool exact, const std::string& what, Bytes* out) {
  const std::string prefix = what + ": lz4 filter: ";
  if (in.size() < 12) return CorruptData(prefix + std::to_string(in.size()) + " bytes cannot hold the 12-byte header");
  const uint64_t stated = LoadBE(in.data(), 8);
  uint64_t block_bytes = LoadBE(in.data() + 8, 4);
  if (!StageSizeFits(stated, expected_bytes, exact))
    return CorruptData(prefix + "states a decoded size of " + std::to_string(stated) + " bytes" + (exact ? ", the chunk holds " : ", the stage holds at most ") +
                       std::to_string(expected_bytes));
  expected_bytes = stated;
  if (block_bytes == 0 && stated > 0) return CorruptData(prefix + "block size 0 at bytes [8, 12)");
  if (block_bytes > stated) block_bytes = stated;
  out->resize(expected_bytes);
  size_t pos = 12;
  for (uint64_t done = 0; done < stated;) {
    const size_t this_block = static_cast<size_t>(std::min<uint64_t>(block_bytes, stated - done));
    if (in.size() - pos < 4)
      return CorruptData(prefix + "ends at byte " + std::to_string(in.size()) + " before the size of the block at byte " +
                         std::to_string(pos));
    const uint64_t stored = LoadBE(in.data() + pos, 4);
    pos += 4;
    if (stored > in.size() - pos)
      return CorruptData(prefix + "the block at byte " + std::to_string(pos - 4) + " states " + std::to_string(stored) +
                         " bytes, only " + std::to_string(in.size() - pos) + " follow");
    uint8_t* dst = out->data() + done;
    if (stored == this_block) {
      std::memcpy(dst, in.data() + pos, this_block);
    } else {
      const int produced = LZ4_decompress_safe(reinterpret_cast<const char*>(in.data() + pos),
                                               reinterpret_cast<char*>(dst), static_cast<int>(stored),
                                               static_cast<int>(this_block));
      if (produced < 0 || static_cast<size_t>(produced) != this_block)
        return CorruptData(prefix + "the LZ4 block at bytes [" + std::to_string(pos) + ", " +
                           std::to_string(pos + stored) + ") is corrupt or does not decode to its " +
                           std::to_string(this_block) + " bytes");
    }
    pos += stored;
    done += this_block;
  }
  return Status::Ok();
}

}  // namespace tessera::hdf5
