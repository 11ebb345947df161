#include "tessera/core/dtype.h"

#include <cmath>
#include <cstring>
#include <limits>

#include <nlohmann/json.hpp>

namespace tessera {
namespace {

struct TypeInfo {
  DataType type;
  const char* name;
  size_t size;
  size_t component;
};

constexpr TypeInfo kTypes[] = {
    {DataType::kBool, "bool", 1, 1},         {DataType::kInt8, "int8", 1, 1},
    {DataType::kInt16, "int16", 2, 2},       {DataType::kInt32, "int32", 4, 4},
    {DataType::kInt64, "int64", 8, 8},       {DataType::kUInt8, "uint8", 1, 1},
    {DataType::kUInt16, "uint16", 2, 2},     {DataType::kUInt32, "uint32", 4, 4},
    {DataType::kUInt64, "uint64", 8, 8},     {DataType::kFloat16, "float16", 2, 2},
    {DataType::kFloat32, "float32", 4, 4},   {DataType::kFloat64, "float64", 8, 8},
    {DataType::kComplex64, "complex64", 8, 4}, {DataType::kComplex128, "complex128", 16, 8},
};

const TypeInfo& Info(DataType t) { return kTypes[static_cast<int>(t)]; }

template <typename T>
void Store(Bytes* out, T v) {
  out->resize(sizeof(T));
  std::memcpy(out->data(), &v, sizeof(T));
}

}  // namespace

uint16_t FloatToHalfBits(double d) {
  float f = static_cast<float>(d);
  uint32_t x;
  std::memcpy(&x, &f, 4);
  uint32_t sign = (x >> 16) & 0x8000u;
  int32_t exp = static_cast<int32_t>((x >> 23) & 0xff);
  uint32_t mant = x & 0x7fffffu;
  if (exp == 0xff) return static_cast<uint16_t>(sign | 0x7c00u | (mant ? 0x200u : 0));
  int32_t e = exp - 127 + 15;
  if (e >= 31) return static_cast<uint16_t>(sign | 0x7c00u);
  if (e <= 0) {
    if (e < -10) return static_cast<uint16_t>(sign);
    mant |= 0x800000u;
    uint32_t shift = static_cast<uint32_t>(14 - e);
    uint32_t half = mant >> shift;
    uint32_t rem = mant & ((1u << shift) - 1);
    uint32_t halfway = 1u << (shift - 1);
    if (rem > halfway || (rem == halfway && (half & 1))) ++half;
    return static_cast<uint16_t>(sign | half);
  }
  uint32_t half = sign | (static_cast<uint32_t>(e) << 10) | (mant >> 13);
  uint32_t rem = mant & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (half & 1))) ++half;
  return static_cast<uint16_t>(half);
}

float HalfBitsToFloat(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1fu;
  const uint32_t mant = h & 0x3ffu;
  uint32_t bits;
  if (exp == 0) {  // zero or subnormal: mant * 2^-24, exact in a float
    const float magnitude = static_cast<float>(mant) * 5.9604644775390625e-8f;
    std::memcpy(&bits, &magnitude, 4);
    bits |= sign;
  } else if (exp == 31) {  // infinity or NaN (payload kept)
    bits = sign | 0x7f800000u | (mant << 13);
  } else {
    bits = sign | ((exp + 112) << 23) | (mant << 13);
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

namespace {

Result<double> ParseFloatJson(const nlohmann::json& j) {
  if (j.is_number()) return j.get<double>();
  if (j.is_string()) {
    const std::string s = j.get<std::string>();
    if (s == "NaN") return std::numeric_limits<double>::quiet_NaN();
    if (s == "Infinity") return std::numeric_limits<double>::infinity();
    if (s == "-Infinity") return -std::numeric_limits<double>::infinity();
  }
  return InvalidArgument("fill_value " + j.dump() + " is not a floating-point value");
}

// "0x7fc00000" -> raw little-endian bytes of `size` bytes.
Result<Bytes> ParseHexBits(const std::string& s, size_t size) {
  if (s.size() != 2 + 2 * size || s[0] != '0' || (s[1] != 'x' && s[1] != 'X'))
    return InvalidArgument("fill_value \"" + s + "\" is not a " + std::to_string(2 * size) +
                           "-digit hex value");
  uint64_t v = 0;
  for (size_t i = 2; i < s.size(); ++i) {
    char c = s[i];
    int d = (c >= '0' && c <= '9') ? c - '0' : (c >= 'a' && c <= 'f') ? c - 'a' + 10
            : (c >= 'A' && c <= 'F') ? c - 'A' + 10 : -1;
    if (d < 0) return InvalidArgument("fill_value \"" + s + "\" has a non-hex digit");
    v = (v << 4) | static_cast<uint64_t>(d);
  }
  Bytes out(size);
  for (size_t i = 0; i < size; ++i) out[i] = static_cast<uint8_t>(v >> (8 * i));
  return out;
}

Result<Bytes> ParseFloatComponent(const nlohmann::json& j, size_t size) {
  if (j.is_string()) {
    std::string s = j.get<std::string>();
    if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) return ParseHexBits(s, size);
  }
  TESSERA_ASSIGN_OR_RETURN(double d, ParseFloatJson(j));
  Bytes out;
  if (size == 2) Store<uint16_t>(&out, FloatToHalfBits(d));
  else if (size == 4) Store<float>(&out, static_cast<float>(d));
  else Store<double>(&out, d);
  return out;
}

template <typename T>
Result<Bytes> ParseInteger(const nlohmann::json& j) {
  if (j.is_number_integer() || j.is_number_unsigned()) {
    if constexpr (std::is_signed_v<T>) {
      if (j.is_number_unsigned() && j.get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<T>::max()))
        return InvalidArgument("fill_value " + j.dump() + " out of range");
      int64_t v = j.get<int64_t>();
      if (v < std::numeric_limits<T>::min() || v > std::numeric_limits<T>::max())
        return InvalidArgument("fill_value " + j.dump() + " out of range");
      Bytes out;
      Store<T>(&out, static_cast<T>(v));
      return out;
    } else {
      if (!j.is_number_unsigned() && j.get<int64_t>() < 0)
        return InvalidArgument("fill_value " + j.dump() + " out of range");
      uint64_t v = j.get<uint64_t>();
      if (v > std::numeric_limits<T>::max()) return InvalidArgument("fill_value " + j.dump() + " out of range");
      Bytes out;
      Store<T>(&out, static_cast<T>(v));
      return out;
    }
  }
  if (j.is_number_float()) {
    double d = j.get<double>();
    if (d == std::floor(d) && d >= static_cast<double>(std::numeric_limits<T>::min()) &&
        d <= static_cast<double>(std::numeric_limits<T>::max())) {
      Bytes out;
      Store<T>(&out, static_cast<T>(d));
      return out;
    }
  }
  if (j.is_string()) {
    std::string s = j.get<std::string>();
    if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) return ParseHexBits(s, sizeof(T));
  }
  return InvalidArgument("fill_value " + j.dump() + " is not an integer");
}

template <typename T>
T Load(const Bytes& b) {
  T v;
  std::memcpy(&v, b.data(), sizeof(T));
  return v;
}

nlohmann::json FloatToJson(const uint8_t* p, size_t size) {
  double d;
  if (size == 2) {
    uint16_t h;
    std::memcpy(&h, p, 2);
    d = HalfBitsToFloat(h);
  } else if (size == 4) {
    float f;
    std::memcpy(&f, p, 4);
    d = f;
  } else {
    std::memcpy(&d, p, 8);
  }
  if (std::isnan(d)) {
    // Canonical quiet NaN is "NaN"; any other payload keeps its bits as hex.
    uint64_t bits = 0;
    for (size_t i = 0; i < size; ++i) bits |= static_cast<uint64_t>(p[i]) << (8 * i);
    uint64_t canonical = size == 2 ? 0x7e00u : size == 4 ? 0x7fc00000u : 0x7ff8000000000000ull;
    if (bits == canonical) return "NaN";
    char buf[40];
    std::snprintf(buf, sizeof buf, "0x%0*llx", static_cast<int>(2 * size),
                  static_cast<unsigned long long>(bits));
    return std::string(buf);
  }
  if (std::isinf(d)) return d > 0 ? "Infinity" : "-Infinity";
  return d;
}

}  // namespace

size_t ItemSize(DataType t) { return Info(t).size; }
size_t ComponentSize(DataType t) { return Info(t).component; }
std::string_view DataTypeName(DataType t) { return Info(t).name; }

Result<DataType> ParseDataType(std::string_view name) {
  for (const auto& info : kTypes)
    if (name == info.name) return info.type;
  return Unsupported("unsupported data type \"" + std::string(name) +
                     "\" (supported: bool, int8..int64, uint8..uint64, float16, float32, float64, "
                     "complex64, complex128)");
}

bool IsFloatingPoint(DataType t) {
  return t == DataType::kFloat16 || t == DataType::kFloat32 || t == DataType::kFloat64 ||
         t == DataType::kComplex64 || t == DataType::kComplex128;
}

bool IsInteger(DataType t) {
  return IsSignedInteger(t) || t == DataType::kUInt8 || t == DataType::kUInt16 || t == DataType::kUInt32 ||
         t == DataType::kUInt64;
}

bool IsSignedInteger(DataType t) {
  return t == DataType::kInt8 || t == DataType::kInt16 || t == DataType::kInt32 || t == DataType::kInt64;
}

bool IsRealFloat(DataType t) { return t == DataType::kFloat16 || t == DataType::kFloat32 || t == DataType::kFloat64; }

bool FillValue::IsZero() const {
  for (uint8_t b : bytes)
    if (b) return false;
  return true;
}

FillValue ZeroFill(DataType dtype) { return FillValue{Bytes(ItemSize(dtype), 0)}; }

Result<FillValue> ParseFillValue(DataType dtype, const nlohmann::json& j) {
  FillValue fv;
  switch (dtype) {
    case DataType::kBool:
      if (!j.is_boolean()) return InvalidArgument("fill_value " + j.dump() + " is not a boolean");
      fv.bytes = {static_cast<uint8_t>(j.get<bool>() ? 1 : 0)};
      return fv;
    case DataType::kInt8: { TESSERA_ASSIGN_OR_RETURN(fv.bytes, ParseInteger<int8_t>(j)); return fv; }
    case DataType::kInt16: { TESSERA_ASSIGN_OR_RETURN(fv.bytes, ParseInteger<int16_t>(j)); return fv; }
    case DataType::kInt32: { TESSERA_ASSIGN_OR_RETURN(fv.bytes, ParseInteger<int32_t>(j)); return fv; }
    case DataType::kInt64: { TESSERA_ASSIGN_OR_RETURN(fv.bytes, ParseInteger<int64_t>(j)); return fv; }
    case DataType::kUInt8: { TESSERA_ASSIGN_OR_RETURN(fv.bytes, ParseInteger<uint8_t>(j)); return fv; }
    case DataType::kUInt16: { TESSERA_ASSIGN_OR_RETURN(fv.bytes, ParseInteger<uint16_t>(j)); return fv; }
    case DataType::kUInt32: { TESSERA_ASSIGN_OR_RETURN(fv.bytes, ParseInteger<uint32_t>(j)); return fv; }
    case DataType::kUInt64: { TESSERA_ASSIGN_OR_RETURN(fv.bytes, ParseInteger<uint64_t>(j)); return fv; }
    case DataType::kFloat16:
    case DataType::kFloat32:
    case DataType::kFloat64: {
      TESSERA_ASSIGN_OR_RETURN(fv.bytes, ParseFloatComponent(j, ItemSize(dtype)));
      return fv;
    }
    case DataType::kComplex64:
    case DataType::kComplex128: {
      if (!j.is_array() || j.size() != 2)
        return InvalidArgument("fill_value " + j.dump() + " for a complex type must be [real, imag]");
      size_t c = ComponentSize(dtype);
      TESSERA_ASSIGN_OR_RETURN(Bytes re, ParseFloatComponent(j[0], c));
      TESSERA_ASSIGN_OR_RETURN(Bytes im, ParseFloatComponent(j[1], c));
      fv.bytes = re;
      fv.bytes.insert(fv.bytes.end(), im.begin(), im.end());
      return fv;
    }
  }
  return Unsupported("fill_value for this data type");
}

nlohmann::json FillValueToJson(DataType dtype, const FillValue& fill) {
  const Bytes& b = fill.bytes;
  switch (dtype) {
    case DataType::kBool: return b[0] != 0;
    case DataType::kInt8: return Load<int8_t>(b);
    case DataType::kInt16: return Load<int16_t>(b);
    case DataType::kInt32: return Load<int32_t>(b);
    case DataType::kInt64: return Load<int64_t>(b);
    case DataType::kUInt8: return Load<uint8_t>(b);
    case DataType::kUInt16: return Load<uint16_t>(b);
    case DataType::kUInt32: return Load<uint32_t>(b);
    case DataType::kUInt64: return Load<uint64_t>(b);
    case DataType::kFloat16:
    case DataType::kFloat32:
    case DataType::kFloat64: return FloatToJson(b.data(), b.size());
    case DataType::kComplex64:
    case DataType::kComplex128: {
      size_t c = ComponentSize(dtype);
      return nlohmann::json::array({FloatToJson(b.data(), c), FloatToJson(b.data() + c, c)});
    }
  }
  return nullptr;
}

void FillElements(uint8_t* dst, size_t count, const FillValue& fill) {
  const size_t n = fill.bytes.size();
  if (fill.IsZero()) {
    std::memset(dst, 0, count * n);
    return;
  }
  if (count == 0) return;
  std::memcpy(dst, fill.bytes.data(), n);
  size_t done = 1;
  while (done < count) {  // doubling copy
    size_t m = std::min(done, count - done);
    std::memcpy(dst + done * n, dst, m * n);
    done += m;
  }
}

bool IsAllFill(ByteView chunk, const FillValue& fill) {
  const size_t n = fill.bytes.size();
  if (fill.IsZero()) {
    // Word-at-a-time zero check.
    size_t i = 0;
    const uint8_t* p = chunk.data();
    for (; i + 8 <= chunk.size(); i += 8) {
      uint64_t w;
      std::memcpy(&w, p + i, 8);
      if (w) return false;
    }
    for (; i < chunk.size(); ++i)
      if (p[i]) return false;
    return true;
  }
  for (size_t i = 0; i < chunk.size(); i += n)
    if (std::memcmp(chunk.data() + i, fill.bytes.data(), n) != 0) return false;
  return true;
}

}  // namespace tessera
