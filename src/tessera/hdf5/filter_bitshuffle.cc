// The bitshuffle filter (32008), read only. Client data: major and minor version, element size,
// block size in elements (0: the default), compression (0 none, 2 LZ4, 3 zstd), zstd level.
//
// The chunk's elements are taken in blocks of `block size` elements (a multiple of 8); the last
// block keeps the largest multiple of 8 elements left, and the final (count % 8) elements are
// stored as they are, at the end. Each block's bits are transposed (BitUnshuffleBlock). Without
// compression the blocks follow one another. With LZ4 or zstd the chunk starts with
//
//   8 bytes  decoded size, big-endian
//   4 bytes  block size in bytes, big-endian
//
// and each block is a 4-byte big-endian stored size and that many bytes of LZ4 block or zstd frame.
#include <lz4.h>
#include <zstd.h>

#include <algorithm>
#include <cstring>

#include "tessera/hdf5/filter_decoders.h"

namespace tessera::hdf5 {
namespace {

constexpr uint32_t kNoCompression = 0;
constexpr uint32_t kLz4Compression = 2;
constexpr uint32_t kZstdCompression = 3;
constexpr size_t kBlockMultiple = 8;

uint64_t LoadBE(const uint8_t* p, size_t n) {
  uint64_t v = 0;
  for (size_t i = 0; i < n; ++i) v = (v << 8) | p[i];
  return v;
}

// bitshuffle's default: about 8 KiB of elements, a multiple of 8, at least 128.
size_t DefaultBlockElements(size_t element_size) {
  size_t n = 8192 / element_size;
  n -= n % kBlockMultiple;
  return n < 128 ? 128 : n;
}

// Transposes an 8x8 bit matrix held in a uint64 (bit 8 * row + column): the three-step exchange of
// 1x1, 2x2 and 4x4 sub-blocks (Hacker's Delight, "transposing a bit matrix").
uint64_t TransposeBits8x8(uint64_t x) {
  uint64_t t = (x ^ (x >> 7)) & 0x00AA00AA00AA00AAull;
  x ^= t ^ (t << 7);
  t = (x ^ (x >> 14)) & 0x0000CCCC0000CCCCull;
  x ^= t ^ (t << 14);
  t = (x ^ (x >> 28)) & 0x00000000F0F0F0F0ull;
  x ^= t ^ (t << 28);
  return x;
}

}  // namespace

void BitUnshuffleBlock(const uint8_t* in, size_t count, size_t element_size, uint8_t* out) {
  // For 8 elements 8m..8m+7 and byte j, rows 8j..8j+7 hold one byte each at column m: bit l of
  // row k's byte is bit k of byte j of element 8m + l. Gathered into a uint64 (row k = byte k)
  // and transposed, byte l is byte j of element 8m + l.
  const size_t row_bytes = count / 8;
  for (size_t j = 0; j < element_size; ++j) {
    const uint8_t* rows = in + j * 8 * row_bytes;
    for (size_t m = 0; m < row_bytes; ++m) {
      uint64_t x = 0;
      for (size_t k = 0; k < 8; ++k) x |= static_cast<uint64_t>(rows[k * row_bytes + m]) << (8 * k);
      x = TransposeBits8x8(x);
      uint8_t* element = out + m * 8 * element_size + j;
      for (size_t l = 0; l < 8; ++l) element[l * element_size] = static_cast<uint8_t>(x >> (8 * l));
    }
  }
}

void BitShuffleBlock(const uint8_t* in, size_t count, size_t element_size, uint8_t* out) {
  const size_t row_bytes = count / 8;
  std::memset(out, 0, count * element_size);
  for (size_t i = 0; i < count; ++i)
    for (size_t j = 0; j < element_size; ++j)
      for (size_t k = 0; k < 8; ++k)
        if (in[i * element_size + j] & (1u << k)) out[(j * 8 + k) * row_bytes + i / 8] |= static_cast<uint8_t>(1u << (i % 8));
}

Status DecodeBitshuffle(const Filter& filter, size_t element_size, ByteView in, size_t expected_bytes,
                        bool exact, const std::string& what, Bytes* out) {
  const std::vector<uint32_t>& cd = filter.client_data;
  const std::string prefix = what + ": bitshuffle filter: ";
  if (cd.size() < 3)
    return CorruptData(prefix + "client data has " + std::to_string(cd.size()) +
                       " values, expected at least 3 (version, version, element size)");
  const size_t elem = cd[2];
  if (elem == 0) return CorruptData(prefix + "element size 0 in the client data");
  const uint32_t compression = cd.size() > 4 ? cd[4] : kNoCompression;
  if (compression != kNoCompression && compression != kLz4Compression && compression != kZstdCompression)
    return Unsupported(prefix + "compression " + std::to_string(compression) + " (expected 0 none, 2 LZ4 or 3 zstd)");
  size_t block_elements = cd.size() > 3 && cd[3] != 0 ? cd[3] : DefaultBlockElements(elem);
  size_t pos = 0;
  uint64_t decoded_bytes = exact ? expected_bytes : in.size();  // unless the header states it
  if (compression != kNoCompression) {
    if (in.size() < 12)
      return CorruptData(prefix + std::to_string(in.size()) + " bytes cannot hold the 12-byte header");
    decoded_bytes = LoadBE(in.data(), 8);
    block_elements = LoadBE(in.data() + 8, 4) / elem;
    pos = 12;
  }
  if (!StageSizeFits(decoded_bytes, expected_bytes, exact))
    return CorruptData(prefix + "states a decoded size of " + std::to_string(decoded_bytes) +
                       " bytes" + (exact ? ", the chunk holds " : ", the stage holds at most ") + std::to_string(expected_bytes));
  expected_bytes = decoded_bytes;
  if (expected_bytes % elem != 0)
    return CorruptData(prefix + "the chunk's " + std::to_string(expected_bytes) +
                       " bytes are not a whole number of " + std::to_string(elem) + "-byte elements");
  if (block_elements == 0 || block_elements % kBlockMultiple != 0)
    return CorruptData(prefix + "block size of " + std::to_string(block_elements) +
                       " elements (expected a positive multiple of 8)");
  const size_t count = expected_bytes / elem;
  out->resize(expected_bytes);
  Bytes block;  // one block's transposed bits, decompressed
  size_t done = 0;  // elements decoded
  const size_t whole = count - count % kBlockMultiple;
  while (done < whole) {
    const size_t n = std::min(block_elements, whole - done);
    const size_t n_bytes = n * elem;
    const uint8_t* bits = nullptr;
    if (compression == kNoCompression) {
      if (in.size() - pos < n_bytes)
        return CorruptData(prefix + "ends at byte " + std::to_string(in.size()) + " inside the block at byte " +
                           std::to_string(pos));
      bits = in.data() + pos;
      pos += n_bytes;
    } else {
      if (in.size() - pos < 4)
        return CorruptData(prefix + "ends at byte " + std::to_string(in.size()) +
                           " before the size of the block at byte " + std::to_string(pos));
      const uint64_t stored = LoadBE(in.data() + pos, 4);
      pos += 4;
      if (stored > in.size() - pos)
        return CorruptData(prefix + "the block at byte " + std::to_string(pos - 4) + " states " +
                           std::to_string(stored) + " bytes, only " + std::to_string(in.size() - pos) + " follow");
      block.resize(n_bytes);
      bool ok;
      if (compression == kLz4Compression) {
        const int produced = LZ4_decompress_safe(reinterpret_cast<const char*>(in.data() + pos),
                                                 reinterpret_cast<char*>(block.data()), static_cast<int>(stored),
                                                 static_cast<int>(n_bytes));
        ok = produced >= 0 && static_cast<size_t>(produced) == n_bytes;
      } else {
        const size_t produced = ZSTD_decompress(block.data(), n_bytes, in.data() + pos, stored);
        ok = !ZSTD_isError(produced) && produced == n_bytes;
      }
      if (!ok)
        return CorruptData(prefix + "the " + (compression == kLz4Compression ? "LZ4" : "zstd") + " block at bytes [" +
                           std::to_string(pos) + ", " + std::to_string(pos + stored) +
                           ") is corrupt or does not decode to its " + std::to_string(n_bytes) + " bytes");
      bits = block.data();
      pos += stored;
    }
    BitUnshuffleBlock(bits, n, elem, out->data() + done * elem);
    done += n;
  }
  const size_t tail_bytes = (count - whole) * elem;
  if (in.size() - pos < tail_bytes)
    return CorruptData(prefix + "ends at byte " + std::to_string(in.size()) + " before its last " +
                       std::to_string(count - whole) + " elements");
  if (tail_bytes > 0) std::memcpy(out->data() + whole * elem, in.data() + pos, tail_bytes);
  return Status::Ok();
}

}  // namespace tessera::hdf5
