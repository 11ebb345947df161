// The HDF5 datatype message, parsed into a tree (H5Type) that says everything the file says about
// one element: its class, size, byte order, bit padding, and for the composite classes (compound,
// enumeration, array, variable-length, complex) their members and base types. What tessera makes
// of the tree (a numpy layout and the conversion to it) is h5_datatype_numpy.h's concern.
//
// Datatype message, every version (the HDF5 file format specification, "Datatype Message"):
//
//   byte 0      class (low 4 bits) | version (high 4 bits)
//   bytes 1..3  class bit field (byte order, padding, sign, member count, ...)
//   bytes 4..7  size of one element in bytes
//   bytes 8..   class properties (a compound's members, an enum's base type, names and values,
//               an array's dimensions and base type, ...), nested datatypes inline.
//
// A shared (committed) datatype message holds no datatype: its body names the object header of
// the committed datatype, whose own datatype message is the type (ResolveSharedDatatype).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tessera/hdf5/h5_object_header.h"

namespace tessera::hdf5 {

enum class H5TypeClass : uint8_t {
  kFixedPoint = 0,
  kFloatingPoint = 1,
  kTime = 2,
  kString = 3,
  kBitfield = 4,
  kOpaque = 5,
  kCompound = 6,
  kReference = 7,
  kEnumeration = 8,
  kVariableLength = 9,
  kArray = 10,
  kComplex = 11,
};
std::string H5TypeClassName(H5TypeClass cls);  // "compound"

struct H5Type;

struct H5Member {
  std::string name;
  uint32_t offset = 0;  // byte offset inside the compound element
  std::vector<H5Type> type;  // exactly one (a vector: H5Type is incomplete here)
};

struct H5Type {
  H5TypeClass cls = H5TypeClass::kFixedPoint;
  int version = 1;
  uint32_t size = 0;          // bytes of one element
  bool big_endian = false;    // fixed-point, floating-point, bitfield
  bool is_signed = false;     // fixed-point
  uint16_t bit_offset = 0;    // fixed-point, floating-point, bitfield: first bit of the value
  uint16_t precision = 0;     // ... and its number of bits
  // Floating point fields (bit positions of exponent and mantissa, exponent bias).
  uint8_t exponent_location = 0, exponent_size = 0, mantissa_location = 0, mantissa_size = 0;
  uint32_t exponent_bias = 0;
  bool vax_order = false;            // class bit 6 (meaningful from version 3 on, with bit 0)
  uint8_t sign_location = 0;         // bit of the sign (class bits 8..15)
  uint8_t mantissa_normalization = 0;  // class bits 4..5: 0 none, 1 MSB set, 2 implied one
  // String: 0 null-terminated, 1 null-padded, 2 space-padded; charset 0 ASCII, 1 UTF-8.
  uint8_t string_padding = 0;
  uint8_t charset = 0;
  // Variable-length: a string (true) or a sequence of `base` (false).
  bool vlen_string = false;
  uint8_t reference_type = 0;  // reference: class bits 0..3 (0 object, 1 region, 2-4 HDF5 1.12's)
  std::string opaque_tag;
  std::vector<H5Member> members;          // compound
  std::vector<uint32_t> array_dims;       // array (and version-1 compound array members)
  std::vector<H5Type> base;               // enumeration, array, variable-length, complex: one
  std::vector<std::string> enum_names;    // enumeration, in file order
  std::vector<Bytes> enum_values;         // ... each base.size bytes as stored

  const H5Type& Base() const { return base.front(); }
};

// Parses the datatype at the reader's position (nested types recurse, at most kMaxTypeDepth
// deep). Consistency checks (a member past the compound's end, an array whose size is not its
// base's times its elements) fail as corrupt data naming `where`.
Result<H5Type> ParseH5Type(FieldReader& r, const std::string& where);
// The whole body of a datatype message (unshared).
Result<H5Type> ParseH5Type(const RawFile& file, const HeaderMessage& m);
// A shared datatype message's body (flags & kMsgFlagShared): the committed datatype's own
// (unshared) datatype message, from the object header it points at. Types shared through the
// shared-message heap are kUnsupported.
Result<HeaderMessage> CommittedDatatypeMessage(const RawFile& file, const HeaderMessage& m);
// The same, parsed.
Result<H5Type> ResolveSharedDatatype(const RawFile& file, const HeaderMessage& m);
// Either of the two above, as the message's flags say.
Result<H5Type> ReadDatatypeMessage(const RawFile& file, const HeaderMessage& m);

inline constexpr int kMaxTypeDepth = 16;

}  // namespace tessera::hdf5
