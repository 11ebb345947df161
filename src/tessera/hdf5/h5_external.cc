#include "tessera/hdf5/h5_external.h"

#include <algorithm>
#include <cstring>

#include "tessera/hdf5/h5_group.h"

namespace tessera::hdf5 {
namespace {

// More slots than this in one message is corrupt (HDF5 stores them in a u16 anyway).
constexpr size_t kMaxSlots = 65535;

}  // namespace

Result<std::vector<ExternalFileSlot>> ParseExternalFiles(const RawFile& file, const HeaderMessage& m) {
  FieldReader r(m.body, file, "external data files message", m.addr);
  const uint8_t version = r.U8();
  r.Skip(3);
  r.U16();  // allocated slots
  const uint16_t used = r.U16();
  const uint64_t heap_addr = r.Addr();
  if (!r.ok()) return r.status();
  if (version != 1) return r.Fail("version " + std::to_string(version) + " (expected 1)");
  if (used == 0 || used > kMaxSlots) return r.Fail("no used slots");

  TESSERA_ASSIGN_OR_RETURN(LocalHeap heap, ReadLocalHeap(file, heap_addr, "local heap of external file names"));

  std::vector<ExternalFileSlot> slots;
  for (uint16_t i = 0; i < used; ++i) {
    const uint64_t name_offset = r.Length();
    ExternalFileSlot slot;
    slot.offset = r.Length();
    slot.size = r.Length();
    if (!r.ok()) return r.status();
    if (slot.size == kUnlimited && i + 1 != used)
      return r.Fail("slot " + std::to_string(i) + " of " + std::to_string(used) + " has an unlimited size (only the last may)");
    TESSERA_ASSIGN_OR_RETURN(slot.name, HeapString(file, heap, name_offset));
    slots.push_back(std::move(slot));
  }
  return slots;
}

Result<std::unique_ptr<ExternalStorage>> ExternalStorage::Open(std::shared_ptr<const RawFile> file, const HeaderMessage& m,
                                                               const LinkedFilePolicy& policy, std::string what) {
  std::unique_ptr<ExternalStorage> s(new ExternalStorage());
  TESSERA_ASSIGN_OR_RETURN(s->slots_, ParseExternalFiles(*file, m));
  for (size_t i = 0; i < s->slots_.size(); ++i) {
    const ExternalFileSlot& slot = s->slots_[i];
    const std::string slot_what = file->path() + ": " + what + ": external file " + std::to_string(i);
    if (file->store()) {
      TESSERA_ASSIGN_OR_RETURN(std::string key, ResolveLinkedKey(file->key(), slot.name, slot_what));
      s->resolved_.push_back(std::move(key));
    } else {
      TESSERA_ASSIGN_OR_RETURN(std::string path, ResolveLinkedFile(file->path(), slot.name, policy, slot_what));
      s->resolved_.push_back(std::move(path));
    }
    if (slot.size == kUnlimited || s->total_bytes_ + slot.size < s->total_bytes_)
      s->total_bytes_ = UINT64_MAX;
    else
      s->total_bytes_ += slot.size;
  }
  s->opened_.resize(s->slots_.size());
  s->file_ = std::move(file);
  s->what_ = std::move(what);
  return s;
}

Result<std::shared_ptr<RawFile>> ExternalStorage::SlotFile(size_t slot) const {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (opened_[slot]) return opened_[slot];
  }
  Result<std::shared_ptr<RawFile>> opened =
      file_->store() ? RawFile::Open(file_->store(), resolved_[slot]) : RawFile::Open(resolved_[slot]);
  if (!opened.ok())
    return Status(opened.status().kind(), file_->path() + ": " + what_ + ": external file \"" + slots_[slot].name +
                                              "\" (" + resolved_[slot] + "): " + opened.status().message());
  std::lock_guard<std::mutex> lock(mu_);
  if (!opened_[slot]) opened_[slot] = *opened;
  return opened_[slot];
}

Status ExternalStorage::Read(uint64_t offset, uint64_t len, uint8_t* dst) const {
  uint64_t slot_begin = 0;  // of the dataset's bytes
  for (size_t i = 0; i < slots_.size() && len > 0; ++i) {
    const ExternalFileSlot& slot = slots_[i];
    const uint64_t slot_end = slot.size == kUnlimited ? UINT64_MAX : slot_begin + slot.size;
    if (offset < slot_end) {
      const uint64_t n = std::min(len, slot_end - offset);
      TESSERA_ASSIGN_OR_RETURN(std::shared_ptr<RawFile> f, SlotFile(i));
      // Bytes of the file at [from, from + n); what lies past its end reads as zeros.
      const uint64_t from = slot.offset + (offset - slot_begin);
      const uint64_t present = from >= f->size() ? 0 : std::min(n, f->size() - from);
      if (present > 0)
        TESSERA_RETURN_IF_ERROR(f->ReadInto(from, present, dst, "external data of " + what_));
      if (present < n) std::memset(dst + present, 0, n - present);
      dst += n;
      offset += n;
      len -= n;
    }
    if (slot_end == UINT64_MAX) break;
    slot_begin = slot_end;
  }
  if (len > 0)
    return CorruptData(file_->path() + ": " + what_ + ": raw data needs " + std::to_string(offset + len) +
                       " bytes, the external files hold " + std::to_string(total_bytes_));
  return Status::Ok();
}

}  // namespace tessera::hdf5
