#include "tessera/codec/byte_shuffle.h"

#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace tessera {
namespace {

// Two-byte elements: all low bytes, then all high bytes (16 elements per step with SSE2).
void ShuffleTwoByteElements(size_t elements, const uint8_t* src, uint8_t* dst) {
  uint8_t* low = dst;
  uint8_t* high = dst + elements;
  size_t i = 0;
#if defined(__SSE2__)
  const __m128i low_byte_mask = _mm_set1_epi16(0x00ff);
  for (; i + 16 <= elements; i += 16) {
    const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + 2 * i));
    const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + 2 * i + 16));
    const __m128i lows = _mm_packus_epi16(_mm_and_si128(a, low_byte_mask), _mm_and_si128(b, low_byte_mask));
    const __m128i highs = _mm_packus_epi16(_mm_srli_epi16(a, 8), _mm_srli_epi16(b, 8));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(low + i), lows);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(high + i), highs);
  }
#endif
  for (; i < elements; ++i) {
    low[i] = src[2 * i];
    high[i] = src[2 * i + 1];
  }
}

// A fixed element size lets the compiler unroll the inner loop.
template <size_t kElementBytes>
void ShuffleFixedSize(size_t elements, const uint8_t* src, uint8_t* dst) {
  for (size_t i = 0; i < elements; ++i)
    for (size_t j = 0; j < kElementBytes; ++j) dst[j * elements + i] = src[i * kElementBytes + j];
}

template <size_t kElementBytes>
void UnshuffleFixedSize(size_t elements, const uint8_t* src, uint8_t* dst) {
  for (size_t i = 0; i < elements; ++i)
    for (size_t j = 0; j < kElementBytes; ++j) dst[i * kElementBytes + j] = src[j * elements + i];
}

}  // namespace

void ByteShuffle(size_t element_bytes, size_t bytes, const uint8_t* src, uint8_t* dst) {
  if (bytes == 0) return;
  const size_t elements = element_bytes > 0 ? bytes / element_bytes : 0;
  switch (element_bytes) {
    case 0:
    case 1: break;
    case 2: ShuffleTwoByteElements(elements, src, dst); break;
    case 4: ShuffleFixedSize<4>(elements, src, dst); break;
    case 8: ShuffleFixedSize<8>(elements, src, dst); break;
    default:
      for (size_t j = 0; j < element_bytes; ++j)
        for (size_t i = 0; i < elements; ++i) dst[j * elements + i] = src[i * element_bytes + j];
  }
  const size_t whole = element_bytes > 1 ? elements * element_bytes : 0;
  std::memcpy(dst + whole, src + whole, bytes - whole);
}

void ByteUnshuffle(size_t element_bytes, size_t bytes, const uint8_t* src, uint8_t* dst) {
  if (bytes == 0) return;
  const size_t elements = element_bytes > 0 ? bytes / element_bytes : 0;
  switch (element_bytes) {
    case 0:
    case 1: break;
    case 2: UnshuffleFixedSize<2>(elements, src, dst); break;
    case 4: UnshuffleFixedSize<4>(elements, src, dst); break;
    case 8: UnshuffleFixedSize<8>(elements, src, dst); break;
    default:
      for (size_t j = 0; j < element_bytes; ++j)
        for (size_t i = 0; i < elements; ++i) dst[i * element_bytes + j] = src[j * elements + i];
  }
  const size_t whole = element_bytes > 1 ? elements * element_bytes : 0;
  std::memcpy(dst + whole, src + whole, bytes - whole);
}

}  // namespace tessera
