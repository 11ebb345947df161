// Precomputed shard files: the sharding spec comes from the first bytes (preshift, hash, minishard
// and shard bits, encodings), the rest is a shard file: the shard index entries, the minishard
// index ranges they give and the minishard indices there, decoded (raw or gzip). Invariant: a
// minishard index that decodes, encoded again, decodes to the same entries.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "fuzz_check.h"
#include "tessera/precomputed/shard_format.h"
#include "tessera/precomputed/sharding_spec.h"

using namespace tessera;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 3) return 0;
  nlohmann::json spec_json = {
      {"@type", "neuroglancer_uint64_sharded_v1"},
      {"preshift_bits", data[0] % 4},
      {"hash", (data[0] & 0x10) ? "murmurhash3_x86_128" : "identity"},
      {"minishard_bits", data[1] % 5},
      {"shard_bits", data[1] / 32},
      {"minishard_index_encoding", (data[2] & 1) ? "gzip" : "raw"},
      {"data_encoding", (data[2] & 2) ? "gzip" : "raw"},
  };
  auto spec = precomputed::ShardingSpec::FromJson(spec_json);
  FUZZ_CHECK(spec.ok(), "the harness builds valid sharding specs");
  const ByteView file(data + 3, size - 3);
  const uint64_t index_bytes = spec->ShardIndexBytes();
  if (file.size() < index_bytes) return 0;
  const ByteView shard_index = file.subspan(0, index_bytes);
  for (uint64_t m = 0; m < (uint64_t{1} << spec->minishard_bits); ++m) {
    auto range = precomputed::MinishardIndexRange(*spec, shard_index, m, file.size(), "fuzz shard");
    if (!range.ok()) continue;
    const auto [begin, end] = *range;
    FUZZ_CHECK(begin <= end && end <= file.size(), "a valid range lies in the file");
    auto decoded = precomputed::DecodeShardBytes(spec->minishard_index_encoding, file.subspan(begin, end - begin));
    if (!decoded.ok()) continue;
    auto entries = precomputed::DecodeMinishardIndex(*decoded, index_bytes, file.size(), "fuzz shard");
    if (!entries.ok()) continue;
    for (const auto& e : *entries) FUZZ_CHECK(e.begin <= e.end && e.end <= file.size(), "chunks lie in the file");
    const Bytes again = precomputed::EncodeMinishardIndex(*entries, index_bytes);
    auto round = precomputed::DecodeMinishardIndex(again, index_bytes, file.size(), "fuzz (re-encoded)");
    FUZZ_CHECK(round.ok() && *round == *entries, "re-encoded index decodes to the same entries");
  }
  return 0;
}
