#include "tessera/precomputed/info.h"

#include <algorithm>
#include <cctype>

#include "tessera/core/json_guard.h"
#include "tessera/index/morton.h"

namespace tessera::precomputed {
namespace {

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

template <typename T>
Result<std::array<T, 3>> Triple(const nlohmann::json& j, const std::string& where, bool positive) {
  if (!j.is_array() || j.size() != 3) return InvalidArgument("info: " + where + " must be a 3-element array, not " + j.dump());
  std::array<T, 3> out{};
  for (int d = 0; d < 3; ++d) {
    if (!(std::is_integral_v<T> ? j[d].is_number_integer() : j[d].is_number()))
      return InvalidArgument("info: " + where + " must hold numbers, not " + j.dump());
    out[d] = j[d].get<T>();
    if (positive && !(out[d] > 0)) return InvalidArgument("info: " + where + " entries must be positive, not " + j.dump());
  }
  return out;
}

Result<ScaleInfo> ParseScale(const nlohmann::json& j, const std::string& where) {
  if (!j.is_object()) return InvalidArgument("info: " + where + " must be an object");
  ScaleInfo s;
  for (const char* field : {"key", "size", "resolution", "chunk_sizes", "encoding"})
    if (!j.contains(field)) return InvalidArgument("info: " + where + " lacks \"" + field + "\"");
  if (!j["key"].is_string() || j["key"].get<std::string>().empty())
    return InvalidArgument("info: " + where + ".key must be a non-empty string");
  s.key = j["key"].get<std::string>();
  TESSERA_ASSIGN_OR_RETURN(s.size, Triple<int64_t>(j["size"], where + ".size", true));
  TESSERA_ASSIGN_OR_RETURN(s.resolution, Triple<double>(j["resolution"], where + ".resolution", true));
  if (j.contains("voxel_offset")) {
    TESSERA_ASSIGN_OR_RETURN(s.voxel_offset, Triple<int64_t>(j["voxel_offset"], where + ".voxel_offset", false));
  }
  const nlohmann::json& cs = j["chunk_sizes"];
  if (!cs.is_array() || cs.empty()) return InvalidArgument("info: " + where + ".chunk_sizes must be a non-empty array");
  TESSERA_ASSIGN_OR_RETURN(s.chunk_size, Triple<int64_t>(cs[0], where + ".chunk_sizes[0]", true));
  if (!j["encoding"].is_string()) return InvalidArgument("info: " + where + ".encoding must be a string");
  TESSERA_ASSIGN_OR_RETURN(s.encoding, ParseChunkEncoding(j["encoding"].get<std::string>(), /*written=*/false,
                                                          "info: " + where + ".encoding"));
  if (s.encoding == ChunkEncoding::kCompressedSegmentation) {
    if (!j.contains("compressed_segmentation_block_size"))
      return InvalidArgument("info: " + where + " lacks \"compressed_segmentation_block_size\"");
    TESSERA_ASSIGN_OR_RETURN(s.compressed_segmentation_block_size,
                             Triple<int64_t>(j["compressed_segmentation_block_size"],
                                             where + ".compressed_segmentation_block_size", true));
  }
  // Encoder settings: only what a writer needs, and read only where they apply (another scale's
  // stays in `extra`).
  const auto setting = [&](const char* name, int low, int high, std::optional<int>* out) -> Status {
    const nlohmann::json& v = j[name];
    if (!v.is_number_integer() || v.get<int64_t>() < low || v.get<int64_t>() > high)
      return InvalidArgument("info: " + where + "." + name + " must be an integer " + std::to_string(low) + ".." +
                             std::to_string(high) + ", not " + v.dump());
    *out = v.get<int>();
    return Status::Ok();
  };
  if (s.encoding == ChunkEncoding::kJpeg && j.contains("jpeg_quality"))
    TESSERA_RETURN_IF_ERROR(setting("jpeg_quality", 1, 100, &s.jpeg_quality));
  if (s.encoding == ChunkEncoding::kPng && j.contains("png_level"))
    TESSERA_RETURN_IF_ERROR(setting("png_level", 0, 9, &s.png_level));
  if (j.contains("sharding") && !j["sharding"].is_null()) {
    Result<ShardingSpec> sharding = ShardingSpec::FromJson(j["sharding"]);
    if (!sharding.ok()) return sharding.status().WithContext("info: " + where);
    s.sharding = *sharding;
    if (cs.size() != 1) return InvalidArgument("info: " + where + ": a sharded scale must have exactly one chunk size");
  }
  for (auto it = j.begin(); it != j.end(); ++it) {
    static const char* kKnown[] = {"key", "size", "resolution", "voxel_offset", "chunk_sizes", "encoding",
                                   "compressed_segmentation_block_size", "sharding"};
    if (std::find(std::begin(kKnown), std::end(kKnown), it.key()) != std::end(kKnown)) continue;
    if ((it.key() == "jpeg_quality" && s.jpeg_quality) || (it.key() == "png_level" && s.png_level)) continue;
    s.extra[it.key()] = it.value();
  }
  return s;
}

}  // namespace

const char* ChunkEncodingName(ChunkEncoding e) {
  for (const ChunkEncodingTraits& t : kChunkEncodings)
    if (t.encoding == e) return t.name;
  return "raw";
}

std::string ChunkEncodingList(bool written) {
  std::string list;
  for (const ChunkEncodingTraits& t : kChunkEncodings) {
    if (written && !t.written) continue;
    if (!list.empty()) list += ", ";
    list += t.name;
  }
  return list;
}

Result<ChunkEncoding> ParseChunkEncoding(const std::string& name, bool written, const std::string& where) {
  const std::string lower = Lower(name);
  for (const ChunkEncodingTraits& t : kChunkEncodings) {
    if (lower != t.name) continue;
    if (written) TESSERA_RETURN_IF_ERROR(CheckEncodingWritten(t.encoding, where));
    return t.encoding;
  }
  return Unsupported(where + ": unknown chunk encoding \"" + name + "\" (tessera " +
                     (written ? "writes " + ChunkEncodingList(true) : "reads " + ChunkEncodingList(false)) + ")");
}

Status CheckEncodingWritten(ChunkEncoding encoding, const std::string& where) {
  for (const ChunkEncodingTraits& t : kChunkEncodings)
    if (t.encoding == encoding && !t.written)
      return Unsupported(where + ": \"" + t.name + "\" chunks are read, not written (tessera writes " +
                         ChunkEncodingList(true) + ")");
  return Status::Ok();
}

Status CheckEncodingHolds(ChunkEncoding encoding, DataType dtype, int64_t channels, const std::string& where) {
  const std::string type(DataTypeName(dtype));
  const std::string held = std::to_string(channels) + " channel" + (channels == 1 ? "" : "s") + " of " + type;
  switch (encoding) {
    case ChunkEncoding::kRaw: return Status::Ok();
    case ChunkEncoding::kCompressedSegmentation:
      if (dtype == DataType::kUInt32 || dtype == DataType::kUInt64) return Status::Ok();
      return InvalidArgument(where + ": compressed_segmentation needs uint32 or uint64, not " + type);
    case ChunkEncoding::kJpeg:
      if (dtype == DataType::kUInt8 && (channels == 1 || channels == 3)) return Status::Ok();
      return InvalidArgument(where + ": jpeg holds 1 or 3 channels of uint8, not " + held);
    case ChunkEncoding::kPng:
      if ((dtype == DataType::kUInt8 || dtype == DataType::kUInt16) && channels >= 1 && channels <= 4)
        return Status::Ok();
      return InvalidArgument(where + ": png holds 1 to 4 channels of uint8 or uint16, not " + held);
    case ChunkEncoding::kCompresso:
      if ((dtype == DataType::kUInt8 || dtype == DataType::kUInt16 || dtype == DataType::kUInt32 ||
           dtype == DataType::kUInt64) && channels == 1)
        return Status::Ok();
      return InvalidArgument(where + ": compresso holds one channel of uint8/16/32/64, not " + held);
    case ChunkEncoding::kJxl:
      // Neuroglancer decodes jxl chunks to 8-bit samples only; cloud-volume writes 1 or 3 channels.
      if (dtype == DataType::kUInt8 && (channels == 1 || channels == 3)) return Status::Ok();
      return InvalidArgument(where + ": jxl holds 1 or 3 channels of uint8, not " + held);
  }
  return Status::Ok();
}

namespace {

Result<VolumeInfo> ParseVolumeInfo(const nlohmann::json& j) {
  if (!j.is_object()) return InvalidArgument("info: expected a JSON object");
  if (j.contains("@type") && j["@type"] != "neuroglancer_multiscale_volume")
    return Unsupported("info: \"@type\" " + j["@type"].dump() + " is not a neuroglancer_multiscale_volume");
  VolumeInfo v;
  for (const char* field : {"type", "data_type", "num_channels", "scales"})
    if (!j.contains(field)) return InvalidArgument(std::string("info: lacks \"") + field + "\"");
  if (!j["type"].is_string()) return InvalidArgument("info: \"type\" must be a string");
  v.type = j["type"].get<std::string>();
  if (v.type != "image" && v.type != "segmentation")
    return InvalidArgument("info: \"type\" must be \"image\" or \"segmentation\", not \"" + v.type + "\"");
  if (!j["data_type"].is_string()) return InvalidArgument("info: \"data_type\" must be a string");
  const std::string dt = Lower(j["data_type"].get<std::string>());
  static const char* kTypes[] = {"uint8", "uint16", "uint32", "uint64", "int8", "int16", "int32", "int64", "float32"};
  if (std::find(std::begin(kTypes), std::end(kTypes), dt) == std::end(kTypes))
    return Unsupported("info: data_type \"" + dt + "\" (supported: uint8/16/32/64, int8/16/32/64, float32)");
  TESSERA_ASSIGN_OR_RETURN(v.dtype, ParseDataType(dt));
  if (!j["num_channels"].is_number_integer() || j["num_channels"].get<int64_t>() < 1)
    return InvalidArgument("info: \"num_channels\" must be a positive integer");
  v.num_channels = j["num_channels"].get<int64_t>();
  if (!j["scales"].is_array() || j["scales"].empty()) return InvalidArgument("info: \"scales\" must be a non-empty array");
  for (size_t i = 0; i < j["scales"].size(); ++i) {
    TESSERA_ASSIGN_OR_RETURN(ScaleInfo s, ParseScale(j["scales"][i], "scales[" + std::to_string(i) + "]"));
    TESSERA_RETURN_IF_ERROR(
        CheckEncodingHolds(s.encoding, v.dtype, v.num_channels, "info: scales[" + std::to_string(i) + "]"));
    v.scales.push_back(std::move(s));
  }
  for (auto it = j.begin(); it != j.end(); ++it)
    if (it.key() != "@type" && it.key() != "type" && it.key() != "data_type" && it.key() != "num_channels" &&
        it.key() != "scales")
      v.extra[it.key()] = it.value();
  return v;
}

}  // namespace

Result<VolumeInfo> VolumeInfo::FromJson(const nlohmann::json& j) {
  return GuardJson("info", [&] { return ParseVolumeInfo(j); });
}

nlohmann::json VolumeInfo::ToJson() const {
  nlohmann::json j = extra;
  j["@type"] = "neuroglancer_multiscale_volume";
  j["type"] = type;
  j["data_type"] = std::string(DataTypeName(dtype));
  j["num_channels"] = num_channels;
  j["scales"] = nlohmann::json::array();
  for (const ScaleInfo& s : scales) {
    nlohmann::json sj = s.extra;
    sj["key"] = s.key;
    sj["size"] = s.size;
    sj["voxel_offset"] = s.voxel_offset;
    sj["chunk_sizes"] = nlohmann::json::array({s.chunk_size});
    sj["resolution"] = s.resolution;
    sj["encoding"] = ChunkEncodingName(s.encoding);
    if (s.encoding == ChunkEncoding::kCompressedSegmentation)
      sj["compressed_segmentation_block_size"] = s.compressed_segmentation_block_size;
    if (s.jpeg_quality) sj["jpeg_quality"] = *s.jpeg_quality;
    if (s.png_level) sj["png_level"] = *s.png_level;
    if (s.sharding) sj["sharding"] = s.sharding->ToJson();
    j["scales"].push_back(sj);
  }
  return j;
}

Result<VolumeInfo> ReadVolumeInfo(const ReadableStore& store, int scale_index) {
  const std::string where = store.Describe("info");
  TESSERA_ASSIGN_OR_RETURN(std::optional<Bytes> text, store.Get("info"));
  if (!text) return NotFound(where + ": no precomputed info file");
  nlohmann::json j = nlohmann::json::parse(text->begin(), text->end(), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return CorruptData(where + ": malformed JSON");
  Result<VolumeInfo> info = VolumeInfo::FromJson(j);
  if (!info.ok()) return info.status().WithContext(where);
  if (scale_index < 0 || scale_index >= static_cast<int>(info->scales.size()))
    return OutOfRange(where + ": scale " + std::to_string(scale_index) + " does not exist (the volume has " +
                      std::to_string(info->scales.size()) + ")");
  const ScaleInfo& s = info->scales[static_cast<size_t>(scale_index)];
  if (s.key.find("..") != std::string::npos || (!s.key.empty() && s.key.front() == '/'))
    return Unsupported(where + ": scale key \"" + s.key + "\" outside the volume directory");
  if (s.sharding && index::CompressedMortonBits(s.GridXyz().chunk_count) > 64)
    return Unsupported(where + ": the chunk grid needs more than 64 bits of compressed Morton code");
  return info;
}

}  // namespace tessera::precomputed
