// One factory per codec, each taking the codec's JSON "configuration" object as written in
// zarr.json (null when the metadata omits it) and, where the codec needs it, the decoded ChunkSpec
// the codec will see. Invalid configurations give kInvalidArgument naming the codec and the field;
// a valid configuration this build cannot honour (a blosc compressor compiled out) gives
// kUnsupported. Defaults for absent fields follow zarr-python:
//   bytes      endian "little" (omitted entirely for 1-byte types when the config omits it)
//   transpose  order is required
//   gzip       level 5
//   zstd       level 0 (the library default), checksum false
//   blosc      cname "zstd", clevel 5, shuffle "bitshuffle" for 1-byte types else "shuffle",
//              typesize ItemSize(spec.dtype), blocksize 0
// Unknown configuration fields are rejected. Each factory returns its codec as the kind interface
// the registry stores; the concrete classes (BytesCodec, ...) are in the codec's own header.
#pragma once

#include <memory>

#include <nlohmann/json.hpp>

#include "tessera/codec/codec.h"
#include "tessera/core/status.h"

namespace tessera {

// `spec.dtype` decides whether "endian" may be omitted.
Result<std::shared_ptr<const ArrayToBytesCodec>> MakeBytesCodec(const nlohmann::json& config,
                                                                const ChunkSpec& spec);
// `spec.shape.size()` is the rank "order" must permute.
Result<std::shared_ptr<const ArrayToArrayCodec>> MakeTransposeCodec(const nlohmann::json& config,
                                                                    const ChunkSpec& spec);
Result<std::shared_ptr<const BytesToBytesCodec>> MakeCrc32cCodec(const nlohmann::json& config);
Result<std::shared_ptr<const BytesToBytesCodec>> MakeGzipCodec(const nlohmann::json& config);
Result<std::shared_ptr<const BytesToBytesCodec>> MakeZstdCodec(const nlohmann::json& config);
// numcodecs' LZ4 (Zarr v2 `lz4`): acceleration 1.
Result<std::shared_ptr<const BytesToBytesCodec>> MakeLz4Codec(const nlohmann::json& config);
// numcodecs' codecs, as zarr-python 3 names them (`numcodecs.<id>`) and Zarr v2 lists them; each
// accepts the numcodecs configuration (without "id").
Result<std::shared_ptr<const BytesToBytesCodec>> MakeZlibCodec(const nlohmann::json& config);
Result<std::shared_ptr<const BytesToBytesCodec>> MakeBz2Codec(const nlohmann::json& config);
Result<std::shared_ptr<const BytesToBytesCodec>> MakeLzmaCodec(const nlohmann::json& config);
enum class Checksum32Kind;
Result<std::shared_ptr<const BytesToBytesCodec>> MakeChecksum32Codec(Checksum32Kind kind, const nlohmann::json& config);
// `spec.dtype` supplies the default elementsize.
Result<std::shared_ptr<const BytesToBytesCodec>> MakeShuffleCodec(const nlohmann::json& config, const ChunkSpec& spec);
// `spec.dtype` must be the configuration's "dtype".
Result<std::shared_ptr<const ArrayToArrayCodec>> MakeDeltaCodec(const nlohmann::json& config, const ChunkSpec& spec);
// `spec.dtype` supplies the default typesize and shuffle.
Result<std::shared_ptr<const BytesToBytesCodec>> MakeBloscCodec(const nlohmann::json& config,
                                                                const ChunkSpec& spec);

}  // namespace tessera
