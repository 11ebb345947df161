#include "tessera/codec/shuffle_codec.h"

#include "tessera/codec/byte_shuffle.h"
#include "tessera/codec/codec_config.h"
#include "tessera/codec/codec_factories.h"

namespace tessera {

nlohmann::json ShuffleCodec::ToJson() const {
  return {{"name", "numcodecs.shuffle"}, {"configuration", {{"elementsize", element_bytes_}}}};
}

Status ShuffleCodec::Encode(ByteView in, Bytes* out) const {
  // An empty input may have a null data(): nothing to shuffle, and no pointer arithmetic on it.
  if (element_bytes_ <= 1 || in.empty()) {
    out->assign(in.begin(), in.end());
    return Status::Ok();
  }
  if (in.size() % element_bytes_ != 0)
    return InvalidArgument("numcodecs.shuffle codec: " + std::to_string(in.size()) + " bytes are not a multiple of the elementsize " + std::to_string(element_bytes_));
  out->resize(in.size());
  ByteShuffle(element_bytes_, in.size(), in.data(), out->data());
  return Status::Ok();
}

Status ShuffleCodec::Decode(ByteView in, Bytes* out) const {
  if (element_bytes_ <= 1 || in.empty()) {
    out->assign(in.begin(), in.end());
    return Status::Ok();
  }
  if (in.size() % element_bytes_ != 0)
    return CorruptData("numcodecs.shuffle codec: " + std::to_string(in.size()) + " bytes are not a multiple of the elementsize " + std::to_string(element_bytes_));
  out->resize(in.size());
  ByteUnshuffle(element_bytes_, in.size(), in.data(), out->data());
  return Status::Ok();
}

Result<std::shared_ptr<const BytesToBytesCodec>> MakeShuffleCodec(const nlohmann::json& config, const ChunkSpec& spec) {
  constexpr const char* kCodec = "numcodecs.shuffle";
  TESSERA_RETURN_IF_ERROR(codec_config::CheckFields(kCodec, config, {"elementsize"}));
  // zarr-python fills in the array's item size when the configuration leaves it out.
  const nlohmann::json* given = codec_config::Find(config, "elementsize");
  const int64_t fallback = static_cast<int64_t>(ItemSize(spec.dtype));
  int64_t element_bytes = fallback;
  if (given != nullptr && !given->is_null()) {
    TESSERA_ASSIGN_OR_RETURN(element_bytes, codec_config::GetInt(kCodec, config, "elementsize", fallback, 0, 1 << 20));
  }
  return std::shared_ptr<const BytesToBytesCodec>(std::make_shared<const ShuffleCodec>(static_cast<size_t>(element_bytes)));
}

}  // namespace tessera
