// The numcodecs variable-length chunk encoding that zarr-python's `vlen-utf8` and `vlen-bytes`
// codecs write (Zarr v3 `string` / `variable_length_bytes` arrays, Zarr v2 object arrays with the
// `vlen-utf8` / `vlen-bytes` filter). Pure encode/decode over bytes in memory.
//
//   u32 LE  count                      number of elements (the chunk's, C order)
//   count x { u32 LE length; length bytes }
//
// vlen-utf8 elements are UTF-8 text, vlen-bytes elements arbitrary bytes; the encoding is the same.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tessera/core/bytes.h"
#include "tessera/core/status.h"

namespace tessera::zarr {

// Decodes `encoded` (the bytes after every bytes -> bytes codec was undone) into exactly
// `expected_count` elements. kCorruptData naming `where` (the chunk key) and the byte range for a
// header or an element running past the end, a count other than `expected_count`, or bytes left
// over after the last element.
Result<std::vector<std::string>> DecodeVlenChunk(ByteView encoded, size_t expected_count, std::string_view where);

// The encoding of `elements` (tests and fuzz seeds; tessera writes no string arrays).
Bytes EncodeVlenChunk(std::span<const std::string> elements);

}  // namespace tessera::zarr
