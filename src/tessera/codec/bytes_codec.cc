#include "tessera/codec/bytes_codec.h"

#include <bit>
#include <cstring>

#include "tessera/codec/codec_config.h"
#include "tessera/codec/codec_factories.h"

namespace tessera {

static_assert(std::endian::native == std::endian::little,
              "decoded arrays are little-endian; the bytes codec assumes a little-endian host");

namespace {

template <typename T, typename Swap>
void SwapEach(uint8_t* data, size_t count, Swap swap) {
  for (size_t i = 0; i < count; ++i) {
    T v;
    std::memcpy(&v, data + i * sizeof(T), sizeof(T));
    v = swap(v);
    std::memcpy(data + i * sizeof(T), &v, sizeof(T));
  }
}

}  // namespace

void SwapComponentBytes(MutableByteView data, size_t component_bytes) {
  switch (component_bytes) {
    case 2:
      SwapEach<uint16_t>(data.data(), data.size() / 2,
                         [](uint16_t v) { return __builtin_bswap16(v); });
      break;
    case 4:
      SwapEach<uint32_t>(data.data(), data.size() / 4,
                         [](uint32_t v) { return __builtin_bswap32(v); });
      break;
    case 8:
      SwapEach<uint64_t>(data.data(), data.size() / 8,
                         [](uint64_t v) { return __builtin_bswap64(v); });
      break;
    default: break;
  }
}

nlohmann::json BytesCodec::ToJson() const {
  nlohmann::json j = {{"name", "bytes"}};
  if (endian_) j["configuration"] = {{"endian", *endian_ == Endian::kBig ? "big" : "little"}};
  return j;
}

void BytesCodec::Convert(DataType dtype, ByteView in, Bytes* out) const {
  out->assign(in.begin(), in.end());
  if (endian_ == Endian::kBig) SwapComponentBytes(*out, ComponentSize(dtype));
}

Status BytesCodec::Encode(const ChunkSpec& spec, ByteView array, Bytes* out) const {
  if (array.size() != spec.NumBytes()) {
    return InvalidArgument("bytes codec: array is " + std::to_string(array.size()) +
                           " bytes, spec needs " + std::to_string(spec.NumBytes()));
  }
  Convert(spec.dtype, array, out);
  return Status::Ok();
}

Status BytesCodec::Decode(const ChunkSpec& spec, ByteView encoded, Bytes* out) const {
  if (encoded.size() != spec.NumBytes()) {
    return CorruptData("bytes codec: encoded chunk is " + std::to_string(encoded.size()) +
                       " bytes, expected " + std::to_string(spec.NumBytes()));
  }
  Convert(spec.dtype, encoded, out);
  return Status::Ok();
}

Result<std::shared_ptr<const ArrayToBytesCodec>> MakeBytesCodec(const nlohmann::json& config,
                                                                const ChunkSpec& spec) {
  TESSERA_RETURN_IF_ERROR(codec_config::CheckFields("bytes", config, {"endian"}));
  TESSERA_ASSIGN_OR_RETURN(std::optional<std::string> text,
                           codec_config::GetString("bytes", config, "endian"));
  std::optional<Endian> endian;
  if (!text) {
    // The spec requires "endian" for multi-byte types; zarr-python reads its absence as little.
    if (ItemSize(spec.dtype) > 1) endian = Endian::kLittle;
  } else if (*text == "little") {
    endian = Endian::kLittle;
  } else if (*text == "big") {
    endian = Endian::kBig;
  } else {
    return codec_config::FieldError("bytes", "endian", "must be \"little\" or \"big\"",
                                    nlohmann::json(*text));
  }
  return std::shared_ptr<const ArrayToBytesCodec>(std::make_shared<const BytesCodec>(endian));
}

}  // namespace tessera
