#include "tessera/hdf5/h5_vlen_value.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <numeric>

#include "tessera/hdf5/h5_vlen.h"
#include "tessera/read/object_value_encoding.h"

namespace tessera::hdf5 {
namespace {

// A plan of more parts (fixed copies, conversion steps, object slots) is refused: an array
// member of a million vlen strings has no business in one record.
constexpr size_t kMaxPlanParts = 1 << 16;
// One element's encoding may not grow past this (nested sequences pointing at one large heap
// object again and again would otherwise multiply it).
constexpr size_t kMaxValueBytes = size_t{1} << 30;

// numpy's size of a variable-length member in a record: HDF5's memory layout, which h5py keeps
// (a char* for strings, an hvl_t {size_t len; void* p} for sequences).
uint32_t MemoryBytes(const H5Type& vlen) { return vlen.vlen_string ? 8 : 16; }

constexpr uint32_t kPointerBytes = 8;  // a PyObject* in a numpy object field

}  // namespace

// Builds plans; counts their parts against kMaxPlanParts.
class VlenPlanBuilder {
 public:
  explicit VlenPlanBuilder(std::string where) : where_(std::move(where)) {}

  Result<std::unique_ptr<VlenValuePlan>> Value(const H5Type& t, bool top_level) {
    std::unique_ptr<VlenValuePlan> plan(new VlenValuePlan());
    plan->stored_bytes_ = t.size;
    if (t.cls == H5TypeClass::kVariableLength) {
      TESSERA_RETURN_IF_ERROR(CheckReferenceSize(t));
      if (t.vlen_string) {
        plan->kind_ = VlenValuePlan::Kind::kString;
        plan->type_.kind = top_level ? ObjectKind::kString : ObjectKind::kBytes;
        plan->type_.name = std::string("vlen string (") + (t.charset == 1 ? "UTF-8" : "ASCII") + ")";
        return plan;
      }
      if (t.base.empty()) return CorruptData(where_ + ": a variable-length sequence type without a base type");
      const H5Type& base = t.Base();
      if (base.size == 0) return CorruptData(where_ + ": a variable-length sequence of 0-byte values");
      plan->kind_ = VlenValuePlan::Kind::kSequence;
      plan->type_.kind = ObjectKind::kSequence;
      plan->base_bytes_ = base.size;
      if (HoldsVariableLength(base)) {
        TESSERA_ASSIGN_OR_RETURN(plan->base_plan_, Value(base, /*top_level=*/false));
        plan->type_.sequence_of.push_back(plan->base_plan_->type_);
        plan->type_.name = "vlen sequence of " + plan->base_plan_->type_.name;
        return plan;
      }
      TESSERA_ASSIGN_OR_RETURN(NumpyElement e, MapMember(base, 0, where_ + ": vlen sequence base type"));
      TESSERA_RETURN_IF_ERROR(Count(e.steps.size()));
      plan->base_steps_ = std::move(e.steps);
      plan->type_.sequence_dtype = e.numpy.is_string() ? e.numpy.get<std::string>() : e.numpy.dump();
      plan->type_.name = "vlen sequence of " + e.description;
      return plan;
    }
    if (t.cls != H5TypeClass::kCompound && t.cls != H5TypeClass::kArray)
      return Unsupported(where_ + ": variable-length data inside a " + H5TypeClassName(t.cls) + " datatype");
    plan->kind_ = VlenValuePlan::Kind::kRecord;
    std::map<const H5Type*, uint32_t> slot_index;
    TESSERA_ASSIGN_OR_RETURN(Laid laid, Lay(t, 0, 0, *plan, slot_index));
    plan->type_.kind = ObjectKind::kRecord;
    plan->type_.record_dtype = laid.numpy.dump();
    // numpy's size of one element: an array of vlen sequences is a subarray of 8-byte object
    // fields (numpy_bytes), not HDF5's 16-byte hvl_t per value (bytes); a compound's are equal.
    plan->type_.record_bytes = laid.numpy_bytes;
    plan->type_.name = laid.description;
    TESSERA_RETURN_IF_ERROR(CheckRecord(*plan));
    return plan;
  }

 private:
  struct Laid {
    nlohmann::json numpy;
    uint32_t bytes = 0;  // the part's size in HDF5's memory layout (where the next member goes)
    std::string description;
    // numpy's size of the part (an array's stride over it): `bytes`, but a pointer for a vlen
    // sequence, which HDF5 gives 16 bytes (hvl_t) and numpy's object field 8.
    uint32_t numpy_bytes = 0;
  };

  Status CheckReferenceSize(const H5Type& t) {
    if (t.size == kVlenReferenceBytes) return Status::Ok();
    return Unsupported(where_ + ": variable-length references of " + std::to_string(t.size) + " bytes (tessera reads " +
                       std::to_string(kVlenReferenceBytes) + ", the size with 8-byte file offsets)");
  }

  Status Count(size_t parts) {
    parts_ += parts;
    if (parts_ > kMaxPlanParts)
      return Unsupported(where_ + ": an element of more than " + std::to_string(kMaxPlanParts) + " parts to convert");
    return Status::Ok();
  }

  // Lays `t`, stored at `stored_offset` and placed at `offset` in numpy's record, into `record`.
  Result<Laid> Lay(const H5Type& t, uint32_t stored_offset, uint32_t offset, VlenValuePlan& record,
                   std::map<const H5Type*, uint32_t>& slot_index) {
    if (!HoldsVariableLength(t)) {
      TESSERA_ASSIGN_OR_RETURN(NumpyElement e, MapMember(t, offset, where_));
      TESSERA_RETURN_IF_ERROR(Count(1 + e.steps.size()));
      record.copies_.push_back({stored_offset, offset, t.size});
      record.steps_.insert(record.steps_.end(), e.steps.begin(), e.steps.end());
      return Laid{std::move(e.numpy), t.size, std::move(e.description), t.size};
    }
    switch (t.cls) {
      case H5TypeClass::kVariableLength: {
        TESSERA_RETURN_IF_ERROR(CheckReferenceSize(t));
        TESSERA_RETURN_IF_ERROR(Count(1));
        auto [it, fresh] = slot_index.emplace(&t, static_cast<uint32_t>(record.slot_plans_.size()));
        if (fresh) {
          TESSERA_ASSIGN_OR_RETURN(std::unique_ptr<VlenValuePlan> plan, Value(t, /*top_level=*/false));
          record.type_.slot_types.push_back(plan->type_);
          record.slot_plans_.push_back(std::move(plan));
        }
        record.slots_.push_back({stored_offset, record.slot_plans_[it->second].get()});
        record.type_.slot_offsets.push_back(offset);
        record.type_.slot_type.push_back(it->second);
        return Laid{"|O", MemoryBytes(t), record.slot_plans_[it->second]->type_.name, kPointerBytes};
      }
      case H5TypeClass::kCompound: {
        // HDF5 sorts a compound's members by offset before laying it out in memory.
        std::vector<size_t> order(t.members.size());
        std::iota(order.begin(), order.end(), size_t{0});
        std::stable_sort(order.begin(), order.end(),
                         [&](size_t a, size_t b) { return t.members[a].offset < t.members[b].offset; });
        nlohmann::json names = nlohmann::json::array(), formats = nlohmann::json::array(),
                       offsets = nlohmann::json::array();
        std::string description = "compound {";
        int64_t shift = 0;     // numpy's offsets minus the stored ones, so far
        uint64_t stored_end = 0;
        for (size_t k = 0; k < order.size(); ++k) {
          const H5Member& m = t.members[order[k]];
          const H5Type& mt = m.type.front();
          if (m.offset < stored_end) {
            return CorruptData(where_ + ": compound member \"" + Utf8Name(m.name) + "\" at byte " + std::to_string(m.offset) +
                               " overlaps the member before it (which ends at byte " + std::to_string(stored_end) + ")");
          }
          stored_end = uint64_t{m.offset} + mt.size;
          const uint32_t member_offset = static_cast<uint32_t>(m.offset + shift);
          TESSERA_ASSIGN_OR_RETURN(Laid member, Lay(mt, stored_offset + m.offset, offset + member_offset, record, slot_index));
          shift += int64_t{member.bytes} - int64_t{mt.size};
          const std::string name = Utf8Name(m.name);
          names.push_back(name);
          formats.push_back(std::move(member.numpy));
          offsets.push_back(member_offset);
          description += (k ? ", " : "") + name + ": " + member.description;
        }
        const uint32_t bytes = static_cast<uint32_t>(int64_t{t.size} + shift);
        nlohmann::json numpy = {{"names", names}, {"formats", formats}, {"offsets", offsets}, {"itemsize", bytes}};
        return Laid{std::move(numpy), bytes, description + "}", bytes};
      }
      case H5TypeClass::kArray: {
        const H5Type& base = t.Base();
        if (base.size == 0 || t.size % base.size != 0)
          return CorruptData(where_ + ": an array datatype of " + std::to_string(t.size) + " bytes over " +
                             std::to_string(base.size) + "-byte elements");
        const uint32_t count = t.size / base.size;
        // numpy's subarray holds its elements numpy_bytes apart (HDF5's memory layout holds them
        // `bytes` apart, which only the array's total size below keeps).
        Laid first;
        for (uint32_t i = 0; i < count; ++i) {
          TESSERA_ASSIGN_OR_RETURN(Laid element,
                                   Lay(base, stored_offset + i * base.size, offset + i * first.numpy_bytes, record, slot_index));
          if (i == 0) first = std::move(element);
        }
        nlohmann::json shape = nlohmann::json::array();
        std::string dims;
        for (uint32_t n : t.array_dims) {
          shape.push_back(n);
          dims += "[" + std::to_string(n) + "]";
        }
        return Laid{{{"base", std::move(first.numpy)}, {"shape", shape}}, count * first.bytes, first.description + dims,
                    count * first.numpy_bytes};
      }
      default:
        return Unsupported(where_ + ": variable-length data inside a " + H5TypeClassName(t.cls) + " datatype");
    }
  }

  // Every part of the record inside it, stored and in numpy's layout (a guard for the readers that
  // write into numpy's memory at these offsets).
  Status CheckRecord(const VlenValuePlan& plan) {
    const uint64_t bytes = plan.type_.record_bytes;
    for (const VlenValuePlan::Copy& c : plan.copies_) {
      if (uint64_t{c.offset} + c.size > bytes || uint64_t{c.stored_offset} + c.size > plan.stored_bytes_)
        return CorruptData(where_ + ": a member past the end of its " + std::to_string(plan.stored_bytes_) + "-byte compound");
    }
    for (size_t i = 0; i < plan.slots_.size(); ++i) {
      if (uint64_t{plan.type_.slot_offsets[i]} + kPointerBytes > bytes ||
          uint64_t{plan.slots_[i].stored_offset} + kVlenReferenceBytes > plan.stored_bytes_)
        return CorruptData(where_ + ": a variable-length member past the end of its " + std::to_string(plan.stored_bytes_) +
                           "-byte compound");
    }
    return Status::Ok();
  }

  std::string where_;
  size_t parts_ = 0;
};

Result<std::string> HeapObjects::Data(ByteView stored, size_t base_bytes, const std::string& what, uint32_t* count) {
  TESSERA_ASSIGN_OR_RETURN(VlenReference ref, DecodeVlenReference(stored, what));
  *count = ref.count;
  if (ref.count == 0) return std::string();  // empty, whatever the heap ID says
  if (!collection_ || collection_->addr() != ref.id.collection_addr) {
    Result<std::shared_ptr<const GlobalHeapCollection>> found = heap_.Collection(ref.id.collection_addr);
    if (!found.ok()) return found.status().WithContext(what);
    collection_ = std::move(found).value();
  }
  Result<ByteView> object = collection_->Object(ref.id.index);
  if (!object.ok()) return object.status().WithContext(what);
  return VlenElementData(ref, *object, base_bytes, what);
}

VlenValuePlan::~VlenValuePlan() = default;

Result<std::unique_ptr<VlenValuePlan>> VlenValuePlan::Make(const H5Type& type, bool top_level, const std::string& where) {
  return VlenPlanBuilder(where).Value(type, top_level);
}

Status VlenValuePlan::Encode(ByteView stored, HeapObjects& heap, const std::string& what, std::string* out) const {
  if (stored.size() < stored_bytes_) {
    return CorruptData(what + ": " + std::to_string(stored.size()) + " stored bytes for a " + std::to_string(stored_bytes_) +
                       "-byte value");
  }
  switch (kind_) {
    case Kind::kString: {
      uint32_t count = 0;
      TESSERA_ASSIGN_OR_RETURN(std::string data, heap.Data(stored, 1, what, &count));
      out->append(data);
      break;
    }
    case Kind::kSequence: {
      uint32_t count = 0;
      TESSERA_ASSIGN_OR_RETURN(std::string data, heap.Data(stored, base_bytes_, what, &count));
      if (!base_plan_) {
        ConvertToNumpy(base_steps_, reinterpret_cast<uint8_t*>(data.data()), count, base_bytes_);
        out->append(data);
        break;
      }
      if (count == 0) break;
      AppendObjectCount(count, out);
      std::string part;
      for (uint32_t i = 0; i < count; ++i) {
        part.clear();
        const ByteView value(reinterpret_cast<const uint8_t*>(data.data()) + size_t{i} * base_bytes_, base_bytes_);
        TESSERA_RETURN_IF_ERROR(base_plan_->Encode(value, heap, what + ", value " + std::to_string(i), &part));
        AppendObjectPart(part, out);
        if (out->size() > kMaxValueBytes)
          return Unsupported(what + ": a value of more than " + std::to_string(kMaxValueBytes) + " bytes");
      }
      break;
    }
    case Kind::kRecord: {
      const size_t start = out->size();
      out->resize(start + type_.record_bytes, '\0');
      auto* record = reinterpret_cast<uint8_t*>(out->data() + start);
      for (const Copy& c : copies_) std::memcpy(record + c.offset, stored.data() + c.stored_offset, c.size);
      ConvertToNumpy(steps_, record, 1, type_.record_bytes);
      std::string part;
      for (const Slot& s : slots_) {
        part.clear();
        TESSERA_RETURN_IF_ERROR(s.plan->Encode(stored.subspan(s.stored_offset, kVlenReferenceBytes), heap, what, &part));
        AppendObjectPart(part, out);
        if (out->size() > kMaxValueBytes)
          return Unsupported(what + ": a value of more than " + std::to_string(kMaxValueBytes) + " bytes");
      }
      break;
    }
  }
  return Status::Ok();
}

}  // namespace tessera::hdf5
