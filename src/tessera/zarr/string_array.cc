#include "tessera/zarr/string_array.h"

#include "tessera/codec/registry.h"
#include "tessera/core/json_guard.h"
#include "tessera/zarr/base64_text.h"
#include "tessera/zarr/v2_metadata.h"
#include "tessera/zarr/vlen_chunk.h"

namespace tessera::zarr {
namespace {

std::string JoinKey(const std::string& path, const std::string& key) { return path.empty() ? key : path + "/" + key; }

// A string or bytes element type shown as `name`. Set field by field: ObjectType has more fields (for
// sequences and records) that an aggregate initializer here would have to list.
ObjectType StringOrBytesType(ObjectKind kind, std::string name) {
  ObjectType t;
  t.kind = kind;
  t.name = std::move(name);
  return t;
}

// The element type a v3 data_type names; nullopt for a fixed-size type.
std::optional<ObjectType> V3ObjectType(const nlohmann::json& data_type) {
  if (!data_type.is_string()) return std::nullopt;
  const std::string name = data_type.get<std::string>();
  if (name == "string") return StringOrBytesType(ObjectKind::kString, "string");
  if (name == "variable_length_bytes" || name == "bytes") return StringOrBytesType(ObjectKind::kBytes, name);
  return std::nullopt;
}

bool IsVlenCodecName(const std::string& name) { return name == "vlen-utf8" || name == "vlen-bytes"; }

}  // namespace

Result<std::unique_ptr<StringArray>> StringArray::OpenIfVariableLength(std::shared_ptr<Store> store,
                                                                       const std::string& path) {
  const std::string key = JoinKey(path, "zarr.json");
  TESSERA_ASSIGN_OR_RETURN(std::optional<Bytes> doc, store->Get(key));
  if (doc) {
    TESSERA_ASSIGN_OR_RETURN(nlohmann::json j, ParseJsonDocument(std::string(doc->begin(), doc->end()), store->Describe(key)));
    return OpenIfVariableLength(std::move(store), path, j);
  }
  const std::string v2_key = JoinKey(path, ".zarray");
  TESSERA_ASSIGN_OR_RETURN(std::optional<Bytes> v2, store->Get(v2_key));
  if (!v2) return std::unique_ptr<StringArray>();
  const std::string where = store->Describe(v2_key);
  TESSERA_ASSIGN_OR_RETURN(nlohmann::json zarray, ParseJsonDocument(std::string(v2->begin(), v2->end()), where));
  return GuardJson(where, [&] { return FromV2(std::move(store), path, zarray, where); });
}

Result<std::unique_ptr<StringArray>> StringArray::OpenIfVariableLength(std::shared_ptr<Store> store,
                                                                       const std::string& path,
                                                                       const nlohmann::json& document) {
  const std::string where = store->Describe(JoinKey(path, "zarr.json"));
  return GuardJson(where, [&] { return FromV3(std::move(store), path, document, where); });
}

Result<std::unique_ptr<StringArray>> StringArray::FromV3(std::shared_ptr<Store> store, const std::string& path,
                                                         const nlohmann::json& document, const std::string& where) {
  if (!document.is_object() || document.value("node_type", "") != "array" || !document.contains("data_type"))
    return std::unique_ptr<StringArray>();
  std::optional<ObjectType> type = V3ObjectType(document["data_type"]);
  if (!type) return std::unique_ptr<StringArray>();
  const nlohmann::json codecs = document.value("codecs", nlohmann::json(nullptr));
  if (!codecs.is_array() || codecs.empty() || !codecs[0].is_object() || !codecs[0].contains("name"))
    return InvalidArgument(where + ": a " + type->name + " array's codecs must start with vlen-utf8 or vlen-bytes, not " +
                           codecs.dump());
  std::string first = codecs[0]["name"].is_string() ? codecs[0]["name"].get<std::string>() : "";
  nlohmann::json layout = document;
  nlohmann::json* chain = &layout["codecs"];  // where the variable-length codec is: the array's or the shard's
  if (first == "sharding_indexed") {
    nlohmann::json* inner = codecs.size() == 1 && codecs[0].contains("configuration") && codecs[0]["configuration"].is_object() &&
                                    codecs[0]["configuration"].contains("codecs")
                                ? &layout["codecs"][0]["configuration"]["codecs"]
                                : nullptr;
    if (!inner || !inner->is_array() || inner->empty() || !(*inner)[0].is_object() || !(*inner)[0].contains("name") ||
        !(*inner)[0]["name"].is_string()) {
      return Unsupported(where + ": a sharded " + type->name + " array whose codecs are " + codecs.dump() +
                         " (tessera reads one sharding_indexed codec whose inner codecs start with vlen-utf8 or vlen-bytes)");
    }
    chain = inner;
    first = (*inner)[0]["name"].get<std::string>();
  }
  if (!IsVlenCodecName(first))
    return Unsupported(where + ": a " + type->name + " array whose first codec is " + codecs[0].dump() +
                       " (tessera reads vlen-utf8 and vlen-bytes first)");
  // vlen-utf8 and vlen-bytes store the same layout; the data type says whether it is text.
  type->name += " (" + first + ")";
  nlohmann::json fill_json = document.value("fill_value", nlohmann::json(nullptr));
  std::string fill;
  if (fill_json.is_string()) {
    fill = fill_json.get<std::string>();
    if (type->kind == ObjectKind::kBytes) {
      std::optional<std::string> decoded = DecodeBase64(fill);
      if (!decoded) return InvalidArgument(where + ": fill_value " + fill_json.dump() + " is not base64 (the bytes fill value)");
      fill = *decoded;
    }
  } else if (!fill_json.is_null()) {
    return InvalidArgument(where + ": a " + type->name + " array's fill_value must be a string, not " + fill_json.dump());
  }
  layout["data_type"] = "uint8";
  layout["fill_value"] = 0;
  (*chain)[0] = {{"name", "bytes"}};
  return Build(std::move(store), path, layout, *type, std::move(fill), document, where);
}

Result<std::unique_ptr<StringArray>> StringArray::FromV2(std::shared_ptr<Store> store, const std::string& path,
                                                         const nlohmann::json& zarray, const std::string& where) {
  if (!zarray.is_object() || zarray.value("dtype", nlohmann::json(nullptr)) != "|O") return std::unique_ptr<StringArray>();
  const nlohmann::json filters = zarray.value("filters", nlohmann::json(nullptr));
  // The object codec is the first filter: numcodecs applies filters in order when encoding, so
  // a filter before it would act on Python objects.
  if (!filters.is_array() || filters.empty() || !filters[0].is_object() || !filters[0].contains("id") ||
      !filters[0]["id"].is_string() || !IsVlenCodecName(filters[0]["id"].get<std::string>())) {
    return Unsupported(where + ": object dtype \"|O\" with filters " + filters.dump() +
                       " (tessera reads object arrays whose first filter is vlen-utf8 or vlen-bytes)");
  }
  const std::string codec = filters[0]["id"].get<std::string>();
  const size_t rank = zarray.value("shape", nlohmann::json::array()).size();
  // Order "F": a chunk's elements are stored dimension 0 fastest (ReadChunk reorders them).
  const bool fortran_order = zarray.value("order", "C") == "F" && rank > 1;
  ObjectType type = codec == "vlen-utf8" ? StringOrBytesType(ObjectKind::kString, "string (vlen-utf8)")
                                         : StringOrBytesType(ObjectKind::kBytes, "variable_length_bytes (vlen-bytes)");
  nlohmann::json fill_json = zarray.value("fill_value", nlohmann::json(nullptr));
  if (!fill_json.is_null() && !fill_json.is_string())
    return InvalidArgument(where + ": an object array's fill_value must be a string or null, not " + fill_json.dump());
  std::string fill = fill_json.is_string() ? fill_json.get<std::string>() : "";

  // The same array with one-byte elements and the object codec left out: its translation checks
  // the grid, keys, compressor and remaining filters exactly as for any v2 array.
  nlohmann::json as_bytes = zarray;
  as_bytes["dtype"] = "|u1";
  as_bytes["fill_value"] = 0;
  nlohmann::json rest = nlohmann::json::array();
  for (size_t i = 1; i < filters.size(); ++i) rest.push_back(filters[i]);
  as_bytes["filters"] = rest.empty() ? nlohmann::json(nullptr) : rest;
  as_bytes["order"] = "C";  // the element order is handled here, not by a transpose codec
  TESSERA_ASSIGN_OR_RETURN(nlohmann::json layout, V3DocumentFromV2(as_bytes, nlohmann::json::object(), where));
  nlohmann::json metadata = layout;
  metadata["data_type"] = type.kind == ObjectKind::kString ? "string" : "variable_length_bytes";
  metadata["fill_value"] = fill_json.is_null() ? nlohmann::json("") : fill_json;
  metadata["codecs"][0] = {{"name", codec}, {"configuration", nlohmann::json::object()}};
  TESSERA_ASSIGN_OR_RETURN(std::unique_ptr<StringArray> a, Build(std::move(store), path, layout, type, std::move(fill), metadata, where));
  a->fortran_order_ = fortran_order;
  return a;
}

Result<std::unique_ptr<StringArray>> StringArray::Build(std::shared_ptr<Store> store, const std::string& path,
                                                        const nlohmann::json& layout, ObjectType type, std::string fill,
                                                        nlohmann::json metadata, const std::string& where) {
  Result<ArrayMetadata> m = ArrayMetadata::FromJson(layout);
  if (!m.ok()) return m.status().WithContext(where);
  Result<CodecChain> chain = ParseCodecChain(m->codecs, ChunkSpec{m->dtype, m->chunk_shape, m->fill_value});
  if (!chain.ok()) return chain.status().WithContext(where);
  const CodecChain* chunk_chain = &*chain;
  const ShardingCodec* sharding = chain->sharding();
  if (sharding) {
    chunk_chain = &sharding->inner_codecs();
    if (chunk_chain->sharding()) return Unsupported(where + ": nested sharding of a " + type.name + " array is not read");
  }
  if (!chain->array_to_array.empty() || !chunk_chain->array_to_array.empty())
    return Unsupported(where + ": a " + type.name + " array with array -> array codecs is not read");
  std::unique_ptr<StringArray> a(new StringArray());
  if (sharding) {
    Result<std::vector<int64_t>> per_shard = sharding->ChunksPerShard(m->chunk_shape);
    if (!per_shard.ok()) return per_shard.status().WithContext(where);
    a->chunks_per_shard_ = std::move(per_shard).value();
    a->sharding_owner_ = chain->array_to_bytes;
    a->sharding_ = sharding;
  }
  a->store_ = std::move(store);
  a->path_ = path;
  a->shape_ = m->shape;
  a->chunk_shape_ = sharding ? sharding->inner_chunk_shape() : m->chunk_shape;
  a->key_encoding_ = m->chunk_key_encoding;
  a->bytes_codecs_ = chunk_chain->bytes_to_bytes;
  if (sharding && !chain->bytes_to_bytes.empty())
    return Unsupported(where + ": bytes -> bytes codecs after sharding_indexed are not read");
  a->type_ = std::move(type);
  a->fill_ = std::move(fill);
  a->metadata_ = std::move(metadata);
  return a;
}

Result<std::shared_ptr<const ShardIndex>> StringArray::ShardIndexOf(const std::string& key) const {
  {
    std::lock_guard<std::mutex> lock(index_mu_);
    auto it = index_cache_.find(key);
    if (it != index_cache_.end()) return it->second;
  }
  size_t slots = 1;
  for (int64_t n : chunks_per_shard_) slots *= static_cast<size_t>(n);
  const size_t index_bytes = sharding_->IndexEncodedSize(slots);
  std::optional<Bytes> bytes;
  std::optional<uint64_t> shard_bytes;
  if (sharding_->index_location() == IndexLocation::kEnd) {
    TESSERA_ASSIGN_OR_RETURN(std::optional<SuffixRead> suffix, store_->GetSuffixAndSize(key, index_bytes));
    if (suffix) bytes = std::move(suffix->bytes), shard_bytes = suffix->value_size;
  } else {
    TESSERA_ASSIGN_OR_RETURN(shard_bytes, store_->Size(key));
    if (shard_bytes) {
      TESSERA_ASSIGN_OR_RETURN(bytes, store_->GetRange(key, 0, index_bytes));
    }
  }
  std::shared_ptr<const ShardIndex> index;
  if (bytes) {
    Result<ShardIndex> decoded = sharding_->DecodeIndex(*bytes, slots, shard_bytes);
    if (!decoded.ok()) return decoded.status().WithContext(store_->Describe(key));
    index = std::make_shared<const ShardIndex>(std::move(decoded).value());
  }
  std::lock_guard<std::mutex> lock(index_mu_);
  if (index_cache_.size() >= 4096) index_cache_.clear();  // bounded: indexes are read again when needed
  index_cache_[key] = index;
  return index;
}

Result<std::optional<Bytes>> StringArray::EncodedChunk(std::span<const int64_t> coords, std::string* where) const {
  if (!sharding_) {
    const std::string key = JoinKey(path_, key_encoding_.Key(std::vector<int64_t>(coords.begin(), coords.end())));
    *where = store_->Describe(key);
    return store_->Get(key);
  }
  // The inner chunk's shard, and its slot there (C order over the inner chunks of a shard).
  std::vector<int64_t> shard(coords.size());
  size_t slot = 0;
  std::string within;
  for (size_t d = 0; d < coords.size(); ++d) {
    shard[d] = coords[d] / chunks_per_shard_[d];
    slot = slot * static_cast<size_t>(chunks_per_shard_[d]) + static_cast<size_t>(coords[d] % chunks_per_shard_[d]);
    within += (d ? ", " : "") + std::to_string(coords[d] % chunks_per_shard_[d]);
  }
  const std::string key = JoinKey(path_, key_encoding_.Key(shard));
  TESSERA_ASSIGN_OR_RETURN(std::shared_ptr<const ShardIndex> index, ShardIndexOf(key));
  if (!index || index->IsEmpty(slot)) return std::optional<Bytes>();
  *where = store_->Describe(key) + ": inner chunk (" + within + ") at bytes " + std::to_string(index->offset(slot)) + ".." +
           std::to_string(index->offset(slot) + index->nbytes(slot));
  TESSERA_ASSIGN_OR_RETURN(std::optional<Bytes> bytes, store_->GetRange(key, index->offset(slot), index->nbytes(slot)));
  if (!bytes) return CorruptData(*where + ": the shard disappeared while it was read");
  return bytes;
}

Result<bool> StringArray::ReadChunk(std::span<const int64_t> coords, std::vector<std::string>* out) const {
  std::string where;
  TESSERA_ASSIGN_OR_RETURN(std::optional<Bytes> stored, EncodedChunk(coords, &where));
  if (!stored) return false;
  Bytes decoded = std::move(*stored);
  for (size_t i = bytes_codecs_.size(); i-- > 0;) {
    Bytes next;
    Status st = bytes_codecs_[i]->Decode(decoded, &next);
    if (!st.ok()) return st.WithContext(where + ": " + std::string(bytes_codecs_[i]->name()));
    decoded = std::move(next);
  }
  size_t elements = 1;
  for (int64_t e : chunk_shape_) elements *= static_cast<size_t>(e);
  TESSERA_ASSIGN_OR_RETURN(*out, DecodeVlenChunk(decoded, elements, where));
  if (fortran_order_) {
    // Element (i0, ..., in) of the chunk is stored at i0 + i1 * n0 + i2 * n0 * n1 + ...
    std::vector<std::string> c_order(elements);
    const size_t rank = chunk_shape_.size();
    std::vector<int64_t> at(rank, 0);
    for (size_t k = 0; k < elements; ++k) {
      size_t stored = 0, stride = 1;
      for (size_t d = 0; d < rank; ++d) stored += static_cast<size_t>(at[d]) * stride, stride *= static_cast<size_t>(chunk_shape_[d]);
      c_order[k] = std::move((*out)[stored]);
      for (size_t d = rank; d-- > 0;) {
        if (++at[d] < chunk_shape_[d]) break;
        at[d] = 0;
      }
    }
    *out = std::move(c_order);
  }
  return true;
}

nlohmann::json StringArray::Description() const {
  return {{"shard_shape", sharding_ ? metadata_["chunk_grid"]["configuration"]["chunk_shape"] : nlohmann::json(nullptr)},
          {"codecs", metadata_.value("codecs", nlohmann::json::array())},
          {"chunk_key_encoding", key_encoding_.ToJson()},
          {"dimension_names", metadata_.value("dimension_names", nlohmann::json(nullptr))},
          {"element_type", type_.name}};
}

}  // namespace tessera::zarr
