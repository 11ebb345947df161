// External storage: a contiguous dataset whose raw data lives in other files (the External Data
// Files message, 0x0007). The dataset's bytes are the concatenation of the slots, in order; each
// slot is `size` bytes of one file starting at `offset`. Bytes past the end of an external file
// read as zeros (as the HDF5 library reads them); the last slot's size may be unlimited.
//
//   message: version (u8) = 1 | reserved (3) | allocated slots (u16) | used slots (u16) |
//            local heap address (O) | per used slot: name offset in the heap (L),
//            byte offset in the file (L), size (L)
//
// File names are resolved against the HDF5 file's own directory and checked by the linked-file
// policy (h5_linked_files.h) when the dataset is opened; files are opened on first read.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "tessera/hdf5/h5_linked_files.h"
#include "tessera/hdf5/h5_object_header.h"
#include "tessera/hdf5/h5_raw_file.h"

namespace tessera::hdf5 {

struct ExternalFileSlot {
  std::string name;  // as the file stores it
  uint64_t offset = 0;
  uint64_t size = 0;  // kUnlimited: to the end of the file, and beyond as zeros
};

// Decodes the message and the file names from its local heap. Errors name the message's byte range.
Result<std::vector<ExternalFileSlot>> ParseExternalFiles(const RawFile& file, const HeaderMessage& m);

class ExternalStorage {
 public:
  // `what`: "dataset /x" (errors name the HDF5 file and it).
  static Result<std::unique_ptr<ExternalStorage>> Open(std::shared_ptr<const RawFile> file, const HeaderMessage& m,
                                                       const LinkedFilePolicy& policy, std::string what);
  // Bytes [offset, offset + len) of the dataset's raw data into dst. Thread-safe.
  Status Read(uint64_t offset, uint64_t len, uint8_t* dst) const;
  // Bytes the slots hold in all (UINT64_MAX when the last is unlimited).
  uint64_t total_bytes() const { return total_bytes_; }
  const std::vector<ExternalFileSlot>& slots() const { return slots_; }
  // The resolved location of each slot's file (a real path, or a store key).
  const std::vector<std::string>& resolved() const { return resolved_; }

 private:
  Result<std::shared_ptr<RawFile>> SlotFile(size_t slot) const;

  std::shared_ptr<const RawFile> file_;
  std::string what_;
  std::vector<ExternalFileSlot> slots_;
  std::vector<std::string> resolved_;
  uint64_t total_bytes_ = 0;
  mutable std::mutex mu_;
  mutable std::vector<std::shared_ptr<RawFile>> opened_;  // per slot, on first read
};

}  // namespace tessera::hdf5
