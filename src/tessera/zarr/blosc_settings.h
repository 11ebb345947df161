// Codec blosc's settings (BloscSpecOptions: cname, shuffle, typesize, blocksize; the level is the
// spec's level, blosc's clevel) as the Zarr v3 `blosc` codec configuration a new array is written
// with, and back: the codec and settings that write a stored blosc configuration as it is.
//
// A setting left unset takes zarr-python 3's BloscCodec default (zarr/codecs/blosc.py, 3.1: cname
// zstd, clevel 5, shuffle bitshuffle for 1-byte dtypes and shuffle otherwise, typesize the dtype's
// size, blocksize 0), so `codec = "blosc"` alone writes what zarr-python's BloscCodec() writes.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "tessera/core/dtype.h"
#include "tessera/core/status.h"
#include "tessera/spec/array_spec.h"

namespace tessera::zarr {

// The compressors codec blosc writes: every one c-blosc 1 always builds. (snappy is an optional
// part of c-blosc and is refused for writing; an array stored with it reads where this c-blosc
// has it.)
inline constexpr std::array<std::string_view, 5> kBloscCnames = {"blosclz", "lz4", "lz4hc", "zlib", "zstd"};

// c-blosc stores the typesize in one byte of its header.
inline constexpr int kMaxBloscTypesize = 255;

// The Zarr spelling of a shuffle: noshuffle, shuffle and bitshuffle as they are; none, byte and
// bit as those. Otherwise kInvalidArgument naming "shuffle" and the values it takes.
Result<std::string> CanonicalBloscShuffle(std::string_view shuffle);

// Checks `blosc` against the codec it comes with (a CodecName: "zstd", "blosc", ...): a setting
// given with any codec but blosc is an error naming it (blosc-lz4 and blosc-zstd are fixed
// presets); with blosc, cname must be one of kBloscCnames, shuffle a spelling
// CanonicalBloscShuffle takes, typesize in [1, 255] and blocksize >= 0. Errors are
// kInvalidArgument naming the setting ("cname", "shuffle", "typesize", "blocksize") and the
// values it takes.
Status CheckBloscSettings(std::string_view codec, const BloscSpecOptions& blosc);

// `blosc` with its shuffle spelled the Zarr way (CanonicalBloscShuffle); checked as
// CheckBloscSettings checks it with codec blosc.
Result<BloscSpecOptions> CanonicalBloscSettings(const BloscSpecOptions& blosc);

// The codec JSON {"name": "blosc", "configuration": {"typesize", "cname", "clevel", "shuffle",
// "blocksize"}} of codec blosc with `blosc`'s settings and `clevel` (0..9) over `dtype`, every
// unset one at its default (see above). Errors as CheckBloscSettings's, and "level" out of 0..9.
Result<nlohmann::json> BloscCodecJson(const BloscSpecOptions& blosc, std::optional<int> clevel, DataType dtype);

// What writes a stored blosc codec `configuration` (over `dtype`) as it is: blosc-lz4 or
// blosc-zstd where it is exactly that preset, else codec blosc with its cname and shuffle, and
// its typesize and blocksize where they are not the defaults. nullopt where no setting spells it
// (a cname codec blosc does not write, such as snappy; a value out of range).
struct SpelledBlosc {
  Codec codec = Codec::kBlosc;
  BloscSpecOptions blosc;       // empty for the presets
  std::optional<int> clevel;    // unset where the configuration has none
};
std::optional<SpelledBlosc> SpellBlosc(const nlohmann::json& configuration, DataType dtype);

}  // namespace tessera::zarr
