#include "tessera/codec/registry.h"

#include <functional>

#include "tessera/codec/bitround_codec.h"
#include "tessera/codec/checksum32_codec.h"
#include "tessera/codec/codec_config.h"
#include "tessera/codec/codec_factories.h"
#include "tessera/codec/fixedscaleoffset_codec.h"
#include "tessera/codec/quantize_codec.h"
#include "tessera/codec/sharding_codec.h"
#include "tessera/core/json_guard.h"

namespace tessera {
namespace {

using Factory = std::function<Status(const nlohmann::json& config, ChunkSpec* spec, CodecChain* chain)>;

Status AddArrayToArray(Result<std::shared_ptr<const ArrayToArrayCodec>> codec, ChunkSpec* spec, CodecChain* chain) {
  if (!codec.ok()) return codec.status();
  if (chain->array_to_bytes) return InvalidArgument(std::string((*codec)->name()) + " (array -> array) must come before the array -> bytes codec");
  TESSERA_ASSIGN_OR_RETURN(*spec, (*codec)->EncodedSpec(*spec));
  chain->array_to_array.push_back(std::move(codec).value());
  return Status::Ok();
}

Status AddArrayToBytes(Result<std::shared_ptr<const ArrayToBytesCodec>> codec, CodecChain* chain) {
  if (!codec.ok()) return codec.status();
  if (chain->array_to_bytes) return InvalidArgument("codecs list has more than one array -> bytes codec");
  chain->array_to_bytes = std::move(codec).value();
  return Status::Ok();
}

Status AddBytesToBytes(Result<std::shared_ptr<const BytesToBytesCodec>> codec, CodecChain* chain) {
  if (!codec.ok()) return codec.status();
  if (!chain->array_to_bytes) return InvalidArgument(std::string((*codec)->name()) + " (bytes -> bytes) must come after the array -> bytes codec");
  chain->bytes_to_bytes.push_back(std::move(codec).value());
  return Status::Ok();
}

Result<std::shared_ptr<const ArrayToBytesCodec>> MakeShardingCodec(const nlohmann::json& config, const ChunkSpec& shard) {
  if (!config.is_object() || !config.contains("chunk_shape") || !config.contains("codecs") ||
      !config.contains("index_codecs"))
    return InvalidArgument("sharding_indexed: configuration needs chunk_shape, codecs and index_codecs");
  std::vector<int64_t> inner_shape;
  for (const auto& e : config["chunk_shape"]) {
    if (!e.is_number_integer() || e.get<int64_t>() <= 0)
      return InvalidArgument("sharding_indexed: chunk_shape must be positive integers");
    inner_shape.push_back(e.get<int64_t>());
  }
  if (inner_shape.size() != shard.shape.size())
    return InvalidArgument("sharding_indexed: chunk_shape rank does not match the array rank");
  std::vector<int64_t> cps(inner_shape.size());
  for (size_t d = 0; d < cps.size(); ++d) {
    if (shard.shape[d] % inner_shape[d] != 0)
      return InvalidArgument("sharding_indexed: inner chunk_shape " + config["chunk_shape"].dump() +
                             " does not evenly divide the shard shape " + nlohmann::json(shard.shape).dump());
    cps[d] = shard.shape[d] / inner_shape[d];
  }
  IndexLocation location = IndexLocation::kEnd;
  if (config.contains("index_location")) {
    const auto& loc = config["index_location"];
    if (loc == "start") location = IndexLocation::kStart;
    else if (loc != "end") return InvalidArgument("sharding_indexed: index_location must be \"start\" or \"end\"");
  }
  ChunkSpec inner_spec{shard.dtype, inner_shape, shard.fill};
  TESSERA_ASSIGN_OR_RETURN(CodecChain inner, ParseCodecChain(config["codecs"], inner_spec));
  std::vector<int64_t> index_shape = cps;
  index_shape.push_back(2);
  ChunkSpec index_spec{DataType::kUInt64, index_shape, ZeroFill(DataType::kUInt64)};
  TESSERA_ASSIGN_OR_RETURN(CodecChain index_codecs, ParseCodecChain(config["index_codecs"], index_spec));
  if (!index_codecs.FixedEncodedSize(index_spec))
    return InvalidArgument("sharding_indexed: index_codecs must have a fixed encoded size");
  return std::shared_ptr<const ArrayToBytesCodec>(
      std::make_shared<ShardingCodec>(inner_shape, std::move(inner), std::move(index_codecs), location));
}

// numcodecs' Blosc (zarr-python 3's `numcodecs.blosc`) as the v3 blosc codec: numcodecs names the
// shuffle by number (0 none, 1 byte, 2 bit, -1 auto: bit for 1-byte types, else byte) and its
// defaults differ (cname lz4, clevel 5, byte shuffle). The blosc frame records what decoding needs.
Result<std::shared_ptr<const BytesToBytesCodec>> MakeNumcodecsBloscCodec(const nlohmann::json& config, const ChunkSpec& spec) {
  constexpr const char* kCodec = "numcodecs.blosc";
  TESSERA_RETURN_IF_ERROR(codec_config::CheckFields(kCodec, config, {"cname", "clevel", "shuffle", "blocksize", "typesize"}));
  TESSERA_ASSIGN_OR_RETURN(std::optional<std::string> cname, codec_config::GetString(kCodec, config, "cname"));
  TESSERA_ASSIGN_OR_RETURN(int64_t clevel, codec_config::GetInt(kCodec, config, "clevel", 5, 0, 9));
  TESSERA_ASSIGN_OR_RETURN(int64_t shuffle, codec_config::GetInt(kCodec, config, "shuffle", 1, -1, 2));
  TESSERA_ASSIGN_OR_RETURN(int64_t blocksize, codec_config::GetInt(kCodec, config, "blocksize", 0, 0, INT32_MAX));
  const char* names[] = {"noshuffle", "shuffle", "bitshuffle"};
  const std::string shuffle_name = shuffle >= 0 ? names[shuffle] : (ItemSize(spec.dtype) == 1 ? "bitshuffle" : "shuffle");
  const nlohmann::json v3 = {{"cname", cname.value_or("lz4")}, {"clevel", clevel}, {"shuffle", shuffle_name},
                             {"typesize", ItemSize(spec.dtype)}, {"blocksize", blocksize}};
  return MakeBloscCodec(v3, spec);
}

const std::vector<std::pair<std::string, Factory>>& Table() {
  static const std::vector<std::pair<std::string, Factory>> table = {
      {"transpose", [](const nlohmann::json& c, ChunkSpec* s, CodecChain* ch) { return AddArrayToArray(MakeTransposeCodec(c, *s), s, ch); }},
      {"bytes", [](const nlohmann::json& c, ChunkSpec* s, CodecChain* ch) { return AddArrayToBytes(MakeBytesCodec(c, *s), ch); }},
      {"sharding_indexed", [](const nlohmann::json& c, ChunkSpec* s, CodecChain* ch) { return AddArrayToBytes(MakeShardingCodec(c, *s), ch); }},
      {"crc32c", [](const nlohmann::json& c, ChunkSpec*, CodecChain* ch) { return AddBytesToBytes(MakeCrc32cCodec(c), ch); }},
      {"gzip", [](const nlohmann::json& c, ChunkSpec*, CodecChain* ch) { return AddBytesToBytes(MakeGzipCodec(c), ch); }},
      {"zstd", [](const nlohmann::json& c, ChunkSpec*, CodecChain* ch) { return AddBytesToBytes(MakeZstdCodec(c), ch); }},
      {"blosc", [](const nlohmann::json& c, ChunkSpec* s, CodecChain* ch) { return AddBytesToBytes(MakeBloscCodec(c, *s), ch); }},
      {"numcodecs.lz4", [](const nlohmann::json& c, ChunkSpec*, CodecChain* ch) { return AddBytesToBytes(MakeLz4Codec(c), ch); }},
      {"numcodecs.zlib", [](const nlohmann::json& c, ChunkSpec*, CodecChain* ch) { return AddBytesToBytes(MakeZlibCodec(c), ch); }},
      {"numcodecs.gzip", [](const nlohmann::json& c, ChunkSpec*, CodecChain* ch) { return AddBytesToBytes(MakeGzipCodec(c), ch); }},
      {"numcodecs.zstd", [](const nlohmann::json& c, ChunkSpec*, CodecChain* ch) { return AddBytesToBytes(MakeZstdCodec(c), ch); }},
      {"numcodecs.blosc", [](const nlohmann::json& c, ChunkSpec* s, CodecChain* ch) { return AddBytesToBytes(MakeNumcodecsBloscCodec(c, *s), ch); }},
      {"numcodecs.bz2", [](const nlohmann::json& c, ChunkSpec*, CodecChain* ch) { return AddBytesToBytes(MakeBz2Codec(c), ch); }},
      {"numcodecs.lzma", [](const nlohmann::json& c, ChunkSpec*, CodecChain* ch) { return AddBytesToBytes(MakeLzmaCodec(c), ch); }},
      {"numcodecs.crc32", [](const nlohmann::json& c, ChunkSpec*, CodecChain* ch) { return AddBytesToBytes(MakeChecksum32Codec(Checksum32Kind::kCrc32, c), ch); }},
      {"numcodecs.adler32", [](const nlohmann::json& c, ChunkSpec*, CodecChain* ch) { return AddBytesToBytes(MakeChecksum32Codec(Checksum32Kind::kAdler32, c), ch); }},
      {"numcodecs.crc32c", [](const nlohmann::json& c, ChunkSpec*, CodecChain* ch) { return AddBytesToBytes(MakeChecksum32Codec(Checksum32Kind::kCrc32c, c), ch); }},
      {"numcodecs.fletcher32", [](const nlohmann::json& c, ChunkSpec*, CodecChain* ch) { return AddBytesToBytes(MakeChecksum32Codec(Checksum32Kind::kFletcher32, c), ch); }},
      {"numcodecs.shuffle", [](const nlohmann::json& c, ChunkSpec* s, CodecChain* ch) { return AddBytesToBytes(MakeShuffleCodec(c, *s), ch); }},
      {"numcodecs.delta", [](const nlohmann::json& c, ChunkSpec* s, CodecChain* ch) { return AddArrayToArray(MakeDeltaCodec(c, *s), s, ch); }},
      {"numcodecs.bitround", [](const nlohmann::json& c, ChunkSpec* s, CodecChain* ch) { return AddArrayToArray(MakeBitRoundCodec(c, *s), s, ch); }},
      {"numcodecs.fixedscaleoffset", [](const nlohmann::json& c, ChunkSpec* s, CodecChain* ch) { return AddArrayToArray(MakeFixedScaleOffsetCodec(c, *s), s, ch); }},
      {"numcodecs.quantize", [](const nlohmann::json& c, ChunkSpec* s, CodecChain* ch) { return AddArrayToArray(MakeQuantizeCodec(c, *s), s, ch); }},
  };
  return table;
}

}  // namespace

std::vector<std::string> RegisteredCodecNames() {
  std::vector<std::string> names;
  for (const auto& [name, factory] : Table()) names.push_back(name);
  return names;
}

namespace {

Result<CodecChain> ParseCodecList(const nlohmann::json& codecs, const ChunkSpec& decoded) {
  if (!codecs.is_array()) return InvalidArgument("codecs must be a JSON array");
  CodecChain chain;
  ChunkSpec spec = decoded;
  for (const auto& entry : codecs) {
    std::string name;
    nlohmann::json config = nlohmann::json::object();
    if (entry.is_string()) {
      name = entry.get<std::string>();
    } else if (entry.is_object() && entry.contains("name") && entry["name"].is_string()) {
      name = entry["name"].get<std::string>();
      if (entry.contains("configuration")) config = entry["configuration"];
    } else {
      return InvalidArgument("codec entry " + entry.dump() + " has no name");
    }
    const Factory* factory = nullptr;
    for (const auto& [n, f] : Table())
      if (n == name) factory = &f;
    if (!factory) {
      std::string known;
      for (const auto& n : RegisteredCodecNames()) known += (known.empty() ? "" : ", ") + n;
      return Unsupported("unknown codec \"" + name + "\" (supported: " + known + ")");
    }
    TESSERA_RETURN_IF_ERROR((*factory)(config, &spec, &chain).WithContext("codec " + name));
  }
  if (!chain.array_to_bytes) return InvalidArgument("codecs list has no array -> bytes codec (e.g. \"bytes\")");
  return chain;
}

}  // namespace

Result<CodecChain> ParseCodecChain(const nlohmann::json& codecs, const ChunkSpec& decoded) {
  return GuardJson("codecs", [&] { return ParseCodecList(codecs, decoded); });
}

}  // namespace tessera
