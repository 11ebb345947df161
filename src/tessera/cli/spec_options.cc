#include "tessera/cli/spec_options.h"

#include <array>
#include <cerrno>
#include <cmath>
#include <cstdlib>

#include "tessera/cli/cli_util.h"
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

}  // namespace

void AddSpecOptions(CLI::App* cmd, SpecArgs* a, const std::string& dataset_flag) {
  cmd->add_option("--chunk", a->chunk, "C0,C1,... chunk shape (zarr3, hdf5 default: about 1 MiB, proportional to the shape; precomputed: required)");
  cmd->add_option("--shard-chunks", a->shard_chunks, "P0,P1,... chunks per shard (default: unsharded)");
  cmd->add_option("--codec", a->codec, "none|zstd|gzip|blosc-lz4|blosc-zstd (default: zstd for zarr3, none for precomputed and hdf5; hdf5: none or gzip, level default 4)")
      ->check(CLI::IsMember({"none", "zstd", "gzip", "blosc-lz4", "blosc-zstd"}));
  cmd->add_option("--level", a->level, "Compression level");
  cmd->add_option("--index-location", a->index_location, "Shard index location: start|end (default end)");
  cmd->add_option("--fill-value", a->fill_value, "Fill value (JSON: 0, 1.5, true, \"NaN\", [re,im]; default: zero)");
  cmd->add_option("--encoding", a->encoding, "precomputed: raw (default) or compressed_segmentation");
  cmd->add_option("--hash", a->hash, "precomputed sharding: identity (default) or murmurhash3_x86_128");
  cmd->add_option("--resolution", a->resolution, "precomputed: voxel size X,Y,Z in nm (default 1,1,1)");
  cmd->add_option("--voxel-offset", a->voxel_offset, "precomputed: X,Y,Z of the first voxel (default 0,0,0)");
  cmd->add_option("--scale-key", a->scale_key,
                  "precomputed: the scale's directory (default s0); an existing volume's other scales are kept");
  cmd->add_option("--cseg-block", a->cseg_block, "precomputed: compressed_segmentation block X,Y,Z (default 8,8,8)");
  cmd->add_option(dataset_flag, a->dataset, "hdf5: the dataset's path in the file (default /data; groups are created)");
  a->shuffle_option = cmd->add_flag("--shuffle", a->shuffle, "hdf5: the shuffle filter before deflate (--shuffle=false: none)");
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
  cmd->add_flag("--ome", a->ome, "zarr3: write an OME-Zarr 0.5 image even without a pyramid (one level, \"0\")");
}

Status ApplySpecArgs(const SpecArgs& a, ArraySpec* spec) {
  ArraySpec& s = *spec;
  if (!a.chunk.empty()) {
    TESSERA_ASSIGN_OR_RETURN(s.chunk_shape, ParseIntList(a.chunk, "--chunk"));
  }
  if (!a.shard_chunks.empty()) {
    if (a.shard_chunks == "none") {
      s.shard_chunks.clear();  // and what only a sharded array has
      s.zarr.index_at_start = false;
      s.precomputed.hash = PrecomputedSpecOptions{}.hash;
    } else {
      TESSERA_ASSIGN_OR_RETURN(s.shard_chunks, ParseIntList(a.shard_chunks, "--shard-chunks"));
    }
  }
  if (!a.codec.empty()) {
    TESSERA_ASSIGN_OR_RETURN(s.codec, ParseCodec(a.codec));
    s.level.reset();  // a level belongs to its codec
  }
  if (a.level != SpecArgs::kUnsetLevel) s.level = a.level;
  if (!a.fill_value.empty()) {
    Result<nlohmann::json> fv = zarr::ParseJsonDocument(a.fill_value, "--fill-value");
    s.fill_value = fv.ok() ? *fv : nlohmann::json(a.fill_value);  // NaN, Infinity, 0x... as strings
  }
  if (!a.index_location.empty()) {
    if (a.index_location != "start" && a.index_location != "end")
      return InvalidArgument("--index-location must be start or end, not " + a.index_location);
    s.zarr.index_at_start = a.index_location == "start";
  }
  // Every format's options go into the spec; the library refuses those the format does not take.
  PrecomputedSpecOptions& p = s.precomputed;
  if (!a.encoding.empty()) {
    p.encoding = a.encoding;
    p.cseg_block_xyz = PrecomputedSpecOptions{}.cseg_block_xyz;  // a block size belongs to its encoding
  }
  if (!a.hash.empty()) p.hash = a.hash;
  if (!a.scale_key.empty()) p.scale_key = a.scale_key;
  if (!a.resolution.empty()) {
    TESSERA_ASSIGN_OR_RETURN(std::vector<double> res, ParseDoubleList(a.resolution, "--resolution"));
    if (res.size() != 3) return InvalidArgument("--resolution needs three values X,Y,Z");
    for (int d = 0; d < 3; ++d) p.resolution_xyz[d] = res[d];
  }
  if (!a.voxel_offset.empty()) {
    TESSERA_ASSIGN_OR_RETURN(p.voxel_offset_xyz, ParseXyz(a.voxel_offset, "--voxel-offset"));
  }
  if (!a.cseg_block.empty()) {
    TESSERA_ASSIGN_OR_RETURN(p.cseg_block_xyz, ParseXyz(a.cseg_block, "--cseg-block"));
  }
  if (!a.dataset.empty()) s.hdf5.dataset = a.dataset;
  if (a.shuffle_option && a.shuffle_option->count() > 0) s.hdf5.shuffle = a.shuffle;
  if (a.fletcher32_option && a.fletcher32_option->count() > 0) s.hdf5.fletcher32 = a.fletcher32;
  if (!a.pyramid.empty()) {
    if (a.pyramid == "auto") {
      s.pyramid.levels = 0;
    } else {
      TESSERA_ASSIGN_OR_RETURN(std::vector<int64_t> levels, ParseIntList(a.pyramid, "--pyramid"));
      if (levels.size() != 1 || levels[0] < 1) return InvalidArgument("--pyramid wants a level count >= 1 or auto, not " + a.pyramid);
      s.pyramid.levels = static_cast<int>(levels[0]);
    }
  }
  if (!a.downsample.empty()) {
    Result<pyramid::DownsampleMethod> m = pyramid::ParseDownsampleMethod(a.downsample);
    if (!m.ok()) return InvalidArgument("--downsample: " + m.status().message());
    s.pyramid.method = *m;
  }
  if (!a.downsample_factors.empty()) {
    TESSERA_ASSIGN_OR_RETURN(s.pyramid.factors, ParseIntList(a.downsample_factors, "--downsample-factors"));
  }
  if (!a.axes.empty()) {
    Result<std::vector<pyramid::OmeAxis>> axes = pyramid::ParseOmeAxes(a.axes);
    if (!axes.ok()) return RespellSpecField(axes.status(), "--axes");
    s.ome.axes = std::move(axes).value();
  }
  if (!a.voxel_size.empty()) {
    TESSERA_ASSIGN_OR_RETURN(s.ome.voxel_size, ParseDoubleList(a.voxel_size, "--voxel-size"));
  }
  if (a.ome) s.ome.image = true;
  for (const std::string& kv : a.attributes) {
    const size_t eq = kv.find('=');
    if (eq == std::string::npos || eq == 0) return InvalidArgument("--attribute wants NAME=VALUE, not \"" + kv + "\"");
    s.attributes[kv.substr(0, eq)] = AttributeValue(kv.substr(eq + 1));
  }
  return Status::Ok();
}

}  // namespace tessera::cli
