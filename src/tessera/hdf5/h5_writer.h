// Writes an HDF5 file (superblock version 0, old-style groups) holding groups and chunked datasets:
//
//   [superblock, written last] [chunk data, appended as chunks arrive, from any thread]
//   [at Close: per dataset its chunk B-tree and object header; per group its local heap, symbol
//    table nodes, group B-tree and object header, children before parents]
//
// The file is written through a store's WritableFile (tessera/store/writable_file.h) and
// committed by Close: on a file system it is built under a temporary name beside the target and
// renamed into place, on an object store staged and uploaded whole, so a failed or abandoned write
// never leaves a file that looks valid under the target's name. Memory holds one small record per
// stored chunk, not chunk data.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "tessera/core/bytes.h"
#include "tessera/core/dtype.h"
#include "tessera/core/status.h"
#include "tessera/hdf5/chunk_btree.h"
#include "tessera/hdf5/filters.h"
#include "tessera/core/chunk_shape.h"
#include "tessera/hdf5/h5_structures.h"
#include "tessera/store/store.h"
#include "tessera/store/writable_file.h"

namespace tessera::hdf5 {

// An attribute: a numeric scalar or 1-D array, or a string.
struct Attribute {
  std::string name;
  Bytes datatype;               // encoded datatype message
  std::vector<uint64_t> dims;   // empty: scalar
  Bytes data;                   // little-endian elements, or the string's bytes and a null
  static Result<Attribute> Numeric(std::string name, DataType dtype, std::vector<uint64_t> dims, Bytes data);
  static Attribute String(std::string name, const std::string& value);
  // "3", "-2", "1.5e3" -> int64 / float64 scalars; anything else -> a string.
  static Attribute Parse(std::string name, const std::string& text);
};

struct DatasetOptions {
  DataType dtype = DataType::kUInt8;
  std::vector<int64_t> shape;        // current extent; dimension 0 may grow when unlimited0
  bool unlimited0 = false;           // maximum extent of dimension 0 unlimited
  std::vector<int64_t> chunk_shape;  // empty: AutoChunkShape
  FilterPipeline filters;
  FillValue fill;                    // empty bytes: zero
  std::vector<Attribute> attributes;
};

class H5Writer;
class ChunkLog;

class H5DatasetWriter {
 public:
  const DatasetOptions& options() const { return options_; }
  const std::string& path() const { return path_; }
  int64_t chunk_bytes() const { return chunk_bytes_; }  // one full chunk, unfiltered

  // Filters and stores one full chunk (edge chunks too: chunk_bytes() bytes, padded). Thread-safe;
  // chunks land in the file in call order.
  Status WriteChunk(const std::vector<int64_t>& chunk_coords, ByteView raw);
  // Records a chunk whose filtered bytes the caller stored at `address` (see H5Writer::Allocate).
  // A later record for the same coordinates replaces an earlier one. Thread-safe.
  void RecordChunk(const std::vector<int64_t>& chunk_coords, uint64_t address, uint32_t bytes, uint32_t filter_mask);
  // Forgets the chunk at `chunk_coords` (it reads as the fill value).
  void RemoveChunk(const std::vector<int64_t>& chunk_coords);
  // Sets the current extent of dimension 0 (streams).
  void SetExtent0(int64_t rows);
  // Adds `delta` to the address of every chunk recorded so far (or logged): chunks laid out in a
  // space of their own (a spill file) and then copied into the file at `delta`. Not concurrent
  // with RecordChunk.
  void ShiftChunkAddresses(uint64_t delta);
  // Takes the chunks from `log` at Close instead (a streamed dataset whose sink logs them in
  // layout order: h5_chunk_log.h); RecordChunk and RemoveChunk are then not used.
  void UseChunkLog(std::shared_ptr<ChunkLog> log);

 private:
  friend class H5Writer;
  H5DatasetWriter(H5Writer* file, std::string path, DatasetOptions options);
  Status CheckCoords(const std::vector<int64_t>& chunk_coords) const;

  H5Writer* file_;
  std::string path_;
  DatasetOptions options_;
  int64_t chunk_bytes_ = 0;
  std::mutex mu_;
  std::vector<StoredChunk> chunks_;  // in record order; address kUndefinedAddress = removed
  std::shared_ptr<ChunkLog> log_;    // set: the chunks are there, not in chunks_
  uint64_t log_address_shift_ = 0;   // added to the log's addresses
};

class H5Writer {
 public:
  // Starts a new file written through `file` (from a store's OpenWritableFile), which Close
  // commits; its Describe() names the file in messages (path()). The store that opened `file`
  // must outlive the writer.
  static Result<std::unique_ptr<H5Writer>> Create(std::unique_ptr<WritableFile> file);
  // Starts a new file that will replace `path` at Close: Create over the writable file of a
  // FileStore rooted at the path's directory (which must exist: a missing one is kIo).
  static Result<std::unique_ptr<H5Writer>> Create(const std::string& path);
  ~H5Writer();  // abandons the file unless Close succeeded

  // Groups along the way are created as needed ("/a/b"); a name may be used once per group.
  Status CreateGroup(const std::string& path, std::vector<Attribute> attributes = {});
  Result<H5DatasetWriter*> CreateDataset(const std::string& path, DatasetOptions options);

  enum class ObjectKind { kAbsent, kGroup, kDataset };
  // What `path` names so far ("" and "/": the root group); kAbsent also where a dataset is on the way.
  ObjectKind KindOf(const std::string& path);
  // Replaces the attributes of the group or dataset at `path` ("" and "/": the root group), written
  // at Close. kNotFound when nothing is there.
  Status SetAttributes(const std::string& path, std::vector<Attribute> attributes);

  // Reserves `bytes` at the end of the file and returns their address. Thread-safe.
  uint64_t Allocate(uint64_t bytes);
  // Writes at an address returned by Allocate. Thread-safe.
  Status WriteAt(uint64_t address, ByteView bytes);

  // Writes every dataset's chunk index and every header, then commits the file (renames it into
  // place, or uploads it). On failure the file is abandoned.
  Status Close();
  // Abandons the file: the temporary file (or staging) is removed, the target is left as it was.
  void Abandon();

  const std::string& path() const { return path_; }

 private:
  struct Node {
    bool is_group = true;
    std::vector<Attribute> attributes;
    std::map<std::string, std::unique_ptr<Node>> children;  // by name, byte order (the SNOD order)
    std::unique_ptr<H5DatasetWriter> dataset;
  };
  struct Written {
    uint64_t header_address = 0;
    uint64_t btree_address = kUndefinedAddress;  // groups
    uint64_t heap_address = kUndefinedAddress;   // groups
  };
  H5Writer(std::unique_ptr<WritableStore> owned_store, std::unique_ptr<WritableFile> file, std::string path);
  Result<Node*> Walk(const std::string& path, bool create_missing, std::string* leaf);
  // The node at `path` (the root for "" and "/"), or null. Caller holds mu_.
  Node* FindLocked(const std::string& path);
  Result<uint64_t> Append(ByteView bytes);
  Result<Written> WriteDataset(H5DatasetWriter& dataset);
  Result<Written> WriteGroup(Node& group);

  const std::unique_ptr<WritableStore> owned_store_;  // the path-based Create's store; outlives file_
  const std::unique_ptr<WritableFile> file_;
  const std::string path_;
  std::atomic<uint64_t> end_;
  std::mutex mu_;  // the group tree
  Node root_;
  bool closed_ = false;
};

}  // namespace tessera::hdf5
