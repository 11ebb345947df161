// Codec interfaces, grouped by kind as in Zarr v3:
//   array -> array  (transpose)            ArrayToArrayCodec
//   array -> bytes  (bytes, sharding)      ArrayToBytesCodec
//   bytes -> bytes  (gzip, zstd, blosc, crc32c)   BytesToBytesCodec
// A decoded array is always C-order, host (little-endian) element order, described by ChunkSpec.
// Every codec states its worst-case encoded size so callers can size buffers up front
// (std::nullopt means unbounded). Codecs are immutable after construction and thread-safe.
// Every codec says what it is (id()) and exposes the parameters callers choose by (the bytes
// codec's byte order, a compressor's level, the sharding codec itself), so backends and fast
// paths ask the chain instead of casting to concrete codec classes.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "tessera/core/bytes.h"
#include "tessera/core/dtype.h"
#include "tessera/core/status.h"

namespace tessera {

class ShardingCodec;

// Which codec an instance is. kOther: a codec this enum does not name (tests, extensions).
enum class CodecId { kOther, kTranspose, kBytes, kSharding, kGzip, kZstd, kBlosc, kCrc32c, kLz4 };

// The byte order of the `bytes` codec.
enum class Endian { kLittle, kBig };

// The decoded representation a codec sees: element type, shape (dimension 0 slowest), fill value
// (one chunk, or a shard for sharding_indexed).
struct ChunkSpec {
  DataType dtype = DataType::kUInt8;
  std::vector<int64_t> shape;
  FillValue fill;

  int64_t NumElements() const;
  size_t NumBytes() const { return static_cast<size_t>(NumElements()) * ItemSize(dtype); }
};

class BytesToBytesCodec {
 public:
  virtual ~BytesToBytesCodec() = default;
  virtual std::string_view name() const = 0;
  virtual CodecId id() const { return CodecId::kOther; }
  // A compressor's level (gzip 0-9, zstd's level, blosc's clevel); nullopt for codecs without one.
  virtual std::optional<int> compression_level() const { return std::nullopt; }
  // {"name": ..., "configuration": {...}} as written into zarr.json.
  virtual nlohmann::json ToJson() const = 0;
  // Replaces *out with the encoding of `in`.
  virtual Status Encode(ByteView in, Bytes* out) const = 0;
  // Replaces *out with the decoding of `in`. Malformed input gives kCorruptData.
  virtual Status Decode(ByteView in, Bytes* out) const = 0;
  // Like Decode when the decoding is expected to be `decoded_bytes` long, of which the caller
  // needs only the first `prefix_bytes`: a codec that can stop early (zstd) decodes at least
  // that prefix and sizes *out to decoded_bytes, leaving the rest unspecified; it still refuses
  // input whose recorded size differs. Integrity-checked input (a zstd frame checksum) is decoded
  // whole. By default, Decode.
  virtual Status DecodePrefix(ByteView in, size_t decoded_bytes, size_t prefix_bytes, Bytes* out) const {
    (void)decoded_bytes;
    (void)prefix_bytes;
    return Decode(in, out);
  }
  // Largest possible encoding of `decoded_bytes` input; nullopt if unbounded.
  virtual std::optional<size_t> MaxEncodedSize(size_t decoded_bytes) const = 0;
  // Exact encoded size when it depends only on the input size (crc32c: n + 4); else nullopt.
  virtual std::optional<size_t> FixedEncodedSize(size_t /*decoded_bytes*/) const { return std::nullopt; }
};

class ArrayToArrayCodec {
 public:
  virtual ~ArrayToArrayCodec() = default;
  virtual std::string_view name() const = 0;
  virtual CodecId id() const { return CodecId::kOther; }
  virtual nlohmann::json ToJson() const = 0;
  // The spec of the encoded array, given the spec of the decoded array.
  virtual Result<ChunkSpec> EncodedSpec(const ChunkSpec& decoded) const = 0;
  // `in` is an array of `decoded`; *out becomes an array of EncodedSpec(decoded).
  virtual Status Encode(const ChunkSpec& decoded, ByteView in, Bytes* out) const = 0;
  // `in` is an array of EncodedSpec(decoded); *out becomes an array of `decoded`.
  virtual Status Decode(const ChunkSpec& decoded, ByteView in, Bytes* out) const = 0;
};

class ArrayToBytesCodec {
 public:
  virtual ~ArrayToBytesCodec() = default;
  virtual std::string_view name() const = 0;
  virtual CodecId id() const { return CodecId::kOther; }
  // The `bytes` codec's byte order; nullopt for other codecs and for a `bytes` codec whose
  // configuration omits it (1-byte types only; it then acts as little endian).
  virtual std::optional<Endian> endian() const { return std::nullopt; }
  // This codec as the sharding codec (id() == kSharding), else null.
  virtual const ShardingCodec* AsSharding() const { return nullptr; }
  virtual nlohmann::json ToJson() const = 0;
  // `array` is spec.NumBytes() bytes of C-order host-order elements.
  virtual Status Encode(const ChunkSpec& spec, ByteView array, Bytes* out) const = 0;
  // *out becomes spec.NumBytes() bytes of C-order host-order elements.
  virtual Status Decode(const ChunkSpec& spec, ByteView encoded, Bytes* out) const = 0;
  virtual std::optional<size_t> MaxEncodedSize(const ChunkSpec& spec) const = 0;
  virtual std::optional<size_t> FixedEncodedSize(const ChunkSpec& /*spec*/) const { return std::nullopt; }
};

// A full Zarr codec pipeline: array->array codecs, exactly one array->bytes codec, bytes->bytes codecs.
class CodecChain {
 public:
  std::vector<std::shared_ptr<const ArrayToArrayCodec>> array_to_array;
  std::shared_ptr<const ArrayToBytesCodec> array_to_bytes;
  std::vector<std::shared_ptr<const BytesToBytesCodec>> bytes_to_bytes;

  // Encodes one chunk (`array` is spec.NumBytes() bytes) into *out.
  Status Encode(const ChunkSpec& spec, ByteView array, Bytes* out) const;
  // Decodes one chunk into *out (spec.NumBytes() bytes). A caller that needs only the first
  // `prefix_bytes` of the chunk (C order) says so: a chain that is a little-endian bytes codec
  // followed by compressors may then stop early (BytesToBytesCodec::DecodePrefix), leaving the
  // rest of *out unspecified.
  Status Decode(const ChunkSpec& spec, ByteView encoded, Bytes* out, size_t prefix_bytes = SIZE_MAX) const;
  std::optional<size_t> MaxEncodedSize(const ChunkSpec& spec) const;
  std::optional<size_t> FixedEncodedSize(const ChunkSpec& spec) const;
  // The spec the array->bytes codec sees after the array->array codecs.
  Result<ChunkSpec> ArrayToBytesSpec(const ChunkSpec& spec) const;
  // True when the array->bytes codec is `bytes` in this (little-endian) host's byte order, or
  // `bytes` over a 1-byte `dtype`: that step is then a plain copy of its input.
  bool BytesStepIsCopy(DataType dtype) const;
  // True when the chain is such a `bytes` codec alone: a chunk's encoding is the chunk itself.
  bool IsIdentity(DataType dtype) const {
    return array_to_array.empty() && bytes_to_bytes.empty() && BytesStepIsCopy(dtype);
  }
  // The sharding codec when it is the chain's only codec (the layout whose inner chunks can be
  // read and written one by one), else null.
  const ShardingCodec* sharding() const;
  nlohmann::json ToJson() const;
};

}  // namespace tessera
