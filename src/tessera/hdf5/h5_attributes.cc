#include "tessera/hdf5/h5_attributes.h"

#include <algorithm>

#include "tessera/hdf5/h5_btree2.h"
#include "tessera/hdf5/h5_dataset_messages.h"
#include "tessera/hdf5/h5_datatype_json.h"
#include "tessera/hdf5/h5_fractal_heap.h"
#include "tessera/hdf5/h5_shared_messages.h"

namespace tessera::hdf5 {
namespace {

constexpr uint16_t kMsgAttributeInfo = 0x0015;
constexpr uint8_t kClassString = 3;
constexpr uint8_t kClassVariableLength = 9;
constexpr uint64_t kMaxGlobalHeapBytes = uint64_t{64} << 20;

struct RawAttribute {
  std::string name;
  HeaderMessage datatype;
  HeaderMessage dataspace;
  ByteView data;
};

Result<RawAttribute> SplitAttribute(const RawFile& file, const HeaderMessage& m) {
  FieldReader r(m.body, file, "attribute message", m.addr);
  RawAttribute a;
  const uint8_t version = r.U8();
  const uint8_t flags = r.U8();
  const uint16_t name_size = r.U16();
  const uint16_t type_size = r.U16();
  const uint16_t space_size = r.U16();
  if (version == 3) r.U8();  // name character set
  if (!r.ok()) return r.status();
  if (version < 1 || version > 3) return r.Fail("attribute message version " + std::to_string(version));
  // Flags (version 2 on): bit 0 the datatype, bit 1 the dataspace is a shared message.
  const bool shared_type = version >= 2 && (flags & 0x01) != 0;
  const bool shared_space = version >= 2 && (flags & 0x02) != 0;
  // Version 1 pads the name, datatype and dataspace to multiples of 8.
  auto field = [&](size_t n) {
    ByteView v = r.Take(n);
    if (version == 1) r.Skip((8 - n % 8) % 8);
    return v;
  };
  ByteView name = field(name_size);
  ByteView type = field(type_size);
  ByteView space = field(space_size);
  if (!r.ok()) return r.status();
  a.name.assign(name.begin(), std::find(name.begin(), name.end(), uint8_t{0}));
  a.datatype = {0x0003, shared_type ? kMsgFlagShared : uint8_t{0}, m.addr, Bytes(type.begin(), type.end())};
  // A datatype in the shared-message heap (h5_shared_messages.h) or committed: its own message,
  // read from the heap or from the object header the attribute names.
  TESSERA_ASSIGN_OR_RETURN(a.datatype, ResolveSharedHeapMessage(file, a.datatype));
  if (a.datatype.flags & kMsgFlagShared) {
    TESSERA_ASSIGN_OR_RETURN(a.datatype, CommittedDatatypeMessage(file, a.datatype));
  }
  a.dataspace = {0x0001, shared_space ? kMsgFlagShared : uint8_t{0}, m.addr, Bytes(space.begin(), space.end())};
  TESSERA_ASSIGN_OR_RETURN(a.dataspace, ResolveSharedHeapMessage(file, a.dataspace));
  if (a.dataspace.flags & kMsgFlagShared)
    return Unsupported(file.Where("attribute message", m.addr, m.body.size()) +
                       ": a dataspace shared through another object header");
  a.data = r.Take(r.remaining());
  return a;
}

// One object of the global heap collection at `collection` ("GCOL").
Result<std::string> GlobalHeapObject(const RawFile& file, uint64_t collection, uint32_t index) {
  TESSERA_ASSIGN_OR_RETURN(Bytes head, file.Read(collection, 16, "global heap collection"));
  FieldReader h(head, file, "global heap collection", collection);
  if (!h.ExpectSignature("GCOL")) return h.status();
  h.Skip(4);
  const uint64_t size = h.Length();
  if (!h.ok()) return h.status();
  if (size < 16 || size > kMaxGlobalHeapBytes) return h.Fail("collection size " + std::to_string(size));
  TESSERA_ASSIGN_OR_RETURN(Bytes all, file.Read(collection, size, "global heap collection"));
  FieldReader r(all, file, "global heap collection", collection);
  r.Skip(16);
  while (r.remaining() >= 16) {
    const uint16_t i = r.U16();
    r.Skip(6);  // reference count, reserved
    const uint64_t n = r.Length();
    if (i == 0) break;  // free space: the end of the objects
    ByteView bytes = r.Take(n);
    r.Skip((8 - n % 8) % 8);
    if (!r.ok()) return r.status();
    if (i == index) return std::string(bytes.begin(), bytes.end());
  }
  if (!r.ok()) return r.status();
  return r.Fail("no object " + std::to_string(index));
}

std::string FixedString(ByteView bytes) {
  std::string s(bytes.begin(), std::find(bytes.begin(), bytes.end(), uint8_t{0}));
  while (!s.empty() && s.back() == ' ') s.pop_back();  // space-padded strings
  return s;
}

Result<nlohmann::json> DecodeValue(const RawFile& file, const RawAttribute& a) {
  TESSERA_ASSIGN_OR_RETURN(Dataspace space, ParseDataspace(file, a.dataspace));
  if (space.is_null) return nlohmann::json(nullptr);
  uint64_t count = 1;
  for (uint64_t d : space.dims) {
    if (d != 0 && count > (uint64_t{1} << 40) / d) return Unsupported("too many elements");
    count *= d;
  }
  const bool scalar = space.dims.empty();
  if (a.datatype.body.size() < 8) return Unsupported("truncated datatype");
  const uint8_t cls = a.datatype.body[0] & 0x0f;
  const uint32_t size = DecodeFixed32LE(a.datatype.body.data() + 4);
  std::string type_name;
  size_t element_bytes = size;
  Datatype numeric;
  if (cls == kClassString) {
    type_name = "string";
  } else if (cls == kClassVariableLength) {
    if ((a.datatype.body[1] & 0x0f) != 1) return Unsupported("variable-length sequences");
    type_name = "string";
    element_bytes = 4 + 8 + 4;  // length, global heap collection address, object index
  } else {
    TESSERA_ASSIGN_OR_RETURN(numeric, ParseDatatype(file, a.datatype));
    type_name = numeric.simple() ? std::string(DataTypeName(numeric.dtype)) : numeric.description;
    element_bytes = numeric.size;
  }
  if (count > kMaxShownElements) return nlohmann::json("<" + std::to_string(count) + " elements of " + type_name + ">");
  if (a.data.size() < count * element_bytes) return Unsupported("data shorter than its dataspace");
  nlohmann::json values = nlohmann::json::array();
  for (uint64_t i = 0; i < count; ++i) {
    ByteView e = a.data.subspan(i * element_bytes, element_bytes);
    if (cls == kClassString) {
      values.push_back(FixedString(e));
    } else if (cls == kClassVariableLength) {
      const uint64_t heap = DecodeFixed64LE(e.data() + 4);
      const uint32_t index = DecodeFixed32LE(e.data() + 12);
      if (DecodeFixed32LE(e.data()) == 0 || heap == 0 || heap == kUndefinedAddress) {
        values.push_back("");
        continue;
      }
      TESSERA_ASSIGN_OR_RETURN(std::string s, GlobalHeapObject(file, heap, index));
      values.push_back(FixedString(AsView(s)));
    } else if (!numeric.simple()) {
      // Compounds, arrays, strings inside them, ...: converted as reads convert, then as JSON.
      Bytes element(e.begin(), e.end());
      const size_t item = numeric.element.item_bytes;
      WidenToNumpy(numeric.element, &element);  // a 12-byte long double becomes numpy's 16 bytes
      ConvertToNumpy(numeric.element.steps, element.data(), element.size() / item, item);
      values.push_back(ElementToJson(numeric.type, element));
    } else {
      FillValue v;
      v.bytes.assign(e.begin(), e.end());
      ConvertToNumpy(numeric.element.steps, v.bytes.data(), 1, v.bytes.size());
      values.push_back(FillValueToJson(numeric.dtype, v));
    }
  }
  return scalar ? values[0] : values;
}

void AddAttribute(const RawFile& file, const HeaderMessage& shared_or_not, nlohmann::json* out) {
  // An attribute kept in the shared-message heap (h5_shared_messages.h): the message itself.
  Result<HeaderMessage> m = ResolveSharedHeapMessage(file, shared_or_not);
  if (!m.ok()) {
    (*out)["(attribute at " + Hex(shared_or_not.addr) + ")"] = {{"unreadable", m.status().message()}};
    return;
  }
  Result<RawAttribute> a = SplitAttribute(file, *m);
  if (!a.ok()) {
    (*out)["(attribute at " + Hex(m->addr) + ")"] = {{"unreadable", a.status().message()}};
    return;
  }
  Result<nlohmann::json> value = DecodeValue(file, *a);
  (*out)[a->name] = value.ok() ? *value : nlohmann::json{{"unreadable", value.status().message()}};
}

// Dense storage: attribute messages in a fractal heap, found through the name index (a v2
// B-tree of type 8 records: heap id (8), message flags, creation order, name hash).
Status AddDenseAttributes(const RawFile& file, uint64_t heap_addr, uint64_t name_index, nlohmann::json* out) {
  TESSERA_ASSIGN_OR_RETURN(FractalHeap heap, ReadFractalHeapHeader(file, heap_addr));
  return WalkBTreeV2(file, name_index, 8, [&](ByteView record, uint64_t at) -> Status {
    if (record.size() < 8) return file.Corrupt("attribute name index record", at, record.size(), "shorter than a heap id");
    HeaderMessage m;
    m.type = kMsgAttribute;
    m.addr = at;
    // The record's message flags (after the heap ID): a shared attribute's ID names the
    // shared-message heap, not the object's attribute heap.
    const bool shared = record.size() > 8 && (record[8] & kMsgFlagShared) != 0;
    if (shared) {
      TESSERA_ASSIGN_OR_RETURN(m.body, ReadSharedHeapMessage(file, kMsgAttribute, record.subspan(0, 8), at));
    } else {
      TESSERA_ASSIGN_OR_RETURN(m.body, ReadHeapObject(file, heap, record.subspan(0, 8)));
    }
    AddAttribute(file, m, out);
    return Status::Ok();
  });
}

}  // namespace

nlohmann::json ReadAttributes(const RawFile& file, const ObjectHeader& oh) {
  nlohmann::json out = nlohmann::json::object();
  for (const HeaderMessage& m : oh.messages) {
    if (m.type == kMsgAttributeInfo) {
      // Dense storage when the fractal heap address (after version, flags and the optional
      // maximum creation index) is defined.
      FieldReader r(m.body, file, "attribute info message", m.addr);
      r.U8();
      const uint8_t flags = r.U8();
      if (flags & 0x01) r.U16();
      const uint64_t heap = r.Addr();
      const uint64_t name_index = r.Addr();
      if (!r.ok()) {
        out["(attribute info)"] = {{"unreadable", r.status().message()}};
      } else if (heap != kUndefinedAddress) {
        Status st = AddDenseAttributes(file, heap, name_index, &out);
        if (!st.ok()) out["(dense attribute storage)"] = {{"unreadable", st.message()}};
      }
      continue;
    }
    if (m.type == kMsgAttribute) AddAttribute(file, m, &out);
  }
  return out;
}

}  // namespace tessera::hdf5
