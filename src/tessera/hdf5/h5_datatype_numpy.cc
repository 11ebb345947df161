#include "tessera/hdf5/h5_datatype_numpy.h"
#include "tessera/hdf5/h5_references.h"
#include "tessera/hdf5/h5_vlen.h"

#include <algorithm>
#include <cstring>

namespace tessera::hdf5 {
namespace {

// A conversion of many steps (arrays of compounds expanded) is refused beyond this.
constexpr size_t kMaxSteps = 1 << 16;

// One mapped (sub)type: its numpy form, tessera type when it is one, and description.
struct Mapped {
  nlohmann::json numpy;
  std::optional<DataType> dtype;
  std::string description;
};

// x87 80-bit extended precision in a 12-byte element (C's long double on 32-bit x86 hosts): the
// same fields as the 16-byte form, 2 bytes of padding after them.
bool IsX87In12Bytes(const H5Type& t) {
  return t.cls == H5TypeClass::kFloatingPoint && t.size == 12 && t.precision == 80 && t.bit_offset == 0 &&
         t.exponent_location == 64 && t.exponent_size == 15 && t.mantissa_location == 0 && t.mantissa_size == 64 &&
         t.exponent_bias == 16383 && t.sign_location == 79 && t.mantissa_normalization == 0 &&
         !(t.vax_order && t.version >= 3);
}

std::string ByteOrderText(const H5Type& t) {
  if (t.size == 1) return "";
  return t.big_endian ? " (big-endian)" : " (little-endian)";
}

std::string NumpyCode(DataType d) {
  const size_t size = ItemSize(d);
  const char order = size == 1 ? '|' : '<';
  switch (d) {
    case DataType::kBool: return "|b1";
    case DataType::kInt8: case DataType::kInt16: case DataType::kInt32: case DataType::kInt64:
      return std::string(1, order) + "i" + std::to_string(size);
    case DataType::kUInt8: case DataType::kUInt16: case DataType::kUInt32: case DataType::kUInt64:
      return std::string(1, order) + "u" + std::to_string(size);
    case DataType::kFloat16: case DataType::kFloat32: case DataType::kFloat64:
      return "<f" + std::to_string(size);
    case DataType::kComplex64: case DataType::kComplex128: return "<c" + std::to_string(size);
  }
  return "|u1";
}

Result<DataType> IntegerType(uint32_t size, bool is_signed, const std::string& where) {
  switch (size) {
    case 1: return is_signed ? DataType::kInt8 : DataType::kUInt8;
    case 2: return is_signed ? DataType::kInt16 : DataType::kUInt16;
    case 4: return is_signed ? DataType::kInt32 : DataType::kUInt32;
    case 8: return is_signed ? DataType::kInt64 : DataType::kUInt64;
  }
  return Unsupported(where + ": " + std::to_string(size) + "-byte integers (numpy has 1, 2, 4 and 8)");
}

// A byte swap of the `size`-byte scalar at `offset` (the other fields keep their defaults).
ConvertStep SwapStep(uint32_t offset, uint32_t size) {
  ConvertStep s;
  s.kind = ConvertStep::Kind::kSwap;
  s.offset = offset;
  s.size = size;
  return s;
}

class Mapper {
 public:
  explicit Mapper(std::string where) : where_(std::move(where)) {}
  std::vector<ConvertStep> steps;

  Result<Mapped> Map(const H5Type& t, uint32_t offset) {
    switch (t.cls) {
      case H5TypeClass::kFixedPoint:
      case H5TypeClass::kBitfield: return MapInteger(t, offset);
      case H5TypeClass::kFloatingPoint: return MapFloat(t, offset);
      case H5TypeClass::kEnumeration: return MapEnumeration(t, offset);
      case H5TypeClass::kString:
        if (t.string_padding == 0 || t.string_padding == 2) {
          ConvertStep s;
          s.kind = t.string_padding == 0 ? ConvertStep::Kind::kNullTerminated : ConvertStep::Kind::kSpacePadded;
          s.offset = offset;
          s.size = t.size;
          TESSERA_RETURN_IF_ERROR(AddStep(s));
        }
        return Mapped{"|S" + std::to_string(t.size), std::nullopt,
                      std::string(t.charset == 1 ? "UTF-8" : "ASCII") + " string[" + std::to_string(t.size) + "]"};
      case H5TypeClass::kOpaque:
        return Mapped{"|V" + std::to_string(t.size), std::nullopt,
                      "opaque[" + std::to_string(t.size) + "]" + (t.opaque_tag.empty() ? "" : " \"" + Utf8Name(t.opaque_tag) + "\"")};
      case H5TypeClass::kCompound: return MapCompound(t, offset);
      case H5TypeClass::kArray: return MapArray(t, offset);
      case H5TypeClass::kComplex: {
        TESSERA_ASSIGN_OR_RETURN(Mapped part, MapFloat(t.Base(), offset));
        if (part.dtype != DataType::kFloat32 && part.dtype != DataType::kFloat64)
          return Unsupported(where_ + ": complex numbers of " + std::to_string(t.Base().size) +
                             "-byte parts (numpy has complex64 and complex128)");
        TESSERA_RETURN_IF_ERROR(MapFloat(t.Base(), offset + t.Base().size).status());
        const DataType d = part.dtype == DataType::kFloat32 ? DataType::kComplex64 : DataType::kComplex128;
        return Mapped{NumpyCode(d), d, std::string(DataTypeName(d)) + ByteOrderText(t.Base())};
      }
      case H5TypeClass::kVariableLength:
        // Types holding variable-length data read as objects (h5_vlen_value.h), never through
        // this fixed-size mapping.
        return Unsupported(where_ + ": variable-length " + std::string(t.vlen_string ? "strings" : "sequences") +
                           " inside a compound or array datatype");
      case H5TypeClass::kReference: return Unsupported(where_ + ": reference datatypes (object and region references)");
      case H5TypeClass::kTime: return Unsupported(where_ + ": time datatypes");
    }
    return Unsupported(where_ + ": " + H5TypeClassName(t.cls) + " datatypes");
  }

 private:
  Status AddStep(ConvertStep s) {
    if (steps.size() >= kMaxSteps)
      return Unsupported(where_ + ": an element of more than " + std::to_string(kMaxSteps) + " converted fields");
    steps.push_back(s);
    return Status::Ok();
  }

  Result<Mapped> MapInteger(const H5Type& t, uint32_t offset) {
    const bool is_signed = t.cls == H5TypeClass::kFixedPoint && t.is_signed;
    TESSERA_ASSIGN_OR_RETURN(DataType d, IntegerType(t.size, is_signed, where_));
    std::string description = std::string(DataTypeName(d)) + ByteOrderText(t);
    if (t.cls == H5TypeClass::kBitfield) description = "bitfield " + description;
    if (t.bit_offset != 0 || t.precision != t.size * 8) {
      ConvertStep s;
      s.kind = ConvertStep::Kind::kUnpackInteger;
      s.offset = offset;
      s.size = t.size;
      s.big_endian = t.big_endian;
      s.is_signed = is_signed;
      s.bit_offset = t.bit_offset;
      s.precision = t.precision;
      TESSERA_RETURN_IF_ERROR(AddStep(s));
      description += " (" + std::to_string(t.precision) + " bits at bit " + std::to_string(t.bit_offset) + ")";
    } else if (t.big_endian && t.size > 1) {
      TESSERA_RETURN_IF_ERROR(AddStep(SwapStep(offset, t.size)));
    }
    return Mapped{NumpyCode(d), d, description};
  }

  Result<Mapped> MapFloat(const H5Type& t, uint32_t offset) {
    // HDF5 reads the VAX bit from version 3 messages on; the other layouts take the general path.
    const bool vax = t.vax_order && t.version >= 3;
    const bool ieee_sign = t.sign_location == t.size * 8 - 1;
    const bool implied_one = t.mantissa_normalization == 2;
    struct Ieee {
      uint32_t size;
      uint8_t el, es, ml, ms;
      uint32_t bias;
      DataType dtype;
    };
    static constexpr Ieee kIeee[] = {{2, 10, 5, 0, 10, 15, DataType::kFloat16},
                                     {4, 23, 8, 0, 23, 127, DataType::kFloat32},
                                     {8, 52, 11, 0, 52, 1023, DataType::kFloat64}};
    for (const Ieee& f : kIeee) {
      if (f.size == t.size && f.el == t.exponent_location && f.es == t.exponent_size && f.ml == t.mantissa_location &&
          f.ms == t.mantissa_size && f.bias == t.exponent_bias && t.bit_offset == 0 && t.precision == t.size * 8 &&
          !vax && ieee_sign && implied_one) {
        if (t.big_endian && t.size > 1) TESSERA_RETURN_IF_ERROR(AddStep(SwapStep(offset, t.size)));
        return Mapped{NumpyCode(f.dtype), f.dtype, std::string(DataTypeName(f.dtype)) + ByteOrderText(t)};
      }
    }
    // x87 80-bit extended precision in 16 bytes (C's long double on x86-64, HDF5's
    // NATIVE_LDOUBLE there): numpy's float128 on those hosts, as h5py maps it.
    if (t.size == 16 && t.precision == 80 && t.bit_offset == 0 && t.exponent_location == 64 && t.exponent_size == 15 &&
        t.mantissa_location == 0 && t.mantissa_size == 64 && t.exponent_bias == 16383 && !vax && t.sign_location == 79 &&
        t.mantissa_normalization == 0) {
      if (t.big_endian) TESSERA_RETURN_IF_ERROR(AddStep(SwapStep(offset, t.size)));
      return Mapped{"<f16", std::nullopt, "float128 (x87 80-bit extended)" + ByteOrderText(t)};
    }
    return MapOtherFloat(t, offset);
  }

  // Any other layout: converted to the float of the element's size, which keeps the element's
  // bytes in place (h5py would pick the smallest numpy float wide enough, changing the size).
  Result<Mapped> MapOtherFloat(const H5Type& t, uint32_t offset) {
    TESSERA_ASSIGN_OR_RETURN(FloatLayout layout, FloatLayoutOf(t, where_));
    ConvertStep s;
    s.kind = ConvertStep::Kind::kConvertFloat;
    s.offset = offset;
    s.size = t.size;
    s.float_layout = layout;
    TESSERA_RETURN_IF_ERROR(AddStep(s));
    const std::string from = " (from " + FloatLayoutText(layout) + ")";
    if (t.size == 16) return Mapped{"<f16", std::nullopt, "float128 (x87 80-bit extended)" + from};
    const DataType d = t.size == 2 ? DataType::kFloat16 : t.size == 4 ? DataType::kFloat32 : DataType::kFloat64;
    return Mapped{NumpyCode(d), d, std::string(DataTypeName(d)) + from};
  }

  Result<Mapped> MapEnumeration(const H5Type& t, uint32_t offset) {
    const H5Type& base = t.Base();
    // h5py stores numpy bool as enum int8 {FALSE = 0, TRUE = 1}.
    if (base.size == 1 && t.enum_names.size() == 2 && t.enum_names[0] == "FALSE" && t.enum_names[1] == "TRUE" &&
        t.enum_values[0][0] == 0 && t.enum_values[1][0] == 1)
      return Mapped{"|b1", DataType::kBool, "bool (enum FALSE/TRUE)"};
    TESSERA_ASSIGN_OR_RETURN(Mapped m, MapInteger(base, offset));
    std::string names;
    for (size_t i = 0; i < t.enum_names.size(); ++i) {
      if (i == 8) {
        names += ", ... (" + std::to_string(t.enum_names.size()) + " names)";
        break;
      }
      int64_t v = 0;
      Bytes value = t.enum_values[i];
      if (base.big_endian) std::reverse(value.begin(), value.end());
      uint64_t u = 0;
      std::memcpy(&u, value.data(), std::min<size_t>(8, value.size()));
      v = static_cast<int64_t>(u);
      if (base.is_signed && value.size() < 8 && (u >> (value.size() * 8 - 1)) & 1)
        v = static_cast<int64_t>(u | (~uint64_t{0} << (value.size() * 8)));
      names += (i ? ", " : "") + Utf8Name(t.enum_names[i]) + " = " + std::to_string(v);
    }
    m.description = "enum " + m.description + " {" + names + "}";
    return m;
  }

  Result<Mapped> MapCompound(const H5Type& t, uint32_t offset) {
    // h5py's complex convention: two floats of one size named r and i, back to back.
    if (t.members.size() == 2 && t.members[0].name == "r" && t.members[1].name == "i") {
      const H5Type& re = t.members[0].type.front();
      const H5Type& im = t.members[1].type.front();
      if (re.cls == H5TypeClass::kFloatingPoint && im.cls == H5TypeClass::kFloatingPoint && re.size == im.size &&
          (re.size == 4 || re.size == 8) && t.members[0].offset == 0 && t.members[1].offset == re.size &&
          t.size == 2 * re.size && re.big_endian == im.big_endian) {
        const size_t before = steps.size();
        Result<Mapped> a = MapFloat(re, offset), b = MapFloat(im, offset + re.size);
        if (a.ok() && b.ok()) {
          const DataType d = re.size == 4 ? DataType::kComplex64 : DataType::kComplex128;
          return Mapped{NumpyCode(d), d, std::string(DataTypeName(d)) + " (compound r/i" + ByteOrderText(re) + ")"};
        }
        steps.resize(before);
      }
    }
    nlohmann::json names = nlohmann::json::array(), formats = nlohmann::json::array(),
                   offsets = nlohmann::json::array();
    std::string description = "compound {";
    for (size_t i = 0; i < t.members.size(); ++i) {
      const H5Member& m = t.members[i];
      TESSERA_ASSIGN_OR_RETURN(Mapped member, Map(m.type.front(), offset + m.offset));
      const std::string name = Utf8Name(m.name);
      names.push_back(name);
      formats.push_back(std::move(member.numpy));
      offsets.push_back(m.offset);
      description += (i ? ", " : "") + name + ": " + member.description;
    }
    nlohmann::json numpy = {{"names", names}, {"formats", formats}, {"offsets", offsets}, {"itemsize", t.size}};
    return Mapped{std::move(numpy), std::nullopt, description + "}"};
  }

  Result<Mapped> MapArray(const H5Type& t, uint32_t offset) {
    const H5Type& base = t.Base();
    const size_t before = steps.size();
    TESSERA_ASSIGN_OR_RETURN(Mapped element, Map(base, offset));
    const uint32_t count = t.size / base.size;
    // Repeat the base's steps for every element of the array: one step with a count when the
    // base converts in single steps, else each step copied per element.
    std::vector<ConvertStep> base_steps(steps.begin() + static_cast<std::ptrdiff_t>(before), steps.end());
    steps.resize(before);
    const bool simple = std::all_of(base_steps.begin(), base_steps.end(), [](const ConvertStep& s) { return s.count == 1; });
    for (uint32_t i = 0; i < (simple ? 1u : count); ++i) {
      for (ConvertStep s : base_steps) {
        if (simple) {
          s.count = count;
          s.stride = base.size;
        } else {
          s.offset += i * base.size;
        }
        TESSERA_RETURN_IF_ERROR(AddStep(s));
      }
    }
    nlohmann::json shape = nlohmann::json::array();
    std::string dims;
    for (uint32_t n : t.array_dims) {
      shape.push_back(n);
      dims += "[" + std::to_string(n) + "]";
    }
    return Mapped{{{"base", std::move(element.numpy)}, {"shape", shape}}, std::nullopt, element.description + dims};
  }

  std::string where_;
};

uint64_t LoadUnsigned(const uint8_t* p, size_t size, bool big_endian) {
  uint64_t v = 0;
  for (size_t i = 0; i < size; ++i) {
    const uint64_t byte = p[big_endian ? i : size - 1 - i];
    v = (v << 8) | byte;
  }
  return v;
}

void UnpackInteger(const ConvertStep& s, uint8_t* p) {
  uint64_t v = LoadUnsigned(p, s.size, s.big_endian) >> s.bit_offset;
  if (s.precision < 64) {
    v &= (uint64_t{1} << s.precision) - 1;
    if (s.is_signed && ((v >> (s.precision - 1)) & 1)) v |= ~uint64_t{0} << s.precision;
  }
  for (size_t i = 0; i < s.size; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));  // little-endian
}

}  // namespace

// `name` when it is valid UTF-8, else with each byte outside a valid sequence written as \xNN:
// names go into JSON (numpy's field names, `tessera info`), which holds UTF-8 only.
std::string Utf8Name(const std::string& name) {
  std::string out;
  const auto* p = reinterpret_cast<const unsigned char*>(name.data());
  const size_t n = name.size();
  for (size_t i = 0; i < n;) {
    const unsigned char c = p[i];
    size_t len = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xe ? 3 : (c >> 3) == 0x1e ? 4 : 0;
    bool valid = len > 0 && i + len <= n;
    for (size_t k = 1; valid && k < len; ++k) valid = (p[i + k] & 0xc0) == 0x80;
    if (valid && len > 1) {
      // Reject overlong forms, surrogates and code points past U+10FFFF, as JSON serializers do.
      uint32_t cp = c & (0xff >> (len + 1));
      for (size_t k = 1; k < len; ++k) cp = (cp << 6) | (p[i + k] & 0x3f);
      static constexpr uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
      valid = cp >= kMin[len] && cp <= 0x10ffff && (cp < 0xd800 || cp > 0xdfff);
    }
    if (valid) {
      out.append(name, i, len);
      i += len;
    } else {
      static const char* kHex = "0123456789abcdef";
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
      ++i;
    }
  }
  return out;
}

Result<NumpyElement> MapToNumpy(const H5Type& type, const std::string& where) {
  // A type holding variable-length data (itself, or inside a compound or array) reads as its
  // stored bytes, which the object reader resolves through the global heap (h5_vlen.h).
  if (HoldsVariableLength(type)) return MapVariableLengthElement(type, where);
  // An object reference reads as its stored address, which the object reader turns into a path
  // (h5_references.h); other references are refused there, naming their type.
  if (IsReference(type)) return MapReferenceElement(type, where);
  NumpyElement e;
  const H5Type* t = &type;
  std::string dims;
  while (t->cls == H5TypeClass::kArray) {
    for (uint32_t n : t->array_dims) {
      e.trailing_dims.push_back(n);
      dims += "[" + std::to_string(n) + "]";
    }
    t = &t->Base();
  }
  if (t == &type && IsX87In12Bytes(type)) {
    // numpy has no 12-byte float: h5py reads it as float128 (HDF5 converts to NATIVE_LDOUBLE),
    // so the element grows by 4 bytes and the reader widens what it reads.
    e.item_bytes = 16;
    e.widened_from_bytes = 12;
    e.widened_big_endian = type.big_endian;
    e.numpy = "<f16";
    e.description = "float128 (x87 80-bit extended, widened from 12 bytes)" + ByteOrderText(type);
    return e;
  }
  Mapper mapper(where);
  TESSERA_ASSIGN_OR_RETURN(Mapped m, mapper.Map(*t, 0));
  e.dtype = m.dtype;
  e.item_bytes = t->size;
  e.numpy = std::move(m.numpy);
  e.steps = std::move(mapper.steps);
  e.description = m.description + (dims.empty() ? "" : " array" + dims);
  return e;
}

Result<NumpyElement> MapMember(const H5Type& type, uint32_t offset, const std::string& where) {
  Mapper mapper(where);
  TESSERA_ASSIGN_OR_RETURN(Mapped m, mapper.Map(type, offset));
  NumpyElement e;
  e.dtype = m.dtype;
  e.item_bytes = type.size;
  e.numpy = std::move(m.numpy);
  e.steps = std::move(mapper.steps);
  e.description = std::move(m.description);
  return e;
}

void WidenToNumpy(const NumpyElement& element, Bytes* data) {
  const size_t from = element.widened_from_bytes, to = element.item_bytes;
  if (from == 0 || from >= to) return;
  const size_t count = data->size() / from;
  data->resize(count * to);
  // Back to front: each widened element lands at or after where its file bytes were.
  for (size_t i = count; i-- > 0;) {
    uint8_t value[16] = {};
    std::memcpy(value, data->data() + i * from, from);
    if (element.widened_big_endian) std::reverse(value, value + from);
    std::memset(value + 10, 0, sizeof(value) - 10);  // x87 uses 80 bits; the rest is padding
    std::memcpy(data->data() + i * to, value, to);
  }
}

uint64_t NumpyBytesOf(const NumpyElement& element, uint64_t file_bytes) {
  if (element.widened_from_bytes == 0) return file_bytes;
  return file_bytes / element.widened_from_bytes * element.item_bytes;
}

void ConvertToNumpy(const std::vector<ConvertStep>& steps, uint8_t* data, size_t count, size_t item_bytes) {
  if (steps.empty()) return;
  for (size_t i = 0; i < count; ++i) {
    uint8_t* element = data + i * item_bytes;
    for (const ConvertStep& s : steps) {
      for (uint32_t k = 0; k < s.count; ++k) {
        uint8_t* p = element + s.offset + size_t{k} * s.stride;
        switch (s.kind) {
          case ConvertStep::Kind::kSwap: std::reverse(p, p + s.size); break;
          case ConvertStep::Kind::kUnpackInteger: UnpackInteger(s, p); break;
          case ConvertStep::Kind::kConvertFloat: ConvertFloatInPlace(s.float_layout, p); break;
          case ConvertStep::Kind::kNullTerminated: {
            uint8_t* end = p + s.size;
            std::fill(std::find(p, end, uint8_t{0}), end, uint8_t{0});
            break;
          }
          case ConvertStep::Kind::kSpacePadded: {
            uint8_t* end = p + s.size;
            while (end > p && end[-1] == ' ') *--end = 0;
            break;
          }
        }
      }
    }
  }
}

}  // namespace tessera::hdf5
