#include "tessera/hdf5/h5_dataset_messages.h"

#include <algorithm>

#include "tessera/core/limits.h"

namespace tessera::hdf5 {
namespace {

Status CheckNotShared(const RawFile& file, const HeaderMessage& m, const char* what) {
  if (m.flags & kMsgFlagShared)
    return Unsupported(file.Where(what, m.addr, m.body.size()) +
                       ": shared (committed) message; tessera reads unshared dataset messages only");
  return Status::Ok();
}

// The tessera type for an HDF5 fixed-point or floating-point base type (also an enum's base).
Result<Datatype> ParseAtomic(FieldReader& r, uint8_t cls, uint32_t bits, uint32_t size, const std::string& where) {
  Datatype t;
  t.size = size;
  t.big_endian = bits & 1;
  const uint16_t bit_offset = r.U16();
  const uint16_t precision = r.U16();
  if (!r.ok()) return r.status();
  if (bit_offset != 0 || precision != size * 8)
    return Unsupported(where + ": " + std::to_string(precision) + "-bit values at bit offset " +
                       std::to_string(bit_offset) + " in " + std::to_string(size) + " bytes (padded types)");
  if (cls == 0) {
    const bool is_signed = bits & 0x08;
    switch (size) {
      case 1: t.dtype = is_signed ? DataType::kInt8 : DataType::kUInt8; break;
      case 2: t.dtype = is_signed ? DataType::kInt16 : DataType::kUInt16; break;
      case 4: t.dtype = is_signed ? DataType::kInt32 : DataType::kUInt32; break;
      case 8: t.dtype = is_signed ? DataType::kInt64 : DataType::kUInt64; break;
      default: return Unsupported(where + ": " + std::to_string(size) + "-byte integers");
    }
  } else {
    if (bits & 0x40) return Unsupported(where + ": VAX-order floating point");
    const uint8_t exp_location = r.U8(), exp_size = r.U8(), mant_location = r.U8(), mant_size = r.U8();
    const uint32_t bias = r.U32();
    if (!r.ok()) return r.status();
    struct Ieee { uint32_t size; uint8_t el, es, ml, ms; uint32_t bias; DataType dtype; };
    static constexpr Ieee kIeee[] = {{2, 10, 5, 0, 10, 15, DataType::kFloat16},
                                     {4, 23, 8, 0, 23, 127, DataType::kFloat32},
                                     {8, 52, 11, 0, 52, 1023, DataType::kFloat64}};
    bool found = false;
    for (const Ieee& f : kIeee) {
      if (f.size == size && f.el == exp_location && f.es == exp_size && f.ml == mant_location && f.ms == mant_size &&
          f.bias == bias) {
        t.dtype = f.dtype;
        found = true;
      }
    }
    if (!found) return Unsupported(where + ": non-IEEE " + std::to_string(size) + "-byte floating point");
  }
  t.description = std::string(DataTypeName(t.dtype)) + (size > 1 ? (t.big_endian ? " (big-endian)" : " (little-endian)") : "");
  return t;
}

Result<Datatype> ParseDatatypeAt(FieldReader& r, const std::string& where, int depth) {
  const uint8_t class_version = r.U8();
  const uint32_t bits = static_cast<uint32_t>(r.U(3));
  const uint32_t size = r.U32();
  if (!r.ok()) return r.status();
  const uint8_t cls = class_version & 0x0f;
  const uint8_t version = class_version >> 4;
  if (cls == 0 || cls == 1) return ParseAtomic(r, cls, bits, size, where);
  if (cls == 8 && depth == 0) {
    // An enum: h5py stores numpy bool as enum int8 {FALSE = 0, TRUE = 1}; that one is kBool.
    TESSERA_ASSIGN_OR_RETURN(Datatype base, ParseDatatypeAt(r, where, depth + 1));
    const uint32_t members = bits & 0xffff;
    std::vector<std::string> names;
    for (uint32_t i = 0; i < members && r.ok() && i < 2; ++i) {
      const size_t start = r.pos();
      std::string name;
      for (uint8_t c = r.U8(); r.ok() && c != 0; c = r.U8()) name += static_cast<char>(c);
      if (version < 3) r.set_pos(start + (r.pos() - start + 7) / 8 * 8);  // names padded to 8
      names.push_back(name);
    }
    if (!r.ok()) return r.status();
    if (members == 2 && base.size == 1 && names[0] == "FALSE" && names[1] == "TRUE") {
      ByteView values = r.Take(2);
      if (r.ok() && values[0] == 0 && values[1] == 1) {
        Datatype t;
        t.dtype = DataType::kBool;
        t.size = 1;
        t.description = "bool (enum FALSE/TRUE)";
        return t;
      }
    }
    return Unsupported(where + ": enumeration datatypes (other than h5py's FALSE/TRUE bool)");
  }
  static const char* kClassNames[] = {"fixed-point", "floating-point", "time", "string", "bitfield", "opaque",
                                      "compound", "reference", "enumeration", "variable-length", "array",
                                      "complex"};
  const std::string name = cls < 12 ? kClassNames[cls] : "class " + std::to_string(cls);
  return Unsupported(where + ": " + name + " datatypes (tessera reads integers, IEEE floats and h5py bools)");
}

}  // namespace

std::string ChunkIndexName(ChunkIndexType t) {
  switch (t) {
    case ChunkIndexType::kBTreeV1: return "v1 B-tree";
    case ChunkIndexType::kSingleChunk: return "single chunk";
    case ChunkIndexType::kImplicit: return "implicit";
    case ChunkIndexType::kFixedArray: return "fixed array";
    case ChunkIndexType::kExtensibleArray: return "extensible array";
    case ChunkIndexType::kBTreeV2: return "v2 B-tree";
  }
  return "unknown";
}

void SwapComponents(uint8_t* data, size_t n, size_t component) {
  if (component <= 1) return;
  for (size_t i = 0; i + component <= n; i += component) std::reverse(data + i, data + i + component);
}

Result<Dataspace> ParseDataspace(const RawFile& file, const HeaderMessage& m) {
  TESSERA_RETURN_IF_ERROR(CheckNotShared(file, m, "dataspace message"));
  FieldReader r(m.body, file, "dataspace message", m.addr);
  const uint8_t version = r.U8();
  const uint8_t rank = r.U8();
  const uint8_t flags = r.U8();
  Dataspace ds;
  if (version == 1) {
    r.Skip(5);
  } else if (version == 2) {
    const uint8_t type = r.U8();
    if (type == 2) ds.is_null = true;
    else if (type > 2) return r.Fail("dataspace type " + std::to_string(type));
  } else {
    if (!r.ok()) return r.status();
    return r.Fail("dataspace message version " + std::to_string(version));
  }
  if (!r.ok()) return r.status();
  if (rank > kMaxHdf5Rank)
    return r.Fail("rank " + std::to_string(rank) + " exceeds HDF5's limit of " + std::to_string(kMaxHdf5Rank));
  for (int i = 0; i < rank; ++i) ds.dims.push_back(r.Length());
  if (flags & 1) {
    for (int i = 0; i < rank; ++i) ds.max_dims.push_back(r.Length());
  } else {
    ds.max_dims = ds.dims;
  }
  if (!r.ok()) return r.status();
  return ds;
}

Result<Datatype> ParseDatatype(const RawFile& file, const HeaderMessage& m) {
  TESSERA_RETURN_IF_ERROR(CheckNotShared(file, m, "datatype message"));
  FieldReader r(m.body, file, "datatype message", m.addr);
  return ParseDatatypeAt(r, file.Where("datatype message", m.addr, m.body.size()), 0);
}

// A fill value message's size field saying "no fill value defined".
constexpr uint32_t kUndefinedFillSize = 0xFFFFFFFF;

Result<FillValue> ParseFillValue(const RawFile& file, const ObjectHeader& oh, const Datatype& type) {
  ByteView value;
  const HeaderMessage* m = oh.Find(kMsgFillValue);
  std::string what = "fill value message";
  if (m != nullptr) {
    FieldReader r(m->body, file, what, m->addr);
    const uint8_t version = r.U8();
    if (version == 1 || version == 2) {
      r.Skip(2);  // space allocation time, fill value write time
      const uint8_t defined = r.U8();
      if (version == 1 || defined) {
        const uint32_t size = r.U32();
        if (size != kUndefinedFillSize) value = r.Take(size);
      }
    } else if (version == 3) {
      const uint8_t flags = r.U8();
      if (flags & 0x20) {
        const uint32_t size = r.U32();
        value = r.Take(size);
      }
    } else if (r.ok()) {
      return r.Fail("fill value message version " + std::to_string(version));
    }
    if (!r.ok()) return r.status();
  } else if ((m = oh.Find(kMsgFillValueOld)) != nullptr) {
    what = "old fill value message";
    FieldReader r(m->body, file, what, m->addr);
    const uint32_t size = r.U32();
    if (size != kUndefinedFillSize) value = r.Take(size);  // older PyTables files: undefined
    if (!r.ok()) return r.status();
  }
  FillValue fill = ZeroFill(type.dtype);
  if (value.empty()) return fill;  // undefined: zeros (as HDF5 reads unwritten data)
  if (value.size() != type.size)
    return file.Corrupt(what, m->addr, m->body.size(),
                        "fill value of " + std::to_string(value.size()) + " bytes for " +
                            std::to_string(type.size) + "-byte elements");
  fill.bytes.assign(value.begin(), value.end());
  if (type.big_endian) SwapComponents(fill.bytes.data(), fill.bytes.size(), ComponentSize(type.dtype));
  return fill;
}

Result<FilterPipeline> ParseFilterPipeline(const RawFile& file, const HeaderMessage& m) {
  TESSERA_RETURN_IF_ERROR(CheckNotShared(file, m, "filter pipeline message"));
  FieldReader r(m.body, file, "filter pipeline message", m.addr);
  const uint8_t version = r.U8();
  const uint8_t count = r.U8();
  if (!r.ok()) return r.status();
  if (version != 1 && version != 2) return r.Fail("filter pipeline version " + std::to_string(version));
  if (count > 32) return r.Fail(std::to_string(count) + " filters (HDF5 allows 32)");
  if (version == 1) r.Skip(6);
  FilterPipeline pipeline;
  for (int i = 0; i < count; ++i) {
    Filter f;
    f.id = r.U16();
    const uint16_t name_length = (version == 1 || f.id >= 256) ? r.U16() : 0;
    f.flags = r.U16();
    const uint16_t nvalues = r.U16();
    ByteView name = r.Take(name_length);
    if (!r.ok()) return r.status();
    f.name.assign(name.begin(), std::find(name.begin(), name.end(), uint8_t{0}));
    for (int v = 0; v < nvalues; ++v) f.client_data.push_back(r.U32());
    if (version == 1 && nvalues % 2 == 1) r.Skip(4);
    if (!r.ok()) return r.status();
    pipeline.push_back(std::move(f));
  }
  return pipeline;
}

Result<Layout> ParseLayout(const RawFile& file, const HeaderMessage& m, size_t rank) {
  TESSERA_RETURN_IF_ERROR(CheckNotShared(file, m, "data layout message"));
  FieldReader r(m.body, file, "data layout message", m.addr);
  Layout l;
  l.version = r.U8();
  if (!r.ok()) return r.status();
  auto read_chunk_dims = [&](size_t ndims, size_t width) -> Status {
    if (ndims != rank + 1)
      return r.Fail("chunk rank " + std::to_string(ndims) + " for a rank-" + std::to_string(rank) +
                    " dataspace (expected rank + 1)");
    for (size_t i = 0; i < rank; ++i) {
      l.chunk_dims.push_back(r.U(width));
      if (r.ok() && l.chunk_dims.back() == 0) return r.Fail("chunk dimension " + std::to_string(i) + " is 0");
    }
    l.chunk_element_size = static_cast<uint32_t>(r.U(width));
    return r.status();
  };
  if (l.version == 1 || l.version == 2) {
    const uint8_t ndims = r.U8();
    const uint8_t cls = r.U8();
    r.Skip(5);
    if (!r.ok()) return r.status();
    if (cls == 0) {
      l.cls = LayoutClass::kCompact;
      r.Skip(4 * ndims);
      const uint32_t size = r.U32();
      ByteView data = r.Take(size);
      l.compact_data.assign(data.begin(), data.end());
      l.size = size;
    } else if (cls == 1) {
      l.cls = LayoutClass::kContiguous;
      l.address = r.Addr();
      r.Skip(4 * ndims);
      // v1/v2 record dimensions, not a byte count: the dataset derives the size from its shape.
      l.size = kUndefinedAddress;
    } else if (cls == 2) {
      l.cls = LayoutClass::kChunked;
      l.address = r.Addr();
      TESSERA_RETURN_IF_ERROR(read_chunk_dims(ndims, 4));
    } else {
      return r.Fail("layout class " + std::to_string(cls));
    }
    if (!r.ok()) return r.status();
    return l;
  }
  // Version 5 (HDF5 2.0) has version 4's layout; only the width of filtered chunk sizes inside the
  // index changes, and the index readers take that width from the index's own element size.
  if (l.version < 3 || l.version > 5) return r.Fail("data layout message version " + std::to_string(l.version));
  const uint8_t cls = r.U8();
  if (cls == 0) {
    l.cls = LayoutClass::kCompact;
    const uint16_t size = r.U16();
    ByteView data = r.Take(size);
    l.compact_data.assign(data.begin(), data.end());
    l.size = size;
  } else if (cls == 1) {
    l.cls = LayoutClass::kContiguous;
    l.address = r.Addr();
    l.size = r.Length();
  } else if (cls == 2 && l.version == 3) {
    l.cls = LayoutClass::kChunked;
    const uint8_t ndims = r.U8();
    l.address = r.Addr();
    if (!r.ok()) return r.status();
    TESSERA_RETURN_IF_ERROR(read_chunk_dims(ndims, 4));
  } else if (cls == 2) {
    l.cls = LayoutClass::kChunked;
    const uint8_t flags = r.U8();
    const uint8_t ndims = r.U8();
    const uint8_t width = r.U8();
    if (!r.ok()) return r.status();
    if (width < 1 || width > 8) return r.Fail("chunk dimension width " + std::to_string(width));
    l.dont_filter_partial_edge_chunks = flags & 1;
    TESSERA_RETURN_IF_ERROR(read_chunk_dims(ndims, width));
    const uint8_t type = r.U8();
    if (!r.ok()) return r.status();
    switch (type) {
      case 1:
        l.index_type = ChunkIndexType::kSingleChunk;
        if (flags & 2) {
          l.single_chunk_filtered = true;
          l.single_chunk_size = r.Length();
          l.single_chunk_filter_mask = r.U32();
        }
        break;
      case 2: l.index_type = ChunkIndexType::kImplicit; break;
      case 3:
        l.index_type = ChunkIndexType::kFixedArray;
        l.fa_page_bits = r.U8();
        break;
      case 4:
        l.index_type = ChunkIndexType::kExtensibleArray;
        l.ea_max_bits = r.U8();
        l.ea_index_elements = r.U8();
        l.ea_min_pointers = r.U8();
        l.ea_min_elements = r.U8();
        l.ea_page_bits = r.U8();
        break;
      case 5:
        l.index_type = ChunkIndexType::kBTreeV2;
        l.bt2_node_size = r.U32();
        r.Skip(2);  // split / merge percentages
        break;
      default: return r.Fail("chunk index type " + std::to_string(type));
    }
    l.address = r.Addr();
  } else if (cls == 3) {
    return Unsupported(file.Where("data layout message", m.addr, m.body.size()) + ": virtual datasets");
  } else {
    if (!r.ok()) return r.status();
    return r.Fail("layout class " + std::to_string(cls));
  }
  if (!r.ok()) return r.status();
  return l;
}

}  // namespace tessera::hdf5
