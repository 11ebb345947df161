#include "tessera/hdf5/h5_datatype.h"

#include <algorithm>

namespace tessera::hdf5 {
namespace {

// A null-terminated name; versions 1 and 2 pad it (with its terminator) to a multiple of 8.
std::string ReadName(FieldReader& r, bool padded) {
  const size_t start = r.pos();
  std::string name;
  for (uint8_t c = r.U8(); r.ok() && c != 0; c = r.U8()) name += static_cast<char>(c);
  if (padded && r.ok()) r.set_pos(start + (r.pos() - start + 7) / 8 * 8);
  return name;
}

// Bytes needed to encode `size` (HDF5's H5VM_limit_enc_size): version-3 compound member offsets.
size_t OffsetWidth(uint32_t size) {
  int log2 = 0;
  for (uint32_t v = size; v > 1; v >>= 1) ++log2;
  return static_cast<size_t>(log2 / 8 + 1);
}

Status Corrupt(const std::string& where, const std::string& message) { return CorruptData(where + ": " + message); }

Result<H5Type> Parse(FieldReader& r, const std::string& where, int depth);

Status ParseCompound(FieldReader& r, const std::string& where, int depth, uint32_t bits, H5Type* t) {
  const uint32_t count = bits & 0xffff;
  if (count == 0) return Corrupt(where, "compound datatype with no members");
  for (uint32_t i = 0; i < count; ++i) {
    H5Member m;
    m.name = ReadName(r, t->version < 3);
    if (t->version < 3) {
      m.offset = r.U32();
    } else {
      m.offset = static_cast<uint32_t>(r.U(OffsetWidth(t->size)));
    }
    std::vector<uint32_t> old_array_dims;
    if (t->version == 1) {
      // Version 1: an array member is described here, not by an array datatype.
      const uint8_t ndims = r.U8();
      r.Skip(3 + 4 + 4);  // reserved, dimension permutation, reserved
      for (int d = 0; d < 4; ++d) {
        const uint32_t n = r.U32();
        if (d < ndims) old_array_dims.push_back(n);
      }
      if (!r.ok()) return r.status();
      if (ndims > 4) return Corrupt(where, "compound member \"" + m.name + "\" has " + std::to_string(ndims) + " array dimensions (at most 4)");
    }
    if (!r.ok()) return r.status();
    TESSERA_ASSIGN_OR_RETURN(H5Type member, Parse(r, where, depth + 1));
    if (!old_array_dims.empty()) {
      H5Type array;
      array.cls = H5TypeClass::kArray;
      array.array_dims = old_array_dims;
      uint64_t bytes = member.size;
      for (uint32_t n : old_array_dims) bytes *= n;
      if (bytes > UINT32_MAX) return Corrupt(where, "compound member \"" + m.name + "\" larger than 4 GiB");
      array.size = static_cast<uint32_t>(bytes);
      array.base.push_back(std::move(member));
      member = std::move(array);
    }
    if (uint64_t{m.offset} + member.size > t->size)
      return Corrupt(where, "compound member \"" + m.name + "\" at byte " + std::to_string(m.offset) + " of " +
                                std::to_string(member.size) + " bytes ends past the " + std::to_string(t->size) +
                                "-byte element");
    m.type.push_back(std::move(member));
    t->members.push_back(std::move(m));
  }
  return Status::Ok();
}

Status ParseEnumeration(FieldReader& r, const std::string& where, int depth, uint32_t bits, H5Type* t) {
  TESSERA_ASSIGN_OR_RETURN(H5Type base, Parse(r, where, depth + 1));
  if (base.cls != H5TypeClass::kFixedPoint)
    return Corrupt(where, "enumeration of " + H5TypeClassName(base.cls) + " values (HDF5 enumerates integers)");
  if (base.size != t->size)
    return Corrupt(where, "enumeration of " + std::to_string(t->size) + " bytes over a " + std::to_string(base.size) + "-byte integer");
  const uint32_t count = bits & 0xffff;
  for (uint32_t i = 0; i < count && r.ok(); ++i) t->enum_names.push_back(ReadName(r, t->version < 3));
  for (uint32_t i = 0; i < count && r.ok(); ++i) {
    ByteView v = r.Take(base.size);
    t->enum_values.emplace_back(v.begin(), v.end());
  }
  if (!r.ok()) return r.status();
  t->base.push_back(std::move(base));
  return Status::Ok();
}

Status ParseArray(FieldReader& r, const std::string& where, int depth, H5Type* t) {
  const uint8_t ndims = r.U8();
  if (t->version < 3) r.Skip(3);
  if (!r.ok()) return r.status();
  if (ndims == 0 || ndims > 32) return Corrupt(where, "array datatype of rank " + std::to_string(ndims));
  for (int d = 0; d < ndims; ++d) t->array_dims.push_back(r.U32());
  if (t->version < 3) r.Skip(4 * ndims);  // permutation (never implemented by HDF5)
  if (!r.ok()) return r.status();
  TESSERA_ASSIGN_OR_RETURN(H5Type base, Parse(r, where, depth + 1));
  uint64_t bytes = base.size;
  for (uint32_t n : t->array_dims) {
    if (n == 0) return Corrupt(where, "array datatype with a dimension of 0");
    bytes *= n;
    if (bytes > UINT32_MAX) break;
  }
  if (bytes != t->size)
    return Corrupt(where, "array datatype of " + std::to_string(t->size) + " bytes holds " + std::to_string(bytes) +
                              " bytes of elements");
  t->base.push_back(std::move(base));
  return Status::Ok();
}

Result<H5Type> Parse(FieldReader& r, const std::string& where, int depth) {
  if (depth > kMaxTypeDepth)
    return Corrupt(where, "datatypes nested deeper than " + std::to_string(kMaxTypeDepth));
  const uint8_t class_version = r.U8();
  const uint32_t bits = static_cast<uint32_t>(r.U(3));
  H5Type t;
  t.size = r.U32();
  if (!r.ok()) return r.status();
  const uint8_t cls = class_version & 0x0f;
  t.version = class_version >> 4;
  if (cls > 11) return Corrupt(where, "datatype class " + std::to_string(cls));
  if (t.version < 1 || t.version > 5) return Corrupt(where, "datatype version " + std::to_string(t.version));
  t.cls = static_cast<H5TypeClass>(cls);
  if (t.size == 0 && t.cls != H5TypeClass::kVariableLength)
    return Corrupt(where, H5TypeClassName(t.cls) + " datatype of 0 bytes");
  switch (t.cls) {
    case H5TypeClass::kFixedPoint:
    case H5TypeClass::kBitfield:
    case H5TypeClass::kFloatingPoint: {
      t.big_endian = bits & 1;
      t.is_signed = t.cls == H5TypeClass::kFixedPoint && (bits & 0x08);
      t.bit_offset = r.U16();
      t.precision = r.U16();
      if (t.cls == H5TypeClass::kFloatingPoint) {
        t.vax_order = bits & 0x40;
        t.sign_location = static_cast<uint8_t>(bits >> 8);
        t.mantissa_normalization = (bits >> 4) & 3;
        t.exponent_location = r.U8();
        t.exponent_size = r.U8();
        t.mantissa_location = r.U8();
        t.mantissa_size = r.U8();
        t.exponent_bias = r.U32();
      }
      if (!r.ok()) return r.status();
      if (t.precision == 0 || uint64_t{t.bit_offset} + t.precision > uint64_t{t.size} * 8)
        return Corrupt(where, std::to_string(t.precision) + "-bit values at bit offset " + std::to_string(t.bit_offset) +
                                  " do not fit " + std::to_string(t.size) + " bytes");
      return t;
    }
    case H5TypeClass::kTime: r.U16(); break;
    case H5TypeClass::kString:
      t.string_padding = bits & 0x0f;
      t.charset = (bits >> 4) & 0x0f;
      return t;
    case H5TypeClass::kOpaque: {
      const size_t tag_length = bits & 0xff;
      ByteView tag = r.Take(tag_length);
      if (!r.ok()) return r.status();
      t.opaque_tag.assign(tag.begin(), std::find(tag.begin(), tag.end(), uint8_t{0}));
      return t;
    }
    case H5TypeClass::kCompound: TESSERA_RETURN_IF_ERROR(ParseCompound(r, where, depth, bits, &t)); break;
    case H5TypeClass::kReference: t.reference_type = bits & 0x0f; break;
    case H5TypeClass::kEnumeration: TESSERA_RETURN_IF_ERROR(ParseEnumeration(r, where, depth, bits, &t)); break;
    case H5TypeClass::kVariableLength: {
      t.vlen_string = (bits & 0x0f) == 1;
      t.string_padding = (bits >> 4) & 0x0f;
      t.charset = (bits >> 8) & 0x0f;
      TESSERA_ASSIGN_OR_RETURN(H5Type base, Parse(r, where, depth + 1));
      t.base.push_back(std::move(base));
      break;
    }
    case H5TypeClass::kArray: TESSERA_RETURN_IF_ERROR(ParseArray(r, where, depth, &t)); break;
    case H5TypeClass::kComplex: {
      TESSERA_ASSIGN_OR_RETURN(H5Type base, Parse(r, where, depth + 1));
      if (base.cls != H5TypeClass::kFloatingPoint || uint64_t{base.size} * 2 != t.size)
        return Corrupt(where, "complex datatype of " + std::to_string(t.size) + " bytes over a " +
                                  std::to_string(base.size) + "-byte " + H5TypeClassName(base.cls) + " part");
      t.base.push_back(std::move(base));
      break;
    }
  }
  if (!r.ok()) return r.status();
  return t;
}

}  // namespace

std::string H5TypeClassName(H5TypeClass cls) {
  static const char* kNames[] = {"fixed-point", "floating-point", "time",           "string",
                                 "bitfield",    "opaque",         "compound",       "reference",
                                 "enumeration", "variable-length", "array",         "complex"};
  const auto i = static_cast<size_t>(cls);
  return i < 12 ? kNames[i] : "class " + std::to_string(i);
}

Result<H5Type> ParseH5Type(FieldReader& r, const std::string& where) { return Parse(r, where, 0); }

Result<H5Type> ParseH5Type(const RawFile& file, const HeaderMessage& m) {
  FieldReader r(m.body, file, "datatype message", m.addr);
  return Parse(r, file.Where("datatype message", m.addr, m.body.size()), 0);
}

// Shared message body (the specification's "Shared Message"):
//   version 1: version, type, 6 reserved bytes, then a symbol table entry: the link name's local
//              heap offset (size of lengths, as the HDF5 library reads it), the object header address
//              (HDF5 1.4 and older files, e.g. the library's tools/testfiles/tcompound.h5)
//   version 2: version, type, object header address
//   version 3: version, type (1: in the shared-message heap, 2: committed), heap id (8) or address
Result<HeaderMessage> CommittedDatatypeMessage(const RawFile& file, const HeaderMessage& m) {
  FieldReader r(m.body, file, "shared datatype message", m.addr);
  const uint8_t version = r.U8();
  const uint8_t type = r.U8();
  if (!r.ok()) return r.status();
  if (version == 1) {
    r.Skip(6);
    r.Length();  // the symbol table entry's link name offset, meaningless outside its group
  } else if (version == 3 && type == 1) {
    return Unsupported(file.Where("shared datatype message", m.addr, m.body.size()) +
                       ": a datatype kept in the shared-message heap, here where tessera does not look it up (object headers and "
                       "attributes resolve theirs before their datatype is read)");
  } else if (version != 2 && version != 3) {
    return r.Fail("shared message version " + std::to_string(version));
  }
  const uint64_t header = r.Addr();
  if (!r.ok()) return r.status();
  TESSERA_ASSIGN_OR_RETURN(ObjectHeader oh, ReadObjectHeader(file, header));
  const HeaderMessage* type_message = oh.Find(kMsgDatatype);
  if (type_message == nullptr)
    return file.Corrupt("committed datatype", header, 0, "object header without a datatype message");
  if (type_message->flags & kMsgFlagShared)
    return file.Corrupt("committed datatype", header, 0, "its datatype message is itself shared");
  return *type_message;
}

Result<H5Type> ResolveSharedDatatype(const RawFile& file, const HeaderMessage& m) {
  TESSERA_ASSIGN_OR_RETURN(HeaderMessage committed, CommittedDatatypeMessage(file, m));
  return ParseH5Type(file, committed);
}

Result<H5Type> ReadDatatypeMessage(const RawFile& file, const HeaderMessage& m) {
  if (m.flags & kMsgFlagShared) return ResolveSharedDatatype(file, m);
  return ParseH5Type(file, m);
}

}  // namespace tessera::hdf5
