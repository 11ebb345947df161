#include "tessera/cli/spec_options.h"

#include <algorithm>
#include <array>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <limits>

#include "tessera/cli/cli_util.h"
#include "tessera/spec/array_spec_json.h"
#include "tessera/zarr/metadata.h"

namespace tessera::cli {
namespace {

Result<std::vector<double>> ParseDoubleList(const std::string& text, const std::string& option) {
  std::vector<double> out;
  size_t pos = 0;
  while (pos <= text.size()) {
    const size_t comma = std::min(text.find(',', pos), text.size());
    const std::string item = text.substr(pos, comma - pos);
    char* end = nullptr;
    errno = 0;
    const double v = std::strtod(item.c_str(), &end);
    if (item.empty() || *end != '\0' || errno != 0)
      return InvalidArgument(option + ": \"" + item + "\" is not a number (in \"" + text + "\")");
    out.push_back(v);
    pos = comma + 1;
  }
  return out;
}

Result<std::array<int64_t, 3>> ParseXyz(const std::string& text, const std::string& option) {
  TESSERA_ASSIGN_OR_RETURN(std::vector<int64_t> v, ParseIntList(text, option));
  if (v.size() != 3) return InvalidArgument(option + " needs three values X,Y,Z");
  return std::array<int64_t, 3>{v[0], v[1], v[2]};
}

// --attribute NAME=VALUE: "3", "-2" -> an integer, "1.5e3" -> a number, anything else (including
// "nan", "inf" and "0x10") -> a string.
nlohmann::json AttributeValue(const std::string& text) {
  if (text.find_first_of("0123456789") == std::string::npos) return text;
  char* end = nullptr;
  errno = 0;
  const long long i = std::strtoll(text.c_str(), &end, 10);
  if (*end == '\0' && errno == 0) return i;
  errno = 0;
  const double d = std::strtod(text.c_str(), &end);
  const bool hex = text.find_first_of("xX") != std::string::npos;
  if (*end == '\0' && errno == 0 && std::isfinite(d) && !hex) return d;
  return text;
}

// Every value --shuffle takes, each meaning: HDF5's filter on, off, or (blosc only) the bit shuffle.
constexpr std::string_view kShuffleOn[] = {"true", "shuffle", "byte"}, kShuffleOff[] = {"false", "noshuffle", "none"},
                           kShuffleBit[] = {"bitshuffle", "bit"};

// --shuffle's value as the spec takes it: HDF5's filter on or off (a bool), or blosc's shuffle
// (the name as given; the library checks it). Bare --shuffle is "true".
Result<nlohmann::json> ShuffleOption(const std::string& given, Format format) {
  const std::string value = given.empty() ? "true" : given;
  auto among = [&](const auto& names) { return std::find(std::begin(names), std::end(names), value) != std::end(names); };
  if (!among(kShuffleOn) && !among(kShuffleOff) && !among(kShuffleBit))
    return InvalidArgument("--shuffle takes noshuffle|shuffle|bitshuffle (or none|byte|bit, true|false), not \"" + value +
                           "\"");
  if (format == Format::kHdf5) {
    if (among(kShuffleBit)) return InvalidArgument("--shuffle " + value + ": HDF5's shuffle filter is the byte shuffle (give --shuffle or --shuffle=false)");
    return nlohmann::json(among(kShuffleOn));
  }
  if (value == "true") return nlohmann::json("shuffle");
  if (value == "false") return nlohmann::json("noshuffle");
  return nlohmann::json(value);
}

}  // namespace

std::vector<std::string> ArgsWithBareShuffle(int argc, char** argv) {
  std::vector<std::string> args(argv, argv + argc);
  auto is_value = [](const std::string& word) {
    auto among = [&](const auto& names) { return std::find(std::begin(names), std::end(names), word) != std::end(names); };
    return among(kShuffleOn) || among(kShuffleOff) || among(kShuffleBit);
  };
  for (size_t i = 1; i < args.size(); ++i)
    if (args[i] == "--shuffle" && (i + 1 == args.size() || !is_value(args[i + 1]))) args[i] = "--shuffle=true";
  return args;
}

void AddSpecOptions(CLI::App* cmd, SpecArgs* a, const std::string& dataset_flag) {
  cmd->add_option("--chunk", a->chunk, "C0,C1,... chunk shape (zarr3, hdf5 default: about 1 MiB, proportional to the shape; precomputed: required)");
  cmd->add_option("--shard-chunks", a->shard_chunks, "P0,P1,... chunks per shard (default: unsharded)");
  cmd->add_option("--codec", a->codec,
                  "none|zstd|gzip|blosc-lz4|blosc-zstd|blosc (default: zstd for zarr3, none for precomputed and hdf5; "
                  "hdf5: none or gzip, level default 4; blosc: zarr3, settings --cname, --shuffle, --typesize, --blocksize)")
      ->check(CLI::IsMember({"none", "zstd", "gzip", "blosc-lz4", "blosc-zstd", "blosc"}));
  cmd->add_option("--level", a->level, "Compression level (blosc: clevel 0..9, default 5)");
  cmd->add_option("--cname", a->cname, "--codec blosc: blosclz|lz4|lz4hc|zlib|zstd (default zstd)");
  cmd->add_option("--typesize", a->typesize,
                  "--codec blosc: bytes per shuffled element, 1..255 (default: the dtype's size)");
  cmd->add_option("--blocksize", a->blocksize, "--codec blosc: bytes per blosc block (default 0: blosc chooses)");
  cmd->add_option("--index-location", a->index_location, "Shard index location: start|end (default end)");
  cmd->add_option("--fill-value", a->fill_value, "Fill value (JSON: 0, 1.5, true, \"NaN\", [re,im]; default: zero)");
  cmd->add_option("--encoding", a->encoding,
                  "precomputed chunk encoding: raw (default), compressed_segmentation (uint32/64), jpeg (uint8, 1 or 3 "
                  "channels), png (uint8/16, 1-4 channels)");
  cmd->add_option("--jpeg-quality", a->jpeg_quality, "precomputed jpeg: quality 1..100 (default 75)");
  cmd->add_option("--png-level", a->png_level, "precomputed png: zlib level 0..9 (default 6)");
  cmd->add_option("--hash", a->hash, "precomputed sharding: identity (default) or murmurhash3_x86_128");
  cmd->add_option("--resolution", a->resolution, "precomputed: voxel size X,Y,Z in nm (default 1,1,1)");
  cmd->add_option("--voxel-offset", a->voxel_offset, "precomputed: X,Y,Z of the first voxel (default 0,0,0)");
  cmd->add_option("--scale-key", a->scale_key,
                  "precomputed: the scale's directory (default s0); an existing volume's other scales are kept");
  cmd->add_option("--cseg-block", a->cseg_block, "precomputed: compressed_segmentation block X,Y,Z (default 8,8,8)");
  cmd->add_option(dataset_flag, a->dataset, "hdf5: the dataset's path in the file (default /data; groups are created)");
  // A value is optional (bare --shuffle is HDF5's flag), so one after it is taken as its value.
  a->shuffle_option =
      cmd->add_option("--shuffle", a->shuffle,
                      "[VALUE] --codec blosc: noshuffle|shuffle|bitshuffle (or none|byte|bit; default: bitshuffle "
                      "for 1-byte dtypes, else shuffle); hdf5: the shuffle filter before deflate (bare --shuffle; "
                      "--shuffle=false: none)")
          ->expected(0, 1);
  a->fletcher32_option =
      cmd->add_flag("--fletcher32", a->fletcher32, "hdf5: a fletcher32 checksum per chunk (--fletcher32=false: none)");
  cmd->add_option("--attribute", a->attributes, "NAME=VALUE attribute of the array (integer, float or string; repeatable; not precomputed)");
  cmd->add_option("--pyramid", a->pyramid,
                  "LEVELS|auto: write a multiscale pyramid of LEVELS levels (auto: until every dimension fits one "
                  "chunk); zarr3: an OME-Zarr 0.5 image (levels 0, 1, ... in one group), precomputed: more scales");
  cmd->add_option("--downsample", a->downsample,
                  "Pyramid method: mean (default), min, max, median, mode (default for compressed_segmentation), stride");
  cmd->add_option("--downsample-factors", a->downsample_factors,
                  "F0,F1,... per dimension (default: 2 along space axes, 1 along time and channel)");
  cmd->add_option("--axes", a->axes,
                  "zarr3 OME-Zarr axes NAME:TYPE[:UNIT],... e.g. t:time:second,y:space:micrometer,x:space:micrometer "
                  "(default: from the dimension names, else z,y,x and c, t before them)");
  cmd->add_option("--voxel-size", a->voxel_size, "zarr3 OME-Zarr: level 0's scale per dimension (default 1)");
  cmd->add_option("--translation", a->translation,
                  "zarr3 OME-Zarr: level 0's translation per dimension, the position of its first voxel's centre "
                  "(default 0; the other levels' put their voxels' centres at the blocks they reduce)");
  cmd->add_flag("--ome", a->ome, "zarr3: write an OME-Zarr 0.5 image even without a pyramid (one level, \"0\")");
}

void AddArrivalOrderOption(CLI::App* cmd, SpecArgs* args) {
  cmd->add_option("--arrival-order", args->arrival_order,
                  "I0,I1,... the order the input's dimensions arrive in: for each, the stored dimension it is "
                  "(a permutation starting with 0; e.g. frames arriving t,z,c,y,x stored t,c,z,y,x: 0,2,1,3,4; "
                  "--shape is the stored shape)");
}

Result<ArraySpec> SpecFromArgs(const SpecArgs& a, nlohmann::json base, Format format) {
  using nlohmann::json;
  json patch = json::object();
  json& zarr3 = patch["zarr3"] = json::object();
  json& precomputed = patch["precomputed"] = json::object();
  json& hdf5 = patch["hdf5"] = json::object();
  json& pyramid = patch["pyramid"] = json::object();
  json& ome = patch["ome"] = json::object();
  if (!a.chunk.empty()) {
    TESSERA_ASSIGN_OR_RETURN(patch["chunk_shape"], ParseIntList(a.chunk, "--chunk"));
  }
  if (!a.shard_chunks.empty()) {
    if (a.shard_chunks == "none") {
      patch["shard_chunks"] = nullptr;  // and what only a sharded array has
      zarr3["index_at_start"] = nullptr;
      precomputed["hash"] = nullptr;
    } else {
      TESSERA_ASSIGN_OR_RETURN(patch["shard_chunks"], ParseIntList(a.shard_chunks, "--shard-chunks"));
    }
  }
  if (!a.codec.empty()) {
    patch["codec"] = a.codec;
    patch["level"] = nullptr;  // a level belongs to its codec, and so do blosc's settings
    for (const char* key : {"cname", "shuffle", "typesize", "blocksize"}) zarr3[key] = nullptr;
  }
  if (a.level != SpecArgs::kUnsetLevel) patch["level"] = a.level;
  if (!a.cname.empty()) zarr3["cname"] = a.cname;
  if (a.typesize != SpecArgs::kUnsetLevel) zarr3["typesize"] = a.typesize;
  if (a.blocksize != SpecArgs::kUnsetLevel) zarr3["blocksize"] = a.blocksize;
  const bool shuffle_given = a.shuffle_option && a.shuffle_option->count() > 0;
  if (shuffle_given) {
    TESSERA_ASSIGN_OR_RETURN(const json shuffle, ShuffleOption(a.shuffle, format));
    if (format == Format::kHdf5) {
      hdf5["shuffle"] = shuffle;
    } else {
      zarr3["shuffle"] = shuffle;
    }
  }
  // A codec or its settings given replace the chunk codecs a source's spec carried as stored.
  const bool blosc_given = !a.cname.empty() || a.typesize != SpecArgs::kUnsetLevel ||
                           a.blocksize != SpecArgs::kUnsetLevel || (shuffle_given && format != Format::kHdf5);
  if (!a.codec.empty() || a.level != SpecArgs::kUnsetLevel || blosc_given) zarr3["chunk_codecs"] = nullptr;
  if (!a.fill_value.empty()) {
    Result<nlohmann::json> fv = zarr::ParseJsonDocument(a.fill_value, "--fill-value");
    patch["fill_value"] = fv.ok() ? *fv : json(a.fill_value);  // NaN, Infinity, 0x... as strings
  }
  if (!a.index_location.empty()) {
    if (a.index_location != "start" && a.index_location != "end")
      return InvalidArgument("--index-location must be start or end, not " + a.index_location);
    zarr3["index_at_start"] = a.index_location == "start";
  }
  // Every format's options go into the spec; the library refuses those the format does not take.
  if (!a.encoding.empty()) {
    precomputed["encoding"] = a.encoding;
    precomputed["cseg_block_xyz"] = nullptr;  // a block size, quality or level belongs to its encoding
    precomputed["jpeg_quality"] = nullptr;
    precomputed["png_level"] = nullptr;
  }
  if (a.jpeg_quality != SpecArgs::kUnsetLevel) precomputed["jpeg_quality"] = a.jpeg_quality;
  if (a.png_level != SpecArgs::kUnsetLevel) precomputed["png_level"] = a.png_level;
  if (!a.hash.empty()) precomputed["hash"] = a.hash;
  if (!a.scale_key.empty()) precomputed["scale_key"] = a.scale_key;
  if (!a.resolution.empty()) {
    TESSERA_ASSIGN_OR_RETURN(std::vector<double> res, ParseDoubleList(a.resolution, "--resolution"));
    if (res.size() != 3) return InvalidArgument("--resolution needs three values X,Y,Z");
    precomputed["resolution_xyz"] = res;
  }
  if (!a.voxel_offset.empty()) {
    TESSERA_ASSIGN_OR_RETURN(precomputed["voxel_offset_xyz"], ParseXyz(a.voxel_offset, "--voxel-offset"));
  }
  if (!a.cseg_block.empty()) {
    TESSERA_ASSIGN_OR_RETURN(precomputed["cseg_block_xyz"], ParseXyz(a.cseg_block, "--cseg-block"));
  }
  if (!a.dataset.empty()) hdf5["dataset"] = a.dataset;
  if (a.fletcher32_option && a.fletcher32_option->count() > 0) hdf5["fletcher32"] = a.fletcher32;
  if (!a.pyramid.empty()) {
    if (a.pyramid == "auto") {
      pyramid["levels"] = 0;
    } else {
      TESSERA_ASSIGN_OR_RETURN(std::vector<int64_t> levels, ParseIntList(a.pyramid, "--pyramid"));
      if (levels.size() != 1 || levels[0] < 1 || levels[0] > std::numeric_limits<int>::max())
        return InvalidArgument("--pyramid wants a level count >= 1 or auto, not " + a.pyramid);
      pyramid["levels"] = levels[0];
    }
  }
  if (!a.downsample.empty()) pyramid["method"] = a.downsample;
  if (!a.arrival_order.empty()) {
    TESSERA_ASSIGN_OR_RETURN(patch["arrival_order"], ParseIntList(a.arrival_order, "--arrival-order"));
  }
  if (!a.downsample_factors.empty()) {
    TESSERA_ASSIGN_OR_RETURN(pyramid["factors"], ParseIntList(a.downsample_factors, "--downsample-factors"));
  }
  if (!a.axes.empty()) ome["axes"] = a.axes;  // "name:type[:unit],..."
  if (!a.voxel_size.empty()) {
    TESSERA_ASSIGN_OR_RETURN(ome["voxel_size"], ParseDoubleList(a.voxel_size, "--voxel-size"));
  }
  if (!a.translation.empty()) {
    TESSERA_ASSIGN_OR_RETURN(ome["offset"], ParseDoubleList(a.translation, "--translation"));
  }
  if (a.ome) ome["image"] = true;
  if (!a.attributes.empty()) {
    // Added to the attributes the spec has (a source's, for convert).
    const json* had = base.is_object() && base.contains("attributes") ? &base["attributes"] : nullptr;
    json attributes = had && had->is_object() ? *had : json::object();
    for (const std::string& kv : a.attributes) {
      const size_t eq = kv.find('=');
      if (eq == std::string::npos || eq == 0) return InvalidArgument("--attribute wants NAME=VALUE, not \"" + kv + "\"");
      attributes[kv.substr(0, eq)] = AttributeValue(kv.substr(eq + 1));
    }
    patch["attributes"] = std::move(attributes);
  }
  for (const char* object : {"zarr3", "precomputed", "hdf5", "pyramid", "ome"})
    if (patch.contains(object) && patch[object].empty()) patch.erase(object);
  TESSERA_RETURN_IF_ERROR(PatchSpecJson(&base, patch));
  return ArraySpecFromJson(base);
}

Result<nlohmann::json> ReadSpecOption(const std::string& value) {
  std::string text = value, where = "--spec " + value;
  if (value.empty() || value.front() != '{') {
    TESSERA_ASSIGN_OR_RETURN(CFile f, CFile::Open(value, false));
    std::string bytes;
    uint8_t buf[1 << 14];
    for (;;) {
      TESSERA_ASSIGN_OR_RETURN(size_t got, f.ReadFully(buf, sizeof buf));
      bytes.append(reinterpret_cast<const char*>(buf), got);
      if (got < sizeof buf) break;
    }
    text = std::move(bytes);
  } else {
    where = "--spec";
  }
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    return InvalidArgument(where + ": malformed JSON: " + e.what());
  }
  // The spec's own errors name its JSON path after the option: "--spec s.json: chunk_shape[1]: ...".
  Result<ArraySpec> spec = ArraySpecFromJson(j);
  if (!spec.ok()) return spec.status().WithContext(where);
  return j;
}

}  // namespace tessera::cli
