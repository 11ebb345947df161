// A dataset's chunks laid out apart from the file they end up in: an unnamed temporary file
// (O_TMPFILE where the file system has it, else made and unlinked at once), so nothing of it
// outlives the process, kill -9 included. Addresses are offsets in the spill, from 0; CopyInto
// appends the whole spill to an HDF5 file, after which the dataset's records are shifted by where
// it landed (H5DatasetWriter::ShiftChunkAddresses). See hdf5_shared_file.h.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "tessera/hdf5/h5_writer.h"
#include "tessera/hdf5/hdf5_stream.h"

namespace tessera::hdf5 {

class SpillFile final : public ChunkSpace {
 public:
  // A spill in `directory` (which must exist); `purpose` names it in errors ("spill of /cam2 for
  // out/acq.h5").
  static Result<std::unique_ptr<SpillFile>> Create(const std::string& directory, std::string purpose);
  ~SpillFile() override;

  SpillFile(const SpillFile&) = delete;
  SpillFile& operator=(const SpillFile&) = delete;

  // ChunkSpace: thread-safe.
  uint64_t Allocate(uint64_t bytes) override;
  Status WriteAt(uint64_t address, ByteView bytes) override;

  // Reads bytes [offset, offset + out.size()) back: kIo naming the range if they are not there.
  // Not concurrent with WriteAt to the same bytes.
  Status ReadAt(uint64_t offset, MutableByteView out) const;

  // Bytes allocated so far.
  uint64_t size() const { return end_.load(); }
  // Writes bytes [0, size()) of the spill to `file` at [address, address + size()), in blocks of
  // kCopyBlockBytes. Not concurrent with WriteAt.
  Status CopyInto(H5Writer& file, uint64_t address) const;
  // Gives the spill's disk space back (after CopyInto, or when the file is abandoned): later reads
  // find nothing. The descriptor stays open until destruction.
  void Release();

  static constexpr size_t kCopyBlockBytes = size_t{8} << 20;

 private:
  SpillFile(int fd, std::string purpose) : fd_(fd), purpose_(std::move(purpose)) {}
  const int fd_;
  const std::string purpose_;
  std::atomic<uint64_t> end_{0};
};

}  // namespace tessera::hdf5
