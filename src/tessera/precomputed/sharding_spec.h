// The `neuroglancer_uint64_sharded_v1` sharding specification: how a uint64 chunk id maps to a
// shard file and a minishard inside it, and how indices and data are encoded.
//
//   hashed    = hash(chunk_id >> preshift_bits)        (identity or murmurhash3_x86_128)
//   minishard = hashed & (2**minishard_bits - 1)
//   shard     = (hashed >> minishard_bits) & (2**shard_bits - 1)
//   file      = lowercase hex of shard, zero padded to ceil(shard_bits / 4) digits, + ".shard"
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "tessera/core/status.h"

namespace tessera::precomputed {

enum class ShardHash { kIdentity, kMurmurHash3_x86_128 };
enum class ShardEncoding { kRaw, kGzip };

struct ShardLocation {
  uint64_t shard = 0;
  uint64_t minishard = 0;
};

struct ShardingSpec {
  ShardHash hash = ShardHash::kIdentity;
  int preshift_bits = 0;
  int minishard_bits = 0;
  int shard_bits = 0;
  ShardEncoding minishard_index_encoding = ShardEncoding::kRaw;
  ShardEncoding data_encoding = ShardEncoding::kRaw;

  // Parses the "sharding" member; errors name the offending field (kInvalidArgument /
  // kUnsupported for an unknown @type or hash).
  static Result<ShardingSpec> FromJson(const nlohmann::json& j);
  nlohmann::json ToJson() const;

  uint64_t HashedChunkId(uint64_t chunk_id) const;
  ShardLocation Locate(uint64_t chunk_id) const;
  std::string ShardFileName(uint64_t shard) const;
  uint64_t num_shards() const { return uint64_t{1} << shard_bits; }
  uint64_t num_minishards() const { return uint64_t{1} << minishard_bits; }
  // Bytes of the fixed-size shard index at the start of every shard file.
  uint64_t ShardIndexBytes() const { return uint64_t{16} << minishard_bits; }
};

}  // namespace tessera::precomputed
