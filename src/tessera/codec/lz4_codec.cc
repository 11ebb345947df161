#include "tessera/codec/lz4_codec.h"

#include <lz4.h>

#include <limits>

#include "tessera/codec/codec_config.h"
#include "tessera/codec/codec_factories.h"

namespace tessera {

nlohmann::json Lz4Codec::ToJson() const {
  return {{"name", "numcodecs.lz4"}, {"configuration", {{"acceleration", acceleration_}}}};
}

std::optional<size_t> Lz4Codec::MaxEncodedSize(size_t decoded_bytes) const {
  if (decoded_bytes > static_cast<size_t>(LZ4_MAX_INPUT_SIZE)) return std::nullopt;
  return 4 + static_cast<size_t>(LZ4_compressBound(static_cast<int>(decoded_bytes)));
}

Status Lz4Codec::Encode(ByteView in, Bytes* out) const {
  if (in.size() > static_cast<size_t>(LZ4_MAX_INPUT_SIZE))
    return InvalidArgument("numcodecs.lz4 codec: " + std::to_string(in.size()) + " bytes exceed LZ4's limit");
  out->resize(*MaxEncodedSize(in.size()));
  for (int i = 0; i < 4; ++i) (*out)[static_cast<size_t>(i)] = static_cast<uint8_t>(in.size() >> (8 * i));
  const int n = LZ4_compress_fast(reinterpret_cast<const char*>(in.data()), reinterpret_cast<char*>(out->data() + 4),
                                  static_cast<int>(in.size()), static_cast<int>(out->size() - 4), acceleration_);
  if (n <= 0) return InvalidArgument("numcodecs.lz4 codec: compression failed");
  out->resize(4 + static_cast<size_t>(n));
  return Status::Ok();
}

Status Lz4Codec::Decode(ByteView in, Bytes* out) const {
  if (in.size() < 4) return CorruptData("numcodecs.lz4 codec: " + std::to_string(in.size()) + " bytes hold no size header");
  const uint32_t size = DecodeFixed32LE(in.data());
  // An LZ4 block expands at most ~255 times, so a larger size is corrupt (and is not allocated).
  const uint64_t most = (uint64_t{in.size()} - 4) * 255 + 16;
  if (size > static_cast<uint32_t>(LZ4_MAX_INPUT_SIZE) || size > most)
    return CorruptData("numcodecs.lz4 codec: a decoded size of " + std::to_string(size) + " bytes from " +
                       std::to_string(in.size() - 4) + " compressed bytes is impossible");
  out->resize(size);
  const int n = LZ4_decompress_safe(reinterpret_cast<const char*>(in.data() + 4), reinterpret_cast<char*>(out->data()),
                                    static_cast<int>(in.size() - 4), static_cast<int>(size));
  if (n < 0 || static_cast<uint32_t>(n) != size)
    return CorruptData("numcodecs.lz4 codec: the block is corrupt or does not decode to its " + std::to_string(size) +
                       " bytes");
  return Status::Ok();
}

Result<std::shared_ptr<const BytesToBytesCodec>> MakeLz4Codec(const nlohmann::json& config) {
  constexpr const char* kCodec = "numcodecs.lz4";
  TESSERA_RETURN_IF_ERROR(codec_config::CheckFields(kCodec, config, {"acceleration"}));
  TESSERA_ASSIGN_OR_RETURN(int64_t a, codec_config::GetInt(kCodec, config, "acceleration", 1, 1, 65537));
  return std::shared_ptr<const BytesToBytesCodec>(std::make_shared<Lz4Codec>(static_cast<int>(a)));
}

}  // namespace tessera
