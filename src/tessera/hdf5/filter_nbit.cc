// H5Z_FILTER_NBIT (5), read only: each element's significant bits packed with no gaps.
//
// Client data, as H5Z_set_local_nbit writes it:
//   [0] how many values the client data holds      [1] 1: the chunk is stored as it is
//   [2] elements in the chunk                       [3..] the element's type, recursively:
//     atomic   (1): size, byte order (0 little, 1 big), precision, bit offset
//     array    (2): size, then the base type
//     compound (3): size, member count, then per member: its byte offset, its type
//     no-op    (4): size                (a type nbit leaves whole: all its bytes are packed)
//
// The stream is one run of bits, most significant bit of each byte first, element after element;
// within an element, the types' leaves in the order above (an array's elements in order, a
// compound's members in client-data order). An atomic leaf takes `precision` bits: its value's bits
// offset .. offset + precision - 1, most significant first; decoding puts them back at `offset` and
// leaves the other bits zero (the datatype's own padding rules apply afterwards, as for any
// dataset). A no-op leaf takes 8 bits per byte, bytes in memory order.
#include <algorithm>
#include <memory>
#include <vector>

#include "tessera/hdf5/filter_decoders.h"

namespace tessera::hdf5 {
namespace {

enum NbitClass : uint32_t { kAtomic = 1, kArray = 2, kCompound = 3, kNoOp = 4 };
constexpr int kMaxNesting = 16;  // deeper client data is corrupt (the HDF5 library's types are shallower)
// Compound members may overlap in hostile client data, so an element's leaves can grow
// exponentially with nesting: their bit count is summed (saturating here) and checked against the
// stored bytes before anything is unpacked. Bits alone do not bound the work: a compound of no
// members packs 0 bits, and an array of many of them would be walked node by node for nothing. So
// the nodes one element visits are counted as well, and the chunk's nodes may be at most
// kNodesPerByte per byte of the chunk (a type the HDF5 library writes has members that do not overlap,
// each of at least one byte, and is nested at most kMaxNesting deep: far fewer nodes than that).
constexpr uint64_t kBitsLimit = uint64_t{1} << 62;
constexpr uint64_t kNodesPerByte = 2 * (kMaxNesting + 1);

uint64_t SaturatingAdd(uint64_t a, uint64_t b) { return a + b >= kBitsLimit ? kBitsLimit : a + b; }
uint64_t SaturatingMul(uint64_t a, uint64_t b) { return b != 0 && a > kBitsLimit / b ? kBitsLimit : a * b; }

struct NbitType {
  uint32_t cls = 0;
  uint32_t size = 0;                // bytes of one element of this type
  uint32_t big_endian = 0;          // atomic
  uint32_t precision = 0;           // atomic: significant bits
  uint32_t offset = 0;              // atomic: bit offset of the significant bits
  uint64_t packed_bits = 0;         // bits one element takes in the stream (saturating at kBitsLimit)
  uint64_t nodes = 1;               // types Unpack visits for one element, this one included (saturating)
  std::vector<uint32_t> member_offsets;  // compound
  std::vector<NbitType> children;        // array: one (the base); compound: one per member
};

// Reads the type description starting at client_data[*at]; errors name the value that is wrong.
Status ParseType(const std::vector<uint32_t>& cd, size_t* at, int depth, const std::string& what, NbitType* type) {
  auto next = [&](const char* field, uint32_t* value) -> Status {
    if (*at >= cd.size())
      return CorruptData(what + ": nbit filter: client data ends (" + std::to_string(cd.size()) +
                         " values) before the " + field);
    *value = cd[(*at)++];
    return Status::Ok();
  };
  if (depth > kMaxNesting) return CorruptData(what + ": nbit filter: types nested deeper than " + std::to_string(kMaxNesting));
  TESSERA_RETURN_IF_ERROR(next("type class", &type->cls));
  TESSERA_RETURN_IF_ERROR(next("type size", &type->size));
  if (type->size == 0) return CorruptData(what + ": nbit filter: a type of 0 bytes");
  switch (type->cls) {
    case kAtomic:
      TESSERA_RETURN_IF_ERROR(next("byte order", &type->big_endian));
      TESSERA_RETURN_IF_ERROR(next("precision", &type->precision));
      TESSERA_RETURN_IF_ERROR(next("bit offset", &type->offset));
      if (type->big_endian > 1) return CorruptData(what + ": nbit filter: byte order " + std::to_string(type->big_endian) + " (expected 0 or 1)");
      if (type->precision == 0 || uint64_t{type->precision} + type->offset > uint64_t{type->size} * 8)
        return CorruptData(what + ": nbit filter: precision " + std::to_string(type->precision) + " at bit offset " +
                           std::to_string(type->offset) + " does not fit a " + std::to_string(type->size) + "-byte type");
      if (type->size > 8)
        return Unsupported(what + ": nbit filter: a " + std::to_string(type->size) +
                           "-byte atomic type (tessera unpacks types of at most 8 bytes)");
      type->packed_bits = type->precision;
      return Status::Ok();
    case kArray: {
      type->children.resize(1);
      TESSERA_RETURN_IF_ERROR(ParseType(cd, at, depth + 1, what, &type->children[0]));
      if (type->size % type->children[0].size != 0)
        return CorruptData(what + ": nbit filter: an array of " + std::to_string(type->size) +
                           " bytes is not a whole number of " + std::to_string(type->children[0].size) + "-byte elements");
      type->packed_bits = SaturatingMul(type->size / type->children[0].size, type->children[0].packed_bits);
      type->nodes = SaturatingAdd(1, SaturatingMul(type->size / type->children[0].size, type->children[0].nodes));
      return Status::Ok();
    }
    case kCompound: {
      uint32_t members = 0;
      TESSERA_RETURN_IF_ERROR(next("member count", &members));
      if (members > cd.size()) return CorruptData(what + ": nbit filter: " + std::to_string(members) + " members in client data of " + std::to_string(cd.size()) + " values");
      type->children.resize(members);
      type->member_offsets.resize(members);
      for (uint32_t m = 0; m < members; ++m) {
        TESSERA_RETURN_IF_ERROR(next("member offset", &type->member_offsets[m]));
        TESSERA_RETURN_IF_ERROR(ParseType(cd, at, depth + 1, what, &type->children[m]));
        if (uint64_t{type->member_offsets[m]} + type->children[m].size > type->size)
          return CorruptData(what + ": nbit filter: member " + std::to_string(m) + " at byte " +
                             std::to_string(type->member_offsets[m]) + " runs past its " + std::to_string(type->size) + "-byte compound");
        type->packed_bits = SaturatingAdd(type->packed_bits, type->children[m].packed_bits);
        type->nodes = SaturatingAdd(type->nodes, type->children[m].nodes);
      }
      return Status::Ok();
    }
    case kNoOp:
      type->packed_bits = uint64_t{type->size} * 8;
      return Status::Ok();
    default:
      return CorruptData(what + ": nbit filter: type class " + std::to_string(type->cls) + " (expected 1 to 4)");
  }
}

// Bits most significant first; reading past the end sets `overrun` and yields zeros.
class BitReader {
 public:
  explicit BitReader(ByteView in) : in_(in) {}
  uint64_t Take(uint32_t bits) {  // bits <= 64
    uint64_t value = 0;
    while (bits > 0) {
      if (byte_ >= in_.size()) {
        overrun_ = true;
        return value << bits;
      }
      const uint32_t left = 8 - bit_;
      const uint32_t n = bits < left ? bits : left;
      const uint32_t chunk = (in_[byte_] >> (left - n)) & ((1u << n) - 1);
      value = (value << n) | chunk;
      bits -= n;
      bit_ += n;
      if (bit_ == 8) {
        bit_ = 0;
        ++byte_;
      }
    }
    return value;
  }
  bool overrun() const { return overrun_; }

 private:
  ByteView in_;
  size_t byte_ = 0;
  uint32_t bit_ = 0;
  bool overrun_ = false;
};

void Unpack(const NbitType& type, BitReader& bits, uint8_t* element) {
  switch (type.cls) {
    case kAtomic: {
      const uint64_t value = bits.Take(type.precision) << type.offset;
      for (uint32_t i = 0; i < type.size; ++i) {
        const uint8_t byte = static_cast<uint8_t>(value >> (8 * i));
        element[type.big_endian ? type.size - 1 - i : i] = byte;
      }
      return;
    }
    case kArray: {
      const NbitType& base = type.children[0];
      for (uint32_t i = 0; i < type.size / base.size; ++i) Unpack(base, bits, element + size_t{i} * base.size);
      return;
    }
    case kCompound:
      for (size_t m = 0; m < type.children.size(); ++m) Unpack(type.children[m], bits, element + type.member_offsets[m]);
      return;
    default:  // no-op: every byte
      for (uint32_t i = 0; i < type.size; ++i) element[i] = static_cast<uint8_t>(bits.Take(8));
  }
}

}  // namespace

Status DecodeNbit(const Filter& filter, ByteView in, size_t expected_bytes, bool exact, const std::string& what, Bytes* out) {
  const std::vector<uint32_t>& cd = filter.client_data;
  if (cd.size() < 5) return CorruptData(what + ": nbit filter: " + std::to_string(cd.size()) + " client data values (at least 5 expected)");
  // Every bit significant: H5Z_set_local_nbit asked for no packing, and the bytes pass through
  // unchecked (a filter applied before, a compressor in tfilters.h5 of the HDF5 library's tests,
  // gave them their size; undoing it checks that).
  if (cd[1] != 0) {
    out->assign(in.begin(), in.end());
    return Status::Ok();
  }
  size_t at = 3;
  NbitType type;
  TESSERA_RETURN_IF_ERROR(ParseType(cd, &at, 0, what, &type));
  const uint64_t elements = cd[2];
  if (!StageSizeFits(elements * type.size, expected_bytes, exact))
    return CorruptData(what + ": nbit filter: " + std::to_string(elements) + " elements of " + std::to_string(type.size) +
                       " bytes, the chunk holds " + std::to_string(expected_bytes) + " bytes");
  const uint64_t needed_bits = SaturatingMul(elements, type.packed_bits);
  if (needed_bits > uint64_t{in.size()} * 8)
    return CorruptData(what + ": nbit filter: " + std::to_string(in.size()) + " stored bytes end before the chunk's " +
                       std::to_string(elements) + " elements are unpacked (" +
                       (needed_bits == kBitsLimit ? std::string("more than 2^62") : std::to_string(needed_bits)) + " bits)");
  const uint64_t nodes = SaturatingMul(elements, type.nodes);
  if (nodes > SaturatingMul(uint64_t{type.size} * std::max<uint64_t>(elements, 1), kNodesPerByte))
    return CorruptData(what + ": nbit filter: the client data's type visits " +
                       (nodes == kBitsLimit ? std::string("more than 2^62") : std::to_string(nodes)) + " types for " +
                       std::to_string(elements) + " elements of " + std::to_string(type.size) +
                       " bytes (members overlap or are empty)");
  out->assign(elements * type.size, 0);
  BitReader bits(in);
  for (uint64_t i = 0; i < elements; ++i) Unpack(type, bits, out->data() + i * type.size);
  if (bits.overrun())
    return CorruptData(what + ": nbit filter: " + std::to_string(in.size()) + " stored bytes end before the chunk's " +
                       std::to_string(elements) + " elements are unpacked");
  return Status::Ok();
}

}  // namespace tessera::hdf5
