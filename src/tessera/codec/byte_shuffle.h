// Byte shuffle, as numcodecs.shuffle and c-blosc's BLOSC_SHUFFLE lay it out: byte j of element i
// goes to plane j, position i (all first bytes, then all second bytes, ...), which groups the slowly
// changing high bytes of similar numbers for the compressor. The bytes past the last whole element
// (c-blosc's blocks may end mid-element) are copied as they are.
#pragma once

#include <cstddef>
#include <cstdint>

namespace tessera {

// `bytes` bytes from src, shuffled into dst (which must not overlap src). Two-byte elements take a
// vectorised path: they are the cameras' uint16 frames, shuffled block by block in the stream.
void ByteShuffle(size_t element_bytes, size_t bytes, const uint8_t* src, uint8_t* dst);

// The inverse of ByteShuffle.
void ByteUnshuffle(size_t element_bytes, size_t bytes, const uint8_t* src, uint8_t* dst);

}  // namespace tessera
