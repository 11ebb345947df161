// Byte buffers and little-endian helpers. Bytes owns; ByteView borrows.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <type_traits>
#include <utility>
#include <span>
#include <string>
#include <vector>

namespace tessera {

// An allocator whose resize leaves new bytes uninitialised (std::allocator value-initialises, i.e.
// zeroes them). Codecs size outputs to a worst case and shrink to what they wrote; with this the
// untouched tail costs neither a memset nor resident memory. Contract for every user of Bytes:
// write what you resize before you read it; ask for zeros explicitly (Bytes(n, 0), assign(n, 0)).
template <typename T>
struct DefaultInitAllocator : std::allocator<T> {
  template <typename U>
  struct rebind {
    using other = DefaultInitAllocator<U>;
  };
  DefaultInitAllocator() = default;
  template <typename U>
  DefaultInitAllocator(const DefaultInitAllocator<U>&) noexcept {}  // NOLINT: rebinding copy

  // Blocks of 4 MiB and more are 2 MiB-aligned and a whole number of 2 MiB, so ReserveHugePages
  // can cover all of them with huge pages.
  static constexpr size_t kLargeBytes = size_t{4} << 20;
  static constexpr size_t kHugePageBytes = size_t{2} << 20;
  T* allocate(size_t n) {
    const size_t bytes = n * sizeof(T);
    if (bytes < kLargeBytes) return std::allocator<T>::allocate(n);
    void* p = std::aligned_alloc(kHugePageBytes, (bytes + kHugePageBytes - 1) / kHugePageBytes * kHugePageBytes);
    if (p == nullptr) throw std::bad_alloc();
    return static_cast<T*>(p);
  }
  void deallocate(T* p, size_t n) noexcept {
    if (n * sizeof(T) < kLargeBytes) return std::allocator<T>::deallocate(p, n);
    std::free(p);
  }

  template <typename U>
  void construct(U* p) noexcept(std::is_nothrow_default_constructible_v<U>) {
    ::new (static_cast<void*>(p)) U;
  }
  template <typename U, typename... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
};
using Bytes = std::vector<uint8_t, DefaultInitAllocator<uint8_t>>;

// Gives *b room for `bytes` and asks for transparent huge pages over that room, so a buffer that
// will be written whole (a tile, a piece of read output) costs one page fault per 2 MiB instead
// of per 4 KiB. Only for buffers filled completely: a huge page is resident as a whole once touched.
void ReserveHugePages(Bytes* b, size_t bytes);
using ByteView = std::span<const uint8_t>;
using MutableByteView = std::span<uint8_t>;

inline ByteView AsView(const std::string& s) {
  return ByteView(reinterpret_cast<const uint8_t*>(s.data()), s.size());
}
inline std::string AsString(ByteView v) { return std::string(v.begin(), v.end()); }

inline void EncodeFixed32LE(uint8_t* dst, uint32_t v) {
  for (int i = 0; i < 4; ++i) dst[i] = static_cast<uint8_t>(v >> (8 * i));
}
inline void EncodeFixed64LE(uint8_t* dst, uint64_t v) {
  for (int i = 0; i < 8; ++i) dst[i] = static_cast<uint8_t>(v >> (8 * i));
}
inline uint32_t DecodeFixed32LE(const uint8_t* p) {
  uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}
inline uint64_t DecodeFixed64LE(const uint8_t* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}
inline void PutFixed32LE(Bytes* dst, uint32_t v) {
  size_t n = dst->size();
  dst->resize(n + 4);
  EncodeFixed32LE(dst->data() + n, v);
}
inline void PutFixed64LE(Bytes* dst, uint64_t v) {
  size_t n = dst->size();
  dst->resize(n + 8);
  EncodeFixed64LE(dst->data() + n, v);
}

}  // namespace tessera
