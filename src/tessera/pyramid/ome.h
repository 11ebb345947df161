// OME-Zarr 0.5 image metadata: the `ome` attribute of the group that holds a pyramid's levels
// ("0", "1", ...), pure JSON building and checking, no I/O.
//
// A level k array is level 0 downsampled k times by `factors`: its voxel i covers level-0 voxels
// [i * F, (i + 1) * F) along a dimension with F = factor^k, so its `scale` is voxel_size * F and
// its `translation` puts its voxel centres at the centres of those blocks:
// offset + voxel_size * (F - 1) / 2.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "tessera/core/status.h"

namespace tessera::pyramid {

struct OmeAxis {
  std::string name;
  std::string type;  // "time", "channel", "space" (or a custom type, placed like a channel)
  std::string unit;  // empty: none; else a UDUNITS-2 name the spec lists ("micrometer", "second")
  bool operator==(const OmeAxis&) const = default;
};

// Parses "t:time:second,c:channel,z:space:micrometer,y:space:micrometer,x:space:micrometer": a
// name, a type and an optional unit per axis.
Result<std::vector<OmeAxis>> ParseOmeAxes(std::string_view text);

// The axes of a rank-`rank` image when the caller names none: from `dimension_names` where given
// ("t"/"time" -> time; "c"/"ch"/"channel" -> channel; anything else space), else the trailing
// min(rank, 3) dimensions space (z, y, x), then a channel c before them, then time t.
std::vector<OmeAxis> DefaultOmeAxes(int rank, const std::vector<std::string>& dimension_names);

// Checks what OME-Zarr 0.5 requires of an image's axes: 2 to 5 of them, unique names, 2 or 3 of
// type space, at most one time axis (first) and one channel or custom axis (before the space
// axes), space and time units from the spec's lists. Errors start with "axes: ".
Status CheckOmeAxes(const std::vector<OmeAxis>& axes);

// The downsampling factor of each axis when the caller names none: 2 along space, 1 otherwise.
std::vector<int64_t> DefaultFactors(const std::vector<OmeAxis>& axes);

struct OmeImage {
  std::string name;                  // the multiscale's name (SHOULD have one)
  std::vector<OmeAxis> axes;
  std::vector<double> voxel_size;    // level 0's scale per axis (1 where unknown)
  std::vector<double> offset;        // level 0's translation per axis (0 when empty)
  std::vector<int64_t> factors;      // per axis, from one level to the next
  int levels = 1;
  std::string method;                // the downsampling method's name, recorded as "type"
};

// The group's `attributes` object: {"ome": {"version": "0.5", "multiscales": [...]}}.
nlohmann::json OmeAttributes(const OmeImage& image);

// The image group's attributes: OmeAttributes(image) with the caller's `attributes` (an object)
// beside `ome`. OME-Zarr 0.5 keeps `omero` (channels) inside `ome`, so a caller's "omero" goes
// there, as do the members of a caller's "ome" object other than the version and multiscales
// tessera writes.
nlohmann::json ImageGroupAttributes(const OmeImage& image, const nlohmann::json& attributes);

// What an image group's attributes hold beyond its multiscales, in the caller's spelling: its
// attributes other than `ome`, and `ome.omero` as "omero" (ImageGroupAttributes' inverse).
nlohmann::json CallerAttributes(const nlohmann::json& group_attributes);

// Level 0's voxel size in nanometres, x then y then z (Neuroglancer's order), from the space
// axes (the last is x) when each has a length unit; nullopt when a unit is missing or there are
// not 2 or 3 space axes. Two space axes: z is 1.
std::optional<std::array<double, 3>> VoxelSizeNanometresXyz(const std::vector<OmeAxis>& axes,
                                                           const std::vector<double>& voxel_size);

}  // namespace tessera::pyramid
