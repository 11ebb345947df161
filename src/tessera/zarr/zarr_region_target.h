// A Zarr v3 array as a region-write target (write/region_write.h).
//
// The write grid is the grid of separately encoded chunks: the inner chunks when the array's
// codecs are one `sharding_indexed` codec (ZarrArray::sharding()), else the chunks themselves.
// The stored object holding a chunk is its shard (sharded) or the chunk's own key (unsharded;
// also an array whose sharding codec is chained with others, whose shards decode only whole).
//
//   Read:   one GetVersioned of the object (the shard's index is decoded from the bytes read);
//   Write:  the shard laid out again (ShardingCodec::AssembleShard) from the untouched inner
//           chunks' bytes as read and the engine's new encodings, stored with SetPartsIf
//           conditional on the generation read (a new object: on its absence); a shard or chunk
//           left empty is removed with EraseIf. An object the engine did not read (wholly
//           covered) is replaced unconditionally (SetParts / Erase).
// A store without generations (GetVersioned is kUnsupported: an HTTP store, a wrapped store that
// does not forward them) falls back to Get + SetParts / Erase: there the write is atomic but not
// protected against another process rewriting the same object meanwhile.
//
// All-fill chunks are dropped (zarr-python's write_empty_chunks=False). Every write of a shard
// forgets the ZarrArray's cached index of it, so reads through the same ZarrArray see the new one.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tessera/write/region_write.h"
#include "tessera/zarr/array.h"

namespace tessera::zarr {

class ZarrRegionTarget final : public RegionTarget {
 public:
  // Writes through `array`, which must outlive the target (and not be resized by others while
  // the target is used).
  explicit ZarrRegionTarget(ZarrArray& array);
  // Owns `array`.
  explicit ZarrRegionTarget(std::unique_ptr<ZarrArray> array);

  const ZarrArray& array() const { return *array_; }

  const std::vector<int64_t>& shape() const override { return array_->shape(); }
  const std::vector<int64_t>& chunk_shape() const override { return array_->read_chunk_shape(); }
  DataType dtype() const override { return array_->dtype(); }
  const FillValue& fill_value() const override { return array_->fill_value(); }
  bool drops_fill_chunks() const override { return true; }
  std::string ObjectOf(std::span<const int64_t> chunk) const override;
  // 0 for a key that is not one of the array's objects.
  int64_t ChunksInObject(const std::string& key) const override;
  Result<std::unique_ptr<StoredObject>> Read(const std::string& key) const override;
  Result<bool> DecodeChunk(const StoredObject& object, std::span<const int64_t> chunk, Bytes* out) const override;
  Result<Bytes> EncodeChunk(std::span<const int64_t> chunk, ByteView decoded) const override;
  Result<bool> Write(const std::string& key, const StoredObject* base, std::span<const ChunkUpdate> updates) override;
  // Shrinking: the elements of straddling objects outside the new shape are written with the fill
  // value (so chunks left all-fill are dropped), objects wholly outside are erased, then zarr.json
  // is rewritten. Growing rewrites zarr.json only (rewriting every edge object on each growth would
  // cost more than it protects): what lies past the old edge shows again, which after a tessera
  // shrink is the fill value, after a zarr-python shrink (which erases only whole chunks) what
  // zarr-python's own growth would show. Only this array (not an OME image's other levels).
  Status Resize(const std::vector<int64_t>& shape) override;
  int io_concurrency() const override { return array_->io_concurrency(); }

 private:
  // The shape of one object (a shard, or a chunk).
  std::vector<int64_t> ObjectShape() const;
  // The object-grid coordinates `key` (one of ObjectOf's) names; nullopt for another key.
  std::optional<std::vector<int64_t>> ObjectCoords(const std::string& key) const;
  Result<bool> WriteShard(const std::string& key, const StoredObject* base, std::span<const ChunkUpdate> updates);
  Result<bool> WriteChunk(const std::string& key, const StoredObject* base, std::span<const ChunkUpdate> updates);

  std::unique_ptr<ZarrArray> owned_;
  ZarrArray* array_;
};

}  // namespace tessera::zarr
