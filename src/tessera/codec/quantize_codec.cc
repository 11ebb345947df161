#include "tessera/codec/quantize_codec.h"

#include <cmath>
#include <cstring>

#include "tessera/codec/codec_config.h"
#include "tessera/codec/delta_codec.h"
#include "tessera/core/dtype.h"

namespace tessera {
namespace {

constexpr const char* kCodec = "numcodecs.quantize";

// numcodecs' scale for `digits`, computed with the same libm calls Python makes.
double QuantizeScale(int digits) {
  const double precision = std::pow(10.0, -digits);
  double exponent = std::log10(precision);
  exponent = exponent < 0 ? std::floor(exponent) : std::ceil(exponent);
  const double bits = std::ceil(std::log2(std::pow(10.0, -exponent)));
  return std::pow(2.0, bits);
}

double LoadAsDouble(DataType t, const uint8_t* p) {
  if (t == DataType::kFloat16) {
    uint16_t h;
    std::memcpy(&h, p, 2);
    return HalfBitsToFloat(h);
  }
  if (t == DataType::kFloat32) {
    float f;
    std::memcpy(&f, p, 4);
    return f;
  }
  double d;
  std::memcpy(&d, p, 8);
  return d;
}

// Converts `value` to `t` with one rounding, as numpy's astype does.
void StoreFrom(DataType t, double value, uint8_t* p) {
  if (t == DataType::kFloat16) {
    const uint16_t h = FloatToHalfBits(value);
    std::memcpy(p, &h, 2);
  } else if (t == DataType::kFloat32) {
    const float f = static_cast<float>(value);
    std::memcpy(p, &f, 4);
  } else {
    std::memcpy(p, &value, 8);
  }
}

template <typename T>
void QuantizeInto(const uint8_t* in, uint8_t* out, size_t n, double scale, DataType astype) {
  // numpy computes scale * arr, around and / scale in the array's own precision.
  const T s = static_cast<T>(scale);
  for (size_t i = 0; i < n; ++i) {
    T x;
    std::memcpy(&x, in + i * sizeof(T), sizeof(T));
    const T rounded = static_cast<T>(std::nearbyint(static_cast<T>(s * x)) / s);
    StoreFrom(astype, rounded, out + i * ItemSize(astype));
  }
}

}  // namespace

QuantizeCodec::QuantizeCodec(int digits, DataType dtype, DataType astype)
    : digits_(digits), dtype_(dtype), astype_(astype), scale_(QuantizeScale(digits)) {}

nlohmann::json QuantizeCodec::ToJson() const {
  auto numpy_name = [](DataType t) { return "<f" + std::to_string(ItemSize(t)); };
  return {{"name", kCodec}, {"configuration", {{"digits", digits_}, {"dtype", numpy_name(dtype_)}, {"astype", numpy_name(astype_)}}}};
}

Result<ChunkSpec> QuantizeCodec::EncodedSpec(const ChunkSpec& decoded) const {
  if (decoded.dtype != dtype_)
    return InvalidArgument(std::string(kCodec) + " codec: configured for " + std::string(DataTypeName(dtype_)) +
                           ", applied to " + std::string(DataTypeName(decoded.dtype)));
  return ChunkSpec{astype_, decoded.shape, ZeroFill(astype_)};
}

Status QuantizeCodec::Encode(const ChunkSpec& decoded, ByteView in, Bytes* out) const {
  if (in.size() != decoded.NumBytes())
    return InvalidArgument(std::string(kCodec) + " codec: input is " + std::to_string(in.size()) + " bytes, expected " +
                           std::to_string(decoded.NumBytes()));
  const size_t n = static_cast<size_t>(decoded.NumElements());
  out->resize(n * ItemSize(astype_));
  if (dtype_ == DataType::kFloat32) QuantizeInto<float>(in.data(), out->data(), n, scale_, astype_);
  else QuantizeInto<double>(in.data(), out->data(), n, scale_, astype_);
  return Status::Ok();
}

Status QuantizeCodec::Decode(const ChunkSpec& decoded, ByteView in, Bytes* out) const {
  const size_t n = static_cast<size_t>(decoded.NumElements());
  if (in.size() != n * ItemSize(astype_))
    return CorruptData(std::string(kCodec) + " codec: encoded input is " + std::to_string(in.size()) + " bytes, expected " +
                       std::to_string(n * ItemSize(astype_)));
  out->resize(n * ItemSize(dtype_));
  for (size_t i = 0; i < n; ++i)
    StoreFrom(dtype_, LoadAsDouble(astype_, in.data() + i * ItemSize(astype_)), out->data() + i * ItemSize(dtype_));
  return Status::Ok();
}

Result<std::shared_ptr<const ArrayToArrayCodec>> MakeQuantizeCodec(const nlohmann::json& config, const ChunkSpec& spec) {
  TESSERA_RETURN_IF_ERROR(codec_config::CheckFields(kCodec, config, {"digits", "dtype", "astype"}));
  TESSERA_ASSIGN_OR_RETURN(int64_t digits, codec_config::GetInt(kCodec, config, "digits", std::nullopt, -300, 300));
  TESSERA_ASSIGN_OR_RETURN(std::optional<std::string> dtype_text, codec_config::GetString(kCodec, config, "dtype"));
  if (!dtype_text) return InvalidArgument(std::string(kCodec) + " codec: \"dtype\" is required");
  TESSERA_ASSIGN_OR_RETURN(std::optional<std::string> astype_text, codec_config::GetString(kCodec, config, "astype"));
  Result<NumpyDtype> dtype = ParseNumpyDtype(*dtype_text);
  Result<NumpyDtype> astype = astype_text ? ParseNumpyDtype(*astype_text) : dtype;
  if (!dtype.ok() || (dtype->dtype != DataType::kFloat32 && dtype->dtype != DataType::kFloat64))
    return Unsupported(std::string(kCodec) + " codec: \"dtype\" " + *dtype_text + " (float32 and float64 arrays are quantized)");
  if (!astype.ok() || !IsRealFloat(astype->dtype))
    return Unsupported(std::string(kCodec) + " codec: \"astype\" " + astype_text.value_or(*dtype_text) + " (a float type is needed)");
  if (dtype->dtype != spec.dtype)
    return InvalidArgument(std::string(kCodec) + " codec: \"dtype\" " + *dtype_text + " does not match the array's " +
                           std::string(DataTypeName(spec.dtype)));
  return std::shared_ptr<const ArrayToArrayCodec>(
      std::make_shared<const QuantizeCodec>(static_cast<int>(digits), dtype->dtype, astype->dtype));
}

}  // namespace tessera
