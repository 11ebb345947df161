// Helpers shared by the codec tests (test-only; not part of the library).
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string_view>
#include <vector>

#include "tessera/codec/codec.h"

namespace tessera::codec_test {

// Incompressible bytes, reproducible from `seed`.
inline Bytes RandomBytes(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  Bytes out(n);
  for (auto& b : out) b = static_cast<uint8_t>(rng());
  return out;
}

// Highly compressible bytes: a slow ramp.
inline Bytes RampBytes(size_t n) {
  Bytes out(n);
  for (size_t i = 0; i < n; ++i) out[i] = static_cast<uint8_t>(i / 64);
  return out;
}

inline Bytes FromHex(std::string_view hex) {
  auto nibble = [](char c) -> uint8_t {
    return static_cast<uint8_t>(c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10);
  };
  Bytes out(hex.size() / 2);
  for (size_t i = 0; i < out.size(); ++i) {
    out[i] = static_cast<uint8_t>(nibble(hex[2 * i]) << 4 | nibble(hex[2 * i + 1]));
  }
  return out;
}

inline const std::vector<DataType>& AllDataTypes() {
  static const std::vector<DataType> kAll = {
      DataType::kBool,      DataType::kInt8,      DataType::kInt16,   DataType::kInt32,
      DataType::kInt64,     DataType::kUInt8,     DataType::kUInt16,  DataType::kUInt32,
      DataType::kUInt64,    DataType::kFloat16,   DataType::kFloat32, DataType::kFloat64,
      DataType::kComplex64, DataType::kComplex128};
  return kAll;
}

inline ChunkSpec MakeSpec(DataType dtype, std::vector<int64_t> shape) {
  ChunkSpec spec;
  spec.dtype = dtype;
  spec.shape = std::move(shape);
  spec.fill = ZeroFill(dtype);
  return spec;
}

// Shapes covering rank 0..5, empty extents and extents of 1.
inline const std::vector<std::vector<int64_t>>& TestShapes() {
  static const std::vector<std::vector<int64_t>> kShapes = {
      {}, {0}, {1}, {7}, {3, 0}, {4, 5}, {1, 6}, {2, 3, 4}, {3, 1, 2, 5}, {2, 3, 1, 4, 3}};
  return kShapes;
}

// Encodes and decodes `data`, checking the result and that the encoding fits MaxEncodedSize.
inline void ExpectRoundTrip(const BytesToBytesCodec& codec, const Bytes& data) {
  Bytes encoded, decoded = {0xAA};
  ASSERT_TRUE(codec.Encode(data, &encoded).ok()) << data.size();
  const std::optional<size_t> bound = codec.MaxEncodedSize(data.size());
  ASSERT_TRUE(bound.has_value());
  EXPECT_LE(encoded.size(), *bound) << "input " << data.size();
  const Status st = codec.Decode(encoded, &decoded);
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_EQ(decoded, data);
}

// Feeds damaged versions of a valid encoding to Decode: every strict prefix must fail with
// kCorruptData naming the codec; single-byte corruptions must give that error or (when the damage
// lands in a field the format does not check) some output, but never crash or another error kind.
inline void ExpectDamageIsCorruptData(const BytesToBytesCodec& codec, const Bytes& encoded) {
  Bytes decoded;
  for (size_t n = 0; n < encoded.size(); n += (n < 64 ? 1 : 7)) {
    const Status st = codec.Decode(ByteView(encoded).first(n), &decoded);
    EXPECT_EQ(st.kind(), ErrorKind::kCorruptData)
        << "prefix of " << n << " bytes: " << st.ToString();
    EXPECT_NE(st.message().find(codec.name()), std::string::npos)
        << "prefix of " << n << " bytes: " << st.ToString();
  }
  for (size_t i = 0; i < encoded.size(); ++i) {
    for (uint8_t flip : {uint8_t{0x01}, uint8_t{0x80}, uint8_t{0xff}}) {
      Bytes bad = encoded;
      bad[i] ^= flip;
      const Status st = codec.Decode(bad, &decoded);
      EXPECT_TRUE(st.ok() || (st.kind() == ErrorKind::kCorruptData &&
                               st.message().find(codec.name()) != std::string::npos))
          << "byte " << i << ": " << st.ToString();
    }
  }
}

}  // namespace tessera::codec_test
