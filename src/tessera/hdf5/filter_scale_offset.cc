// H5Z_FILTER_SCALEOFFSET (6), read only. The stored chunk:
//
//   bytes 0..3   minbits, little-endian: the bits each packed element takes
//   byte  4      how many bytes of the minimum follow (8 as written; at most 8 are read)
//   bytes 5..    the minimum, little-endian (a float's or double's own bits for D-scaling)
//   byte  21..   the elements, minbits each, packed most significant bit first, no padding
//                between elements (or, when minbits is the element's full width, the elements as
//                they are)
//
// Client data (20 values): scale type (0 float D-scaling, 1 float E-scaling, 2 integer), scale
// factor D, elements in the chunk, class (0 integer, 1 float), element size, signed, byte order
// (0 little, 1 big), fill value defined, then the fill value's bytes from index 8 (little-endian
// words, the value in little-endian order).
//
// Decoding, as the HDF5 library does it: a packed value of all ones is the fill value (when one is
// defined); an integer is the packed value plus the minimum, modulo its width; a float is
// (packed value as a signed integer) / 10^D + minimum, computed in the element's own precision.
// Values are handled little-endian and swapped at the end for a big-endian dataset.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "tessera/hdf5/filter_decoders.h"

namespace tessera::hdf5 {
namespace {

enum ScaleOffsetParameter : size_t {
  kScaleType = 0,
  kScaleFactor = 1,
  kElementCount = 2,
  kClass = 3,
  kElementSize = 4,
  kSigned = 5,
  kByteOrder = 6,
  kFillDefined = 7,
  kFillValue = 8,
  kParameterCount = 20,
};
constexpr uint32_t kFloatDScale = 0;
constexpr uint32_t kIntegerScale = 2;
constexpr uint32_t kClassInteger = 0;
constexpr uint32_t kClassFloat = 1;
constexpr size_t kHeaderBytes = kScaleOffsetHeaderBytes;

uint64_t LoadLE(const uint8_t* p, size_t n) {
  uint64_t v = 0;
  for (size_t i = 0; i < n; ++i) v |= static_cast<uint64_t>(p[i]) << (8 * i);
  return v;
}

void StoreLE(uint64_t v, size_t n, uint8_t* p) {
  for (size_t i = 0; i < n; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}

// The fill value's bits: client data words from index 8, each little-endian.
uint64_t FillBits(const std::vector<uint32_t>& cd, size_t size) {
  uint8_t bytes[8] = {};
  for (size_t i = 0; i < size; ++i) bytes[i] = static_cast<uint8_t>(cd[kFillValue + i / 4] >> (8 * (i % 4)));
  return LoadLE(bytes, size);
}

void SwapElements(uint8_t* data, size_t count, size_t size) {
  for (size_t i = 0; i < count; ++i) std::reverse(data + i * size, data + (i + 1) * size);
}

// Reads `minbits`-bit values most significant bit first.
class PackedBits {
 public:
  explicit PackedBits(const uint8_t* p) : p_(p) {}
  uint64_t Next(unsigned minbits) {
    uint64_t v = 0;
    while (minbits > 0) {
      const unsigned left_in_byte = 8 - bit_;
      const unsigned take = minbits < left_in_byte ? minbits : left_in_byte;
      const unsigned shift = left_in_byte - take;
      v = (v << take) | ((p_[0] >> shift) & ((1u << take) - 1));
      bit_ += take;
      minbits -= take;
      if (bit_ == 8) {
        bit_ = 0;
        ++p_;
      }
    }
    return v;
  }

 private:
  const uint8_t* p_;
  unsigned bit_ = 0;
};

}  // namespace

Status DecodeScaleOffset(const Filter& filter, ByteView in, size_t expected_bytes, bool exact, const std::string& what,
                         Bytes* out) {
  const std::vector<uint32_t>& cd = filter.client_data;
  const std::string prefix = what + ": scaleoffset filter: ";
  if (cd.size() != kParameterCount)
    return CorruptData(prefix + "client data has " + std::to_string(cd.size()) + " values, expected " +
                       std::to_string(kParameterCount));
  const uint32_t cls = cd[kClass], size = cd[kElementSize], scale_type = cd[kScaleType];
  if (cls != kClassInteger && cls != kClassFloat)
    return CorruptData(prefix + "datatype class " + std::to_string(cls) + " (expected 0 integer or 1 float)");
  if (cls == kClassInteger && size != 1 && size != 2 && size != 4 && size != 8)
    return CorruptData(prefix + "integer size " + std::to_string(size) + " (expected 1, 2, 4 or 8)");
  if (cls == kClassFloat && size != 4 && size != 8)
    return CorruptData(prefix + "float size " + std::to_string(size) + " (expected 4 or 8)");
  if (cls == kClassFloat && scale_type != kFloatDScale)
    return Unsupported(prefix + "float scale type " + std::to_string(scale_type) +
                       " (only 0, D-scaling, is defined by HDF5)");
  if (cls == kClassInteger && scale_type != kIntegerScale)
    return CorruptData(prefix + "scale type " + std::to_string(scale_type) + " for an integer (expected 2)");
  if (cd[kByteOrder] > 1) return CorruptData(prefix + "byte order " + std::to_string(cd[kByteOrder]) + " (expected 0 or 1)");
  const size_t count = cd[kElementCount];
  if (!StageSizeFits(static_cast<uint64_t>(count) * size, expected_bytes, exact))
    return CorruptData(prefix + "client data gives " + std::to_string(count) + " elements of " + std::to_string(size) +
                       " bytes" + (exact ? ", the chunk holds " : ", the stage holds at most ") +
                       std::to_string(expected_bytes) + " bytes");
  expected_bytes = count * size;
  if (in.size() < kHeaderBytes)
    return CorruptData(prefix + std::to_string(in.size()) + " bytes cannot hold the " + std::to_string(kHeaderBytes) +
                       "-byte header");
  const uint64_t minbits = LoadLE(in.data(), 4);
  const size_t minimum_bytes = in[4] < 8 ? in[4] : 8;
  const uint64_t minimum = LoadLE(in.data() + 5, minimum_bytes);
  const unsigned width = size * 8;
  if (minbits > width)
    return CorruptData(prefix + "minbits " + std::to_string(minbits) + " exceeds the element's " +
                       std::to_string(width) + " bits");
  const ByteView body = in.subspan(kHeaderBytes);
  const uint64_t body_needed = (static_cast<uint64_t>(count) * minbits + 7) / 8;
  if (body.size() < body_needed)
    return CorruptData(prefix + "holds " + std::to_string(body.size()) + " bytes of packed data after its header, " +
                       std::to_string(count) + " elements of " + std::to_string(minbits) + " bits need " +
                       std::to_string(body_needed));
  out->resize(expected_bytes);
  const bool big_endian = cd[kByteOrder] == 1;
  if (minbits == width) {  // stored as they are
    if (expected_bytes > 0) std::memcpy(out->data(), body.data(), expected_bytes);
    if (big_endian) SwapElements(out->data(), count, size);
    return Status::Ok();
  }
  const bool fill_defined = cd[kFillDefined] != 0;
  const uint64_t fill = FillBits(cd, size);
  const uint64_t all_ones = (uint64_t{1} << minbits) - 1;  // minbits < width <= 64
  PackedBits packed(body.data());
  uint8_t* dst = out->data();
  if (cls == kClassInteger) {
    for (size_t i = 0; i < count; ++i, dst += size) {
      const uint64_t v = minbits ? packed.Next(static_cast<unsigned>(minbits)) : 0;
      StoreLE(fill_defined && v == all_ones ? fill : v + minimum, size, dst);
    }
  } else if (size == 4) {
    float min_value, fill_value;
    const uint32_t min_bits = static_cast<uint32_t>(minimum), fill_bits = static_cast<uint32_t>(fill);
    std::memcpy(&min_value, &min_bits, 4);
    std::memcpy(&fill_value, &fill_bits, 4);
    const float divisor = std::pow(10.0f, static_cast<float>(static_cast<int32_t>(cd[kScaleFactor])));
    for (size_t i = 0; i < count; ++i, dst += 4) {
      const int32_t v = static_cast<int32_t>(minbits ? packed.Next(static_cast<unsigned>(minbits)) : 0);
      const float value = fill_defined && v == static_cast<int32_t>(all_ones)
                              ? fill_value
                              : static_cast<float>(v) / divisor + min_value;
      std::memcpy(dst, &value, 4);
    }
  } else {
    double min_value, fill_value;
    std::memcpy(&min_value, &minimum, 8);
    std::memcpy(&fill_value, &fill, 8);
    const double divisor = std::pow(10.0, static_cast<double>(static_cast<int32_t>(cd[kScaleFactor])));
    for (size_t i = 0; i < count; ++i, dst += 8) {
      const int64_t v = static_cast<int64_t>(minbits ? packed.Next(static_cast<unsigned>(minbits)) : 0);
      const double value = fill_defined && v == static_cast<int64_t>(all_ones)
                               ? fill_value
                               : static_cast<double>(v) / divisor + min_value;
      std::memcpy(dst, &value, 8);
    }
  }
  if (big_endian) SwapElements(out->data(), count, size);
  return Status::Ok();
}

}  // namespace tessera::hdf5
