// What an array to write looks like, in one typed description that every format takes.
//
// A caller fills an ArraySpec (dtype, shape, chunking, codec, fill value, dimension names,
// attributes and the few options only one format has) and hands it to CreateStream. The spec is
// checked once, against the format it is written in: ResolveSpec either returns the resolved
// spec (format defaults filled in) or an error naming the field, in the library's own words
// (`chunk_shape`, `shard_chunks`, `level`, ...). A choice a format cannot honour is an
// `unsupported` error naming the field and the format; nothing is silently ignored.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "tessera/core/dtype.h"
#include "tessera/core/status.h"
#include "tessera/pyramid/downsample.h"
#include "tessera/pyramid/ome.h"

namespace tessera {

// Which format driver an array is written or read with (api/driver_registry.h maps each to its
// driver, its name and its aliases).
enum class Format { kZarr3, kPrecomputed, kHdf5 };

// blosc-lz4 and blosc-zstd are blosc with that cname and the byte shuffle (none for 1-byte dtypes);
// blosc takes every setting of BloscSpecOptions.
enum class Codec { kNone, kZstd, kGzip, kBloscLz4, kBloscZstd, kBlosc };
std::string_view CodecName(Codec codec);  // "none", "zstd", "gzip", "blosc-lz4", "blosc-zstd", "blosc"
Result<Codec> ParseCodec(std::string_view name);

// The settings of codec blosc (c-blosc 1, as Zarr v3's blosc codec configuration names them); the
// level is ArraySpec::level (clevel). Each one left unset takes zarr-python 3's BloscCodec default
// (zarr/blosc_settings.h checks and applies them).
struct BloscSpecOptions {
  std::string cname;               // blosclz | lz4 | lz4hc | zlib | zstd; empty: zstd
  std::string shuffle;             // noshuffle | shuffle | bitshuffle (also none | byte | bit);
                                   // empty: bitshuffle for 1-byte dtypes, else shuffle
  std::optional<int> typesize;     // bytes per shuffled element; unset: the dtype's size
  std::optional<int> blocksize;    // bytes per blosc block; unset: 0 (blosc chooses)
  bool given() const { return !cname.empty() || !shuffle.empty() || typesize || blocksize; }
  bool operator==(const BloscSpecOptions&) const = default;
};

// Options only Zarr v3 has.
struct ZarrSpecOptions {
  bool index_at_start = false;  // sharded arrays: the shard index before the chunks (default: after)
  // Each chunk's codecs as Zarr v3 JSON (the inner chain of a sharded array), in place of those
  // codec and level give: what ConversionSpec takes from a Zarr source whose chain they cannot
  // spell (blosc blosclz with bitshuffle, say), so that a copy keeps it. Null: from codec and level.
  nlohmann::json chunk_codecs = nullptr;
  BloscSpecOptions blosc;  // codec blosc's settings (a Zarr v3 option: only Zarr arrays are written with blosc)
  bool operator==(const ZarrSpecOptions&) const = default;
};

// Options only Neuroglancer precomputed has. Shapes stay in tessera's C order ([c,] z, y, x);
// the *_xyz fields are in Neuroglancer's x, y, z order, as the info file writes them.
struct PrecomputedSpecOptions {
  std::string encoding = "raw";        // raw | compressed_segmentation | jpeg | png (precomputed/info.h lists them)
  std::array<int64_t, 3> cseg_block_xyz{8, 8, 8};
  std::optional<int> jpeg_quality;     // jpeg: 1..100; unset: 75
  std::optional<int> png_level;        // png: zlib level 0..9; unset: 6
  std::string hash = "identity";       // identity | murmurhash3_x86_128 (sharded volumes)
  std::array<double, 3> resolution_xyz{1, 1, 1};  // nanometres per voxel
  std::array<int64_t, 3> voxel_offset_xyz{0, 0, 0};
  std::string scale_key = "s0";        // the scale's directory; other scales of the volume are kept
  bool operator==(const PrecomputedSpecOptions&) const = default;
};

// Options only HDF5 has.
struct Hdf5SpecOptions {
  std::string dataset = "/data";  // the dataset's path in the file; groups on the way are created
  bool shuffle = false;           // the shuffle filter before deflate
  bool fletcher32 = false;        // a checksum per chunk
  bool operator==(const Hdf5SpecOptions&) const = default;
};

// A multiscale pyramid written while the array streams: level k+1 is level k downsampled by
// `factors` (tensorstore's downsample rules; see pyramid/downsample.h). Each level is a stream of
// its own, with the array's chunking and codec (chunks clipped to a smaller level's extent).
struct PyramidSpec {
  int levels = 1;  // levels including the full resolution: 1 = none; 0 = auto (until every dimension fits one chunk)
  std::optional<pyramid::DownsampleMethod> method;  // unset: mean (precomputed compressed_segmentation: mode)
  // Per dimension, >= 1; empty: 2 along space axes, 1 along time and channel axes.
  std::vector<int64_t> factors;
  bool operator==(const PyramidSpec&) const = default;
};

// An OME-Zarr 0.5 image (zarr3): a group whose `ome` attribute describes the levels, which are the
// arrays "0", "1", ... inside it. Implied by a pyramid; a single-level image when asked for alone.
struct OmeSpec {
  bool image = false;
  std::vector<pyramid::OmeAxis> axes;  // empty: from dimension_names or the rank (pyramid::DefaultOmeAxes)
  std::vector<double> voxel_size;      // level 0's voxel size per dimension; empty: 1
  std::vector<double> offset;          // level 0's translation per dimension; empty: 0
  std::string name;                    // the multiscale's name; empty: the location's last component
  bool operator==(const OmeSpec&) const = default;
};

struct ArraySpec {
  DataType dtype = DataType::kUInt8;
  // Elements per dimension, dimension 0 slowest. shape[0] == 0: unbounded along dimension 0 (the
  // array is as long as the stream). Every other entry > 0.
  std::vector<int64_t> shape;
  // The chunk (for sharded arrays: the inner chunk) shape. Empty: the format's default where it
  // has one (about 1 MiB, proportional to the shape), else an error.
  std::vector<int64_t> chunk_shape;
  // Chunks per shard along each dimension; empty: unsharded.
  std::vector<int64_t> shard_chunks;
  // The compressor; unset: the format's default (zarr3: zstd; precomputed and hdf5: none).
  std::optional<Codec> codec;
  std::optional<int> level;  // the compressor's level; unset: its default
  // The fill value in Zarr v3 JSON spelling (0, 1.5, true, "NaN", "0x7fc00000", [re, im]);
  // null: the dtype's zero.
  nlohmann::json fill_value = nullptr;
  std::vector<std::string> dimension_names;  // empty, or one name per dimension
  // The order the appended data's dimensions arrive in, when it is not the stored order: for each
  // dimension of the arriving data, the stored dimension it is. Arriving data is therefore
  // stored.transpose(arrival_order) (numpy's axes), and what is stored is
  // arriving.transpose(argsort(arrival_order)). Frames arrive along dimension 0, so
  // arrival_order[0] == 0; e.g. frames arriving t, z, c, y, x for an array stored t, c, z, y, x:
  // {0, 2, 1, 3, 4}. Empty: the identity (data arrives in stored order). The streaming writer
  // places each arriving element straight into its stored chunk (no copy of the input).
  std::vector<int64_t> arrival_order;
  // Attributes stored with the array: a JSON object. Zarr stores it as is; HDF5 stores numbers,
  // strings and 1-D arrays of numbers as attributes of the dataset.
  nlohmann::json attributes = nlohmann::json::object();

  ZarrSpecOptions zarr;
  PrecomputedSpecOptions precomputed;
  Hdf5SpecOptions hdf5;
  PyramidSpec pyramid;
  OmeSpec ome;

  // Whether arrival_order is given and not the identity.
  bool reorders_arrival() const {
    for (size_t d = 0; d < arrival_order.size(); ++d)
      if (arrival_order[d] != static_cast<int64_t>(d)) return true;
    return false;
  }
  // The extent of each arriving dimension: shape[arrival_order[i]] (shape itself when the data
  // arrives in stored order).
  std::vector<int64_t> arrival_shape() const {
    if (!reorders_arrival()) return shape;
    std::vector<int64_t> out(shape.size());
    for (size_t i = 0; i < out.size(); ++i) out[i] = shape[static_cast<size_t>(arrival_order[i])];
    return out;
  }

  // Resolved specs only: the number of levels (pyramid.levels once `auto` is resolved).
  int level_count() const { return std::max(1, pyramid.levels); }
  // Resolved specs only: written as levels (an OME-Zarr image, precomputed scales), not one array.
  bool multiscale() const { return ome.image || level_count() > 1; }
};

// The checks every format shares, in the order ResolveSpec (api/driver_registry.h) runs them
// around the format driver's own: errors start with the field they are about.
//   the shape, chunk and shard extents, dimension names, attributes and fill value
Status CheckCommonFields(const ArraySpec& spec);
//   the compressor's level against the (resolved) codec
Status CheckCodecLevel(const ArraySpec& spec);
//   pyramid levels >= 0 (0: auto), and no downsampling options without a pyramid
Status CheckPyramidRequest(const ArraySpec& spec);
//   a pyramid whose method and factors the format filled in: the method fits the dtype, the
//   factors fit the rank, and `auto` levels resolved
Status ResolvePyramidLevels(ArraySpec* spec);

// Pyramid level `level` of a resolved spec, as far as every format agrees: its shape downsampled
// `level` times, the chunk (and shard) shape clipped to it, no pyramid of its own. The format's
// own fields that change with the level are the driver's (LevelSpec in api/driver_registry.h).
ArraySpec LevelShape(const ArraySpec& resolved, int level);

// The field an error is about (Status::field() up to any array index: "chunk_shape",
// "precomputed.resolution_xyz"), or empty. Front ends use it to name their own spelling of the
// field (a CLI flag, a Python argument); the message text is never parsed for it.
std::string_view SpecFieldOfError(const Status& status);

// `status` with its field spelled `spelling` instead, in the message and as the field:
// "chunk_shape: ..." -> "--chunk: ...". Unchanged when the status names no field or context was
// put before it (Status::field_leads_message()).
Status RespellSpecField(const Status& status, std::string_view spelling);

}  // namespace tessera
