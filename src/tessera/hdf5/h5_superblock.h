// The HDF5 superblock (versions 0-3): where the file's metadata starts. Its 8-byte signature is
// at offset 0, 512, 1024, 2048, ... (a user block may precede it).
#pragma once

#include <cstdint>
#include <optional>

#include "tessera/hdf5/h5_raw_file.h"

namespace tessera::hdf5 {

struct Superblock {
  int version = 0;
  uint64_t signature_offset = 0;  // absolute file offset of the signature
  uint64_t base_address = 0;      // absolute offset that relative addresses count from
  uint64_t end_of_file = 0;       // relative end-of-file address the writer recorded
  uint64_t root_object_header = kUndefinedAddress;  // relative
  uint64_t extension = kUndefinedAddress;           // the superblock extension's object header (v2/v3)
};

// The absolute offset of the HDF5 signature, nullopt when the file has none.
Result<std::optional<uint64_t>> FindSignature(const RawFile& file);

// Finds and parses the superblock, verifies its checksum (v2/v3) and sets file->base. Files
// whose offsets or lengths are not 8 bytes are kUnsupported; a file shorter than the recorded
// end of file is kCorruptData ("truncated").
Result<Superblock> ReadSuperblock(RawFile* file);

}  // namespace tessera::hdf5
