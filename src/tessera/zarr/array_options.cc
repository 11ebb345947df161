#include "tessera/zarr/array_options.h"

#include <utility>

#include "tessera/zarr/blosc_settings.h"

namespace tessera::zarr {

Result<nlohmann::json> CompressorCodecs(const std::string& codec, std::optional<int> level, DataType dtype,
                                        const BloscSpecOptions& blosc) {
  TESSERA_RETURN_IF_ERROR(CheckBloscSettings(codec, blosc));
  nlohmann::json list = nlohmann::json::array();
  if (codec == "none") return list;
  if (codec == "zstd") {
    list.push_back({{"name", "zstd"}, {"configuration", {{"level", level.value_or(3)}, {"checksum", false}}}});
  } else if (codec == "gzip") {
    int l = level.value_or(5);
    if (l < 0 || l > 9) return InvalidArgument("gzip level must be 0..9");
    list.push_back({{"name", "gzip"}, {"configuration", {{"level", l}}}});
  } else if (codec == "blosc-lz4" || codec == "blosc-zstd") {
    int l = level.value_or(5);
    if (l < 0 || l > 9) return InvalidArgument("blosc level must be 0..9");
    list.push_back({{"name", "blosc"},
                    {"configuration",
                     {{"cname", codec == "blosc-lz4" ? "lz4" : "zstd"},
                      {"clevel", l},
                      {"shuffle", ItemSize(dtype) > 1 ? "shuffle" : "noshuffle"},
                      {"typesize", ItemSize(dtype)},
                      {"blocksize", 0}}}});
  } else if (codec == "blosc") {
    TESSERA_ASSIGN_OR_RETURN(nlohmann::json blosc_codec, BloscCodecJson(blosc, level, dtype));
    list.push_back(std::move(blosc_codec));
  } else {
    return InvalidArgument("unknown codec \"" + codec + "\" (choose none, zstd, gzip, blosc-lz4, blosc-zstd, blosc)");
  }
  return list;
}

Result<ArrayMetadata> BuildArrayMetadata(const ArrayOptions& o) {
  const size_t rank = o.shape.size();
  if (o.chunk_shape.size() != rank)
    return InvalidArgument("chunk shape has " + std::to_string(o.chunk_shape.size()) + " entries for a rank-" +
                           std::to_string(rank) + " shape");
  if (!o.chunks_per_shard.empty() && o.chunks_per_shard.size() != rank)
    return InvalidArgument("chunks per shard has " + std::to_string(o.chunks_per_shard.size()) +
                           " entries for a rank-" + std::to_string(rank) + " shape");
  for (size_t d = 0; d < rank; ++d) {
    if (o.shape[d] < 0) return InvalidArgument("shape entries must be >= 0");
    if (o.chunk_shape[d] <= 0) return InvalidArgument("chunk shape entries must be > 0");
    if (!o.chunks_per_shard.empty() && o.chunks_per_shard[d] <= 0)
      return InvalidArgument("chunks per shard entries must be > 0");
  }
  ArrayMetadata m;
  m.shape = o.shape;
  m.dtype = o.dtype;
  if (o.fill_value.is_null()) {
    m.fill_value = ZeroFill(o.dtype);
  } else {
    TESSERA_ASSIGN_OR_RETURN(m.fill_value, ParseFillValue(o.dtype, o.fill_value));
  }
  m.dimension_names = o.dimension_names;
  m.attributes = o.attributes;
  nlohmann::json bytes_codec = {{"name", "bytes"}, {"configuration", {{"endian", "little"}}}};
  nlohmann::json chunk_codecs = nlohmann::json::array({bytes_codec});
  if (!o.chunk_codecs.is_null()) {
    if (!o.chunk_codecs.is_array() || o.chunk_codecs.empty())
      return InvalidArgument("chunk codecs must be a non-empty list, not " + o.chunk_codecs.dump());
    chunk_codecs = o.chunk_codecs;
  } else {
    TESSERA_ASSIGN_OR_RETURN(nlohmann::json compressors, CompressorCodecs(o.codec, o.level, o.dtype, o.blosc));
    for (const auto& c : compressors) chunk_codecs.push_back(c);
  }
  if (o.chunks_per_shard.empty()) {
    m.chunk_shape = o.chunk_shape;
    m.codecs = chunk_codecs;
  } else {
    m.chunk_shape.resize(rank);
    for (size_t d = 0; d < rank; ++d) m.chunk_shape[d] = o.chunk_shape[d] * o.chunks_per_shard[d];
    m.codecs = nlohmann::json::array(
        {{{"name", "sharding_indexed"},
          {"configuration",
           {{"chunk_shape", o.chunk_shape},
            {"codecs", chunk_codecs},
            {"index_codecs", nlohmann::json::array({bytes_codec, {{"name", "crc32c"}}})},
            {"index_location", o.index_location == IndexLocation::kStart ? "start" : "end"}}}}});
  }
  return m;
}

}  // namespace tessera::zarr
