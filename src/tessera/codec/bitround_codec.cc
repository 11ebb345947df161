#include "tessera/codec/bitround_codec.h"

#include <cstring>

#include "tessera/codec/codec_config.h"

namespace tessera {
namespace {

constexpr const char* kCodec = "numcodecs.bitround";

// Rounds the bit patterns in place: numcodecs' integer arithmetic on the same-width signed view,
// done unsigned so that overflow (NaN and infinity patterns) wraps as numpy's does.
template <typename U>
void RoundBits(uint8_t* data, size_t n, int maskbits) {
  const U mask = static_cast<U>(~U{0} << maskbits);
  const U half_quantum_minus_one = static_cast<U>((U{1} << (maskbits - 1)) - 1);
  for (size_t i = 0; i < n; ++i) {
    U b;
    std::memcpy(&b, data + i * sizeof(U), sizeof(U));
    b = static_cast<U>(b + ((b >> maskbits) & 1) + half_quantum_minus_one);
    b &= mask;
    std::memcpy(data + i * sizeof(U), &b, sizeof(U));
  }
}

}  // namespace

int MantissaBits(DataType dtype) {
  switch (dtype) {
    case DataType::kFloat16: return 10;
    case DataType::kFloat32: return 23;
    case DataType::kFloat64: return 52;
    default: return 0;
  }
}

nlohmann::json BitRoundCodec::ToJson() const {
  return {{"name", kCodec}, {"configuration", {{"keepbits", keepbits_}}}};
}

Result<ChunkSpec> BitRoundCodec::EncodedSpec(const ChunkSpec& decoded) const {
  if (decoded.dtype != dtype_)
    return InvalidArgument(std::string(kCodec) + " codec: configured for " + std::string(DataTypeName(dtype_)) +
                           ", applied to " + std::string(DataTypeName(decoded.dtype)));
  return decoded;
}

Status BitRoundCodec::Encode(const ChunkSpec& decoded, ByteView in, Bytes* out) const {
  if (in.size() != decoded.NumBytes())
    return InvalidArgument(std::string(kCodec) + " codec: input is " + std::to_string(in.size()) + " bytes, expected " +
                           std::to_string(decoded.NumBytes()));
  out->assign(in.begin(), in.end());
  const int maskbits = MantissaBits(dtype_) - keepbits_;
  if (maskbits == 0) return Status::Ok();
  const size_t n = static_cast<size_t>(decoded.NumElements());
  if (dtype_ == DataType::kFloat16) RoundBits<uint16_t>(out->data(), n, maskbits);
  else if (dtype_ == DataType::kFloat32) RoundBits<uint32_t>(out->data(), n, maskbits);
  else RoundBits<uint64_t>(out->data(), n, maskbits);
  return Status::Ok();
}

Status BitRoundCodec::Decode(const ChunkSpec& decoded, ByteView in, Bytes* out) const {
  if (in.size() != decoded.NumBytes())
    return CorruptData(std::string(kCodec) + " codec: encoded input is " + std::to_string(in.size()) + " bytes, expected " +
                       std::to_string(decoded.NumBytes()));
  out->assign(in.begin(), in.end());
  return Status::Ok();
}

Result<std::shared_ptr<const ArrayToArrayCodec>> MakeBitRoundCodec(const nlohmann::json& config, const ChunkSpec& spec) {
  TESSERA_RETURN_IF_ERROR(codec_config::CheckFields(kCodec, config, {"keepbits"}));
  const int mantissa = MantissaBits(spec.dtype);
  if (mantissa == 0)
    return InvalidArgument(std::string(kCodec) + " codec: rounds float16, float32 and float64 arrays, not " +
                           std::string(DataTypeName(spec.dtype)));
  TESSERA_ASSIGN_OR_RETURN(int64_t keepbits, codec_config::GetInt(kCodec, config, "keepbits", std::nullopt, 0, mantissa));
  return std::shared_ptr<const ArrayToArrayCodec>(std::make_shared<const BitRoundCodec>(spec.dtype, static_cast<int>(keepbits)));
}

}  // namespace tessera
