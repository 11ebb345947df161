#include "tessera/precomputed/sharding_spec.h"

#include <cstdio>

#include "tessera/core/json_guard.h"
#include "tessera/precomputed/murmurhash3.h"

namespace tessera::precomputed {
namespace {

Result<int> GetBits(const nlohmann::json& j, const char* field, int max) {
  if (!j.contains(field)) return InvalidArgument(std::string("sharding: missing \"") + field + "\"");
  const nlohmann::json& v = j[field];
  if (!v.is_number_integer() || v.get<int64_t>() < 0 || v.get<int64_t>() > max)
    return InvalidArgument(std::string("sharding: \"") + field + "\" must be an integer in [0, " + std::to_string(max) +
                           "], not " + v.dump());
  return static_cast<int>(v.get<int64_t>());
}

Result<ShardEncoding> GetEncoding(const nlohmann::json& j, const char* field) {
  if (!j.contains(field)) return ShardEncoding::kRaw;
  const nlohmann::json& v = j[field];
  if (v == "raw") return ShardEncoding::kRaw;
  if (v == "gzip") return ShardEncoding::kGzip;
  return InvalidArgument(std::string("sharding: \"") + field + "\" must be \"raw\" or \"gzip\", not " + v.dump());
}

const char* EncodingName(ShardEncoding e) { return e == ShardEncoding::kGzip ? "gzip" : "raw"; }

Result<ShardingSpec> ParseShardingSpec(const nlohmann::json& j) {
  if (!j.is_object()) return InvalidArgument("sharding: expected a JSON object, got " + j.dump());
  if (!j.contains("@type") || j["@type"] != "neuroglancer_uint64_sharded_v1")
    return Unsupported("sharding: \"@type\" must be \"neuroglancer_uint64_sharded_v1\", not " +
                       (j.contains("@type") ? j["@type"].dump() : std::string("missing")));
  ShardingSpec s;
  if (!j.contains("hash")) return InvalidArgument("sharding: missing \"hash\"");
  if (j["hash"] == "identity") {
    s.hash = ShardHash::kIdentity;
  } else if (j["hash"] == "murmurhash3_x86_128") {
    s.hash = ShardHash::kMurmurHash3_x86_128;
  } else {
    return Unsupported("sharding: \"hash\" must be \"identity\" or \"murmurhash3_x86_128\", not " + j["hash"].dump());
  }
  TESSERA_ASSIGN_OR_RETURN(s.preshift_bits, GetBits(j, "preshift_bits", 64));
  TESSERA_ASSIGN_OR_RETURN(s.minishard_bits, GetBits(j, "minishard_bits", 32));
  TESSERA_ASSIGN_OR_RETURN(s.shard_bits, GetBits(j, "shard_bits", 64));
  if (s.minishard_bits + s.shard_bits > 64)
    return InvalidArgument("sharding: minishard_bits + shard_bits must be at most 64");
  TESSERA_ASSIGN_OR_RETURN(s.minishard_index_encoding, GetEncoding(j, "minishard_index_encoding"));
  TESSERA_ASSIGN_OR_RETURN(s.data_encoding, GetEncoding(j, "data_encoding"));
  return s;
}

}  // namespace

Result<ShardingSpec> ShardingSpec::FromJson(const nlohmann::json& j) {
  return GuardJson("sharding", [&] { return ParseShardingSpec(j); });
}

nlohmann::json ShardingSpec::ToJson() const {
  return {{"@type", "neuroglancer_uint64_sharded_v1"},
          {"hash", hash == ShardHash::kIdentity ? "identity" : "murmurhash3_x86_128"},
          {"preshift_bits", preshift_bits},
          {"minishard_bits", minishard_bits},
          {"shard_bits", shard_bits},
          {"minishard_index_encoding", EncodingName(minishard_index_encoding)},
          {"data_encoding", EncodingName(data_encoding)}};
}

uint64_t ShardingSpec::HashedChunkId(uint64_t chunk_id) const {
  const uint64_t shifted = preshift_bits >= 64 ? 0 : chunk_id >> preshift_bits;
  return hash == ShardHash::kIdentity ? shifted : MurmurHash3ChunkId(shifted);
}

ShardLocation ShardingSpec::Locate(uint64_t chunk_id) const {
  const uint64_t h = HashedChunkId(chunk_id);
  const auto low_bits = [](uint64_t v, int bits) { return bits >= 64 ? v : v & ((uint64_t{1} << bits) - 1); };
  ShardLocation loc;
  loc.minishard = low_bits(h, minishard_bits);
  loc.shard = minishard_bits >= 64 ? 0 : low_bits(h >> minishard_bits, shard_bits);
  return loc;
}

std::string ShardingSpec::ShardFileName(uint64_t shard) const {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%0*llx.shard", (shard_bits + 3) / 4, static_cast<unsigned long long>(shard));
  return buf;
}

}  // namespace tessera::precomputed
