#include "tessera/codec/delta_codec.h"

#include <cstring>
#include <type_traits>

#include "tessera/codec/codec_config.h"
#include "tessera/codec/codec_factories.h"
#include "tessera/codec/numeric_type_dispatch.h"
#include "tessera/core/dtype.h"

namespace tessera {
namespace {

constexpr const char* kCodec = "numcodecs.delta";

template <typename T>
T Load(const uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

template <typename T>
void Store(uint8_t* p, T v) {
  std::memcpy(p, &v, sizeof(T));
}

// Integer delta: arithmetic in the unsigned type of T's width, so overflow wraps as numpy's does.
template <typename T, typename E>
void EncodeIntegers(const uint8_t* in, uint8_t* out, size_t n) {
  using U = std::make_unsigned_t<T>;
  U previous = 0;
  for (size_t i = 0; i < n; ++i) {
    const U value = static_cast<U>(Load<T>(in + i * sizeof(T)));
    const U difference = i == 0 ? value : static_cast<U>(value - previous);
    Store<E>(out + i * sizeof(E), static_cast<E>(static_cast<std::make_unsigned_t<E>>(difference)));
    previous = value;
  }
}

template <typename T, typename E>
void DecodeIntegers(const uint8_t* in, uint8_t* out, size_t n) {
  using U = std::make_unsigned_t<T>;
  U sum = 0;
  for (size_t i = 0; i < n; ++i) {
    // E -> int64/uint64 extends by E's signedness; the conversion to U then wraps.
    const U addend = static_cast<U>(static_cast<std::conditional_t<std::is_signed_v<E>, int64_t, uint64_t>>(Load<E>(in + i * sizeof(E))));
    sum = static_cast<U>(sum + addend);
    Store<T>(out + i * sizeof(T), static_cast<T>(sum));
  }
}

template <typename T>
void EncodeFloats(const uint8_t* in, uint8_t* out, size_t n) {
  T previous = 0;
  for (size_t i = 0; i < n; ++i) {
    const T value = Load<T>(in + i * sizeof(T));
    Store<T>(out + i * sizeof(T), i == 0 ? value : static_cast<T>(value - previous));
    previous = value;
  }
}

template <typename T>
void DecodeFloats(const uint8_t* in, uint8_t* out, size_t n) {
  T sum = 0;
  for (size_t i = 0; i < n; ++i) {
    sum = i == 0 ? Load<T>(in) : static_cast<T>(sum + Load<T>(in + i * sizeof(T)));
    Store<T>(out + i * sizeof(T), sum);
  }
}

// numpy's float16 arithmetic: each operation in float32, rounded to half.
uint16_t HalfOp(uint16_t a, uint16_t b, bool subtract) {
  const float x = HalfBitsToFloat(a), y = HalfBitsToFloat(b);
  return FloatToHalfBits(static_cast<double>(subtract ? x - y : x + y));
}

void EncodeHalves(const uint8_t* in, uint8_t* out, size_t n) {
  uint16_t previous = 0;
  for (size_t i = 0; i < n; ++i) {
    const uint16_t value = Load<uint16_t>(in + 2 * i);
    Store<uint16_t>(out + 2 * i, i == 0 ? value : HalfOp(value, previous, true));
    previous = value;
  }
}

void DecodeHalves(const uint8_t* in, uint8_t* out, size_t n) {
  uint16_t sum = 0;
  for (size_t i = 0; i < n; ++i) {
    const uint16_t value = Load<uint16_t>(in + 2 * i);
    sum = i == 0 ? value : HalfOp(sum, value, false);
    Store<uint16_t>(out + 2 * i, sum);
  }
}

Status CheckSize(const ChunkSpec& spec, DataType dtype, ByteView in, const char* what) {
  const size_t expected = static_cast<size_t>(spec.NumElements()) * ItemSize(dtype);
  if (in.size() == expected) return Status::Ok();
  const std::string message = std::string(kCodec) + " codec: " + what + " is " + std::to_string(in.size()) +
                              " bytes, expected " + std::to_string(expected);
  return std::string(what) == "encoded input" ? CorruptData(message) : InvalidArgument(message);
}

}  // namespace

Result<NumpyDtype> ParseNumpyDtype(const std::string& text) {
  NumpyDtype out;
  std::string body = text;
  if (!body.empty() && (body[0] == '<' || body[0] == '>' || body[0] == '|' || body[0] == '=')) {
    out.byte_order = body[0] == '=' ? '<' : body[0];
    body = body.substr(1);
  }
  static const std::pair<const char*, DataType> kShortNames[] = {
      {"i1", DataType::kInt8},    {"i2", DataType::kInt16},   {"i4", DataType::kInt32},   {"i8", DataType::kInt64},
      {"u1", DataType::kUInt8},   {"u2", DataType::kUInt16},  {"u4", DataType::kUInt32},  {"u8", DataType::kUInt64},
      {"f2", DataType::kFloat16}, {"f4", DataType::kFloat32}, {"f8", DataType::kFloat64}};
  bool found = false;
  for (const auto& [name, dtype] : kShortNames) {
    if (body == name) {
      out.dtype = dtype;
      found = true;
    }
  }
  if (!found) {
    Result<DataType> named = ParseDataType(body);
    if (!named.ok() || !(IsInteger(*named) || IsRealFloat(*named)))
      return Unsupported("numpy dtype \"" + text + "\" (integer and float types are supported)");
    out.dtype = *named;
  }
  if (ItemSize(out.dtype) == 1) out.byte_order = '|';
  else if (out.byte_order == '|') out.byte_order = '<';
  return out;
}

nlohmann::json DeltaCodec::ToJson() const {
  auto numpy_name = [](DataType t) {
    const char kind = IsInteger(t) ? (DataTypeName(t)[0] == 'u' ? 'u' : 'i') : 'f';
    return std::string(ItemSize(t) == 1 ? "|" : "<") + kind + std::to_string(ItemSize(t));
  };
  return {{"name", "numcodecs.delta"}, {"configuration", {{"dtype", numpy_name(dtype_)}, {"astype", numpy_name(astype_)}}}};
}

Result<ChunkSpec> DeltaCodec::EncodedSpec(const ChunkSpec& decoded) const {
  if (decoded.dtype != dtype_)
    return InvalidArgument(std::string(kCodec) + " codec: configured for " + std::string(DataTypeName(dtype_)) +
                           ", applied to " + std::string(DataTypeName(decoded.dtype)));
  return ChunkSpec{astype_, decoded.shape, ZeroFill(astype_)};
}

Status DeltaCodec::Encode(const ChunkSpec& decoded, ByteView in, Bytes* out) const {
  TESSERA_RETURN_IF_ERROR(CheckSize(decoded, dtype_, in, "input"));
  const size_t n = static_cast<size_t>(decoded.NumElements());
  out->resize(n * ItemSize(astype_));
  if (dtype_ == DataType::kFloat16) EncodeHalves(in.data(), out->data(), n);
  else if (dtype_ == DataType::kFloat32) EncodeFloats<float>(in.data(), out->data(), n);
  else if (dtype_ == DataType::kFloat64) EncodeFloats<double>(in.data(), out->data(), n);
  else
    WithIntegerType(dtype_, [&](auto t) {
      WithIntegerType(astype_, [&](auto e) { EncodeIntegers<decltype(t), decltype(e)>(in.data(), out->data(), n); });
    });
  return Status::Ok();
}

Status DeltaCodec::Decode(const ChunkSpec& decoded, ByteView in, Bytes* out) const {
  const ChunkSpec encoded{astype_, decoded.shape, ZeroFill(astype_)};
  TESSERA_RETURN_IF_ERROR(CheckSize(encoded, astype_, in, "encoded input"));
  const size_t n = static_cast<size_t>(decoded.NumElements());
  out->resize(n * ItemSize(dtype_));
  if (dtype_ == DataType::kFloat16) DecodeHalves(in.data(), out->data(), n);
  else if (dtype_ == DataType::kFloat32) DecodeFloats<float>(in.data(), out->data(), n);
  else if (dtype_ == DataType::kFloat64) DecodeFloats<double>(in.data(), out->data(), n);
  else
    WithIntegerType(dtype_, [&](auto t) {
      WithIntegerType(astype_, [&](auto e) { DecodeIntegers<decltype(t), decltype(e)>(in.data(), out->data(), n); });
    });
  return Status::Ok();
}

Result<std::shared_ptr<const ArrayToArrayCodec>> MakeDeltaCodec(const nlohmann::json& config, const ChunkSpec& spec) {
  TESSERA_RETURN_IF_ERROR(codec_config::CheckFields(kCodec, config, {"dtype", "astype"}));
  TESSERA_ASSIGN_OR_RETURN(std::optional<std::string> dtype_text, codec_config::GetString(kCodec, config, "dtype"));
  if (!dtype_text) return InvalidArgument(std::string(kCodec) + " codec: \"dtype\" is required");
  TESSERA_ASSIGN_OR_RETURN(std::optional<std::string> astype_text, codec_config::GetString(kCodec, config, "astype"));
  Result<NumpyDtype> dtype = ParseNumpyDtype(*dtype_text);
  if (!dtype.ok()) return dtype.status().WithContext(std::string(kCodec) + " codec: \"dtype\"");
  Result<NumpyDtype> astype = astype_text ? ParseNumpyDtype(*astype_text) : dtype;
  if (!astype.ok()) return astype.status().WithContext(std::string(kCodec) + " codec: \"astype\"");
  if (dtype->dtype != spec.dtype)
    return InvalidArgument(std::string(kCodec) + " codec: \"dtype\" " + *dtype_text + " does not match the array's " +
                           std::string(DataTypeName(spec.dtype)));
  const bool integers = IsInteger(dtype->dtype) && IsInteger(astype->dtype);
  if (!integers && dtype->dtype != astype->dtype)
    return Unsupported(std::string(kCodec) + " codec: \"astype\" " + *astype_text + " differs from the floating-point \"dtype\" " +
                       *dtype_text + " (only integer deltas may change type)");
  return std::shared_ptr<const ArrayToArrayCodec>(std::make_shared<const DeltaCodec>(dtype->dtype, astype->dtype));
}

}  // namespace tessera
