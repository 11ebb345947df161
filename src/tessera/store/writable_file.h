// A value built in place, at byte offsets, and published whole: the store seam's writable file (in
// the manner of LevelDB's WritableFile). A format that lays a file out as it goes (HDF5: chunk data
// appended as chunks arrive, the superblock at offset 0 written last) writes through one of these,
// whatever the store:
//
//   auto file = store.OpenWritableFile("volume.h5");  // nothing visible under the key yet
//   file->WriteAt(4096, chunk);                         // any order, from any thread
//   file->WriteAt(0, superblock);
//   file->Commit();                                     // now the value of "volume.h5", whole
//
// Until Commit nothing appears under the key (an existing value stays as it was, byte for byte);
// Commit replaces it atomically, like Set: a reader sees the old value or the new one, and a crash
// (kill -9 included) at any moment leaves one of the two, never a partial value under the key. A
// file store writes a hidden temporary file beside the target and renames it into place; other
// stores (object stores, memory) stage the bytes in a private directory under TMPDIR and upload
// them at Commit with the store's own whole-object write (on S3 one PUT or one multipart upload).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "tessera/core/bytes.h"
#include "tessera/core/status.h"

namespace tessera {

class WritableStore;

// Thread-safety: WriteAt may be called concurrently from any number of threads (on disjoint byte
// ranges; overlapping concurrent writes leave one of them in each byte). Truncate, Commit and
// Abandon must not run concurrently with any other call. The store that opened the file must
// outlive it.
class WritableFile {
 public:
  // Abandons the file unless Commit succeeded.
  virtual ~WritableFile() = default;

  // Writes `bytes` at `offset`. Writes may come in any order and leave gaps; a gap reads as zeros.
  // After Commit or Abandon: kFailedPrecondition. Errors name the key's location (Describe).
  virtual Status WriteAt(uint64_t offset, ByteView bytes) = 0;
  // Sets the value's size: bytes past `size` are dropped, and a shorter value grows with zeros.
  virtual Status Truncate(uint64_t size) = 0;
  // Makes the bytes written so far the value of the key: durable first (the data reaches stable
  // storage, or the object store acknowledged it), then visible, atomically. On failure the key is
  // left as it was (see the store for the one exception, a failed directory sync after the rename),
  // and the file is abandoned: nothing of it stays behind. A second call: kFailedPrecondition.
  virtual Status Commit() = 0;
  // Discards the bytes; the key is left as it was and the temporary file or staging directory is
  // removed. Safe to call more than once, and after a failed Commit; a no-op after a successful one.
  virtual void Abandon() = 0;
  // Where the value goes, for messages: the store's Describe(key) (a path, "s3://bucket/key").
  virtual std::string Describe() const = 0;
};

// The default WritableStore::OpenWritableFile: the bytes are written to a file in a private
// directory made under TMPDIR (std::filesystem::temp_directory_path, so as large as that disk
// allows); Commit stores the file with `store->CopyFrom(key, <the staged file>)` (an object store
// uploads it in one PUT or one multipart upload, reading it in parts) and then removes the staging
// directory, as Abandon does. `description` names the value in messages (the store's
// Describe(key)). An invalid key is kInvalidArgument here, before anything is staged; a staging
// directory or file that cannot be made is kIo naming it.
Result<std::unique_ptr<WritableFile>> OpenStagedWritableFile(WritableStore* store, std::string key,
                                                             std::string description);

}  // namespace tessera
