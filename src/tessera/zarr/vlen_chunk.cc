#include "tessera/zarr/vlen_chunk.h"

#include <cstdint>

namespace tessera::zarr {
namespace {

uint32_t LoadU32(const uint8_t* p) {
  return static_cast<uint32_t>(p[0]) | static_cast<uint32_t>(p[1]) << 8 | static_cast<uint32_t>(p[2]) << 16 |
         static_cast<uint32_t>(p[3]) << 24;
}

void AppendU32(Bytes* out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out->push_back(static_cast<uint8_t>(v >> (8 * i)));
}

std::string Range(uint64_t begin, uint64_t end) { return "bytes " + std::to_string(begin) + ".." + std::to_string(end); }

}  // namespace

Result<std::vector<std::string>> DecodeVlenChunk(ByteView encoded, size_t expected_count, std::string_view where) {
  const uint64_t size = encoded.size();
  auto corrupt = [&](const std::string& what) {
    return CorruptData(std::string(where) + ": variable-length chunk of " + std::to_string(size) + " bytes: " + what);
  };
  if (size < 4) return corrupt("the element count (" + Range(0, 4) + ") runs past the end");
  const uint32_t count = LoadU32(encoded.data());
  if (count != expected_count) {
    return corrupt("holds " + std::to_string(count) + " elements, the chunk has " + std::to_string(expected_count));
  }
  // Each element takes at least its 4-byte length: a count the bytes cannot hold is refused before
  // anything is allocated for it.
  if ((size - 4) / 4 < count) return corrupt("too short for " + std::to_string(count) + " element lengths");
  std::vector<std::string> out;
  out.reserve(count);
  uint64_t offset = 4;
  for (uint32_t i = 0; i < count; ++i) {
    if (size - offset < 4) return corrupt("element " + std::to_string(i) + "'s length (" + Range(offset, offset + 4) + ") runs past the end");
    const uint64_t length = LoadU32(encoded.data() + offset);
    offset += 4;
    if (size - offset < length) {
      return corrupt("element " + std::to_string(i) + " (" + Range(offset, offset + length) + ") runs past the end");
    }
    out.emplace_back(reinterpret_cast<const char*>(encoded.data() + offset), static_cast<size_t>(length));
    offset += length;
  }
  if (offset != size) return corrupt(std::to_string(size - offset) + " bytes (" + Range(offset, size) + ") follow the last element");
  return out;
}

Bytes EncodeVlenChunk(std::span<const std::string> elements) {
  Bytes out;
  AppendU32(&out, static_cast<uint32_t>(elements.size()));
  for (const std::string& e : elements) {
    AppendU32(&out, static_cast<uint32_t>(e.size()));
    out.insert(out.end(), e.begin(), e.end());
  }
  return out;
}

}  // namespace tessera::zarr
