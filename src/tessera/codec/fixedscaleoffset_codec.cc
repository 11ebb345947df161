#include "tessera/codec/fixedscaleoffset_codec.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include "tessera/codec/codec_config.h"
#include "tessera/codec/delta_codec.h"
#include "tessera/codec/numeric_type_dispatch.h"

namespace tessera {
namespace {

constexpr const char* kCodec = "numcodecs.fixedscaleoffset";

// The array types tessera scales with this codec (not float16).
bool IsFloat32Or64(DataType t) { return t == DataType::kFloat32 || t == DataType::kFloat64; }

// numpy's astype from a float to T on x86-64: a float keeps its value (rounded); an integer type
// takes the value through int64 (truncating, then wrapping to T's width), so values just outside
// T's range wrap as numpy's do; NaN and values beyond 64 bits give int64's lowest, wrapped.
template <typename T, typename F>
T ConvertTo(F v) {
  if constexpr (std::is_floating_point_v<T>) {
    return static_cast<T>(v);
  } else {
    constexpr F kTwo63 = static_cast<F>(9223372036854775808.0);
    if (!(v >= -kTwo63 && v < 2 * kTwo63)) return static_cast<T>(std::numeric_limits<int64_t>::lowest());
    if (v >= kTwo63) return static_cast<T>(static_cast<uint64_t>(v));
    return static_cast<T>(static_cast<int64_t>(v));
  }
}

template <typename T, typename E>
void EncodeAs(const uint8_t* in, uint8_t* out, size_t n, double offset, double scale) {
  // (arr - offset) * scale and around in the array's precision (numpy takes Python scalars in it).
  const T o = static_cast<T>(offset), s = static_cast<T>(scale);
  for (size_t i = 0; i < n; ++i) {
    T x;
    std::memcpy(&x, in + i * sizeof(T), sizeof(T));
    const T rounded = std::nearbyint(static_cast<T>(static_cast<T>(x - o) * s));
    const E e = ConvertTo<E>(rounded);
    std::memcpy(out + i * sizeof(E), &e, sizeof(E));
  }
}

template <typename T, typename E>
void DecodeAs(const uint8_t* in, uint8_t* out, size_t n, double offset, double scale) {
  // enc / scale + offset: float64 for an integer astype, astype's own precision for a float one.
  using C = std::conditional_t<std::is_floating_point_v<E>, E, double>;
  const C o = static_cast<C>(offset), s = static_cast<C>(scale);
  for (size_t i = 0; i < n; ++i) {
    E e;
    std::memcpy(&e, in + i * sizeof(E), sizeof(E));
    const C value = static_cast<C>(static_cast<C>(static_cast<C>(e) / s) + o);
    const T x = static_cast<T>(value);
    std::memcpy(out + i * sizeof(T), &x, sizeof(T));
  }
}

}  // namespace

Result<ChunkSpec> FixedScaleOffsetCodec::EncodedSpec(const ChunkSpec& decoded) const {
  if (decoded.dtype != dtype_)
    return InvalidArgument(std::string(kCodec) + " codec: configured for " + std::string(DataTypeName(dtype_)) +
                           ", applied to " + std::string(DataTypeName(decoded.dtype)));
  return ChunkSpec{astype_, decoded.shape, ZeroFill(astype_)};
}

Status FixedScaleOffsetCodec::Encode(const ChunkSpec& decoded, ByteView in, Bytes* out) const {
  if (in.size() != decoded.NumBytes())
    return InvalidArgument(std::string(kCodec) + " codec: input is " + std::to_string(in.size()) + " bytes, expected " +
                           std::to_string(decoded.NumBytes()));
  const size_t n = static_cast<size_t>(decoded.NumElements());
  out->resize(n * ItemSize(astype_));
  WithIntegerOrFloatType(dtype_, [&](auto t) {
    WithIntegerOrFloatType(astype_, [&](auto e) {
      if constexpr (std::is_floating_point_v<decltype(t)>)
        EncodeAs<decltype(t), decltype(e)>(in.data(), out->data(), n, offset_, scale_);
    });
  });
  return Status::Ok();
}

Status FixedScaleOffsetCodec::Decode(const ChunkSpec& decoded, ByteView in, Bytes* out) const {
  const size_t n = static_cast<size_t>(decoded.NumElements());
  if (in.size() != n * ItemSize(astype_))
    return CorruptData(std::string(kCodec) + " codec: encoded input is " + std::to_string(in.size()) + " bytes, expected " +
                       std::to_string(n * ItemSize(astype_)));
  out->resize(n * ItemSize(dtype_));
  WithIntegerOrFloatType(dtype_, [&](auto t) {
    WithIntegerOrFloatType(astype_, [&](auto e) {
      if constexpr (std::is_floating_point_v<decltype(t)>)
        DecodeAs<decltype(t), decltype(e)>(in.data(), out->data(), n, offset_, scale_);
    });
  });
  return Status::Ok();
}

Result<std::shared_ptr<const ArrayToArrayCodec>> MakeFixedScaleOffsetCodec(const nlohmann::json& config, const ChunkSpec& spec) {
  TESSERA_RETURN_IF_ERROR(codec_config::CheckFields(kCodec, config, {"offset", "scale", "dtype", "astype"}));
  double numbers[2];
  const char* names[2] = {"offset", "scale"};
  for (int i = 0; i < 2; ++i) {
    const nlohmann::json* j = codec_config::Find(config, names[i]);
    if (j == nullptr) return InvalidArgument(std::string(kCodec) + " codec: \"" + names[i] + "\" is required");
    if (!j->is_number()) return codec_config::FieldError(kCodec, names[i], "must be a number", *j);
    numbers[i] = j->get<double>();
  }
  if (numbers[1] == 0) return codec_config::FieldError(kCodec, "scale", "must not be 0", config["scale"]);
  TESSERA_ASSIGN_OR_RETURN(std::optional<std::string> dtype_text, codec_config::GetString(kCodec, config, "dtype"));
  if (!dtype_text) return InvalidArgument(std::string(kCodec) + " codec: \"dtype\" is required");
  TESSERA_ASSIGN_OR_RETURN(std::optional<std::string> astype_text, codec_config::GetString(kCodec, config, "astype"));
  Result<NumpyDtype> dtype = ParseNumpyDtype(*dtype_text);
  if (!dtype.ok() || !IsFloat32Or64(dtype->dtype))
    return Unsupported(std::string(kCodec) + " codec: \"dtype\" " + *dtype_text + " (float32 and float64 arrays are supported)");
  Result<NumpyDtype> astype = astype_text ? ParseNumpyDtype(*astype_text) : dtype;
  if (!astype.ok() || astype->dtype == DataType::kFloat16)
    return Unsupported(std::string(kCodec) + " codec: \"astype\" " + astype_text.value_or(*dtype_text) +
                       " (integer types, float32 and float64 are supported)");
  if (dtype->dtype != spec.dtype)
    return InvalidArgument(std::string(kCodec) + " codec: \"dtype\" " + *dtype_text + " does not match the array's " +
                           std::string(DataTypeName(spec.dtype)));
  return std::shared_ptr<const ArrayToArrayCodec>(
      std::make_shared<const FixedScaleOffsetCodec>(numbers[0], numbers[1], dtype->dtype, astype->dtype, config));
}

}  // namespace tessera
