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
  Datatype t;
  TESSERA_ASSIGN_OR_RETURN(t.type, ReadDatatypeMessage(file, m));
  TESSERA_ASSIGN_OR_RETURN(t.element, MapToNumpy(t.type, file.Where("datatype message", m.addr, m.body.size())));
  t.dtype = t.element.dtype.value_or(DataType::kUInt8);
  t.size = t.type.size;
  // The byte order of the scalars inside (the first one found): what `tessera info` shows.
  for (const H5Type* leaf = &t.type;;) {
    if (leaf->cls == H5TypeClass::kFixedPoint || leaf->cls == H5TypeClass::kFloatingPoint ||
        leaf->cls == H5TypeClass::kBitfield) {
      t.big_endian = leaf->big_endian;
      t.vax_order = leaf->cls == H5TypeClass::kFloatingPoint && leaf->vax_order && leaf->version >= 3;
      break;
    }
    if (!leaf->base.empty()) {
      leaf = &leaf->Base();
    } else if (!leaf->members.empty()) {
      leaf = &leaf->members.front().type.front();
    } else {
      break;
    }
  }
  t.description = t.element.description;
  return t;
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
  FillValue fill;
  fill.bytes.assign(NumpyBytesOf(type.element, type.size), 0);  // numpy's element (a long double widened)
  if (value.empty()) return fill;  // undefined: zeros (as HDF5 reads unwritten data)
  if (value.size() != type.size)
    return file.Corrupt(what, m->addr, m->body.size(),
                        "fill value of " + std::to_string(value.size()) + " bytes for " +
                            std::to_string(type.size) + "-byte elements");
  fill.bytes.assign(value.begin(), value.end());
  ConvertToNumpy(type.element.steps, fill.bytes.data(), fill.bytes.size() / type.element.item_bytes,
                 type.element.item_bytes);
  WidenToNumpy(type.element, &fill.bytes);
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
