#include "tessera/hdf5/h5_datatype_json.h"

#include <algorithm>

#include "tessera/core/dtype.h"
#include "tessera/hdf5/h5_datatype_numpy.h"

namespace tessera::hdf5 {
namespace {

// A string's bytes up to its first NUL, trailing spaces dropped, as UTF-8 text (invalid bytes
// written \xNN).
std::string Text(ByteView bytes) {
  std::string raw(bytes.begin(), std::find(bytes.begin(), bytes.end(), uint8_t{0}));
  while (!raw.empty() && raw.back() == ' ') raw.pop_back();
  return Utf8Name(raw);
}

std::string Hex(ByteView bytes) {
  static const char* kHex = "0123456789abcdef";
  std::string out = "0x";
  for (uint8_t b : bytes) {
    out += kHex[b >> 4];
    out += kHex[b & 15];
  }
  return out;
}

nlohmann::json Scalar(DataType dtype, ByteView bytes) {
  FillValue v;
  v.bytes.assign(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(ItemSize(dtype)));
  return FillValueToJson(dtype, v);
}

nlohmann::json Integer(const H5Type& t, ByteView bytes) {
  const bool is_signed = t.cls == H5TypeClass::kFixedPoint && t.is_signed;
  switch (t.size) {
    case 1: return Scalar(is_signed ? DataType::kInt8 : DataType::kUInt8, bytes);
    case 2: return Scalar(is_signed ? DataType::kInt16 : DataType::kUInt16, bytes);
    case 4: return Scalar(is_signed ? DataType::kInt32 : DataType::kUInt32, bytes);
    case 8: return Scalar(is_signed ? DataType::kInt64 : DataType::kUInt64, bytes);
  }
  return Hex(bytes);
}

nlohmann::json Float(const H5Type& t, ByteView bytes) {
  switch (t.size) {
    case 2: return Scalar(DataType::kFloat16, bytes);
    case 4: return Scalar(DataType::kFloat32, bytes);
    case 8: return Scalar(DataType::kFloat64, bytes);
  }
  return Hex(bytes);  // x87 extended and other wide floats: their bytes
}

// The array's elements from dimension `d` on, as nested lists.
nlohmann::json ArrayToJson(const H5Type& t, ByteView bytes, size_t d) {
  const H5Type& base = t.Base();
  size_t inner = base.size;
  for (size_t k = d + 1; k < t.array_dims.size(); ++k) inner *= t.array_dims[k];
  nlohmann::json out = nlohmann::json::array();
  for (uint32_t i = 0; i < t.array_dims[d]; ++i) {
    ByteView part = bytes.subspan(i * inner, inner);
    out.push_back(d + 1 == t.array_dims.size() ? ElementToJson(base, part) : ArrayToJson(t, part, d + 1));
  }
  return out;
}

}  // namespace

nlohmann::json ElementToJson(const H5Type& t, ByteView element) {
  if (element.size() < t.size) return "<truncated>";
  ByteView bytes = element.subspan(0, t.size);
  switch (t.cls) {
    case H5TypeClass::kFixedPoint:
    case H5TypeClass::kBitfield: return Integer(t, bytes);
    case H5TypeClass::kFloatingPoint: return Float(t, bytes);
    case H5TypeClass::kEnumeration:
      if (t.enum_names.size() == 2 && t.enum_names[0] == "FALSE" && t.enum_names[1] == "TRUE" && t.size == 1)
        return bytes[0] != 0;
      return Integer(t.Base(), bytes);
    case H5TypeClass::kComplex:
      return nlohmann::json::array({Float(t.Base(), bytes), Float(t.Base(), bytes.subspan(t.Base().size))});
    case H5TypeClass::kString: return Text(bytes);
    case H5TypeClass::kOpaque: return Hex(bytes);
    case H5TypeClass::kCompound: {
      nlohmann::json out = nlohmann::json::object();
      for (const H5Member& m : t.members) out[Text(AsView(m.name))] = ElementToJson(m.type.front(), bytes.subspan(m.offset));
      return out;
    }
    case H5TypeClass::kArray: return ArrayToJson(t, bytes, 0);
    case H5TypeClass::kVariableLength:
    case H5TypeClass::kReference:
    case H5TypeClass::kTime: return "<" + H5TypeClassName(t.cls) + ">";
  }
  return nullptr;
}

}  // namespace tessera::hdf5
