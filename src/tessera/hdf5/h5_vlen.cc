#include "tessera/hdf5/h5_vlen.h"

#include <cstring>

namespace tessera::hdf5 {
namespace {

uint64_t LoadLE(const uint8_t* p, int n) {
  uint64_t v = 0;
  for (int i = n; i-- > 0;) v = (v << 8) | p[i];
  return v;
}

std::string CoordsText(std::span<const int64_t> coords) {
  std::string s = "(";
  for (size_t d = 0; d < coords.size(); ++d) s += (d ? ", " : "") + std::to_string(coords[d]);
  return s + ")";
}

}  // namespace

Result<NumpyElement> MapVariableLengthElement(const H5Type& type, const std::string& where) {
  if (type.size != kVlenReferenceBytes) {
    return Unsupported(where + ": variable-length references of " + std::to_string(type.size) + " bytes (tessera reads " +
                       std::to_string(kVlenReferenceBytes) + ", the size with 8-byte file offsets)");
  }
  NumpyElement e;
  e.item_bytes = type.size;
  e.numpy = "|V" + std::to_string(type.size);
  TESSERA_ASSIGN_OR_RETURN(ObjectType object, VlenObjectType(type, where));
  e.description = object.name;
  return e;
}

Result<ObjectType> VlenObjectType(const H5Type& type, const std::string& where) {
  if (type.vlen_string) {
    return ObjectType{ObjectKind::kString, "", std::string("vlen string (") + (type.charset == 1 ? "UTF-8" : "ASCII") + ")"};
  }
  if (type.base.empty()) return CorruptData(where + ": a variable-length sequence type without a base type");
  const H5Type& base = type.Base();
  if (base.cls == H5TypeClass::kVariableLength)
    return Unsupported(where + ": variable-length sequences of variable-length data are not read");
  TESSERA_ASSIGN_OR_RETURN(NumpyElement e, MapToNumpy(base, where + ": vlen sequence base type"));
  if (!e.numpy.is_string() || !e.trailing_dims.empty() || e.item_bytes != base.size) {
    return Unsupported(where + ": variable-length sequences of " + e.description +
                       " (tessera reads sequences of numbers, enums, fixed strings and opaque values)");
  }
  return ObjectType{ObjectKind::kSequence, e.numpy.get<std::string>(), "vlen sequence of " + e.description};
}

Result<VlenReference> DecodeVlenReference(ByteView element, std::string_view what) {
  if (element.size() < kVlenReferenceBytes) {
    return CorruptData(std::string(what) + ": a variable-length reference needs " + std::to_string(kVlenReferenceBytes) +
                       " bytes, got " + std::to_string(element.size()));
  }
  VlenReference ref;
  ref.count = static_cast<uint32_t>(LoadLE(element.data(), 4));
  TESSERA_ASSIGN_OR_RETURN(ref.id, DecodeGlobalHeapId(element.subspan(4), what));
  return ref;
}

Result<std::string> VlenElementData(const VlenReference& ref, ByteView object, size_t base_bytes, std::string_view what) {
  const uint64_t need = uint64_t{ref.count} * base_bytes;
  if (need > object.size()) {
    return CorruptData(std::string(what) + ": " + std::to_string(ref.count) + " x " + std::to_string(base_bytes) +
                       " bytes (" + std::to_string(need) + ") past the end of its global heap object (collection 0x" +
                       [&] {
                         char buf[32];
                         std::snprintf(buf, sizeof buf, "%llx", static_cast<unsigned long long>(ref.id.collection_addr));
                         return std::string(buf);
                       }() +
                       ", index " + std::to_string(ref.id.index) + ", " + std::to_string(object.size()) + " bytes)");
  }
  return std::string(reinterpret_cast<const char*>(object.data()), static_cast<size_t>(need));
}

Result<std::unique_ptr<VlenElements>> VlenElements::Make(std::shared_ptr<const ChunkSource> raw,
                                                         std::shared_ptr<const RawFile> file, const H5Type& type,
                                                         std::string where) {
  std::unique_ptr<VlenElements> v(new VlenElements());
  TESSERA_ASSIGN_OR_RETURN(v->type_, VlenObjectType(type, where));
  if (raw->shape().empty() || raw->shape().back() != static_cast<int64_t>(kVlenReferenceBytes) ||
      raw->read_chunk_shape().back() != static_cast<int64_t>(kVlenReferenceBytes)) {
    return Unsupported(where + ": variable-length references are not read as " + std::to_string(kVlenReferenceBytes) +
                       "-byte elements here");
  }
  v->shape_.assign(raw->shape().begin(), raw->shape().end() - 1);
  v->chunk_shape_.assign(raw->read_chunk_shape().begin(), raw->read_chunk_shape().end() - 1);
  if (!type.vlen_string) {
    const H5Type& base = type.Base();
    TESSERA_ASSIGN_OR_RETURN(NumpyElement e, MapToNumpy(base, where));
    v->base_bytes_ = base.size;
    v->base_steps_ = std::move(e.steps);
  }
  v->heap_ = GlobalHeap::Of(std::move(file));
  v->where_ = std::move(where);
  // A defined fill value is itself a reference (to the element chunks never written read as).
  if (std::shared_ptr<const ElementType> e = raw->element_type(); e && e->fill.size() == kVlenReferenceBytes) {
    const std::string what = v->where_ + ": fill value";
    TESSERA_ASSIGN_OR_RETURN(VlenReference ref, DecodeVlenReference(e->fill, what));
    if (ref.count > 0) {
      TESSERA_ASSIGN_OR_RETURN(v->fill_, v->Resolve(ref, what));
    }
  }
  v->raw_ = std::move(raw);
  return v;
}

Result<bool> VlenElements::ReadChunk(std::span<const int64_t> coords, std::vector<std::string>* out) const {
  std::vector<int64_t> raw_coords(coords.begin(), coords.end());
  raw_coords.push_back(0);  // the references' bytes: one chunk along the hidden dimension
  Bytes raw;
  TESSERA_ASSIGN_OR_RETURN(bool stored, raw_->ReadChunk(raw_coords, &raw));
  if (!stored) return false;
  size_t n = 1;
  for (int64_t e : chunk_shape_) n *= static_cast<size_t>(e);
  if (raw.size() < n * kVlenReferenceBytes) {
    return CorruptData(where_ + ": chunk " + CoordsText(coords) + " gave " + std::to_string(raw.size()) +
                       " bytes of references for " + std::to_string(n) + " elements");
  }
  out->assign(n, std::string());
  // Elements of one chunk mostly point into one collection: keep the last one found.
  std::shared_ptr<const GlobalHeapCollection> collection;
  for (size_t i = 0; i < n; ++i) {
    const ByteView element(raw.data() + i * kVlenReferenceBytes, kVlenReferenceBytes);
    auto what = [&] { return where_ + ": element " + std::to_string(i) + " of chunk " + CoordsText(coords); };
    TESSERA_ASSIGN_OR_RETURN(VlenReference ref, DecodeVlenReference(element, what()));
    if (ref.count == 0) continue;  // empty, whatever the heap ID says
    TESSERA_ASSIGN_OR_RETURN((*out)[i], Resolve(ref, what(), &collection));
  }
  return true;
}

Result<std::string> VlenElements::Resolve(const VlenReference& ref, const std::string& what,
                                          std::shared_ptr<const GlobalHeapCollection>* collection) const {
  std::shared_ptr<const GlobalHeapCollection> looked_up;
  if (!collection) collection = &looked_up;
  if (!*collection || (*collection)->addr() != ref.id.collection_addr) {
    Result<std::shared_ptr<const GlobalHeapCollection>> found = heap_->Collection(ref.id.collection_addr);
    if (!found.ok()) return found.status().WithContext(what);
    *collection = std::move(found).value();
  }
  Result<ByteView> object = (*collection)->Object(ref.id.index);
  if (!object.ok()) return object.status().WithContext(what);
  TESSERA_ASSIGN_OR_RETURN(std::string data, VlenElementData(ref, *object, base_bytes_, what));
  if (!base_steps_.empty()) ConvertToNumpy(base_steps_, reinterpret_cast<uint8_t*>(data.data()), ref.count, base_bytes_);
  return data;
}

}  // namespace tessera::hdf5
