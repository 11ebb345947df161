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

bool HoldsVariableLength(const H5Type& type) {
  if (type.cls == H5TypeClass::kVariableLength) return true;
  for (const H5Member& m : type.members)
    if (HoldsVariableLength(m.type.front())) return true;
  // An enumeration's base is an integer; an array's (or complex's) base may hold vlen data.
  return type.cls != H5TypeClass::kEnumeration && !type.base.empty() && HoldsVariableLength(type.Base());
}

Result<NumpyElement> MapVariableLengthElement(const H5Type& type, const std::string& where) {
  TESSERA_ASSIGN_OR_RETURN(ObjectType object, VlenObjectType(type, where));
  NumpyElement e;
  e.item_bytes = type.size;
  e.numpy = "|V" + std::to_string(type.size);
  e.description = object.name;
  return e;
}

Result<ObjectType> VlenObjectType(const H5Type& type, const std::string& where) {
  TESSERA_ASSIGN_OR_RETURN(std::unique_ptr<VlenValuePlan> plan, VlenValuePlan::Make(type, /*top_level=*/true, where));
  return plan->object_type();
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
  TESSERA_ASSIGN_OR_RETURN(v->plan_, VlenValuePlan::Make(type, /*top_level=*/true, where));
  const auto stored = static_cast<int64_t>(v->plan_->stored_bytes());
  if (raw->shape().empty() || raw->shape().back() != stored || raw->read_chunk_shape().back() != stored) {
    return Unsupported(where + ": elements holding variable-length data are not read as " + std::to_string(stored) +
                       "-byte elements here");
  }
  v->shape_.assign(raw->shape().begin(), raw->shape().end() - 1);
  v->chunk_shape_.assign(raw->read_chunk_shape().begin(), raw->read_chunk_shape().end() - 1);
  v->heap_ = GlobalHeap::Of(std::move(file));
  v->where_ = std::move(where);
  // A defined fill value holds references itself (to what chunks never written read as); without
  // one, such chunks read as a zero element: empty values, zero numbers.
  Bytes fill(static_cast<size_t>(stored), 0);
  if (std::shared_ptr<const ElementType> e = raw->element_type(); e && e->fill.size() == fill.size()) fill = e->fill;
  HeapObjects heap(*v->heap_);
  TESSERA_RETURN_IF_ERROR(v->plan_->Encode(fill, heap, v->where_ + ": fill value", &v->fill_));
  v->raw_ = std::move(raw);
  return v;
}

VlenElements::~VlenElements() = default;

const ObjectType& VlenElements::object_type() const { return plan_->object_type(); }

Result<bool> VlenElements::ReadChunk(std::span<const int64_t> coords, std::vector<std::string>* out) const {
  std::vector<int64_t> raw_coords(coords.begin(), coords.end());
  raw_coords.push_back(0);  // the elements' stored bytes: one chunk along the hidden dimension
  Bytes raw;
  TESSERA_ASSIGN_OR_RETURN(bool stored, raw_->ReadChunk(raw_coords, &raw));
  if (!stored) return false;
  size_t n = 1;
  for (int64_t e : chunk_shape_) n *= static_cast<size_t>(e);
  const size_t element_bytes = plan_->stored_bytes();
  if (raw.size() < n * element_bytes) {
    return CorruptData(where_ + ": chunk " + CoordsText(coords) + " gave " + std::to_string(raw.size()) + " bytes for " +
                       std::to_string(n) + " elements of " + std::to_string(element_bytes) + " bytes");
  }
  out->assign(n, std::string());
  HeapObjects heap(*heap_);
  for (size_t i = 0; i < n; ++i) {
    const ByteView element(raw.data() + i * element_bytes, element_bytes);
    if (plan_->Encode(element, heap, where_, &(*out)[i]).ok()) continue;
    // Naming the element costs a string per element; only a failure needs it, so the failing
    // element is encoded again (to the same error, or past a transient one) with its name.
    (*out)[i].clear();
    TESSERA_RETURN_IF_ERROR(
        plan_->Encode(element, heap, where_ + ": element " + std::to_string(i) + " of chunk " + CoordsText(coords), &(*out)[i]));
  }
  return true;
}

}  // namespace tessera::hdf5
