// A Zarr array of variable-length elements, read only, as an ObjectChunkSource:
//   - Zarr v3 `data_type: "string"` (codec `vlen-utf8`) and `"variable_length_bytes"` / `"bytes"`
//     (codec `vlen-bytes`), as zarr-python 3 writes them;
//   - Zarr v2 `dtype: "|O"` with the filter `vlen-utf8` or `vlen-bytes` (zarr-python 2 and 3).
// The variable-length codec must come first (it is the array -> bytes step); any bytes -> bytes
// codecs (compressors, checksums) may follow. A v3 array may also be one `sharding_indexed` codec
// whose inner codecs are such a chain (zarr-python's `shards=`): reads then go by inner chunk, each
// fetching its shard's index once (cached) and then only the inner chunk's byte range.
// v2 order "F" (each chunk's elements stored dimension 0 fastest) is read too. Array -> array
// codecs and object filters before the variable-length one are refused (kUnsupported).
//
// Fill values as zarr-python applies them to chunks that are not stored: v3 `string`: the JSON
// string; v3 bytes: base64 of the bytes (zarr-python's encoding; "" is empty); v2: the string,
// or "" (empty) for null.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tessera/codec/codec.h"
#include "tessera/codec/sharding_codec.h"
#include "tessera/read/object_read.h"
#include "tessera/store/store.h"
#include "tessera/zarr/metadata.h"

namespace tessera::zarr {

class StringArray final : public ObjectChunkSource {
 public:
  // The array at `path` ("" = the store root) when its zarr.json (or, failing that, .zarray) has
  // variable-length elements; null when it holds an array of another type (or a group).
  static Result<std::unique_ptr<StringArray>> OpenIfVariableLength(std::shared_ptr<Store> store, const std::string& path);
  // Likewise from a zarr.json `document` already read.
  static Result<std::unique_ptr<StringArray>> OpenIfVariableLength(std::shared_ptr<Store> store, const std::string& path,
                                                                   const nlohmann::json& document);

  // ObjectChunkSource
  const std::vector<int64_t>& shape() const override { return shape_; }
  const std::vector<int64_t>& read_chunk_shape() const override { return chunk_shape_; }
  const ObjectType& object_type() const override { return type_; }
  const std::string& fill_value() const override { return fill_; }
  Result<bool> ReadChunk(std::span<const int64_t> coords, std::vector<std::string>* out) const override;
  int io_concurrency() const override { return store_->io_concurrency(); }

  // The array's document as Zarr v3 (a v2 array's translated, its data_type "string" or
  // "variable_length_bytes", its codecs the variable-length one first).
  const nlohmann::json& metadata() const { return metadata_; }
  // Codecs and chunk key encoding, for `tessera info`.
  nlohmann::json Description() const;

 private:
  StringArray() = default;
  // `layout`: the document with the element type replaced by uint8 and the variable-length codec by
  // `bytes` (so the ordinary parser checks the grid, keys and bytes codecs).
  static Result<std::unique_ptr<StringArray>> Build(std::shared_ptr<Store> store, const std::string& path,
                                                    const nlohmann::json& layout, ObjectType type, std::string fill,
                                                    nlohmann::json metadata, const std::string& where);
  static Result<std::unique_ptr<StringArray>> FromV3(std::shared_ptr<Store> store, const std::string& path,
                                                     const nlohmann::json& document, const std::string& where);
  static Result<std::unique_ptr<StringArray>> FromV2(std::shared_ptr<Store> store, const std::string& path,
                                                     const nlohmann::json& zarray, const std::string& where);

  // Sharded arrays: the shard's index (null: the shard is not stored), read once.
  Result<std::shared_ptr<const ShardIndex>> ShardIndexOf(const std::string& key) const;
  // The encoded bytes of the chunk at `coords` (read grid) and the name of where they are;
  // nullopt when it is not stored.
  Result<std::optional<Bytes>> EncodedChunk(std::span<const int64_t> coords, std::string* where) const;

  std::shared_ptr<Store> store_;
  std::string path_;
  std::vector<int64_t> shape_;
  std::vector<int64_t> chunk_shape_;
  ChunkKeyEncoding key_encoding_;
  std::vector<std::shared_ptr<const BytesToBytesCodec>> bytes_codecs_;
  ObjectType type_;
  std::string fill_;
  nlohmann::json metadata_;
  bool fortran_order_ = false;  // v2 order "F": chunks store their elements dimension 0 fastest
  // Sharded: the codec (its index layout), inner chunks per shard, the shard index cache.
  std::shared_ptr<const ArrayToBytesCodec> sharding_owner_;
  const ShardingCodec* sharding_ = nullptr;
  std::vector<int64_t> chunks_per_shard_;
  mutable std::mutex index_mu_;
  mutable std::map<std::string, std::shared_ptr<const ShardIndex>> index_cache_;
};

}  // namespace tessera::zarr
