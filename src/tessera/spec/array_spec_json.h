// The JSON form of an ArraySpec: what `tessera info --json` prints as "spec", what `tessera stream
// --spec` and Python's `tessera.create(..., spec=...)` take, and what every front end builds its
// spec through (the CLI from its flags, Python from its keyword arguments).
//
//   {"dtype": "uint16", "shape": [0, 512, 512], "chunk_shape": [1, 256, 256], "shard_chunks": [64, 2, 2],
//    "codec": "zstd", "level": 3, "fill_value": 0, "dimension_names": ["t", "y", "x"],
//    "arrival_order": [0, 2, 1], "attributes": {"k": 1},
//    "zarr3": {"index_at_start": true, "cname": "blosclz", "shuffle": "bitshuffle", "typesize": 2,
//              "blocksize": 0},
//    "precomputed": {"encoding": "raw", "cseg_block_xyz": [8, 8, 8], "jpeg_quality": 90, "png_level": 6,
//                    "hash": "identity",
//                    "resolution_xyz": [4, 4, 40], "voxel_offset_xyz": [0, 0, 0], "scale_key": "s0"},
//    "hdf5": {"dataset": "/data", "shuffle": true, "fletcher32": false},
//    "pyramid": {"levels": 3, "method": "mean", "factors": [1, 2, 2]},
//    "ome": {"image": true, "axes": [{"name": "t", "type": "time", "unit": "second"}, ...],
//            "voxel_size": [1, 0.5, 0.5], "offset": [0, 0, 0], "name": "scan"}}
//
// The keys are ArraySpec's fields (the per-format objects under the format's name); a field left
// out, or null, keeps its default. dtype is the name core/dtype.h uses ("uint16"), codec the name
// CodecName gives (zarr3's cname, shuffle, typesize and blocksize are codec blosc's settings,
// BloscSpecOptions), pyramid.method a DownsampleMethodName, pyramid.levels 0 or "auto" for auto,
// ome.axes also "name:type[:unit],..." text. fill_value and attributes are JSON as the spec holds
// them. Unknown keys are errors; every error (kInvalidArgument, or kUnsupported for a dtype or
// codec tessera lacks) names the JSON path of the field in its Status::field() and at the start of
// its message: "precomputed.resolution_xyz[1]: must be a number". Only the spelling is checked
// here: ResolveSpec checks the spec against a format.
#pragma once

#include <nlohmann/json.hpp>

#include "tessera/core/status.h"
#include "tessera/spec/array_spec.h"

namespace tessera {

// The JSON form of `spec`: dtype and shape always, every other field only where it is not its
// default (a per-format, pyramid or ome object only when one of its fields is set).
// ArraySpecFromJson(ArraySpecToJson(s)) gives `s` back.
nlohmann::json ArraySpecToJson(const ArraySpec& spec);

// The spec a JSON form describes; fields left out (or null) keep ArraySpec's defaults.
Result<ArraySpec> ArraySpecFromJson(const nlohmann::json& json);

// `patch` laid over the JSON form `spec` (both JSON objects): each of patch's keys replaces spec's,
// except that the per-format, pyramid and ome objects are patched key by key; a null value removes
// the key (the field goes back to its default). How a front end puts the options it was given
// over a spec it starts from (a source's, a --spec file's). Errors (kInvalidArgument, with the
// JSON path) where either is not an object where one is needed.
Status PatchSpecJson(nlohmann::json* spec, const nlohmann::json& patch);

}  // namespace tessera
