// OME-Zarr 0.5 image metadata: the `ome` attribute of the group that holds a pyramid's levels
// ("0", "1", ...), pure JSON building and checking, no I/O.
//
// A level k array is level 0 downsampled k times by `factors`: its voxel i covers level-0 voxels
// [i * F, (i + 1) * F) along a dimension with F = factor^k, so its `scale` is voxel_size * F and
// its `translation` puts its voxel centres at the centres of those blocks:
// offset + voxel_size * (F - 1) / 2.
#pragma once

#include <cstdint>
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

}  // namespace tessera::pyramid
