// Constants of the HDF5 file format that the reader and the writer share.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tessera::hdf5 {

// The format signature, at offset 0 (or 512, 1024, 2048, ... after a user block).
inline constexpr uint8_t kHdf5Signature[8] = {0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n'};
// The "undefined address" (all bits set) of an 8-byte offset.
inline constexpr uint64_t kUndefinedAddress = ~uint64_t{0};
// A maximum dimension without limit (dataspace messages).
inline constexpr uint64_t kUnlimited = ~uint64_t{0};

// The link names along an object path: "/a//b/./c" -> {"a", "b", "c"} (empty and "." parts dropped).
inline std::vector<std::string> SplitObjectPath(std::string_view path) {
  std::vector<std::string> parts;
  size_t i = 0;
  while (i < path.size()) {
    size_t j = path.find('/', i);
    if (j == std::string_view::npos) j = path.size();
    if (j > i && path.substr(i, j - i) != ".") parts.emplace_back(path.substr(i, j - i));
    i = j + 1;
  }
  return parts;
}

}  // namespace tessera::hdf5
