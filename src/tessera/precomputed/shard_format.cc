#include "tessera/precomputed/shard_format.h"

#include <algorithm>
#include <map>
#include <optional>

#include "tessera/codec/gzip_codec.h"

namespace tessera::precomputed {
namespace {

// Neuroglancer's writers use zlib's default level for gzip-encoded shard contents.
constexpr int kGzipLevel = 6;

}  // namespace

Result<Bytes> EncodeShardBytes(ShardEncoding encoding, ByteView data) {
  if (encoding == ShardEncoding::kRaw) return Bytes(data.begin(), data.end());
  Bytes out;
  TESSERA_RETURN_IF_ERROR(GzipCodec(kGzipLevel).Encode(data, &out));
  return out;
}

Result<Bytes> DecodeShardBytes(ShardEncoding encoding, ByteView data) {
  if (encoding == ShardEncoding::kRaw) return Bytes(data.begin(), data.end());
  Bytes out;
  TESSERA_RETURN_IF_ERROR(GzipCodec(kGzipLevel).Decode(data, &out));
  return out;
}

Bytes EncodeMinishardIndex(std::span<const ChunkEntry> entries, uint64_t shard_index_bytes) {
  const size_t n = entries.size();
  Bytes out(24 * n, 0);
  uint64_t prev_id = 0, prev_end = shard_index_bytes;
  for (size_t i = 0; i < n; ++i) {
    EncodeFixed64LE(out.data() + 8 * i, entries[i].chunk_id - prev_id);
    EncodeFixed64LE(out.data() + 8 * (n + i), entries[i].begin - prev_end);
    EncodeFixed64LE(out.data() + 8 * (2 * n + i), entries[i].end - entries[i].begin);
    prev_id = entries[i].chunk_id;
    prev_end = entries[i].end;
  }
  return out;
}

Result<std::vector<ChunkEntry>> DecodeMinishardIndex(ByteView decoded, uint64_t shard_index_bytes, uint64_t file_size,
                                                     const std::string& where) {
  if (decoded.size() % 24 != 0)
    return CorruptData(where + ": minishard index of " + std::to_string(decoded.size()) +
                       " bytes is not a whole number of 24-byte entries");
  const size_t n = decoded.size() / 24;
  std::vector<ChunkEntry> entries(n);
  uint64_t id = 0, end = shard_index_bytes;
  for (size_t i = 0; i < n; ++i) {
    const uint64_t id_delta = DecodeFixed64LE(decoded.data() + 8 * i);
    const uint64_t start_delta = DecodeFixed64LE(decoded.data() + 8 * (n + i));
    const uint64_t size = DecodeFixed64LE(decoded.data() + 8 * (2 * n + i));
    id += id_delta;  // ids wrap modulo 2**64 like the reference implementations
    uint64_t begin, stop;
    if (__builtin_add_overflow(end, start_delta, &begin) || __builtin_add_overflow(begin, size, &stop) ||
        stop > file_size)
      return CorruptData(where + ": minishard index entry " + std::to_string(i) + " (chunk " + std::to_string(id) +
                         ") points past the end of the " + std::to_string(file_size) + "-byte shard");
    entries[i] = ChunkEntry{id, begin, stop};
    end = stop;
  }
  return entries;
}

Result<std::pair<uint64_t, uint64_t>> MinishardIndexRangeFromEntry(const ShardingSpec& spec, ByteView entry,
                                                                   uint64_t minishard, uint64_t file_size,
                                                                   const std::string& where) {
  const uint64_t index_bytes = spec.ShardIndexBytes();
  if (entry.size() != 16) return CorruptData(where + ": shard index entry " + ByteRangeText(16 * minishard, 16 * minishard + 16) + " is truncated");
  const uint64_t rel_begin = DecodeFixed64LE(entry.data());
  const uint64_t rel_end = DecodeFixed64LE(entry.data() + 8);
  uint64_t begin, end;
  if (rel_begin > rel_end || __builtin_add_overflow(index_bytes, rel_begin, &begin) ||
      __builtin_add_overflow(index_bytes, rel_end, &end) || end > file_size)
    return CorruptData(where + ": shard index entry " + std::to_string(minishard) + " at " +
                       ByteRangeText(16 * minishard, 16 * minishard + 16) + " gives minishard index range [" +
                       std::to_string(rel_begin) + ", " + std::to_string(rel_end) +
                       ") (relative to byte " + std::to_string(index_bytes) + "), outside the " +
                       std::to_string(file_size) + "-byte shard");
  return std::make_pair(begin, end);
}

Result<std::pair<uint64_t, uint64_t>> MinishardIndexRange(const ShardingSpec& spec, ByteView shard_index,
                                                          uint64_t minishard, uint64_t file_size,
                                                          const std::string& where) {
  const uint64_t index_bytes = spec.ShardIndexBytes();
  if (shard_index.size() < index_bytes)
    return CorruptData(where + ": shard index " + ByteRangeText(0, index_bytes) + " is truncated (" +
                       std::to_string(shard_index.size()) + " bytes)");
  if (minishard >= spec.num_minishards()) return InvalidArgument(where + ": minishard out of range");
  return MinishardIndexRangeFromEntry(spec, shard_index.subspan(16 * minishard, 16), minishard, file_size, where);
}

Result<std::vector<ChunkEntry>> DecodeShardEntries(const ShardingSpec& spec, ByteView file, const std::string& where) {
  std::vector<ChunkEntry> out;
  for (uint64_t m = 0; m < spec.num_minishards(); ++m) {
    TESSERA_ASSIGN_OR_RETURN(auto range, MinishardIndexRange(spec, file, m, file.size(), where));
    if (range.first == range.second) continue;
    const std::string index_where = where + " minishard index " + ByteRangeText(range.first, range.second);
    Result<Bytes> decoded =
        DecodeShardBytes(spec.minishard_index_encoding, file.subspan(range.first, range.second - range.first));
    if (!decoded.ok()) return decoded.status().WithContext(index_where);
    TESSERA_ASSIGN_OR_RETURN(std::vector<ChunkEntry> entries,
                             DecodeMinishardIndex(*decoded, spec.ShardIndexBytes(), file.size(), index_where));
    for (const ChunkEntry& e : entries) {
      if (spec.Locate(e.chunk_id).minishard != m)
        return CorruptData(index_where + ": chunk " + std::to_string(e.chunk_id) + " does not belong to minishard " +
                           std::to_string(m));
      out.push_back(e);
    }
  }
  return out;
}

uint64_t ShardPieces::size() const {
  uint64_t n = 0;
  for (ByteView p : parts) n += p.size();
  return n;
}

Result<ShardPieces> AssembleShard(const ShardingSpec& spec, std::vector<std::pair<uint64_t, ByteView>> chunks,
                                  bool data_encoded) {
  // Group by minishard, chunks by id.
  std::map<uint64_t, std::vector<std::pair<uint64_t, ByteView>>> minishards;
  std::optional<uint64_t> shard;
  for (const auto& c : chunks) {
    const ShardLocation loc = spec.Locate(c.first);
    if (shard && *shard != loc.shard)
      return InvalidArgument("EncodeShard: chunks " + std::to_string(c.first) + " and others map to different shards");
    shard = loc.shard;
    minishards[loc.minishard].push_back(c);
  }
  const uint64_t index_bytes = spec.ShardIndexBytes();
  ShardPieces out;
  // The shard index, filled in below (its buffer does not move); empty minishards stay [0, 0).
  out.owned.emplace_back(static_cast<size_t>(index_bytes), 0);
  uint8_t* shard_index = out.owned.front().data();
  out.parts.push_back(out.owned.front());
  uint64_t end = index_bytes;
  for (auto& [minishard, list] : minishards) {
    std::sort(list.begin(), list.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    std::vector<ChunkEntry> entries;
    entries.reserve(list.size());
    for (size_t i = 0; i < list.size(); ++i) {
      if (i > 0 && list[i].first == list[i - 1].first)
        return InvalidArgument("EncodeShard: chunk id " + std::to_string(list[i].first) + " given twice");
      ByteView data = list[i].second;
      if (!data_encoded) {
        TESSERA_ASSIGN_OR_RETURN(Bytes encoded, EncodeShardBytes(spec.data_encoding, data));
        out.owned.push_back(std::move(encoded));
        data = out.owned.back();
      }
      out.parts.push_back(data);
      entries.push_back(ChunkEntry{list[i].first, end, end + data.size()});
      end += data.size();
    }
    TESSERA_ASSIGN_OR_RETURN(Bytes index,
                             EncodeShardBytes(spec.minishard_index_encoding, EncodeMinishardIndex(entries, index_bytes)));
    EncodeFixed64LE(shard_index + 16 * minishard, end - index_bytes);
    EncodeFixed64LE(shard_index + 16 * minishard + 8, end + index.size() - index_bytes);
    end += index.size();
    out.owned.push_back(std::move(index));
    out.parts.push_back(out.owned.back());
  }
  return out;
}

Result<Bytes> EncodeShard(const ShardingSpec& spec, std::vector<std::pair<uint64_t, ByteView>> chunks,
                          bool data_encoded) {
  TESSERA_ASSIGN_OR_RETURN(const ShardPieces pieces, AssembleShard(spec, std::move(chunks), data_encoded));
  Bytes out;
  out.reserve(static_cast<size_t>(pieces.size()));
  for (ByteView p : pieces.parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}

}  // namespace tessera::precomputed
